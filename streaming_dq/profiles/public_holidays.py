"""Public-holiday calendars as profiles, from the ``holidays`` package: no holiday dates typed by hand.

``PublicHolidayProfile("US holidays", country="US", subdivision="NY", holidays=["Thanksgiving"],
days_after=1, rules=[...])`` is active on every Thanksgiving (and the day after) of any year of the data. A
calendar is a set of named holidays, so the profile expands (:meth:`PublicHolidayProfile.expand`) into one
date-set profile per holiday, named ``"US holidays: Thanksgiving Day"``: batch lines, the results table and
Prometheus's ``profile`` label show which holiday applied, and the names stay bounded (a calendar has a
few dozen). Every date belongs to at most one of them, so the rules of one calendar never apply twice to one
day: a holiday's own date first, then the ``days-before``/``days-after`` of earlier holidays.

The dates are those of the years ``years`` (1970-2099 by default), computed once when the profile is built;
a date outside them is not a holiday (``is_active`` and the Spark predicate agree, both reading the same set).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

from streaming_dq.core.suggest import did_you_mean
from streaming_dq.exceptions import ConfigError
from streaming_dq.profiles.rules import Rule

if TYPE_CHECKING:
    from pyspark.sql import Column

    from streaming_dq.profiles.profiles import Profile

__all__ = [
    "DateSetProfile",
    "PublicHolidayProfile",
    "check_country",
    "check_subdivision",
    "expand_profiles",
    "holiday_names",
    "pick_holidays",
]

DEFAULT_YEARS = (1970, 2099)
_OBSERVED = re.compile(r"\s*\(observed\)\s*$", re.I)


@dataclass(frozen=True)
class DateSetProfile:
    """A profile active on a fixed set of dates (what a public-holiday calendar expands into).

    Example:
        >>> p = DateSetProfile("US holidays: Thanksgiving Day", frozenset({date(2025, 11, 27)}))
        >>> p.is_active(date(2025, 11, 27)), p.is_active(date(2025, 11, 28))
        (True, False)
    """

    name: str
    dates: frozenset[date]
    rules: Sequence[Rule] = ()
    holiday: str | None = field(default=None, compare=False)

    def is_active(self, target_date: date) -> bool:
        return target_date in self.dates

    def active_column(self, date_col: Column) -> Column:
        """The date (as ``yyyy-MM-dd`` text) ``IN (...)``, as a non-NULL boolean column.

        Text, not dates: Spark compiles an ``IN`` over more than 10 dates (or ints) into a ``switch`` of up to
        400 cases, and a calendar's holidays of 130 years, one such switch per holiday, made the generated
        code fail to compile (Spark then ran the batch without code generation, logging an ERROR each time).
        Over strings the set is a hash set held outside the code, and the cast is shared by every holiday.
        """
        from pyspark.sql import functions as F

        if not self.dates:
            return F.lit(False)
        days = [d.isoformat() for d in sorted(self.dates)]
        return F.coalesce(date_col.cast("string").isin(days), F.lit(False))


def _close(value: str, choices: Sequence[str], what: str) -> str:
    hint = did_you_mean(value, choices) or f" ({len(choices)} known, e.g. {', '.join(sorted(choices)[:8])})"
    return f"unknown {what} {value!r}{hint}"


def check_country(country: str) -> str:
    """The country code, upper-cased, if the ``holidays`` package knows it.

    Raises:
        ConfigError: unknown, with the close matches.
    """
    import holidays

    code = country.strip().upper()
    if code not in holidays.list_supported_countries():
        raise ConfigError(
            _close(code, list(holidays.list_supported_countries()), "country"), field_path="country"
        )
    return code


def check_subdivision(country: str, subdivision: str) -> str:
    """The subdivision code, upper-cased, if ``country`` has it.

    Raises:
        ConfigError: unknown (with the close matches), or the country has no subdivisions.
    """
    import holidays

    code, known = subdivision.strip().upper(), holidays.list_supported_countries()[check_country(country)]
    if not known:
        raise ConfigError(f"country {country!r} has no subdivisions", field_path="subdivision")
    if code not in known:
        raise ConfigError(_close(code, known, f"subdivision of {country}"), field_path="subdivision")
    return code


def holiday_names(
    country: str, subdivision: str | None, observed: bool = True, years: tuple[int, int] = DEFAULT_YEARS
) -> list[str]:
    """Every holiday name of a calendar in ``years``, sorted."""
    return sorted({n for _, n in _calendar(country, subdivision, observed, years)})


@lru_cache(maxsize=64)
def _calendar(
    country: str, subdivision: str | None, observed: bool, years: tuple[int, int]
) -> tuple[tuple[date, str], ...]:
    """(date, holiday name) of every holiday of the calendar in ``years``, in date order (names of one date
    split; the ``(observed)`` suffix dropped: an observed day is its holiday's)."""
    import holidays

    check_country(country)
    if subdivision is not None:
        check_subdivision(country, subdivision)
    calendar = holidays.country_holidays(
        country, subdiv=subdivision, years=range(years[0], years[1] + 1), observed=observed, language="en_US"
    )
    out = []
    for day, names in sorted(calendar.items()):
        for name in str(names).split("; "):
            out.append((day, _OBSERVED.sub("", name).strip()))
    return tuple(out)


def pick_holidays(wanted: Sequence[str], known: Sequence[str]) -> list[str]:
    """The calendar's names for ``wanted``: exact (any case), else the one name that contains it."""
    picked = []
    for index, text in enumerate(wanted):
        lowered = text.strip().lower()
        exact = [k for k in known if k.lower() == lowered]
        partial = [k for k in known if lowered in k.lower()]
        if exact or len(partial) == 1:
            picked.append((exact or partial)[0])
            continue
        if len(partial) > 1:
            raise ConfigError(
                f"holiday {text!r} is ambiguous: {', '.join(sorted(partial))}",
                field_path=f"holidays[{index}]",
            )
        raise ConfigError(_close(text, known, "holiday"), field_path=f"holidays[{index}]")
    return picked


@dataclass(frozen=True)
class PublicHolidayProfile:
    """The public holidays of a country (and subdivision), from the ``holidays`` package.

    Args:
        name: The calendar's name; each holiday shows as ``"<name>: <holiday>"``.
        country: ISO 3166 code (``US``, ``DE``, ``GB`` ...).
        subdivision: A state or region code of that country (``NY``, ``BY`` ...), or None.
        holidays: Holiday names (any case; a unique part such as ``Thanksgiving`` is enough); None: all.
        days_before: Also active this many days before each holiday.
        days_after: Also active this many days after each holiday.
        observed: Include the days a holiday is observed on when it falls on a weekend (the package's rule).
        rules: The rules, as for every profile.
        years: The first and last year whose holidays are computed.

    Raises:
        ConfigError: An unknown country, subdivision or holiday name (with the close matches), or a negative
            day count; ``field_path`` names the field.

    Example:
        >>> us = PublicHolidayProfile("US holidays", country="US", holidays=["Thanksgiving"], days_after=1)
        >>> [(p.name, p.is_active(date(2026, 11, 27))) for p in us.expand()]
        [('US holidays: Thanksgiving Day', True)]
    """

    name: str
    country: str
    subdivision: str | None = None
    holidays: Sequence[str] | None = None
    days_before: int = 0
    days_after: int = 0
    observed: bool = True
    rules: Sequence[Rule] = ()
    years: tuple[int, int] = DEFAULT_YEARS

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError(f"a profile needs a non-empty name, got {self.name!r}", field_path="name")
        for key, value in (("days-before", self.days_before), ("days-after", self.days_after)):
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 31:
                raise ConfigError(
                    f"must be a whole number of days from 0 to 31, got {value!r}", field_path=key
                )
        if self.years[0] > self.years[1]:
            raise ConfigError(
                f"first year {self.years[0]} is after last year {self.years[1]}", field_path="years"
            )
        object.__setattr__(self, "country", check_country(self.country))
        if self.subdivision is not None:
            object.__setattr__(self, "subdivision", check_subdivision(self.country, self.subdivision))
        object.__setattr__(self, "rules", tuple(self.rules))
        known = self.names()  # the calendar, computed (and checked) now
        if self.holidays is not None:
            object.__setattr__(self, "holidays", tuple(pick_holidays(list(self.holidays), known)))

    def names(self) -> list[str]:
        """Every holiday name of the calendar (in the years computed), sorted."""
        return holiday_names(self.country, self.subdivision, self.observed, self.years)

    @cached_property
    def _claimed(self) -> dict[date, str]:
        return self._compute_dates()

    def dates(self) -> dict[date, str]:
        """Each active date and the holiday it belongs to."""
        return dict(self._claimed)

    def _compute_dates(self) -> dict[date, str]:
        chosen = None if self.holidays is None else set(self.holidays)
        days = [(d, n) for d, n in _calendar(self.country, self.subdivision, self.observed, self.years)
                if chosen is None or n in chosen]  # fmt: skip
        claimed: dict[date, str] = {}
        for day, holiday in days:  # a holiday's own date first
            claimed.setdefault(day, holiday)
        for day, holiday in days:  # then the days around it, earlier holidays first
            for offset in [*range(-self.days_before, 0), *range(1, self.days_after + 1)]:
                claimed.setdefault(day + timedelta(days=offset), holiday)
        return claimed

    def expand(self) -> list[DateSetProfile]:
        """One :class:`DateSetProfile` per holiday, in the order of their first date."""
        by_holiday: dict[str, set[date]] = {}
        for day, holiday in sorted(self.dates().items()):
            by_holiday.setdefault(holiday, set()).add(day)
        return [
            DateSetProfile(f"{self.name}: {holiday}", frozenset(days), self.rules, holiday)
            for holiday, days in by_holiday.items()
        ]

    # The Profile protocol, for code that asks about the calendar as a whole.
    def is_active(self, target_date: date) -> bool:
        return target_date in self._claimed

    def active_column(self, date_col: Column) -> Column:
        return DateSetProfile(self.name, frozenset(self._claimed)).active_column(date_col)


def expand_profiles(profiles: Sequence[Profile]) -> list[Profile]:
    """The profiles with every public-holiday calendar replaced by its per-holiday profiles.

    Raises:
        ConfigError: Two profiles (after expansion) have the same name.
    """
    out: list[Profile] = []
    for profile in profiles:
        out.extend(profile.expand() if isinstance(profile, PublicHolidayProfile) else [profile])
    names = [getattr(p, "name", None) for p in out]
    dupes = sorted({n for n in names if names.count(n) > 1 and n is not None})
    if dupes:
        raise ConfigError(f"duplicate profile name(s) {', '.join(map(repr, dupes))}", field_path="profiles")
    return out
