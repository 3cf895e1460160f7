"""CSV sources read by each file's header (#27): a producer that adds a column, or reorders them, loses
nothing and shifts nothing; the undeclared column is named and kept under the unknown-fields policy."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from streaming_dq.config.loader import load_gate_config
from streaming_dq.core.outcome import BatchOutcome
from streaming_dq.runtime.job import GateJob
from streaming_dq.tables import read_table

pytestmark = pytest.mark.spark

FILES = {
    # the declared layout
    "a.csv": "order_id,amount,currency\no1,12.5,EUR\no2,3,USD\n",
    # the producer adds a column at the end: Spark's reader made every line malformed (too many fields)
    "b.csv": "order_id,amount,currency,coupon_code\no3,30,EUR,XMAS\no4,7.25,EUR,\n",
    # another order, and a value of the wrong type: read by name; the bad line is malformed with its text
    "c.csv": "currency,order_id,amount\nGBP,o5,1.5\nEUR,o6,lots\n\n",
}


def _config(tmp_path: Path, unknown_fields: str) -> Path:
    landing = tmp_path / "landing"
    landing.mkdir()
    for name, text in FILES.items():
        (landing / name).write_text(text, encoding="utf-8")
    config = tmp_path / "gate.yaml"
    config.write_text(
        "gate: {name: orders}\n"
        "source:\n"
        "  format: csv\n"
        "  path: ./landing\n"
        "  schema: 'order_id STRING, amount DOUBLE, currency STRING'\n"
        "  options: {header: true}\n"
        f"  unknown-fields: {unknown_fields}\n"
        "targets: {pass: ./pass, quarantine: ./quarantine, results: ./results, writer: delta-rs}\n"
        "checkpoint: ./cp\n"
        "checks:\n"
        "  - {check: null-check, check-id: id-present, columns: [order_id]}\n"
        "  - {check: is-contained-in-check, check-id: known-currency, allowed-values: {currency: [EUR, USD, GBP]}}\n",
        encoding="utf-8",
    )
    return config


def _run(config: Path, spark: Any) -> list[BatchOutcome]:
    seen: list[BatchOutcome] = []
    totals = GateJob(load_gate_config(config), on_batch=seen.append, session=spark).run(timeout=600)
    assert not totals.failed, totals.error
    return seen


def test_each_file_is_read_by_its_header_and_an_added_column_is_kept_and_named(
    spark: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = _config(tmp_path, "warn")
    with caplog.at_level(logging.WARNING, logger="streaming_dq.source"):
        (outcome,) = _run(config, spark)
    assert (outcome.rows_in, outcome.rows_malformed, outcome.rows_quarantined) == (6, 1, 1)
    unknown = {c.check_id: c for c in outcome.checks}["unknown-fields"]
    assert (unknown.status, unknown.severity, unknown.violations) == ("failed", "warning", 2)

    passed = {r["order_id"]: r for r in read_table(str(tmp_path / "pass")).to_pylist()}
    assert {k: (r["amount"], r["currency"]) for k, r in passed.items()} == {
        "o1": (12.5, "EUR"),
        "o2": (3.0, "USD"),
        "o3": (30.0, "EUR"),
        "o4": (7.25, "EUR"),
        "o5": (1.5, "GBP"),  # the reordered file: by name, not by position
    }
    assert json.loads(passed["o3"]["_unknown_fields"]) == {"coupon_code": "XMAS"}
    assert passed["o4"]["_unknown_fields"] is not None and passed["o1"]["_unknown_fields"] is None
    (bad,) = read_table(str(tmp_path / "quarantine")).to_pylist()
    assert bad["_dq_raw"] == "EUR,o6,lots" and [e["check-id"] for e in bad["_dq_errors"]] == [
        "malformed-record"
    ]

    said = [r.getMessage() for r in caplog.records]
    assert any(
        "b.csv" in m and "coupon_code" in m and "_unknown_fields (unknown-fields: warn)" in m for m in said
    )
    assert any("c.csv" in m and "another order: read by name" in m for m in said)


def test_an_added_csv_column_can_quarantine_its_rows(spark: Any, tmp_path: Path) -> None:
    (outcome,) = _run(_config(tmp_path, "quarantine"), spark)
    quarantined = read_table(str(tmp_path / "quarantine")).to_pylist()
    by_id = {r["order_id"]: r for r in quarantined if r["order_id"] is not None}
    assert sorted(by_id) == ["o3", "o4"]
    assert json.loads(by_id["o3"]["_unknown_fields"]) == {"coupon_code": "XMAS"}
    assert {e["check-id"] for e in by_id["o3"]["_dq_errors"]} == {"unknown-fields"}
    assert sorted(read_table(str(tmp_path / "pass")).column("order_id").to_pylist()) == ["o1", "o2", "o5"]
    assert outcome.rows_in == 6


def test_check_reads_a_csv_file_by_its_header_as_run_does(spark: Any, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from streaming_dq.cli.main import app

    config = _config(tmp_path, "ignore")
    done = CliRunner().invoke(
        app,
        ["check", str(config), "--data", str(tmp_path / "landing" / "c.csv"), "--format", "csv", "--json"],
    )
    assert done.exit_code == 1, done.stdout  # the malformed line fails it
    summary = json.loads(done.stdout)["summary"]
    assert (summary["total_records"], summary["passed_records"]) == (
        2,
        1,
    )  # o5 by name; o6's amount is no number
