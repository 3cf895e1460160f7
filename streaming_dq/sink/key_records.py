"""The keys table's rows of one batch (:mod:`~streaming_dq.sink.seen_keys` keeps the table): from its annotated
rows on the driver (Arrow) or on the executors (a Spark frame), stamped with the batch, with each check's latest
event time among them and the rows too late to judge."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from streaming_dq.checks.stream_keys import FIRST_SEEN_COLUMN, KEYS_COLUMN, KEYS_SCHEMA
from streaming_dq.sink.rows import KeyRows, TableRows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streaming_dq.sink.records import BatchContext

__all__ = ["key_rows", "latest_by_check", "no_key_rows"]


def _as_utc(value: datetime) -> datetime:
    """A time in UTC (Spark's ``collect`` gives naive local times, Arrow aware UTC ones)."""
    return value.astimezone(UTC)


def latest_by_check(rows: pa.Table) -> dict[str, datetime]:
    """Per check, the latest ``last_event_time`` among keys-table rows."""
    if rows.num_rows == 0:
        return {}
    grouped = rows.group_by("check_id").aggregate([("last_event_time", "max")])
    return {
        cid: _as_utc(value)
        for cid, value in zip(
            grouped.column("check_id").to_pylist(),
            grouped.column("last_event_time_max").to_pylist(),
            strict=True,
        )
        if value is not None
    }


def no_key_rows() -> TableRows:
    """The keys table's rows of a batch that records no key (one quarantined whole, unjudged)."""
    return TableRows(KEYS_SCHEMA.empty_table(), 0)


def key_rows(data: pa.Table | DataFrame, ctx: BatchContext) -> KeyRows:
    """The keys table's rows of a batch, from its annotated rows (an Arrow table on the driver, or the Spark
    frame the executors write): the :data:`~streaming_dq.checks.stream_keys.KEYS_COLUMN` records, stamped;
    per check the latest event time among them (the check's watermark after the batch) and the rows too late
    to judge.

    The Spark form counts them in one small job over the persisted batch, now: after the keys table's write
    Spark would recompute the batch (its plan reads the keys table, and a write refreshes what reads it)."""
    if isinstance(data, pa.Table):
        records = pc.list_flatten(data.column(KEYS_COLUMN))
        flat = pa.Table.from_struct_array(records) if len(records) else KEYS_SCHEMA.empty_table()
        n = flat.num_rows
        last = flat.column("last_event_time").cast(pa.timestamp("us", tz="UTC"))
        stamped = {
            "gate": pa.array([ctx.gate] * n, pa.string()),
            **{name: flat.column(name) for name in ("check_id", "key_hash", "key", "event_time")},
            "last_event_time": last,
            "origin": flat.column("origin"),
            "event_date": pc.cast(last, pa.date32()),
            "batch_id": pa.array([ctx.batch_id] * n, pa.int64()),
            "app_id": pa.array([ctx.app_id] * n, pa.string()),
        }
        table = pa.table(stamped).select(KEYS_SCHEMA.names).cast(KEYS_SCHEMA)
        pointers = pc.list_flatten(data.column(FIRST_SEEN_COLUMN))
        late: dict[str, int] = {}
        if len(pointers):
            flagged = pa.Table.from_struct_array(pointers).filter(pc.field("late"))
            late = dict(Counter(flagged.column("check_id").to_pylist()))
        return KeyRows(TableRows(table, n), latest_by_check(table), late)
    from pyspark.sql import functions as F

    records = data.select(F.explode(KEYS_COLUMN).alias("k")).select("k.*")
    day = F.date_from_unix_date(F.floor(F.unix_micros("last_event_time") / F.lit(86_400_000_000)).cast("int"))
    frame = records.select(
        F.lit(ctx.gate).alias("gate"),
        "check_id",
        "key_hash",
        "key",
        "event_time",
        "last_event_time",
        "origin",
        day.alias("event_date"),
        F.lit(ctx.batch_id).cast("long").alias("batch_id"),
        F.lit(ctx.app_id).alias("app_id"),
    )
    # one small job over the persisted batch: the records' latest event time and count, and the late rows
    recorded = frame.select("check_id", "last_event_time", F.lit(1).alias("record"), F.lit(0).alias("late"))
    flagged = data.select(F.explode(FIRST_SEEN_COLUMN).alias("p")).where(F.col("p.late"))
    late_rows = flagged.select(
        F.col("p.check_id").alias("check_id"),
        F.lit(None).cast("timestamp").alias("last_event_time"),
        F.lit(0).alias("record"),
        F.lit(1).alias("late"),
    )
    found = (
        recorded.unionByName(late_rows)
        .groupBy("check_id")
        .agg(F.max("last_event_time").alias("t"), F.sum("record").alias("n"), F.sum("late").alias("late"))
        .collect()
    )
    latest = {r["check_id"]: _as_utc(r["t"]) for r in found if r["t"] is not None}
    late = {r["check_id"]: int(r["late"]) for r in found if r["late"]}
    return KeyRows(TableRows(frame, sum(int(r["n"]) for r in found)), latest, late)
