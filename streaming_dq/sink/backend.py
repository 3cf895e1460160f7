"""What a gate runs on: its Delta writer and its router, chosen once from the first session that asks.

``writer: auto`` becomes Spark's Delta writer when the session loads the Delta extension (delta-rs
otherwise), ``routing: auto`` the Spark router when the writer is Spark's or the master is not local
(:mod:`~streaming_dq.sink.routers`). A copy sent to a Spark Connect server's batch worker chooses again there,
from the server's session: the writer and router are not sent.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from streaming_dq.sink.routers import choose_router, choose_writer

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streaming_dq.sink.options import GateOptions
    from streaming_dq.sink.routers.base import Router
    from streaming_dq.sink.tracker import MetricsTracker
    from streaming_dq.tables import TableWriter

__all__ = ["Backend"]

logger = logging.getLogger("streaming_dq.gate")


class Backend:
    """A gate's writer and router (see the module); ``tables_ready`` once the gate made sure its tables exist."""

    def __init__(self, options: GateOptions, tracker: MetricsTracker | None) -> None:
        self.options = options
        self.tracker = tracker
        self._writer: TableWriter | None = None
        self._router: Router | None = None
        self.tables_ready = False

    def writer(self, spark: SparkSession) -> TableWriter:
        """The writer, chosen on first use (``auto``: spark when the Delta extension is loaded)."""
        if self._writer is None:
            options = self.options
            self._writer = choose_writer(options.writer, spark, driver_commit_rows=options.driver_commit_rows)
            logger.info("gate %r writes with %s", options.name, self._writer.name)
        if self.tracker is not None:  # the metrics table with the same writer (also after a copy's restore)
            self.tracker.use_writer(self._writer)
        return self._writer

    def router(self, spark: SparkSession) -> Router:
        """The router, chosen on first use (see :func:`~streaming_dq.sink.routers.choose_router`).

        Raises:
            ConfigError: ``distributed`` (or ``auto`` on a cluster) without Spark's Delta writer.
        """
        if self._router is None:
            self._router = choose_router(self.options.routing, self.writer(spark), spark)
            logger.info("gate %r routes rows with the %s router", self.options.name, self._router.name)
        return self._router

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_writer": None, "_router": None, "tables_ready": False}
