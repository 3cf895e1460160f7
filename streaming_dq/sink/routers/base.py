"""The two routers behind one interface: one decision per batch, rendered on the driver or on the executors.

A router turns a micro-batch into a decision (:meth:`Router.validate`) and then splits its rows
(:meth:`ValidatedBatch.split_rows`): every row to exactly one of the pass and quarantine tables. A router writes
nothing: the flow takes the decision in between (``on-aggregate-failure: stop`` raises before anything is
written) and the committer (:mod:`~streaming_dq.sink.commit`) appends the split rows, then the results and
metrics tables, in its one order.

* :class:`~streaming_dq.sink.routers.driver.DriverRouter` (the embedded default): one ``toArrow``, one Spark
  job, the aggregates and the split in pyarrow, delta-rs (or Spark) appends from the driver. Bounded by the
  driver's memory and ``spark.driver.maxResultSize``.
* :class:`~streaming_dq.sink.routers.spark.SparkRouter` (clusters): persist, one aggregation job, two filtered
  writes by Spark's Delta writer; rows never reach the driver.

``routing: auto`` takes the Spark router whenever the writer is Spark's or the master is not local.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streaming_dq.compat.spark import spark_type
from streaming_dq.core.modes import RouterName
from streaming_dq.engine.rules import ErrorEntry
from streaming_dq.sink.drift import DRIFT_CHECK_ID
from streaming_dq.sink.jobs import described, phase_description
from streaming_dq.sink.records import BatchContext
from streaming_dq.sink.rows import SplitBatch
from streaming_dq.tables import AppTransaction

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession

    from streaming_dq.engine.arrow import DeferredFlags
    from streaming_dq.engine.decision import BatchDecision
    from streaming_dq.engine.plan import ValidationPlan
    from streaming_dq.sink.drift import SchemaDrift

__all__ = [
    "BatchJob",
    "Router",
    "ValidatedBatch",
    "fill_missing",
]


DRIFT_ERROR = ErrorEntry(DRIFT_CHECK_ID, DRIFT_CHECK_ID, "critical")


@dataclass(frozen=True)
class BatchJob:
    """What a router needs to know about the batch besides its rows.

    Attributes:
        ctx: The batch's identity (gate, batch id, app id, validation time).
        table_schema: The pass table's current schema (rows are conformed to it).
        malformed: The corrupt-record column present in the batch, or None.
        merge: Keep the batch's extra columns (schema-drift ``merge``).
        event_time: The event-time column, or None.
        deferred: Row checks the driver router decides after its collect (duplicates across batches judged
            against the driver's index); None for the Spark router, which gets them as Spark columns.
    """

    ctx: BatchContext
    table_schema: pa.Schema
    malformed: str | None
    merge: bool
    event_time: str | None
    deferred: DeferredFlags | None = None

    @property
    def txn(self) -> AppTransaction:
        return AppTransaction(self.ctx.app_id, self.ctx.batch_id)

    def described(self, spark: SparkSession, phase: str) -> AbstractContextManager[None]:
        """Run a phase's Spark jobs under ``streaming_dq <gate> batch <id>: <phase>`` (the Spark UI shows it)."""
        return described(spark, phase_description(self.ctx.gate, self.ctx.batch_id, phase))


class ValidatedBatch(ABC):
    """A batch whose decision is taken and whose rows are not written yet. Close it (a context manager)
    after its rows are written: it may hold the batch persisted.

    Attributes:
        decision: The engine's decision (None for a batch quarantined whole, unvalidated).
    """

    decision: BatchDecision | None

    @abstractmethod
    def split_rows(self) -> SplitBatch:
        """The rows for the pass and quarantine tables, and what the routing counted."""

    def close(self) -> None:  # noqa: B027 - nothing to release by default
        """Release what validating held (a persisted batch)."""

    def __enter__(self) -> ValidatedBatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Router(ABC):
    """Validates a batch and writes its rows."""

    name: ClassVar[RouterName]
    #: Whether it takes duplicates across batches as flags it decides after its collect (:attr:`BatchJob.deferred`).
    judges_keys: ClassVar[bool] = False

    @abstractmethod
    def validate(self, plan: ValidationPlan, df: DataFrame, job: BatchJob) -> ValidatedBatch:
        """Take the batch's decision (one aggregation pass)."""

    @abstractmethod
    def quarantine_whole(self, df: DataFrame, job: BatchJob, drift: SchemaDrift) -> ValidatedBatch:
        """Every row for quarantine, unvalidated (schema drift): matching columns kept, each row's JSON in
        ``_dq_raw``; the pass table gets an empty commit that records the batch."""


def fill_missing(df: DataFrame, table_schema: pa.Schema, missing: Sequence[str]) -> DataFrame:
    """Add the table's columns the batch lacks, as typed NULLs (schema-drift ``merge``)."""
    if not missing:
        return df
    return df.withColumns(
        {
            c: F.lit(None).cast(spark_type(table_schema.field(c).type, prefer_timestamp_ntz=False))
            for c in missing
        }
    )


def drift_raw_column(df: DataFrame, malformed: str | None) -> Column:
    """``_dq_raw`` of a batch quarantined whole: the malformed text, else the row's JSON (every field kept)."""
    data_cols = [c for c in df.columns if c != malformed]
    payload = F.to_json(F.struct(*[F.col(f"`{c}`") for c in data_cols]))
    return F.coalesce(F.col(f"`{malformed}`"), payload) if malformed else payload


def drift_kept_columns(df: DataFrame, table_schema: pa.Schema, drift: SchemaDrift) -> list[str]:
    """The batch columns a drifted batch keeps as columns: the table's, unless their type changed."""
    changed = {c for c, _, _ in drift.changed}
    return [c for c in table_schema.names if c in df.columns and c not in changed]
