"""The catalog's pure logic, without a JVM: decisions from states, calendar arithmetic, types, report wording."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streaming_dq.checks.completeness import ColumnsAreCompleteCheck, CompletenessRatioCheck
from streaming_dq.checks.count import RowCountBetweenCheck
from streaming_dq.checks.freshness import FreshnessCheck, months_back
from streaming_dq.checks.metric import DistinctCountCheck, MeanCheck, NullCountCheck, StddevCheck, SumCheck
from streaming_dq.checks.null import NullCheck
from streaming_dq.checks.numeric import NumericBetweenCheck
from streaming_dq.checks.schema import normalize_type, type_matches
from streaming_dq.checks.uniqueness import UniqueKeyCheck
from streaming_dq.checks.wording import number
from streaming_dq.exceptions import ConfigError
from streaming_dq.states import CountState, HllState, MaxState, MomentsState, SumState


def moments(values: list[float]) -> MomentsState:
    state = MomentsState()
    for v in values:
        state = state.merge(MomentsState(1, v, 0.0))
    return state


def test_numbers_are_shown_without_a_trailing_zero() -> None:
    assert [number(v) for v in (1000.0, 3, 0.25, 2 / 3, None, -4.0)] == [
        "1000",
        "3",
        "0.25",
        "0.6667",
        "undefined",
        "-4",
    ]


@pytest.mark.parametrize(
    ("moment", "months", "expected"),
    [
        (datetime(2024, 3, 31, 8), 1, datetime(2024, 2, 29, 8)),
        (datetime(2024, 1, 15), 1, datetime(2023, 12, 15)),
        (datetime(2024, 2, 29), 12, datetime(2023, 2, 28)),
        (datetime(2024, 5, 10), 0, datetime(2024, 5, 10)),
    ],
)
def test_months_back_clamps_to_the_month_length(moment: datetime, months: int, expected: datetime) -> None:
    assert months_back(moment, months) == expected


def freshness(**kw: Any) -> FreshnessCheck:
    return FreshnessCheck("fresh", column="ts", reference_time=datetime(2024, 3, 31, 12), **kw)


def test_freshness_measures_the_age_of_the_newest_value_against_the_reference_time() -> None:
    now = datetime(2024, 3, 31, 12, tzinfo=UTC).timestamp()
    check = freshness(interval=2, period="hour")
    fresh = check.evaluate_states({"newest": MaxState(now - 7200)})
    stale = check.evaluate_states({"newest": MaxState(now - 7201)})
    assert (fresh.passed, fresh.metrics["value"], fresh.metrics["max_age_seconds"]) == (True, 7200.0, 7200.0)
    assert not stale.passed
    assert fresh.metrics["newest"] == "2024-03-31T10:00:00+00:00"


def test_freshness_months_are_calendar_months_and_no_value_fails() -> None:
    check = freshness(interval=1, period="month")
    assert check.max_age_seconds(check.now()) == 31 * 86400  # 2024-02-29 12:00 .. 2024-03-31 12:00
    empty = check.evaluate_states({"newest": MaxState(None)})
    assert not empty.passed and empty.metrics["value"] is None


def test_freshness_multiplier_scales_the_age() -> None:
    now = datetime(2024, 3, 31, 12, tzinfo=UTC).timestamp()
    check = freshness(interval=1, period="hour")
    assert check.evaluate_states({"newest": MaxState(now - 3000)}).passed
    assert not check.evaluate_states({"newest": MaxState(now - 3000)}, multiplier=2.0).passed


def test_completeness_is_one_for_an_empty_batch_and_reports_its_counts() -> None:
    check = CompletenessRatioCheck("c", column="a", min_ratio=0.8)
    empty = check.evaluate_states({"rows": CountState(0), "present": CountState(0)})
    assert empty.passed and empty.metrics["value"] == 1.0
    low = check.evaluate_states({"rows": CountState(10), "present": CountState(7)})
    assert not low.passed
    assert (low.metrics["value"], low.metrics["non_null_count"], low.metrics["row_count"]) == (0.7, 7, 10)


def test_columns_are_complete_reports_nulls_per_column() -> None:
    check = ColumnsAreCompleteCheck("cc", columns=["a", "b"])
    out = check.evaluate_states({"nulls0": CountState(0), "nulls1": CountState(3)})
    assert not out.passed
    assert out.metrics["null_counts"] == {"a": 0, "b": 3} and out.metrics["failed_columns"] == ["b"]


@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=0, max_size=30))
def test_mean_and_stddev_come_from_the_moments_state(values: list[float]) -> None:
    state = {"moments": moments(values)}
    mean = MeanCheck("m", column="a", ge=-1e9).metric_value(state)
    sd = StddevCheck("s", column="a", ge=0).metric_value(state)
    if not values:
        assert mean is None
    else:
        assert mean is not None and math.isclose(mean, sum(values) / len(values), rel_tol=1e-9, abs_tol=1e-9)
    if len(values) < 2:
        assert sd is None
    else:
        m = sum(values) / len(values)
        expected = math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))
        assert sd is not None and math.isclose(sd, expected, rel_tol=1e-6, abs_tol=1e-6)


@pytest.mark.parametrize(
    ("comparator", "value", "passed"),
    [
        ({"gt": 5}, 5.0, False),
        ({"ge": 5}, 5.0, True),
        ({"lt": 5}, 5.0, False),
        ({"le": 5}, 5.0, True),
        ({"eq": 5}, 5.0, True),
        ({"between": (1, 5)}, 5.0, True),
        ({"between": (1, 5)}, 5.5, False),
        ({"ge": 0}, None, False),
    ],
)
def test_metric_comparators(comparator: dict[str, Any], value: float | None, passed: bool) -> None:
    check = MeanCheck("m", column="a", **comparator)
    state = MomentsState() if value is None else MomentsState(1, value, 0.0)
    assert check.evaluate_states({"moments": state}).passed is passed


def test_metric_checks_need_exactly_one_comparator() -> None:
    with pytest.raises(ConfigError, match="exactly one comparator"):
        SumCheck("s", column="a", gt=1, lt=3)
    with pytest.raises(ConfigError, match="got none"):
        SumCheck("s", column="a")


def test_sum_of_no_values_is_zero_and_the_multiplier_scales_it() -> None:
    check = SumCheck("s", column="a", le=100)
    assert check.evaluate_states({"sum": SumState()}).metrics["value"] == 0.0
    assert check.evaluate_states({"sum": SumState(60.0, 3)}).passed
    scaled = check.evaluate_states({"sum": SumState(60.0, 3)}, multiplier=2.0)
    assert not scaled.passed and scaled.metrics["adjusted"] == 120.0


def test_null_and_distinct_counts_of_an_empty_batch_are_zero() -> None:
    assert NullCountCheck("n", column="a", eq=0).evaluate_states({"nulls": CountState(0)}).passed
    assert DistinctCountCheck("d", column="a", eq=0).evaluate_states({"hll": HllState()}).passed


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        ("integer", "int", True),
        ("long", "bigint", True),
        ("decimal(10, 2)", "decimal(10,2)", True),
        ("decimal", "decimal(10,0)", True),
        ("array", "array<string>", True),
        ("array<integer>", "array<int>", True),
        ("struct<long:long>", "struct<long:bigint>", True),
        ("map<string,long>", "map<string,bigint>", True),
        ("string", "int", False),
        ("array", "map<string,int>", False),
    ],
)
def test_schema_types_are_normalized(expected: str, actual: str, matches: bool) -> None:
    assert type_matches(normalize_type(expected), actual) is matches


def test_row_check_details_read_as_plain_words() -> None:
    assert (
        NullCheck("n", ["temperature"]).violation_details(12, 3000)
        == "Column 'temperature' has 12 null values (0.40%)"
    )
    assert (
        NullCheck("n", ["temperature"]).violation_details(0, 3000)
        == "Column 'temperature' has no null values"
    )
    assert (
        UniqueKeyCheck("u", ["station_id", "timestamp"]).violation_details(3, 300)
        == "Columns 'station_id, timestamp' have 3 duplicate rows (1.00%)"
    )
    check = NumericBetweenCheck("b", ["x"], 0, 10, inclusive=(True, False), treat_null_as_failure=True)
    assert check.violation_details(1, 4) == "Column 'x' has 1 value outside [0, 10) or NULL (25.00%)"


def test_aggregate_details_show_whole_numbers_without_a_decimal_point() -> None:
    check = RowCountBetweenCheck("rows", min_count=800, max_count=5000)
    result = check.wrap(check.evaluate_states({"rows": CountState(1000)}))
    assert check.details(result) == "Row count is 1000; expected between 800 and 5000"
    scaled = check.wrap(check.evaluate_states({"rows": CountState(1000)}, multiplier=0.5), multiplier=0.5)
    assert check.details(scaled) == "Row count is 1000 (x0.5 = 500); expected between 800 and 5000"
