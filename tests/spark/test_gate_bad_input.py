"""Bad input: malformed lines, schema drift under each policy, NULL event times, reference datasets."""

from __future__ import annotations

import json
import logging
from collections import Counter
from datetime import date

import pytest
from deltalake import DeltaTable
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from test_gate_support import SCHEMA, Recorder, ids, land, make_gate, row, run, stream, table

from streaming_dq.compat.spark import parse_ddl
from streaming_dq.config.check_set import CheckSet
from streaming_dq.core.base_check import BaseRowCheck, IntegrityCheckMixin
from streaming_dq.exceptions import GateFailedError, MissingReferenceDatasetError
from streaming_dq.profiles import HolidayProfile, check_id
from streaming_dq.sink import ReferenceDatasetUnavailableError, ReferenceResolver, ReferenceSpec

pytestmark = pytest.mark.spark


def test_malformed_lines_and_null_event_times(spark, tmp_path):
    landing = tmp_path / "landing"
    xmas = HolidayProfile(
        "xmas", date(2025, 12, 20), date(2026, 1, 5), [check_id("amount-present").disable()]
    )
    land(
        landing,
        "a",
        [
            row(1, ts="2025-12-24T10:00:00Z", amount=None),  # amount check disabled on the holiday: passes
            row(2, ts="2025-12-18T10:00:00Z", amount=None),  # no profile: quarantined
            row(3, ts=None, amount=None),  # NULL event time: judged under no profile, quarantined
            row(4, ts=None),
            "{not json at all",
            row(5, ts="2025-12-25T00:00:00Z"),
        ],
    )
    seen = []
    gate = make_gate(tmp_path, event_time="ts", profiles=[xmas], on_batch=seen.append)

    run(gate, stream(spark, landing), tmp_path / "chk")

    assert Counter(ids(tmp_path / "pass")) == Counter([1, 4, 5])
    assert Counter(ids(tmp_path / "quarantine")) == Counter([2, 3, None])
    (outcome,) = seen
    assert (outcome.rows_in, outcome.rows_malformed, outcome.rows_null_event_time) == (6, 1, 2)
    assert outcome.active_profiles == ("xmas",)
    malformed = [r for r in table(tmp_path / "quarantine").to_pylist() if r["id"] is None]
    assert [(r["_dq_raw"], [e["check-id"] for e in r["_dq_errors"]]) for r in malformed] == [
        ("{not json at all", ["malformed-record"])
    ]
    assert "_corrupt_record" not in table(tmp_path / "pass").column_names


BASE = [(1, 1.5, None, "a"), (2, None, None, "b")]
DRIFTED = {
    "added": (
        "id BIGINT, amount DOUBLE, ts TIMESTAMP, note STRING, coupon STRING",
        [(*BASE[0], "c1"), (*BASE[1], None)],
    ),
    "missing": ("id BIGINT, amount DOUBLE, ts TIMESTAMP", [r[:3] for r in BASE]),
    "changed": (
        "id BIGINT, amount STRING, ts TIMESTAMP, note STRING",
        [(1, "1.5", None, "a"), (2, None, None, "b")],
    ),
}


@pytest.mark.parametrize(
    ("policy", "drift", "action"),
    [
        (None, "added", "merge"),
        (None, "missing", "quarantine"),
        (None, "changed", "quarantine"),
        ("merge", "missing", "merge"),
        ("merge", "changed", "quarantine"),
        ("quarantine", "added", "quarantine"),
        ("stop", "missing", "stop"),
    ],
)
def test_schema_drift_policy(spark, tmp_path, caplog, policy, drift, action):
    gate = make_gate(tmp_path, schema_drift=policy)
    gate.ensure_tables(parse_ddl(SCHEMA), spark)  # type: ignore[arg-type]
    ddl, rows = DRIFTED[drift]
    caplog.set_level(logging.WARNING, logger="streaming_dq.gate")

    if action == "stop":
        with pytest.raises(GateFailedError, match="schema drift: missing"):
            gate(spark.createDataFrame(rows, ddl), 0)
        assert DeltaTable(str(tmp_path / "pass")).transaction_version("orders") is None
    else:
        gate(spark.createDataFrame(rows, ddl), 0)

    drift_lines = [r for r in caplog.records if "schema drift" in r.getMessage()]
    assert len(drift_lines) == 1, caplog.text
    assert f"policy {policy or 'default'}" in drift_lines[0].getMessage()
    if action == "merge":
        assert Counter(ids(tmp_path / "pass")) == Counter([1])
        assert Counter(ids(tmp_path / "quarantine")) == Counter([2])
        passed = table(tmp_path / "pass").to_pylist()[0]
        assert passed == {"id": 1, "amount": 1.5, "ts": None, "note": None if drift == "missing" else "a"} | (
            {"coupon": "c1"} if drift == "added" else {}
        )
    elif action == "quarantine":
        assert table(tmp_path / "pass").num_rows == 0
        q = table(tmp_path / "quarantine").sort_by("id").to_pylist()
        assert [r["id"] for r in q] == [1, 2]
        assert {e["check-id"] for r in q for e in r["_dq_errors"]} == {"schema-drift"}
        assert [json.loads(r["_dq_raw"])["id"] for r in q] == [1, 2]
        assert q[0]["amount"] == (None if drift == "changed" else 1.5)
        results = table(tmp_path / "results").to_pylist()
        assert sorted((r["kind"], r["check_id"], r["status"], r["violations"]) for r in results) == [
            ("aggregate", "schema-drift", "failed", 2), ("batch", None, "committed", None)
        ]  # fmt: skip
        [batch] = [r for r in results if r["kind"] == "batch"]
        assert (batch["rows"], batch["rows_passed"], batch["rows_quarantined"]) == (2, 0, 2)


def test_drift_quarantine_keeps_a_consistent_quarantine_schema_across_merges(spark, tmp_path):
    gate = make_gate(tmp_path)
    gate(spark.createDataFrame(BASE, SCHEMA), 0)
    ddl, rows = DRIFTED["added"]
    gate(spark.createDataFrame(rows, ddl), 1)
    assert "coupon" in table(tmp_path / "quarantine").column_names
    assert Counter(ids(tmp_path / "pass")) == Counter([1, 1])


class NoteKnown(IntegrityCheckMixin, BaseRowCheck):
    """Fails a row whose ``note`` is not in the reference dataset ``notes``."""

    def __init__(self, check_id: str, reference: str = "notes") -> None:
        super().__init__(check_id)
        self.reference = reference

    def validate(self, df: DataFrame, column: str | None = None) -> DataFrame:
        ref = self.get_reference_df(self.reference).select(F.col("note").alias("__ref")).distinct()
        joined = df.join(ref.withColumn("__hit", F.lit(True)), df["note"] == ref["__ref"], "left")
        return joined.withColumn(column or self.result_column, F.col("__hit").isNull()).drop("__ref", "__hit")


def test_reference_spec_is_re_read_so_a_growing_dimension_is_seen(spark, tmp_path):
    dims = tmp_path / "notes"
    dims.mkdir()
    (dims / "1.csv").write_text("note\na\n")
    spec = ReferenceSpec("csv", str(dims), schema="note STRING", options={"header": "true"})
    gate = make_gate(tmp_path, CheckSet([NoteKnown("note-known")]), reference_datasets={"notes": spec})

    gate(spark.createDataFrame([(1, 1.0, None, "a"), (2, 1.0, None, "b")], SCHEMA), 0)
    (dims / "2.csv").write_text("note\nb\n")
    gate(spark.createDataFrame([(3, 1.0, None, "b")], SCHEMA), 1)

    assert Counter(ids(tmp_path / "pass")) == Counter([1, 3])
    assert Counter(ids(tmp_path / "quarantine")) == Counter([2])


def test_reference_spec_is_cached_for_its_refresh_interval(spark, tmp_path):
    (tmp_path / "n.csv").write_text("note\na\n")
    now = [0.0]
    spec = ReferenceSpec("csv", str(tmp_path / "n.csv"), schema="note STRING", refresh_seconds=10)
    resolver = ReferenceResolver({"notes": spec}, clock=lambda: now[0])
    first = resolver.resolve(spark)["notes"]
    now[0] = 5.0
    assert resolver.resolve(spark)["notes"] is first
    now[0] = 11.0
    assert resolver.resolve(spark)["notes"] is not first


def test_missing_reference_dataset_fails_the_batch(spark, tmp_path):
    gate = make_gate(tmp_path, CheckSet([NoteKnown("note-known", reference="customers")]))
    with pytest.raises(MissingReferenceDatasetError, match="'customers' was not supplied"):
        gate(spark.createDataFrame(BASE, SCHEMA), 0)
    recorder = gate.metrics
    assert isinstance(recorder, Recorder)
    assert (recorder.batches, len(recorder.failures)) == ([], 1)
    assert DeltaTable(str(tmp_path / "pass")).transaction_version("orders") is None


def test_unreadable_reference_spec_fails_the_batch_with_its_path(spark, tmp_path):
    missing = tmp_path / "no-such-dir"
    spec = ReferenceSpec("csv", str(missing), schema="note STRING")
    gate = make_gate(tmp_path, CheckSet([NoteKnown("note-known")]), reference_datasets={"notes": spec})
    with pytest.raises(ReferenceDatasetUnavailableError, match=f"'notes' cannot be read from {missing}"):
        gate(spark.createDataFrame(BASE, SCHEMA), 0)
