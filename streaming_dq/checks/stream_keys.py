"""Duplicates across micro-batches: how a ``unique-key-check`` with a ``horizon`` finds a row's earlier
occurrence, written once for both routers as Spark columns.

A row is a **duplicate** when a row with the same key was seen before it, in an earlier batch or earlier in
the same batch, with an event time no more than ``horizon`` before the row's own (any later event time
counts too: a retry carries its original's event time). Inside a batch, "before" is the order of
``(event time, order-by columns..., a hash of the row's values)``: the same whatever partitions Spark cut the
batch into; rows equal in all of those are interchangeable, and all but one of them are duplicates. Every
occurrence counts as seen, including rows quarantined for another reason and duplicates themselves.

A row is **too late to judge** when its event time is more than ``horizon`` behind the latest event time
the check had recorded before the batch (the keys it would be compared with may be gone); its ``late``
policy quarantines it (reason: too late), or passes it unjudged; either way its ``_dq_first_seen`` entry
says ``late`` and the gate counts it.

:func:`annotate` adds two columns to the batch, both read through the names here:

* ``_dq_first_seen`` (:data:`FIRST_SEEN_TYPE`): per check that flags the row, a pointer to the key's first
  occurrence (its batch, app id, event time and origin, e.g. the Kafka partition and offset); kept in the
  quarantine table;
* ``_dq_keys`` (:data:`KEY_RECORD_TYPE`): on the first row of each key in the batch, the record the gate's
  keys table keeps for the key (first event time, last event time, origin); never written to the pass or
  quarantine table.

The records seen before (``seen``: one row per check and key hash, from the keys table) are joined to the
batch by the key's 128-bit hash (the 16 bytes of the MD5 of the key's JSON): a join in Spark, no key reaches the driver.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import reduce
from typing import Literal, Protocol

import pyarrow as pa
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import MapType

from streaming_dq.core.sql import col

__all__ = [
    "ANNOTATION_COLUMNS",
    "FIRST_SEEN_COLUMN",
    "FIRST_SEEN_TYPE",
    "KEYS_COLUMN",
    "KEYS_IN_MEMORY",
    "KEYS_SCHEMA",
    "KEY_RECORD_TYPE",
    "KeyCheck",
    "LatePolicy",
    "SeenBefore",
    "annotate",
    "first_seen_of",
]

#: The default bound of the driver's index of remembered keys (records; 44 bytes each: about 800 MiB).
KEYS_IN_MEMORY = 20_000_000

FIRST_SEEN_COLUMN = "_dq_first_seen"
KEYS_COLUMN = "_dq_keys"
#: The columns :func:`annotate` adds: never written to the pass table.
ANNOTATION_COLUMNS = (FIRST_SEEN_COLUMN, KEYS_COLUMN)

_UTC_TS = pa.timestamp("us", tz="UTC")

#: Per flagging check: the key, where it was first seen, and whether the row was only too late to judge.
FIRST_SEEN_TYPE = pa.list_(
    pa.struct(
        [
            pa.field("check_id", pa.string()),
            pa.field("key", pa.string()),
            pa.field("batch_id", pa.int64()),
            pa.field("app_id", pa.string()),
            pa.field("event_time", _UTC_TS),
            pa.field("origin", pa.string()),
            pa.field("late", pa.bool_()),
        ]
    )
)

#: What a batch records per check and key (its first occurrence in the batch and its latest event time).
KEY_RECORD_TYPE = pa.list_(
    pa.struct(
        [
            pa.field("check_id", pa.string()),
            pa.field("key_hash", pa.binary()),
            pa.field("key", pa.string()),
            pa.field("event_time", _UTC_TS),
            pa.field("last_event_time", _UTC_TS),
            pa.field("origin", pa.string()),
        ]
    )
)

#: The gate's keys table: one row per check, key and batch the key occurred in; partitioned by ``event_date``
#: (the UTC date of ``last_event_time``) so a batch reads only the days its horizon reaches.
KEYS_SCHEMA = pa.schema(
    [
        pa.field("gate", pa.string()),
        *KEY_RECORD_TYPE.value_type,
        pa.field("event_date", pa.date32()),
        pa.field("batch_id", pa.int64()),
        pa.field("app_id", pa.string()),
    ]
)


#: What becomes of a row too late to judge across batches: quarantined (reason: too late), or passed unjudged.
LatePolicy = Literal["quarantine", "pass"]


class KeyCheck(Protocol):
    """What :func:`annotate` reads of a ``unique-key-check`` with a horizon."""

    check_id: str
    columns: list[str]
    nulls_distinct: bool
    horizon: timedelta | None
    order_by: list[str]
    late: LatePolicy

    def applies(self) -> Column: ...


@dataclass(frozen=True)
class SeenBefore:
    """What the keys table says before a batch, for :func:`annotate`.

    Attributes:
        records: The keys table's records the batch may need: ``check_id``, ``key_hash``, ``last_event_time``
            (the latest event time the key was seen at in that batch) and ``first`` (a struct: ``batch_id``,
            ``app_id``, ``event_time``, ``origin`` of its first occurrence there); None when there are none.
        watermarks: Per check, the latest event time it recorded before the batch (None: none yet).
        app_id: The batch's app id.
        batch_id: The batch's id.
    """

    records: DataFrame | None
    watermarks: Mapping[str, datetime | None]
    app_id: str
    batch_id: int


def _micros(delta: timedelta) -> int:
    return int(delta.total_seconds() * 1_000_000)


@dataclass(frozen=True)
class _KeyColumns:
    """What both forms read of one check on a row: its key's JSON and 128-bit hash, whether the row is judged
    (eligible and not too late), whether it is too late, and its origin (the order-by values as text)."""

    key: Column
    key_hash: Column
    judged: Column
    late: Column
    origin: Column


def _key_columns(check: KeyCheck, t: Column, watermark: datetime | None) -> _KeyColumns:
    """One check's :class:`_KeyColumns` over the batch (``t``: its event time as a timestamp): the encoding of
    a key and of a row's eligibility, written once for the Spark form and the driver's Arrow form."""
    h = check.horizon
    assert h is not None
    keys = [col(c) for c in check.columns]
    key = F.to_json(F.array(*[k.cast("string") for k in keys]))
    incomplete = (
        reduce(lambda a, b: a | b, [k.isNull() for k in keys]) if check.nulls_distinct else F.lit(False)
    )
    eligible = check.applies() & t.isNotNull() & ~incomplete
    late = eligible & (t < F.lit(watermark - h).cast("timestamp")) if watermark is not None else F.lit(False)
    origin = (
        F.concat_ws(", ", *[F.concat(F.lit(f"{c}="), col(c).cast("string")) for c in check.order_by])
        if check.order_by
        else F.lit(None).cast("string")
    )
    return _KeyColumns(key, F.unhex(F.md5(key)), eligible & ~late, late, origin)


def _row_hash(df: DataFrame) -> Column:
    """The last tie-breaker of the in-batch order: a hash of the row's values (Spark cannot hash a map)."""
    return F.xxhash64(*[col(f.name) for f in df.schema.fields if not isinstance(f.dataType, MapType)])


#: The prefix of the columns :func:`key_columns` adds for the driver's judge (never written anywhere).
KEY_HELPER_PREFIX = "__dq_key_"


def key_helper(name: str, i: int | None = None) -> str:
    """The name of one of :func:`key_columns`'s columns (``i``: the check's position)."""
    return f"{KEY_HELPER_PREFIX}{name}" if i is None else f"{KEY_HELPER_PREFIX}{name}{i}"


def key_columns(df: DataFrame, checks: Sequence[KeyCheck], event_time: str) -> dict[str, Column]:
    """The driver router's form: the columns to add to a batch of ``df``'s schema for ``checks``: each check's
    key, key hash, eligibility and origin, its order-by values, the event time and the row hash (named by
    :func:`key_helper`; a projection, no join, no window), and :data:`FIRST_SEEN_COLUMN` and
    :data:`KEYS_COLUMN` as NULL until the driver fills them in from the rows it collected
    (:mod:`~streaming_dq.checks.stream_keys_arrow`, which also takes the watermarks: whether a row is too
    late is decided there). They depend on the schema only: build them once per schema."""
    from streaming_dq.compat.spark import spark_type

    t = col(event_time).cast("timestamp")
    # the row hash stays although it costs (0.06 s of a 100k-row collect, measured): rows equal in key, event
    # time and order-by values may differ elsewhere, and which of them is the duplicate must not depend on how
    # Spark cut the batch, nor differ between the routers
    helpers: dict[str, Column] = {key_helper("t"): t, key_helper("rh"): _row_hash(df)}
    for i, check in enumerate(checks):
        c = _key_columns(check, t, None)  # no watermark: judged is then every eligible row
        helpers[key_helper("k", i)] = c.key
        helpers[key_helper("h", i)] = c.key_hash
        helpers[key_helper("e", i)] = c.judged
        helpers[key_helper("o", i)] = c.origin
        for j, name in enumerate(check.order_by):
            helpers[key_helper(f"b{i}_", j)] = col(name)
    helpers[FIRST_SEEN_COLUMN] = F.lit(None).cast(spark_type(FIRST_SEEN_TYPE))
    helpers[KEYS_COLUMN] = F.lit(None).cast(spark_type(KEY_RECORD_TYPE))
    return helpers


def annotate(df: DataFrame, checks: Sequence[KeyCheck], event_time: str, seen: SeenBefore) -> DataFrame:
    """``df`` with :data:`FIRST_SEEN_COLUMN` and :data:`KEYS_COLUMN` for ``checks`` (see the module)."""
    t = col(event_time).cast("timestamp")
    row_hash = _row_hash(df)
    pointers: list[Column] = []
    records: list[Column] = []
    for i, check in enumerate(checks):
        h = check.horizon
        assert h is not None
        c = _key_columns(check, t, seen.watermarks.get(check.check_id))
        key_col = f"__dq_k{i}"
        df = df.withColumn(key_col, c.key)
        key = F.col(key_col)  # the key's JSON, computed once per row
        late, origin = c.late, c.origin
        hash_col, judged_col = f"__dq_kh{i}", f"__dq_j{i}"
        df = df.withColumn(hash_col, F.unhex(F.md5(key))).withColumn(judged_col, c.judged)
        h_col, j_col = F.col(hash_col), F.col(judged_col)
        # ONE window per check, partitioned like the join (by key hash): the judged rows first, in order, so
        # that lag, first and row_number of a judged row only ever see judged rows
        ordered = Window.partitionBy(h_col).orderBy(
            j_col.desc(), t, *[col(c) for c in check.order_by], row_hash
        )
        so_far = ordered.rowsBetween(Window.unboundedPreceding, Window.currentRow)
        whole = ordered.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
        first_here = F.first(F.struct(t.alias("event_time"), origin.alias("origin"))).over(so_far)
        since = t - F.expr(f"INTERVAL {_micros(h)} MICROSECONDS")
        dup_here = j_col & F.coalesce(F.lag(t).over(ordered) >= since, F.lit(False))
        here = F.struct(
            F.lit(check.check_id).alias("check_id"),
            key.alias("key"),
            F.lit(seen.batch_id).cast("long").alias("batch_id"),
            F.lit(seen.app_id).alias("app_id"),
            first_here["event_time"].alias("event_time"),
            first_here["origin"].alias("origin"),
            F.lit(False).alias("late"),
        )
        pointer = F.when(dup_here, here)
        if seen.records is not None:
            last_col, first_col = f"__dq_sl{i}", f"__dq_sf{i}"
            # the records of the batch's keys only (a semi-join with the batch's key hashes, broadcast), then
            # per key its latest sighting and earliest occurrence: few rows, broadcast back to the batch
            hashes = df.where(j_col).select(h_col.alias("key_hash")).distinct()
            remembered = seen.records.where(F.col("check_id") == check.check_id)
            matched = remembered.join(F.broadcast(hashes), on="key_hash", how="left_semi")
            known = matched.groupBy("key_hash").agg(
                F.max("last_event_time").alias(last_col),
                F.min_by("first", F.struct(F.col("first.event_time"), F.col("first.batch_id"))).alias(
                    first_col
                ),
            )
            df = df.join(F.broadcast(known.withColumnRenamed("key_hash", hash_col)), on=hash_col, how="left")
            earlier = F.struct(
                F.lit(check.check_id).alias("check_id"),
                key.alias("key"),
                F.col(first_col)["batch_id"].alias("batch_id"),
                F.col(first_col)["app_id"].alias("app_id"),
                F.col(first_col)["event_time"].alias("event_time"),
                F.col(first_col)["origin"].alias("origin"),
                F.lit(False).alias("late"),
            )
            dup_before = j_col & F.coalesce(F.col(last_col) >= since, F.lit(False))
            pointer = F.when(dup_before, earlier).otherwise(pointer)
        # a late row is marked under either policy: ``late: pass`` lets it pass (and it is counted)
        too_late = F.struct(
            F.lit(check.check_id).alias("check_id"),
            key.alias("key"),
            *[F.lit(None).cast(t_).alias(n) for n, t_ in (("batch_id", "long"), ("app_id", "string"))],
            F.lit(None).cast("timestamp").alias("event_time"),
            F.lit(None).cast("string").alias("origin"),
            F.lit(True).alias("late"),
        )
        pointer = F.when(late, too_late).otherwise(pointer)
        pointers.append(pointer)
        records.append(
            F.when(
                j_col & (F.row_number().over(ordered) == 1),
                F.struct(
                    F.lit(check.check_id).alias("check_id"),
                    h_col.alias("key_hash"),
                    key.alias("key"),
                    t.alias("event_time"),
                    F.max(F.when(j_col, t)).over(whole).alias("last_event_time"),
                    origin.alias("origin"),
                ),
            )
        )
    helpers = [c for c in df.columns if c.startswith("__dq_")]
    return df.select(
        *[col(c) for c in df.columns if c not in helpers],
        _present(pointers).alias(FIRST_SEEN_COLUMN),
        _present(records).alias(KEYS_COLUMN),
    )


def _present(values: list[Column]) -> Column:
    """The non-NULL values as an array; NULL when there is none."""
    kept = F.filter(F.array(*values), lambda v: v.isNotNull())
    return F.when(F.size(kept) > 0, kept)


def first_seen_of(check_id: str, late: LatePolicy) -> Column:
    """True on the rows ``_dq_first_seen`` flags for ``check_id`` (the check's failure condition): seen before,
    or too late to judge under ``late: quarantine``."""

    def flags(p: Column) -> Column:
        mine = p["check_id"] == F.lit(check_id)
        return mine if late == "quarantine" else mine & ~p["late"]

    return F.coalesce(F.exists(F.col(FIRST_SEEN_COLUMN), flags), F.lit(False))
