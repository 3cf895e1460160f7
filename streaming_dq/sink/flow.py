"""One micro-batch through the gate: replay check, drift, validation, rows, results, metrics - in that order.

:class:`BatchFlow` walks a batch that the gate (:mod:`~streaming_dq.sink.gate`) has decoded and given a writer
and a router to:

1. ask the committer which tables still lack ``(app id, batch id)``; none: a replay, skipped;
2. compare the batch's schema with the pass table's (:mod:`~streaming_dq.sink.drift`): proceed, merge,
   quarantine the whole batch, or stop;
3. with the committer's participants prepared (the anomaly history given to the run as a value), validate
   with the router inside the run's reference data (ONE aggregation pass: the decision, the counts, the
   event-time range, the window states), and stop before writing when a failed aggregate says so;
4. hand the router's split rows to the committer (:mod:`~streaming_dq.sink.commit`), which writes the whole
   batch in its one order: pass, quarantine, results, the metrics table last.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame

from streaming_dq.core.modes import DriftAction
from streaming_dq.core.outcome import BatchOutcome, MaintenanceReport, SchemaMessages
from streaming_dq.engine.plan import ValidationPlan
from streaming_dq.engine.plan_cache import PlanCache
from streaming_dq.exceptions import GateFailedError, TargetWriteError
from streaming_dq.sink.drift import SchemaDrift, detect_drift, drift_action
from streaming_dq.sink.records import BatchContext, failed_aggregates
from streaming_dq.sink.routers.base import BatchJob, Router, ValidatedBatch, fill_missing
from streaming_dq.sink.schemas import arrow_schema_of
from streaming_dq.tables import AppTransaction, TableWriter
from streaming_dq.tables.targets import writing

if TYPE_CHECKING:
    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.sink.commit import BatchCommitter
    from streaming_dq.sink.options import GateOptions
    from streaming_dq.sink.references import ReferenceResolver
    from streaming_dq.sink.seen_keys import SeenKeys

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
        seen_keys: SeenKeys | None = None,
    ) -> None:
        self.options = options
        self.check_set = check_set
        self.committer = committer
        self.references = references
        self.seen_keys = seen_keys
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
        name, batch_id = self.options.name, ctx.batch_id
        committer = self.committer
        pending = committer.pending(writer, AppTransaction(ctx.app_id, batch_id))
        if not pending:
            logger.info("gate %r: batch %d already committed under %s: skipped", name, batch_id, ctx.app_id)
            return BatchOutcome(name, batch_id, "skipped_replay", duration_seconds=time.monotonic() - started)
        malformed = self.options.malformed_column if self.options.malformed_column in df.columns else None
        pass_target = committer.targets["pass"]
        with writing(pass_target, batch_id):
            table_schema = writer.table_schema(pass_target)
        if table_schema is None:  # deleted while the stream runs: refuse rather than recreate it silently
            raise TargetWriteError(pass_target.uri, batch_id, "the pass table no longer exists")
        drift = detect_drift(table_schema, arrow_schema_of(df.schema, drop=[malformed]))
        action = self._drift_action(drift, batch_id)
        job = BatchJob(
            ctx, table_schema, malformed, merge=action == "merge", event_time=self.options.event_time
        )
        with (
            committer.prepared(writer, ctx),
            self._validated(router, df, job, drift, action, writer) as validated,
        ):
            outcome = committer.commit_batch(
                writer,
                df.sparkSession,
                ctx,
                pending,
                validated.split_rows(),
                started=started,
                maintenance=self.unreported_maintenance if "results" in pending.tables else None,
            )
        if "results" in pending.tables:
            self.unreported_maintenance = None
        return outcome

    def _validated(
        self,
        router: Router,
        df: DataFrame,
        job: BatchJob,
        drift: SchemaDrift,
        action: DriftAction,
        writer: TableWriter,
    ) -> ValidatedBatch:
        """The batch decided by the router (or quarantined whole under schema drift); stops before anything is
        written when a failed aggregate says so."""
        if action == "quarantine":
            return router.quarantine_whole(df, job, drift)
        if action == "merge":
            df = fill_missing(df, job.table_schema, drift.missing)
        if self.seen_keys and router.judges_keys:  # on the driver, against its index of the keys table
            df, deferred = self.seen_keys.keyed(df, writer, job.ctx)
            job = replace(job, deferred=deferred)
        elif self.seen_keys:  # each row's earlier occurrence, found in Spark (the keys stay on the executors)
            df = self.seen_keys.annotate(df, writer, job.ctx)
        plan = self.plans.plan_for(df, job.malformed)  # a new schema (a drift): held against the checks first
        references = self.references.resolve(df.sparkSession)
        with plan.references(references):
            validated = router.validate(plan, df, job)
        decision = validated.decision
        if decision is not None and decision.breached and self.options.on_aggregate_failure == "stop":
            validated.close()
            checks, failed = failed_aggregates(plan, decision, self.options.fail_values)
            name, batch_id = self.options.name, job.ctx.batch_id
            logger.error("gate %r: batch %d failed aggregate check(s) %s: stopping", name, batch_id, failed)
            raise GateFailedError(name, batch_id, f"aggregate check(s) failed: {failed}", result=checks)
        return validated

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

    def _new_plan(self, malformed: str | None) -> ValidationPlan:
        return ValidationPlan(
            self.check_set,
            fail_levels=self.options.fail_levels,
            profiles=self.options.profiles,
            event_time=self.options.event_time,
            timezone=self.options.timezone,
            malformed_column=malformed,
            strict_types=True,  # the one-line answer gate.start gives, for a drifted schema too
        )


def batch_context(
    name: str, batch_id: int, app_id: str, schemas: tuple[SchemaMessages, ...] = ()
) -> BatchContext:
    """The identity and clock of a batch starting now (``schemas``: what its source's decoder counted)."""
    return BatchContext(name, batch_id, app_id, datetime.now(UTC), schemas)
