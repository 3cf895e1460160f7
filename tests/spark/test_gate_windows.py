"""Window-scoped checks through a real stream: daily states accumulated across batches, closed by the
watermark, judged under the profiles of the window's date, and neither lost nor double-counted on restart."""

from __future__ import annotations

from datetime import date
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
    rows = table(path).sort_by([("batch_id", "ascending")]).to_pylist()
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
