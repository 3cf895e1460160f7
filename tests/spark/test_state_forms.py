"""The two forms of a batch's aggregate states agree: Spark's grouped aggregation (the Spark router, the batch
engine) and the driver router's, computed in Arrow from the rows it collected. Random rows with NULLs, NaNs and
infinities, across a profile that splits the aggregate checks into override groups, with an event time that is
sometimes missing and malformed records."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streaming_dq.compat.versions import spark_minor
from streaming_dq.config.check_set import CheckSet
from streaming_dq.engine.arrow import collect
from streaming_dq.engine.plan import ValidationPlan
from streaming_dq.profiles import HolidayProfile, tag
from streaming_dq.states import HllState, empty_state

# compat: every Spark tier runs it too (#56), but 3.5's. There it found that the Arrow min of a NaN-only group
# was +inf (mended in MinState.arrow_columns); a group of a NULL and a NaN still gets NULL in the driver's form
# and NaN in Spark's on 3.5 (not yet mended: the closing note of the second stop of 2026-12-07)
pytestmark = [pytest.mark.spark, *([pytest.mark.compat] if spark_minor() != "3.5" else [])]

CHECKS = [
    {"check": "min-check", "check-id": "low", "column": "x", "ge": -100},
    {"check": "max-check", "check-id": "high", "column": "x", "le": 100, "tags": ["t"]},
    {"check": "sum-check", "check-id": "total", "column": "x", "le": 1000},
    {"check": "mean-check", "check-id": "mean", "column": "x", "le": 50, "tags": ["t"]},
    {"check": "stddev-check", "check-id": "spread", "column": "x", "le": 50},
    {"check": "null-count-check", "check-id": "nulls", "column": "x", "le": 3, "tags": ["t"]},
    {"check": "distinct-count-check", "check-id": "kinds", "column": "k", "ge": 1},
    {"check": "completeness-ratio-check", "check-id": "complete", "column": "k", "min-ratio": 0.5},
    {"check": "row-count-min-check", "check-id": "volume", "min-count": 2, "tags": ["t"]},
    {"check": "null-check", "check-id": "x-present", "columns": ["x"]},
]
PROFILE = HolidayProfile("Holiday", date(2025, 12, 24), date(2025, 12, 25), rules=[tag("t").disable()])
START = datetime(2025, 12, 22, tzinfo=UTC)
SCHEMA = "x DOUBLE, k STRING, ts TIMESTAMP, _corrupt_record STRING"

values = st.one_of(
    st.none(), st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -1.5]), st.floats(-200, 200)
)
rows = st.lists(
    st.tuples(
        values,
        st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
        st.one_of(st.none(), st.integers(0, 24 * 5)),
        st.booleans(),
    ),
    max_size=30,
)


def _record(state: Any) -> dict[str, Any]:
    """A state as comparable values: floats to 9 digits (NaN equal to NaN), a sketch by its estimate."""
    if isinstance(state, HllState):
        return {"estimate": state.value}
    out: dict[str, Any] = {}
    for key, value in state.to_record().items():
        if isinstance(value, float):
            value = "nan" if math.isnan(value) else round(value, 9)
        out[key] = value
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=rows)
def test_spark_and_arrow_states_agree(spark: Any, data) -> None:
    plan = ValidationPlan(
        CheckSet.from_dicts(CHECKS), profiles=[PROFILE], event_time="ts", malformed_column="_corrupt_record"
    )
    records = [
        (x, k, None if h is None else START + timedelta(hours=h), "{bad" if bad else None)
        for x, k, h, bad in data
    ]
    df = spark.createDataFrame(records, SCHEMA)
    layout = plan.layout
    grouped = layout.read_grouped(
        plan.annotate(df).groupBy(*layout.group_keys(windows=False)).agg(*layout.grouped_columns(windows=False))
        .collect()
    )  # fmt: skip
    collected = collect(plan, df).aggregates

    assert collected.states, "every observed slot has a state"
    for (check_id, group), states in collected.states.items():
        for name, state in states.items():
            expected = grouped.states.get((check_id, group), {}).get(name, empty_state(state.kind))
            assert _record(state) == _record(expected), (check_id, group, name, records)
    assert collected.counts == grouped.counts
    assert collected.event_time == grouped.event_time


def test_nan_sorts_above_every_number_in_both_forms(spark: Any) -> None:
    """Spark's ``max`` of a column holding a NaN is NaN and its ``min`` leaves the NaN out; Arrow's kernels
    leave NaN out of both, so the driver router's form says which of its rows held one. Merging batches keeps
    the same order."""
    from streaming_dq.states import MaxState, MinState

    plan = ValidationPlan(CheckSet.from_dicts(CHECKS[:2]))
    df = spark.createDataFrame([(1.0, "a", None, None), (math.nan, "b", None, None)], SCHEMA)
    states = collect(plan, df).aggregates.states
    assert math.isnan(states[("high", 0)]["max"].extreme)
    assert states[("low", 0)]["min"].extreme == 1.0
    assert math.isnan(MaxState(2.0).merge(MaxState(math.nan)).extreme)
    assert math.isnan(MaxState(math.nan).merge(MaxState(2.0)).extreme)
    assert MinState(math.nan).merge(MinState(2.0)).extreme == 2.0
    assert MinState(2.0).merge(MinState(math.nan)).extreme == 2.0
    assert math.isnan(MinState(math.nan).merge(MinState(math.nan)).extreme)
