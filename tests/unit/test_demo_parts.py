"""The JVM-free parts of ``streaming-dq demo``: its data generator, work folder, config and summary helpers."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from streaming_dq.cli.demo import (
    MARKER,
    V1_SCHEMA_END,
    V2_SCHEMA_END,
    DemoError,
    DemoOptions,
    config_text,
    prepare_workdir,
    write_config,
)
from streaming_dq.cli.demo_data import DemoPlan, write_customers, write_landing
from streaming_dq.cli.demo_report import exposition_excerpt, failing_checks


def _parses(line: str) -> bool:
    """Whether Spark reads ``line`` as an order: valid JSON whose amount is a number (or null)."""
    try:
        order = json.loads(line)
    except json.JSONDecodeError:
        return False
    return not isinstance(order["amount"], str)


def test_the_plan_spans_18_to_22_december_with_a_christmas_volume_drop() -> None:
    days = DemoPlan(rows=600).days
    assert [d.day for d in days] == [date(2025, 12, d) for d in range(18, 23)]
    assert [d.holiday for d in days] == [False, False, True, True, True]
    assert [d.producer_v2 for d in days] == [False, False, False, True, True]
    regular = min(d.orders for d in days if not d.holiday)
    assert all(d.orders < 0.6 * regular for d in days if d.holiday)


def test_landing_files_are_reproducible_whether_written_at_once_or_in_two_steps(tmp_path: Path) -> None:
    plan = DemoPlan(rows=200, batches_per_day=2, seed=3)
    at_once = write_landing(tmp_path / "a", plan, plan.days)
    write_landing(tmp_path / "b", plan, plan.days[:3])
    write_landing(tmp_path / "b", plan, plan.days[3:])
    assert len(at_once) == 10
    for file in at_once:
        assert file.path.read_bytes() == (tmp_path / "b" / file.path.name).read_bytes()


def test_each_file_has_one_malformed_line_and_v2_files_carry_coupon_code(tmp_path: Path) -> None:
    plan = DemoPlan(rows=300, batches_per_day=2)
    for file in write_landing(tmp_path, plan, plan.days):
        lines = file.path.read_text(encoding="utf-8").splitlines()
        assert len(lines) == file.lines
        good = [json.loads(line) for line in lines if _parses(line)]
        assert len(good) == file.lines - 1 == file.lines - file.malformed
        has_coupon = {"coupon_code" in order for order in good}
        assert has_coupon == {file.day >= date(2025, 12, 21)}


def test_the_faults_are_there(tmp_path: Path) -> None:
    plan = DemoPlan(rows=600)
    files = write_landing(tmp_path, plan, plan.days)
    faults = sum((f.faults for f in files), start=files[0].faults.__class__())
    assert {"duplicate order id", "unknown customer", "missing order id", "huge amount"} <= set(faults)
    orders = [json.loads(line) for f in files for line in f.path.read_text().splitlines() if _parses(line)]
    ids = [o["order_id"] for o in orders if o["order_id"] is not None]
    assert len(ids) - len(set(ids)) == faults["duplicate order id"]
    assert sum(o["amount"] < 0 for o in orders if o["amount"] is not None) == faults["negative amount"]


def test_customers_reference_has_a_header_and_one_line_per_customer(tmp_path: Path) -> None:
    path = tmp_path / "customers.csv"
    write_customers(path, DemoPlan(customers=12))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "customer_id,name,country,signup_date"
    assert len(lines) == 13 and lines[1].startswith("C00001,")


def test_prepare_workdir_wipes_a_demo_folder_and_refuses_any_other(tmp_path: Path) -> None:
    demo = prepare_workdir(tmp_path / "demo")
    (demo / "leftover.txt").write_text("x")
    assert sorted(p.name for p in prepare_workdir(demo).iterdir()) == [MARKER]
    other = tmp_path / "mine"
    other.mkdir()
    (other / "thesis.tex").write_text("precious")
    with pytest.raises(DemoError, match="refusing to wipe"):
        prepare_workdir(other)
    assert (other / "thesis.tex").read_text() == "precious"


def test_the_demo_config_loads_with_its_values_filled_in(tmp_path: Path) -> None:
    options = DemoOptions(port=9200, rows=500, batches_per_day=2)
    text = config_text(options)
    assert "${" not in text and V1_SCHEMA_END in text
    config = write_config(tmp_path, text)
    assert config.metrics.prometheus is not None and config.metrics.prometheus.port == 9200
    volume = next(c for c in config.checks if c["check-id"] == "batch-volume")
    assert volume["min-count"] == 150  # 60% of a regular day's batch of 250 rows
    assert config.targets.pass_table == str(tmp_path / "tables" / "orders_pass")
    v2 = write_config(tmp_path, text.replace(V1_SCHEMA_END, V2_SCHEMA_END))
    assert v2.source.columns() == {**(config.source.columns() or {}), "coupon_code": "string"}


def test_exposition_excerpt_keeps_real_nonzero_samples_of_the_interesting_series() -> None:
    text = "\n".join(
        [
            "# HELP streaming_dq_rows_total Rows by outcome.",
            "# TYPE streaming_dq_rows_total counter",
            'streaming_dq_rows_total{gate="g",outcome="passed"} 90.0',
            'streaming_dq_rows_total{gate="g",outcome="warned"} 0.0',
            'streaming_dq_rows_created{gate="g",outcome="passed"} 1.7e9',
            'streaming_dq_check_violations_total{check="a",gate="g",severity="critical"} 1.0',
            'streaming_dq_check_violations_total{check="b",gate="g",severity="critical"} 7.0',
            'python_gc_objects_collected_total{generation="0"} 5.0',
        ]
    )
    assert exposition_excerpt(text) == [
        'streaming_dq_rows_total{gate="g",outcome="passed"} 90.0',
        'streaming_dq_check_violations_total{check="b",gate="g",severity="critical"} 7.0',
        'streaming_dq_check_violations_total{check="a",gate="g",severity="critical"} 1.0',
    ]


def test_failing_checks_sums_rows_and_counts_failed_verdicts() -> None:
    def rec(check: str, status: str, violations: int | None, kind: str = "row") -> dict[str, object]:
        return {"check_id": check, "check_type": "t", "kind": kind, "status": status,
                "severity": "critical", "violations": violations}  # fmt: skip

    results = [
        rec("a", "failed", 2),
        rec("a", "passed", 0),
        rec("b", "failed", 5),
        rec("c", "passed", 0),
        rec("v", "failed", None, "aggregate"),
    ]
    found = [(f.check_id, f.rows, f.failed_batches, f.batches) for f in failing_checks(results)]
    assert found == [("b", 5, 1, 1), ("a", 2, 1, 2), ("v", 0, 1, 1)]


def test_batch_line_shows_counts_profiles_scaled_aggregates_and_closed_windows() -> None:
    from datetime import UTC, datetime

    from rich.console import Console

    from streaming_dq.cli.demo_lines import batch_line
    from streaming_dq.core.outcome import BatchOutcome, CheckOutcome, WindowOutcome

    xmas = ("Christmas 2025",)
    volume = {"check_id": "batch-volume", "check_type": "row-count-min-check", "kind": "aggregate"}
    outcome = BatchOutcome(
        gate="demo-orders", batch_id=5, status="committed", rows_in=135, rows_passed=121,
        rows_quarantined=14, rows_malformed=1, duration_seconds=2.7,
        min_event_time=datetime(2025, 12, 20, 11, 2, tzinfo=UTC),
        max_event_time=datetime(2025, 12, 20, 22, 59, tzinfo=UTC), active_profiles=xmas,
        checks=(
            CheckOutcome(**volume, severity="warning", status="passed", raw_value=133, adjusted_value=332.5,
                         multiplier=2.5, regime=xmas),
            CheckOutcome(**volume, severity="warning", status="failed", raw_value=2, adjusted_value=2),
        ),
        windows=(
            WindowOutcome("orders-per-day", "row-count-min-check", "1 day", datetime(2025, 12, 18, 23, tzinfo=UTC),
                          datetime(2025, 12, 19, 23, tzinfo=UTC), "critical", "passed", 623, 623),
        ),
    )  # fmt: skip
    console = Console(width=200, highlight=False, soft_wrap=True)
    with console.capture() as captured:
        console.print(batch_line(outcome, "Europe/Berlin"))
    assert captured.get().splitlines() == [
        "  batch  5  Sat 20 Dec 12:02-23:59  in 135  passed 121  quarantined  14 (1 malformed)  warned  0    2.7 s  "
        "Christmas 2025",
        "            batch-volume 133 x2.5 = 332.5 passed; "
        "batch-volume [rows without a profile] 2 failed (warning)",
        "            window Fri 19 Dec closed: orders-per-day 623 passed",
    ]


def test_run_s_batch_line_tells_row_warnings_from_a_batch_warning() -> None:
    """#42: `batch 1 in 80 passed 70 quarantined 10 warned 70`: one batch warning counted every passed row."""
    from rich.console import Console

    from streaming_dq.cli.progress import batch_line
    from streaming_dq.core.outcome import BatchOutcome, CheckOutcome

    def check(check_id: str, kind: str, severity: str) -> CheckOutcome:
        return CheckOutcome(check_id, "x-check", kind, severity, "failed")  # type: ignore[arg-type]

    outcome = BatchOutcome(
        gate="orders", batch_id=1, status="committed", rows_in=80, rows_passed=70, rows_quarantined=10,
        rows_warned=3, duration_seconds=1.0,
        checks=(check("id-present", "row", "critical"), check("note-present", "row", "warning"),
                check("daily-volume", "aggregate", "warning")),
    )  # fmt: skip
    console = Console(width=300, highlight=False, soft_wrap=True)
    with console.capture() as captured:
        console.print(batch_line(outcome))
    line = captured.get().strip()
    assert "warned      3" in line
    assert line.endswith("(failed: id-present; row warnings: note-present; batch warning: daily-volume)"), (
        line
    )
