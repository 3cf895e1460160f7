"""SIGKILL ``streaming-dq run a.yaml b.yaml`` (two gates on one driver) mid-stream, restart it on the same
checkpoints, and find every order of each gate exactly once in its own pass and quarantine tables."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.jobs_support import CLI, make_orders_jobs, order_ids

pytestmark = pytest.mark.integration

NAMES = ["orders-a", "orders-b"]


def committed_lines(log: Path) -> list[str]:
    text = log.read_text(errors="replace") if log.exists() else ""
    return [line for line in text.splitlines() if any(line.startswith(f"{n}: batch ") for n in NAMES)]


def test_sigkill_a_two_gate_run_then_restart_keeps_both_gates_exactly_once(spark, tmp_path: Path) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    jobs = make_orders_jobs(tmp_path, NAMES, batches=4, rows=20)
    for config, _ in jobs:  # a processing-time run: it only ends when killed
        config.write_text(
            config.read_text(encoding="utf-8").replace(
                "trigger: available-now", 'trigger: {processing-time: "1 second"}'
            )
        )
    log = tmp_path / "run.log"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "COLUMNS": "200"}
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [str(CLI), "run", *(str(c) for c, _ in jobs)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=tmp_path,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 300
        while not committed_lines(log) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 2.0))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    killed_after = committed_lines(log)
    context = f"seed {seed}; log:\n{log.read_text(errors='replace')[-3000:]}"
    assert killed_after, context
    assert len(killed_after) < 2 * 4, context  # killed mid-stream

    # the restart, in this process on the test session: drain what is left, both gates
    from typer.testing import CliRunner

    from streaming_dq.cli.main import app

    done = CliRunner().invoke(
        app, ["run", *(str(c) for c, _ in jobs), "--available-now", "--fail-on", "never"]
    )
    assert done.exit_code == 0, done.stdout + done.stderr[-3000:] + context

    for config, summary in jobs:
        tables = config.parent / "data" / "tables"
        seen = Counter(order_ids(tables / "orders_pass")) + Counter(order_ids(tables / "orders_quarantine"))
        assert sum(seen.values()) == summary["records"], (config, context)
        assert max(seen.values()) == 1, ([k for k, v in seen.items() if v > 1], context)
