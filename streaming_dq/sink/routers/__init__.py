"""The two routers of a batch's rows: one decision, rendered on the driver or on the executors.

:mod:`~streaming_dq.sink.routers.base` holds what both share (the batch job, the router contract, schema-drift
helpers); :mod:`~streaming_dq.sink.routers.driver` and :mod:`~streaming_dq.sink.routers.spark` are the two
forms, and :func:`choose_router` picks one for a writer (:func:`choose_writer`) and a session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streaming_dq.core.modes import Routing, WriterName
from streaming_dq.exceptions import ConfigError
from streaming_dq.sink.routers.base import Router
from streaming_dq.sink.routers.driver import DriverRouter
from streaming_dq.sink.routers.spark import SparkRouter
from streaming_dq.tables import DeltaRsWriter, SparkDeltaWriter, TableWriter, has_delta_extension
from streaming_dq.tables.spark import DRIVER_COMMIT_ROWS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["DriverRouter", "SparkRouter", "choose_router", "choose_writer"]


def choose_writer(
    writer: WriterName | TableWriter, spark: SparkSession, *, driver_commit_rows: int = DRIVER_COMMIT_ROWS
) -> TableWriter:
    """The Delta writer named ``writer`` (``auto``: Spark's when the session loads the Delta extension), or the
    writer given; Spark's commits writes of at most ``driver_commit_rows`` rows with delta-rs where it can."""
    if isinstance(writer, TableWriter):
        return writer
    name = writer
    if name == "auto":
        name = "spark" if has_delta_extension(spark) else "delta-rs"
    if name == "spark":
        return SparkDeltaWriter(spark, driver_commit_rows=driver_commit_rows)
    return DeltaRsWriter()


def choose_router(routing: Routing, writer: TableWriter, spark: SparkSession) -> Router:
    """The router for ``routing`` with this writer and session.

    Raises:
        ConfigError: ``distributed`` without Spark's Delta writer, or ``auto`` on a cluster without it (rows
            would go through the driver: say so rather than do it silently).
    """

    spark_writer = isinstance(writer, SparkDeltaWriter)
    local = (spark.conf.get("spark.master", "local") or "local").startswith("local")
    name = routing if routing != "auto" else ("distributed" if spark_writer or not local else "driver")
    if name == "driver":
        return DriverRouter()
    if not spark_writer:
        why = (
            "routing: distributed" if routing == "distributed" else "the master is not local (routing: auto)"
        )
        raise ConfigError(
            f"{why} keeps the rows on the executors and needs Spark's Delta writer (writer: spark, with the "
            f"delta-spark JARs loaded); the writer is {writer.name}. Load delta-spark, or set routing: driver "
            "to collect every batch to the driver on purpose",
            field_path="targets.routing",
        )
    assert isinstance(writer, SparkDeltaWriter)
    return SparkRouter(small_batch_rows=writer.driver_commit_rows)
