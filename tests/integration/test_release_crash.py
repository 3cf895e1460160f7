"""``streaming-dq release`` SIGKILLed at a random point while the stream keeps appending to the same tables,
then run again: every record is in exactly one of pass / still-quarantined, each released row is in the pass
table once, and the release records account for every released row."""

from __future__ import annotations

import csv
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from streaming_dq.tables import read_table
from tests.jobs_support import CLI, make_orders_job

pytestmark = pytest.mark.integration

COLUMNS = ("order_id", "order_ts", "customer_id", "amount", "currency", "status", "channel", "items")


def identity(row: dict[str, Any]) -> str:
    """One record's identity: its raw text when malformed, else its fields (order ids repeat on purpose)."""
    if row.get("_dq_raw") is not None and all(row.get(c) is None for c in COLUMNS):
        return "raw:" + row["_dq_raw"]
    return json.dumps([str(row.get(c)) for c in COLUMNS])


def batch_lines(log: Path) -> list[str]:
    text = log.read_text(errors="replace") if log.exists() else ""
    return [line for line in text.splitlines() if line.lstrip().startswith("batch ")]


def start(args: list[str], log: Path, cwd: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "COLUMNS": "200"}
    with log.open("wb") as sink:
        return subprocess.Popen(
            [str(CLI), *args], stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True
        )


def kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)


def wait_for(predicate: Any, proc: subprocess.Popen[bytes], seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not predicate() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.parametrize("writer", ["delta-rs", "spark"])
def test_sigkill_a_release_while_the_stream_runs_then_rerun_releases_each_row_once(
    spark, tmp_path: Path, writer: str
) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    config, summary = make_orders_job(tmp_path, batches=5, rows=80)  # ~4 chunks to kill the release in
    text = config.read_text(encoding="utf-8")
    if writer == "spark":  # Spark's writer commits every batch itself, however small
        text = text.replace("  writer: delta-rs", "  driver-commit-rows: 0\n  writer: spark")
    text = text.replace("trigger: available-now", 'trigger: {processing-time: "1 second"}')
    text = text.replace("refresh-seconds: 300", "refresh-seconds: 3600")  # the stream keeps its old reference
    config.write_text(text, encoding="utf-8")
    tables = tmp_path / "data" / "tables"
    context = f"seed {seed}, writer {writer}"

    stream = start(["run", str(config)], tmp_path / "run.log", tmp_path)
    try:
        wait_for(lambda: len(batch_lines(tmp_path / "run.log")) >= 2, stream)
        assert len(batch_lines(tmp_path / "run.log")) >= 2, (tmp_path / "run.log").read_text()[-3000:]

        # the CRM export had missed new customers: they join the reference
        landing = tmp_path / "data" / "landing" / "orders"
        unknown = set()
        for path in landing.glob("*.json"):
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    cid = json.loads(line).get("customer_id")
                except ValueError:
                    continue
                if isinstance(cid, str) and cid.startswith("C9"):
                    unknown.add(cid)
        with (tmp_path / "data" / "reference" / "customers.csv").open("a", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([[cid, "New customer", "DE", "2025-12-01"] for cid in sorted(unknown)])

        args = [
            "release",
            str(config),
            "--check",
            "customer-known",
            "--chunk-rows",
            "3",
            "--note",
            "CRM-42",
            "--fail-on",
            "never",
        ]
        release_log = tmp_path / "release.log"
        killed = start(args, release_log, tmp_path)
        try:
            wait_for(lambda: "chunk" in release_log.read_text(errors="replace"), killed)
            time.sleep(rng.uniform(0.0, 2.5))
        finally:
            kill(killed)
        context += f"; killed release log:\n{release_log.read_text(errors='replace')[-2000:]}"

        from typer.testing import CliRunner

        from streaming_dq.cli.main import app

        rerun = CliRunner().invoke(app, [*args, "--json"])
        assert rerun.exit_code == 0, rerun.stdout + rerun.stderr[-3000:] + context
        first = json.loads(rerun.stdout)
        releases_after_rerun = {
            r["app_id"].removesuffix("/start")
            for r in read_table(str(tables / "orders_results")).to_pylist()
            if r["kind"] == "release" and r["status"] == "started"
        }
        assert len(releases_after_rerun) in (1, 2), (releases_after_rerun, context)

        # the running stream's /metrics learns of the finished releases from the results table
        url = re.search(r"metrics at (\S+)", (tmp_path / "run.log").read_text(errors="replace"))
        assert url, (tmp_path / "run.log").read_text()[-3000:]
        results = read_table(str(tables / "orders_results")).to_pylist()
        expected = sum(
            r["rows_passed"]
            for r in results
            if r["kind"] == "release" and r["status"] == "finished" and r["check_id"] is None
        )
        assert expected > 0, context
        deadline, scraped = time.monotonic() + 90, None
        while time.monotonic() < deadline and scraped != expected:
            with urllib.request.urlopen(url.group(1), timeout=10) as response:
                text = response.read().decode()
            found = re.search(r'^streaming_dq_released_rows_total\{gate="orders"\} (\S+)$', text, re.M)
            scraped = int(float(found.group(1))) if found else None
            time.sleep(1)
        assert scraped == expected, (scraped, expected, context)
    finally:
        kill(stream)

    drained = CliRunner().invoke(app, ["run", str(config), "--available-now", "--fail-on", "never"])
    assert drained.exit_code == 0, drained.stdout + drained.stderr[-3000:] + context
    last = CliRunner().invoke(
        app, [*args, "--json"]
    )  # what the stream quarantined after the first release began
    assert last.exit_code == 0, last.stdout + last.stderr[-3000:] + context
    second = json.loads(last.stdout)

    passed = [identity(r) for r in read_table(str(tables / "orders_pass")).to_pylist()]
    quarantine = read_table(str(tables / "orders_quarantine")).to_pylist()
    released = [identity(r) for r in quarantine if (r["_dq_release"] or {}).get("state") == "released"]
    still = [identity(r) for r in quarantine if (r["_dq_release"] or {}).get("state") != "released"]
    seen = Counter(passed) + Counter(still)
    assert sum(seen.values()) == summary["records"], context
    assert max(seen.values()) == 1, ([k for k, v in seen.items() if v > 1], context)
    in_pass = Counter(passed)
    assert released and all(in_pass[r] == 1 for r in released), context
    # the killed release had finished when the rerun found nothing to resume and began a second release: the
    # results table then holds two (the killed one's last line is no guide: a kill can land between its last
    # commit and its print)
    finished_before_kill = len(releases_after_rerun) == 2
    assert first["resumed"] is not finished_before_kill, (first, context)  # a rerun finishes what was cut off
    assert second["resumed"] is False and second["release_id"] != first["release_id"], context

    records = [r for r in read_table(str(tables / "orders_results")).to_pylist() if r["kind"] == "release"]
    finished = [r for r in records if r["status"] == "finished" and r["check_id"] is None]
    assert sum(r["rows_passed"] for r in finished) == len(released), context
    started = {r["app_id"].removesuffix("/start") for r in records if r["status"] == "started"}
    assert started == {r["app_id"] for r in finished}, context  # every release that started has finished
