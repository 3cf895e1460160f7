"""What a gate runs on: its Delta writer, its router and its tables, made ready once from the first session that
asks.

``writer: auto`` becomes Spark's Delta writer when the session loads the Delta extension (delta-rs
otherwise), ``routing: auto`` the Spark router when the writer is Spark's or the master is not local
(:mod:`~streaming_dq.sink.routers`); the gate's tables are created when missing
(:func:`~streaming_dq.sink.setup.ensure_tables`). ``QualityGate.start`` makes them ready before the query
starts; a gate used as a bare ``foreachBatch`` function, and a copy sent to a Spark Connect server's batch
worker, make them ready on their first batch (the copy chooses again there, from the server's session: the
writer and router are not sent).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from streaming_dq.exceptions import InternalError
from streaming_dq.sink import setup
from streaming_dq.sink.routers import choose_router, choose_writer

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from streaming_dq.sink.options import GateOptions
    from streaming_dq.sink.routers.base import Router
    from streaming_dq.sink.seen_keys import SeenKeys
    from streaming_dq.sink.tracker import MetricsTracker
    from streaming_dq.tables import TableWriter

__all__ = ["Backend"]

logger = logging.getLogger("streaming_dq.gate")


class Backend:
    """A gate's writer, router and tables (see the module); ``tables_ready`` once its tables surely exist."""

    def __init__(self, options: GateOptions, tracker: MetricsTracker | None, seen_keys: SeenKeys) -> None:
        self.options = options
        self.tracker = tracker
        self.seen_keys = seen_keys
        self._writer: TableWriter | None = None
        self._router: Router | None = None
        self.tables_ready = False

    def ready(self, spark: SparkSession, schema: StructType, batch_id: int) -> tuple[TableWriter, Router]:
        """The writer and the router for a batch of rows of ``schema``, the tables made sure of first (once).

        Raises:
            ConfigError: a router the writer cannot serve, or maintenance settings a table cannot take.
            TargetWriteError: a table cannot be created (or read).
        """
        writer = self.writer(spark)
        router = self._router or self._choose_router(writer, spark)
        if not self.tables_ready:
            self._ensure_tables(writer, schema, batch_id)
        return writer, router

    def ensure_tables(self, spark: SparkSession, schema: StructType, batch_id: int | None = None) -> None:
        """Create the missing tables from the rows' ``schema`` (:func:`~streaming_dq.sink.setup.ensure_tables`)."""
        self._ensure_tables(self.writer(spark), schema, batch_id)

    def writer(self, spark: SparkSession) -> TableWriter:
        """The writer, chosen on first use (``auto``: spark when the Delta extension is loaded)."""
        if self._writer is None:
            options = self.options
            self._writer = choose_writer(options.writer, spark, driver_commit_rows=options.driver_commit_rows)
            logger.info("gate %r writes with %s", options.name, self._writer.name)
        if self.tracker is not None:  # the metrics table with the same writer (also after a copy's restore)
            self.tracker.use_writer(self._writer)
        return self._writer

    @property
    def chosen_writer(self) -> TableWriter:
        """The writer the batches so far were written with.

        Raises:
            InternalError: No batch or table was made ready yet.
        """
        if self._writer is None:
            raise InternalError("the gate's writer is chosen on its first batch")
        return self._writer

    def router(self, spark: SparkSession) -> Router:
        """The router, chosen on first use (see :func:`~streaming_dq.sink.routers.choose_router`).

        Raises:
            ConfigError: ``distributed`` (or ``auto`` on a cluster) without Spark's Delta writer.
        """
        return self._router or self._choose_router(self.writer(spark), spark)

    def _choose_router(self, writer: TableWriter, spark: SparkSession) -> Router:
        self._router = choose_router(self.options.routing, writer, spark)
        logger.info("gate %r routes rows with the %s router", self.options.name, self._router.name)
        return self._router

    def _ensure_tables(self, writer: TableWriter, schema: StructType, batch_id: int | None) -> None:
        options = self.options
        setup.ensure_tables(
            writer,
            options.targets,
            self.tracker,
            schema,
            keys=self.seen_keys,
            malformed_column=options.malformed_column,
            maintenance=options.maintenance,
            batch_id=batch_id,
        )
        self.tables_ready = True

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_writer": None, "_router": None, "tables_ready": False}
