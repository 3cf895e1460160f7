"""The driver router (the embedded default): one Spark job per batch, the rows split in Arrow on the driver.

One ``toArrow`` collects the rows with their fired flags and each aggregate state's per-row input
(:func:`~streaming_dq.engine.arrow.collect`); every aggregate, the counts and the window states are computed in
Arrow, and the split into pass and quarantine happens in pyarrow; the committer appends the two Arrow tables
(delta-rs by default). Every row passes through the driver: bounded by its memory and ``spark.driver.maxResultSize``; on a
cluster choose the Spark router.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.stream_keys import KEY_HELPER_PREFIX
from streaming_dq.compat.spark import to_arrow
from streaming_dq.core.outcome import CheckOutcome
from streaming_dq.engine.arrow import ArrowSplit, Collected, split
from streaming_dq.engine.validate import validate_collected
from streaming_dq.sink.drift import DRIFT_CHECK_ID
from streaming_dq.sink.records import RoutedBatch, error_entries, event_time_of, quarantine_rows
from streaming_dq.sink.routers.base import (
    DRIFT_ERROR,
    BatchJob,
    Router,
    ValidatedBatch,
    drift_kept_columns,
    drift_raw_column,
)
from streaming_dq.sink.rows import SplitBatch, TableRows
from streaming_dq.sink.schemas import (
    ERRORS_COLUMN,
    FIRST_SEEN_COLUMN,
    RAW_COLUMN,
    conform,
    without_annotations,
)
from streaming_dq.sink.seen_keys import KEYS_COLUMN, key_rows

if TYPE_CHECKING:
    from streaming_dq.engine.decision import BatchDecision
    from streaming_dq.engine.plan import ValidationPlan
    from streaming_dq.sink.drift import SchemaDrift
    from streaming_dq.states.keyed import WindowStates

__all__ = ["DriverRouter"]


class DriverRouter(Router):
    """Collects each batch to the driver in one Spark job and splits it in Arrow.

    Example:
        >>> QualityGate("orders", checks, pass_table=..., quarantine_table=..., routing="driver")  # doctest: +SKIP
    """

    name = "driver"
    #: Duplicates across batches are judged on the collected rows against the driver's index of keys.
    judges_keys = True

    def validate(self, plan: ValidationPlan, df: DataFrame, job: BatchJob) -> _DriverBatch:
        """Collect and decide in one job (:func:`~streaming_dq.engine.validate.validate_collected`).

        Raises:
            MissingReferenceDatasetError: An integrity check's reference dataset is missing.
        """
        spark = df.sparkSession
        collected, decision = validate_collected(
            plan, df, windows=True, phase=lambda name: job.described(spark, name), deferred=job.deferred
        )
        inputs = [c for c in df.columns if not c.startswith(KEY_HELPER_PREFIX)]
        return _DriverBatch(plan, job, collected, decision, inputs, collected.aggregates.windows)

    def validate_small(
        self, plan: ValidationPlan, df: DataFrame, job: BatchJob, at_most: int
    ) -> _DriverBatch | None:
        """:meth:`validate` a batch of at most ``at_most`` rows; None for a larger one (its first
        ``at_most + 1`` rows were read and are dropped: the caller validates the batch its own way).

        The limit does not change what is computed for a batch under it: every row flows through the
        collection and its observed aggregates.
        """
        batch = self.validate(plan, df.limit(at_most + 1), job)
        if batch.decision.total > at_most:
            batch.close()
            return None
        return batch

    def quarantine_whole(self, df: DataFrame, job: BatchJob, drift: SchemaDrift) -> ValidatedBatch:
        raw = drift_raw_column(df, job.malformed)
        kept_names = drift_kept_columns(df, job.table_schema, drift)
        with job.described(df.sparkSession, "collect"):
            rows = to_arrow(df.select(*[F.col(f"`{c}`") for c in df.columns], raw.alias(RAW_COLUMN)))
        kept = rows.select(kept_names)
        n = rows.num_rows
        quarantined = quarantine_rows(
            kept, error_entries(n, DRIFT_ERROR), rows.column(RAW_COLUMN), job.ctx, job.table_schema
        )
        routed = RoutedBatch(
            rows_in=n,
            rows_passed=0,
            rows_quarantined=n,
            checks=(
                CheckOutcome(DRIFT_CHECK_ID, DRIFT_CHECK_ID, "aggregate", "critical", "failed", violations=n),
            ),
            rows_malformed=n - rows.column(job.malformed).null_count if job.malformed else 0,
            event_time=event_time_of(rows, job.event_time, job.malformed),
        )
        return _Split(
            SplitBatch(
                TableRows(job.table_schema.empty_table(), 0), TableRows(quarantined, n, merge=True), routed
            )
        )


class _Split(ValidatedBatch):
    """A batch already split (quarantined whole, unvalidated)."""

    decision = None

    def __init__(self, split: SplitBatch) -> None:
        self._split = split

    def split_rows(self) -> SplitBatch:
        return self._split


class _DriverBatch(ValidatedBatch):
    decision: BatchDecision

    def __init__(
        self,
        plan: ValidationPlan,
        job: BatchJob,
        collected: Collected,
        decision: BatchDecision,
        input_columns: list[str],
        window_states: WindowStates | None,
    ) -> None:
        self.plan, self.job, self.decision = plan, job, decision
        self._collected, self._inputs, self._windows = collected, input_columns, window_states

    def split_rows(self) -> SplitBatch:
        table = self._collected.table
        routed: ArrowSplit = split(self.plan, table, self.decision, self._inputs)
        job = self.job
        dropped = [job.malformed] if job.malformed else []
        passed = routed.passed.select(without_annotations(routed.passed.column_names))
        passed = conform(passed.drop_columns(dropped), job.table_schema, keep_extra=job.merge)
        quarantined = routed.quarantined
        kept = without_annotations(quarantined.column_names, keep=[FIRST_SEEN_COLUMN])
        shaped = quarantine_rows(
            quarantined.select(kept).drop_columns(dropped),
            quarantined.column(ERRORS_COLUMN),
            quarantined.column(job.malformed) if job.malformed else None,
            job.ctx,
            job.table_schema,
        )
        counted = RoutedBatch.decided(
            self.plan,
            self.decision,
            rows_passed=passed.num_rows,
            rows_quarantined=shaped.num_rows,
            rows_warned=self.decision.row_warning_records,
            window_states=self._windows,
        )
        # the quarantine table follows the pass table's evolution
        return SplitBatch(
            TableRows(passed, passed.num_rows, merge=job.merge),
            TableRows(shaped, shaped.num_rows, merge=True),
            counted,
            key_rows(table, job.ctx) if KEYS_COLUMN in table.column_names else None,
        )
