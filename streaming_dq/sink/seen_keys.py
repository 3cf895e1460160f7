"""The keys a gate has seen: the state of its ``unique-key-check``\\ s with a ``horizon``, in its keys table.

The keys table (:data:`~streaming_dq.checks.stream_keys.KEYS_SCHEMA`, partitioned by ``event_date``) holds one
row per check, key and batch the key occurred in. :class:`SeenKeys` is one of the batch committer's
participants (:mod:`~streaming_dq.sink.commit`):

* before a batch is validated it reads back, when stale, each check's watermark (the latest event time it
  recorded), and gives the batch the records its horizon reaches (:meth:`SeenKeys.annotate`: a Spark frame,
  joined to the batch by key hash in Spark; the driver never holds the keys);
* the batch's own records (:func:`key_rows`) are committed after the quarantine rows and before the results,
  under the batch's app transaction like every other write, so a replayed batch writes them once;
* a replayed batch is never judged against its own records: the records of ``(app id, batch id)`` are left
  out of what it reads.

With delta-rs as the writer the records are read by Spark from the table's Parquet files as delta-rs lists
them (Spark has no Delta reader then); a table on an object store then needs Spark's file system for that
store (its ``s3a`` settings, as ``writer: spark`` does).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

import pyarrow as pa

from streaming_dq.checks.stream_keys import (
    KEYS_COLUMN,
    KEYS_IN_MEMORY,
    KEYS_SCHEMA,
    SeenBefore,
    annotate,
    key_columns,
)
from streaming_dq.checks.uniqueness import UniqueKeyCheck
from streaming_dq.compat.spark import spark_schema
from streaming_dq.core.outcome import KeysState, duration_text
from streaming_dq.exceptions import ConfigError, InternalError
from streaming_dq.sink.key_index import ENTRY_BYTES, DeferredKeys, KeyIndex, index_of
from streaming_dq.sink.key_records import key_rows, latest_by_check, no_key_rows
from streaming_dq.tables import SparkDeltaWriter
from streaming_dq.tables.targets import writing

if TYPE_CHECKING:
    from collections.abc import Iterable

    from deltalake import DeltaTable
    from pyspark.sql import Column, DataFrame, SparkSession

    from streaming_dq.sink.records import BatchContext
    from streaming_dq.sink.rows import SplitBatch
    from streaming_dq.tables import DeltaTarget, TableWriter

__all__ = ["KEYS_COLUMN", "DeferredKeys", "SeenKeys", "key_rows", "no_key_rows", "stream_key_checks"]

logger = logging.getLogger("streaming_dq.gate")

#: The role name of the keys table among a gate's tables.
KEYS_ROLE = "keys"


def stream_key_checks(checks: Iterable[object]) -> list[UniqueKeyCheck]:
    """The ``unique-key-check``\\ s judged across batches (with a horizon)."""
    return [c for c in checks if isinstance(c, UniqueKeyCheck) and c.across_batches]


def _as_utc(value: datetime) -> datetime:
    """A time in UTC (Spark's ``collect`` gives naive local times, Arrow aware UTC ones)."""
    return value.astimezone(UTC)


class SeenKeys:
    """The keys the gate's stream-scoped unique-key checks have seen (see the module).

    Args:
        gate: The gate's name (a keys table may be shared: its rows carry it).
        checks: The checks judged across batches.
        target: The keys table (``targets.keys``).
        event_time: The gate's event-time column.

    Raises:
        ConfigError: such checks without a keys table or without an event-time column.
    """

    def __init__(
        self,
        gate: str,
        checks: Sequence[UniqueKeyCheck],
        target: DeltaTarget | None,
        event_time: str | None,
        *,
        keys_in_memory: int = KEYS_IN_MEMORY,
    ) -> None:
        if checks and target is None:
            raise ConfigError(
                f"unique-key-check {checks[0].check_id!r} judges keys across batches: the gate needs a keys "
                "table (targets.keys) to remember them",
                field_path="targets.keys",
            )
        if checks and not event_time:
            raise ConfigError(
                f"unique-key-check {checks[0].check_id!r} has a horizon of event time: the gate needs "
                "gate.event-time",
                field_path="gate.event-time",
            )
        self.gate = gate
        self.checks = list(checks)
        self.event_time = event_time
        self.target = replace(target, partition_by=("event_date",)) if target is not None and checks else None
        self.watermarks: dict[str, datetime | None] = {c.check_id: None for c in self.checks}
        #: The keys table after the last committed batch (for the outcome and its metrics).
        self.state: KeysState | None = None
        self._stale = True
        #: The driver router's index of the remembered records (:meth:`keyed`), built on first use.
        self.index: KeyIndex | None = None
        self._index_version: int | None = None
        self._key_columns: dict[str, dict[str, Column]] = {}
        self.keys_in_memory = keys_in_memory

    def __bool__(self) -> bool:
        return bool(self.checks)

    def _delta_table(self) -> DeltaTable:
        """The keys table's current version, read by delta-rs (its log, partitions and file statistics)."""
        from deltalake import DeltaTable

        from streaming_dq.tables.storage import delta_rs_options

        assert self.target is not None
        return DeltaTable(
            self.target.uri, storage_options=delta_rs_options(self.target.storage_options) or None
        )

    # -- a committer's participant ------------------------------------------------------------------------

    def prepare(self, writer: TableWriter, ctx: BatchContext) -> AbstractContextManager[None]:
        """Read the watermarks back when stale (after a restart or a failed batch)."""
        if self.checks and self._stale:
            assert self.target is not None
            with writing(self.target, ctx.batch_id):
                self.watermarks = self._read_watermarks(writer, ctx)
            self._stale = False
        return nullcontext()

    def committed(self, ctx: BatchContext, split: SplitBatch) -> None:
        """Take the batch's records' latest event times in, and read the table's size and oldest day."""
        if split.keys is None:
            return
        late = {cid: n for cid, n in split.keys.late.items() if n}
        table = self._delta_table()  # one read of the log after the batch: its size, oldest day and version
        self.state = self._state(late, table)
        for check in self.checks:
            if late.get(check.check_id):
                logger.warning(
                    "gate %r: batch %d: %d row(s) more than %s behind check %r's latest event time are too late "
                    "to judge for duplicates: %s",
                    ctx.gate,
                    ctx.batch_id,
                    late[check.check_id],
                    duration_text(check.horizon) if check.horizon is not None else "",
                    check.check_id,
                    "quarantined (late: quarantine)"
                    if check.late == "quarantine"
                    else "passed unjudged (late: pass)",
                )
        latest = split.keys.latest
        for check_id, value in latest.items():
            current = self.watermarks.get(check_id)
            self.watermarks[check_id] = value if current is None else max(current, value)
        if self.index is not None:
            if isinstance(split.keys.rows.data, pa.Table):
                self.index.add(split.keys.rows.data)
                self._index_version = table.version()
            else:
                self.index = None  # the records went to the table only: rebuild from it when next asked

    def invalidate(self) -> None:
        self._stale = True
        self.index = None  # a failed batch may have written part of its records: rebuilt from the table

    def read_state(self, late: dict[str, int] | None = None) -> KeysState | None:
        """Rows (from the log's file statistics: no data read) and the oldest partition of the keys table;
        None without checks across batches. Under Spark Connect the job reads it so after each batch it
        follows (the batches' late counts stay on the server: they reach its log, not the client)."""
        if not self.checks:
            return None
        return self._state(dict(late or {}))

    def _state(self, late: dict[str, int], table: DeltaTable | None = None) -> KeysState:
        assert self.target is not None
        table = table or self._delta_table()
        days = [p["event_date"] for p in table.partitions() if p.get("event_date")]
        horizon = max(c.horizon for c in self.checks if c.horizon is not None)
        return KeysState(table.count(), date.fromisoformat(min(days)) if days else None, horizon, late)

    # -- the batch ----------------------------------------------------------------------------------------

    def annotate(self, df: DataFrame, writer: TableWriter, ctx: BatchContext) -> DataFrame:
        """``df`` with each row's first occurrence and the batch's key records
        (:func:`~streaming_dq.checks.stream_keys.annotate`)."""
        if not self.checks:
            return df
        assert self.target is not None and self.event_time is not None
        with writing(self.target, ctx.batch_id):
            records = self._records(df.sparkSession, writer, ctx)
        seen = SeenBefore(records, dict(self.watermarks), ctx.app_id, ctx.batch_id)
        return annotate(df, self.checks, self.event_time, seen)

    def keyed(self, df: DataFrame, writer: TableWriter, ctx: BatchContext) -> tuple[DataFrame, DeferredKeys]:
        """The driver router's form: ``df`` with the checks' key columns (a projection), and what judges the
        collected rows against the driver's index (:mod:`~streaming_dq.checks.stream_keys_arrow`): no Spark
        job reads the keys table. The index is built from the table on first use, after a failed batch, and
        when another process has written the table since this one last did."""
        if not self.checks:
            raise InternalError("no check judges keys across batches")
        assert self.target is not None and self.event_time is not None
        with writing(self.target, ctx.batch_id):
            index = self._current_index(writer)
        if len(index) > self.keys_in_memory:
            raise ConfigError(
                f"gate {self.gate!r}: the keys table {self.target.uri} holds {len(index):,} records within the "
                f"horizon, more than the driver's index may hold ({self.keys_in_memory:,}, "
                f"{ENTRY_BYTES} bytes each): raise targets.keys-in-memory (the driver needs "
                f"{len(index) * ENTRY_BYTES / 2**20:,.1f} MiB for them), shorten the horizon, or use "
                "routing: distributed, which leaves the keys on the executors",
                field_path="targets.keys-in-memory",
            )
        index.judging(ctx.app_id, ctx.batch_id)
        shape = df.schema.json()
        if shape not in self._key_columns:  # Columns are unresolved expressions: built once per schema
            self._key_columns = {shape: key_columns(df, self.checks, self.event_time)}
        return df.withColumns(self._key_columns[shape]), DeferredKeys(
            index, self.checks, ctx, dict(self.watermarks), self.gate, self._delta_table
        )

    def _cutoff(self) -> int | None:
        """The index's cutoff in microseconds: the start of the oldest day a batch may need (None: all)."""
        oldest = self._oldest_needed()
        if oldest is None:
            return None
        return int(datetime.combine(oldest, datetime.min.time(), UTC).timestamp()) * 1_000_000

    def _current_index(self, writer: TableWriter) -> KeyIndex:
        """The index, up to date with the keys table (built or rebuilt from it when it is not)."""
        assert self.target is not None
        if writer.table_schema(self.target) is None:  # no batch has recorded a key yet
            index = self.index if self.index is not None and self._index_version is None else None
            index = index or KeyIndex([c.check_id for c in self.checks])
        elif self.index is not None and self._delta_table().version() == self._index_version:
            index = self.index
        else:
            index = self._build_index()
        cutoff = self._cutoff()
        if cutoff is not None:
            index.prune(cutoff)
        self.index = index
        return index

    def _build_index(self) -> KeyIndex:
        """The index of the keys table's records of this gate from the oldest day a batch may need."""
        table = self._delta_table()
        version = table.version()
        ids = [c.check_id for c in self.checks]
        index = index_of(table, self.gate, ids, self._oldest_needed(), self._cutoff())
        self._index_version = version
        return index

    def _oldest_needed(self) -> date | None:
        """The oldest ``event_date`` a batch may need: twice the horizon behind the oldest watermark (a row
        older than its watermark minus the horizon is too late; its key's records reach a horizon further)."""
        days = []
        for check in self.checks:
            mark = self.watermarks.get(check.check_id)
            if mark is None:
                return None
            assert check.horizon is not None
            days.append((mark - 2 * check.horizon).astimezone(UTC).date())
        return min(days) if days else None

    def _records(self, spark: SparkSession, writer: TableWriter, ctx: BatchContext) -> DataFrame | None:
        """The keys table's records a batch may need (without the batch's own): ``check_id``, ``key_hash``,
        ``last_event_time`` and ``first`` (the occurrence); None when the table holds none."""
        from pyspark.sql import functions as F

        assert self.target is not None
        frame = self._frame(spark, writer)
        if frame is None:
            return None
        oldest = self._oldest_needed()
        if oldest is not None:
            frame = frame.where(
                F.col("last_event_time") >= F.lit(datetime.combine(oldest, datetime.min.time(), UTC))
            )
        mine = (F.col("app_id") == F.lit(ctx.app_id)) & (F.col("batch_id") == F.lit(ctx.batch_id))
        frame = frame.where((F.col("gate") == F.lit(self.gate)) & ~mine)
        return frame.select(
            "check_id",
            "key_hash",
            "last_event_time",
            F.struct("batch_id", "app_id", "event_time", "origin").alias("first"),
        )

    def _frame(self, spark: SparkSession, writer: TableWriter) -> DataFrame | None:
        """The keys table as a Spark frame (partitions older than needed left out), or None when empty."""
        from pyspark.sql import functions as F

        from streaming_dq.tables.storage import hadoop_options, spark_uri

        assert self.target is not None
        if writer.table_schema(self.target) is None:
            return None
        oldest = self._oldest_needed()
        if isinstance(writer, SparkDeltaWriter):
            frame = writer.read_frame(self.target)
            return frame if oldest is None else frame.where(F.col("event_date") >= F.lit(oldest))

        table = self._delta_table()
        filters = [("event_date", ">=", oldest.isoformat())] if oldest is not None else None
        files = table.file_uris(file_pruning_predicate=filters)
        if not files:
            return None
        # event_date is a partition value, not in the files; the store's settings as S3A's (an s3:// table)
        stored = pa.schema([f for f in KEYS_SCHEMA if f.name != "event_date"])
        reader = spark.read.options(**hadoop_options(self.target.uri, self.target.storage_options))
        return reader.schema(spark_schema(stored)).parquet(*[spark_uri(f) for f in files])

    def forget(self, writer: TableWriter) -> int:
        """Drop the keys no batch can need any more (``streaming-dq maintain``): per check, the days more than
        twice its horizon behind its watermark; the number of rows dropped. One commit per check with any."""
        from streaming_dq.tables.reading import sql_literal

        assert self.target is not None
        if writer.table_schema(self.target) is None:
            return 0
        marks = self._read_watermarks(writer, None)
        dropped = 0
        for check in self.checks:
            mark = marks.get(check.check_id)
            if mark is None:
                continue
            assert check.horizon is not None
            oldest = (mark - 2 * check.horizon).astimezone(UTC).date()
            predicate = (
                f"gate = {sql_literal(self.gate)} AND check_id = {sql_literal(check.check_id)} "
                f"AND event_date < '{oldest.isoformat()}'"
            )
            before = self._delta_table().count()
            writer.replace_rows(self.target, KEYS_SCHEMA.empty_table(), predicate)
            dropped += before - self._delta_table().count()
        return dropped

    def _read_watermarks(self, writer: TableWriter, ctx: BatchContext | None) -> dict[str, datetime | None]:
        """Per check, the latest event time recorded before ``ctx``'s batch (every batch's, without one), read
        from the newest partitions."""

        from streaming_dq.tables.reading import read_table, sql_literal

        assert self.target is not None
        marks: dict[str, datetime | None] = {c.check_id: None for c in self.checks}
        if writer.table_schema(self.target) is None:
            return marks
        table = self._delta_table()
        days = sorted({p["event_date"] for p in table.partitions() if p.get("event_date")}, reverse=True)
        mine = (
            ""
            if ctx is None
            else f" AND NOT (app_id = {sql_literal(ctx.app_id)} AND batch_id = {ctx.batch_id})"
        )
        for day in days:
            predicate = f"event_date = '{day}' AND gate = {sql_literal(self.gate)}{mine}"
            rows = read_table(
                self.target.uri,
                storage_options=self.target.storage_options,
                columns=["check_id", "last_event_time"],
                predicate=predicate,
            )
            for check_id, value in latest_by_check(rows).items():
                if check_id in marks and marks[check_id] is None:
                    marks[check_id] = value
            if all(v is not None for v in marks.values()):
                break
        return marks
