"""The Arrow schemas of the gate's Delta tables, and how a batch is made to fit them.

Two delta-rs pitfalls shape everything here (see the facts reference, section 2.2):

* a table created from an Arrow schema keeps its ``not null`` flags, and Spark's ``toArrow()`` marks
  non-nullable columns so, so every schema the gate creates a table with is made nullable all the way down;
* a tz-naive Arrow timestamp creates a ``timestamp_ntz`` column (and bumps the protocol), so every timestamp
  becomes ``timestamp[us, tz=UTC]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql.types import StructType

from streaming_dq.checks.stream_keys import ANNOTATION_COLUMNS, FIRST_SEEN_COLUMN, FIRST_SEEN_TYPE
from streaming_dq.compat.spark import arrow_schema, spark_type
from streaming_dq.core.outcome_rows import UTC_TIMESTAMP
from streaming_dq.engine.result import ERRORS_COLUMN
from streaming_dq.engine.rules import ERROR_TYPE

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

#: ``_dq_errors`` is the engine's (:data:`streaming_dq.engine.result.ERRORS_COLUMN`): one name for the batch engine
#: and the quarantine table.
VALIDATION_TS_COLUMN = "_dq_validation_ts"
BATCH_ID_COLUMN = "_dq_batch_id"
GATE_COLUMN = "_dq_gate"
RAW_COLUMN = "_dq_raw"
RELEASE_COLUMN = "_dq_release"

#: ``_dq_release``: NULL until a release (``streaming_dq.release``) judges the row again; then which release,
#: what became of the row (``released``: appended to the pass table; ``quarantined``: it still fails, for
#: ``errors``; ``discarded``), when, by whom, with which fix, in which chunk of the release. The row's input
#: columns and ``_dq_errors`` are never rewritten: the quarantine keeps what arrived and why.
RELEASE_TYPE = pa.struct(
    [
        pa.field("id", pa.string()),
        pa.field("state", pa.string()),
        pa.field("ts", UTC_TIMESTAMP),
        pa.field("by", pa.string()),
        pa.field("fix", pa.string()),
        pa.field("chunk", pa.int64()),
        pa.field("errors", ERROR_TYPE),
    ]
)

#: ``_dq_first_seen``: on a row a ``unique-key-check`` with a horizon flags, where its key was first seen
#: (:mod:`streaming_dq.checks.stream_keys`); NULL on every other row.
#: Columns the quarantine table adds to the input columns, in order.
QUARANTINE_COLUMNS = pa.schema(
    [
        pa.field(ERRORS_COLUMN, ERROR_TYPE),
        pa.field(VALIDATION_TS_COLUMN, UTC_TIMESTAMP),
        pa.field(BATCH_ID_COLUMN, pa.int64()),
        pa.field(GATE_COLUMN, pa.string()),
        pa.field(RAW_COLUMN, pa.string()),
        pa.field(RELEASE_COLUMN, RELEASE_TYPE),
        pa.field(FIRST_SEEN_COLUMN, FIRST_SEEN_TYPE),
    ]
)


def normalize_type(dtype: pa.DataType) -> pa.DataType:
    """The type the gate stores: UTC microsecond timestamps, plain strings and lists, nullable children."""
    if pa.types.is_timestamp(dtype):
        return UTC_TIMESTAMP if dtype.tz is not None else pa.timestamp("us")
    if pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype):
        return pa.string()
    if pa.types.is_large_binary(dtype) or pa.types.is_binary_view(dtype):
        return pa.binary()
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return pa.list_(normalize_field(dtype.value_field))
    if pa.types.is_struct(dtype):
        return pa.struct([normalize_field(dtype.field(i)) for i in range(dtype.num_fields)])
    if pa.types.is_map(dtype):
        return pa.map_(normalize_type(dtype.key_type), normalize_field(dtype.item_field))
    return dtype


def normalize_field(f: pa.Field) -> pa.Field:
    return pa.field(f.name, normalize_type(f.type), nullable=True)


def normalize_schema(schema: pa.Schema) -> pa.Schema:
    """Every field nullable (recursively), timestamps as ``timestamp[us, tz=UTC]``."""
    return pa.schema([normalize_field(f) for f in schema])


def arrow_schema_of(schema: StructType, *, drop: Iterable[str | None] = ()) -> pa.Schema:
    """The normalized Arrow schema of a Spark schema, without the ``drop`` columns."""
    dropped = {d for d in drop if d}
    kept = StructType([f for f in schema.fields if f.name not in dropped])
    return normalize_schema(arrow_schema(kept))


def quarantine_schema(pass_schema: pa.Schema) -> pa.Schema:
    """The pass table's columns followed by the gate's ``_dq_*`` columns."""
    fields = [f for f in pass_schema if f.name not in QUARANTINE_COLUMNS.names]
    return pa.schema([*fields, *QUARANTINE_COLUMNS])


def conform(table: pa.Table, schema: pa.Schema, *, keep_extra: bool = False) -> pa.Table:
    """Cast ``table`` to ``schema``: missing columns become NULL; extra ones are dropped or appended.

    Args:
        table: The rows (e.g. from Spark's ``toArrow()``).
        schema: The target table's schema.
        keep_extra: Append the columns ``schema`` lacks (normalized), for a schema-merging write.
    """
    arrays: list[pa.ChunkedArray | pa.Array] = []
    fields: list[pa.Field] = []
    for f in schema:
        if f.name in table.column_names:
            arrays.append(table.column(f.name).cast(f.type))
        else:
            arrays.append(pa.nulls(table.num_rows, f.type))
        fields.append(pa.field(f.name, f.type, nullable=True))
    if keep_extra:
        for name in table.column_names:
            if name not in schema.names:
                target = normalize_field(table.schema.field(name))
                arrays.append(table.column(name).cast(target.type))
                fields.append(target)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def conform_frame(df: DataFrame, schema: pa.Schema, *, keep_extra: bool = False) -> DataFrame:
    """The Spark form of :func:`conform`: ``df``'s columns in ``schema``'s order and types, missing ones NULL.

    Lazy; casting a column to its own type costs nothing. For writes by the executors (the Spark router).

    Args:
        df: The rows.
        schema: The target table's schema.
        keep_extra: Append the columns ``schema`` lacks, for a schema-merging write.
    """
    return df.select(*conform_columns(tuple(df.columns), schema, keep_extra=keep_extra))


def conform_columns(columns: tuple[str, ...], schema: pa.Schema, *, keep_extra: bool = False) -> list[Column]:
    """The projection :func:`conform_frame` applies to a frame with these ``columns`` (reusable per schema)."""
    from pyspark.sql import functions as F

    present = set(columns)
    cols = []
    for f in schema:
        target = spark_type(f.type)
        source = F.col(f"`{f.name}`") if f.name in present else F.lit(None)
        cols.append(source.cast(target).alias(f.name))
    if keep_extra:
        cols += [F.col(f"`{c}`") for c in columns if c not in schema.names]
    return cols


def without_annotations(columns: Iterable[str], *, keep: Iterable[str] = ()) -> list[str]:
    """``columns`` without the ones the gate added to the batch (``_dq_first_seen``, ``_dq_keys``) but
    ``keep``: the pass table gets none of them, the quarantine table ``_dq_first_seen``."""
    dropped = set(ANNOTATION_COLUMNS) - set(keep)
    return [c for c in columns if c not in dropped]
