"""Resolution: the overrides a check gets from the profiles active on a date.

Over the active profiles in list order, and each profile's rules in order, every rule whose selector matches
the check contributes: any ``disable`` disables, multipliers multiply (1.5 then 2.0 gives 3.0), and the last
matching severity wins. A date of ``None`` (a row whose event time is NULL) activates no profile: the check's
base behaviour applies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from streaming_dq.core.severity import Severity
from streaming_dq.profiles.profiles import Profile
from streaming_dq.profiles.regimes import Regime, active_profiles
from streaming_dq.profiles.selectors import CheckTarget


@dataclass(frozen=True)
class ResolvedOverrides:
    """What the active profiles do to one check.

    Attributes:
        disabled: The check is skipped (reported as ``skipped``; it never fails a row).
        metric_multiplier: Product of the matching multipliers; scales an aggregate metric before comparison.
        severity: The last matching severity override, or ``None`` to keep the check's own.
        profiles: Names of the profiles with at least one rule matching the check, in order (for reporting).
        keep_in_baseline: Every matching rule says ``keep-in-baseline``: an anomaly check's window on this date
            still enters later baselines (a window no rule matched always does).

    Example:
        >>> ResolvedOverrides()
        ResolvedOverrides(disabled=False, metric_multiplier=1.0, severity=None, profiles=(),
                          keep_in_baseline=False)
    """

    disabled: bool = False
    metric_multiplier: float = 1.0
    severity: Severity | None = None
    profiles: tuple[str, ...] = ()
    keep_in_baseline: bool = False

    @property
    def is_default(self) -> bool:
        """Whether the overrides change nothing (no rule matched)."""
        return self == DEFAULT_OVERRIDES

    def effective_severity(self, base: Severity) -> Severity:
        """Return the severity the check runs with: the override, else ``base``.

        Example:
            >>> ResolvedOverrides(severity=Severity.WARNING).effective_severity(Severity.CRITICAL)
            <Severity.WARNING: 'warning'>
        """
        return base if self.severity is None else self.severity


DEFAULT_OVERRIDES = ResolvedOverrides()
"""The overrides of a check no rule matches: base behaviour."""


def resolve_overrides(
    target: CheckTarget, profiles: Sequence[Profile], target_date: date | None
) -> ResolvedOverrides:
    """Apply the rules of every profile active on ``target_date`` to ``target``.

    Args:
        target: The check being resolved.
        profiles: All profiles, in configuration order.
        target_date: The calendar date in the gate's time zone, or ``None`` for a NULL event time, in which
            case no profile is active and the result is :data:`DEFAULT_OVERRIDES`.

    Example:
        >>> from streaming_dq.profiles.profiles import HolidayProfile
        >>> from streaming_dq.profiles.rules import tag
        >>> xmas = HolidayProfile("Christmas", date(2025, 12, 20), date(2026, 1, 5), [
        ...     tag("volume").set(metric_multiplier=1.5), tag("xmas").set(metric_multiplier=2.0)])
        >>> resolve_overrides(CheckTarget("orders", tags=frozenset({"volume", "xmas"})), [xmas],
        ...                   date(2025, 12, 25))
        ResolvedOverrides(disabled=False, metric_multiplier=3.0, severity=None, profiles=('Christmas',),
                          keep_in_baseline=False)
    """
    if target_date is None:
        return DEFAULT_OVERRIDES
    return _apply(target, (p for p in profiles if p.is_active(target_date)))


def resolve_for_regime(target: CheckTarget, profiles: Sequence[Profile], regime: Regime) -> ResolvedOverrides:
    """Apply the rules of the profiles of ``regime`` to ``target``.

    Equals :func:`resolve_overrides` on any date whose regime (``regime_of``) is ``regime``.

    Raises:
        ValueError: the regime's mask has a bit set beyond the last profile.

    Example:
        >>> from streaming_dq.profiles.profiles import RecurringProfile
        >>> from streaming_dq.profiles.regimes import regime_of
        >>> from streaming_dq.profiles.rules import check_id
        >>> weekends = [RecurringProfile("Weekends", weekdays=["sat"], rules=[check_id("c").disable()])]
        >>> saturday = regime_of(weekends, date(2025, 12, 20))
        >>> resolve_for_regime(CheckTarget("c"), weekends, saturday).disabled
        True
    """
    return _apply(target, active_profiles(profiles, regime))


def _apply(target: CheckTarget, active: Iterable[Profile]) -> ResolvedOverrides:
    disabled = False
    multiplier = 1.0
    severity: Severity | None = None
    matched: list[str] = []
    keep = True
    for profile in active:
        for rule in profile.rules:
            if not rule.selector.matches(target):
                continue
            disabled = disabled or rule.disabled
            multiplier *= rule.metric_multiplier
            severity = rule.severity if rule.severity is not None else severity
            keep = keep and rule.keep_in_baseline
            if profile.name not in matched:
                matched.append(profile.name)
    if not matched:
        return DEFAULT_OVERRIDES
    return ResolvedOverrides(disabled, multiplier, severity, tuple(matched), keep)
