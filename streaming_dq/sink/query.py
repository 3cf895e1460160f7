"""Starting a gate's streaming query: the checkpoint's lease first, then the query, in a fair-scheduler pool.

:meth:`~streaming_dq.sink.gate.QualityGate.start` checks the stream against the checks and creates the tables;
what follows is here: the checkpoint's lease (:mod:`~streaming_dq.sink.lease`: a second job on the same
checkpoint is refused before it writes), the query id read from the checkpoint, and the query started with
the gate as its ``foreachBatch`` sink; the lease is let go when the query stops, or at once if it cannot start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from streaming_dq.config.paths import local_path
from streaming_dq.sink.checkpoint import QueryIdentity, clear_unstarted_offsets
from streaming_dq.sink.lease import CheckpointLease, hold_checkpoint, release_when_stopped
from streaming_dq.sink.options import trigger_kwargs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

__all__ = ["hold_for_query", "start_query"]


def hold_for_query(checkpoint_location: str, storage_options: Mapping[str, str]) -> CheckpointLease | None:
    """The checkpoint's lease, before the query starts; none for a local checkpoint under Spark Connect (the
    path is the server's). A job that holds it already (the CLI takes it before Spark starts) counts once more.

    Raises:
        CheckpointInUseError: another job holds it.
    """
    from streaming_dq.compat.spark import is_remote

    if is_remote() and local_path(checkpoint_location) is not None:
        return None
    return hold_checkpoint(checkpoint_location, dict(storage_options))


def start_query(
    sink: Callable[[DataFrame, int], None],
    stream_df: DataFrame,
    *,
    checkpoint_location: str,
    identity: QueryIdentity,
    lease: CheckpointLease | None,
    trigger: Mapping[str, Any] | None,
    query_name: str | None,
    scheduler_pool: str | None,
) -> StreamingQuery:
    """Start ``stream_df`` with ``sink`` as its ``foreachBatch`` function on ``checkpoint_location``, holding
    ``lease`` until the query stops (released at once when it cannot start)."""
    try:
        identity.use_checkpoint(checkpoint_location)
        clear_unstarted_offsets(checkpoint_location)
        writer = stream_df.writeStream.foreachBatch(sink).option("checkpointLocation", checkpoint_location)
        if query_name:
            writer = writer.queryName(query_name)
        if trigger:
            writer = writer.trigger(**trigger_kwargs(trigger))
        query = _in_pool(writer, stream_df.sparkSession, scheduler_pool)
    except BaseException:
        if lease is not None:
            lease.release()
        raise
    if lease is not None:
        release_when_stopped(lease, query)
    return query


def _in_pool(writer: DataStreamWriter, spark: SparkSession, scheduler_pool: str | None) -> StreamingQuery:
    if scheduler_pool is None:
        return writer.start()
    # the query's thread takes the local properties of the thread that starts it
    context = spark.sparkContext
    before = context.getLocalProperty("spark.scheduler.pool")
    context.setLocalProperty("spark.scheduler.pool", scheduler_pool)
    try:
        return writer.start()
    finally:
        context.setLocalProperty("spark.scheduler.pool", before)  # type: ignore[arg-type]
