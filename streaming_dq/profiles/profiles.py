"""Profile types: when a profile is active, as a Python predicate and as a lazy Spark expression.

Every profile type implements its activation twice, and the two must agree: ``is_active`` judges one
calendar date in Python (resolution, reports, tests), ``active_column`` builds the same predicate as a
boolean Spark column over a ``DateType`` column, so the engine can judge every row by its own event date in
the pass it already makes. A NULL date is never active (see :mod:`streaming_dq.profiles.resolution`).

pyspark is imported inside ``active_column`` only: this module imports without a JVM.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from streaming_dq.exceptions import ConfigError
from streaming_dq.profiles.rules import Rule

if TYPE_CHECKING:
    from pyspark.sql import Column

WEEKDAY_NAMES: tuple[str, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
"""Canonical weekday names, indexed like :meth:`datetime.date.weekday` (Monday = 0)."""

_FULL_WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_ALIASES = {name: i for names in (WEEKDAY_NAMES, _FULL_WEEKDAY_NAMES) for i, name in enumerate(names)}
_DAYS_IN_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # Feb 29 is a valid month-day


@runtime_checkable
class Profile(Protocol):
    """A named set of rules that applies on some calendar dates.

    ``name`` and ``rules`` are read-only here so frozen dataclasses satisfy the protocol.
    """

    @property
    def name(self) -> str:
        """The profile's name, unique among the profiles of a gate (reported with every override)."""
        ...

    @property
    def rules(self) -> Sequence[Rule]:
        """The rules, applied in order."""
        ...

    def is_active(self, target_date: date) -> bool:
        """Return whether the profile applies on ``target_date``."""
        ...

    def active_column(self, date_col: Column) -> Column:
        """Return a non-NULL boolean column equal to ``is_active`` of each row's date (False for NULL)."""
        ...


def parse_month_day(value: object) -> tuple[int, int]:
    """Parse ``"MM-DD"`` into ``(month, day)``; ``"02-29"`` is valid.

    Raises:
        ValueError: ``value`` is not a ``"MM-DD"`` string naming a day that exists in a leap year.

    Example:
        >>> parse_month_day("12-24")
        (12, 24)
    """
    if not isinstance(value, str):
        raise ConfigError(f"month-day must be a string 'MM-DD', got {value!r}")
    parts = value.strip().split("-")
    if len(parts) != 2 or not all(p.isdigit() and len(p) == 2 for p in parts):
        raise ConfigError(f"month-day must look like 'MM-DD' (e.g. '12-24'), got {value!r}")
    month, day = int(parts[0]), int(parts[1])
    if not 1 <= month <= 12:
        raise ConfigError(f"month-day {value!r}: month must be 01..12")
    if not 1 <= day <= _DAYS_IN_MONTH[month - 1]:
        raise ConfigError(f"month-day {value!r}: month {month:02d} has no day {day:02d}")
    return month, day


def parse_weekdays(values: object) -> tuple[str, ...]:
    """Normalise weekday names (``"sat"``, ``"Saturday"``) to sorted canonical three-letter names.

    Raises:
        ValueError: ``values`` is empty, not a list of strings, or names an unknown weekday.

    Example:
        >>> parse_weekdays(["Sunday", "sat"])
        ('sat', 'sun')
    """
    if isinstance(values, str) or not isinstance(values, Sequence | frozenset | set):
        raise ConfigError(f"weekdays must be a list of weekday names, got {values!r}")
    indexes: set[int] = set()
    for value in values:
        index = _WEEKDAY_ALIASES.get(value.strip().lower()) if isinstance(value, str) else None
        if index is None:
            raise ConfigError(f"unknown weekday {value!r}: expected one of {', '.join(WEEKDAY_NAMES)}")
        indexes.add(index)
    if not indexes:
        raise ConfigError("weekdays must name at least one day")
    return tuple(WEEKDAY_NAMES[i] for i in sorted(indexes))


def _freeze_rules(rules: Sequence[Rule]) -> tuple[Rule, ...]:
    frozen = tuple(rules)
    for index, rule in enumerate(frozen):
        if not isinstance(rule, Rule):
            raise ConfigError(f"expected a Rule, got {rule!r}", field_path=f"rules[{index}]")
    return frozen


def _require_profile_name(name: object) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"a profile needs a non-empty name, got {name!r}", field_path="name")


@dataclass(frozen=True)
class HolidayProfile:
    """A profile active from ``start_date`` to ``end_date``, both included.

    Raises:
        ConfigError: ``end_date`` is before ``start_date``, or a date is not a ``datetime.date``.

    Example:
        >>> from streaming_dq.profiles.rules import tag
        >>> xmas = HolidayProfile("Christmas 2025", date(2025, 12, 20), date(2026, 1, 5),
        ...                       [tag("xmas").set(metric_multiplier=2.0)])
        >>> xmas.is_active(date(2025, 12, 20)), xmas.is_active(date(2026, 1, 6))
        (True, False)
    """

    name: str
    start_date: date
    end_date: date
    rules: Sequence[Rule] = ()

    def __post_init__(self) -> None:
        _require_profile_name(self.name)
        for key, value in (("start-date", self.start_date), ("end-date", self.end_date)):
            # a datetime is a date subclass, but comparing one with a date raises: refuse it up front
            if not isinstance(value, date) or isinstance(value, datetime):
                raise ConfigError(f"expected a calendar date, got {value!r}", field_path=key)
        if self.end_date < self.start_date:
            raise ConfigError(
                f"end date {self.end_date} is before start date {self.start_date}", field_path="end-date"
            )
        object.__setattr__(self, "rules", _freeze_rules(self.rules))

    def is_active(self, target_date: date) -> bool:
        """Return whether ``target_date`` lies within the holiday, both ends included."""
        return self.start_date <= target_date <= self.end_date

    def active_column(self, date_col: Column) -> Column:
        """Return ``start <= date <= end`` as a non-NULL boolean column (False for a NULL date).

        Example:
            >>> xmas.active_column(F.col("event_date"))  # doctest: +SKIP
        """
        from pyspark.sql import functions as F

        inside = date_col.between(F.lit(self.start_date), F.lit(self.end_date))
        return F.coalesce(inside, F.lit(False))


@dataclass(frozen=True)
class RecurringProfile:
    """A profile active on the same dates every year, and/or on given weekdays.

    The month-day range includes both ends and may wrap over new year (``"12-24"`` to ``"01-01"``). Dates
    are compared as (month, day) pairs, so a ``"02-29"`` bound behaves sensibly in other years: a range
    starting on Feb 29 starts on Mar 1, a range ending on Feb 29 ends on Feb 28, and ``"02-29"`` to
    ``"02-29"`` is active in leap years only. With ``weekdays`` the profile is active only on those days
    (within the range, if any).

    Raises:
        ConfigError: only one end of the range is given, neither a range nor weekdays is given, or a month-day
            or weekday is malformed.

    Example:
        >>> xmas = RecurringProfile("Christmas", month_day_start="12-24", month_day_end="01-01")
        >>> xmas.is_active(date(2030, 12, 31)), xmas.is_active(date(2031, 1, 2))
        (True, False)
        >>> RecurringProfile("Weekends", weekdays=["sat", "sun"]).is_active(date(2025, 12, 20))
        True
    """

    name: str
    month_day_start: str | None = None
    month_day_end: str | None = None
    weekdays: Sequence[str] | None = None
    rules: Sequence[Rule] = ()
    _start: tuple[int, int] | None = field(init=False, repr=False, compare=False, default=None)
    _end: tuple[int, int] | None = field(init=False, repr=False, compare=False, default=None)
    _weekday_set: frozenset[int] = field(init=False, repr=False, compare=False, default=frozenset(range(7)))

    def __post_init__(self) -> None:
        _require_profile_name(self.name)
        if (self.month_day_start is None) != (self.month_day_end is None):
            missing = "month-day-end" if self.month_day_end is None else "month-day-start"
            raise ConfigError(
                "a month-day range needs both month-day-start and month-day-end", field_path=missing
            )
        if self.month_day_start is None and self.weekdays is None:
            raise ConfigError("a recurring profile needs a month-day range, weekdays, or both")
        if self.month_day_start is not None and self.month_day_end is not None:
            object.__setattr__(self, "_start", _month_day_or_error(self.month_day_start, "month-day-start"))
            object.__setattr__(self, "_end", _month_day_or_error(self.month_day_end, "month-day-end"))
        if self.weekdays is not None:
            try:
                names = parse_weekdays(self.weekdays)
            except ValueError as exc:
                raise ConfigError(str(exc), field_path="weekdays") from None
            object.__setattr__(self, "weekdays", names)
            object.__setattr__(self, "_weekday_set", frozenset(WEEKDAY_NAMES.index(n) for n in names))
        object.__setattr__(self, "rules", _freeze_rules(self.rules))

    @property
    def active_weekdays(self) -> frozenset[int]:
        """The weekdays the profile may be active on, numbered like ``date.weekday()`` (Monday = 0)."""
        return self._weekday_set

    @property
    def wraps(self) -> bool:
        """Whether the month-day range runs over new year (its start is after its end)."""
        return self._start is not None and self._end is not None and self._start > self._end

    def is_month_day_active(self, month: int, day: int) -> bool:
        """Return whether the month-day range (ignoring weekdays) includes ``(month, day)``."""
        if self._start is None or self._end is None:
            return True
        if self.wraps:
            return (month, day) >= self._start or (month, day) <= self._end
        return self._start <= (month, day) <= self._end

    def is_active(self, target_date: date) -> bool:
        """Return whether ``target_date`` is in the month-day range and on one of the weekdays."""
        if target_date.weekday() not in self._weekday_set:
            return False
        return self.is_month_day_active(target_date.month, target_date.day)

    def active_column(self, date_col: Column) -> Column:
        """Return the recurring predicate as a non-NULL boolean column (False for a NULL date).

        Example:
            >>> xmas.active_column(F.col("event_date"))  # doctest: +SKIP
        """
        from pyspark.sql import functions as F

        condition = F.lit(True)
        if self._start is not None and self._end is not None:
            month_day = F.month(date_col) * 100 + F.dayofmonth(date_col)
            start = self._start[0] * 100 + self._start[1]
            end = self._end[0] * 100 + self._end[1]
            if self.wraps:
                condition = (month_day >= start) | (month_day <= end)
            else:
                condition = month_day.between(start, end)
        if len(self._weekday_set) < 7:
            # F.weekday numbers days like Python: Monday = 0 ... Sunday = 6
            condition = condition & F.weekday(date_col).isin(sorted(self._weekday_set))
        return F.when(date_col.isNull(), F.lit(False)).otherwise(F.coalesce(condition, F.lit(False)))


def _month_day_or_error(value: str, field_path: str) -> tuple[int, int]:
    try:
        return parse_month_day(value)
    except ValueError as exc:
        raise ConfigError(str(exc), field_path=field_path) from None
