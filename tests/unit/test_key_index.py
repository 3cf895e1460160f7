"""The driver's index of remembered keys against a brute-force reading of the same records, and the Arrow judge
of duplicates on hand-built collected rows (no JVM: the equality of the two routers' tables is held by
tests/spark/test_stream_duplicates.py)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streaming_dq.checks.stream_keys import FIRST_SEEN_COLUMN, KEYS_COLUMN, key_helper
from streaming_dq.checks.stream_keys_arrow import Earlier, hash_words, judge
from streaming_dq.checks.uniqueness import UniqueKeyCheck
from streaming_dq.exceptions import InternalError
from streaming_dq.sink.key_index import ENTRY_BYTES, INDEX_COLUMNS, KeyIndex

T0 = datetime(2026, 1, 1, tzinfo=UTC)
UTC_TS = pa.timestamp("us", tz="UTC")


def _hash(key: str) -> bytes:
    return hashlib.md5(key.encode()).digest()


def _micros(t: datetime) -> int:
    return int(t.timestamp() * 1_000_000)


def _records(rows: list[tuple[str, str, int, int, int, str]]) -> pa.Table:
    """(check, key, last minute, first minute, batch, app) -> keys-table records (the index's columns)."""
    return pa.table(
        {
            "check_id": [r[0] for r in rows],
            "key_hash": pa.array([_hash(r[1]) for r in rows], pa.binary()),
            "last_event_time": pa.array([T0 + timedelta(minutes=r[2]) for r in rows], UTC_TS),
            "event_time": pa.array([T0 + timedelta(minutes=r[3]) for r in rows], UTC_TS),
            "batch_id": pa.array([r[4] for r in rows], pa.int64()),
            "app_id": [r[5] for r in rows],
        }
    ).select(list(INDEX_COLUMNS))


record = st.tuples(
    st.sampled_from(["c1", "c2"]),
    st.sampled_from(["a", "b", "c", "d", "e"]),
    st.integers(0, 100),
    st.integers(0, 100),
    st.integers(0, 5),
    st.sampled_from(["app-1", "app-2"]),
)


@settings(max_examples=150, deadline=None)
@given(
    batches=st.lists(st.lists(record, max_size=6), max_size=8),
    cutoff=st.integers(-1, 60),
    exclude=st.tuples(st.sampled_from(["app-1", "app-2"]), st.integers(0, 5)),
)
def test_the_index_answers_what_a_scan_of_its_records_answers(batches, cutoff, exclude):
    index = KeyIndex(["c1", "c2"])
    for rows in batches:  # one segment per batch, merged as they come
        index.add(_records(rows))
    index.prune(_micros(T0 + timedelta(minutes=cutoff)))
    index.judging(*exclude)
    everything = [r for rows in batches for r in rows]
    kept = [r for r in everything if r[2] >= cutoff and (r[5], r[4]) != exclude]
    assert len(index) == sum(1 for r in everything if r[2] >= cutoff)
    assert index.nbytes == len(index) * ENTRY_BYTES
    for check in ("c1", "c2"):
        keys = ["a", "b", "c", "d", "e", "z"]
        hi, lo = hash_words(pa.array([_hash(k) for k in keys], pa.binary()))
        last = index.last_seen(check, hi, lo)
        for k, got in zip(keys, last, strict=True):
            mine = [r for r in kept if r[0] == check and r[1] == k]
            want = (
                _micros(T0 + timedelta(minutes=max(r[2] for r in mine))) if mine else np.iinfo(np.int64).min
            )
            assert got == want, (check, k)
        found = [i for i, k in enumerate(keys) if any(r[0] == check and r[1] == k for r in kept)]
        times, batch_ids, apps = index.first_occurrences(check, hi[found], lo[found])
        for i, t, b, a in zip(found, times, batch_ids, apps, strict=True):
            mine = [r for r in kept if r[0] == check and r[1] == keys[i]]
            earliest = min((r[3], r[4]) for r in mine)
            assert (t, b) == (_micros(T0 + timedelta(minutes=earliest[0])), earliest[1])
            assert a in {r[5] for r in mine if (r[3], r[4]) == earliest}


def test_a_key_the_index_does_not_hold_has_no_first_occurrence():
    index = KeyIndex(["c1"])
    hi, lo = hash_words(pa.array([_hash("a")], pa.binary()))
    with pytest.raises(InternalError, match="c1"):
        index.first_occurrences("c1", hi, lo)


class _Seen:
    """The index behind :func:`judge`, with origins as the keys table would give them."""

    def __init__(self, index: KeyIndex) -> None:
        self.index = index

    def last_seen(self, check_id, hi, lo):
        return self.index.last_seen(check_id, hi, lo)

    def first_of(self, check_id, hi, lo):
        t, b, apps = self.index.first_occurrences(check_id, hi, lo)
        return Earlier(t, b, pa.array(apps), pa.array([f"from-{x}" for x in b]))


def _collected(keys: list[str | None], minutes: list[int]) -> pa.Table:
    """Rows as the driver router collects them (the helper columns of one check and the placeholders)."""
    n = len(keys)
    return pa.table(
        {
            "order_id": keys,
            key_helper("t"): pa.array([T0 + timedelta(minutes=m) for m in minutes], UTC_TS),
            key_helper("rh"): pa.array(range(n), pa.int64()),
            key_helper("k", 0): [f'["{k}"]' for k in keys],
            key_helper("h", 0): pa.array([_hash(f'["{k}"]') for k in keys], pa.binary()),
            key_helper("e", 0): [k is not None for k in keys],
            key_helper("o", 0): [f"offset={i}" for i in range(n)],
            key_helper("b0_", 0): pa.array(range(n), pa.int64()),
            FIRST_SEEN_COLUMN: pa.nulls(n),
            KEYS_COLUMN: pa.nulls(n),
        }
    )


def test_the_arrow_judge_points_at_the_earlier_batch_then_at_the_first_row_here():
    check = UniqueKeyCheck("once", ["order_id"], horizon=timedelta(minutes=30), order_by=["offset"])
    index = KeyIndex(["once"])
    index.add(_records([("once", '["a"]', 5, 1, 3, "app-1")]))
    index.judging("app-1", 4)
    # a: remembered (last seen at minute 5); b twice here (the second is a duplicate); c once; None unjudged;
    # c at minute 0, more than the horizon behind the watermark (minute 31): too late; b again 40 minutes
    # later (beyond the 30-minute horizon of its previous sighting)
    table = _collected(["a", "b", "b", "c", None, "c", "b"], [10, 2, 3, 4, 5, 0, 43])
    judged = judge(table, [check], _Seen(index), {"once": T0 + timedelta(minutes=31)}, "app-1", 4)
    pointers = judged.table.column(FIRST_SEEN_COLUMN).to_pylist()
    assert [p and (p[0]["batch_id"], p[0]["origin"], p[0]["late"]) for p in pointers] == [
        (3, "from-3", False),
        None,
        (4, "offset=1", False),
        None,
        None,
        (None, None, True),
        None,
    ]
    assert pointers[0][0]["event_time"] == T0 + timedelta(minutes=1)
    assert pointers[2][0]["event_time"] == T0 + timedelta(minutes=2)
    assert judged.fired["once"].tolist() == [True, False, True, False, False, True, False]
    records = [r for rs in judged.table.column(KEYS_COLUMN).to_pylist() if rs for r in rs]
    got = {(r["key"], r["event_time"], r["last_event_time"], r["origin"]) for r in records}
    assert got == {
        ('["a"]', T0 + timedelta(minutes=10), T0 + timedelta(minutes=10), "offset=0"),
        ('["b"]', T0 + timedelta(minutes=2), T0 + timedelta(minutes=43), "offset=1"),
        ('["c"]', T0 + timedelta(minutes=4), T0 + timedelta(minutes=4), "offset=3"),
    }
    assert not any(c.startswith("__dq_key_") for c in judged.table.column_names)
