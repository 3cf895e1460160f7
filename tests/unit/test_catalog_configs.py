"""The catalog's configs, without a JVM: every registered check builds, SparkDQ YAML loads, errors name fields."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from streaming_dq import CheckSet
from streaming_dq.config.factory import CheckFactory
from streaming_dq.config.registry import CheckConfigRegistry
from streaming_dq.core.base_check import BaseAggregateCheck, BaseRowCheck, ObservableAggregateCheck
from streaming_dq.exceptions import ConfigError
from tests.spark.test_checks_formats import NEW_ROW_CHECK_NAMES

DOC = Path(__file__).resolve().parents[2] / "docs" / "checks.md"

#: The smallest valid parameters of every registered check (check-id and check are added by the tests).
MINIMAL: dict[str, dict[str, Any]] = {
    "null-check": {"columns": ["a"]},
    "not-null-check": {"columns": ["a"]},
    "exactly-one-not-null-check": {"columns": ["a", "b"]},
    "numeric-min-check": {"columns": ["a"], "min-value": 0},
    "numeric-max-check": {"columns": ["a"], "max-value": 10},
    "numeric-between-check": {"columns": ["a"], "min-value": 0, "max-value": 10},
    "date-min-check": {"columns": ["d"], "min-value": "2024-01-01"},
    "date-max-check": {"columns": ["d"], "max-value": "2024-12-31"},
    "date-between-check": {"columns": ["d"], "min-value": "2024-01-01", "max-value": "2024-12-31"},
    "timestamp-min-check": {"columns": ["t"], "min-value": "2024-01-01 00:00:00"},
    "timestamp-max-check": {"columns": ["t"], "max-value": "2024-12-31 23:59:59"},
    "timestamp-between-check": {
        "columns": ["t"],
        "min-value": "2024-01-01 00:00:00",
        "max-value": "2024-12-31 23:59:59",
    },
    "string-min-length-check": {"column": "s", "min-length": 1},
    "string-max-length-check": {"column": "s", "max-length": 5},
    "string-length-between-check": {"column": "s", "min-length": 1, "max-length": 5},
    "regex-match-check": {"column": "s", "pattern": "^[a-z]+$"},
    "is-contained-in-check": {"allowed-values": {"s": ["x", "y"]}},
    "is-not-contained-in-check": {"forbidden-values": {"s": ["z"]}},
    "column-less-than-check": {"column": "a", "limit": "b"},
    "column-greater-than-check": {"column": "b", "limit": "a"},
    "expression-check": {"expression": "a < b"},
    "unique-key-check": {"columns": ["a"]},
    "foreign-key-row-check": {"column": "a", "reference-dataset": "ref", "reference-column": "id"},
    "row-count-min-check": {"min-count": 1},
    "row-count-max-check": {"max-count": 10},
    "row-count-between-check": {"min-count": 1, "max-count": 10},
    "row-count-exact-check": {"expected-count": 3},
    "completeness-ratio-check": {"column": "a", "min-ratio": 0.9},
    "columns-are-complete-check": {"columns": ["a"]},
    "freshness-check": {"column": "t", "interval": 1, "period": "day"},
    "distinct-ratio-check": {"column": "a", "min-ratio": 0.5},
    "unique-ratio-check": {"column": "a", "min-ratio": 0.5},
    "unique-rows-check": {},
    "schema-check": {"expected-schema": {"a": "int"}},
    "column-presence-check": {"required-columns": ["a"]},
    "foreign-key-check": {"column": "a", "reference-dataset": "ref", "reference-column": "id"},
    "mean-check": {"column": "a", "gt": 0},
    "sum-check": {"column": "a", "ge": 0},
    "min-check": {"column": "a", "ge": 0},
    "max-check": {"column": "a", "le": 10},
    "stddev-check": {"column": "a", "lt": 5},
    "null-count-check": {"column": "a", "eq": 0},
    "rows-where-check": {"where": "a IS NULL", "unit": "percent", "not-between": [1, 5]},
    "sql-metric-check": {"query": "SELECT avg(a) FROM {{ input_view }}", "ne": 0},
    "distinct-count-check": {"column": "a", "between": [1, 100]},
    "anomaly-check": {"metric": {"check": "row-count"}, "scope": {"window": "1 day"}},
    "empty-check": {"columns": ["s"]},
    "null-or-empty-check": {"columns": ["s"]},
    "empty-array-check": {"columns": ["tags"]},
    "null-or-empty-array-check": {"columns": ["tags"]},
    "string-case-check": {"columns": ["s"], "case": "upper"},
    "email-format-check": {"columns": ["s"]},
    "url-format-check": {"columns": ["s"]},
    "uuid-format-check": {"columns": ["s"]},
    "json-format-check": {"columns": ["s"]},
    "json-keys-check": {"columns": ["s"], "keys": ["id"]},
    "ipv4-format-check": {"columns": ["s"]},
    "ipv6-format-check": {"columns": ["s"]},
    "ipv4-in-cidr-check": {"columns": ["s"], "cidr-blocks": ["10.0.0.0/8"]},
    "equal-to-check": {"columns": ["a"], "value": 1},
    "not-equal-to-check": {"columns": ["a"], "value": 0},
    "numeric-not-between-check": {"columns": ["a"], "min-value": 0, "max-value": 10},
    "decimal-places-check": {"columns": ["a"], "max-places": 2},
    "date-format-check": {"columns": ["s"]},
    "timestamp-format-check": {"columns": ["s"]},
    "not-in-future-check": {"columns": ["t"]},
    "not-in-near-future-check": {"columns": ["t"], "offset": "1 hour"},
    "older-than-check": {"columns": ["t"], "days": 1},
    "country-code-check": {"columns": ["s"]},
    "currency-code-check": {"columns": ["s"]},
    "language-code-check": {"columns": ["s"]},
    "subdivision-code-check": {"columns": ["s"]},
    "aggregate-check": {"function": "avg", "column": "a", "ge": 0},
    "ipv6-in-cidr-check": {"columns": ["s"], "cidr-blocks": ["2001:db8::/32"]},
    "json-schema-check": {"columns": ["s"], "schema": "id INT NOT NULL"},
    "mad-outlier-check": {"column": "a"},
    "reference-match-check": {"columns": ["a"], "reference-dataset": "ref"},
    "window-gaps-check": {"column": "t", "window": "1 hour"},
    "group-aggregate-check": {"function": "count", "column": "*", "group-by": ["a"], "le": 1},
    "variance-check": {"column": "a", "le": 4},
    "correlation-check": {"columns": ["a", "b"], "ge": 0.5},
    "quantile-check": {"column": "a", "quantile": 0.95, "le": 100},
    "compliance-ratio-check": {"predicate": "a > 0", "min-ratio": 0.9},
    "in-distribution-check": {"column": "s", "expected": {"x": 0.5, "y": 0.5}, "max-distance": 0.1},
    "entropy-check": {"column": "s", "ge": 0.5},
    "distinct-values-check": {"column": "s", "subset-of": ["x", "y"]},
    "reference-aggregate-check": {"function": "count", "column": "*", "reference-dataset": "ref"},
    "sql-query-check": {"query": "SELECT a > 1 AS condition FROM {{ input_view }}"},
    "zscore-outlier-check": {"column": "a"},
    "regex-not-match-check": {"column": "s", "pattern": "^test"},
    "castable-check": {"columns": ["s"], "data-type": "int"},
    "luhn-check": {"columns": ["s"]},
    "monotonic-check": {"column": "a", "order-by": "t"},
}

ROW_LEVEL = {
    "null-check",
    "not-null-check",
    "exactly-one-not-null-check",
    "numeric-min-check",
    "numeric-max-check",
    "numeric-between-check",
    "date-min-check",
    "date-max-check",
    "date-between-check",
    "timestamp-min-check",
    "timestamp-max-check",
    "timestamp-between-check",
    "string-min-length-check",
    "string-max-length-check",
    "string-length-between-check",
    "regex-match-check",
    "is-contained-in-check",
    "is-not-contained-in-check",
    "column-less-than-check",
    "column-greater-than-check",
    "expression-check",
    "unique-key-check",
    "foreign-key-row-check",
    *NEW_ROW_CHECK_NAMES,  # the value-rule checks (their oracle test lists them)
    "group-aggregate-check",
    "ipv6-in-cidr-check",
    "json-schema-check",
    "mad-outlier-check",
    "reference-match-check",
    "window-gaps-check",
    "reference-aggregate-check",
    "sql-query-check",
    "zscore-outlier-check",
    "regex-not-match-check",
    "castable-check",
    "luhn-check",
    "monotonic-check",
}
CLASSIC = {
    "in-distribution-check",
    "sql-metric-check",
    "entropy-check",
    "distinct-values-check",
    "aggregate-check",
    "distinct-ratio-check",
    "unique-ratio-check",
    "unique-rows-check",
    "schema-check",
    "column-presence-check",
    "foreign-key-check",
}


def build(name: str, **extra: Any) -> Any:
    return CheckFactory.from_dict({"check": name, "check-id": f"id-{name}", **MINIMAL[name], **extra})


def test_every_registered_check_has_a_minimal_example() -> None:
    assert set(MINIMAL) == set(CheckConfigRegistry.names())


@pytest.mark.parametrize("name", sorted(MINIMAL))
def test_every_registered_check_builds_from_a_minimal_dict(name: str) -> None:
    check = build(name, tags=["nightly"], group="orders")
    assert check.check_type == name
    assert check.check_id == f"id-{name}"
    assert check.tags == frozenset({"nightly"}) and check.group == "orders"
    description = check.description()
    assert description["check-id"] == f"id-{name}" and description["severity"] == "critical"
    assert "tags" not in description["parameters"] and "check_id" not in description["parameters"]
    if name in ROW_LEVEL:
        assert isinstance(check, BaseRowCheck)
    else:
        assert isinstance(check, BaseAggregateCheck)
        assert isinstance(check, ObservableAggregateCheck) == (name not in CLASSIC)


def test_parameters_are_reported_from_the_constructor() -> None:
    check = build("numeric-between-check", inclusive=[True, False])
    assert check.description()["parameters"] == {
        "columns": ["a"],
        "min_value": 0,
        "max_value": 10,
        "inclusive": [True, False],
        "treat_null_as_failure": False,
    }


SPARKDQ_YAML = """\
checks:
  - check: null-check
    check-id: id-present
    columns: [id]
  - check: numeric-between-check
    check-id: amount-range
    columns: [amount]
    min-value: 0
    max-value: 10000
    inclusive: [true, true]
    severity: warning
  - check: numeric-min-check
    check_id: qty-positive
    columns: [qty]
    min_value: 0
  - check: date-between-check
    check-id: order-date
    columns: [order_date]
    min-value: 2024-01-01
    max-value: "2024-12-31"
  - check: timestamp-max-check
    check-id: not-future
    columns: [created_at]
    max-value: 2030-01-01 00:00:00
  - check: string-length-between-check
    check-id: code-length
    column: code
    min-length: 2
    max-length: 8
  - check: regex-match-check
    check-id: email
    column: email
    pattern: "^[^@]+@[^@]+$"
    ignore-case: true
    treat-null-as-failure: true
  - check: is-contained-in-check
    check-id: status
    allowed-values:
      status: [new, paid, shipped]
      channel: [web, shop]
  - check: is-not-contained-in-check
    check-id: no-test-users
    forbidden-values:
      user: [test, demo]
  - check: column-less-than-check
    check-id: start-before-end
    smaller-column: start_time
    greater-column: end_time
    inclusive: true
  - check: column-greater-than-check
    check-id: price-margin
    column: price
    limit: cost * 1.2
  - check: exactly-one-not-null-check
    check-id: one-contact
    columns: [phone, email]
  - check: row-count-between-check
    check-id: volume
    min-count: 1
    max-count: 1000000
  - check: completeness-ratio-check
    check-id: email-complete
    column: email
    min-ratio: 0.95
  - check: columns-are-complete-check
    check-id: keys-complete
    columns: [id, customer_id]
  - check: freshness-check
    check-id: fresh
    column: created_at
    interval: 2
    period: hour
  - check: distinct-ratio-check
    check-id: distinct-customers
    column: customer_id
    min-ratio: 0.1
  - check: unique-ratio-check
    check-id: unique-ids
    column: id
    min-ratio: 1.0
  - check: unique-rows-check
    check-id: no-duplicates
    subset-columns: [id]
  - check: schema-check
    check-id: schema
    expected-schema: {id: bigint, amount: "decimal(10, 2)", tags: "array<string>"}
    strict: false
  - check: column-presence-check
    check-id: columns
    required-columns: [id, amount]
  - check: foreign-key-check
    check-id: known-customer
    column: customer_id
    reference-dataset: customers
    reference-column: id
  - check: mean-check
    check-id: basket
    column: amount
    between: [20, 60]
"""


def test_a_sparkdq_yaml_file_loads_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(SPARKDQ_YAML, encoding="utf-8")
    checks = CheckSet.from_yaml(path)
    assert len(checks) == 23
    by_id = {c.check_id: c for c in checks}
    assert by_id["amount-range"].severity.value == "warning"
    assert by_id["amount-range"].inclusive == (True, True)
    assert by_id["qty-positive"].min_value == 0
    assert by_id["order-date"].min_value == "2024-01-01"  # an unquoted YAML date
    assert by_id["not-future"].max_value == "2030-01-01 00:00:00"  # an unquoted YAML datetime
    assert by_id["status"].columns == ["status", "channel"]
    assert (by_id["start-before-end"].column, by_id["start-before-end"].limit) == ("start_time", "`end_time`")
    assert by_id["schema"].expected_schema == {
        "id": "bigint",
        "amount": "decimal(10,2)",
        "tags": "array<string>",
    }
    assert [c.check_id for c in checks.get_row_checks()][:3] == ["id-present", "amount-range", "qty-positive"]


@pytest.mark.parametrize(
    ("raw", "field_path", "message"),
    [
        (
            {"check": "numeric-between-check", "columns": ["a"], "min-value": 5, "max-value": 1},
            "checks[0].max-value",
            "must not be below min-value",
        ),
        (
            {"check": "numeric-min-check", "columns": ["a"], "min-valu": 1},
            "checks[0].min-value",
            "unknown key 'min-valu' (did you mean 'min-value'?)",
        ),
        ({"check": "null-check", "columns": []}, "checks[0].columns", "at least 1 item"),
        (
            {"check": "date-min-check", "columns": ["d"], "min-value": "soon"},
            "checks[0].min-value",
            "YYYY-MM-DD",
        ),
        (
            {
                "check": "timestamp-between-check",
                "columns": ["t"],
                "min-value": "2024-02-01",
                "max-value": "2024-01-01",
            },
            "checks[0].max-value",
            "must not be before",
        ),
        ({"check": "completeness-ratio-check", "column": "a", "min-ratio": 1.5}, "checks[0].min-ratio", "1"),
        (
            {"check": "is-contained-in-check", "allowed-values": {"a": []}},
            "checks[0].allowed-values",
            "no values",
        ),
        (
            {"check": "schema-check", "expected-schema": {"a": "integr"}},
            "checks[0].expected-schema",
            "integr",
        ),
        (
            {"check": "freshness-check", "column": "t", "interval": 0, "period": "day"},
            "checks[0].interval",
            "0",
        ),
        (
            {"check": "freshness-check", "column": "t", "interval": 1, "period": "fortnight"},
            "checks[0].period",
            "'day'",
        ),
        ({"check": "mean-check", "column": "a", "between": [9, 1]}, "checks[0].between", "must not exceed"),
        ({"check": "mean-check", "column": "a", "gt": 1, "lt": 9}, "checks[0].lt", "exactly one comparator"),
        ({"check": "sum-check", "column": "a"}, "checks[0]", "got none"),
        ({"check": "string-min-length-check", "column": "s", "min-length": -1}, "checks[0].min-length", "0"),
    ],
)
def test_bad_parameters_name_the_field_path(raw: dict[str, Any], field_path: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        CheckSet.from_dicts([{"check-id": "x", **raw}], source="checks.yaml")
    error = info.value
    paths = [e.field_path for e in getattr(error, "errors", [error])]
    assert field_path in paths
    assert error.source == "checks.yaml"


def test_an_unknown_parameter_is_refused_with_its_name() -> None:
    with pytest.raises(ConfigError) as info:
        CheckSet.from_dicts([{"check": "null-check", "check-id": "x", "columns": ["a"], "colour": "red"}])
    assert info.value.field_path == "checks[0].colour"


def test_legacy_and_current_column_comparison_forms_cannot_be_mixed() -> None:
    raw = {
        "check": "column-less-than-check",
        "check-id": "x",
        "column": "a",
        "limit": "b",
        "greater-column": "c",
    }
    with pytest.raises(ConfigError, match="either limit or greater-column") as info:
        CheckSet.from_dicts([raw])
    assert info.value.field_path == "checks[0].greater-column"


def test_the_greater_than_legacy_form_compares_the_greater_column() -> None:
    check = CheckFactory.from_dict(
        {
            "check": "column-greater-than-check",
            "check-id": "g",
            "greater-column": "end",
            "smaller-column": "start",
        }
    )
    assert (check.column, check.limit) == ("end", "`start`")


def test_freshness_accepts_plural_periods_and_a_fixed_reference_time() -> None:
    check = build("freshness-check", period="hours", **{"reference-time": "2024-05-01T12:00:00"})
    assert check.period == "hour"
    assert check.reference_time == datetime(2024, 5, 1, 12, tzinfo=UTC)


def _documented_names() -> list[str]:
    return re.findall(r"^### `([a-z0-9-]+)`", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)


def test_every_registered_check_is_documented() -> None:
    documented = _documented_names()
    missing = sorted(set(CheckConfigRegistry.names()) - set(documented))
    assert not missing, f"registered checks missing from docs/checks.md: {missing}"
    assert len(documented) == len(set(documented)), "a check is documented twice"
    unknown = sorted(set(documented) - set(CheckConfigRegistry.names()))
    assert not unknown, f"docs/checks.md documents unregistered checks: {unknown}"


@pytest.mark.parametrize("name", sorted(MINIMAL))
def test_every_documented_check_states_level_parameters_null_semantics_and_an_example(name: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"### `{name}`", 1)[1].split("\n### ", 1)[0]
    assert re.search(r"\*\*Level\*\*: (row|aggregate)", section), name
    assert "**NULL**" in section, name
    assert f"check: {name}" in section, name
    for param in MINIMAL[name]:
        assert f"`{param}`" in section, f"{name}: parameter {param} not documented"
