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


def _jvms_of(marker: str) -> list[int]:
    """The Java processes whose environment carries ``marker`` (a job's JVM inherits its environment)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if "java" not in (entry / "cmdline").read_bytes().decode(errors="replace"):
                continue
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def test_ctrl_c_while_spark_starts_leaves_no_jvm_behind(tmp_path: Path) -> None:
    """SIGINT while the job's JVM is being launched: before, pyspark gave up waiting for the new JVM's gateway
    and the process exited, leaving the JVM running for good (found as orphans after the suite); now the stop
    is held until the session exists, which is stopped, and the command exits 130 with no JVM left."""
    config, _ = make_orders_job(tmp_path, batches=2, rows=10)
    marker = f"STREAMING_DQ_TEST_JOB={tmp_path.name}"
    key, value = marker.split("=", 1)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, key: value}
    proc = subprocess.Popen(
        [str(CLI), "run", str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        cwd=tmp_path, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not _jvms_of(marker) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        assert _jvms_of(marker), "the job's JVM never started"
        os.kill(proc.pid, signal.SIGINT)  # the command only, as `kill -INT`: the JVM is not signalled
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, out + err
        deadline = time.monotonic() + 30
        while _jvms_of(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _jvms_of(marker)
        assert not left, f"JVM(s) {left} still running after the command exited: {out}{err}"
    finally:  # never leave the job or its JVM to the next test
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for pid in _jvms_of(marker):
            os.kill(pid, signal.SIGKILL)
