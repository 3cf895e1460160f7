"""Per-batch window states built in Arrow: any split of a table, folded, equals the states of the whole.

JVM-free: the tables are built with pyarrow, as ``validate_to_arrow`` would return its ``extra_columns``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from streaming_dq.core.base_check import ObservableAggregateCheck
from streaming_dq.core.scope import WindowScope
from streaming_dq.metrics.calendar import UTC_MICROS, window_bounds
from streaming_dq.metrics.window_states import EVENT_TIME_COLUMN, batch_window_states, state_column_name
from streaming_dq.states import (
    CountState,
    HllState,
    MaxState,
    MinState,
    MomentsState,
    SumState,
)
from streaming_dq.states.keyed import ROWS_STATE, merge_named
from streaming_dq.states.spec import StateSpec

T0 = datetime(2025, 10, 24, tzinfo=UTC)


class AllKinds(ObservableAggregateCheck):
    """One state of every kind (specs without expressions: the test provides the per-row inputs)."""

    check_type = "all-kinds"

    def state_specs(self) -> dict[str, StateSpec]:
        return {
            "rows": StateSpec("count"),
            "big": StateSpec("count"),
            "total": StateSpec("sum"),
            "lo": StateSpec("min"),
            "hi": StateSpec("max"),
            "mom": StateSpec("moments"),
            "ids": StateSpec("hll"),
        }

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        return float(states["rows"].n)

    def accepts(self, value: float | None) -> bool:
        return True


def table_of(check_id: str, rows: list[tuple[datetime | None, float | None, int | None]]) -> pa.Table:
    ts = [r[0] for r in rows]
    xs = [r[1] for r in rows]
    ids = [r[2] for r in rows]
    col = lambda s: state_column_name(check_id, s)  # noqa: E731
    return pa.table(
        {
            EVENT_TIME_COLUMN: pa.array(ts, UTC_MICROS),
            col("big"): pa.array([x is not None and x > 0 for x in xs], pa.bool_()),
            col("total"): pa.array(xs, pa.float64()),
            col("lo"): pa.array(xs, pa.float64()),
            col("hi"): pa.array(xs, pa.float64()),
            col("mom"): pa.array(xs, pa.float64()),
            col("ids"): pa.array(ids, pa.int64()),
        }
    )


def oracle(rows: list[tuple[datetime | None, float | None, int | None]], size: timedelta, zone: str) -> dict:
    """States per window computed row by row in plain Python."""
    groups: dict[Any, list] = {}
    for r in rows:
        key = None if r[0] is None else window_bounds(r[0], size, zone)[0]
        groups.setdefault(key, []).append(r)
    out = {}
    for key, group in groups.items():
        xs = [r[1] for r in group if r[1] is not None]
        n = len(xs)
        mean = sum(xs) / n if n else 0.0
        out[key] = {
            ROWS_STATE: CountState(len(group)),
            "rows": CountState(len(group)),
            "big": CountState(sum(1 for x in xs if x > 0)),
            "total": SumState(float(sum(xs)), n),
            "lo": MinState(min(xs) if xs else None),
            "hi": MaxState(max(xs) if xs else None),
            "mom": MomentsState(n, mean, sum((x - mean) ** 2 for x in xs)) if n else MomentsState(),
            "distinct": len({r[2] for r in group if r[2] is not None}),
        }
    return out


def assert_close(got: Any, want: Any) -> None:
    if isinstance(want, MomentsState):
        scale = max(1.0, abs(want.mean), want.m2)
        assert got.n == want.n
        assert math.isclose(got.mean, want.mean, rel_tol=1e-9, abs_tol=1e-9 * scale)
        assert math.isclose(got.m2, want.m2, rel_tol=1e-9, abs_tol=1e-6 * scale)
    else:
        assert got == want  # counts, integer-valued sums, min and max: exact


ROWS = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(0, 4 * 86400 - 1).map(lambda s: T0 + timedelta(seconds=s))),
        st.one_of(st.none(), st.integers(-(10**6), 10**6).map(float)),
        st.one_of(st.none(), st.integers(0, 50)),
    ),
    max_size=120,
)


@settings(max_examples=80, deadline=None)
@given(
    ROWS,
    st.lists(st.integers(0, 120), max_size=6),
    st.sampled_from(["1 day", "6 hours", "1 hour"]),
    st.sampled_from(["UTC", "Europe/Berlin"]),
)
def test_folding_the_window_states_of_any_split_equals_the_whole(
    rows: list, cuts: list[int], window: str, zone: str
) -> None:
    check = AllKinds("k", scope=WindowScope(window=window))
    bounds = sorted({0, len(rows), *[min(c, len(rows)) for c in cuts]})
    folded: dict[Any, dict[str, Any]] = {}
    for a, b in itertools.pairwise(bounds):
        for key, states in batch_window_states([check], table_of("k", rows[a:b]), timezone=zone).items():
            folded[key] = merge_named(folded.get(key, {}), states)
    want = oracle(rows, check.scope.size, zone)  # type: ignore[union-attr]
    assert set(folded) == {("k", start) for start in want}
    for (_, start), states in folded.items():
        for name in (ROWS_STATE, "rows", "big", "total", "lo", "hi", "mom"):
            assert_close(states[name], want[start][name])
        assert states["ids"].value == want[start]["distinct"]  # HLL is exact at these cardinalities


def test_whole_table_in_one_call_matches_the_oracle_and_null_event_times_are_apart() -> None:
    rows = [(T0 + timedelta(hours=h), float(h), h % 3) for h in range(0, 60, 5)] + [
        (None, 7.0, 1),
        (None, None, None),
    ]
    got = batch_window_states([AllKinds("k", scope=WindowScope(window="1 day"))], table_of("k", rows))
    want = oracle(rows, timedelta(days=1), "UTC")
    assert sorted(got, key=lambda k: (k[1] is not None, k[1])) == [
        ("k", None),
        *[("k", T0 + timedelta(days=d)) for d in range(3)],
    ]
    assert got[("k", None)][ROWS_STATE] == CountState(2)
    for (_, start), states in got.items():
        assert_close(states["mom"], want[start]["mom"])
        assert states["total"] == want[start]["total"]


def test_checks_with_different_windows_are_grouped_by_their_own_size() -> None:
    day = AllKinds("day", scope=WindowScope(window="1 day"))
    hour = AllKinds("hour", scope=WindowScope(window="1 hour"))
    rows = [(T0 + timedelta(minutes=m), 1.0, 1) for m in (0, 30, 90)]
    t = table_of("day", rows)
    hour_inputs = table_of("hour", rows).drop_columns([EVENT_TIME_COLUMN])
    for name in hour_inputs.column_names:
        t = t.append_column(name, hour_inputs.column(name))
    got = batch_window_states([day, hour], t)
    assert {k: v[ROWS_STATE].n for k, v in got.items()} == {
        ("day", T0): 3,
        ("hour", T0): 2,
        ("hour", T0 + timedelta(hours=1)): 1,
    }


def test_empty_batch_gives_no_windows() -> None:
    check = AllKinds("k", scope=WindowScope(window="1 day"))
    assert batch_window_states([check], table_of("k", [])) == {}


def test_hll_states_of_strings_merge_with_each_other() -> None:
    class Distinct(AllKinds):
        def state_specs(self) -> dict[str, StateSpec]:
            return {"ids": StateSpec("hll")}

    check = Distinct("d", scope=WindowScope(window="1 day"))

    def table(ids: list[str | None]) -> pa.Table:
        return pa.table(
            {EVENT_TIME_COLUMN: pa.array([T0] * len(ids), UTC_MICROS), state_column_name("d", "ids"): ids}
        )

    a = batch_window_states([check], table([f"u{i}" for i in range(300)] + [None]))
    b = batch_window_states([check], table([f"u{i}" for i in range(200, 500)]))
    merged = merge_named(a[("d", T0)], b[("d", T0)])
    assert isinstance(merged["ids"], HllState)
    assert abs(merged["ids"].value - 500) <= 5
    assert a[("d", T0)][ROWS_STATE] == CountState(301)
