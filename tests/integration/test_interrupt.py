"""Ctrl-C during ``streaming-dq run``, as a terminal sends it (SIGINT to the whole process group).

Before: about 50 lines of py4j tracebacks (pyspark's SparkContext installs its own SIGINT handler, which
cancels every job and raises KeyboardInterrupt into whatever py4j call is running) and exit 0. Now the
query stops between batches, the command says so in one line and exits 130; the next run resumes from the
checkpoint and every landed line ends up in exactly one table.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from jobs_support import CLI, make_orders_job
from typer.testing import CliRunner

from streaming_dq.cli.main import app
from streaming_dq.tables import read_table

pytestmark = pytest.mark.integration


def test_ctrl_c_stops_between_batches_exits_130_and_the_next_run_resumes(
    spark: object, tmp_path: Path
) -> None:
    config, summary = make_orders_job(tmp_path, batches=4, rows=30)
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace("trigger: available-now", 'trigger: {processing-time: "1 second"}'), "utf-8"
    )
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "COLUMNS": "200"}
    proc = subprocess.Popen(
        [str(CLI), "run", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(proc.stdout or []), daemon=True)
    reader.start()
    deadline = time.monotonic() + 600
    while not any(line.startswith("batch ") for line in out) and time.monotonic() < deadline:
        assert proc.poll() is None, "".join(out) + (proc.stderr.read() if proc.stderr else "")
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)
    stderr = proc.stderr.read() if proc.stderr else ""
    code = proc.wait(timeout=300)
    reader.join(timeout=10)
    assert code == 130, "".join(out) + stderr
    assert "Traceback" not in stderr and "py4j" not in stderr, stderr
    assert stderr.splitlines()[-1].startswith("stopped by SIGINT: committed batches are in the tables")
    committed = [line for line in out if line.startswith("batch ")]
    assert 1 <= len(committed) < 4

    # the next run (in this process and the test session: no second JVM start) drains the rest
    tables = tmp_path / "data" / "tables"
    resumed = CliRunner().invoke(app, ["run", str(config), "--available-now", "--fail-on", "never"])
    assert resumed.exit_code == 0, resumed.stdout + resumed.stderr[-3000:]
    passed = read_table(str(tables / "orders_pass")).num_rows
    quarantined = read_table(str(tables / "orders_quarantine")).num_rows
    assert passed + quarantined == summary["records"]  # nothing lost, nothing written twice
