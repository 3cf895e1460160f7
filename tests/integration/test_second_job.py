"""The same config started twice (#41): the second job stops before Spark starts, in one line naming the
checkpoint and the job holding it; the first runs on; every landed line ends up in exactly one table, once,
and no table's log holds an ``(app id, version)`` twice.

Before #41 the second job only failed on the metrics port, was pointed to another port, and with that both
jobs wrote batch 3 (268 rows twice in the pass table).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jobs_support import CLI, background_run, interrupt, make_orders_job, order_ids, txn_counts
from typer.testing import CliRunner

from streaming_dq.cli.main import app

pytestmark = pytest.mark.integration


def test_a_second_job_on_the_checkpoint_stops_in_one_line_and_every_row_lands_once(
    spark: object, tmp_path: Path
) -> None:
    config, summary = make_orders_job(tmp_path, batches=4, rows=40)
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace("trigger: available-now", 'trigger: {processing-time: "1 second"}'), "utf-8"
    )
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "COLUMNS": "200"}
    log = tmp_path / "first.log"
    tables = tmp_path / "data" / "tables"
    with background_run(config, log, env=env, cwd=tmp_path) as first:
        deadline = time.monotonic() + 600
        while "batch " not in log.read_text() and time.monotonic() < deadline:
            assert first.poll() is None, log.read_text()
            time.sleep(0.2)
        second = subprocess.run(
            [str(CLI), "run", str(config)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
        )
        assert second.returncode == 2, second.stdout + second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        checkpoint = tmp_path / "data" / "state" / "orders"
        assert lines[0].startswith(f"error: checkpoint {checkpoint} is in use by another job (host ")
        assert f", pid {first.pid}, since " in lines[0]
        assert "stop that job first, or give this one its own checkpoint" in lines[0]
        assert "starting Spark" not in second.stdout  # refused before Spark (and the metrics port)
        interrupt(first, log)
    # the first job's successor drains the rest (in this process, on the test session)
    resumed = CliRunner().invoke(app, ["run", str(config), "--available-now", "--fail-on", "never"])
    assert resumed.exit_code == 0, resumed.stdout + resumed.stderr[-3000:]
    ids = order_ids(tables / "orders_pass") + order_ids(tables / "orders_quarantine")
    assert len(ids) == summary["records"]
    for name in ("orders_pass", "orders_quarantine", "orders_results", "orders_metrics"):
        counts = txn_counts(tables / name)
        assert counts and max(counts.values()) == 1, (name, counts)
