"""The validation plan: row checks as lazy flag columns, every aggregate metric in one aggregation.

A plan is built once per run from a CheckSet, the fail levels and the profiles. It knows, for every check and
every *regime* (a set of profiles active together on some date), whether the check is enabled, with which
severity and multiplier. It then provides:

* :meth:`ValidationPlan.annotate`: the input plus one boolean flag per row check (True = fired) and, with
  profiles, the row's regime. Pure and lazy.
* :meth:`ValidationPlan.aggregate_columns`: every aggregate the run needs (row counts per regime, violation
  counts per row check, the states of every observable check per override group) for ONE ``agg`` or
  ``observe``.
* :meth:`ValidationPlan.decide`: turns the resolved aggregate values into a :class:`PlanOutcome`.

Two executors use it: :class:`~streaming_dq.engine.batch.BatchDQEngine` (a lazy annotated DataFrame) and the
streaming gate (``observe`` + ``toArrow`` and a split in Arrow).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import reduce
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.core.base_check import (
    BaseAggregateCheck,
    BaseCheck,
    BaseRowCheck,
    IntegrityCheckMixin,
    ObservableAggregateCheck,
)
from streaming_dq.core.results import AggregateCheckResult
from streaming_dq.core.severity import Severity
from streaming_dq.engine.regimes import REGIME_COLUMN, RegimeTable, Verdict
from streaming_dq.exceptions import CheckEvaluationError, MissingReferenceDatasetError

if TYPE_CHECKING:
    from streaming_dq.config.check_set import CheckSet

BITS_PER_WORD = 62
MALFORMED_CHECK_ID = "malformed-record"


def flag_column(i: int) -> str:
    return f"__dq_f{i}"


def bits_column(word: int) -> str:
    return f"__dq_bits{word}"


@dataclass(frozen=True)
class RowCheckOutcome:
    """A row check's verdict over the run (per regime group when profiles split it)."""

    check: BaseCheck
    check_type: str
    severity: Severity
    status: str  # passed / failed / skipped
    violations: int
    total: int
    profiles: tuple[str, ...] = ()
    regime: tuple[str, ...] = ()


@dataclass
class PlanOutcome:
    """What one aggregation pass decided.

    Attributes:
        total: Rows in the run.
        rows_by_regime: Rows per regime ordinal (only regimes present).
        row_failed_by_regime: Rows failed by fail-level row checks, per regime.
        row_warned_by_regime: Rows not failed that fired a non-fail-level row check, per regime.
        violations: Fired count per row check index.
        row_results: Reportable per-row-check results (declaration order).
        aggregate_results: Aggregate results in declaration order (several per check when regimes split it).
        breached: Regime ordinals whose rows all fail because a fail-level aggregate failed there.
        agg_errors: Per regime ordinal, the (check, check-id, severity) of failed aggregates to append.
    """

    total: int
    rows_by_regime: dict[int, int]
    row_failed_by_regime: dict[int, int]
    row_warned_by_regime: dict[int, int]
    violations: dict[int, int]
    row_results: list[RowCheckOutcome]
    aggregate_results: list[AggregateCheckResult]
    breached: set[int] = field(default_factory=set)
    agg_errors: dict[int, list[tuple[str, str, str]]] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    checks_by_id: dict[str, BaseCheck] = field(default_factory=dict)

    @property
    def passed_records(self) -> int:
        return sum(
            n - self.row_failed_by_regime.get(r, 0)
            for r, n in self.rows_by_regime.items()
            if r not in self.breached
        )

    @property
    def failed_records(self) -> int:
        return self.total - self.passed_records

    @property
    def warning_records(self) -> int:
        warned = 0
        for r, n in self.rows_by_regime.items():
            if r in self.breached:
                continue
            if self.agg_errors.get(r):
                warned += n - self.row_failed_by_regime.get(r, 0)
            else:
                warned += self.row_warned_by_regime.get(r, 0)
        return warned


class ValidationPlan:
    """Everything one run needs to know about its checks, computed once.

    Args:
        check_set: The checks.
        fail_levels: Severities that fail a row (default: critical).
        profiles: Profiles; with ``event_time`` each row is judged under those active on its event date.
        event_time: Name of the event-time (timestamp) column.
        timezone: Zone of the calendar dates profiles are defined in.
        reference_datasets: Named DataFrames for integrity checks.
        malformed_column: Name of a column holding the raw text of malformed records (e.g. ``_corrupt_record``);
            a non-NULL value fails the row with a ``malformed-record`` error and masks every other check.
    """

    def __init__(
        self,
        check_set: CheckSet | Sequence[BaseCheck],
        *,
        fail_levels: Sequence[Severity | str] = (Severity.CRITICAL,),
        profiles: Sequence[Any] = (),
        event_time: str | None = None,
        timezone: str = "UTC",
        reference_datasets: Mapping[str, DataFrame] | None = None,
        malformed_column: str | None = None,
    ) -> None:
        from streaming_dq.core.severity import normalize_severity

        checks = list(check_set)
        self.fail_levels = frozenset(normalize_severity(s) for s in fail_levels)
        self.event_time = event_time
        self.timezone = timezone
        self.malformed_column = malformed_column
        self.row_checks: list[BaseRowCheck] = [c for c in checks if isinstance(c, BaseRowCheck)]
        aggregates = [c for c in checks if isinstance(c, BaseAggregateCheck)]
        #: Window-scoped checks are judged per event-time window by the gate's accumulator, not per batch.
        self.window_checks: list[ObservableAggregateCheck] = [
            c for c in aggregates if isinstance(c, ObservableAggregateCheck) and c.scope is not None
        ]
        self.aggregate_checks: list[BaseAggregateCheck] = [
            c for c in aggregates if c not in self.window_checks
        ]
        self.declaration_order = {c.check_id: i for i, c in enumerate(checks)}
        self.inject_reference_datasets(reference_datasets)
        self.regimes = RegimeTable(checks, profiles if event_time else (), self.fail_levels)
        self.n_words = max(1, -(-self._n_flags // BITS_PER_WORD))
        # Columns are unresolved expressions, valid for any DataFrame with the same schema: a plan kept
        # across micro-batches (the gate's) builds them once instead of through py4j on every batch.
        self._built: dict[Hashable, Any] = {}
        #: State alias prefix -> the prefix of an identical state computed for an earlier check.
        self._shared: dict[str, str] = {}

    def memo(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """``build()``, computed on the first call for ``key`` and reused afterwards."""
        if key not in self._built:
            self._built[key] = build()
        return self._built[key]

    def inject_reference_datasets(self, reference_datasets: Mapping[str, DataFrame] | None) -> None:
        """Give the integrity checks this batch's reference data (they join it per batch, nothing is cached)."""
        for c in [*self.row_checks, *self.aggregate_checks]:
            if isinstance(c, IntegrityCheckMixin):
                c.inject_reference_datasets(reference_datasets)

    # -- row phase -------------------------------------------------------------------------------------------

    @property
    def _n_flags(self) -> int:
        return len(self.row_checks) + (1 if self.malformed_column else 0)

    @property
    def flag_checks(self) -> list[tuple[str, str, Severity]]:
        """(check name, check-id, base severity) per flag index (the malformed guard first, when present)."""
        out: list[tuple[str, str, Severity]] = []
        if self.malformed_column:
            out.append(("MalformedRecord", MALFORMED_CHECK_ID, Severity.CRITICAL))
        out.extend((c.name, c.check_id, c.severity) for c in self.row_checks)
        return out

    def _flag_verdicts(self, i: int) -> dict[int, Verdict]:
        """Per regime ordinal, how flag ``i`` counts: ``off``, ``fail`` or ``warn`` (+ severity)."""
        if self.malformed_column:
            if i == 0:
                return {r: Verdict("fail", Severity.CRITICAL) for r in self.regimes.ordinals}
            return self.regimes.verdicts(self.row_checks[i - 1])
        return self.regimes.verdicts(self.row_checks[i])

    def annotate(self, df: DataFrame) -> DataFrame:
        """Add one boolean flag column per row check (True = fired and enabled) and the regime ordinal.

        Checks that only provide a condition are added in ONE projection (analysis cost stays linear in the
        number of checks); checks that transform the frame (joins, windows) go through their ``validate``.
        The condition-only flags are built once per input schema and reused for every later batch.
        """
        key = _schema_key(df)
        self.memo(("columns-checked", key), lambda: self._check_columns(df))
        conditions, transforming = self.memo(("conditions", key), lambda: self._conditions(df))
        out = df
        if self.regimes.split:
            out = out.withColumn(
                REGIME_COLUMN,
                self.memo("regime", lambda: self.regimes.ordinal_column(self.event_time, self.timezone)),
            )
        flags = dict(conditions)
        staged: list[str] = []
        for i in transforming:
            out = self._validated(self.row_checks[i - self._offset], out, i)
            staged.append(f"__dq_raw{i}")
            flags[flag_column(i)] = self._guarded(F.col(f"__dq_raw{i}"), i)
        if transforming:  # keep the flags in index order (the bitmask reads them by name, order is cosmetic)
            flags = {flag_column(i): flags[flag_column(i)] for i in range(self._n_flags)}
        out = self._with_flags(out, flags) if flags else out
        return out.drop(*staged) if staged else out

    @property
    def _offset(self) -> int:
        return 1 if self.malformed_column else 0

    def _conditions(self, df: DataFrame) -> tuple[dict[str, Column], list[int]]:
        """Flag columns of the condition-only checks, and the flag indices of checks that need ``validate``."""
        flags: dict[str, Column] = {}
        if self.malformed_column:
            flags[flag_column(0)] = F.col(self.malformed_column).isNotNull()
        transforming: list[int] = []
        for j, check in enumerate(self.row_checks):
            i = j + self._offset
            if self._enabled(i) is False:
                flags[flag_column(i)] = F.lit(False)
            elif type(check).validate is not BaseRowCheck.validate:
                transforming.append(i)
            else:
                flags[flag_column(i)] = self._guarded(self._condition(check, df), i)
        return flags, transforming

    def _enabled(self, i: int) -> Column | bool:
        return self.regimes.membership({r for r, v in self._flag_verdicts(i).items() if v.kind != "off"})

    def _guarded(self, cond: Column, i: int) -> Column:
        """``cond`` masked by the malformed-record guard and restricted to the regimes the check is on in."""
        if self.malformed_column:
            cond = cond & F.col(self.malformed_column).isNull()
        enabled = self._enabled(i)
        return cond if enabled is True else cond & enabled  # type: ignore[operator]

    def _with_flags(self, df: DataFrame, flags: dict[str, Column]) -> DataFrame:
        """Add every flag in one projection; if Spark refuses it, name the check whose condition is wrong."""
        try:
            return df.withColumns(flags)
        except Exception as exc:
            ids = {flag_column(i): check_id for i, (_, check_id, _) in enumerate(self.flag_checks)}
            for name, cond in flags.items():
                try:
                    df.withColumns({name: cond})
                except Exception as culprit:
                    raise CheckEvaluationError(
                        ids[name], f"cannot build its condition: {culprit}"
                    ) from culprit
            raise CheckEvaluationError("?", f"cannot build the row checks: {exc}") from exc

    @staticmethod
    def _condition(check: BaseRowCheck, df: DataFrame) -> Column:
        """The check's never-NULL failure condition."""
        try:
            return F.coalesce(check.failure_condition(df), F.lit(False))
        except MissingReferenceDatasetError:
            raise
        except Exception as exc:
            raise CheckEvaluationError(check.check_id, f"cannot build its condition: {exc}") from exc

    @staticmethod
    def _validated(check: BaseRowCheck, df: DataFrame, i: int) -> DataFrame:
        """``df`` with the check's verdict as ``__dq_raw{i}``, from its own ``validate`` (joins, windows)."""
        try:
            return check.validate(df, column=f"__dq_raw{i}")
        except MissingReferenceDatasetError:
            raise
        except Exception as exc:
            raise CheckEvaluationError(check.check_id, f"cannot build its condition: {exc}") from exc

    def _check_columns(self, df: DataFrame) -> None:
        names = set(df.columns)
        for check in [*self.row_checks, *self.aggregate_checks, *self.window_checks]:
            missing = [c for c in _referenced_columns(check) if c not in names]
            if missing:
                raise CheckEvaluationError(
                    check.check_id,
                    f"column(s) {', '.join(missing)} not in the data (columns: {', '.join(df.columns)})",
                )

    def _regime_in(self, ordinals: set[int] | frozenset[int]) -> Column | bool:
        return self.regimes.membership(ordinals)

    def row_fail_column(self) -> Column:
        """True when a fail-level row check fired for the row (under the row's regime)."""
        return self.memo("row-fail", lambda: self._any_flag("fail"))  # type: ignore[no-any-return]

    def row_warn_column(self) -> Column:
        """True when a non-fail-level row check fired for the row."""
        return self.memo("row-warn", lambda: self._any_flag("warn"))  # type: ignore[no-any-return]

    def _any_flag(self, kind: str) -> Column:
        terms: list[Column] = []
        for i in range(self._n_flags):
            where = self._regime_in({r for r, v in self._flag_verdicts(i).items() if v.kind == kind})
            if where is False:
                continue
            terms.append(F.col(flag_column(i)) if where is True else F.col(flag_column(i)) & where)
        return reduce(lambda a, b: a | b, terms) if terms else F.lit(False)

    def collected_columns(self, input_columns: Sequence[str]) -> list[Column]:
        """What the gate collects of :meth:`annotate`'s output: the input columns, the flags, the regime."""

        def build() -> list[Column]:
            cols = [F.col(f"`{c}`") for c in input_columns]
            cols += [F.col(flag_column(i)) for i in range(self._n_flags)]
            if self.regimes.split:
                cols.append(F.col(REGIME_COLUMN))
            return cols

        return list(self.memo(("collected", tuple(input_columns)), build))

    def inlinable(self, df: DataFrame) -> bool:
        """Whether every row check of ``df`` is a plain condition (no join or window needs its ``validate``).

        Raises:
            CheckEvaluationError: A check names a column ``df`` lacks.
        """
        key = _schema_key(df)
        self.memo(("columns-checked", key), lambda: self._check_columns(df))
        return not self.memo(("conditions", key), lambda: self._conditions(df))[1]

    def with_regime(self, df: DataFrame) -> DataFrame:
        """``df`` plus the regime ordinal column when profiles split the batch (else ``df`` itself)."""
        if not self.regimes.split:
            return df
        regime = self.memo("regime", lambda: self.regimes.ordinal_column(self.event_time, self.timezone))
        return df.withColumn(REGIME_COLUMN, regime)

    def inline_columns(self, df: DataFrame) -> list[Column]:
        """For :meth:`with_regime`'s output: the input columns, each check's flag computed from its condition
        in this one projection, and the regime. Only when :meth:`inlinable`.
        """
        key = _schema_key(df)

        def build() -> list[Column]:
            conditions = self.memo(("conditions", key), lambda: self._conditions(df))[0]
            cols = [F.col(f"`{c}`") for c in df.columns]
            cols += [conditions[flag_column(i)].alias(flag_column(i)) for i in range(self._n_flags)]
            if self.regimes.split:
                cols.append(F.col(REGIME_COLUMN))
            return cols

        return list(self.memo(("inline", key), build))

    def error_structs(self) -> list[Column]:
        """``_dq_errors`` entries of row checks: a struct when the flag fired, else NULL (filtered later)."""
        return list(self.memo("error-structs", self._error_structs))

    def _error_structs(self) -> list[Column]:
        out = []
        for i, (name, check_id, _) in enumerate(self.flag_checks):
            verdicts = self._flag_verdicts(i)
            sev = self.regimes.value_column(
                {r: v.severity.value for r, v in verdicts.items() if v.kind != "off"}, default=None
            )
            out.append(
                F.when(
                    F.col(flag_column(i)),
                    F.struct(
                        F.lit(name).alias("check"), F.lit(check_id).alias("check-id"), sev.alias("severity")
                    ),
                )
            )
        return out

    # -- aggregate phase -------------------------------------------------------------------------------------

    def observable_checks(self) -> list[ObservableAggregateCheck]:
        return [c for c in self.aggregate_checks if isinstance(c, ObservableAggregateCheck)]

    def classic_checks(self) -> list[BaseAggregateCheck]:
        return [c for c in self.aggregate_checks if not isinstance(c, ObservableAggregateCheck)]

    def aggregate_columns(self, *, row_counts: bool = True) -> list[Column]:
        """Every aggregate of the run, aliased, for one ``agg``/``observe`` over :meth:`annotate`'s output.

        Args:
            row_counts: Include the per-regime row counts and per-check violation counts. The Arrow fast path
                leaves them out and counts them from the collected bitmask instead (see
                :func:`streaming_dq.engine.arrow.row_counts`): Spark's observed metrics are evaluated outside
                whole-stage code generation, so every aggregate spared there is per-row work saved.
        """
        return list(self.memo(("aggregates", row_counts), lambda: self._aggregate_columns(row_counts)))

    def _aggregate_columns(self, row_counts: bool) -> list[Column]:
        cols: list[Column] = []
        if row_counts:
            cols += self._row_count_columns()
        computed: dict[tuple[Any, ...], str] = {}  # state identity + regimes -> the alias that computes it
        for k, check in enumerate(self.observable_checks()):
            for g, group in enumerate(self.regimes.groups(check)):
                if group.verdict.kind == "off":
                    continue
                where = self._regime_in(group.ordinals)
                for sname, spec in check.state_specs().items():
                    prefix = f"__a{k}_{g}__{sname}"
                    identity = spec.identity
                    shared_key = (*identity, frozenset(group.ordinals)) if identity is not None else None
                    if shared_key is not None and shared_key in computed:
                        self._shared[prefix] = computed[shared_key]
                        continue
                    if shared_key is not None:
                        computed[shared_key] = prefix
                    aggs = spec.aggregations(None if where is True else where)  # type: ignore[arg-type]
                    for comp, col in aggs.items():
                        cols.append(col.alias(f"{prefix}.{comp}"))
        return cols

    def _with_shared(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` plus, for every state shared with an earlier check, that check's resolved components."""
        out = dict(values)
        if not self._shared:
            return out
        sharers: dict[str, list[str]] = {}
        for alias, source in self._shared.items():
            sharers.setdefault(source, []).append(alias)
        for key, value in values.items():
            prefix, dot, comp = key.partition(".")
            for alias in sharers.get(prefix, ()) if dot else ():
                out[f"{alias}.{comp}"] = value
        return out

    def _row_count_columns(self) -> list[Column]:
        cols: list[Column] = []
        fail, warn = self.row_fail_column(), self.row_warn_column()
        for r in self.regimes.ordinals:
            in_r = self.regimes.membership_column({r})
            cols.append(F.count_if(in_r).alias(f"__n_{r}"))
            cols.append(F.count_if(in_r & fail).alias(f"__fail_{r}"))
            cols.append(F.count_if(in_r & ~fail & warn).alias(f"__warn_{r}"))
        for i in range(self._n_flags):
            cols.append(F.count_if(F.col(flag_column(i))).alias(f"__v_{i}"))
        offset = 1 if self.malformed_column else 0
        for j, row_check in enumerate(self.row_checks):
            groups = self.regimes.groups(row_check)
            if len(groups) < 2:
                continue
            for g, group in enumerate(groups):
                if group.verdict.kind != "off":
                    in_g = self.regimes.membership_column(group.ordinals)
                    cols.append(
                        F.count_if(F.col(flag_column(j + offset)) & in_g).alias(f"__v_{j + offset}_{g}")
                    )
        return cols

    def decide(self, values: Mapping[str, Any], df: DataFrame | None = None) -> PlanOutcome:
        """Turn resolved aggregate values into verdicts; runs classic aggregate checks on ``df`` if any."""
        values = self._with_shared(values)
        ordinals = self.regimes.ordinals
        rows = {r: int(values.get(f"__n_{r}") or 0) for r in ordinals}
        present = {r for r, n in rows.items() if n > 0}
        outcome = PlanOutcome(
            total=sum(rows.values()),
            rows_by_regime={r: n for r, n in rows.items() if n > 0},
            row_failed_by_regime={r: int(values.get(f"__fail_{r}") or 0) for r in present},
            row_warned_by_regime={r: int(values.get(f"__warn_{r}") or 0) for r in present},
            violations={i: int(values.get(f"__v_{i}") or 0) for i in range(self._n_flags)},
            row_results=[],
            aggregate_results=[],
            raw=dict(values),
            checks_by_id={c.check_id: c for c in [*self.row_checks, *self.aggregate_checks]},
        )
        outcome.row_results = self._row_results(outcome, present)
        results: list[tuple[int, AggregateCheckResult]] = []
        for k, check in enumerate(self.observable_checks()):
            for g, group, folded in self._aggregate_units(check, present, rows):
                if group.verdict.kind == "off":
                    results.append((self.declaration_order[check.check_id], self._skipped(check, group)))
                    continue
                states = self._states(check, k, g, values)
                for extra in folded:  # rows without an event time join the batch's largest regime
                    more = self._states(check, k, extra, values)
                    states = {name: state.merge(more[name]) for name, state in states.items()}
                ev = check.evaluate_states(states, multiplier=group.multiplier)
                results.append((self.declaration_order[check.check_id], self._wrap(check, group, ev, folded)))
        for classic in self.classic_checks():
            for _g, group, folded in self._aggregate_units(classic, present, rows):
                if group.verdict.kind == "off":
                    results.append((self.declaration_order[classic.check_id], self._skipped(classic, group)))
                    continue
                if df is None:
                    raise ValueError("classic aggregate checks need the DataFrame")
                groups = self.regimes.groups(classic)
                scope = frozenset(group.ordinals).union(*(groups[x].ordinals for x in folded))
                scoped = df if not self.regimes.split else df.filter(self.regimes.membership_column(scope))
                scoped = scoped.select(
                    *[F.col(f"`{c}`") for c in scoped.columns if not c.startswith("__dq_")]
                )
                ev = classic._evaluate_logic(scoped, multiplier=group.multiplier)
                results.append(
                    (self.declaration_order[classic.check_id], self._wrap(classic, group, ev, folded))
                )
        results.sort(key=lambda t: t[0])
        outcome.aggregate_results = [r for _, r in results]
        for _, res in results:
            if res.status != "failed":
                continue
            for r in _ordinals_of(res.regime_mask):
                if r not in present and outcome.total > 0:
                    continue
                outcome.agg_errors.setdefault(r, []).append((res.check, res.check_id, res.severity.value))
                if res.severity in self.fail_levels:
                    outcome.breached.add(r)
        return outcome

    def _states(
        self, check: ObservableAggregateCheck, k: int, g: int, values: Mapping[str, Any]
    ) -> dict[str, Any]:
        prefix = f"__a{k}_{g}__"
        return check.decode_states(
            {key[len(prefix) :]: v for key, v in values.items() if key.startswith(prefix)}
        )

    def _aggregate_units(
        self, check: BaseAggregateCheck, present: set[int], rows: Mapping[int, int]
    ) -> list[tuple[int, Any, tuple[int, ...]]]:
        """(group index, group, groups folded into it) to judge: the NULL-event-time group joins the largest.

        Aggregates are judged per regime present; rows without an event time have no date, so rather than
        judging them as a population of their own (a handful of rows failing every volume check), their states
        are merged into the group of the regime with the most rows in the batch.
        """
        shown = self._reported_groups(check, present)
        null = self.regimes.null_ordinal
        nulls = [g for g, grp in shown if null is not None and grp.ordinals == {null}]
        others = [(g, grp) for g, grp in shown if g not in nulls]
        if not nulls or not others:
            return [(g, grp, ()) for g, grp in shown]
        largest = max(others, key=lambda t: sum(rows.get(r, 0) for r in t[1].ordinals))[0]
        return [(g, grp, tuple(nulls) if g == largest else ()) for g, grp in others]

    def _reported_groups(self, check: BaseCheck, present: set[int]) -> list[tuple[int, Any]]:
        groups = list(enumerate(self.regimes.groups(check)))
        shown = [(g, grp) for g, grp in groups if grp.ordinals & present]
        if shown:
            return shown
        base = [(g, grp) for g, grp in groups if 0 in grp.ordinals]
        return base or groups[:1]

    def _wrap(
        self, check: BaseAggregateCheck, group: Any, ev: Any, folded: tuple[int, ...] = ()
    ) -> AggregateCheckResult:
        groups = self.regimes.groups(check)
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

    def _skipped(self, check: BaseAggregateCheck, group: Any) -> AggregateCheckResult:
        return _with_group(
            check.skipped(
                severity=group.verdict.severity, profiles=group.profiles, regime=group.regime_names
            ),
            group,
        )

    def _row_results(self, outcome: PlanOutcome, present: set[int]) -> list[RowCheckOutcome]:
        out = []
        offset = 1 if self.malformed_column else 0
        for j, check in enumerate(self.row_checks):
            i = j + offset
            all_groups = self.regimes.groups(check)
            for g, group in self._reported_groups(check, present):
                if group.verdict.kind == "off":
                    violations, status = 0, "skipped"
                else:
                    key = f"__v_{i}" if len(all_groups) < 2 else f"__v_{i}_{g}"
                    violations = int(outcome.raw.get(key) or 0)
                    status = "failed" if violations else "passed"
                total = sum(outcome.rows_by_regime.get(r, 0) for r in group.ordinals)
                out.append(
                    RowCheckOutcome(
                        check=check,
                        check_type=check.check_type,
                        severity=group.verdict.severity,
                        status=status,
                        violations=violations,
                        total=total,
                        profiles=group.profiles,
                        regime=group.regime_names,
                    )
                )
        return out


def _with_group(result: AggregateCheckResult, group: Any) -> AggregateCheckResult:
    return replace(result, regime_mask=group.key)


def _ordinals_of(key: int) -> list[int]:
    return [i for i in range(key.bit_length()) if key >> i & 1]


def _schema_key(df: DataFrame) -> str:
    """What a cached Column depends on: the input's schema (names, types, nesting)."""
    return df.schema.json()


def _referenced_columns(check: BaseCheck) -> list[str]:
    cols: list[str] = []
    for attr in ("columns", "column"):
        value = getattr(check, attr, None)
        if isinstance(value, str):
            cols.append(value)
        elif isinstance(value, list | tuple):
            cols.extend(v for v in value if isinstance(v, str))
    return cols
