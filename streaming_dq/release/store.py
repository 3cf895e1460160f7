"""The quarantine and pass tables as a release sees them: rows as DataFrames, and the release's two commits.

A release commits each chunk twice, both commits recording the release's app transaction
``(<gate>/release/<id>, chunk)``:

1. the quarantine table: the chunk's rows replaced by the same rows with ``_dq_release`` set (one commit, a
   replace of exactly the rows of the chunk's batches as they were read);
2. the pass table: the rows that commit marked ``released``, read back from it - so a rerun after a crash
   between the two appends exactly what the first commit marked.

Two forms, one per writer: with delta-rs (:class:`DriverStore`) the chunk's rows are read with delta-rs and
collected to the driver; with Spark's Delta writer (:class:`SparkStore`) they stay on the executors (Delta's
reader, ``replaceWhere``, ``txnAppId``/``txnVersion``).

Why a chunk is its batches, up to the newest quarantine commit it holds: the replace must name only columns a
release never changes (``_dq_gate``, ``_dq_batch_id``, ``_dq_validation_ts``) and must not take in a row that
arrives meanwhile. The stream's next quarantine rows carry a later validation time than any batch already
committed, so they never match a chunk's condition, and the stream's appends (blind appends) and a release's
replace do not conflict.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pyarrow as pa

from streaming_dq.compat.spark import from_arrow, spark_type, to_arrow
from streaming_dq.core.modes import TargetRole
from streaming_dq.exceptions import ConfigError
from streaming_dq.sink.schemas import (
    BATCH_ID_COLUMN,
    GATE_COLUMN,
    RELEASE_COLUMN,
    RELEASE_TYPE,
    VALIDATION_TS_COLUMN,
    conform,
)
from streaming_dq.tables import AppTransaction, DeltaTarget, TableWriter
from streaming_dq.tables.targets import writing

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from streaming_dq.tables.spark import SparkDeltaWriter

__all__ = ["Chunk", "DriverStore", "SparkStore", "Store", "string_literal"]


def string_literal(value: str, what: str) -> str:
    """``value`` as a SQL string literal both Spark and delta-rs read alike (no quote or backslash in it)."""
    if "'" in value or "\\" in value:
        raise ConfigError(
            f"{what} {value!r} contains a quote or a backslash: a release cannot name it in SQL"
        )
    return f"'{value}'"


def timestamp_literal(t: datetime) -> str:
    """A UTC instant as a string literal both dialects compare with a timestamp column."""
    return "'" + t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ") + "'"


@dataclass(frozen=True)
class Chunk:
    """Batches of quarantined rows committed together: their ids, and the newest validation time among their
    rows when they were planned."""

    batch_ids: tuple[int, ...]
    until: datetime
    rows: int

    def predicate(self, gate: str) -> str:
        """The rows of the chunk (see the module): only columns a release never changes."""
        ids = ", ".join(str(b) for b in self.batch_ids)
        return (
            f"{GATE_COLUMN} = {string_literal(gate, 'gate name')} AND {BATCH_ID_COLUMN} IN ({ids})"
            f" AND {VALIDATION_TS_COLUMN} <= {timestamp_literal(self.until)}"
        )


def marked_predicate(release_id: str, chunk: int, state: str | None = None) -> str:
    """The rows chunk ``chunk`` of a release judged (and marked ``state``, when given)."""
    rid = string_literal(release_id, "release id")
    where = f"{RELEASE_COLUMN}.id = {rid} AND {RELEASE_COLUMN}.chunk = {int(chunk)}"
    return where if state is None else f"{where} AND {RELEASE_COLUMN}.state = '{state}'"


def open_predicate(gate: str, until: datetime, *, release_column: bool = True) -> str:
    """The gate's rows quarantined by ``until`` that no release has released or discarded (the candidates of
    a release that started then); without a ``_dq_release`` column yet, every row is open."""
    where = (
        f"{GATE_COLUMN} = {string_literal(gate, 'gate name')}"
        f" AND {VALIDATION_TS_COLUMN} <= {timestamp_literal(until)}"
    )
    if release_column:
        where += f" AND ({RELEASE_COLUMN} IS NULL OR {RELEASE_COLUMN}.state = 'quarantined')"
    return where


class Store(ABC):
    """Reads quarantine rows and makes a release's commits, with one writer (see the module)."""

    def __init__(self, spark: SparkSession, writer: TableWriter, quarantine: DeltaTarget, pass_: DeltaTarget):
        self.spark, self.writer, self.quarantine, self.pass_ = spark, writer, quarantine, pass_

    def schema(self, target: DeltaTarget) -> pa.Schema:
        with writing(target, None):
            schema = self.writer.table_schema(target)
        if schema is None:
            raise ConfigError(f"no Delta table at {target.uri}", field_path="targets")
        return schema

    def ensure_release_column(self, txn: AppTransaction) -> None:
        """Add ``_dq_release`` to a quarantine table the gate created before releases existed (one commit of
        no rows; the gate's own quarantine appends add it as well)."""
        schema = self.schema(self.quarantine)
        if RELEASE_COLUMN in schema.names:
            return
        empty = pa.schema([*schema, pa.field(RELEASE_COLUMN, RELEASE_TYPE)]).empty_table()
        with writing(self.quarantine, txn.version):
            self.writer.append(self.quarantine, empty, txn, merge_schema=True)

    def has_release_column(self) -> bool:
        return RELEASE_COLUMN in self.schema(self.quarantine).names

    def open_rows(self, gate: str, until: datetime) -> DataFrame:
        """The rows of :func:`open_predicate`."""
        return self.rows(open_predicate(gate, until, release_column=self.has_release_column()))

    def rows(self, predicate: str) -> DataFrame:
        """The quarantine rows matching ``predicate`` (every column; a NULL ``_dq_release`` where the table has
        none yet: a dry run writes nothing, not even the column)."""
        from pyspark.sql import functions as F

        frame = self._read(predicate)
        if RELEASE_COLUMN in frame.columns:
            return frame
        return frame.withColumn(RELEASE_COLUMN, F.lit(None).cast(spark_type(RELEASE_TYPE)))

    def committed(self, target: DeltaTarget, app_id: str) -> int | None:
        with writing(target, None):
            return self.writer.committed_version(target, app_id)

    @abstractmethod
    def _read(self, predicate: str) -> DataFrame:
        """The quarantine rows matching ``predicate``, as the table has them."""

    @abstractmethod
    def replace(self, frame: DataFrame, predicate: str, txn: AppTransaction) -> None:
        """Replace the quarantine rows matching ``predicate`` by ``frame``'s, in one commit recording ``txn``."""

    @abstractmethod
    def append_pass(self, frame: DataFrame, txn: AppTransaction, rows: int) -> None:
        """Append ``frame`` (``rows`` rows, the pass table's columns) to the pass table, recording ``txn``."""


class DriverStore(Store):
    """delta-rs: rows read and committed on the driver (the embedded default)."""

    def _read(self, predicate: str) -> DataFrame:
        from streaming_dq.tables.reading import read_table

        with writing(self.quarantine, None):
            data = read_table(
                self.quarantine.uri, storage_options=self.quarantine.storage_options, predicate=predicate
            )
        return from_arrow(self.spark, data)

    def replace(self, frame: DataFrame, predicate: str, txn: AppTransaction) -> None:
        data = conform(to_arrow(frame), self.schema(self.quarantine))
        with writing(self.quarantine, txn.version):
            self.writer.replace_rows(self.quarantine, data, predicate, txn)

    def append_pass(self, frame: DataFrame, txn: AppTransaction, rows: int) -> None:
        data = conform(to_arrow(frame), self.schema(self.pass_))
        with writing(self.pass_, txn.version):
            self.writer.append(self.pass_, data, txn)


class SparkStore(Store):
    """Spark's Delta writer: rows read, judged and written by the executors."""

    writer: SparkDeltaWriter

    def _read(self, predicate: str) -> DataFrame:
        return self.writer.read_frame(self.quarantine).where(predicate)

    def replace(self, frame: DataFrame, predicate: str, txn: AppTransaction) -> None:
        with writing(self.quarantine, txn.version):
            self.writer.replace_frame(self.quarantine, frame, predicate, txn)

    def append_pass(self, frame: DataFrame, txn: AppTransaction, rows: int) -> None:
        from streaming_dq.sink.schemas import conform_frame

        with writing(self.pass_, txn.version):
            self.writer.append_frame(
                self.pass_, conform_frame(frame, self.schema(self.pass_)), txn, rows=rows
            )


def results_target(targets: Mapping[TargetRole, DeltaTarget], what: str) -> DeltaTarget:
    """The gate's results table, where a ``what`` (``release``, ``discard``) records itself.

    Raises:
        ConfigError: the gate has none.
    """
    results = targets.get("results")
    if results is None:
        raise ConfigError(
            f"a {what} records itself in the gate's results table: the gate needs one",
            field_path="targets.results",
        )
    return results


def store_for(spark: SparkSession, writer: TableWriter, quarantine: DeltaTarget, pass_: DeltaTarget) -> Store:
    """The store of ``writer``'s kind."""
    from streaming_dq.tables.spark import SparkDeltaWriter

    kind = SparkStore if isinstance(writer, SparkDeltaWriter) else DriverStore
    return kind(spark, writer, quarantine, pass_)
