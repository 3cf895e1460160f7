"""ProgressBridge with real pyspark event objects built from progress JSON (no JVM needed)."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from pyspark.sql.streaming.listener import QueryProgressEvent

from streaming_dq.exporter import GateMetrics, ProgressBridge

QUERY_ID = uuid.UUID("3f0b7c52-8f6a-4d5e-9a51-7a1e0c2b9d11")


def progress_event(query_id: uuid.UUID = QUERY_ID, **fields: Any) -> QueryProgressEvent:
    progress = {
        "id": str(query_id),
        "runId": str(uuid.uuid4()),
        "name": "orders_gate",
        "timestamp": "2024-12-24T12:00:00.000Z",
        "batchId": 4,
        "batchDuration": 1500,
        "numInputRows": 200,
        "inputRowsPerSecond": 100.0,
        "processedRowsPerSecond": 250.0,
        "durationMs": {"triggerExecution": 1500},
        "eventTime": {},
        "stateOperators": [],
        "sources": [],
        "sink": {"description": "ForeachBatchSink", "numOutputRows": -1},
        **fields,
    }
    return QueryProgressEvent.fromJson({"progress": progress})


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def bridge(registry: CollectorRegistry) -> ProgressBridge:
    return ProgressBridge(GateMetrics("orders", registry=registry), QUERY_ID)


def rates(registry: CollectorRegistry) -> tuple[float | None, ...]:
    return tuple(
        registry.get_sample_value(name, {"gate": "orders"})
        for name in (
            "streaming_dq_input_rows_per_second",
            "streaming_dq_processed_rows_per_second",
            "streaming_dq_trigger_duration_seconds",
            "streaming_dq_state_rows",
        )
    )


def test_forwards_the_progress_of_its_query(registry: CollectorRegistry, bridge: ProgressBridge) -> None:
    bridge.onQueryProgress(progress_event())

    assert rates(registry) == (100.0, 250.0, 1.5, 0.0)


def test_ignores_other_queries(registry: CollectorRegistry, bridge: ProgressBridge) -> None:
    bridge.onQueryProgress(progress_event(uuid.uuid4()))

    assert rates(registry) == (None, None, None, None)


def test_a_broken_progress_is_logged_not_raised(
    registry: CollectorRegistry, bridge: ProgressBridge, caplog: pytest.LogCaptureFixture
) -> None:
    event = progress_event()
    event.progress["durationMs"] = 1500  # not a mapping: record_progress fails on it

    with caplog.at_level(logging.WARNING, logger="streaming_dq.exporter.listener"):
        bridge.onQueryProgress(event)

    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert "gate 'orders': could not export streaming progress of query" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is AttributeError
