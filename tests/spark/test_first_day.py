"""What a new user hits on the first day (#12): undeclared fields, ``check`` against ``run`` on one file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from jobs_support import in_order, make_orders_job
from typer.testing import CliRunner

from streaming_dq.cli.main import app
from streaming_dq.config.loader import load_gate_config
from streaming_dq.core.outcome import BatchOutcome
from streaming_dq.runtime.job import GateJob
from streaming_dq.tables import read_table

pytestmark = pytest.mark.spark

ORDERS = [
    {"order_id": "o1", "order_ts": "2025-12-18T10:00:00Z", "customer_id": "C00001", "amount": 12.5,
     "currency": "EUR", "status": "paid"},
    {"order_id": "o2", "order_ts": "2025-12-18T11:00:00Z", "customer_id": "C00002", "amount": 30,
     "currency": "EUR", "status": "paid", "coupon_code": "XMAS", "gift": {"wrap": True, "notes": [1, 2.5]}},
]  # fmt: skip


def _job_with_lines(tmp_path: Path, lines: list[str], *, extra: str = "") -> Path:
    """The orders job with one landing file holding ``lines`` (and ``extra`` appended to its source section)."""
    config, summary = make_orders_job(tmp_path, batches=1, rows=20)
    landing = Path(summary["files"][0]).parent
    shutil.rmtree(landing)
    landing.mkdir(parents=True)
    (landing / "orders.json").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    if extra:
        text = config.read_text(encoding="utf-8")
        assert "\n  malformed-column:" not in text
        text = text.replace("\nsource:\n", f"\nsource:\n{extra}", 1)
        config.write_text(text, encoding="utf-8")
    return config


def _run(config: Path, spark: object) -> list[BatchOutcome]:
    seen: list[BatchOutcome] = []
    totals = GateJob(load_gate_config(config), on_batch=seen.append, session=spark).run(timeout=600)  # type: ignore[arg-type]
    assert not totals.failed, totals.error
    return seen


def _tables(config: Path) -> Path:
    return config.parent / "data" / "tables"


def test_undeclared_json_fields_are_kept_counted_and_warned_by_default(spark: object, tmp_path: Path) -> None:
    config = _job_with_lines(tmp_path, [json.dumps(o) for o in ORDERS])
    (outcome,) = _run(config, spark)
    unknown = {c.check_id: c for c in outcome.checks}["unknown-fields"]
    assert (unknown.status, unknown.severity, unknown.violations) == ("failed", "warning", 1)
    assert outcome.rows_warned >= 1

    passed = read_table(str(_tables(config) / "orders_pass")).to_pylist()
    by_id = {row["order_id"]: row for row in passed}
    assert by_id["o1"]["_unknown_fields"] is None
    kept = json.loads(by_id["o2"]["_unknown_fields"])
    assert kept == {"coupon_code": "XMAS", "gift": {"wrap": True, "notes": [1, 2.5]}}
    assert by_id["o2"]["amount"] == 30 and by_id["o2"]["currency"] == "EUR"  # the declared fields as before


def test_undeclared_json_fields_can_quarantine_the_row(spark: object, tmp_path: Path) -> None:
    config = _job_with_lines(
        tmp_path, [json.dumps(o) for o in ORDERS], extra="  unknown-fields: quarantine\n"
    )
    (outcome,) = _run(config, spark)
    assert outcome.rows_in == 2
    quarantined = read_table(str(_tables(config) / "orders_quarantine")).to_pylist()
    (row,) = [r for r in quarantined if r["order_id"] == "o2"]
    errors = {e["check-id"]: e["severity"] for e in row["_dq_errors"]}
    assert errors["unknown-fields"] == "critical"  # (and the batch's too-small-volume warning)
    assert json.loads(row["_unknown_fields"])["coupon_code"] == "XMAS"
    passed = read_table(str(_tables(config) / "orders_pass")).column("order_id").to_pylist()
    assert passed == ["o1"]


def test_with_ignore_undeclared_fields_are_dropped_as_spark_drops_them(spark: object, tmp_path: Path) -> None:
    config = _job_with_lines(tmp_path, [json.dumps(o) for o in ORDERS], extra="  unknown-fields: ignore\n")
    (outcome,) = _run(config, spark)
    assert "unknown-fields" not in {c.check_id for c in outcome.checks}
    passed = read_table(str(_tables(config) / "orders_pass"))
    assert "_unknown_fields" not in passed.column_names and passed.num_rows == 2


@pytest.mark.parametrize("unknown_fields", ["warn", "ignore"])
def test_a_json_line_with_text_after_its_object_is_malformed_and_kept_whole(
    spark: object, tmp_path: Path, unknown_fields: str
) -> None:
    """Spark's JSON parser reads the first object of a line and drops the rest without a word: a second
    record, or trailing text, must quarantine the line with its raw text instead (#27); whitespace-only lines
    are blank lines (skipped, as Spark skips them), whatever ``unknown-fields`` says."""
    first, second = (json.dumps(o) for o in ORDERS)
    third = json.dumps({**ORDERS[0], "order_id": "o3"})
    lines = [first, f"{second} {first}", f"{second}trailing", "\t", f"{third} \t"]
    config = _job_with_lines(tmp_path, lines, extra=f"  unknown-fields: {unknown_fields}\n")
    (outcome,) = _run(config, spark)
    assert (outcome.rows_in, outcome.rows_malformed) == (4, 2)
    quarantined = read_table(str(_tables(config) / "orders_quarantine")).to_pylist()
    malformed = sorted(r["_dq_raw"] for r in quarantined if r["_dq_raw"] is not None)
    assert malformed == sorted([f"{second} {first}", f"{second}trailing"])
    assert all(r["order_id"] is None for r in quarantined if r["_dq_raw"] is not None)
    passed = read_table(str(_tables(config) / "orders_pass")).column("order_id").to_pylist()
    assert sorted(passed) == ["o1", "o3"]


def test_one_file_gives_the_same_per_check_counts_through_check_and_run(
    spark: object, tmp_path: Path
) -> None:
    config, summary = make_orders_job(tmp_path, batches=1, rows=60, seed=11)
    assert summary["malformed"] > 0  # malformed lines are what made the two commands disagree
    data = Path(summary["files"][0])
    checked = CliRunner().invoke(app, ["check", str(config), "--data", str(data), "--json"])
    assert checked.exit_code == 1, checked.output
    doc = json.loads(checked.stdout)
    report = {c["check-id"]: c for c in doc["checks"]}
    assert report["malformed-record"]["status"] == "failed"
    assert {report[c]["status"] for c in ("daily-volume", "daily-basket")} == {"not-judged"}

    (outcome,) = _run(config, spark)
    assert outcome.rows_in == doc["summary"]["total_records"]
    assert outcome.rows_malformed == summary["malformed"]
    assert (
        f"{summary['malformed']} of {outcome.rows_in} rows could not be parsed"
        in (report["malformed-record"]["details"])
    )
    assert outcome.rows_quarantined == doc["summary"]["failed_records"]
    for check in outcome.checks:
        if check.kind != "row":
            continue
        line = report[check.check_id]
        assert line["status"] == check.status, check.check_id
        if check.violations:
            assert re.search(rf"\b{check.violations}\b", line["details"]), (check.check_id, line["details"])


def test_gate_start_refuses_checks_the_stream_cannot_feed_in_one_line(spark: object, tmp_path: Path) -> None:
    from test_gate_support import make_gate, stream

    from streaming_dq.exceptions import CheckEvaluationError, ConfigError

    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "a.json").write_text('{"id": "1", "amount": "12.5"}\n', encoding="utf-8")
    sdf = stream(spark, landing, "id STRING, amount STRING, ts TIMESTAMP")
    numeric = [
        {"check": "numeric-min-check", "check-id": "amount-positive", "columns": ["amount"], "min-value": 0}
    ]
    gate = make_gate(tmp_path, numeric)
    with pytest.raises(CheckEvaluationError) as info:
        gate.start(sdf, checkpoint_location=str(tmp_path / "state"))
    assert str(info.value) == (
        "check 'amount-positive': column 'amount' is string; numeric-min-check needs a numeric column"
    )
    missing = [{"check": "null-check", "check-id": "sku-present", "columns": ["sku"]}]
    with pytest.raises(CheckEvaluationError, match="'sku' is not in the stream's columns"):
        make_gate(tmp_path, missing).start(sdf, checkpoint_location=str(tmp_path / "state"))
    with pytest.raises(ConfigError, match="event-time column 'order_ts' is not in the stream"):
        make_gate(tmp_path, missing, event_time="order_ts").start(
            sdf, checkpoint_location=str(tmp_path / "s")
        )
    with pytest.raises(ConfigError, match="event-time column 'id' is string, not a timestamp"):
        make_gate(tmp_path, missing, event_time="id").start(sdf, checkpoint_location=str(tmp_path / "s"))
    assert not (tmp_path / "pass").exists() and not (tmp_path / "state").exists()  # refused before writing


def test_metrics_prints_the_gate_s_local_days_uncut(spark: object, tmp_path: Path) -> None:
    config, summary = make_orders_job(tmp_path, batches=3, rows=40)
    in_order(summary["files"])
    _run(config, spark)
    result = CliRunner().invoke(app, ["metrics", str(config), "--window", "24 hours"])  # = the config's 1 day
    assert result.exit_code == 0, result.output
    assert "times in Europe/Berlin" in result.stdout
    rows = [line for line in result.stdout.splitlines() if "daily-volume" in line]
    # The generator's days are Thu 18, Fri 19 (the outage), Sat 20 Dec ... in Berlin; in UTC they start at 23:00
    days = [re.search(r"\w{3} 2025-12-\d\d", r)[0] for r in rows]  # type: ignore[index]
    assert days[:3] == ["Thu 2025-12-18", "Fri 2025-12-19", "Sat 2025-12-20"]
    assert "UTC" not in result.stdout and "…" not in result.stdout
    assert "failed" in rows[1]


def test_the_metrics_commands_of_docs_streaming_md_run_as_written(spark: object, tmp_path: Path) -> None:
    import shlex

    from jobs_support import REPO

    text = (REPO / "docs" / "streaming.md").read_text(encoding="utf-8")
    commands = [
        line.split("#")[0].strip() for line in text.splitlines() if line.startswith("streaming-dq metrics ")
    ]
    assert len(commands) == 3
    config, _ = make_orders_job(tmp_path, batches=2, rows=40)
    _run(config, spark)
    for command in commands:
        args = shlex.split(command)[1:]
        assert args[1] == "jobs/orders/orders.yaml"
        args[1] = str(config)  # the job's copy, run above
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, (command, result.output)
        assert "daily-volume" in result.stdout, command
