"""``python -m benchmarks.html_report [--batches 10000] [--rounds 3]``: the report of a gate with many batches
(#45): how long ``streaming-dq report`` takes to read the tables and write the HTML, how big the file is, and
how long headless Chromium takes to open it.

The tables are made up, written with delta-rs through the gate's own codecs: ``--batches`` committed batches
15 minutes of event time apart (10,000: 104 days), 10 row checks each (a few failing now and then), a day
window verdict per day, a profile on every seventh day, a maintenance run every 500 batches; and a quarantine
table of 20 rows per batch in 100 appends. Per round: wall and CPU seconds of reading the tables into the
model (``gate_report``), of writing the HTML (``render``), the file's size, and Chromium's time from
navigation to the load event (wall; its own process). Writes ``benchmarks/results/html-report-latest.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work" / "html-report"
RESULTS = ROOT / "benchmarks" / "results" / "html-report-latest.json"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
CHECKS = [f"check-{i}" for i in range(10)]


def write_tables(batches: int) -> Path:
    from deltalake import write_deltalake

    from streaming_dq.core.outcome import (
        BatchOutcome,
        CheckOutcome,
        MaintenanceReport,
        TableReport,
        WindowOutcome,
    )
    from streaming_dq.core.outcome_rows import encode_outcome, results_table
    from streaming_dq.engine.rules import ERROR_TYPE

    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    rng = random.Random(7)
    rows: list[dict[str, Any]] = []
    for b in range(batches):
        end = T0 + timedelta(minutes=15 * (b + 1))
        checks = tuple(
            CheckOutcome(
                check_id=c,
                check_type="null-check",
                kind="row",
                severity="critical",
                status="failed" if (v := rng.choice([0] * 30 + [1, 2])) else "passed",
                violations=v,
                raw_value=None,
                adjusted_value=None,
            )
            for c in CHECKS
        )
        windows = ()
        if end.hour == 0 and end.minute == 0:  # the day that just ended is judged
            start = end - timedelta(days=1)
            windows = (WindowOutcome(check_id="per-day", check_type="row-count-anomaly-check", window="1 day",
                                     window_start=start, window_end=end, severity="warning",
                                     status=rng.choice(["passed"] * 9 + ["failed"]), raw_value=9600.0,
                                     adjusted_value=9600.0, expected_value=9500.0, band_low=8000.0,
                                     band_high=11000.0, score=0.3),)  # type: ignore[arg-type]  # fmt: skip
        maintenance = None
        if b and b % 500 == 0:
            maintenance = MaintenanceReport(
                end, (TableReport(role="pass", uri="", files_after=12, seconds=1.5),), 1.5
            )
        outcome = BatchOutcome(gate="big", batch_id=b, status="committed", rows_in=100, rows_passed=80,
                               rows_quarantined=20, duration_seconds=0.5, committed_at=end.timestamp(),
                               min_event_time=end - timedelta(minutes=15), max_event_time=end,
                               active_profiles=("weekly",) if end.weekday() == 6 else (), checks=checks,
                               windows=windows)  # fmt: skip
        rows += encode_outcome(outcome, app_id="bench", validation_ts=end, maintenance=maintenance)
    write_deltalake(str(WORK / "results"), results_table(rows))
    per_append = batches * 20 // 100
    for part in range(100):
        n = per_append
        errors = [
            [{"check": "null-check", "check-id": CHECKS[i % 10], "severity": "critical"}] for i in range(n)
        ]
        table = pa.table({
            "order_id": pa.array(range(part * n, (part + 1) * n), pa.int64()),
            "customer": pa.array([f"c{i}" for i in range(n)]),
            "_dq_errors": pa.array(errors, ERROR_TYPE),
            "_dq_validation_ts": pa.array([T0 + timedelta(minutes=part)] * n, pa.timestamp("us", tz="UTC")),
            "_dq_batch_id": pa.array([part] * n, pa.int64()),
            "_dq_gate": pa.array(["big"] * n),
            "_dq_raw": pa.array([None] * n, pa.string()),
        })  # fmt: skip
        write_deltalake(str(WORK / "quarantine"), table, mode="append")
    config = WORK / "big.yaml"
    config.write_text(
        "gate: {name: big, event-time: ts, timezone: UTC}\n"
        "source: {format: json, path: landing, schema: 'order_id BIGINT, ts TIMESTAMP, customer STRING'}\n"
        f"checkpoint: {WORK / 'state'}\n"
        f"targets: {{pass: {WORK / 'pass'}, quarantine: {WORK / 'quarantine'}, results: {WORK / 'results'}}}\n"
        "checks:\n"
        + "".join(f"  - {{check: null-check, check-id: {c}, columns: [order_id]}}\n" for c in CHECKS)
    )
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from browser import headless_chromium  # the tests' DevTools driver

    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.report import ReportOptions, gate_report, redacted_config, render

    started = time.monotonic()
    config_path = write_tables(args.batches)
    print(f"tables of {args.batches:,} batches written in {time.monotonic() - started:.1f} s")
    config = load_gate_config(config_path)
    rounds = []
    with headless_chromium(WORK / "profile") as page:
        for r in range(args.rounds):
            w0, c0 = time.monotonic(), time.process_time()
            built = gate_report(config, redacted_config(config_path.read_text()), ReportOptions())
            w1, c1 = time.monotonic(), time.process_time()
            html = render([built])
            w2, c2 = time.monotonic(), time.process_time()
            out = WORK / f"report-{r}.html"
            out.write_text(html, encoding="utf-8")
            opened = page.open(out.as_uri())
            marks = page.evaluate("document.querySelectorAll('[data-mark]').length")
            assert page.errors() == [], page.errors()
            rounds.append({"read_wall": w1 - w0, "read_cpu": c1 - c0, "render_wall": w2 - w1,
                           "render_cpu": c2 - c1, "bytes": len(html.encode()), "chromium_load_wall": opened,
                           "marks": marks, "batches": len(built.batches)})  # fmt: skip
            print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in rounds[-1].items()}))
    median = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    result = {"batches": args.batches, "checks": len(CHECKS), "rounds": rounds, "median": median,
              "measured_at": datetime.now(UTC).isoformat(timespec="seconds"), "machine": "2 cores, shared"}  # fmt: skip
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    print(f"median: {json.dumps({k: round(v, 3) for k, v in median.items()})}; written to {RESULTS}")


if __name__ == "__main__":
    main()
