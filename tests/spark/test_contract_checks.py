"""An ODCS contract's rules judged by Spark (#59): each library metric x each operator against counts taken by
hand, a sql rule with both placeholders, and a stream whose producer breaks the contract mid-stream."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_gate_support import land, run, stream, table

from streaming_dq import BatchDQEngine, CheckSet
from streaming_dq.config.odcs import ContractOptions, contract_checks
from streaming_dq.sink import QualityGate

pytestmark = pytest.mark.spark

#: s: NULLs, an empty string, 'n/a' and 'N/A' (missing is case-sensitive), repeats; n: repeats, NULL, 0, -1.
ROWS = [
    ("a", 1),
    ("a", 2),
    ("b", 2),
    (None, 3),
    ("", None),
    ("n/a", 5),
    ("N/A", 5),
    ("c", 5),
    ("a", 0),
    (None, -1),
]
S = [r[0] for r in ROWS]
N = [r[1] for r in ROWS]


def _oracle() -> dict[str, tuple[dict[str, Any], float]]:
    """Each metric as a rule (without its operator) and its value, counted here in Python."""
    nonnull_s, nonnull_n = [v for v in S if v is not None], [v for v in N if v is not None]
    total = len(ROWS)
    nulls = sum(v is None for v in S)
    missing = sum(v in (None, "", "n/a") for v in S)
    invalid = sum(v not in ("a", "b") for v in nonnull_s)
    unpatterned = sum(not (len(v) == 1 and v.islower()) for v in nonnull_s)
    dups_n = len(nonnull_n) - len(set(nonnull_n))
    dups_s = len(nonnull_s) - len(set(nonnull_s))
    assert (nulls, missing, invalid, unpatterned, dups_n, dups_s) == (2, 4, 4, 3, 3, 2)  # the data as meant
    return {
        "nulls": ({"metric": "nullValues", "on": "s"}, nulls),
        "nulls-pct": ({"metric": "nullValues", "on": "s", "unit": "percent"}, 100 * nulls / total),
        "missing": ({"metric": "missingValues", "on": "s", "arguments": {"missingValues": [None, "", "n/a"]}}, missing),
        "missing-pct": ({"metric": "missingValues", "on": "s", "unit": "percent",
                         "arguments": {"missingValues": [None, "", "n/a"]}}, 100 * missing / total),
        "invalid": ({"metric": "invalidValues", "on": "s", "arguments": {"validValues": ["a", "b"]}}, invalid),
        "invalid-pattern": ({"metric": "invalidValues", "on": "s", "arguments": {"pattern": "^[a-z]$"}}, unpatterned),
        "dups": ({"metric": "duplicateValues", "on": "n"}, dups_n),
        "dups-pct": ({"metric": "duplicateValues", "on": "n", "unit": "percent"}, 100 * dups_n / len(nonnull_n)),
        "dups-s": ({"metric": "duplicateValues", "on": "s"}, dups_s),
        "rows": ({"metric": "rowCount"}, total),
    }  # fmt: skip


#: Each operator with a bound it holds for and one it breaks, around the metric's value v.
OPERATORS = {
    "mustBe": (lambda v: v, lambda v: v + 1),
    "mustNotBe": (lambda v: v + 1, lambda v: v),
    "mustBeGreaterThan": (lambda v: v - 1, lambda v: v),
    "mustBeGreaterOrEqualTo": (lambda v: v, lambda v: v + 0.5),
    "mustBeLessThan": (lambda v: v + 1, lambda v: v),
    "mustBeLessOrEqualTo": (lambda v: v, lambda v: v - 0.5),
    "mustBeBetween": (lambda v: [v, v + 1], lambda v: [v + 0.5, v + 2]),
    "mustNotBeBetween": (lambda v: [v + 0.5, v + 2], lambda v: [v - 1, v]),
}


def _contract(tmp_path: Path) -> tuple[Path, dict[str, tuple[bool, float]]]:
    """Every metric x operator x (holds, breaks) as one rule; returns the file and each rule's expectation."""
    by_property: dict[str | None, list[dict[str, Any]]] = {"s": [], "n": [], None: []}
    expected: dict[str, tuple[bool, float]] = {}
    for name, (rule, value) in _oracle().items():
        for operator, bounds in OPERATORS.items():
            for holds, bound in zip((True, False), bounds, strict=True):
                rule_id = f"{name}-{operator}-{'holds' if holds else 'breaks'}"
                one = {k: v for k, v in rule.items() if k != "on"} | {"id": rule_id, operator: bound(value)}
                one["severity"] = "warning"  # a verdict each, no batch quarantined
                by_property[rule.get("on")].append(one)
                expected[rule_id] = (holds, value)
    doc = {"apiVersion": "v3.1.0", "kind": "DataContract", "id": "oracle", "version": "1.0.0", "status": "active",
           "schema": [{"name": "t", "quality": by_property[None], "properties": [
               {"name": "s", "logicalType": "string", "quality": by_property["s"]},
               {"name": "n", "logicalType": "integer", "quality": by_property["n"]}]}]}  # fmt: skip
    path = tmp_path / "oracle.odcs.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path, expected


@pytest.mark.compat  # the oldest and newest Spark tiers run it too (#56): the contract's checks on each line
@pytest.mark.edges  # ... not the middle ones (4.0, 4.1), for make test's time
def test_each_library_metric_and_operator_against_counts_taken_by_hand(spark, tmp_path: Path) -> None:
    path, expected = _contract(tmp_path)
    mapping, built, problems = contract_checks(str(path), ContractOptions(), {})
    assert not problems and mapping is not None
    assert len(expected) == 10 * 8 * 2 and len(built) == len(expected) + 1  # + the schema rule
    df = spark.createDataFrame(ROWS, "s STRING, n INT")
    result = BatchDQEngine(CheckSet(b.check for b in built)).run_batch(df)
    held = {a.check_id: a.status == "passed" for a in result.aggregate_results}
    values = {a.check_id: a.result.metrics.get("value") for a in result.aggregate_results}
    held |= {r.check.check_id: r.violations == 0 for r in result.outcome.row_results}
    assert held.pop("t.schema") is True
    wrong = {rule: (held[rule], want) for rule, (want, _) in expected.items() if held[rule] != want}
    assert not wrong, wrong
    # the counted metrics report the value the contract's rule compared (the duplicates ride on SQL)
    for rule, (_, value) in expected.items():
        if not rule.startswith("dups"):
            assert values[rule] == pytest.approx(value), rule


def test_a_sql_rule_reads_the_batch_and_the_property_through_its_placeholders(spark, tmp_path: Path) -> None:
    quality = [
        {"id": "negatives", "type": "sql", "query": "SELECT count(*) FROM {object} WHERE {property} < 0", "mustBe": 1},
        {"id": "too-big", "type": "sql", "query": "SELECT max(${property}) FROM ${object}", "mustBeLessThan": 5},
        {"id": "by-name", "type": "sql", "query": "select count(*) from t where n = 5", "mustBeGreaterThan": 2},
    ]  # fmt: skip
    doc = {"apiVersion": "v3.1.0", "kind": "DataContract", "id": "q", "version": "1", "status": "active",
           "schema": [{"name": "t", "properties": [{"name": "s", "logicalType": "string"},
               {"name": "n", "logicalType": "integer", "quality": quality}]}]}  # fmt: skip
    path = tmp_path / "q.odcs.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    _, built, problems = contract_checks(str(path), ContractOptions(), {})
    assert not problems
    result = BatchDQEngine(CheckSet(b.check for b in built)).run_batch(
        spark.createDataFrame(ROWS, "s STRING, n INT")
    )
    verdicts = {a.check_id: (a.status, a.result.metrics.get("value")) for a in result.aggregate_results}
    # one negative (holds); max is 5, not < 5 (breaks: a critical batch rule, so every row carries it); three 5s
    assert verdicts == {"negatives": ("passed", 1.0), "too-big": ("failed", 5.0), "by-name": ("passed", 3.0),
                        "t.schema": ("passed", None)}  # fmt: skip
    reasons = {e["check-id"] for row in result.fail_df().collect() for e in row["_dq_errors"]}
    assert reasons == {"too-big"}


CONTRACT = """
apiVersion: v3.1.0
kind: DataContract
id: urn:test:orders
version: 2.1.0
status: active
schema:
  - name: orders
    properties:
      - {name: id, logicalType: integer, required: true}
      - {name: amount, logicalType: number, logicalTypeOptions: {minimum: 0}}
      - name: note
        logicalType: string
        quality:
          - {id: note-mostly-there, metric: nullValues, unit: percent, mustBeLessThan: 25}
"""


def test_a_stream_whose_producer_breaks_the_contract_is_judged_batch_by_batch(spark, tmp_path: Path) -> None:
    (tmp_path / "orders.odcs.yaml").write_text(CONTRACT, encoding="utf-8")
    _, built, problems = contract_checks(str(tmp_path / "orders.odcs.yaml"), ContractOptions(), {})
    assert not problems
    gate = QualityGate(
        "orders", CheckSet(b.check for b in built), pass_table=str(tmp_path / "pass"),
        quarantine_table=str(tmp_path / "quarantine"), results_table=str(tmp_path / "results"), writer="delta-rs",
    )  # fmt: skip
    landing = tmp_path / "landing"
    ok = [{"id": i, "amount": 1.0 + i, "note": "x"} for i in range(8)]
    # 1 keeps the contract; 2: a negative amount and a NULL id (two rows out); 3: the NULL share of note rises
    # past 25% (the batch's rule breaks: every row out); 4: amount sent as text (malformed: out with its raw line)
    land(landing, "1", ok)
    land(
        landing,
        "2",
        [*ok[:6], {"id": 8, "amount": -1.0, "note": "x"}, {"id": None, "amount": 2.0, "note": "x"}],
    )
    land(landing, "3", [*ok[:5], *({"id": 20 + i, "amount": 1.0, "note": None} for i in range(3))])
    land(landing, "4", [*ok[:7], '{"id": 30, "amount": "12,50 EUR", "note": "x"}'])
    for i, name in enumerate(sorted(p.name for p in landing.iterdir())):  # oldest first: one file per batch
        os.utime(landing / name, (1_700_000_000 + i, 1_700_000_000 + i))
    sdf = stream(spark, landing, "id BIGINT, amount DOUBLE, note STRING", maxFilesPerTrigger="1")
    run(gate, sdf, tmp_path / "checkpoint")

    results = table(tmp_path / "results").to_pylist()
    batches = sorted(
        (r["batch_id"], r["rows_passed"], r["rows_quarantined"]) for r in results if r["kind"] == "batch"
    )
    assert batches == [(0, 8, 0), (1, 6, 2), (2, 0, 8), (3, 7, 1)]
    failed = sorted((r["batch_id"], r["check_id"]) for r in results if r["status"] == "failed")
    assert failed == [(1, "amount.minimum"), (1, "id.required"), (2, "note-mostly-there"),
                      (3, "malformed-record")], failed  # fmt: skip
    quarantined = table(tmp_path / "quarantine").to_pylist()
    tags = {e["check-id"] for r in quarantined for e in r["_dq_errors"]}
    assert {"amount.minimum", "id.required", "note-mostly-there", "malformed-record"} <= tags
    [raw] = [r["_dq_raw"] for r in quarantined if r.get("_dq_raw")]
    assert "12,50 EUR" in raw


def test_a_new_column_and_a_changed_type_break_the_contracts_schema_rule(spark, tmp_path: Path) -> None:
    (tmp_path / "orders.odcs.yaml").write_text(CONTRACT, encoding="utf-8")
    _, built, _ = contract_checks(str(tmp_path / "orders.odcs.yaml"), ContractOptions(), {})
    # the schema rule alone: a retyped amount would fail the minimum's comparison itself (in a gate, schema
    # drift quarantines such a batch before any check: tests/spark/test_gate_bad_input.py)
    engine = BatchDQEngine(CheckSet(b.check for b in built if b.check.check_id == "orders.schema"))
    ok = spark.createDataFrame([(1, 2.0, "x")], "id BIGINT, amount DOUBLE, note STRING")
    added = spark.createDataFrame(
        [(1, 2.0, "x", "c1")], "id BIGINT, amount DOUBLE, note STRING, coupon STRING"
    )
    retyped = spark.createDataFrame([(1, "2.0", "x")], "id BIGINT, amount STRING, note STRING")
    for df, want in ((ok, "passed"), (added, "failed"), (retyped, "failed")):
        [schema] = [a for a in engine.run_batch(df).aggregate_results if a.check_id == "orders.schema"]
        assert schema.status == want, (df.columns, schema.result.metrics)
    [schema] = [a for a in engine.run_batch(added).aggregate_results if a.check_id == "orders.schema"]
    assert schema.result.metrics["unexpected_columns"] == ["coupon"]
    allowing = contract_checks(
        str(tmp_path / "orders.odcs.yaml"), ContractOptions(extra_columns="allow"), {}
    )[1]
    allowing_schema = CheckSet(b.check for b in allowing if b.check.check_id == "orders.schema")
    [schema] = BatchDQEngine(allowing_schema).run_batch(added).aggregate_results
    assert schema.status == "passed"
