"""What one batch becomes: a frozen :class:`RoutedBatch`, the results table's rows and the :class:`BatchOutcome`.

Pure pyarrow and plain values: nothing here runs Spark. A router validates a batch (or quarantines it whole
under schema drift), writes its rows and reports here what it did; the quarantine shaping in Arrow is the
driver router's (the Spark router shapes the same columns as Spark expressions).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

import pyarrow as pa
import pyarrow.compute as pc

from streaming_dq.core.outcome import (
    BatchOutcome,
    BatchStatus,
    CheckOutcome,
    CheckStatus,
    SchemaMessages,
    WindowOutcome,
)
from streaming_dq.core.outcome_rows import encode_outcome, results_table, window_row
from streaming_dq.core.results import AggregateCheckResult
from streaming_dq.engine.decision import BatchDecision, RowCheckOutcome
from streaming_dq.engine.plan import MALFORMED_CHECK_ID, ValidationPlan
from streaming_dq.engine.rules import ERROR_TYPE, ErrorEntry
from streaming_dq.engine.values import EventTimeStats
from streaming_dq.metrics.window_update import WindowUpdate
from streaming_dq.sink.schemas import (
    BATCH_ID_COLUMN,
    ERRORS_COLUMN,
    GATE_COLUMN,
    RAW_COLUMN,
    UTC_TIMESTAMP,
    VALIDATION_TS_COLUMN,
    conform,
    quarantine_schema,
)
from streaming_dq.states.keyed import WindowStates

if TYPE_CHECKING:
    from streaming_dq.core.outcome import MaintenanceReport


@dataclass(frozen=True)
class BatchContext:
    """Identity of the batch being processed: gate, batch id, idempotency app id and validation time; and
    what its source's decoder counted (messages per schema id of a registry-framed source)."""

    gate: str
    batch_id: int
    app_id: str
    validation_ts: datetime
    schemas: tuple[SchemaMessages, ...] = ()


@dataclass(frozen=True)
class RoutedBatch:
    """What a router did with one batch: where its rows went, the checks' verdicts, the windows' inputs.

    Attributes:
        rows_in: Rows of the batch.
        rows_passed: Rows for the pass table (warned rows included).
        rows_quarantined: Rows for the quarantine table.
        checks: Every check's verdict, declaration order.
        rows_warned: Passed rows that carry a warning.
        rows_malformed: Rows the source could not parse.
        event_time: The batch's event-time range.
        active_profiles: Profiles active for at least one row.
        breached: A fail-level aggregate check failed.
        decision: The engine's decision (None for a batch quarantined whole).
        window_states: The window-scoped checks' states per window (None without any).
    """

    rows_in: int
    rows_passed: int
    rows_quarantined: int
    checks: tuple[CheckOutcome, ...]
    rows_warned: int = 0
    rows_malformed: int = 0
    event_time: EventTimeStats = field(default_factory=EventTimeStats)
    active_profiles: tuple[str, ...] = ()
    breached: bool = False
    decision: BatchDecision | None = None
    window_states: WindowStates | None = None

    @classmethod
    def decided(
        cls,
        plan: ValidationPlan,
        decision: BatchDecision,
        *,
        rows_passed: int,
        rows_quarantined: int,
        rows_warned: int,
        window_states: WindowStates | None,
    ) -> RoutedBatch:
        """A validated batch, whichever router wrote it."""
        return cls(
            rows_in=decision.total,
            rows_passed=rows_passed,
            rows_quarantined=rows_quarantined,
            checks=check_outcomes(plan, decision),
            rows_warned=rows_warned,
            rows_malformed=decision.violations.get(0, 0) if plan.malformed_column else 0,
            event_time=decision.event_time,
            active_profiles=active_profiles(plan, decision),
            breached=bool(decision.breached),
            decision=decision,
            window_states=window_states,
        )

    def results(
        self,
        ctx: BatchContext,
        update: WindowUpdate | None = None,
        *,
        duration_seconds: float | None = None,
        maintenance: MaintenanceReport | None = None,
    ) -> pa.Table:
        """The results table's rows (:func:`~streaming_dq.core.outcome_rows.encode_outcome`): the batch's own
        row, one per check outcome, one per window verdict, and one per table of ``maintenance`` (the run after
        the previous batch)."""
        outcome = self._outcome(ctx, "committed", duration_seconds or 0.0, update)
        rows = encode_outcome(
            outcome, app_id=ctx.app_id, validation_ts=ctx.validation_ts, maintenance=maintenance
        )
        return results_table(rows)

    def outcome(
        self, ctx: BatchContext, status: BatchStatus, started: float, update: WindowUpdate | None = None
    ) -> BatchOutcome:
        """The :class:`BatchOutcome` of this batch once its commits are done."""
        return self._outcome(ctx, status, time.monotonic() - started, update)

    def _outcome(
        self, ctx: BatchContext, status: BatchStatus, duration: float, update: WindowUpdate | None
    ) -> BatchOutcome:
        return BatchOutcome(
            gate=ctx.gate,
            batch_id=ctx.batch_id,
            status=status,
            rows_in=self.rows_in,
            rows_passed=self.rows_passed,
            rows_quarantined=self.rows_quarantined,
            rows_warned=self.rows_warned,
            rows_malformed=self.rows_malformed,
            rows_null_event_time=self.event_time.nulls,
            duration_seconds=duration,
            committed_at=time.time(),
            min_event_time=self.event_time.min,
            max_event_time=self.event_time.max,
            active_profiles=self.active_profiles,
            checks=self.checks,
            windows=update.outcomes if update is not None else (),
            rows_late=update.late_rows if update is not None else 0,
            schemas=ctx.schemas,
        )


def window_results(ctx: BatchContext, windows: Sequence[WindowOutcome]) -> pa.Table:
    """The results rows of window verdicts given outside a batch (the end of the input)."""
    head = {"gate": ctx.gate, "batch_id": ctx.batch_id, "app_id": ctx.app_id}
    times = {"event_time_min": None, "event_time_max": None, "validation_ts": ctx.validation_ts}
    return results_table(window_row(head, w, times) for w in windows)


def quarantine_rows(
    rows: pa.Table,
    errors: pa.Array | pa.ChunkedArray,
    raw: pa.Array | pa.ChunkedArray | None,
    ctx: BatchContext,
    pass_schema: pa.Schema,
) -> pa.Table:
    """Failed rows shaped for the quarantine table: input columns, ``_dq_errors``, ``_dq_*`` stamps, raw text."""
    n = rows.num_rows
    stamped = rows.drop_columns([c for c in (ERRORS_COLUMN, RAW_COLUMN) if c in rows.column_names])
    stamped = (
        stamped.append_column(ERRORS_COLUMN, errors)
        .append_column(VALIDATION_TS_COLUMN, pa.array([ctx.validation_ts] * n, UTC_TIMESTAMP))
        .append_column(BATCH_ID_COLUMN, pa.array([ctx.batch_id] * n, pa.int64()))
        .append_column(GATE_COLUMN, pa.array([ctx.gate] * n, pa.string()))
        .append_column(RAW_COLUMN, raw if raw is not None else pa.nulls(n, pa.string()))
    )
    return conform(stamped, quarantine_schema(pass_schema), keep_extra=True)


def error_entries(n: int, entry: ErrorEntry) -> pa.Array:
    """The same one-entry ``_dq_errors`` list for ``n`` rows."""
    return pa.array([[entry.as_dict()]] * n, ERROR_TYPE)


def failed_aggregates(
    plan: ValidationPlan, outcome: BatchDecision, fail_values: frozenset[str]
) -> tuple[tuple[CheckOutcome, ...], list[str]]:
    """Every check's verdict, and the ids of the batch-scoped aggregate checks that failed at a fail level."""
    checks = check_outcomes(plan, outcome)
    failed = [
        c.check_id
        for c in checks
        if c.kind == "aggregate" and c.status == "failed" and c.severity in fail_values
    ]
    return checks, failed


def check_outcomes(plan: ValidationPlan, outcome: BatchDecision) -> tuple[CheckOutcome, ...]:
    """Every check's verdict in declaration order (the malformed-record guard first, when active)."""
    ordered: list[tuple[int, CheckOutcome]] = []
    if plan.malformed_column:
        malformed = outcome.violations.get(0, 0)
        ordered.append(
            (
                -1,
                CheckOutcome(
                    check_id=MALFORMED_CHECK_ID,
                    check_type=MALFORMED_CHECK_ID,
                    kind="row",
                    severity="critical",
                    status="failed" if malformed else "passed",
                    violations=malformed,
                ),
            )
        )
    for r in outcome.row_results:
        ordered.append((plan.declaration_order[r.check.check_id], _row_outcome(r)))
    for a in outcome.aggregate_results:
        ordered.append((plan.declaration_order[a.check_id], _aggregate_outcome(a)))
    ordered.sort(key=lambda t: t[0])
    return tuple(c for _, c in ordered)


def _row_outcome(r: RowCheckOutcome) -> CheckOutcome:
    return CheckOutcome(
        check_id=r.check.check_id,
        check_type=r.check_type,
        kind="row",
        severity=r.severity.value,
        status=cast(CheckStatus, r.status),
        violations=r.violations,
        profiles=tuple(r.profiles),
        regime=tuple(r.regime),
    )


def _aggregate_outcome(a: AggregateCheckResult) -> CheckOutcome:
    return CheckOutcome(
        check_id=a.check_id,
        check_type=a.check_type,
        kind="aggregate",
        severity=a.severity.value,
        status=a.status,
        raw_value=_number(a.metrics.get("value")),
        adjusted_value=_number(a.metrics.get("adjusted")),
        multiplier=float(a.multiplier),
        profiles=tuple(a.profiles),
        regime=tuple(a.regime),
        expected_value=_number(a.metrics.get("expected")),
        band_low=_number(a.metrics.get("band_low")),
        band_high=_number(a.metrics.get("band_high")),
        score=a.metrics.get("score"),  # inf for a value off a point band
        history=a.metrics.get("history"),
        reason=a.metrics.get("reason"),
    )


def active_profiles(plan: ValidationPlan, outcome: BatchDecision) -> tuple[str, ...]:
    """Names of the profiles active for at least one row of the batch."""
    names = (n for r in sorted(outcome.rows_by_regime) for n in plan.regimes.names(r))
    return tuple(dict.fromkeys(names))


def event_time_of(table: pa.Table, column: str | None, malformed: str | None) -> EventTimeStats:
    """Event-time range and NULL count computed in Arrow (for batches that skip the engine)."""
    if column is None or column not in table.column_names:
        return EventTimeStats()
    values = table.column(column)
    if not pa.types.is_timestamp(values.type):
        return EventTimeStats()
    values = values.cast(UTC_TIMESTAMP)
    bounds = pc.min_max(values)
    missing = pc.is_null(values)
    if malformed is not None and malformed in table.column_names:
        missing = pc.and_(missing, pc.is_null(table.column(malformed)))
    return EventTimeStats(bounds["min"].as_py(), bounds["max"].as_py(), int(pc.sum(missing).as_py() or 0))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
