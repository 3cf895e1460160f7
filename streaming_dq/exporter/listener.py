"""Bridge a streaming query's own progress events to the gate's Prometheus series.

This is the only exporter module that imports pyspark; ``streaming_dq.exporter`` loads it on first use of
:class:`ProgressBridge`.
"""

from __future__ import annotations

import logging
import uuid

from pyspark.sql.streaming.listener import (
    QueryIdleEvent,
    QueryProgressEvent,
    QueryStartedEvent,
    QueryTerminatedEvent,
    StreamingQueryListener,
)

from streaming_dq.core.listeners import OutcomeListener

logger = logging.getLogger(__name__)


class ProgressBridge(StreamingQueryListener):
    """Forward the progress of one streaming query (the gate's) to a listener's ``record_progress`` (the
    gate's :class:`GateMetrics`, or the outcome feed they listen to).

    Spark calls listeners for every query of the session; events of other queries are ignored. A callback
    never raises: an error is logged at WARNING and the stream goes on.

    Args:
        metrics: The gate's metrics, or any outcome listener.
        query_id: The gate query's id (``StreamingQuery.id``; it survives restarts from the checkpoint).

    Example:
        >>> query = gate.start(stream_df, checkpoint_location=path)  # doctest: +SKIP
        >>> bridge = ProgressBridge(metrics, query.id)  # doctest: +SKIP
        >>> spark.streams.addListener(bridge)  # doctest: +SKIP
        >>> ...  # on stop: spark.streams.removeListener(bridge)
    """

    def __init__(self, metrics: OutcomeListener, query_id: str | uuid.UUID) -> None:
        self.metrics = metrics
        self.query_id = str(query_id)

    def onQueryStarted(self, event: QueryStartedEvent) -> None:
        """Ignored: the gate's series are created with its metrics."""

    def onQueryProgress(self, event: QueryProgressEvent) -> None:
        """Export the progress when it belongs to the gate's query."""
        try:
            progress = event.progress
            if str(progress.id) == self.query_id:
                self.metrics.record_progress(progress)
        except Exception as error:  # a listener must not break the stream: log and go on
            logger.warning(
                "gate %r: could not export streaming progress of query %s: %r",
                getattr(self.metrics, "gate", ""),
                self.query_id,
                error,
                exc_info=error,
            )

    def onQueryIdle(self, event: QueryIdleEvent) -> None:
        """Ignored: an idle query keeps its last progress values."""

    def onQueryTerminated(self, event: QueryTerminatedEvent) -> None:
        """Ignored: a failed batch is counted by the gate, the query's end by ``up``/stall alerts."""
