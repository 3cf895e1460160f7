"""``streaming-dq demo`` end to end, in a subprocess, shrunk to five micro-batches, and the report it ends by
writing opened in a real headless Chromium.

The demo is started on a port that is already taken, so the same run also proves the fall back to a free
port. Its summary must account for every line the generator wrote, and the tables must be on disk and hold
those rows when read back here independently.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from browser import headless_chromium
from deltalake import DeltaTable

from streaming_dq.tables import read_table

pytestmark = pytest.mark.integration

#: Screenshots of the demo's report, kept after the run (build/ is not committed).
ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"
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
        # two files a day: a day's second file retries an order of its first (a later micro-batch)
        command += ["--port", str(port), "--rows", "120", "--batches-per-day", "2"]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            cwd=workdir.parent,
            env={**os.environ, "COLUMNS": "160"},
        )
    return done, workdir, port


@pytest.mark.compat
@pytest.mark.edges
def test_demo_exits_0_and_its_totals_are_the_generated_lines(
    demo_run: tuple[subprocess.CompletedProcess[str], Path, int],
) -> None:
    done, workdir, _ = demo_run
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # Spark's own start-up lines stay out of the demo's output (its log4j file sets the shell's level too)
    for noise in ("Setting default log level", "sc.setLogLevel", "Using Spark's default log4j profile"):
        assert noise not in done.stdout + done.stderr
    generated = _generated_lines(workdir)
    match = TOTALS.search(done.stdout)
    assert match is not None, done.stdout
    passed, quarantined, total, lines = (_number(g) for g in match.groups())
    assert (total, lines) == (generated, generated)
    assert passed + quarantined == generated
    assert quarantined > 0 and passed > quarantined


@pytest.mark.compat
@pytest.mark.edges
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
    assert len(raw) == 10  # one malformed line per landing file (5 days, 2 files a day), kept verbatim


def test_demo_falls_back_from_a_taken_port_and_shows_real_series(
    demo_run: tuple[subprocess.CompletedProcess[str], Path, int],
) -> None:
    done, _, port = demo_run
    assert f"port {port} is taken" in done.stdout
    url = re.search(r"metrics at (http://127\.0\.0\.1:(\d+)/metrics)", done.stdout)
    assert url is not None and int(url.group(2)) != port
    assert re.search(r'^\s+streaming_dq_rows_total\{.*outcome="passed".*\} [1-9]', done.stdout, re.M)
    assert "Failing checks" in done.stdout and "malformed-record" in done.stdout


def test_demo_shows_a_retry_caught_in_a_later_batch_with_its_pointer_and_the_reports_section(
    demo_run: tuple[subprocess.CompletedProcess[str], Path, int],
) -> None:
    done, workdir, _ = demo_run
    quarantine = read_table(str(workdir / "tables" / "orders_quarantine")).to_pylist()
    later = [
        (row, p)
        for row in quarantine
        for p in row["_dq_first_seen"] or ()
        if not p["late"] and p["batch_id"] is not None and p["batch_id"] < row["_dq_batch_id"]
    ]
    assert later, "no retry arrived in a later micro-batch"
    for row, p in later:  # the pointer names the original: its batch wrote the same order to the pass table
        assert p["check_id"] == "order-id-unique" and [e["check-id"] for e in row["_dq_errors"]] == [
            "order-id-unique"
        ]
    passed = read_table(str(workdir / "tables" / "orders_pass")).to_pylist()
    ids = {r["order_id"] for r in passed}
    assert all(row["order_id"] in ids for row, _ in later)
    text = " ".join(done.stdout.split())
    assert f"Duplicates across micro-batches: {len(later)} producer retries arrived in a later batch" in text
    row, p = min(later, key=lambda f: (f[0]["_dq_batch_id"], f[1]["key"]))
    assert (
        f"order {row['order_id']} in batch {row['_dq_batch_id']}: first seen in batch {p['batch_id']}" in text
    )
    assert 'its section "Duplicates across batches" (report.html#demo-orders-repeats)' in text
    html = (workdir / "report.html").read_text(encoding="utf-8")
    section = html[html.index('id="demo-orders-repeats"') :]
    assert f"{len(later)} rows quarantined as a key first seen in an earlier micro-batch" in section
    assert row["order_id"] in section


def test_demo_shows_daily_windows_judged_under_the_christmas_profile(
    demo_run: tuple[subprocess.CompletedProcess[str], Path, int],
) -> None:
    done, _, _ = demo_run
    assert re.search(r"Thu 18 Dec\s+\d+\s+passed", done.stdout)
    assert re.search(r"Sat 20 Dec\s+\d+ x2\.5 = [\d.]+\s+passed\s+Christmas 2025", done.stdout)
    assert re.search(r"Sun 21 Dec\s+\d+ x2\.5 = [\d.]+\s+failed", done.stdout)
    assert re.search(r"Mon 22 Dec\s+.*provisional", done.stdout)


def _expected_marks(workdir: Path) -> dict[str, int]:
    """The marks the report's charts must have, counted from the tables read back here: a day per local day
    of event time among the pass and quarantine tables' rows, a window per judged window, per check a day per
    day of the batches' latest event time it was judged on and a cross per batch it failed, a span per run of
    consecutive batches a profile was active in."""
    from zoneinfo import ZoneInfo

    from streaming_dq.config.loader import load_gate_config

    config = load_gate_config(workdir / "demo.yaml")
    zone = ZoneInfo(config.gate.timezone)
    event_days = {
        t.astimezone(zone).date()
        for role in ("pass", "quarantine")
        for t in read_table(config.table(role).uri, columns=[config.gate.event_time or ""])
        .column(0)
        .to_pylist()
        if t is not None
    }
    rows = read_table(str(workdir / "tables" / "orders_results")).to_pylist()
    day_of = {
        r["batch_id"]: r["event_time_max"].astimezone(zone).date() for r in rows if r["kind"] == "batch"
    }
    checks = [r for r in rows if r["kind"] in ("row", "aggregate") and r["status"] != "skipped"]
    spans = 0
    for profile in {p for r in rows if r["kind"] == "batch" for p in r["profiles"]}:
        active = [
            b
            for b in sorted(day_of)
            if profile in next(r["profiles"] for r in rows if r["kind"] == "batch" and r["batch_id"] == b)
        ]
        spans += 1 + sum(1 for a, b in itertools.pairwise(active) if b != a + 1)
    return {
        "day": len(event_days),
        "window": len(
            {(r["check_id"], r["window"], r["window_start"]) for r in rows if r["kind"] == "window"}
        ),
        "check-day": len({(r["check_id"], day_of[r["batch_id"]]) for r in checks}),
        "failed-batch": len({(r["check_id"], r["batch_id"]) for r in checks if r["status"] == "failed"}),
        "profile-span": spans,
    }


MARKS = """JSON.stringify([...document.querySelectorAll('[data-mark]')]
  .reduce((m, e) => (m[e.dataset.mark] = (m[e.dataset.mark] || 0) + 1, m), {}))"""


def test_demo_report_opens_offline_in_chromium_with_a_mark_per_datum(
    demo_run: tuple[subprocess.CompletedProcess[str], Path, int], tmp_path: Path
) -> None:
    done, workdir, _ = demo_run
    report = workdir / "report.html"
    assert f"Report: {report}" in done.stdout.replace("\n", "")
    expected = _expected_marks(workdir)
    assert expected["window"] > 0 and expected["failed-batch"] > 0 and expected["profile-span"] > 0
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with headless_chromium(tmp_path / "profile") as page:
        page.open(report.as_uri())
        assert page.errors() == []
        assert page.requests == [report.as_uri()]  # the file itself, nothing else (not even a blocked try)
        assert json.loads(page.evaluate(MARKS)) == expected
        described = page.evaluate(
            "[...document.querySelectorAll('svg[role=img]')].every(s => s.querySelector('title').textContent"
            " && s.querySelector('desc').textContent.length > 20)"
        )
        assert described is True
        page.screenshot(ARTIFACTS / "demo-report.png")
        page.viewport(390, 844, mobile=True)  # a phone: the page does not scroll sideways, tables do
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth") is True
        page.screenshot(ARTIFACTS / "demo-report-phone.png")


def test_the_browser_sees_a_fetch_and_the_reports_policy_refuses_it(tmp_path: Path) -> None:
    """The checks above can fail: a page that loads an image is seen fetching it, and under the report's
    Content-Security-Policy the same image is blocked with an error (so a report never fetches, whatever a
    future change puts in it)."""
    from streaming_dq.report.html import CSP

    image = '<img alt="x" src="http://127.0.0.1:9/pixel.png">'
    plain, strict = tmp_path / "plain.html", tmp_path / "strict.html"
    plain.write_text(f"<!doctype html><title>t</title>{image}")
    strict.write_text(
        f'<!doctype html><meta http-equiv="Content-Security-Policy" content="{CSP}"><title>t</title>{image}'
    )
    with headless_chromium(tmp_path / "profile") as page:
        page.open(plain.as_uri())
        assert "http://127.0.0.1:9/pixel.png" in page.fetched
    with headless_chromium(tmp_path / "profile2") as page:
        page.open(strict.as_uri())
        assert page.fetched == [strict.as_uri()]
        assert page.blocked == ["http://127.0.0.1:9/pixel.png"]
        assert any("Content Security Policy" in e for e in page.errors()), page.errors()


def test_the_reports_json_twin_carries_the_metrics_tables_lifetime_values(
    demo_run: tuple[subprocess.CompletedProcess[str], Path, int],
) -> None:
    from typer.testing import CliRunner

    from streaming_dq.cli.main import app

    _, workdir, _ = demo_run
    done = CliRunner().invoke(app, ["report", str(workdir / "demo.yaml"), "--json", "-q"])
    assert done.exit_code == 0, done.output
    (gate,) = json.loads(done.stdout)["gates"]
    rows = sum(
        r["rows"]
        for r in read_table(str(workdir / "tables" / "orders_results")).to_pylist()
        if r["kind"] == "batch"
    )
    lifetime = {line["check"]: line["raw"] for line in gate["lifetime"]}
    assert lifetime["batch-volume"] == rows  # a row count over the stream's life: every row the batches read
    assert gate["totals"]["rows"] == rows
