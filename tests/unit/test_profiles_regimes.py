"""Regimes: enumerate_regimes against brute force over every date, and masks against resolve_overrides."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streaming_dq.profiles import (
    NO_PROFILE,
    CheckTarget,
    HolidayProfile,
    Profile,
    RecurringProfile,
    Regime,
    Rule,
    enumerate_regimes,
    regime_from_mask,
    regime_of,
    resolve_for_regime,
    resolve_overrides,
    tag,
)
from streaming_dq.profiles.profiles import WEEKDAY_NAMES
from streaming_dq.profiles.regimes import ALL_WEEKDAY_DATES_WITHIN_DAYS
from streaming_dq.profiles.selectors import CheckIdSelector, GroupSelector, TagSelector

XMAS = HolidayProfile("Christmas 2025", date(2025, 12, 20), date(2026, 1, 5))
WEEKENDS = RecurringProfile("Weekends", weekdays=["sat", "sun"])


def brute_force_masks(profiles: Sequence[Profile], first: date, last: date) -> list[int]:
    masks = {0}
    day = first
    while day <= last:
        masks.add(sum(1 << i for i, p in enumerate(profiles) if p.is_active(day)))
        day += timedelta(1)
    return sorted(masks)


def masks(regimes: Sequence[Regime]) -> list[int]:
    return [r.mask for r in regimes]


def test_enumerate_regimes_lists_every_combination_that_occurs() -> None:
    assert enumerate_regimes([XMAS, WEEKENDS]) == (
        Regime(0, ()),
        Regime(1, ("Christmas 2025",)),
        Regime(2, ("Weekends",)),
        Regime(3, ("Christmas 2025", "Weekends")),
    )


def test_enumerate_regimes_without_profiles_is_the_no_profile_regime() -> None:
    assert enumerate_regimes([]) == (NO_PROFILE,)


def test_disjoint_holidays_never_share_a_regime() -> None:
    black_friday = HolidayProfile("Black Friday", date(2025, 11, 28), date(2025, 11, 28))
    assert masks(enumerate_regimes([XMAS, black_friday])) == [0, 1, 2]


def test_mask_zero_comes_first_even_when_it_never_occurs_on_a_date() -> None:
    every_day = RecurringProfile("Every day", weekdays=list(WEEKDAY_NAMES))
    assert enumerate_regimes([every_day]) == (NO_PROFILE, Regime(1, ("Every day",)))


def test_leap_day_on_each_weekday_is_a_reachable_regime() -> None:
    leap_day = RecurringProfile("Leap day", "02-29", "02-29")
    leap_sundays = RecurringProfile("Leap Sundays", "02-29", "02-29", weekdays=["sun"])
    assert masks(enumerate_regimes([leap_day, leap_sundays])) == [0, 1, 3]


def test_regime_of_a_date_and_of_null() -> None:
    assert regime_of([XMAS, WEEKENDS], date(2025, 12, 20)) == Regime(3, ("Christmas 2025", "Weekends"))
    assert regime_of([XMAS, WEEKENDS], date(2025, 12, 22)) == Regime(1, ("Christmas 2025",))
    assert regime_of([XMAS, WEEKENDS], date(2025, 12, 19)) == NO_PROFILE
    assert regime_of([XMAS, WEEKENDS], None) == NO_PROFILE


def test_a_mask_beyond_the_profiles_is_refused() -> None:
    with pytest.raises(ValueError, match="does not fit 2 profiles"):
        regime_from_mask([XMAS, WEEKENDS], 0b100)
    with pytest.raises(ValueError, match="does not fit 1 profiles"):
        resolve_for_regime(CheckTarget("c"), [XMAS], Regime(2, ("Weekends",)))


def test_more_than_63_profiles_are_refused() -> None:
    many = [RecurringProfile(f"p{i}", weekdays=["mon"]) for i in range(64)]
    with pytest.raises(ValueError, match="at most 63 profiles"):
        enumerate_regimes(many)


def test_every_weekday_date_recurs_within_the_documented_number_of_days() -> None:
    # One Gregorian cycle (146097 days) repeats exactly; walk it plus one wrap to measure every cyclic gap.
    first = date(2000, 1, 1).toordinal()
    last_seen: dict[tuple[int, int, int], int] = {}
    longest = 0
    for offset in range(146_097 + 15_000):
        day = date.fromordinal(first + offset)
        key = (day.month, day.day, day.weekday())
        if key in last_seen:
            longest = max(longest, offset - last_seen[key])
        last_seen[key] = offset
    assert (len(last_seen), longest) == (366 * 7, ALL_WEEKDAY_DATES_WITHIN_DAYS)


def test_holidays_far_apart_and_close_together_match_brute_force() -> None:
    profiles = [
        HolidayProfile("1950", date(1950, 3, 1), date(1950, 3, 10)),
        HolidayProfile("1990", date(1990, 2, 20), date(1990, 3, 5)),  # gap < 14609 days: scanned
        HolidayProfile("2060", date(2060, 2, 28), date(2060, 3, 1)),  # gap > 14609 days: every weekday date
        RecurringProfile("Leap day", "02-29", "02-29"),
        RecurringProfile("March Fridays", "03-01", "03-31", weekdays=["fri"]),
    ]
    assert masks(enumerate_regimes(profiles)) == brute_force_masks(
        profiles, date(1905, 1, 1), date(2105, 12, 31)
    )


def test_a_long_holiday_meets_only_the_weekday_dates_inside_it() -> None:
    leap_sundays = RecurringProfile("Leap Sundays", "02-29", "02-29", weekdays=["sun"])
    no_leap_sunday = HolidayProfile(
        "1000 days", date(2000, 1, 1), date(2002, 9, 26)
    )  # Feb 29 2000: a Tuesday
    forty_years = HolidayProfile("40 years", date(1950, 1, 1), date(1989, 12, 31))  # Feb 29 1976: a Sunday
    assert masks(enumerate_regimes([no_leap_sunday, leap_sundays])) == [0, 1, 2]
    assert masks(enumerate_regimes([forty_years, leap_sundays])) == [0, 1, 2, 3]


@dataclass(frozen=True)
class FirstOfMonth:
    """A profile type the regime code knows only through the protocol."""

    name: str
    rules: Sequence[Rule] = field(default=())

    def is_active(self, target_date: date) -> bool:
        return target_date.day == 1

    def active_column(self, date_col: Any) -> Any:  # pragma: no cover - Spark is not used here
        raise NotImplementedError


def test_other_profile_types_are_scanned_through_is_active() -> None:
    first_of_month = FirstOfMonth("First of month")
    autumn = HolidayProfile("Autumn 2025", date(2025, 10, 1), date(2025, 11, 1))  # a Wednesday, a Saturday
    assert isinstance(first_of_month, Profile)
    assert masks(enumerate_regimes([autumn, first_of_month, WEEKENDS])) == list(range(8))
    assert masks(enumerate_regimes([XMAS, first_of_month, WEEKENDS])) == [0, 1, 2, 3, 4, 5, 6]


# --- property tests -------------------------------------------------------------------------------------------

MONTH_DAYS = [f"{d.month:02d}-{d.day:02d}" for d in (date(2000, 1, 1) + timedelta(n) for n in range(366))]
weekday_lists = st.lists(st.sampled_from(WEEKDAY_NAMES), min_size=1, max_size=7, unique=True)
holiday_dates = st.dates(min_value=date(2000, 1, 1), max_value=date(2001, 12, 31))


@st.composite
def holidays(draw: st.DrawFn, name: str) -> HolidayProfile:
    start = draw(holiday_dates)
    length = draw(st.integers(min_value=0, max_value=60) | st.integers(min_value=61, max_value=400))
    return HolidayProfile(name, start, start + timedelta(length), draw(rule_lists))


@st.composite
def recurrings(draw: st.DrawFn, name: str) -> RecurringProfile:
    month_days = draw(st.none() | st.tuples(st.sampled_from(MONTH_DAYS), st.sampled_from(MONTH_DAYS)))
    weekdays = draw(weekday_lists) if month_days is None else draw(st.none() | weekday_lists)
    start, end = month_days or (None, None)
    return RecurringProfile(name, start, end, weekdays, draw(rule_lists))


selectors = st.one_of(
    st.sampled_from(["a", "b"]).map(CheckIdSelector),
    st.sampled_from(["G", "H"]).map(GroupSelector),
    st.tuples(st.sampled_from(["G", "H"]), st.sampled_from(["a", "b"])).map(lambda t: GroupSelector(*t)),
    st.sampled_from(["x", "y"]).map(TagSelector),
)
rules = st.builds(
    Rule,
    selectors,
    disabled=st.booleans(),
    metric_multiplier=st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]),
    severity=st.sampled_from([None, "critical", "warning"]),
)
rule_lists = st.lists(rules, max_size=3)


@st.composite
def profile_lists(draw: st.DrawFn) -> list[Profile]:
    kinds = draw(st.lists(st.sampled_from(["holiday", "recurring"]), min_size=1, max_size=4))
    return [draw(holidays(f"p{i}") if k == "holiday" else recurrings(f"p{i}")) for i, k in enumerate(kinds)]


@settings(max_examples=20, deadline=None)
@given(profile_lists())
def test_enumerate_regimes_equals_brute_force_over_every_date(profiles: list[Profile]) -> None:
    # Holidays lie in 2000-2003; 41 years either side hold every (month, day, weekday) outside any holiday.
    expected = brute_force_masks(profiles, date(1959, 1, 1), date(2044, 1, 1))
    assert masks(enumerate_regimes(profiles)) == expected


targets = st.builds(
    CheckTarget,
    st.sampled_from(["a", "b"]),
    group=st.sampled_from([None, "G", "H"]),
    tags=st.frozensets(st.sampled_from(["x", "y"])),
)


@settings(max_examples=60, deadline=None)
@given(
    profile_lists(), targets, st.dates(min_value=date(1995, 1, 1), max_value=date(2006, 12, 31)) | st.none()
)
def test_resolving_a_dates_regime_equals_resolving_the_date(
    profiles: list[Profile], target: CheckTarget, day: date | None
) -> None:
    regime = regime_of(profiles, day)
    assert regime in enumerate_regimes(profiles)
    assert resolve_for_regime(target, profiles, regime) == resolve_overrides(target, profiles, day)


def test_resolve_for_regime_applies_only_the_regimes_profiles() -> None:
    xmas = HolidayProfile(
        "Christmas", date(2025, 12, 20), date(2026, 1, 5), [tag("x").set(metric_multiplier=2.0)]
    )
    weekends = RecurringProfile("Weekends", weekdays=["sat"], rules=[tag("x").set(metric_multiplier=3.0)])
    target = CheckTarget("c", tags=frozenset({"x"}))
    results = [
        resolve_for_regime(target, [xmas, weekends], r).metric_multiplier
        for r in enumerate_regimes([xmas, weekends])
    ]
    assert results == [1.0, 2.0, 3.0, 6.0]
