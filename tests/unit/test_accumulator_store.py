"""The metrics store on a real Delta table (delta-rs, read back from disk): explicit nullable schema, one
commit per batch with its app transaction, replays that write nothing, restore after a restart, queries."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable

from streaming_dq.checks.count import RowCountMinCheck
from streaming_dq.core.base_check import ObservableAggregateCheck
from streaming_dq.core.scope import WindowScope
from streaming_dq.metrics.accumulator import WindowAccumulator
from streaming_dq.metrics.calendar import UTC_MICROS, max_event_time
from streaming_dq.metrics.store import METRICS_SCHEMA, MetricsStore, batch_records, metrics_table
from streaming_dq.metrics.window_states import EVENT_TIME_COLUMN, batch_window_states
from streaming_dq.metrics.window_update import WindowUpdate
from streaming_dq.states import CountState, MomentsState
from streaming_dq.states.keyed import ROWS_STATE
from streaming_dq.states.spec import StateSpec
from streaming_dq.tables import read_table

T0 = datetime(2025, 12, 24, tzinfo=UTC)
DAY = WindowScope(window="1 day")


class MeanOf(ObservableAggregateCheck):
    check_type = "mean-check"

    def state_specs(self) -> dict[str, StateSpec]:
        return {"x": StateSpec("moments")}

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        return states["x"].value

    def accepts(self, value: float | None) -> bool:
        return True


def orders() -> RowCountMinCheck:
    return RowCountMinCheck("orders-per-day", min_count=3, scope=DAY)


def feed(acc: WindowAccumulator, batch_id: int, hours: list[int | None]) -> WindowUpdate:
    ts = pa.array([None if h is None else T0 + timedelta(hours=h) for h in hours], UTC_MICROS)
    states = batch_window_states(list(acc.checks.values()), pa.table({EVENT_TIME_COLUMN: ts}))
    return acc.update(batch_id, states, max_event_time(ts))


def rows_on_disk(path: Path) -> int:
    return read_table(str(path)).num_rows


def test_table_is_created_explicitly_nullable_with_utc_timestamps(tmp_path: Path) -> None:
    store = MetricsStore(tmp_path / "m")
    assert store.write(batch_records(gate="g", app_id="a", batch_id=0), "a", 0)
    dt = DeltaTable(str(tmp_path / "m"))
    schema = pa.schema(dt.schema().to_arrow())
    assert schema.names == METRICS_SCHEMA.names
    assert all(f.nullable for f in schema)
    assert schema.field("window_start").type == pa.timestamp("us", tz="UTC")
    assert (dt.protocol().min_reader_version, dt.protocol().min_writer_version) == (1, 2)
    assert dt.transaction_version("a") == 0


def test_a_replayed_batch_id_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "m"
    acc = WindowAccumulator("g", [orders()])
    update = feed(acc, 0, [1, 2, None])
    rows = batch_records(gate="g", app_id="g-q1", batch_id=0, update=update)
    assert MetricsStore(path).write(rows, "g-q1", 0)
    before = rows_on_disk(path)
    assert before == rows.num_rows > 0
    fresh = MetricsStore(path)  # as after a restart: nothing cached
    assert fresh.committed("g-q1", 0)
    assert not fresh.write(rows, "g-q1", 0)
    assert not fresh.write(rows, "g-q1", -1)
    assert rows_on_disk(path) == before
    assert fresh.write(batch_records(gate="g", app_id="g-q1", batch_id=1), "g-q1", 1)  # empty: still commits
    assert fresh.write(rows, "g-q2", 0)  # a new checkpoint: a new app id restarts at batch 0
    assert rows_on_disk(path) == 2 * before
    assert len(DeltaTable(str(path)).history()) == 4  # create + three commits


def test_restore_from_the_delta_table_after_a_restart_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    # Day 1 closes in batch 3 (hour 25 moves the watermark past midnight); hour 3 in batch 4 is late.
    batches = [[0, 1, 2], [5, 6, None], [20, 23], [25, 2], [26, 30, 3], [49]]
    checks = [orders()]
    reference = WindowAccumulator("g", checks)
    expected = [feed(reference, b, hours) for b, hours in enumerate(batches)]

    store = MetricsStore(tmp_path / "m")
    acc = WindowAccumulator("g", checks)
    got: list[WindowUpdate] = []
    for b, hours in enumerate(batches):
        if b == 4:  # killed after batch 3 committed, before the checkpoint: Spark replays batch 3
            acc = WindowAccumulator("g", checks)
            acc.restore(MetricsStore(tmp_path / "m").read("g"))
            assert MetricsStore(tmp_path / "m").committed("g-q1", 3)  # the gate skips the replay
        update = feed(acc, b, hours)
        assert store.write(
            store.records_for_batch(gate="g", app_id="g-q1", batch_id=b, update=update), "g-q1", b
        )
        got.append(update)

    finals = lambda us: [(w.window_start, w.status, w.raw_value) for u in us for w in u.closed]  # noqa: E731
    assert (
        finals(got)
        == finals(expected)
        == [
            (T0, "passed", 8.0),
            (T0 + timedelta(days=1), "passed", 3.0),
        ]
    )
    assert acc.lifetime == reference.lifetime
    assert acc.lifetime["orders-per-day"]["rows"] == CountState(14)
    assert (acc.late_rows_total, acc.null_event_time_rows_total) == (1, 1)


def test_batch_states_of_every_observable_check_are_written_per_override_group(tmp_path: Path) -> None:
    types = {"rows": "row-count-min-check", "mean": "mean-check"}
    states = {
        ("rows", 0): {"rows": CountState(4)},
        ("rows", 1): {"rows": CountState(6)},
        ("mean", 0): {"x": MomentsState(2, 3.0, 2.0)},
    }
    store = MetricsStore(tmp_path / "m")
    rows = store.records_for_batch(gate="g", app_id="a", batch_id=0, states=states, check_types=types)
    assert [
        (r["check_id"], r["check_type"], r["override_group"], r["state_name"], r["n"])
        for r in rows.to_pylist()
    ] == [
        ("mean", "mean-check", 0, "x", 2),
        ("rows", "row-count-min-check", 0, "rows", 4),
        ("rows", "row-count-min-check", 1, "rows", 6),
    ]
    assert store.write(rows, "a", 0)
    states2 = {("rows", 0): {"rows": CountState(5)}, ("mean", 0): {"x": MomentsState(2, 5.0, 2.0)}}
    assert store.write(
        batch_records(gate="g", app_id="a", batch_id=1, states=states2, check_types=types), "a", 1
    )
    assert store.batches("g", check="rows").column("n").to_pylist() == [4, 6, 5]
    assert store.lifetime("g") == {
        "rows": {"rows": CountState(15)},
        "mean": {"x": MomentsState(4, 4.0, 8.0)},
    }
    assert metrics_table(tmp_path / "m", gate="g") == [
        {"check": "mean", "window": "lifetime", "window_start": None, "window_end": None, "raw": 4.0,
         "adjusted": None, "multiplier": None, "status": None, "profiles": ()},
        {"check": "rows", "window": "lifetime", "window_start": None, "window_end": None, "raw": 15.0,
         "adjusted": None, "multiplier": None, "status": None, "profiles": ()},
    ]  # fmt: skip


def test_metrics_table_shows_the_latest_verdict_of_every_window(tmp_path: Path) -> None:
    store = MetricsStore(tmp_path / "m")
    acc = WindowAccumulator("g", [orders()])
    for b, hours in enumerate([[1, 2], [3, 30], [31]]):
        store.write(
            store.records_for_batch(gate="g", app_id="a", batch_id=b, update=feed(acc, b, hours)), "a", b
        )
    lines = metrics_table(tmp_path / "m", gate="g", window="1 days", check="orders-per-day")
    assert [(line["window_start"], line["raw"], line["status"]) for line in lines] == [
        (T0, 3.0, "passed"),
        (T0 + timedelta(days=1), 2.0, "provisional"),
    ]
    assert metrics_table(tmp_path / "m", gate="g", window="1 hour") == []
    assert metrics_table(tmp_path / "m", gate="other", window="1 day") == []
    lifetime = metrics_table(tmp_path / "m", gate="g", checks=[orders()])
    assert [(line["check"], line["raw"]) for line in lifetime] == [("orders-per-day", 5.0)]
    assert store.lifetime("g")["orders-per-day"][ROWS_STATE] == CountState(5)


def test_reading_a_missing_table_gives_nothing(tmp_path: Path) -> None:
    store = MetricsStore(tmp_path / "missing")
    assert store.read("g") == []
    assert not store.committed("a", 0)
    assert metrics_table(tmp_path / "missing", gate="g") == []


def test_a_table_from_before_the_anomaly_columns_rolls_up_and_takes_them_on_its_next_write(
    tmp_path: Path,
) -> None:
    """A metrics table an older version wrote (without the anomaly columns) is rolled up (in its own
    columns) and then written (the schema is merged), without an error or a lost state."""
    from deltalake import write_deltalake

    older = pa.schema(
        [f for f in METRICS_SCHEMA if f.name not in ("expected_value", "in_baseline", "reason")]
    )
    path = tmp_path / "metrics"
    acc = WindowAccumulator("orders", [orders()], timezone="UTC")
    for b, hours in enumerate([[1, 2], [3], [26]]):
        rows = batch_records(gate="orders", app_id="orders:q", batch_id=b, update=feed(acc, b, hours))
        write_deltalake(str(path), rows.select(older.names).cast(older), mode="append")
    store = MetricsStore(path)
    lifetime = store.lifetime("orders")
    rows_before, rows_after = store.roll_up("orders", before=datetime.now(UTC) + timedelta(days=1))
    assert rows_after < rows_before and store.lifetime("orders") == lifetime
    update = feed(acc, 3, [27])
    assert store.write(
        batch_records(gate="orders", app_id="orders:q", batch_id=3, update=update), "orders:q", 3
    )
    assert {"expected_value", "in_baseline", "reason"} <= set(DeltaTable(str(path)).schema().to_arrow().names)
    assert store.lifetime("orders")["orders-per-day"]["rows"].n == 5
