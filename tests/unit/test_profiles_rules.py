"""Selectors, rules and the rule builders (JVM-free)."""

from __future__ import annotations

import math

import pytest

from streaming_dq.core.severity import Severity
from streaming_dq.exceptions import ConfigError, InvalidSeverityLevelError
from streaming_dq.profiles import (
    CheckIdSelector,
    CheckTarget,
    GroupSelector,
    Rule,
    RuleBuilder,
    TagSelector,
    assertion,
    check,
    check_id,
    tag,
)

ORDERS = CheckTarget("orders-min", group="Volume", tags=frozenset({"volume", "xmas"}))
ERRORS = CheckTarget("error-rate", group="Quality", tags=frozenset({"quality"}))
LONE = CheckTarget("lonely")


def test_check_id_selector_matches_only_that_check() -> None:
    selector = CheckIdSelector("orders-min")
    assert [selector.matches(t) for t in (ORDERS, ERRORS, LONE)] == [True, False, False]


def test_group_selector_matches_every_check_of_the_group() -> None:
    selector = GroupSelector("Volume")
    other_in_group = CheckTarget("orders-max", group="Volume")
    assert [selector.matches(t) for t in (ORDERS, other_in_group, ERRORS, LONE)] == [True, True, False, False]


def test_group_selector_with_check_id_matches_one_check_of_the_group() -> None:
    selector = GroupSelector("Volume", "orders-min")
    same_id_other_group = CheckTarget("orders-min", group="Quality")
    other_in_group = CheckTarget("orders-max", group="Volume")
    assert [selector.matches(t) for t in (ORDERS, same_id_other_group, other_in_group)] == [
        True,
        False,
        False,
    ]


def test_tag_selector_matches_checks_carrying_the_tag() -> None:
    selector = TagSelector("xmas")
    assert [selector.matches(t) for t in (ORDERS, ERRORS, LONE)] == [True, False, False]


def test_check_target_from_check_reads_id_group_and_tags() -> None:
    class Grouped:
        check_id = "orders-min"
        group = "Volume"
        tags = ("xmas", "volume")

    class Bare:
        check_id = "lonely"
        tags = None

    assert CheckTarget.from_check(Grouped()) == ORDERS
    assert CheckTarget.from_check(Bare()) == LONE


def test_check_target_freezes_any_iterable_of_tags() -> None:
    assert CheckTarget("c", tags={"a"}) == CheckTarget("c", tags=frozenset({"a"}))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: CheckIdSelector(""), "check-id"),
        (lambda: GroupSelector("  "), "check"),
        (lambda: GroupSelector("Volume", ""), "check-id"),
        (lambda: TagSelector(""), "tag"),
    ],
)
def test_selectors_refuse_empty_names(make: object, field: str) -> None:
    with pytest.raises(ConfigError, match="non-empty string") as info:
        make()  # type: ignore[operator]
    assert info.value.field_path == field


def test_builders_make_the_documented_selectors() -> None:
    assert check_id("orders-min").selector == CheckIdSelector("orders-min")
    assert check("Volume").selector == GroupSelector("Volume")
    assert assertion("Volume", "orders-min").selector == GroupSelector("Volume", "orders-min")
    assert tag("xmas").selector == TagSelector("xmas")
    assert repr(tag("xmas")) == "RuleBuilder(TagSelector(tag='xmas'))"
    assert isinstance(tag("xmas"), RuleBuilder)


def test_disable_builds_a_disabling_rule() -> None:
    assert check("Volume").disable() == Rule(GroupSelector("Volume"), disabled=True)


def test_set_builds_multiplier_and_normalised_severity() -> None:
    assert tag("xmas").set(metric_multiplier=2.0) == Rule(TagSelector("xmas"), metric_multiplier=2.0)
    assert tag("non-critical").set(severity="Warning") == Rule(
        TagSelector("non-critical"), severity=Severity.WARNING
    )
    assert tag("x").set() == Rule(TagSelector("x"))


def test_rule_defaults_change_nothing() -> None:
    rule = Rule(TagSelector("x"))
    assert (rule.disabled, rule.metric_multiplier, rule.severity) == (False, 1.0, None)


def test_rule_normalises_an_int_multiplier_and_a_string_severity() -> None:
    rule = Rule(TagSelector("x"), metric_multiplier=2, severity="CRITICAL")  # type: ignore[arg-type]
    assert (rule.metric_multiplier, rule.severity) == (2.0, Severity.CRITICAL)
    assert isinstance(rule.metric_multiplier, float)


@pytest.mark.parametrize("bad", [0, -1.5, math.inf, math.nan, True, "2"])
def test_rule_refuses_a_multiplier_that_is_not_finite_and_positive(bad: object) -> None:
    with pytest.raises(ConfigError, match="metric multiplier must be") as info:
        tag("x").set(metric_multiplier=bad)  # type: ignore[arg-type]
    assert info.value.field_path == "metric-multiplier"


def test_rule_refuses_an_unknown_severity() -> None:
    with pytest.raises(InvalidSeverityLevelError, match="invalid severity 'P3'"):
        tag("x").set(severity="P3")
    with pytest.raises(InvalidSeverityLevelError, match="invalid severity 'P3'"):
        Rule(TagSelector("x"), severity="P3")  # type: ignore[arg-type]


def test_rule_refuses_a_non_bool_disabled_and_a_non_selector() -> None:
    with pytest.raises(ConfigError, match="disable must be true or false"):
        Rule(TagSelector("x"), disabled="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a rule needs a selector"):
        Rule("xmas")  # type: ignore[arg-type]


def test_rules_are_frozen_and_hashable() -> None:
    rule = tag("xmas").set(metric_multiplier=2.0)
    assert {rule, tag("xmas").set(metric_multiplier=2.0)} == {rule}
    with pytest.raises(AttributeError):
        rule.disabled = True  # type: ignore[misc]
