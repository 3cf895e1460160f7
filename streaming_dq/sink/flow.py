"""One micro-batch through the gate: replay check, drift, validation, rows, results, metrics - in that order.

:class:`BatchFlow` walks a batch that the gate (:mod:`~streaming_dq.sink.gate`) has decoded and given a writer
and a router to:

1. ask the committer which tables still lack ``(app id, batch id)``; none: a replay, skipped;
2. compare the batch's schema with the pass table's (:mod:`~streaming_dq.sink.drift`): proceed, merge,
   quarantine the whole batch, or stop;
3. validate with the router inside the run's reference data (ONE aggregation pass: the decision, the counts,
   the event-time range, the window states), stop before writing when a failed aggregate says so, and write
   the pass and quarantine rows;
4. merge the window states, then the committer writes the results rows and, last, the metrics table.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame

from streaming_dq.core.modes import DriftAction, TargetRole
from streaming_dq.core.outcome import BatchOutcome, MaintenanceReport
from streaming_dq.engine.plan import ValidationPlan
from streaming_dq.engine.plan_cache import PlanCache
from streaming_dq.exceptions import ConfigError, GateFailedError, TargetWriteError
from streaming_dq.sink.drift import SchemaDrift, detect_drift, drift_action
from streaming_dq.sink.records import BatchContext, RoutedBatch, failed_aggregates
from streaming_dq.sink.routers.base import BatchJob, Router, fill_missing
from streaming_dq.sink.schemas import arrow_schema_of
from streaming_dq.sink.setup import check_schema
from streaming_dq.tables import AppTransaction, DeltaTarget, TableWriter
from streaming_dq.tables.targets import writing

if TYPE_CHECKING:
    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.sink.batch_history import BatchHistory
    from streaming_dq.sink.commit import BatchCommitter
    from streaming_dq.sink.options import GateOptions
    from streaming_dq.sink.references import ReferenceResolver
    from streaming_dq.sink.tracker import MetricsTracker

logger = logging.getLogger("streaming_dq.gate")

__all__ = ["BatchFlow"]

_DRIFT_WORDS = {
    "merge": "merging into the pass table's schema",
    "quarantine": "quarantining the whole batch",
    "stop": "stopping the stream",
}


class BatchFlow:
    """The walk of one micro-batch (see the module); the gate builds one and calls :meth:`process` per batch."""

    def __init__(
        self,
        options: GateOptions,
        check_set: CheckSet,
        committer: BatchCommitter,
        references: ReferenceResolver,
        batch_history: BatchHistory,
        tracker: MetricsTracker | None,
    ) -> None:
        self.options = options
        self.check_set = check_set
        self.committer = committer
        self.references = references
        self.batch_history = batch_history
        self.tracker = tracker
        self.plans = PlanCache(self._new_plan, capacity=1)
        #: The last maintenance run, until the next batch's results rows carry it (a reader of the results
        #: table, such as the exporter under Spark Connect, learns about maintenance from them).
        self.unreported_maintenance: MaintenanceReport | None = None

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "plans": PlanCache(self._new_plan, capacity=1)}  # Columns stay in the client

    def process(
        self, df: DataFrame, ctx: BatchContext, writer: TableWriter, router: Router, started: float
    ) -> BatchOutcome:
        """Validate, route and commit one batch; a batch every table already has is skipped."""
        name, batch_id, spark = self.options.name, ctx.batch_id, df.sparkSession
        txn = AppTransaction(ctx.app_id, batch_id)
        pending = self.committer.pending(writer, txn)
        metrics_pending = self.committer.metrics_pending(txn)
        if not pending and not metrics_pending:
            logger.info("gate %r: batch %d already committed under %s: skipped", name, batch_id, txn.app_id)
            return BatchOutcome(name, batch_id, "skipped_replay", duration_seconds=time.monotonic() - started)
        malformed = self.options.malformed_column if self.options.malformed_column in df.columns else None
        if self.batch_history.checks:
            with writing(self.committer.targets["results"], batch_id):
                self.batch_history.prepare(writer, ctx.app_id, batch_id)
        pass_target = self.committer.targets["pass"]
        with writing(pass_target, batch_id):
            table_schema = writer.table_schema(pass_target)
        if table_schema is None:  # deleted while the stream runs: refuse rather than recreate it silently
            raise TargetWriteError(pass_target.uri, batch_id, "the pass table no longer exists")
        drift = detect_drift(table_schema, arrow_schema_of(df.schema, drop=[malformed]))
        action = self._drift_action(drift, batch_id)
        job = BatchJob(
            ctx, table_schema, malformed, merge=action == "merge", event_time=self.options.event_time
        )
        rows_pending: dict[TargetRole, DeltaTarget] = {
            r: t for r, t in pending.items() if r in ("pass", "quarantine")
        }
        if action == "quarantine":
            routed = router.quarantine_whole(df, job, drift, writer, rows_pending)
        else:
            filled = fill_missing(df, table_schema, drift.missing) if action == "merge" else df
            routed = self._route(router, filled, job, writer, rows_pending)
        update = None
        if metrics_pending:
            assert self.tracker is not None
            update = self.tracker.update(batch_id, routed.window_states, routed.event_time.max)
        if "results" in pending:  # the per-check results: the batch-complete marker of the three
            duration = time.monotonic() - started
            rows = routed.results(
                ctx, update, duration_seconds=duration, maintenance=self.unreported_maintenance
            )
            with job.described(spark, "write results"):
                self.committer.write_results(writer, rows, txn)
            self.unreported_maintenance = None
        if metrics_pending:
            with job.described(spark, "write metrics"):
                self.committer.commit_metrics(ctx, routed.decision, update)
        self.batch_history.record(ctx.app_id, batch_id, routed.checks)
        return routed.outcome(ctx, "committed", started, update)

    def _drift_action(self, drift: SchemaDrift, batch_id: int) -> DriftAction:
        policy = self.options.schema_drift
        action = drift_action(drift, policy)
        if action == "proceed":
            return action
        log = logger.error if action == "stop" else logger.warning
        log(
            "gate %r: batch %d schema drift (%s), policy %s: %s",
            self.options.name,
            batch_id,
            drift.describe(),
            policy or "default",
            _DRIFT_WORDS[action],
        )
        if action == "stop":
            raise GateFailedError(
                self.options.name, batch_id, f"schema drift: {drift.describe()}", result=drift
            )
        return action

    def _route(
        self,
        router: Router,
        df: DataFrame,
        job: BatchJob,
        writer: TableWriter,
        pending: Mapping[TargetRole, DeltaTarget],
    ) -> RoutedBatch:
        """Validate (with this batch's reference data), stop before writing when the policy says so, then
        write the rows."""
        plan = self._plan(df, job.malformed)
        references = self.references.resolve(df.sparkSession)
        with plan.references(references), router.validate(plan, df, job) as validated:
            if validated.decision.breached and self.options.on_aggregate_failure == "stop":
                checks, failed = failed_aggregates(plan, validated.decision, self.options.fail_values)
                name, batch_id = self.options.name, job.ctx.batch_id
                logger.error(
                    "gate %r: batch %d failed aggregate check(s) %s: stopping", name, batch_id, failed
                )
                raise GateFailedError(name, batch_id, f"aggregate check(s) failed: {failed}", result=checks)
            return validated.write(writer, pending)

    def _plan(self, df: DataFrame, malformed: str | None) -> ValidationPlan:
        event_time = self.options.event_time
        if event_time and event_time not in df.columns:
            raise ConfigError(
                f"event-time column {event_time!r} is not in the batch (columns: {', '.join(df.columns)})",
                field_path="gate.event-time",
            )
        plan, new = self.plans.plan_for(df.schema, malformed)
        if new:  # a new schema (drift): the same one-line answer as at start
            check_schema(self.check_set, event_time, df.schema)
        return plan

    def _new_plan(self, malformed: str | None) -> ValidationPlan:
        return ValidationPlan(
            self.check_set,
            fail_levels=self.options.fail_levels,
            profiles=self.options.profiles,
            event_time=self.options.event_time,
            timezone=self.options.timezone,
            malformed_column=malformed,
        )


def batch_context(name: str, batch_id: int, app_id: str) -> BatchContext:
    """The identity and clock of a batch starting now."""
    return BatchContext(name, batch_id, app_id, datetime.now(UTC))
