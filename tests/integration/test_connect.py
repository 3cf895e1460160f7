"""The gate under Spark Connect (a real Connect server on 127.0.0.1): exactly once, both routers.

The batch function runs in a Python worker on the server, where there is no SparkContext: the gate's app id
must come from the checkpoint (two streams on two checkpoints writing the same tables keep every row), and a
batch Spark replays after its tables committed must be recognised and skipped.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from tests.spark_lines import CONNECT_TIER

pytestmark = pytest.mark.integration

CLIENT = Path(__file__).with_name("connect_job.py")


def scrape_while_running(
    job: subprocess.Popen, port: int, done: Callable[[str], bool], seconds: float
) -> str:  # type: ignore[type-arg]
    """Read the job's ``/metrics`` every second until ``done(body)``, the job ends or ``seconds`` pass; the
    last body read ("" when none could be)."""
    body = ""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and job.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                body = response.read().decode()
        except OSError:
            time.sleep(1)
            continue
        if done(body):
            break
        time.sleep(1)
    return body


def run_client(url: str, base: Path, routing: str, *steps: str) -> dict:  # type: ignore[type-arg]
    done = subprocess.run(
        [sys.executable, str(CLIENT), url, str(base), routing, *steps],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "routing", [pytest.param("driver", marks=[pytest.mark.compat] if CONNECT_TIER else []), "distributed"]
)  # the tiers run the driver router under Connect (#56); the main suite both
def test_two_streams_on_new_checkpoints_keep_every_row_and_a_replay_is_skipped(
    connect_url, tmp_path, routing
):
    # 10 rows per file, ids 0, 4 and 8 of each file NULL: 7 pass, 3 quarantined.
    first = run_client(connect_url, tmp_path, routing, "stream:1", "stream:2")
    assert first == {"pass": 14, "quarantine": 6, "batches_per_app": [1, 1], "apps": 2, "replayed": []}

    # Checkpoint 1 forgets its last commit: Spark runs that batch again, the gate must skip it; then a new
    # file arrives on the same checkpoint and is written once.
    again = run_client(connect_url, tmp_path, routing, "replay:1", "stream:1")
    assert again == {"pass": 21, "quarantine": 9, "batches_per_app": [1, 2], "apps": 2, "replayed": [True]}


def test_a_yaml_job_under_connect_reports_each_batch_and_exports_its_counts(connect_url, tmp_path):
    """``streaming-dq run`` with ``spark.remote``: the batches run on the server; the job's batch lines and its
    Prometheus counters come from the results table the gate commits (exporter.ResultsFollower), and so do the
    maintenance series: a run between batches is carried by the next batch's results rows."""
    import os

    from jobs_support import CLI, communicate_or_dump, make_orders_job
    from servers import free_port

    config, summary = make_orders_job(tmp_path, batches=3, rows=40)
    port = free_port()
    text = config.read_text(encoding="utf-8").replace("port: 0", f"port: {port}")
    text = text.replace('spark:\n  master: "local[2]"', f'spark:\n  remote: "{connect_url}"')
    text = text.replace("trigger: available-now ", 'trigger: {processing-time: "1 second"}')
    text = text.replace("  every: 500 batches ", "  every: 1 batches   ")
    assert f'remote: "{connect_url}"' in text and "processing-time" in text and "every: 1 batches" in text
    config.write_text(text, encoding="utf-8")
    env = {**os.environ, "COLUMNS": "200"}
    job = subprocess.Popen(
        [str(CLI), "run", str(config), "--timeout", "150"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip

    def rows(body: str) -> dict[str, float]:
        found = re.finditer(r'^streaming_dq_rows_total\{gate="orders",outcome="(\w+)"\} (\S+)$', body, re.M)
        return {m[1]: float(m[2]) for m in found}

    def table_files(body: str) -> dict[str, float]:
        found = re.finditer(r'^streaming_dq_table_files\{gate="orders",table="(\w+)"\} (\S+)$', body, re.M)
        return {m[1]: float(m[2]) for m in found}

    def counted(body: str) -> bool:
        seen = rows(body)
        return seen.get("passed", 0.0) + seen.get("quarantined", 0.0) >= summary["records"] and bool(
            table_files(body)
        )

    try:
        body = scrape_while_running(job, port, counted, 150)
    finally:
        job.terminate()
        out, err = communicate_or_dump(job, 120)
    scraped, files = rows(body), table_files(body)
    assert scraped.get("passed", 0) + scraped.get("quarantined", 0) == summary["records"] == 76, (
        scraped,
        err[-3000:],
    )
    from streaming_dq.tables import read_table

    tables = tmp_path / "data" / "tables"
    assert scraped["passed"] == read_table(str(tables / "orders_pass")).num_rows
    assert scraped["quarantined"] == read_table(str(tables / "orders_quarantine")).num_rows
    assert len([line for line in out.splitlines() if line.startswith("batch ")]) == 3, out
    # Maintenance ran in the server's worker after each batch; the runs after batches 0 and 1 reached the
    # client with batches 1 and 2 (the run after the last batch waits for a next one).
    assert set(files) == {"pass", "quarantine", "results", "metrics"}, (files, err[-3000:])
    assert files == {"pass": 1.0, "quarantine": 1.0, "results": 1.0, "metrics": 1.0}  # each compacted to one
    maintenance = [
        r for r in read_table(str(tables / "orders_results")).to_pylist() if r["kind"] == "maintenance"
    ]  # fmt: skip
    assert sorted({r["batch_id"] for r in maintenance}) == [1, 2]
    assert {(r["check_id"], r["status"], r["rows"]) for r in maintenance} == {
        (role, "maintained", 1) for role in ("pass", "quarantine", "results", "metrics")
    }, maintenance


def test_a_batch_scoped_anomaly_check_s_series_reach_prometheus_under_connect(connect_url, tmp_path):
    """Under Spark Connect the job learns each batch's verdicts from the results table only: a batch-scoped
    anomaly check's observed, expected, band and score must survive that trip (they did not: the follower
    read the results rows by hand and left the anomaly fields out). The query's progress reaches /metrics too,
    read by the job's loop (no client-side listener: removing one hung the job's exit now and then, see
    ``GateRun._follow_progress``), and a SIGTERM ends the job."""

    from jobs_support import CLI, communicate_or_dump, make_orders_job
    from servers import free_port

    config, summary = make_orders_job(tmp_path, batches=3, rows=40)
    port = free_port()
    text = config.read_text(encoding="utf-8").replace("port: 0", f"port: {port}")
    text = text.replace('spark:\n  master: "local[2]"', f'spark:\n  remote: "{connect_url}"')
    text = text.replace("trigger: available-now ", 'trigger: {processing-time: "1 second"}')
    anomaly = (
        "  - {check: anomaly-check, check-id: batch-volume-anomaly, metric: {check: row-count}, "
        "baseline: {batches: 1}, band: {relative: 10.0}, severity: warning}\n"
    )
    text = text.replace("checks:\n", "checks:\n" + anomaly, 1)
    # order ids judged across batches (#44): the keys table's size, age and horizon reach /metrics as well
    unique = "    check-id: order-id-unique\n    columns: [order_id]\n"
    text = text.replace(unique, unique + "    horizon: 2 days\n", 1)
    text = text.replace("  metrics: data/tables/orders_metrics\n", "  metrics: data/tables/orders_metrics\n"
                        "  keys: data/tables/orders_keys\n", 1)  # fmt: skip
    assert f'remote: "{connect_url}"' in text and "batch-volume-anomaly" in text
    assert "horizon: 2 days" in text and "keys: data/tables/orders_keys" in text
    config.write_text(text, encoding="utf-8")
    job = subprocess.Popen(
        [str(CLI), "run", str(config), "--timeout", "100"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip

    def anomaly_series(body: str) -> dict[str, float]:
        pattern = r'^streaming_dq_anomaly_(\w+)\{check="batch-volume-anomaly",(?:edge="(\w+)",)?gate="orders"\} (\S+)$'
        return {m[1] + (m[2] or ""): float(m[3]) for m in re.finditer(pattern, body, re.M)}

    def keys_series(body: str) -> dict[str, float]:
        pattern = r'^streaming_dq_keys(\w*)\{gate="orders"\} (\S+)$'
        return {m[1]: float(m[2]) for m in re.finditer(pattern, body, re.M)}

    def rows_counted(body: str) -> float:
        pattern = r'^streaming_dq_rows_total\{gate="orders",outcome="\w+"\} (\S+)$'
        return sum(float(m[1]) for m in re.finditer(pattern, body, re.M))

    try:
        body = scrape_while_running(
            job,
            port,
            lambda b: (
                rows_counted(b) >= summary["records"]
                and "expected" in anomaly_series(b)
                and 'streaming_dq_trigger_duration_seconds{gate="orders"}' in b
                and "_oldest_event_time_seconds" in keys_series(b)  # set with the last batch's rows
            ),
            150,
        )
    finally:
        job.terminate()
        _out, err = communicate_or_dump(job, 120)
    rows, series = rows_counted(body), anomaly_series(body)
    assert job.returncode == 128 + signal.SIGTERM, err[-3000:]  # stopped by the signal, cleanly
    assert rows >= summary["records"], (rows, err[-3000:])
    lines = [line for line in body.splitlines() if "batch-volume-anomaly" in line]
    assert {"observed", "expected", "score"} <= set(series), (series, lines, err[-3000:])
    assert series["expected"] > 0 and series["observed"] > 0
    from streaming_dq.tables import read_table

    keys = read_table(str(tmp_path / "data" / "tables" / "orders_keys"))
    assert keys_series(body) == {
        "": keys.num_rows,
        "_horizon_seconds": 2 * 86_400,
        "_oldest_event_time_seconds": min(keys.column("event_date").to_pylist()).toordinal() * 86_400
        - date(1970, 1, 1).toordinal() * 86_400,
    }, (keys_series(body), err[-3000:])
