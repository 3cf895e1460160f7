"""Merge laws of the mergeable states: identity, associativity, commutativity, split-equals-whole."""

from __future__ import annotations

import itertools
import math
from functools import reduce

from hypothesis import given, settings
from hypothesis import strategies as st

from streaming_dq.states import (
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

    from streaming_dq.states import HLL_LG_K, HllState

    def sketch(ids: range) -> HllState:
        s = hll_sketch(HLL_LG_K, tgt_hll_type.HLL_4)
        for i in ids:
            s.update(f"id-{i}")
        return HllState(bytes(s.serialize_compact()))

    merged = sketch(range(0, 6000)).merge(sketch(range(4000, 10000))).merge(HllState())
    assert merged.value is not None
    assert abs(merged.value - 10000) / 10000 < 0.05
    assert HllState().value == 0.0


@settings(max_examples=40)
@given(values, values)
def test_kll_states_of_few_values_merge_to_the_exact_quantiles(a: list, b: list) -> None:  # type: ignore[type-arg]
    from streaming_dq.states import KllState, kll_from_values

    merged = kll_from_values(a).merge(kll_from_values(b)).merge(KllState())
    present = sorted(x for x in [*a, *b] if x is not None)
    assert merged.n == len(present)
    assert state_from_record("kll", merged.to_record()) == merged
    for q in (0.0, 0.1, 0.5, 0.9, 1.0):
        # below k (200) values a KLL sketch keeps them all: the smallest value with rank >= q
        want = present[max(math.ceil(q * len(present)) - 1, 0)] if present else None
        assert merged.quantile(q) == want, q


def test_kll_states_merge_many_batches_within_the_rank_error() -> None:
    import random

    from streaming_dq.states import kll_from_values

    rng = random.Random(7)
    batches = [[rng.gauss(100, 15) for _ in range(5000)] for _ in range(20)]
    merged = reduce(lambda acc, b: acc.merge(kll_from_values(b)), batches[1:], kll_from_values(batches[0]))
    everything = sorted(x for b in batches for x in b)
    assert merged.n == len(everything)
    for q in (0.05, 0.5, 0.95, 0.99):
        got = merged.quantile(q)
        assert got is not None
        rank = sum(1 for x in everything if x <= got) / len(everything)
        assert abs(rank - q) < 0.0165 * 2, (q, rank)  # twice the sketch's normalized rank error (k = 200)
