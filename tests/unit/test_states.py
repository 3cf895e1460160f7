"""Merge laws of the mergeable states: identity, associativity, commutativity, split-equals-whole."""

from __future__ import annotations

import itertools
import math
from functools import reduce

from hypothesis import given, settings
from hypothesis import strategies as st

from streaming_dq.metrics.states import (
    CountState,
    MaxState,
    MinState,
    MomentsState,
    SumState,
    empty_state,
    state_from_record,
)

values = st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False)), max_size=60)


def states_of(xs: list[float | None]) -> dict[str, object]:
    """The oracle: each state computed directly from the values."""
    present = [x for x in xs if x is not None]
    n = len(present)
    mean = sum(present) / n if n else 0.0
    return {
        "count": CountState(len(xs)),
        "sum": SumState(float(sum(present)), n),
        "min": MinState(min(present) if present else None),
        "max": MaxState(max(present) if present else None),
        "moments": MomentsState(n, mean, sum((x - mean) ** 2 for x in present)),
    }


def close(a: object, b: object) -> bool:
    if isinstance(a, MomentsState) and isinstance(b, MomentsState):
        scale = max(1.0, abs(b.mean), b.m2)
        return (
            a.n == b.n
            and math.isclose(a.mean, b.mean, rel_tol=1e-9, abs_tol=1e-9 * scale)
            and math.isclose(a.m2, b.m2, rel_tol=1e-9, abs_tol=1e-6 * scale)
        )
    if isinstance(a, SumState) and isinstance(b, SumState):
        return a.n == b.n and math.isclose(a.total, b.total, rel_tol=1e-9, abs_tol=1e-6)
    return a == b


@settings(max_examples=150)
@given(values, st.lists(st.integers(0, 60), max_size=5))
def test_folding_any_split_equals_the_whole(xs: list[float | None], cuts: list[int]) -> None:
    bounds = sorted({0, len(xs), *[min(c, len(xs)) for c in cuts]})
    parts = [xs[a:b] for a, b in itertools.pairwise(bounds)] or [[]]
    whole = states_of(xs)
    for kind in whole:
        folded = reduce(lambda acc, part: acc.merge(states_of(part)[kind]), parts, empty_state(kind))
        assert close(folded, whole[kind]), kind


@given(values, values, values)
def test_merge_is_associative_and_commutative(a: list, b: list, c: list) -> None:  # type: ignore[type-arg]
    sa, sb, sc = states_of(a), states_of(b), states_of(c)
    for kind in sa:
        left = sa[kind].merge(sb[kind]).merge(sc[kind])  # type: ignore[attr-defined]
        right = sa[kind].merge(sb[kind].merge(sc[kind]))  # type: ignore[attr-defined]
        assert close(left, right), kind
        assert close(sa[kind].merge(sb[kind]), sb[kind].merge(sa[kind])), kind  # type: ignore[attr-defined]


@given(values)
def test_identity_and_empty_batch_change_nothing(xs: list[float | None]) -> None:
    for kind, state in states_of(xs).items():
        assert state.merge(empty_state(kind)) == state  # type: ignore[attr-defined]
        assert empty_state(kind).merge(state) == state
        assert close(state.merge(states_of([])[kind]), state)  # type: ignore[attr-defined]


@given(values)
def test_records_round_trip(xs: list[float | None]) -> None:
    for kind, state in states_of(xs).items():
        assert state_from_record(kind, state.to_record()) == state  # type: ignore[attr-defined]


def test_hll_states_merge_to_the_distinct_count_within_sketch_error() -> None:
    from datasketches import hll_sketch, tgt_hll_type

    from streaming_dq.metrics.states import HLL_LG_K, HllState

    def sketch(ids: range) -> HllState:
        s = hll_sketch(HLL_LG_K, tgt_hll_type.HLL_4)
        for i in ids:
            s.update(f"id-{i}")
        return HllState(bytes(s.serialize_compact()))

    merged = sketch(range(0, 6000)).merge(sketch(range(4000, 10000))).merge(HllState())
    assert merged.value is not None
    assert abs(merged.value - 10000) / 10000 < 0.05
    assert HllState().value == 0.0
