"""Public-holiday calendars (the ``holidays`` package) as profiles: dates in any year, one profile per holiday,
clear config errors with close matches, and the calendar's names where profiles are shown."""

from __future__ import annotations

from datetime import date

import pytest

from streaming_dq.config.loader import load_gate_config
from streaming_dq.exceptions import ConfigError
from streaming_dq.profiles import PublicHolidayProfile, load_profiles, resolve_overrides, tag
from streaming_dq.profiles.public_holidays import expand_profiles


def thanksgiving(**kw: object) -> PublicHolidayProfile:
    return PublicHolidayProfile(
        "US holidays", country="US", subdivision="NY", holidays=["thanksgiving"], **kw
    )


def test_a_holiday_is_found_in_every_year_with_its_days_around_it() -> None:
    profile = thanksgiving(days_before=1, days_after=1)
    assert profile.holidays == ("Thanksgiving Day",)
    # the fourth Thursday of November, in years the config never names
    for year, day in [(1999, 25), (2025, 27), (2026, 26), (2031, 27), (2048, 26)]:
        assert [profile.is_active(date(year, 11, day + d)) for d in (-2, -1, 0, 1, 2)] == [
            False,
            True,
            True,
            True,
            False,
        ]
    (only,) = profile.expand()
    assert only.name == "US holidays: Thanksgiving Day" and only.holiday == "Thanksgiving Day"
    assert len(only.dates) == 3 * 130  # 1970-2099


def test_the_whole_calendar_expands_into_one_profile_per_holiday_and_no_date_twice() -> None:
    calendar = PublicHolidayProfile("DE", country="DE", subdivision="BY", days_after=1)
    profiles = calendar.expand()
    names = [p.name for p in profiles]
    assert "DE: Christmas Day" in names and "DE: Second Day of Christmas" in names and "DE: Epiphany" in names
    assert len(names) == len(set(names)) == len(calendar.names())
    # Christmas Day's day after is the Second Day of Christmas itself: each date belongs to one holiday
    seen: dict[date, str] = {}
    for p in profiles:
        for d in p.dates:
            assert d not in seen, (d, seen.get(d), p.name)
            seen[d] = p.name
    assert seen[date(2026, 12, 26)] == "DE: Second Day of Christmas"
    assert seen[date(2026, 12, 27)] == "DE: Second Day of Christmas"  # its own day after
    assert seen[date(2025, 4, 21)] == "DE: Easter Monday"  # Easter moves; the package knows where


def test_the_rules_apply_under_the_holidays_own_name() -> None:
    from streaming_dq.profiles import CheckTarget

    profiles = expand_profiles([thanksgiving(rules=[tag("volume").set(metric_multiplier=0.5)])])
    target = CheckTarget("orders-per-day", tags=frozenset({"volume"}))
    on = resolve_overrides(target, profiles, date(2026, 11, 26))
    off = resolve_overrides(target, profiles, date(2026, 11, 25))
    assert (on.metric_multiplier, on.profiles) == (0.5, ("US holidays: Thanksgiving Day",))
    assert (off.metric_multiplier, off.profiles) == (1.0, ())


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        ({"country": "XX"}, "profiles[0].country", "unknown country 'XX'; did you mean"),
        ({"country": "US", "subdivision": "NYY"}, "profiles[0].subdivision", "did you mean 'NY'"),
        (
            {"country": "US", "holidays": ["Thanksgivng"]},
            "profiles[0].holidays",
            "did you mean 'Thanksgiving Day'",
        ),
        ({"country": "US", "holidays": ["Day"]}, "profiles[0].holidays", "ambiguous"),
        ({"country": "US", "days-after": -1}, "profiles[0].days-after", "greater than or equal to 0"),
    ],
)
def test_a_bad_calendar_names_the_field_and_the_close_matches(entry: dict, field: str, message: str) -> None:
    raw = [{"type": "public-holidays", "name": "cal", **entry}]
    with pytest.raises(ConfigError) as info:
        load_profiles(raw, source="gate.yaml")
    assert info.value.field_path is not None and info.value.field_path.startswith(field), info.value
    assert message in str(info.value)
    assert str(info.value).startswith("gate.yaml: ")


def test_a_gate_config_with_a_calendar_gives_the_gate_one_profile_per_chosen_holiday(tmp_path) -> None:
    text = """
gate: {name: orders, event-time: ts, timezone: America/New_York}
source: {format: json, path: landing, schema: "ts TIMESTAMP, n INT"}
checkpoint: state
targets: {pass: p, quarantine: q}
profiles:
  - type: public-holidays
    name: US holidays
    country: us
    subdivision: ny
    holidays: [Thanksgiving, Christmas Day]
    days-after: 1
    rules: [{select: {tag: volume}, metric-multiplier: 0.3}]
checks: [{check: row-count-min-check, check-id: rows, min-count: 10, tags: [volume]}]
"""
    path = tmp_path / "gate.yaml"
    path.write_text(text, encoding="utf-8")
    config = load_gate_config(path)
    names = [p.name for p in config.profile_objects()]
    assert names == ["US holidays: Thanksgiving Day", "US holidays: Christmas Day"]
    with pytest.raises(ConfigError, match="duplicate profile name"):
        expand_profiles([*config.profile_objects(), *config.profile_objects()])
