"""Anomaly checks through a real stream: nine weeks of daily orders with a weekly pattern, US holidays and
planted spikes and drops, one landing file per two weeks, a restart in the middle.

The verdicts must be those of the accumulator alone on the same rows (benchmarks/anomaly.py's reference run),
flag exactly the planted days once the holidays are excused, and show in the results table, the metrics
table, ``streaming-dq metrics`` and the Prometheus series.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from test_gate_support import land, make_gate, run, stream, table

from benchmarks.anomaly import CHECK_ID, Year, day_rows, generate_year, run_year
from streaming_dq.checks.anomaly import AnomalyCheck
from streaming_dq.config.check_set import CheckSet
from streaming_dq.core.scope import WindowScope
from streaming_dq.exporter import GateMetrics
from streaming_dq.metrics.store import MetricsStore, metrics_table
from streaming_dq.profiles import check_id
from streaming_dq.profiles.public_holidays import PublicHolidayProfile, expand_profiles

pytestmark = pytest.mark.spark

CHECKS: list[dict[str, Any]] = [
    {"check": "null-check", "check-id": "amount-present", "columns": ["amount"]},
    {
        "check": "anomaly-check",
        "check-id": CHECK_ID,
        "metric": {"check": "row-count"},
        "scope": {"window": "1 day"},
        "baseline": {"windows": 4, "season": "weekly"},
        "band": {"relative": 0.25},
        "severity": "warning",
    },
]
HOLIDAYS = PublicHolidayProfile("US holidays", country="US", rules=[check_id(CHECK_ID).disable()])
WEEKS = 9


def small_year() -> Year:
    """Nine weeks of the benchmark's year at a quarter of its volume (about 25 orders a day)."""
    year = generate_year(5, days=7 * WEEKS, anomalies=4)
    year.counts = {d: max(round(n / 4), 1) for d, n in year.counts.items()}
    return year


def week_records(year: Year, week: int, first_id: int) -> list[dict[str, Any]]:
    days = sorted(year.counts)[week * 7 : (week + 1) * 7]
    stamps = [t for d in days for t in day_rows(d, year.counts[d])]
    return [
        {"id": first_id + i, "amount": 10.0 + i % 7, "ts": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "note": "ok"}
        for i, t in enumerate(stamps)
    ]


def land_weeks(year: Year, landing: Path, weeks: range, *, closing: bool = False) -> None:
    """One file per two weeks (one micro-batch each), modified a second apart (the file source takes them in
    that order); with ``closing``, one more row the day after the last day, in the last file (it closes it)."""
    for first in weeks[::2]:
        records = [
            r for w in range(first, min(first + 2, weeks[-1] + 1)) for r in week_records(year, w, w * 10_000)
        ]
        if closing and first + 2 > weeks[-1]:
            after = datetime.combine(max(year.counts) + timedelta(days=1), datetime.min.time(), UTC)
            records.append({"id": 1, "amount": 1.0, "ts": after.strftime("%Y-%m-%dT%H:%M:%SZ"), "note": "ok"})
        path = land(landing, f"weeks-{first:02d}", records)
        os.utime(path, (1_700_000_000 + first, 1_700_000_000 + first))


def test_a_stream_flags_the_planted_days_survives_a_restart_and_reports_everywhere(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    year = small_year()
    landing, registry = tmp_path / "landing", CollectorRegistry()
    kw: dict[str, Any] = dict(
        event_time="ts", profiles=[HOLIDAYS], metrics_table=str(tmp_path / "metrics"), timezone="UTC"
    )
    land_weeks(year, landing, range(0, 4))
    first = make_gate(tmp_path, CheckSet.from_dicts(CHECKS), routing="driver", **kw)
    run(first, stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")

    # a new gate object (a restarted job): its history comes from the metrics table
    land_weeks(year, landing, range(4, WEEKS), closing=True)
    metrics = GateMetrics("orders", registry=registry)
    second = make_gate(tmp_path, CheckSet.from_dicts(CHECKS), routing="driver", metrics=metrics, **kw)
    run(second, stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")

    rows = [r for r in table(tmp_path / "results").to_pylist() if r["kind"] == "window"]
    finals = {r["window_start"].date(): r for r in rows if r["status"] != "provisional"}
    assert len(finals) == len([r for r in rows if r["status"] != "provisional"]) == 7 * WEEKS  # each day once
    flagged = {d for d, r in finals.items() if r["status"] == "failed"}
    assert flagged == year.planted and len(flagged) == 4

    reference = run_year(year, _same_check(), profiles=expand_profiles([HOLIDAYS]))  # no Spark, no restart
    assert {
        d: (r["status"], r["expected_value"], r["band_low"], r["band_high"]) for d, r in finals.items()
    } == {d: (w.status, w.expected_value, w.band_low, w.band_high) for d, w in reference.items()}
    assert all(finals[d]["status"] == "skipped" and not finals[d]["reason"] for d in year.holidays)
    early = [r for d, r in finals.items() if d < year.start + timedelta(days=28) and d not in year.holidays]
    assert early and all(r["reason"].startswith("not enough history") for r in early)

    spike = min(year.spikes)
    store_rows = MetricsStore(tmp_path / "metrics").windows("orders", check=CHECK_ID).to_pylist()
    stored = {r["window_start"].date(): r for r in store_rows}
    assert stored[spike]["status"] == "failed" and stored[spike]["score"] > 0.25
    assert stored[spike]["raw_value"] == year.counts[spike] and stored[spike]["history"] == 4

    lines = metrics_table(tmp_path / "metrics", gate="orders", window="1 day", check=CHECK_ID)
    shown = {line["window_start"].date(): line for line in lines}
    assert shown[spike]["expected"] == finals[spike]["expected_value"] and shown[spike]["status"] == "failed"

    last = max(d for d in finals if finals[d]["expected_value"] is not None)

    def sample(name, **labels):
        return registry.get_sample_value(name, {"gate": "orders", "check": CHECK_ID, **labels})

    assert sample("streaming_dq_anomaly_expected") == finals[last]["expected_value"]
    assert sample("streaming_dq_anomaly_band", edge="high") == finals[last]["band_high"]
    after_restart = {d for d in flagged if d >= year.start + timedelta(weeks=4)}  # closed by the second gate
    assert sample("streaming_dq_anomalies_total", severity="warning") == len(after_restart) > 0


def _same_check() -> AnomalyCheck:
    return AnomalyCheck(
        CHECK_ID, "row-count", scope=WindowScope(window="1 day"), windows=4, season="weekly", band="relative",
        width=0.25, severity="warning",
    )  # fmt: skip


def test_a_batch_dataframe_reports_the_anomaly_check_as_not_judged(spark) -> None:  # type: ignore[no-untyped-def]
    from streaming_dq import BatchDQEngine

    df = spark.createDataFrame(
        [(1, 5.0, datetime(2025, 3, 1, tzinfo=UTC), "ok")],
        "id BIGINT, amount DOUBLE, ts TIMESTAMP, note STRING",
    )
    report = BatchDQEngine(CheckSet.from_dicts(CHECKS), event_time="ts").run_batch(df).report()
    line = next(line for line in report.lines if line.check_id == CHECK_ID)
    assert (line.check_type, line.status) == ("anomaly-check", "not-judged")


BATCH_CHECKS: list[dict[str, Any]] = [
    {"check": "null-check", "check-id": "amount-present", "columns": ["amount"]},
    {
        "check": "anomaly-check",
        "check-id": "batch-volume",
        "metric": {"check": "row-count"},
        "baseline": {"batches": 3},
        "band": {"relative": 0.25},
        "severity": "warning",
    },
]
SIZES = [20, 21, 19, 20, 60, 20, 22]  # the fifth batch is three times the usual


def test_a_batch_scoped_check_judges_each_batch_by_the_last_ones_across_a_restart(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from streaming_dq.metrics.baseline import judge_anomaly

    landing = tmp_path / "landing"
    for i, n in enumerate(SIZES):
        records = [
            {"id": i * 100 + k, "amount": 1.0, "ts": "2025-03-01T10:00:00Z", "note": "ok"} for k in range(n)
        ]
        os.utime(land(landing, f"b{i}", records), (1_700_000_000 + i, 1_700_000_000 + i))
        if i == 4:  # the first job stops after the spike; a new gate object reads the history back
            run(
                make_gate(tmp_path, CheckSet.from_dicts(BATCH_CHECKS)),
                stream(spark, landing, maxFilesPerTrigger="1"),
                tmp_path / "chk",
            )
    second = make_gate(tmp_path, CheckSet.from_dicts(BATCH_CHECKS))
    run(second, stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")

    rows = sorted(
        (r for r in table(tmp_path / "results").to_pylist() if r["check_id"] == "batch-volume"),
        key=lambda r: r["batch_id"],
    )
    assert [r["raw_value"] for r in rows] == SIZES
    expected = [
        judge_anomaly(float(n), [float(x) for x in SIZES[max(i - 3, 0) : i]], "relative", 0.25, min_history=3)
        for i, n in enumerate(SIZES)
    ]
    assert [(r["status"], r["expected_value"], r["band_high"]) for r in rows] == [
        (v.status, v.expected, v.high) for v in expected
    ]
    assert [r["status"] for r in rows] == ["skipped"] * 3 + ["passed", "failed", "passed", "passed"]
    assert rows[0]["reason"] == "not enough history: 0 of 3 windows"
    assert len(table(tmp_path / "quarantine")) == 0  # a warning: the spike's rows still pass
    judged = [c for o in second.metrics.batches for c in o.checks if c.check_id == "batch-volume"]  # type: ignore[union-attr]
    assert [(c.status, c.expected_value) for c in judged] == [
        ("passed", 20.0),
        ("passed", 20.0),
    ]  # 60 in both
