"""A real file stream through the gate: every row lands in exactly one table, results and outcomes add up."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from test_gate_support import Recorder, ids, land, make_gate, row, run, stream, table, utc

pytestmark = pytest.mark.spark


def test_pass_plus_quarantine_is_the_input_row_for_row(spark, tmp_path):
    landing = tmp_path / "landing"
    land(landing, "a", [row(1), row(2, amount=None), row(3, note=None), row(4)])
    land(landing, "b", [row(5, note=None), row(6), row(7, amount=None), row(8, ts=None)])
    land(landing, "c", [row(9), {"id": None, "amount": 2.0, "ts": "2025-03-02T10:00:00Z", "note": "x"}])
    seen = []
    gate = make_gate(tmp_path, event_time="ts", on_batch=seen.append)

    run(gate, stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")

    passed, quarantined = ids(tmp_path / "pass"), ids(tmp_path / "quarantine")
    assert Counter(passed) == Counter([1, 3, 4, 5, 6, 8, 9])  # warned rows 3 and 5 pass
    assert Counter(quarantined) == Counter([2, 7, None])
    assert [o.status for o in seen] == ["committed"] * 3
    assert [o.batch_id for o in seen] == [0, 1, 2]
    assert sum(o.rows_in for o in seen) == 10
    assert sum(o.rows_passed for o in seen) == 7
    assert sum(o.rows_quarantined for o in seen) == 3
    assert sum(o.rows_warned for o in seen) == 2
    assert sum(o.rows_null_event_time for o in seen) == 1
    assert gate.metrics.batches == seen  # type: ignore[union-attr]


def test_tables_have_the_documented_columns(spark, tmp_path):
    landing = tmp_path / "landing"
    land(landing, "a", [row(1), row(2, amount=None), row(3, note=None), '{"id": 4, "amount": ', row(5)])
    gate = make_gate(tmp_path, event_time="ts")

    run(gate, stream(spark, landing), tmp_path / "chk")

    passed = table(tmp_path / "pass")
    assert passed.schema.names == ["id", "amount", "ts", "note"]
    assert all(f.nullable for f in passed.schema)
    assert passed.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    q = table(tmp_path / "quarantine").sort_by("id").to_pylist()
    assert [r["id"] for r in q] == [2, None]
    assert q[0]["_dq_errors"] == [
        {"check": "null-check", "check-id": "amount-present", "severity": "critical"}
    ]
    assert q[1]["_dq_errors"] == [
        {"check": "malformed-record", "check-id": "malformed-record", "severity": "critical"}
    ]
    assert q[1]["_dq_raw"] == '{"id": 4, "amount": '
    assert q[0]["_dq_raw"] is None
    assert {(r["_dq_batch_id"], r["_dq_gate"]) for r in q} == {(0, "orders")}
    assert q[0]["_dq_validation_ts"].tzinfo is not None
    assert table(tmp_path / "quarantine").schema.field("_dq_validation_ts").type == pa.timestamp(
        "us", tz="UTC"
    )


def test_results_table_has_one_row_per_check_per_batch(spark, tmp_path):
    landing = tmp_path / "landing"
    land(landing, "a", [row(1), row(2, amount=None), row(3, note=None, ts="2025-03-04T05:06:07Z")])
    gate = make_gate(tmp_path, event_time="ts")

    query = run(gate, stream(spark, landing), tmp_path / "chk")

    results = table(tmp_path / "results").to_pylist()
    [batch] = [r for r in results if r["kind"] == "batch"]
    by_check = {r["check_id"]: r for r in results if r["kind"] != "batch"}
    assert list(by_check) == ["malformed-record", "id-present", "amount-present", "note-present", "not-empty"]
    assert {(r["gate"], r["batch_id"], r["app_id"]) for r in results} == {("orders", 0, f"orders:{query.id}")}
    assert by_check["amount-present"] | {"validation_ts": None} == {
        "gate": "orders",
        "batch_id": 0,
        "app_id": f"orders:{query.id}",
        "check_id": "amount-present",
        "check_type": "null-check",
        "kind": "row",
        "severity": "critical",
        "status": "failed",
        "violations": 1,
        "rows": 3,
        "raw_value": None,
        "multiplier": 1.0,
        "adjusted_value": None,
        "profiles": [],
        "regime": [],
        "event_time_min": utc(2025, 3, 1, 0, 0, 1),
        "event_time_max": utc(2025, 3, 4, 5, 6, 7),
        "validation_ts": None,
        "window": None,
        "window_start": None,
        "window_end": None,
        **dict.fromkeys(
            ("rows_passed", "rows_quarantined", "rows_warned", "rows_malformed", "rows_late"), None
        ),
        "rows_null_event_time": None,
        "duration_seconds": None,
        **dict.fromkeys(("expected_value", "band_low", "band_high", "score", "history", "reason"), None),
    }
    assert {k: batch[k] for k in ("check_id", "status", "rows", "rows_passed", "rows_quarantined", "rows_warned",
                                  "rows_malformed", "rows_null_event_time", "profiles")} == {
        "check_id": None, "status": "committed", "rows": 3, "rows_passed": 2, "rows_quarantined": 1,
        "rows_warned": 1, "rows_malformed": 0, "rows_null_event_time": 0, "profiles": [],
    }  # fmt: skip
    assert batch["duration_seconds"] > 0
    assert by_check["note-present"]["severity"] == "warning"
    assert (by_check["not-empty"]["kind"], by_check["not-empty"]["raw_value"]) == ("aggregate", 3.0)
    assert by_check["id-present"]["status"] == "passed"


def test_empty_batch_commits_the_txn_markers_and_counts_nothing(spark, tmp_path):
    from deltalake import DeltaTable

    gate = make_gate(tmp_path, event_time="ts")
    empty = spark.createDataFrame([], "id BIGINT, amount DOUBLE, ts TIMESTAMP, note STRING")
    gate.ensure_tables(empty.schema, spark)
    sc = spark.sparkContext
    sc.setJobGroup("gate-empty-batch", "an empty batch costs one job")
    try:
        gate(empty, 0)
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    assert len(sc.statusTracker().getJobIdsForGroup("gate-empty-batch")) <= 1
    recorder = gate.metrics
    assert isinstance(recorder, Recorder)
    (outcome,) = recorder.batches
    assert (outcome.status, outcome.rows_in, outcome.min_event_time) == ("committed", 0, None)
    for name in ("pass", "quarantine", "results"):
        assert DeltaTable(str(tmp_path / name)).transaction_version("orders") == 0
    assert table(tmp_path / "pass").num_rows == 0
    # the aggregate check failed on the empty batch: reported, but only a warning
    assert [r["status"] for r in table(tmp_path / "results").to_pylist() if r["check_id"] == "not-empty"] == [
        "failed"
    ]


def test_more_checks_than_one_bitmask_word_keep_every_verdict_apart(spark, tmp_path):
    """130 row checks span three 62-bit words; row i fails exactly check i, whichever word holds its bit."""
    from streaming_dq.config.check_set import CheckSet

    checks = CheckSet.from_dicts(
        [
            {"check": "expression-check", "check-id": f"not-{i}", "expression": f"id <> {i}"}
            for i in range(130)
        ]
    )
    gate = make_gate(tmp_path, checks)
    df = spark.createDataFrame(
        [(i, 1.0, None, "n") for i in range(140)], "id BIGINT, amount DOUBLE, ts TIMESTAMP, note STRING"
    )

    gate(df, 0)

    assert sorted(ids(tmp_path / "pass")) == list(range(130, 140))
    quarantined = table(tmp_path / "quarantine")
    errors = {
        rid: [e["check-id"] for e in errs]
        for rid, errs in zip(
            quarantined.column("id").to_pylist(), quarantined.column("_dq_errors").to_pylist(), strict=True
        )
    }
    assert errors == {i: [f"not-{i}"] for i in range(130)}
    results = table(tmp_path / "results").to_pylist()
    assert {r["check_id"]: r["violations"] for r in results if (r["check_id"] or "").startswith("not-")} == {
        f"not-{i}": 1 for i in range(130)
    }
