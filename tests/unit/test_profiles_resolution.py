"""resolve_overrides: disable wins, multipliers compound, the last severity wins, in profile and rule order."""

from __future__ import annotations

from datetime import date

from streaming_dq.core.severity import Severity
from streaming_dq.profiles import (
    DEFAULT_OVERRIDES,
    CheckTarget,
    HolidayProfile,
    RecurringProfile,
    ResolvedOverrides,
    assertion,
    check,
    check_id,
    resolve_overrides,
    tag,
)

ORDERS = CheckTarget("orders-min", group="Volume", tags=frozenset({"volume", "xmas"}))
ERRORS = CheckTarget("error-rate", group="Quality", tags=frozenset({"quality", "non-critical"}))
XMAS_DAY = date(2025, 12, 25)


def christmas(*rules: object) -> HolidayProfile:
    return HolidayProfile("Christmas", date(2025, 12, 20), date(2026, 1, 5), rules)  # type: ignore[arg-type]


def test_no_profiles_means_default_overrides() -> None:
    assert resolve_overrides(ORDERS, [], XMAS_DAY) == ResolvedOverrides()
    assert ResolvedOverrides(False, 1.0, None, ()) == DEFAULT_OVERRIDES
    assert DEFAULT_OVERRIDES.is_default


def test_inactive_profile_changes_nothing() -> None:
    profiles = [christmas(tag("xmas").set(metric_multiplier=2.0), check("Volume").disable())]
    assert resolve_overrides(ORDERS, profiles, date(2025, 12, 19)) == DEFAULT_OVERRIDES
    assert resolve_overrides(ORDERS, profiles, date(2026, 1, 6)) == DEFAULT_OVERRIDES


def test_null_event_date_activates_no_profile() -> None:
    always = RecurringProfile("Every day", weekdays=["mon", "tue", "wed", "thu", "fri", "sat", "sun"])
    profiles = [HolidayProfile("All time", date.min, date.max, [tag("xmas").disable()]), always]
    assert resolve_overrides(ORDERS, profiles, None) == DEFAULT_OVERRIDES


def test_active_profile_applies_its_matching_rules_and_names_itself() -> None:
    profiles = [christmas(tag("xmas").set(metric_multiplier=2.0), tag("quality").disable())]
    assert resolve_overrides(ORDERS, profiles, XMAS_DAY) == ResolvedOverrides(
        metric_multiplier=2.0, profiles=("Christmas",)
    )


def test_rules_that_do_not_match_leave_the_check_alone() -> None:
    profiles = [christmas(tag("xmas").set(metric_multiplier=2.0))]
    assert resolve_overrides(ERRORS, profiles, XMAS_DAY) == DEFAULT_OVERRIDES


def test_multipliers_compound_in_rule_order() -> None:
    profiles = [
        christmas(
            tag("volume").set(metric_multiplier=1.5),
            assertion("Volume", "orders-min").set(metric_multiplier=2.0),
        )
    ]
    assert resolve_overrides(ORDERS, profiles, XMAS_DAY) == ResolvedOverrides(
        metric_multiplier=3.0, profiles=("Christmas",)
    )


def test_last_matching_severity_wins_and_a_later_rule_without_severity_keeps_it() -> None:
    rules = [
        tag("volume").set(severity="warning"),
        tag("xmas").set(severity="critical"),
        check_id("orders-min").set(metric_multiplier=1.0),
    ]
    assert resolve_overrides(ORDERS, [christmas(*rules)], XMAS_DAY).severity == Severity.CRITICAL
    reversed_rules = [rules[1], rules[0], rules[2]]
    assert resolve_overrides(ORDERS, [christmas(*reversed_rules)], XMAS_DAY).severity == Severity.WARNING


def test_any_matching_disable_disables_whatever_comes_after() -> None:
    profiles = [
        christmas(check("Volume").disable(), tag("xmas").set(metric_multiplier=2.0, severity="warning"))
    ]
    assert resolve_overrides(ORDERS, profiles, XMAS_DAY) == ResolvedOverrides(
        disabled=True, metric_multiplier=2.0, severity=Severity.WARNING, profiles=("Christmas",)
    )


def test_several_active_profiles_apply_in_list_order() -> None:
    black_friday = HolidayProfile(
        "Black Friday week",
        date(2025, 11, 24),
        date(2025, 12, 21),
        [check("Volume").set(metric_multiplier=3.0, severity="warning")],
    )
    xmas = christmas(tag("xmas").set(metric_multiplier=2.0, severity="critical"))
    weekends = RecurringProfile("Weekends", weekdays=["sat", "sun"], rules=[tag("quality").disable()])
    saturday_in_both = date(2025, 12, 20)

    assert resolve_overrides(ORDERS, [black_friday, xmas, weekends], saturday_in_both) == ResolvedOverrides(
        metric_multiplier=6.0, severity=Severity.CRITICAL, profiles=("Black Friday week", "Christmas")
    )
    assert resolve_overrides(ORDERS, [xmas, black_friday, weekends], saturday_in_both) == ResolvedOverrides(
        metric_multiplier=6.0, severity=Severity.WARNING, profiles=("Christmas", "Black Friday week")
    )
    assert resolve_overrides(ERRORS, [black_friday, xmas, weekends], saturday_in_both) == ResolvedOverrides(
        disabled=True, profiles=("Weekends",)
    )
    assert resolve_overrides(ORDERS, [black_friday, xmas, weekends], date(2025, 12, 22)) == ResolvedOverrides(
        metric_multiplier=2.0, severity=Severity.CRITICAL, profiles=("Christmas",)
    )


def test_a_profile_is_named_once_however_many_of_its_rules_match() -> None:
    profiles = [christmas(tag("xmas").set(metric_multiplier=2.0), tag("volume").set(metric_multiplier=2.0))]
    assert resolve_overrides(ORDERS, profiles, XMAS_DAY).profiles == ("Christmas",)


def test_effective_severity_falls_back_to_the_checks_own() -> None:
    assert DEFAULT_OVERRIDES.effective_severity(Severity.CRITICAL) == Severity.CRITICAL
    downgraded = ResolvedOverrides(severity=Severity.WARNING)
    assert downgraded.effective_severity(Severity.CRITICAL) == Severity.WARNING


def test_the_design_documents_worked_example_passes_with_the_multiplier() -> None:
    profiles = [christmas(tag("xmas").set(metric_multiplier=2.0))]
    orders = 60
    overrides = resolve_overrides(ORDERS, profiles, XMAS_DAY)
    assert (orders > 100, orders * overrides.metric_multiplier > 100) == (False, True)
