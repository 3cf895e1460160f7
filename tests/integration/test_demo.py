"""``streaming-dq demo`` end to end, in a subprocess, shrunk to five micro-batches.

The demo is started on a port that is already taken, so the same run also proves the fall back to a free
port. Its summary must account for every line the generator wrote, and the tables must be on disk and hold
those rows when read back here independently.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from streaming_dq.tables import read_table

pytestmark = pytest.mark.integration

TIMEOUT_SECONDS = 900  # a shared 2-core machine; the shrunk demo takes well under a minute on an idle one
TOTALS = re.compile(
    r"pass table ([\d,]+) \+ quarantine table ([\d,]+) = ([\d,]+) rows for ([\d,]+) generated lines"
)


def _generated_lines(workdir: Path) -> int:
    """Lines of the landing files the demo's generator wrote (one record each)."""
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in (workdir / "landing").glob("*.json"))


def _number(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path, int]:
    """Run the shrunk demo once while another socket holds the port it is asked for."""
    workdir = tmp_path_factory.mktemp("demo") / "work"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "streaming_dq.cli.main", "demo", "--workdir", str(workdir)]
        command += ["--port", str(port), "--rows", "120", "--batches-per-day", "1"]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            cwd=workdir.parent,
            env={**os.environ, "COLUMNS": "160"},
        )
    return done, workdir, port


def test_demo_exits_0_and_its_totals_are_the_generated_lines(
    demo_run: tuple[subprocess.CompletedProcess[str], Path, int],
) -> None:
    done, workdir, _ = demo_run
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    generated = _generated_lines(workdir)
    match = TOTALS.search(done.stdout)
    assert match is not None, done.stdout
    passed, quarantined, total, lines = (_number(g) for g in match.groups())
    assert (total, lines) == (generated, generated)
    assert passed + quarantined == generated
    assert quarantined > 0 and passed > quarantined


def test_demo_tables_are_on_disk_and_hold_every_row(
    demo_run: tuple[subprocess.CompletedProcess[str], Path, int],
) -> None:
    done, workdir, _ = demo_run
    assert done.returncode == 0
    tables = workdir / "tables"
    for name in ("orders_pass", "orders_quarantine", "orders_results", "orders_metrics"):
        assert DeltaTable.is_deltatable(str(tables / name)), name
    passed = read_table(str(tables / "orders_pass"))
    quarantined = read_table(str(tables / "orders_quarantine"))
    generated = _generated_lines(workdir)
    assert passed.num_rows + quarantined.num_rows == generated
    assert "coupon_code" in passed.column_names  # producer v2's column, merged by the schema-drift policy
    raw = [r for r in quarantined.column("_dq_raw").to_pylist() if r is not None]
    assert len(raw) == 5  # one malformed line per landing file, kept verbatim


def test_demo_falls_back_from_a_taken_port_and_shows_real_series(
    demo_run: tuple[subprocess.CompletedProcess[str], Path, int],
) -> None:
    done, _, port = demo_run
    assert f"port {port} is taken" in done.stdout
    url = re.search(r"metrics at (http://127\.0\.0\.1:(\d+)/metrics)", done.stdout)
    assert url is not None and int(url.group(2)) != port
    assert re.search(r'^\s+streaming_dq_rows_total\{.*outcome="passed".*\} [1-9]', done.stdout, re.M)
    assert "Failing checks" in done.stdout and "malformed-record" in done.stdout


def test_demo_shows_daily_windows_judged_under_the_christmas_profile(
    demo_run: tuple[subprocess.CompletedProcess[str], Path, int],
) -> None:
    done, _, _ = demo_run
    assert re.search(r"Thu 18 Dec\s+\d+\s+passed", done.stdout)
    assert re.search(r"Sat 20 Dec\s+\d+ x2\.5 = [\d.]+\s+passed\s+Christmas 2025", done.stdout)
    assert re.search(r"Sun 21 Dec\s+\d+ x2\.5 = [\d.]+\s+failed", done.stdout)
    assert re.search(r"Mon 22 Dec\s+.*provisional", done.stdout)
