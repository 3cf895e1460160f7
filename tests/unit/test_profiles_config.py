"""The ``profiles:`` config: YAML in, profile objects out, and an error naming the field for every mistake."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from streaming_dq.core.severity import Severity
from streaming_dq.exceptions import ConfigError, InvalidSeverityLevelError
from streaming_dq.profiles import (
    HolidayProfile,
    HolidayProfileConfig,
    ProfileList,
    ProfilesConfig,
    RecurringProfile,
    assertion,
    check,
    check_id,
    load_profiles,
    tag,
)

GATE_YAML = """
profiles:
  - type: holiday
    name: Christmas 2025
    start-date: 2025-12-20
    end-date: 2026-01-05
    rules:
      - {select: {tag: xmas}, metric-multiplier: 2.0}
      - {select: {tag: non-critical}, severity: warning}
      - {select: {check: Volume}, disable: true}
      - {select: {check: Volume, check-id: orders-min}, metric-multiplier: 2}
      - {select: {check-id: error-rate}, severity: Critical}
  - type: recurring
    name: Christmas every year
    month-day-start: "12-24"
    month-day-end: "01-01"
    rules: [{select: {tag: xmas}, metric-multiplier: 1.5}]
  - {type: recurring, name: Weekends, weekdays: [sat, Sunday]}
"""


def holiday(**overrides: Any) -> dict[str, Any]:
    return {
        "type": "holiday",
        "name": "Xmas",
        "start-date": "2025-12-20",
        "end-date": "2026-01-05",
    } | overrides


def recurring(**overrides: Any) -> dict[str, Any]:
    return {"type": "recurring", "name": "Weekends", "weekdays": ["sat", "sun"]} | overrides


def with_rule(**rule: Any) -> dict[str, Any]:
    return holiday(rules=[{"select": {"tag": "ok"}}, {"select": {"tag": "xmas"}} | rule])


def test_yaml_profiles_load_into_profile_objects() -> None:
    raw = yaml.safe_load(GATE_YAML)["profiles"]
    assert load_profiles(raw, source="gate.yaml") == [
        HolidayProfile(
            "Christmas 2025",
            date(2025, 12, 20),
            date(2026, 1, 5),
            [
                tag("xmas").set(metric_multiplier=2.0),
                tag("non-critical").set(severity=Severity.WARNING),
                check("Volume").disable(),
                assertion("Volume", "orders-min").set(metric_multiplier=2.0),
                check_id("error-rate").set(severity=Severity.CRITICAL),
            ],
        ),
        RecurringProfile(
            "Christmas every year", "12-24", "01-01", rules=[tag("xmas").set(metric_multiplier=1.5)]
        ),
        RecurringProfile("Weekends", weekdays=["sat", "sun"]),
    ]


def test_snake_case_names_are_accepted_too() -> None:
    raw = [
        {
            "type": "recurring",
            "name": "Xmas",
            "month_day_start": "12-24",
            "month_day_end": "01-01",
            "rules": [{"select": {"check_id": "c"}, "metric_multiplier": 2}],
        }
    ]
    assert load_profiles(raw) == [
        RecurringProfile("Xmas", "12-24", "01-01", rules=[check_id("c").set(metric_multiplier=2)])
    ]


def test_loading_never_mutates_the_callers_dicts() -> None:
    raw = yaml.safe_load(GATE_YAML)["profiles"]
    before = copy.deepcopy(raw)
    load_profiles(raw)
    assert raw == before


def test_an_empty_list_gives_no_profiles() -> None:
    assert load_profiles([]) == []
    assert ProfilesConfig().to_profiles() == []


@pytest.mark.parametrize(
    ("raw", "field_path", "message"),
    [
        (
            [holiday(**{"end-date": "2025-12-19"})],
            "profiles[0].end-date",
            "end date 2025-12-19 is before start",
        ),
        ([holiday(**{"start-date": "20th of December"})], "profiles[0].start-date", "expected a date like"),
        ([holiday(**{"start-date": 20251220})], "profiles[0].start-date", "expected a date like"),
        ([holiday(**{"end-date": "2026-01-05T10:00:00"})], "profiles[0].end-date", "expected a date like"),
        ([holiday(name="")], "profiles[0].name", "at least 1 character"),
        ([holiday(colour="red")], "profiles[0].colour", "Extra inputs are not permitted"),
        ([with_rule(**{"metric-multiplier": 0})], "profiles[0].rules[1].metric-multiplier", "greater than 0"),
        (
            [with_rule(**{"metric-multiplier": -2.0})],
            "profiles[0].rules[1].metric-multiplier",
            "greater than 0",
        ),
        (
            [with_rule(**{"metric-multiplier": float("inf")})],
            "profiles[0].rules[1].metric-multiplier",
            "finite",
        ),
        ([with_rule(**{"metric-multiplier": "2"})], "profiles[0].rules[1].metric-multiplier", "valid number"),
        ([with_rule(disable="maybe")], "profiles[0].rules[1].disable", "valid boolean"),
        ([with_rule(multiplier=2)], "profiles[0].rules[1].multiplier", "Extra inputs are not permitted"),
        (
            [holiday(rules=[{"select": {"group": "Volume"}}])],
            "profiles[0].rules[0].select.group",
            "Extra inputs",
        ),
        ([holiday(rules=[{"select": {}}])], "profiles[0].rules[0].select", "exactly one of"),
        (
            [holiday(rules=[{"select": {"tag": "x", "check": "G"}}])],
            "profiles[0].rules[0].select",
            "exactly one of",
        ),
        (
            [holiday(rules=[{"select": {"tag": "x", "check-id": "c"}}])],
            "profiles[0].rules[0].select",
            "exactly one",
        ),
        ([holiday(rules=[{"disable": True}])], "profiles[0].rules[0].select", "Field required"),
        ([recurring(), recurring(weekdays=["xmas"])], "profiles[1].weekdays", "unknown weekday 'xmas'"),
        ([recurring(weekdays=[])], "profiles[0].weekdays", "at least one day"),
        (
            [recurring(**{"month-day-start": "12-32", "month-day-end": "01-01"})],
            "profiles[0].month-day-start",
            "no day 32",
        ),
        (
            [recurring(**{"month-day-start": "12-24", "month-day-end": "1-1"})],
            "profiles[0].month-day-end",
            "'MM-DD'",
        ),
        ([recurring(**{"month-day-start": "12-24"})], "profiles[0].month-day-end", "needs both"),
        ([recurring(weekdays=None, **{"month-day-end": "01-01"})], "profiles[0].month-day-end", "needs both"),
        ([recurring(weekdays=None)], "profiles[0]", "needs month-day-start/month-day-end, weekdays, or both"),
        (
            [recurring(type="birthday")],
            "profiles[0].type",
            "one of holiday, public-holidays, recurring; got 'birthday'",
        ),
        ([{"name": "x"}], "profiles[0].type", "one of holiday, public-holidays, recurring; it is missing"),
        (
            [holiday(), holiday(name=" Xmas ")],
            "profiles",
            r"duplicate profile name 'Xmas' \(profiles\[0\] and profiles\[1\]\)",
        ),
        ("not a list", "profiles", "valid list"),
    ],
)
def test_every_config_error_names_the_source_and_the_field(raw: Any, field_path: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        load_profiles(raw, source="jobs/orders.yaml")
    assert (info.value.source, info.value.field_path) == ("jobs/orders.yaml", field_path)
    assert str(info.value).startswith(f"jobs/orders.yaml: {field_path}: ")


def test_a_bad_severity_is_an_invalid_severity_error_naming_the_field() -> None:
    with pytest.raises(InvalidSeverityLevelError, match="invalid severity 'P3'") as info:
        load_profiles([with_rule(severity="P3")], source="gate.yaml")
    assert info.value.field_path == "profiles[0].rules[1].severity"
    with pytest.raises(InvalidSeverityLevelError, match="invalid severity 3"):
        load_profiles([with_rule(severity=3)])


def test_several_errors_are_all_reported_in_one_message() -> None:
    with pytest.raises(ConfigError, match=r"\(and 1 more: profiles\[1\]\.end-date: end date") as info:
        load_profiles([holiday(name=""), holiday(name="b", **{"end-date": "2025-01-01"})])
    assert info.value.field_path == "profiles[0].name"


def test_profile_list_embeds_in_another_config_model() -> None:
    class GateConfig(BaseModel):
        name: str
        profiles: ProfileList = []

    gate = GateConfig.model_validate({"name": "orders", "profiles": [holiday(), recurring()]})
    assert [p.to_profile().name for p in gate.profiles] == ["Xmas", "Weekends"]
    with pytest.raises(ValidationError, match="duplicate profile name"):
        GateConfig.model_validate({"name": "orders", "profiles": [holiday(), holiday()]})


def test_each_config_model_converts_itself() -> None:
    config = HolidayProfileConfig.model_validate(
        holiday(rules=[{"select": {"tag": "xmas"}, "disable": True}])
    )
    assert config.to_profile() == HolidayProfile(
        "Xmas", date(2025, 12, 20), date(2026, 1, 5), [tag("xmas").disable()]
    )
