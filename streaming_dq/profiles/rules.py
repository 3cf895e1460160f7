"""Rules: a selector paired with what to do to the selected checks, and the fluent builders that make them."""

from __future__ import annotations

import math
from dataclasses import dataclass

from streaming_dq.core.severity import Severity, normalize_severity
from streaming_dq.exceptions import ConfigError, ConfigTypeError
from streaming_dq.profiles.selectors import (
    SELECTOR_TYPES,
    CheckIdSelector,
    GroupSelector,
    Selector,
    TagSelector,
)


def validate_multiplier(value: object) -> float:
    """Return ``value`` as a float when it is a finite number greater than zero.

    Raises:
        ValueError: ``value`` is not a number, is a bool, is NaN or infinite, or is not positive.

    Example:
        >>> validate_multiplier(2)
        2.0
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"metric multiplier must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise ConfigError(f"metric multiplier must be a finite number greater than 0, got {value!r}")
    return number


@dataclass(frozen=True)
class Rule:
    """What a profile does to the checks its selector matches.

    Attributes:
        selector: Which checks the rule applies to.
        disabled: The selected checks are skipped (reported as ``skipped``, never failing a row).
        metric_multiplier: Scales an aggregate check's metric before its threshold comparison (finite, > 0).
            Row checks have no metric and ignore it.
        severity: Replaces the selected checks' severity, or ``None`` to keep it. Strings are normalised.
        keep_in_baseline: An anomaly check's windows under this rule still enter later baselines (by default
            a window a profile applied to is left out of them, so a holiday does not shift the usual).

    Raises:
        ConfigError: The multiplier is not a finite positive number, or ``disabled`` is not a bool.
        InvalidSeverityLevelError: ``severity`` is neither ``critical`` nor ``warning``.
        TypeError: ``selector`` is not a selector.

    Example:
        >>> Rule(TagSelector("xmas"), metric_multiplier=2.0).metric_multiplier
        2.0
    """

    selector: Selector
    disabled: bool = False
    metric_multiplier: float = 1.0
    severity: Severity | None = None
    keep_in_baseline: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.selector, SELECTOR_TYPES):
            raise ConfigTypeError(f"a rule needs a selector, got {self.selector!r}")
        if not isinstance(self.disabled, bool):
            raise ConfigError(f"disable must be true or false, got {self.disabled!r}", field_path="disable")
        if not isinstance(self.keep_in_baseline, bool):
            raise ConfigError(
                f"keep-in-baseline must be true or false, got {self.keep_in_baseline!r}",
                field_path="keep-in-baseline",
            )
        try:
            multiplier = validate_multiplier(self.metric_multiplier)
        except ValueError as exc:
            raise ConfigError(str(exc), field_path="metric-multiplier") from None
        object.__setattr__(self, "metric_multiplier", multiplier)
        if self.severity is not None:
            object.__setattr__(self, "severity", normalize_severity(self.severity))


class RuleBuilder:
    """Builds :class:`Rule` objects for one selector with a fluent interface.

    Example:
        >>> tag("xmas").set(metric_multiplier=2.0) == Rule(TagSelector("xmas"), metric_multiplier=2.0)
        True
    """

    __slots__ = ("_selector",)

    def __init__(self, selector: Selector) -> None:
        self._selector = selector

    @property
    def selector(self) -> Selector:
        """The selector every rule of this builder uses."""
        return self._selector

    def __repr__(self) -> str:
        return f"RuleBuilder({self._selector!r})"

    def disable(self) -> Rule:
        """Return a rule that disables the selected checks.

        Example:
            >>> check("Volume").disable().disabled
            True
        """
        return Rule(self._selector, disabled=True)

    def set(self, *, metric_multiplier: float = 1.0, severity: Severity | str | None = None) -> Rule:
        """Return a rule that scales the selected checks' metric and/or overrides their severity.

        Example:
            >>> tag("non-critical").set(severity="warning").severity
            <Severity.WARNING: 'warning'>
        """
        return Rule(
            self._selector,
            metric_multiplier=metric_multiplier,
            severity=None if severity is None else normalize_severity(severity),
        )


def check_id(value: str) -> RuleBuilder:
    """Select the one check whose ``check_id`` is ``value``.

    Example:
        >>> check_id("orders-min").disable().selector
        CheckIdSelector(check_id='orders-min')
    """
    return RuleBuilder(CheckIdSelector(value))


def check(group: str) -> RuleBuilder:
    """Select every check of the group named ``group``.

    Example:
        >>> check("Volume").disable().selector
        GroupSelector(group='Volume', check_id=None)
    """
    return RuleBuilder(GroupSelector(group))


def assertion(group: str, check_id: str | None = None) -> RuleBuilder:
    """Select the check ``check_id`` of the group ``group`` (every check of the group when ``None``).

    Example:
        >>> assertion("Volume", "orders-min").set(metric_multiplier=2.0).selector
        GroupSelector(group='Volume', check_id='orders-min')
    """
    return RuleBuilder(GroupSelector(group, check_id))


def tag(name: str) -> RuleBuilder:
    """Select every check tagged ``name``.

    Example:
        >>> tag("xmas").set(metric_multiplier=2.0).selector
        TagSelector(tag='xmas')
    """
    return RuleBuilder(TagSelector(name))
