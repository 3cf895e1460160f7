"""``streaming-dq report`` (#45) over tables a real gate, a real release and a real discard wrote: the JSON
twin's numbers are checked against the tables read back independently, masking hides a column and the raw
text, ``--since`` narrows, a fleet gets a section per gate, and wrong options name the option before any
table is read. The browser test (tests/integration/test_demo.py) opens the demo's report in Chromium."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from test_quarantine_show import CHECKS, config_for
from test_stream_duplicates import DAY0, frame, gate_at
from typer.testing import CliRunner

from streaming_dq.cli.main import app
from streaming_dq.tables import read_table

pytestmark = pytest.mark.spark


def report(*args: str) -> object:
    return CliRunner().invoke(app, ["report", *args])


@pytest.fixture(scope="module")
def written(spark, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    """Three batches over two days (a duplicate, two rows failing offset-ok), a release with a note of one
    row, then a discard of what offset-ok still holds."""
    from streaming_dq.release import Fix, ReleaseRequest, release
    from streaming_dq.release.discard import discard

    tmp = tmp_path_factory.mktemp("report")
    gate = gate_at(tmp, checks=CHECKS)
    gate(frame(spark, [(1, DAY0, -1), (2, DAY0, 1), (4, DAY0, 3)]), 0)
    gate(frame(spark, [(1, DAY0 + timedelta(hours=2), 2), (3, DAY0 + timedelta(hours=3), -5)]), 1)
    gate(frame(spark, [(5, DAY0 + timedelta(days=1), 6), (6, DAY0 + timedelta(days=1), -7)]), 2)
    request = ReleaseRequest(checks=("offset-ok",), batches=(0, 0), fixes=(Fix.parse("offset = 0"),),
                             note="TICKET-42 producer fixed")  # fmt: skip
    assert release(gate, spark, request).released == 1
    assert discard(gate, spark, timedelta(0), checks=("offset-ok",)).discarded >= 2
    return config_for(tmp)


def test_report_json_counts_what_the_tables_hold(written: Path) -> None:
    done = report(str(written), "--json", "-q")
    assert done.exit_code == 0, done.output
    (gate,) = json.loads(done.stdout)["gates"]
    results = read_table(str(written.parent / "results")).to_pylist()
    batch_rows = [r for r in results if r["kind"] == "batch"]
    assert [b["batch_id"] for b in gate["batches"]] == sorted(r["batch_id"] for r in batch_rows)
    assert gate["totals"]["rows"] == sum(r["rows"] for r in batch_rows) == 7
    assert gate["totals"]["quarantined"] == sum(r["rows_quarantined"] for r in batch_rows)
    assert [b["day"] for b in gate["batches"]] == ["2026-03-01", "2026-03-01", "2026-03-02"]

    checks = {c["check_id"]: c for c in gate["checks"]}
    offset = checks["offset-ok"]
    violations = {
        r["batch_id"]: r["violations"] for r in results if r["check_id"] == "offset-ok" and r["kind"] == "row"
    }
    assert offset["violations"] == [violations[b] for b in offset["batch_ids"]] == [1, 1, 1]
    assert [(d["day"], d["violations"], d["rows"]) for d in offset["days"]] == [
        ("2026-03-01", 2, 5),
        ("2026-03-02", 1, 2),
    ]
    assert offset["days"][0]["pass_rate"] == pytest.approx(3 / 5)
    assert checks["order-once"]["violations"] == [0, 1, 0]

    # the quarantine as it stands: 4 rows quarantined (1 duplicate, 3 offset-ok), the released row and the
    # offset-ok rows then discarded: what the table still holds is counted, by reason
    quarantine = read_table(str(written.parent / "quarantine"))
    q = gate["quarantine"]
    assert q["rows"] == quarantine.num_rows
    reasons = {r["check_id"]: r["rows"] for r in q["reasons"]}
    held = [e["check-id"] for errors in quarantine.column("_dq_errors").to_pylist() for e in errors]
    assert reasons == {c: held.count(c) for c in set(held)}
    assert reasons.get("order-once") == 1

    kinds = [(e["kind"], e["note"], e["finished"]) for e in gate["releases"]]
    assert kinds == [("release", "TICKET-42 producer fixed", True), ("discard", None, True)]
    rel, dis = gate["releases"]
    assert rel["rows"] == 1 and "--check offset-ok" in rel["request"] and "`offset` = 0" in rel["request"]
    assert re.fullmatch(r".+@.+", rel["by"]) and dis["by"] == rel["by"]
    assert dis["rows"] >= 2 and dis["per_check"]["offset-ok"] == dis["rows"]
    assert "checks:" in gate["config_text"]


def test_report_masks_columns_and_the_raw_text_and_narrows_by_since(written: Path) -> None:
    done = report(str(written), "--json", "-q", "--mask", "offset", "--samples", "5")
    assert done.exit_code == 0, done.output
    (gate,) = json.loads(done.stdout)["gates"]
    samples = [s for r in gate["quarantine"]["reasons"] for s in r["samples"]]
    assert samples and all(s["offset"] == "***" for s in samples)
    assert all(s["_dq_raw"] in (None, "***") for s in samples)
    assert gate["quarantine"]["masked"] == ["offset"]

    later = report(str(written), "--json", "-q", "--since", "2999-01-01")
    (empty,) = json.loads(later.stdout)["gates"]
    assert empty["batches"] == [] and empty["releases"] == [] and empty["quarantine"]["rows"] == 0
    recent = report(str(written), "--json", "-q", "--since", "1h")
    assert len(json.loads(recent.stdout)["gates"][0]["batches"]) == 3


def test_report_html_is_one_file_with_a_section_per_gate_of_a_fleet(written: Path, tmp_path: Path) -> None:
    other = tmp_path / "payments.yaml"
    text = written.read_text().replace("name: orders", "name: payments")
    other.write_text(re.sub(r"(\w+): (/\S+)/(pass|quarantine|results|keys)\n", rf"\1: {tmp_path}/\3\n", text))
    out = tmp_path / "fleet.html"
    done = report(str(written), str(other), "-o", str(out), "-q")
    assert done.exit_code == 0, done.output
    assert str(out) in done.stdout.replace("\n", "")
    html = out.read_text()
    assert html.startswith("<!doctype html>") and "default-src 'none'" in html
    assert 'id="orders-gate"' in html and 'id="payments-gate"' in html and "<h2>Gates</h2>" in html
    assert "no results table yet" in html  # the payments gate has not run
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html)  # nothing to fetch
    assert "<script" not in html
    assert html.count('role="img"') == html.count("<desc ") and html.count('role="img"') > 3


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--mask", "no_such_column"], "--mask"),
        (["--since", "yesterday-ish"], "--since"),
        (["-o", "/no/such/folder/r.html"], "--output"),
    ],
)
def test_report_refuses_a_wrong_option_naming_it(written: Path, args: list[str], field: str) -> None:
    done = report(str(written), "-q", *args)
    assert done.exit_code == 2
    assert field in done.output


def test_rows_per_day_are_counted_by_the_rows_own_event_time_not_by_batch(spark, tmp_path: Path) -> None:
    # batches that span days, and a day split across two batches: each row counts on its own event day
    gate = gate_at(tmp_path, checks=CHECKS)
    day = lambda d, h=0: DAY0 + timedelta(days=d, hours=h)  # noqa: E731
    gate(frame(spark, [(1, day(0), 1), (2, day(0, 5), -2), (3, day(1), 3)]), 0)
    gate(frame(spark, [(4, day(1, 2), 4), (5, day(1, 3), -5), (6, day(2), 6), (7, day(3), 7)]), 1)
    config = config_for(tmp_path)
    done = report(str(config), "--json", "-q")
    assert done.exit_code == 0, done.output
    (got,) = json.loads(done.stdout)["gates"]

    def by_day(table: str) -> dict[str, int]:
        stamps = read_table(str(tmp_path / table)).column("ts").to_pylist()
        return {d: sum(1 for t in stamps if f"{t:%Y-%m-%d}" == d) for d in {f"{t:%Y-%m-%d}" for t in stamps}}

    passed, quarantined = by_day("pass"), by_day("quarantine")
    expected = [
        {"day": d, "passed": passed.get(d, 0), "quarantined": quarantined.get(d, 0)}
        for d in sorted(set(passed) | set(quarantined))
    ]
    assert got["rows_by_day"] == expected
    assert [d["day"] for d in expected] == ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04"]
    assert sum(d["quarantined"] for d in expected) == 2  # offsets -2 and -5 fail offset-ok
    # the batches themselves still sit on the day of their latest event time, which the check charts say
    assert [b["day"] for b in got["batches"]] == ["2026-03-02", "2026-03-04"]

    html = tmp_path / "report.html"
    done = report(str(config), "--output", str(html), "-q")
    assert done.exit_code == 0, done.output
    text = html.read_text(encoding="utf-8")
    assert "4 days of the rows&#x27; own event time" in text or "4 days of the rows' own event time" in text
    assert "per batch day" in text
