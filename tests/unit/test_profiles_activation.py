"""When profiles are active: holiday bounds, recurring ranges and weekdays, event dates in a time zone."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from streaming_dq.exceptions import ConfigError
from streaming_dq.profiles import (
    HolidayProfile,
    Profile,
    RecurringProfile,
    event_date,
    tag,
    time_zone,
)

CHRISTMAS = HolidayProfile("Christmas 2025", date(2025, 12, 20), date(2026, 1, 5))


def days(first: date, last: date) -> list[date]:
    return [first + timedelta(n) for n in range((last - first).days + 1)]


def active_days(profile: Profile, first: date, last: date) -> list[date]:
    return [d for d in days(first, last) if profile.is_active(d)]


def test_holiday_is_active_on_both_end_dates_and_not_beyond() -> None:
    checked = [date(2025, 12, 19), date(2025, 12, 20), date(2026, 1, 5), date(2026, 1, 6)]
    assert [CHRISTMAS.is_active(d) for d in checked] == [False, True, True, False]


def test_one_day_holiday_is_active_on_that_day_only() -> None:
    day = HolidayProfile("Black Friday", date(2025, 11, 28), date(2025, 11, 28))
    assert active_days(day, date(2025, 11, 1), date(2025, 12, 31)) == [date(2025, 11, 28)]


def test_holiday_refuses_an_end_before_its_start() -> None:
    with pytest.raises(ConfigError, match="end date 2025-12-19 is before start date 2025-12-20") as info:
        HolidayProfile("x", date(2025, 12, 20), date(2025, 12, 19))
    assert info.value.field_path == "end-date"


def test_holiday_refuses_timestamps_and_empty_names() -> None:
    with pytest.raises(ConfigError, match="expected a calendar date"):
        HolidayProfile("x", datetime(2025, 12, 20, 1, 0), date(2025, 12, 21))
    with pytest.raises(ConfigError, match="non-empty name"):
        HolidayProfile(" ", date(2025, 12, 20), date(2025, 12, 21))


def test_profile_types_satisfy_the_protocol_and_freeze_their_rules() -> None:
    weekends = RecurringProfile("Weekends", weekdays=["sat", "sun"], rules=[tag("x").disable()])
    assert isinstance(CHRISTMAS, Profile)
    assert isinstance(weekends, Profile)
    assert weekends.rules == (tag("x").disable(),)
    assert hash(weekends) == hash(
        RecurringProfile("Weekends", weekdays=["sun", "sat"], rules=[tag("x").disable()])
    )


def test_profile_refuses_something_that_is_not_a_rule() -> None:
    with pytest.raises(ConfigError, match="expected a Rule") as info:
        HolidayProfile("x", date(2025, 12, 20), date(2025, 12, 21), rules=[tag("x")])  # type: ignore[list-item]
    assert info.value.field_path == "rules[0]"


def test_recurring_range_wraps_over_new_year_every_year() -> None:
    xmas = RecurringProfile("Christmas", month_day_start="12-24", month_day_end="01-01")
    assert active_days(xmas, date(2030, 12, 20), date(2031, 1, 3)) == days(
        date(2030, 12, 24), date(2031, 1, 1)
    )
    assert active_days(xmas, date(2031, 12, 22), date(2032, 1, 2)) == days(
        date(2031, 12, 24), date(2032, 1, 1)
    )
    assert xmas.wraps


def test_recurring_range_within_a_year_includes_both_ends() -> None:
    summer = RecurringProfile("Summer", month_day_start="07-01", month_day_end="08-31")
    assert active_days(summer, date(2026, 6, 29), date(2026, 9, 2)) == days(
        date(2026, 7, 1), date(2026, 8, 31)
    )
    assert not summer.wraps


def test_recurring_weekdays_only() -> None:
    weekends = RecurringProfile("Weekends", weekdays=["Saturday", "sun"])
    # 2025-12-15 is a Monday
    assert active_days(weekends, date(2025, 12, 15), date(2025, 12, 28)) == [
        date(2025, 12, 20),
        date(2025, 12, 21),
        date(2025, 12, 27),
        date(2025, 12, 28),
    ]
    assert weekends.weekdays == ("sat", "sun")
    assert weekends.active_weekdays == frozenset({5, 6})


def test_recurring_range_restricted_to_weekdays() -> None:
    xmas_weekends = RecurringProfile("Xmas weekends", "12-24", "01-01", weekdays=["sat", "sun"])
    assert active_days(xmas_weekends, date(2025, 12, 1), date(2026, 1, 31)) == [
        date(2025, 12, 27),
        date(2025, 12, 28),
    ]


def test_recurring_feb_29_bounds_in_leap_and_other_years() -> None:
    leap_day = RecurringProfile("Leap day", "02-29", "02-29")
    from_leap_day = RecurringProfile("From Feb 29", "02-29", "03-02")
    to_leap_day = RecurringProfile("To Feb 29", "02-27", "02-29")
    assert active_days(leap_day, date(2024, 2, 1), date(2025, 3, 31)) == [date(2024, 2, 29)]
    assert active_days(from_leap_day, date(2025, 2, 1), date(2025, 3, 31)) == days(
        date(2025, 3, 1), date(2025, 3, 2)
    )
    assert active_days(from_leap_day, date(2024, 2, 1), date(2024, 3, 31)) == days(
        date(2024, 2, 29), date(2024, 3, 2)
    )
    assert active_days(to_leap_day, date(2025, 2, 1), date(2025, 3, 31)) == days(
        date(2025, 2, 27), date(2025, 2, 28)
    )


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({"month_day_start": "12-24"}, "month-day-end", "needs both month-day-start and month-day-end"),
        ({"month_day_end": "01-01"}, "month-day-start", "needs both month-day-start and month-day-end"),
        ({}, None, "needs a month-day range, weekdays, or both"),
        ({"month_day_start": "13-01", "month_day_end": "01-01"}, "month-day-start", "month must be 01..12"),
        ({"month_day_start": "12-24", "month_day_end": "02-30"}, "month-day-end", "month 02 has no day 30"),
        ({"month_day_start": "12/24", "month_day_end": "01-01"}, "month-day-start", "must look like 'MM-DD'"),
        ({"month_day_start": "1-1", "month_day_end": "01-01"}, "month-day-start", "must look like 'MM-DD'"),
        ({"weekdays": ["sat", "holiday"]}, "weekdays", "unknown weekday 'holiday'"),
        ({"weekdays": []}, "weekdays", "at least one day"),
        ({"weekdays": "sat"}, "weekdays", "must be a list"),
    ],
)
def test_recurring_refuses_bad_ranges_and_weekdays(
    kwargs: dict[str, object], field: str | None, message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        RecurringProfile("x", **kwargs)  # type: ignore[arg-type]
    assert info.value.field_path == field


def test_event_date_is_the_calendar_date_in_the_time_zone() -> None:
    late_friday_utc = datetime(2025, 12, 19, 23, 30, tzinfo=UTC)
    assert event_date(late_friday_utc, "Europe/Berlin") == date(2025, 12, 20)
    assert event_date(late_friday_utc, "UTC") == date(2025, 12, 19)
    assert event_date(datetime(2025, 12, 20, 3, 0, tzinfo=UTC), "America/New_York") == date(2025, 12, 19)


def test_event_date_reads_a_naive_timestamp_as_utc_and_honours_any_offset() -> None:
    assert event_date(datetime(2025, 12, 19, 23, 30), "Europe/Berlin") == date(2025, 12, 20)
    tokyo_morning = datetime(2025, 12, 20, 8, 0, tzinfo=timezone(timedelta(hours=9)))
    assert event_date(tokyo_morning, "UTC") == date(2025, 12, 19)


def test_a_holiday_starts_at_local_midnight_of_the_configured_zone() -> None:
    event = datetime(2025, 12, 19, 23, 30, tzinfo=UTC)
    assert CHRISTMAS.is_active(event_date(event, "Europe/Berlin"))
    assert not CHRISTMAS.is_active(event_date(event, "UTC"))


def test_unknown_time_zone_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown time zone 'Mars/Olympus'") as info:
        event_date(datetime(2025, 1, 1, tzinfo=UTC), "Mars/Olympus")
    assert info.value.field_path == "timezone"
    assert time_zone("UTC").key == "UTC"
