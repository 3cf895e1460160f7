"""The Spark router (clusters): the rows of a batch never leave the executors.

Per batch, over the annotated batch (input columns, the row checks' flags as one list that is NULL on a clean
row, the regime ordinal):

1. ``persist`` it (``MEMORY_AND_DISK``);
2. ONE aggregation job, ``groupBy(regime, window keys).agg(...)``: row counts, each flag's fired rows, the
   states of every observable check, the event-time range and the per-window states of the window-scoped
   checks (windows are cut in Spark, in the gate's time zone). A handful of group rows reach the driver;
3. the decision (a fail-level aggregate that failed quarantines its regime's rows before anything is
   written; ``on-aggregate-failure: stop`` raises here);
4. the split: the pass rows and the quarantine rows (``_dq_errors`` built as Spark columns) as two lazy
   DataFrames, which the committer (:mod:`~streaming_dq.sink.commit`) appends, each by Spark's Delta writer
   with ``txnAppId``/``txnVersion``; the batch is unpersisted once they are written.

That is three jobs over the batch for any number of observable checks (classic aggregate checks, which need a
groupBy, join or distinct of their own, add one each; Delta's own log and commit jobs are apart). Values that
must not differ between the two writes (the validation time, the batch id) are driver literals.

A small batch (at most ``small_batch_rows`` rows, the writer's ``driver_commit_rows``) is cheaper on the
driver: a commit through Spark's writer costs four jobs however few its rows. After a batch that small, the
router hands the next batch to the driver router, limited to ``small_batch_rows + 1`` rows: one
job, then delta-rs commits (:mod:`streaming_dq.tables.spark`). A batch found larger is validated as above.

Why persist rather than ``localCheckpoint``: both keep the two writes from recomputing the source and the
flags. A persisted partition lost with its executor is recomputed from the batch's lineage (a micro-batch
re-reads the same offsets and files, and the checks are deterministic), so the batch goes on; a local
checkpoint lost with its executor fails the job, and dynamic allocation removes executors on purpose. The
price of lineage is that a nondeterministic check could be evaluated twice for a recomputed partition: the
gate's checks are deterministic, and a user's expression check must be too (docs/streaming.md).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streaming_dq.compat.spark import is_remote, same_session
from streaming_dq.core.outcome import CheckOutcome
from streaming_dq.engine.validate import validate_grouped
from streaming_dq.engine.values import EventTimeStats
from streaming_dq.sink.drift import DRIFT_CHECK_ID
from streaming_dq.sink.records import RoutedBatch
from streaming_dq.sink.routers.base import (
    DRIFT_ERROR,
    BatchJob,
    Router,
    ValidatedBatch,
    drift_kept_columns,
    drift_raw_column,
)
from streaming_dq.sink.routers.driver import DriverRouter
from streaming_dq.sink.rows import SplitBatch, TableRows
from streaming_dq.sink.schemas import (
    BATCH_ID_COLUMN,
    ERRORS_COLUMN,
    FIRST_SEEN_COLUMN,
    GATE_COLUMN,
    RAW_COLUMN,
    VALIDATION_TS_COLUMN,
    conform_columns,
    quarantine_schema,
    without_annotations,
)
from streaming_dq.sink.seen_keys import KEYS_COLUMN, key_rows

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession

    from streaming_dq.engine.decision import BatchDecision
    from streaming_dq.engine.plan import ValidationPlan
    from streaming_dq.sink.drift import SchemaDrift
    from streaming_dq.states.keyed import WindowStates

__all__ = ["SparkRouter"]

logger = logging.getLogger("streaming_dq.gate")


class SparkRouter(Router):
    """Validates with one aggregation job over the persisted batch and writes with Spark's Delta writer.

    Example:
        >>> QualityGate("orders", checks, pass_table="s3://lake/orders", quarantine_table="s3://lake/orders_q",
        ...             writer="spark", routing="distributed")  # doctest: +SKIP
    """

    name = "distributed"

    def __init__(self, *, small_batch_rows: int = 0) -> None:
        # Projections onto a table's schema, built once per (batch columns, table schema) through py4j.
        self._projections: dict[tuple[object, ...], list[Column]] = {}
        self.small_batch_rows = small_batch_rows
        self._small = DriverRouter() if small_batch_rows > 0 else None
        self._last_rows: int | None = None  # the previous batch's rows (None: no batch yet)

    def _validate_small(self, plan: ValidationPlan, df: DataFrame, job: BatchJob) -> ValidatedBatch | None:
        """The batch validated by the driver router when it has at most ``small_batch_rows`` rows.

        Tried only after a batch that small (not on the first batch of the router, whose size is unknown): a
        stream's batches are mostly like the one before, and a batch found too large costs one read of
        ``small_batch_rows + 1`` rows before the Spark path. When those rows exceed
        ``spark.driver.maxResultSize`` (wide rows), the gate says so once and keeps the Spark path.
        """
        if self._small is None or self._last_rows is None or self._last_rows > self.small_batch_rows:
            return None
        try:
            with _one_job(df.sparkSession):  # the limit's exchange is a stage of the one job, not a job
                return self._small.validate_small(plan, df, job, self.small_batch_rows)
        except Exception as exc:
            if "maxResultSize" not in str(exc):
                raise
            logger.warning(
                "gate %r: %d rows of batch %d exceed spark.driver.maxResultSize; its batches stay on the "
                "executors from now on (lower targets.driver-commit-rows to validate small batches on the "
                "driver)",
                job.ctx.gate,
                self.small_batch_rows + 1,
                job.ctx.batch_id,
            )
            self._small = None
            return None

    def conformed(self, frame: DataFrame, schema: pa.Schema, *, keep_extra: bool) -> DataFrame:
        """``conform_frame``, its Columns reused across batches of the same shape."""
        key = (tuple(frame.columns), schema, keep_extra)
        if key not in self._projections:
            self._projections[key] = conform_columns(key[0], schema, keep_extra=keep_extra)
        return frame.select(*self._projections[key])

    def validate(self, plan: ValidationPlan, df: DataFrame, job: BatchJob) -> ValidatedBatch:
        """One aggregation job over the annotated batch, persisted until its rows are written; a small batch (see ``small_batch_rows``) is validated
        and split on the driver instead, its rows committed like the gate's own small tables."""

        small = self._validate_small(plan, df, job)
        if small is not None:
            assert small.decision is not None  # validated, not quarantined whole
            self._last_rows = small.decision.total
            return small
        spark = df.sparkSession

        @contextmanager
        def phase(name: str) -> Iterator[None]:
            one_job = _one_job(spark) if name == "aggregate" else nullcontext()
            with job.described(spark, name), one_job:
                yield

        annotated, aggregates, decision = validate_grouped(plan, df, windows=True, keep=True, phase=phase)
        self._last_rows = decision.total
        return _SparkBatch(self, plan, job, annotated, decision, list(df.columns), aggregates.windows)

    def quarantine_whole(self, df: DataFrame, job: BatchJob, drift: SchemaDrift) -> ValidatedBatch:
        raw = drift_raw_column(df, job.malformed)
        kept = [F.col(f"`{c}`") for c in drift_kept_columns(df, job.table_schema, drift)]
        df.persist()
        try:
            with job.described(df.sparkSession, "aggregate"):
                [stats] = df.agg(*_drift_counts(df, job)).collect()
        except BaseException:
            df.unpersist()
            raise
        error = F.array(_error_struct(DRIFT_ERROR.check, DRIFT_ERROR.check_id, DRIFT_ERROR.severity))
        frame = df.select(*kept, error.alias(ERRORS_COLUMN), *_stamps(job), raw.alias(RAW_COLUMN))
        quarantined = self.conformed(frame, quarantine_schema(job.table_schema), keep_extra=True)
        n = int(stats["n"])
        routed = RoutedBatch(
            rows_in=n,
            rows_passed=0,
            rows_quarantined=n,
            checks=(
                CheckOutcome(DRIFT_CHECK_ID, DRIFT_CHECK_ID, "aggregate", "critical", "failed", violations=n),
            ),
            rows_malformed=int(stats["malformed"] or 0),
            event_time=EventTimeStats.from_micros(stats["et_min"], stats["et_max"], stats["et_nulls"]),
        )
        # the pass table's commit is empty: it records the batch's transaction
        split = SplitBatch(
            TableRows(job.table_schema.empty_table(), 0), TableRows(quarantined, n, merge=True), routed
        )
        return _Persisted(df, split)


class _Persisted(ValidatedBatch):
    """A batch quarantined whole: its rows stay persisted until they are written."""

    decision = None

    def __init__(self, df: DataFrame, split: SplitBatch) -> None:
        self._df, self._split = df, split

    def split_rows(self) -> SplitBatch:
        return self._split

    def close(self) -> None:
        self._df.unpersist()


class _SparkBatch(ValidatedBatch):
    decision: BatchDecision

    def __init__(
        self,
        router: SparkRouter,
        plan: ValidationPlan,
        job: BatchJob,
        annotated: DataFrame,
        decision: BatchDecision,
        input_columns: list[str],
        window_states: WindowStates | None,
    ) -> None:
        self.plan, self.job, self.decision, self._router = plan, job, decision, router
        self._annotated, self._inputs, self._windows = annotated, input_columns, window_states

    def split_rows(self) -> SplitBatch:
        job, rules, decision = self.job, self.plan.rules, self.decision
        failed = rules.failed_column(decision.breached)
        names = [c for c in self._inputs if c != job.malformed]
        inputs = [F.col(f"`{c}`") for c in without_annotations(names)]
        passed = self._annotated.filter(~failed).select(*inputs)
        raw = F.col(f"`{job.malformed}`") if job.malformed else F.lit(None).cast("string")
        quarantined = self._annotated.filter(failed).select(
            *[F.col(f"`{c}`") for c in without_annotations(names, keep=[FIRST_SEEN_COLUMN])],
            rules.errors_column(decision.agg_errors).alias(ERRORS_COLUMN),
            *_stamps(job),
            raw.alias(RAW_COLUMN),
        )
        conformed = self._router.conformed
        counted = RoutedBatch.decided(
            self.plan,
            decision,
            rows_passed=decision.passed_records,
            rows_quarantined=decision.failed_records,
            rows_warned=decision.row_warning_records,
            window_states=self._windows,
        )
        return SplitBatch(
            TableRows(
                conformed(passed, job.table_schema, keep_extra=job.merge),
                decision.passed_records,
                merge=job.merge,
            ),
            TableRows(
                conformed(quarantined, quarantine_schema(job.table_schema), keep_extra=True),
                decision.failed_records,
                merge=True,
            ),
            counted,
            key_rows(self._annotated, job.ctx) if KEYS_COLUMN in self._inputs else None,
        )

    def close(self) -> None:
        self._annotated.unpersist()


def _stamps(job: BatchJob) -> list[Column]:
    """The quarantine table's per-batch columns, as driver literals (identical in every task and retry)."""
    return [
        F.lit(job.ctx.validation_ts).cast("timestamp").alias(VALIDATION_TS_COLUMN),
        F.lit(job.ctx.batch_id).cast("long").alias(BATCH_ID_COLUMN),
        F.lit(job.ctx.gate).alias(GATE_COLUMN),
    ]


def _error_struct(check: str, check_id: str, severity: str) -> Column:
    return F.struct(
        F.lit(check).alias("check"), F.lit(check_id).alias("check-id"), F.lit(severity).alias("severity")
    )


def _drift_counts(df: DataFrame, job: BatchJob) -> list[Column]:
    """Rows, malformed rows and the event-time range of a batch quarantined whole (one job)."""
    from pyspark.sql.types import TimestampNTZType, TimestampType

    malformed = F.count_if(F.col(f"`{job.malformed}`").isNotNull()) if job.malformed else F.lit(0)
    cols = [F.count(F.lit(1)).alias("n"), malformed.alias("malformed")]
    field = next((f for f in df.schema.fields if f.name == job.event_time), None)
    if field is None or not isinstance(field.dataType, TimestampType | TimestampNTZType):
        return [*cols, F.lit(None).alias("et_min"), F.lit(None).alias("et_max"), F.lit(0).alias("et_nulls")]
    ts = F.col(f"`{field.name}`").cast("timestamp")
    well_formed = F.col(f"`{job.malformed}`").isNull() if job.malformed else F.lit(True)
    return [
        *cols,
        F.unix_micros(F.min(ts)).alias("et_min"),
        F.unix_micros(F.max(ts)).alias("et_max"),
        F.count_if(ts.isNull() & well_formed).alias("et_nulls"),
    ]


@contextmanager
def _one_job(spark: SparkSession) -> Iterator[None]:
    """Run the block without adaptive query execution when that touches no session anyone else uses.

    The batch's one grouped aggregation has a tiny result (one row per regime and window); with AQE, Spark
    submits its shuffle map stage as a job of its own. Spark has no per-query switch for AQE: it is a session
    setting, read when the query is planned. But a streaming query runs its ``foreachBatch`` batches on a clone
    of the session made for that query alone (one batch at a time), so there the setting is turned off for the
    aggregation and restored after: the gate's budget of three jobs over the batch holds, and no other query
    sees the change. Called on any other session (a direct call in classic Spark, or under Spark Connect, where
    the batch's session cannot be told apart from one the client shares), the setting is left as the caller
    set it, at the price of the extra job when AQE is on.
    """
    key = "spark.sql.adaptive.enabled"
    if not _query_own_session(spark):
        yield
        return
    before = spark.conf.get(key) or "true"
    if str(before).lower() == "false":
        yield
        return
    spark.conf.set(key, "false")
    try:
        yield
    finally:
        spark.conf.set(key, before)


def _query_own_session(spark: SparkSession) -> bool:
    """Whether ``spark`` is the clone a streaming query gives its ``foreachBatch`` batches (classic Spark)."""
    from pyspark.sql import SparkSession

    if is_remote() or not spark.sparkContext.getLocalProperty("sql.streaming.queryId"):
        return False
    shared = SparkSession._instantiatedSession
    return shared is None or not same_session(spark, shared)
