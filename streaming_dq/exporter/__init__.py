"""Prometheus export of the gate: its series, the ``/metrics`` endpoint and the streaming-progress bridge.

Nothing is registered at import: the caller owns the :class:`~prometheus_client.CollectorRegistry`.

Example:
    >>> from prometheus_client import CollectorRegistry
    >>> registry = CollectorRegistry()
    >>> metrics = GateMetrics("orders", registry=registry)
    >>> server = serve_metrics(registry, port=0)
    >>> server.close()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streaming_dq.exporter.collector import BATCH_DURATION_BUCKETS
from streaming_dq.exporter.follower import QuarantineFollower, ResultsFollower, outcomes_from_results
from streaming_dq.exporter.metrics import CheckLabels, GateMetrics
from streaming_dq.exporter.server import MetricsServer, push_metrics, serve_metrics

if TYPE_CHECKING:
    from streaming_dq.exporter.listener import ProgressBridge

__all__ = [
    "BATCH_DURATION_BUCKETS",
    "CheckLabels",
    "GateMetrics",
    "MetricsServer",
    "ProgressBridge",
    "QuarantineFollower",
    "ResultsFollower",
    "outcomes_from_results",
    "push_metrics",
    "serve_metrics",
]


def __getattr__(name: str) -> Any:
    """Load :class:`ProgressBridge` (and pyspark with it) only when it is asked for."""
    if name == "ProgressBridge":
        from streaming_dq.exporter.listener import ProgressBridge

        return ProgressBridge
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
