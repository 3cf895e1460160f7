"""The decision about one batch: a frozen value both routers render (and the batch engine reports).

:func:`decide` is a pure function: it reads only typed values (:class:`~streaming_dq.engine.values.BatchAggregates`
from one aggregation pass, whichever form computed it, and the classic checks' results from
:mod:`~streaming_dq.engine.classic`) and the plan's checks and regimes. It runs no Spark job, so it is tested
without a JVM (tests/unit/test_decision.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from streaming_dq.core.base_check import BaseAggregateCheck, BaseCheck, BaseRowCheck, ObservableAggregateCheck
from streaming_dq.core.results import AggregateCheckResult
from streaming_dq.core.severity import Severity
from streaming_dq.engine.regime_table import OverrideGroup
from streaming_dq.engine.rules import ErrorEntry
from streaming_dq.engine.values import BatchAggregates, EventTimeStats
from streaming_dq.exceptions import InternalError
from streaming_dq.states import empty_state
from streaming_dq.states.keyed import BatchStates, merge_named

if TYPE_CHECKING:
    from streaming_dq.engine.plan import ValidationPlan

__all__ = ["BatchDecision", "RowCheckOutcome", "aggregate_units", "decide", "judged", "rows_present"]


@dataclass(frozen=True)
class RowCheckOutcome:
    """A row check's verdict over the batch (per override group when profiles split it).

    Without a tolerance the check fails the batch as soon as one row fired; with one (``check.tolerance``) it
    passes while the failing rows stay within it, and ``breach`` is the severity its exceeded tolerance fails
    the batch with (like a failed aggregate of that severity), else None.
    """

    check: BaseRowCheck
    check_type: str
    severity: Severity
    status: str  # passed / failed / skipped
    violations: int
    total: int
    profiles: tuple[str, ...] = ()
    regime: tuple[str, ...] = ()
    regime_mask: int = 0
    breach: Severity | None = None


@dataclass(frozen=True)
class BatchDecision:
    """What one aggregation pass decided about a batch.

    Attributes:
        total: Rows in the batch.
        rows_by_regime: Rows per regime ordinal present.
        failed_by_regime: Rows failed by fail-level row checks, per regime present.
        warned_by_regime: Rows not failed on which a warn-level row check fired, per regime present.
        violations: Rows on which each flag fired (flag 0 is the malformed guard when there is one).
        row_results: The row checks' results, declaration order.
        aggregate_results: The aggregate results, declaration order (several per check when regimes split it).
        breached: Regimes whose rows all fail because a fail-level aggregate failed there.
        agg_errors: Per regime, the failed aggregates every row of that regime carries in ``_dq_errors``.
        states: The batch-scoped observable checks' states per override group present (the metrics table's
            ``batch`` rows).
        event_time: The batch's event-time range.
        checks_by_id: The plan's checks (reports read their wording from them).
        malformed: Rows the source could not parse, or None when the batch has no malformed column.
        window_checks: The window-scoped checks' ids: judged per event-time window by the gate's
            accumulator, across batches, never from one batch (a report says so instead of omitting them).
    """

    total: int
    rows_by_regime: Mapping[int, int]
    failed_by_regime: Mapping[int, int]
    warned_by_regime: Mapping[int, int]
    violations: Mapping[int, int]
    row_results: tuple[RowCheckOutcome, ...]
    aggregate_results: tuple[AggregateCheckResult, ...]
    breached: frozenset[int] = frozenset()
    agg_errors: Mapping[int, tuple[ErrorEntry, ...]] = field(default_factory=dict)
    states: BatchStates = field(default_factory=dict)
    event_time: EventTimeStats = field(default_factory=EventTimeStats)
    checks_by_id: Mapping[str, BaseCheck] = field(default_factory=dict)
    malformed: int | None = None
    window_checks: tuple[str, ...] = ()

    @property
    def warned_regimes(self) -> frozenset[int]:
        """Regimes whose passing rows all carry a warning: a failed aggregate that does not fail rows."""
        return frozenset(r for r, errors in self.agg_errors.items() if errors) - self.breached

    @property
    def passed_records(self) -> int:
        return sum(
            n - self.failed_by_regime.get(r, 0)
            for r, n in self.rows_by_regime.items()
            if r not in self.breached
        )

    @property
    def failed_records(self) -> int:
        return self.total - self.passed_records

    @property
    def row_warning_records(self) -> int:
        """Passed rows on which a warn-level row check fired: what the gate counts as warned rows. A failed
        warning aggregate (a batch warning) is not counted here, though every passed row carries it (#42:
        one batch warning showed every passed row as warned); the batch's checks say it failed."""
        return sum(n for r, n in self.warned_by_regime.items() if r not in self.breached)

    @property
    def warning_records(self) -> int:
        """Passed rows that carry any warning, a batch's included (``warn_df()`` of the batch engine)."""
        warned = 0
        for r, n in self.rows_by_regime.items():
            if r in self.breached:
                continue
            if r in self.warned_regimes:
                warned += n - self.failed_by_regime.get(r, 0)
            else:
                warned += self.warned_by_regime.get(r, 0)
        return warned


def decide(
    plan: ValidationPlan,
    aggregates: BatchAggregates,
    classic: Sequence[tuple[int, AggregateCheckResult]] = (),
) -> BatchDecision:
    """Turn one pass's aggregates (and the classic checks' results) into the batch's verdicts.

    Args:
        plan: The batch's plan.
        aggregates: The pass's values.
        classic: The classic aggregate checks' results with their declaration order
            (:func:`~streaming_dq.engine.classic.classic_results`); required when the plan has classic checks.

    Raises:
        InternalError: The plan has classic checks and ``classic`` holds none of their results.
    """
    rows, present = rows_present(plan, aggregates)
    counts = aggregates.counts
    if plan.classic_checks and not classic:
        raise InternalError("the plan's classic aggregate checks were not evaluated")
    results: list[tuple[int, AggregateCheckResult]] = list(classic)
    for check in plan.observable_checks:
        order = plan.declaration_order[check.check_id]
        for g, group, folded in aggregate_units(plan, check, present, rows):
            states = _unit_states(check, (g, *folded), aggregates.states)
            results.append((order, judged(plan, check, group, folded, states)))
    results.sort(key=lambda t: t[0])
    aggregate_results = tuple(r for _, r in results)
    row_results = _row_results(plan, aggregates, present)
    breached, agg_errors = _aggregate_effects(
        plan, [*_tolerance_breaches(row_results), *aggregate_results], present, sum(rows.values())
    )
    return BatchDecision(
        total=sum(rows.values()),
        rows_by_regime={r: n for r, n in rows.items() if n > 0},
        failed_by_regime={r: counts.failed.get(r, 0) for r in present},
        warned_by_regime={r: counts.warned.get(r, 0) for r in present},
        violations={i: counts.fired_in(i) for i in range(plan.rules.n_flags)},
        row_results=row_results,
        aggregate_results=aggregate_results,
        breached=breached,
        agg_errors=agg_errors,
        states=_present_states(plan, aggregates.states, present),
        event_time=aggregates.event_time,
        checks_by_id={c.check_id: c for c in [*plan.row_checks, *plan.aggregate_checks, *plan.window_checks]},
        malformed=counts.fired_in(0) if plan.malformed_column else None,
        window_checks=tuple(c.check_id for c in plan.window_checks),
    )


def rows_present(plan: ValidationPlan, aggregates: BatchAggregates) -> tuple[dict[int, int], set[int]]:
    """Rows per regime ordinal of the plan, and the ordinals present in the batch."""
    rows = {r: aggregates.counts.rows.get(r, 0) for r in plan.regimes.ordinals}
    return rows, {r for r, n in rows.items() if n > 0}


def _unit_states(
    check: ObservableAggregateCheck, groups: Sequence[int], states: BatchStates
) -> dict[str, Any]:
    """The check's states over its override groups ``groups`` (a unit: a group and those folded into it)."""
    merged: dict[str, Any] | None = None
    for g in groups:  # rows without an event time join the batch's largest regime (merge: empty is neutral)
        found = states.get((check.check_id, g))
        if found is not None:
            merged = dict(found) if merged is None else merge_named(merged, found)
    if merged is not None:
        return merged
    return {name: empty_state(spec.kind) for name, spec in check.state_specs().items()}


def _present_states(plan: ValidationPlan, states: BatchStates, present: set[int]) -> dict[Any, Any]:
    out = {}
    for (check_id, g), named in states.items():
        group = plan.regimes.groups_by_id(check_id)[g]
        if group.verdict.kind != "off" and group.ordinals & present:
            out[(check_id, g)] = dict(named)
    return out


@dataclass(frozen=True)
class _BatchFailure:
    """A failed batch-level verdict: a failed aggregate, or a row check whose tolerance was exceeded."""

    check: str
    check_id: str
    severity: Severity
    regime_mask: int


def _tolerance_breaches(row_results: Sequence[RowCheckOutcome]) -> list[_BatchFailure]:
    return [
        _BatchFailure(r.check.name, r.check.check_id, r.breach, r.regime_mask)
        for r in row_results
        if r.breach is not None
    ]


def _aggregate_effects(
    plan: ValidationPlan,
    results: Sequence[AggregateCheckResult | _BatchFailure],
    present: set[int],
    total: int,
) -> tuple[frozenset[int], dict[int, tuple[ErrorEntry, ...]]]:
    """Which regimes fail whole (breached) and which failed batch verdicts each regime's rows carry."""
    breached: set[int] = set()
    errors: dict[int, list[ErrorEntry]] = {}
    for res in results:
        if isinstance(res, AggregateCheckResult) and res.status != "failed":
            continue
        for r in _ordinals_of(res.regime_mask):
            if r not in present and total > 0:
                continue
            errors.setdefault(r, []).append(ErrorEntry(res.check, res.check_id, res.severity.value))
            if res.severity in plan.fail_levels:
                breached.add(r)
    return frozenset(breached), {r: tuple(e) for r, e in errors.items()}


def aggregate_units(
    plan: ValidationPlan, check: BaseAggregateCheck, present: set[int], rows: Mapping[int, int]
) -> list[tuple[int, OverrideGroup, tuple[int, ...]]]:
    """(group index, group, groups folded into it) to judge: the NULL-event-time group joins the largest.

    Aggregates are judged per regime present; rows without an event time have no date, so rather than
    judging them as a population of their own (a handful of rows failing every volume check), their states
    are merged into the group of the regime with the most rows in the batch.
    """
    shown = _reported_groups(plan, check, present)
    null = plan.regimes.null_ordinal
    nulls = [g for g, grp in shown if null is not None and grp.ordinals == {null}]
    others = [(g, grp) for g, grp in shown if g not in nulls]
    if not nulls or not others:
        return [(g, grp, ()) for g, grp in shown]
    largest = max(others, key=lambda t: sum(rows.get(r, 0) for r in t[1].ordinals))[0]
    return [(g, grp, tuple(nulls) if g == largest else ()) for g, grp in others]


def _reported_groups(plan: ValidationPlan, check: BaseCheck, present: set[int]) -> list[tuple[int, Any]]:
    groups = list(enumerate(plan.regimes.groups(check)))
    shown = [(g, grp) for g, grp in groups if grp.ordinals & present]
    if shown:
        return shown
    base = [(g, grp) for g, grp in groups if 0 in grp.ordinals]
    return base or groups[:1]


def judged(
    plan: ValidationPlan,
    check: BaseAggregateCheck,
    group: OverrideGroup,
    folded: tuple[int, ...],
    values: Any,
) -> AggregateCheckResult:
    """The check's result for one unit (:func:`aggregate_units`): skipped where its profiles turn it off, else
    judged from ``values`` - the unit's states (:meth:`ObservableAggregateCheck.evaluate_states`), or its rows
    as a DataFrame for a classic check (``evaluate_frame``)."""
    if group.verdict.kind == "off":
        skipped = check.skipped(
            severity=group.verdict.severity, profiles=group.profiles, regime=group.regime_names
        )
        return replace(skipped, regime_mask=group.key)
    if isinstance(check, ObservableAggregateCheck):
        ev = check.evaluate_states(values, multiplier=group.multiplier)
    else:
        ev = check.evaluate_frame(values, multiplier=group.multiplier)
    groups = plan.regimes.groups(check)
    key = group.key
    for extra in folded:
        key |= groups[extra].key
    wrapped = check.wrap(
        ev,
        severity=group.verdict.severity,
        multiplier=group.multiplier,
        profiles=group.profiles,
        regime=group.regime_names,
    )
    return replace(wrapped, regime_mask=key)


def _row_results(
    plan: ValidationPlan, aggregates: BatchAggregates, present: set[int]
) -> tuple[RowCheckOutcome, ...]:
    out = []
    offset = 1 if plan.malformed_column else 0
    for j, check in enumerate(plan.row_checks):
        i = j + offset
        for _g, group in _reported_groups(plan, check, present):
            total = sum(aggregates.counts.rows.get(r, 0) for r in group.ordinals)
            breach = None
            if group.verdict.kind == "off":
                violations, status = 0, "skipped"
            else:
                violations = aggregates.counts.fired_in(i, group.ordinals)
                status = "failed" if violations else "passed"
                if check.tolerance is not None:
                    exceeded = check.tolerance.exceeded(violations, total)
                    status = "failed" if exceeded else "passed"
                    breach = (check.tolerance.severity or group.verdict.severity) if exceeded else None
            profiles, regime = plan.regimes.labels(check.check_id, group.ordinals & present)
            out.append(
                RowCheckOutcome(
                    check=check,
                    check_type=check.check_type,
                    severity=group.verdict.severity,
                    status=status,
                    violations=violations,
                    total=total,
                    profiles=profiles,
                    regime=regime,
                    regime_mask=group.key,
                    breach=breach,
                )
            )
    return tuple(out)


def _ordinals_of(key: int) -> list[int]:
    return [i for i in range(key.bit_length()) if key >> i & 1]
