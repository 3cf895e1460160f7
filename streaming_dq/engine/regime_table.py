"""Regimes: the sets of profiles that can be active together, and what each check does under each.

Without profiles there is one regime (ordinal 0) and every membership test folds to a constant, so a run
without profiles builds exactly the expressions it would without this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.core.base_check import BaseAggregateCheck, BaseCheck
from streaming_dq.core.severity import Severity

#: How a fired check counts in a regime.
VerdictKind = Literal["off", "fail", "warn"]

REGIME_COLUMN = "__dq_regime"
MASK_COLUMN = "__dq_regime_mask"


@dataclass(frozen=True)
class Verdict:
    """How a fired check counts in a regime: ``off`` (disabled), ``fail`` or ``warn``."""

    kind: VerdictKind
    severity: Severity


@dataclass(frozen=True)
class OverrideGroup:
    """Regimes under which a check behaves identically (same enablement, severity and multiplier).

    ``key`` has bit ``i`` set for every regime ordinal ``i`` in the group.
    """

    key: int
    ordinals: frozenset[int]
    verdict: Verdict
    multiplier: float
    profiles: tuple[str, ...]
    regime_names: tuple[str, ...]


class RegimeTable:
    """Resolves every check's overrides under every regime once per run."""

    def __init__(
        self, checks: Sequence[BaseCheck], profiles: Sequence[Any], fail_levels: Iterable[Severity]
    ) -> None:
        self.profiles = list(profiles)
        self.fail_levels = frozenset(fail_levels)
        if self.profiles:
            from streaming_dq.profiles import enumerate_regimes

            # The last ordinal holds the rows without an event time: judged under no profile row by row,
            # and folded into the batch's largest regime for aggregates (see ValidationPlan.decide).
            self.regimes: list[Any] = [*enumerate_regimes(self.profiles), None]
            self.null_ordinal: int | None = len(self.regimes) - 1
        else:
            self.regimes = [None]
            self.null_ordinal = None
        # Row checks group the regimes under which they behave alike; aggregate checks are judged separately
        # for every regime present (a day of a holiday is its own population even where no rule matches).
        self._applied: dict[tuple[str, int], tuple[str, ...]] = {}
        self._ordinal_columns: dict[tuple[str, str], tuple[Column, Column]] = {}
        self._groups: dict[str, list[OverrideGroup]] = {
            c.check_id: self._group(c, per_regime=isinstance(c, BaseAggregateCheck)) for c in checks
        }

    @property
    def split(self) -> bool:
        return len(self.regimes) > 1

    @property
    def ordinals(self) -> list[int]:
        return list(range(len(self.regimes)))

    def names(self, ordinal: int) -> tuple[str, ...]:
        regime = self.regimes[ordinal]
        return tuple(regime.profiles) if regime is not None else ()

    def _overrides(self, check: BaseCheck, ordinal: int) -> tuple[bool, float, Severity, tuple[str, ...]]:
        regime = self.regimes[ordinal]
        if regime is None:
            return False, 1.0, check.severity, ()
        from streaming_dq.profiles import CheckTarget, resolve_for_regime

        target = CheckTarget(check_id=check.check_id, group=check.group, tags=frozenset(check.tags))
        o = resolve_for_regime(target, self.profiles, regime)
        severity = o.severity if o.severity is not None else check.severity
        return bool(o.disabled), float(o.metric_multiplier), severity, tuple(o.profiles)

    def _group(self, check: BaseCheck, *, per_regime: bool) -> list[OverrideGroup]:
        by_key: dict[tuple[bool, float, Severity, int], list[int]] = {}
        applied: dict[tuple[bool, float, Severity, int], list[str]] = {}
        for r in self.ordinals:
            disabled, mult, sev, profs = self._overrides(check, r)
            self._applied[(check.check_id, r)] = profs
            key = (disabled, mult, sev, r if per_regime else -1)
            by_key.setdefault(key, []).append(r)
            applied.setdefault(key, []).extend(profs)
        groups = []
        for (disabled, mult, sev, part), ords in by_key.items():
            kind: VerdictKind = "off" if disabled else ("fail" if sev in self.fail_levels else "warn")
            names = tuple(dict.fromkeys(n for r in ords for n in self.names(r)))
            groups.append(
                OverrideGroup(
                    key=sum(1 << r for r in ords),
                    ordinals=frozenset(ords),
                    verdict=Verdict(kind, sev),
                    multiplier=mult,
                    profiles=tuple(dict.fromkeys(applied[(disabled, mult, sev, part)])),
                    regime_names=names,
                )
            )
        return groups

    def groups(self, check: BaseCheck) -> list[OverrideGroup]:
        return self._groups[check.check_id]

    def groups_by_id(self, check_id: str) -> list[OverrideGroup]:
        return self._groups[check_id]

    def labels(self, check_id: str, ordinals: Iterable[int]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(profiles whose rules applied to the check, all profiles active) over the given regimes only.

        A verdict covering some regimes of an override group is labelled with what was active for the rows it
        describes, not with every regime the group could hold.
        """
        chosen = sorted(set(ordinals))
        applied = tuple(dict.fromkeys(p for r in chosen for p in self._applied.get((check_id, r), ())))
        active = tuple(dict.fromkeys(n for r in chosen for n in self.names(r)))
        return applied, active

    def verdicts(self, check: BaseCheck) -> dict[int, Verdict]:
        return {r: g.verdict for g in self.groups(check) for r in g.ordinals}

    # -- Spark expressions -----------------------------------------------------------------------------------

    def membership(self, ordinals: set[int] | frozenset[int]) -> Column | bool:
        """True/False when the answer is the same for every row, else a lazy ``regime IN (...)``."""
        wanted = set(ordinals) & set(self.ordinals)
        if not wanted:
            return False
        if len(wanted) == len(self.ordinals):
            return True
        return F.col(REGIME_COLUMN).isin(sorted(wanted))

    def membership_column(self, ordinals: set[int] | frozenset[int]) -> Column:
        m = self.membership(ordinals)
        return F.lit(m) if isinstance(m, bool) else m

    def value_column(self, values: Mapping[int, Any], default: Any) -> Column:
        """A per-row value chosen by regime (a literal when every regime agrees)."""
        distinct = set(values.values())
        if len(distinct) == 1 and len(values) == len(self.ordinals):
            return F.lit(next(iter(distinct)))
        expr = None
        for r, v in sorted(values.items()):
            cond = F.col(REGIME_COLUMN) == F.lit(r)
            expr = F.when(cond, F.lit(v)) if expr is None else expr.when(cond, F.lit(v))
        if expr is None:
            return F.lit(default)
        return expr.otherwise(F.lit(default))

    def mask_column(self, event_time: str, timezone: str) -> Column:
        """Each row's profile bitmask from its event date (see :func:`~streaming_dq.profiles.regime_column`)."""
        from streaming_dq.profiles import event_date_column, regime_column

        return regime_column(self.profiles, event_date_column(F.col(event_time), timezone))

    def ordinal_from_mask(self, event_time: str, mask: Column) -> Column:
        """Each row's regime ordinal from its bitmask ``mask`` (NULL event time: the ordinal of 'no profile').

        ``mask`` must be a column of its own (:meth:`with_ordinal`): the ordinal compares it once per regime,
        and an inlined mask expression would be evaluated once per comparison (a public-holiday calendar: 12
        regimes x 11 date-set lookups per row made every batch 3-5x slower).
        """
        expr = F.when(F.col(event_time).isNull(), F.lit(self.null_ordinal))
        for r, regime in enumerate(self.regimes):
            if regime is not None:
                expr = expr.when(mask == F.lit(regime.mask), F.lit(r))
        return expr.otherwise(F.lit(0)).cast("int")

    def with_ordinal(self, df: DataFrame, event_time: str | None, timezone: str) -> DataFrame:
        """``df`` plus the regime ordinal column ``__dq_regime`` (0 everywhere without profiles).

        Two projections: the mask first, then the ordinal from it; Spark keeps them apart (it does not
        collapse a projection whose expensive output the next one reads several times), so the calendar's
        date sets are looked up once per row.
        """
        if not self.split or event_time is None:
            return df.withColumn(REGIME_COLUMN, F.lit(0))
        key = (event_time, timezone)
        if key not in self._ordinal_columns:  # built once: a calendar's date sets take ~0.2 s of Python
            mask = self.mask_column(event_time, timezone)
            self._ordinal_columns[key] = (mask, self.ordinal_from_mask(event_time, F.col(MASK_COLUMN)))
        mask, ordinal = self._ordinal_columns[key]
        return df.withColumn(MASK_COLUMN, mask).withColumn(REGIME_COLUMN, ordinal).drop(MASK_COLUMN)
