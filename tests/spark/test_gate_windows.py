"""Window-scoped checks through a real stream: daily states accumulated across batches, closed by the
watermark, judged under the profiles of the window's date, and neither lost nor double-counted on restart."""

from __future__ import annotations

import os
from datetime import date, timedelta
from pathlib import Path
from statistics import mean

import pytest
from test_gate_support import land, make_gate, run, stream, table

from streaming_dq.config.check_set import CheckSet
from streaming_dq.metrics.store import MetricsStore
from streaming_dq.profiles import HolidayProfile, tag

pytestmark = pytest.mark.spark

CHECKS = [
    {"check": "null-check", "check-id": "amount-present", "columns": ["amount"]},
    {
        "check": "row-count-min-check",
        "check-id": "daily-volume",
        "min-count": 50,
        "tags": ["volume"],
        "scope": {"window": "1 day"},
    },
    {
        "check": "mean-check",
        "check-id": "daily-basket",
        "column": "amount",
        "between": [0, 1000],
        "scope": {"window": "1 day"},
    },
]
CHRISTMAS = HolidayProfile(
    "Christmas", date(2025, 12, 20), date(2026, 1, 5), rules=[tag("volume").set(metric_multiplier=2.0)]
)


def orders(start: int, n: int, day: int, *, amount_base: float = 10.0) -> list[dict]:  # type: ignore[type-arg]
    return [
        {
            "id": start + i,
            "amount": amount_base + i,
            "ts": f"2025-12-{day:02d}T{8 + i % 12:02d}:{i % 60:02d}:00Z",
            "note": "ok",
        }
        for i in range(n)
    ]


def window_results(path) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """The last reported verdict per (check, window start): final results overwrite provisional ones."""
    rows = table(path).sort_by([("batch_id", "ascending"), ("validation_ts", "ascending")]).to_pylist()
    out = {}
    for r in rows:
        if r["kind"] == "window":
            out[(r["check_id"], r["window_start"].date())] = (
                r["status"],
                r["raw_value"],
                r["adjusted_value"],
            )
    return out


def test_daily_windows_accumulate_close_and_survive_a_restart(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    landing = tmp_path / "landing"
    first = [orders(0, 30, 18), orders(100, 30, 18), orders(200, 35, 20), orders(300, 10, 22)]
    for i, records in enumerate(first):
        land(landing, f"f{i}", records)
    kw = dict(
        event_time="ts",
        profiles=[CHRISTMAS],
        metrics_table=str(tmp_path / "metrics"),
    )
    gate = make_gate(tmp_path, CheckSet.from_dicts(CHECKS), **kw)
    run(gate, stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")

    got = window_results(tmp_path / "results")
    # Dec 18: two batches of 30 merged into one day of 60; its mean is the mean of the raw amounts.
    assert got[("daily-volume", date(2025, 12, 18))] == ("passed", 60.0, 60.0)
    day18 = [o["amount"] for o in first[0] + first[1]]
    status, raw_mean, _ = got[("daily-basket", date(2025, 12, 18))]
    assert status == "passed" and raw_mean == pytest.approx(mean(day18), rel=1e-12)
    # Dec 19 had no order at all: a closed empty day fails.
    assert got[("daily-volume", date(2025, 12, 19))][0] == "failed"
    # Dec 20 is a holiday: 35 orders x 2.0 = 70 >= 50 passes.
    assert got[("daily-volume", date(2025, 12, 20))] == ("passed", 35.0, 70.0)
    # Dec 22 is still open (the watermark is the latest event time): provisional.
    assert got[("daily-volume", date(2025, 12, 22))][0] == "provisional"

    # Restart: a new gate object on the same checkpoint rebuilds its windows from the metrics table.
    land(landing, "f4", orders(400, 45, 22))
    land(landing, "f5", orders(500, 5, 24))
    gate2 = make_gate(tmp_path, CheckSet.from_dicts(CHECKS), **kw)
    run(gate2, stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")

    got = window_results(tmp_path / "results")
    assert got[("daily-volume", date(2025, 12, 22))] == ("passed", 55.0, 110.0)  # 10 + 45, a holiday day
    assert got[("daily-volume", date(2025, 12, 24))][0] == "provisional"
    finals = [
        r
        for r in table(tmp_path / "results").to_pylist()
        if r["kind"] == "window" and r["status"] != "provisional"
    ]
    keys = [(r["check_id"], r["window_start"]) for r in finals]
    assert len(keys) == len(set(keys))  # every closed window was judged exactly once
    lifetime = MetricsStore(tmp_path / "metrics").lifetime("orders", check="daily-volume")
    assert (
        lifetime["daily-volume"]["rows"].n == sum(len(r) for r in first) + 50 == 155
    )  # no loss, no double count
    outcomes = [o for o in gate2.metrics.batches if o.windows]  # type: ignore[union-attr]
    assert outcomes and all(w.window == "1 day" for o in outcomes for w in o.windows)


def test_reopen_rejudges_a_closed_day_within_its_horizon_and_counts_later_rows_late(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    landing = tmp_path / "landing"
    batches = [
        orders(0, 30, 18),
        orders(100, 35, 20),  # closes Dec 18 and 19
        orders(200, 10, 21),  # closes Dec 20 with 35 rows
        orders(300, 5, 20),  # 5 late rows, the watermark 1 day past Dec 20's end: reopened, 40 rows
        orders(400, 10, 25),  # closes Dec 21 ... 24
        orders(500, 3, 20),  # 3 late rows, the watermark 4 days past: beyond the 2-day horizon, counted
    ]
    for i, records in enumerate(batches):
        path = land(landing, f"f{i}", records)
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))  # the file source takes files by age
    gate = make_gate(
        tmp_path, CheckSet.from_dicts(CHECKS), event_time="ts", metrics_table=str(tmp_path / "metrics"),
        late_data="reopen", reopen_horizon=timedelta(days=2),
    )  # fmt: skip
    run(gate, stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")

    finals = [
        (r["batch_id"], r["raw_value"])
        for r in table(tmp_path / "results").sort_by([("batch_id", "ascending")]).to_pylist()
        if r["kind"] == "window" and r["check_id"] == "daily-volume" and r["status"] != "provisional"
        and r["window_start"].date() == date(2025, 12, 20)
    ]  # fmt: skip
    assert finals == [(2, 35.0), (3, 40.0)]  # judged at its close, again when reopened, not after the horizon
    outcomes = gate.metrics.batches  # type: ignore[union-attr]
    assert [o.rows_late for o in outcomes] == [0, 0, 0, 5, 0, 3]
    late = [
        r for r in MetricsStore(tmp_path / "metrics").read("orders")
        if r["scope"] == "late" and r["check_id"] == "daily-volume" and r["state_name"] == "__rows__"
    ]  # fmt: skip
    assert [(r["batch_id"], r["window_start"].date(), r["n"]) for r in late] == [(5, date(2025, 12, 20), 3)]
    # Every row was still routed: window checks report, they never drop or re-route rows.
    assert table(tmp_path / "pass").num_rows + table(tmp_path / "quarantine").num_rows == 93


def test_the_late_data_settings_reach_the_gates_window_accumulator(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.runtime.fleet import GateRun

    orders_yaml = Path(__file__).resolve().parents[2] / "jobs" / "orders" / "orders.yaml"
    text = (orders_yaml.read_text().replace("late-data: count ", "late-data: reopen")
            .replace("  late-data: reopen", "  late-data: reopen\n  reopen-horizon: 30 days", 1))  # fmt: skip
    assert "reopen-horizon: 30 days" in text
    (tmp_path / "orders.yaml").write_text(text, encoding="utf-8")
    config = load_gate_config(tmp_path / "orders.yaml")
    gate = GateRun(config).build_gate()
    assert gate.tracker is not None
    acc = gate.tracker.accumulator
    assert (acc.late_data, acc.reopen_horizon, acc.allowed_lateness) == (
        "reopen", timedelta(days=30), timedelta(hours=1)
    )  # fmt: skip


def test_the_end_of_input_judges_the_open_windows_once_and_a_restart_keeps_them_closed(
    spark, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """A finite input's last window is judged only when the input ends (#27): ``close_windows`` after an
    available-now run gives each open window one final verdict, in the results and the metrics table; a second
    call, or a new gate on the same checkpoint, gives none again; later rows of a closed day are late, and the
    windows they open are closed by the next end of input."""
    landing = tmp_path / "landing"
    land(landing, "f0", orders(0, 60, 18))
    land(landing, "f1", orders(100, 20, 19))  # Dec 19 ends the input: only a later event time would close it
    kw = dict(event_time="ts", metrics_table=str(tmp_path / "metrics"))
    gate = make_gate(tmp_path, CheckSet.from_dicts(CHECKS), **kw)
    run(gate, stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")
    assert window_results(tmp_path / "results")[("daily-volume", date(2025, 12, 19))][0] == "provisional"

    update = gate.close_windows(spark)
    assert update is not None
    assert sorted((w.check_id, w.window_start.date(), w.status) for w in update.closed) == [
        ("daily-basket", date(2025, 12, 19), "passed"),
        ("daily-volume", date(2025, 12, 19), "failed"),  # 20 < 50
    ]
    got = window_results(tmp_path / "results")
    assert got[("daily-volume", date(2025, 12, 19))] == ("failed", 20.0, 20.0)
    assert sorted((w.check_id, w.status) for w in gate.metrics.windows) == [  # type: ignore[union-attr]
        ("daily-basket", "passed"),
        ("daily-volume", "failed"),
    ]
    assert gate.close_windows(spark) is None  # this end of input is closed: nothing twice

    # A restart on the same checkpoint: the closed day stays closed, its later rows are late, and Dec 20 is
    # judged at the next end of input, once.
    land(landing, "f2", orders(200, 5, 19))
    land(landing, "f3", orders(300, 70, 20))
    gate2 = make_gate(tmp_path, CheckSet.from_dicts(CHECKS), **kw)
    assert gate2.close_windows(spark) is None  # nothing new since the last end of input
    run(gate2, stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")
    assert sum(o.rows_late for o in gate2.metrics.batches) == 5  # type: ignore[union-attr]
    closed = gate2.close_windows(spark)
    assert closed is not None
    assert [(w.check_id, w.window_start.date(), w.status) for w in closed.closed] == [
        ("daily-basket", date(2025, 12, 20), "passed"),
        ("daily-volume", date(2025, 12, 20), "passed"),
    ]
    finals = [
        (r["check_id"], r["window_start"])
        for r in table(tmp_path / "results").to_pylist()
        if r["kind"] == "window" and r["status"] != "provisional"
    ]
    assert len(finals) == len(set(finals)) == 6  # Dec 18, 19, 20 for two checks: each judged exactly once
    assert window_results(tmp_path / "results")[("daily-volume", date(2025, 12, 19))] == (
        "failed",
        20.0,
        20.0,
    )
