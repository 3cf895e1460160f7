"""The validation plan: which checks a batch runs, and its row checks as lazy boolean flag columns.

A plan is built once per input schema from a CheckSet, the fail levels and the profiles. It knows, for every
check and every *regime* (a set of profiles active together on some date), whether the check is enabled,
with which severity and multiplier (:class:`~streaming_dq.engine.regime_table.RegimeTable`), and it builds:

* :meth:`ValidationPlan.annotate`: the input plus the flags of the row checks (True = fired and enabled), as
  one list column that is NULL on a row where none fired, and, with profiles, the row's regime. Pure and lazy;
* :attr:`ValidationPlan.rules`: what a fired flag means under each regime, in Spark and Arrow forms;
* :attr:`ValidationPlan.layout`: every aggregate of the batch's one pass, and how to read it back.

The decision itself is :func:`streaming_dq.engine.decision.decide`, a function of the pass's values.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.core.base_check import (
    BaseAggregateCheck,
    BaseCheck,
    BaseRowCheck,
    ObservableAggregateCheck,
)
from streaming_dq.core.column_types import check_input
from streaming_dq.core.references import using_references
from streaming_dq.core.severity import Severity
from streaming_dq.engine.layout import AggregateLayout
from streaming_dq.engine.regime_table import REGIME_COLUMN, RegimeTable, Verdict
from streaming_dq.engine.rules import FIRED_COLUMN, FlagRules, FlagSpec, flag_column
from streaming_dq.exceptions import CheckEvaluationError, InternalError, MissingReferenceDatasetError

if TYPE_CHECKING:
    from streaming_dq.config.check_set import CheckSet

MALFORMED_CHECK_ID = "malformed-record"


class ValidationPlan:
    """Everything one run needs to know about its checks, computed once.

    Args:
        check_set: The checks.
        fail_levels: Severities that fail a row (default: critical).
        profiles: Profiles; with ``event_time`` each row is judged under those active on its event date.
        event_time: Name of the event-time (timestamp) column.
        timezone: Zone of the calendar dates profiles are defined in.
        malformed_column: Name of a column holding the raw text of malformed records (e.g. ``_corrupt_record``);
            a non-NULL value fails the row with a ``malformed-record`` error and masks every other check.
        strict_types: Refuse, when the plan is prepared for a schema, a check on a column of a kind it cannot
            judge (a gate's: a numeric bound on a STRING column would fail every batch of a stream); without
            it Spark casts the values (``BatchDQEngine``).
    """

    def __init__(
        self,
        check_set: CheckSet | Sequence[BaseCheck],
        *,
        fail_levels: Sequence[Severity | str] = (Severity.CRITICAL,),
        profiles: Sequence[Any] = (),
        event_time: str | None = None,
        timezone: str = "UTC",
        malformed_column: str | None = None,
        strict_types: bool = False,
    ) -> None:
        from streaming_dq.core.severity import normalize_severity

        checks = list(check_set)
        self.fail_levels = frozenset(normalize_severity(s) for s in fail_levels)
        self.event_time = event_time
        self.timezone = timezone
        self.malformed_column = malformed_column
        self.strict_types = strict_types
        self.row_checks: list[BaseRowCheck] = [c for c in checks if isinstance(c, BaseRowCheck)]
        aggregates = [c for c in checks if isinstance(c, BaseAggregateCheck)]
        #: Window-scoped checks are judged per event-time window by the gate's accumulator, not per batch.
        self.window_checks: list[ObservableAggregateCheck] = [
            c for c in aggregates if isinstance(c, ObservableAggregateCheck) and c.scope is not None
        ]
        self.aggregate_checks: list[BaseAggregateCheck] = [
            c for c in aggregates if c not in self.window_checks
        ]
        #: The batch-scoped aggregate checks the one pass computes from their states.
        self.observable_checks: list[ObservableAggregateCheck] = [
            c for c in self.aggregate_checks if isinstance(c, ObservableAggregateCheck)
        ]
        #: The batch-scoped aggregate checks that rescan the batch (a groupBy, join or distinct of their own).
        self.classic_checks: list[BaseAggregateCheck] = [
            c for c in self.aggregate_checks if not isinstance(c, ObservableAggregateCheck)
        ]
        self.declaration_order = {c.check_id: i for i, c in enumerate(checks)}
        self.regimes = RegimeTable(checks, profiles if event_time else (), self.fail_levels)
        self.rules = FlagRules(
            [FlagSpec(name, check_id) for name, check_id, _ in self.flag_checks],
            [self._flag_verdicts(i) for i in range(self._n_flags)],
            self.regimes,
        )
        self.layout = AggregateLayout(
            self.observable_checks,
            self.window_checks,
            self.regimes,
            self.rules,
            event_time=event_time,
            malformed=malformed_column,
            timezone=timezone,
        )
        # Columns are unresolved expressions, valid for any DataFrame with the same schema: a plan kept
        # across micro-batches (the gate's) builds them once instead of through py4j on every batch.
        self._built: dict[Hashable, Any] = {}

    def memo(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """``build()``, computed on the first call for ``key`` and reused afterwards."""
        if key not in self._built:
            self._built[key] = build()
        return self._built[key]

    @staticmethod
    def references(datasets: Mapping[str, DataFrame] | None) -> AbstractContextManager[None]:
        """The block in which this run's integrity checks join ``datasets`` (annotate and decide inside it).

        The plan outlives a batch and its checks may be shared, so reference data is an argument of the run,
        never state of the checks (:mod:`~streaming_dq.core.references`).
        """
        return using_references(datasets)

    # -- row phase -------------------------------------------------------------------------------------------

    @property
    def _n_flags(self) -> int:
        return len(self.row_checks) + (1 if self.malformed_column else 0)

    @property
    def flag_checks(self) -> list[tuple[str, str, Severity]]:
        """(check name, check-id, base severity) per flag index (the malformed guard first, when present)."""
        out: list[tuple[str, str, Severity]] = []
        if self.malformed_column:
            out.append((MALFORMED_CHECK_ID, MALFORMED_CHECK_ID, Severity.CRITICAL))
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
        """``df`` plus the regime ordinal and the flags of its row checks (True = fired and enabled), as the
        one list column :data:`~streaming_dq.engine.rules.FIRED_COLUMN` (NULL where none fired; read flag
        ``i`` with :meth:`FlagRules.flag`).

        Checks that only provide a condition are added in ONE projection (analysis cost stays linear in the
        number of checks); checks that transform the frame (joins, windows) go through their ``validate``.
        The projection above folds the flags into the list. The condition-only flags are built once per input
        schema and reused for every later batch.
        """
        conditions, transforming = self.prepare(df)
        out = self.with_regime(df)
        flags = dict(conditions)
        staged: list[str] = []
        for i in transforming:
            out = self._validated(self.row_checks[i - self._offset], out, i)
            staged.append(f"__dq_raw{i}")
            check = self.row_checks[i - self._offset]
            raw = F.col(f"__dq_raw{i}")
            # the check's own validate may or may not have applied its filter: applying it twice is harmless
            flags[flag_column(i)] = self._guarded(check.filtered(raw), i)
        if transforming:  # keep the flags in index order (the bitmask reads them by name, order is cosmetic)
            flags = {flag_column(i): flags[flag_column(i)] for i in range(self._n_flags)}
        out = self._with_flags(out, flags) if flags else out
        out = out.withColumn(FIRED_COLUMN, self.rules.fired_column())
        return out.drop(*flags, *staged)

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
        return cond if enabled is True else cond & enabled

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
            return check.filtered(F.coalesce(check.failure_condition(df), F.lit(False)))
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

    def prepare(self, df: DataFrame) -> tuple[dict[str, Column], list[int]]:
        """Make the plan ready for rows of ``df``'s schema, once per schema: the condition-only checks' flag
        columns built (kept for every later batch: Columns are unresolved expressions), and the checks held
        against the schema (:func:`~streaming_dq.core.column_types.check_input`: a column missing, or of a kind
        a check cannot judge under ``strict_types``, an event-time column that is no timestamp, a filter that
        does not resolve - one line naming the check, before any row is read). :class:`~streaming_dq.engine.plan_cache.PlanCache`
        prepares a plan for the schema it is built for; :meth:`annotate` prepares it for a schema it has not
        seen.

        Returns:
            The flag columns of the condition-only checks, and the flag indices of the checks that need their
            own ``validate`` (joins, windows).

        Raises:
            ConfigError: The event-time column is missing or not a date/timestamp.
            CheckEvaluationError: A check's column or filter cannot be evaluated on ``df``.
        """

        def build() -> tuple[dict[str, Column], list[int]]:
            built = self._conditions(df)  # lazy Columns: nothing is resolved before the check below
            checks = [*self.row_checks, *self.aggregate_checks, *self.window_checks]
            check_input(checks, self.event_time, df, kinds=self.strict_types)
            return built

        key = ("prepared", _schema_key(df))
        if key not in self._built:
            self._built[key] = build()
        return self._built[key]  # type: ignore[no-any-return]

    def flag_index(self, check_id: str) -> int:
        """The flag of the row check ``check_id``."""
        for i, (_, cid, _) in enumerate(self.flag_checks):
            if cid == check_id:
                return i
        raise InternalError(f"no row check {check_id!r} in the plan")

    def guard_column(self, i: int) -> Column:
        """Where flag ``i`` may fire at all: the malformed-record guard and the regimes the check is on in (what
        :meth:`annotate` ANDs with its condition; a flag decided on the driver is ANDed with it there)."""
        return self._guarded(F.lit(True), i)

    def collected_columns(self, input_columns: Sequence[str]) -> list[Column]:
        """What the driver router collects of :meth:`annotate`'s output: the input columns, the flags' list,
        the regime."""

        def build() -> list[Column]:
            cols = [F.col(f"`{c}`") for c in input_columns]
            cols.append(F.col(FIRED_COLUMN))
            if self.regimes.split:
                cols.append(F.col(REGIME_COLUMN))
            return cols

        return list(self.memo(("collected", tuple(input_columns)), build))

    def with_regime(self, df: DataFrame) -> DataFrame:
        """``df`` plus the regime ordinal column when profiles split the batch (else ``df`` itself)."""
        if not self.regimes.split:
            return df
        return self.regimes.with_ordinal(df, self.event_time, self.timezone)


def _schema_key(df: DataFrame) -> str:
    """What a cached Column depends on: the input's schema (names, types, nesting)."""
    return df.schema.json()
