"""Quarantined rows released after a fix: judged again by the gate's current checks, each released once, the
quarantine keeping every row with its audit; both writers, real streams and tables read back from disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streaming_dq.compat.spark import parse_ddl
from streaming_dq.config.check_set import CheckSet
from streaming_dq.exceptions import ConfigError
from streaming_dq.release import Fix, ReleaseRequest, release
from streaming_dq.sink import QualityGate
from streaming_dq.sink.references import ReferenceSpec
from streaming_dq.tables import read_table
from tests.spark.test_gate_support import land, run

pytestmark = pytest.mark.spark

SCHEMA = "id BIGINT, customer_id BIGINT, amount DOUBLE, ts TIMESTAMP"
CHECKS = [
    {
        "check": "foreign-key-row-check",
        "check-id": "customer-known",
        "column": "customer_id",
        "reference-dataset": "customers",
        "reference-column": "id",
    },
    {"check": "null-check", "check-id": "amount-present", "columns": ["amount"]},
]


def order(i: int, customer: int, amount: float | None = 10.0) -> dict[str, Any]:
    return {"id": i, "customer_id": customer, "amount": amount, "ts": f"2026-11-0{1 + i % 3}T10:00:00Z"}


def customers(path: Path, ids: list[int]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "customers.json").write_text("".join(json.dumps({"id": i}) + "\n" for i in ids), encoding="utf-8")


def make(tmp: Path, writer: str, checks: list[dict[str, Any]] = CHECKS) -> QualityGate:
    return QualityGate(
        "orders",
        CheckSet.from_dicts(checks),
        pass_table=str(tmp / "pass"),
        quarantine_table=str(tmp / "quarantine"),
        results_table=str(tmp / "results"),
        reference_datasets={"customers": ReferenceSpec("json", str(tmp / "customers"), schema="id BIGINT")},
        event_time="ts",
        writer=writer,
        driver_commit_rows=0,  # Spark's writer commits every table itself: its own path is under test
    )


def stream_batches(spark: Any, tmp: Path, gate: QualityGate, batches: list[list[dict[str, Any]]]) -> None:
    landing = tmp / "landing"
    for i, records in enumerate(batches):
        land(landing, f"b{i:03d}", records)
    sdf = spark.readStream.format("json").schema(SCHEMA).option("maxFilesPerTrigger", 1).load(str(landing))
    run(gate, sdf, tmp / "checkpoint")


def rows(path: Path) -> list[dict[str, Any]]:
    return read_table(str(path)).to_pylist()


def version(path: Path) -> int:
    return max(int(p.stem) for p in (path / "_delta_log").glob("*.json"))


@pytest.fixture(params=["delta-rs", "spark"])
def writer(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# delta-rs only: with Spark's writer this walk cost 50-200 s of the suite's 30 minutes; Spark's writer releases
# in chunks, resumes and meets a running stream in test_release_crash.py[spark], and its other steps (dry run,
# new reasons, malformed lines, discard, rows kept off the driver) are this file's [spark] tests
@pytest.mark.parametrize("writer", ["delta-rs"])
def test_a_release_after_the_reference_is_fixed_moves_exactly_the_cured_rows_once(spark, tmp_path, writer):
    customers(tmp_path / "customers", [1, 2])
    gate = make(tmp_path, writer)
    stream_batches(
        spark,
        tmp_path,
        gate,
        [
            [order(1, 1), order(2, 7), order(3, 2)],
            [order(4, 7), order(5, 1, amount=None), order(6, 8)],
        ],
    )
    assert sorted(r["id"] for r in rows(tmp_path / "quarantine")) == [2, 4, 5, 6]

    customers(tmp_path / "customers", [1, 2, 7])  # customer 7 was missing from the reference
    dry = release(gate, spark, ReleaseRequest(checks=("customer-known",)), dry_run=True)
    assert (dry.released, dry.still_quarantined) == (2, 1)  # 2 and 4 pass now; 6 (customer 8) still fails
    assert dry.per_check == {"customer-known": (2, 1)}

    report = release(gate, spark, ReleaseRequest(checks=("customer-known",), note="CRM-42"), chunk_rows=1)
    assert (report.released, report.still_quarantined, report.resumed) == (2, 1, False)
    assert report.chunks == 2  # one per batch with chunk_rows=1

    passed = rows(tmp_path / "pass")
    assert sorted(r["id"] for r in passed) == [1, 2, 3, 4]
    assert set(passed[0]) == {"id", "customer_id", "amount", "ts"}  # the pass table's own columns only
    quarantine = {r["id"]: r for r in rows(tmp_path / "quarantine")}
    assert sorted(quarantine) == [2, 4, 5, 6]  # nothing is deleted
    assert {i: (q["_dq_release"] or {}).get("state") for i, q in quarantine.items()} == {
        2: "released",
        4: "released",
        5: None,  # not selected: quarantined for its amount only
        6: "quarantined",
    }
    six = quarantine[6]["_dq_release"]
    assert [e["check-id"] for e in six["errors"]] == ["customer-known"]
    assert six["id"] == report.release_id and "@" in six["by"]
    assert [e["check-id"] for e in quarantine[2]["_dq_errors"]] == [
        "customer-known"
    ]  # why it was quarantined

    records = [r for r in rows(tmp_path / "results") if r["kind"] == "release"]
    statuses = sorted({(r["status"], r["batch_id"]) for r in records}, key=str)
    assert statuses == sorted({("started", None), ("chunk", 0), ("chunk", 1), ("finished", None)}, key=str)
    finished = {
        r["check_id"]: (r["rows_passed"], r["rows_quarantined"]) for r in records if r["status"] == "finished"
    }
    assert finished == {None: (2, 1), "customer-known": (2, 1)}
    started = next(r for r in records if r["status"] == "started")
    assert json.loads(started["reason"])["request"]["note"] == "CRM-42"

    again = release(gate, spark, ReleaseRequest(checks=("customer-known",)))  # a second release: nothing new
    assert (again.released, again.still_quarantined) == (0, 1)
    assert sorted(r["id"] for r in rows(tmp_path / "pass")) == [1, 2, 3, 4]

    # the stream goes on into the same tables, and its new quarantined rows are released like the old
    landing = tmp_path / "landing"
    land(landing, "b002", [order(7, 9), order(8, 1)])
    sdf = spark.readStream.format("json").schema(SCHEMA).load(str(landing))
    run(gate, sdf, tmp_path / "checkpoint")
    customers(tmp_path / "customers", [1, 2, 7, 8, 9])
    last = release(gate, spark, ReleaseRequest(checks=("customer-known",)))
    assert (last.released, last.still_quarantined) == (2, 0)
    assert sorted(r["id"] for r in rows(tmp_path / "pass")) == [1, 2, 3, 4, 6, 7, 8]


def test_a_dry_run_writes_nothing(spark, tmp_path, writer):
    customers(tmp_path / "customers", [1])
    # every row also meets a warning: no row is quarantined for it, so it gets no line (#42)
    small = {"check": "numeric-between-check", "check-id": "amount-small", "columns": ["amount"],
             "min-value": 0, "max-value": 5, "severity": "warning"}  # fmt: skip
    gate = make(tmp_path, writer, [*CHECKS, small])
    stream_batches(spark, tmp_path, gate, [[order(1, 1), order(2, 5), order(3, 5, amount=None)]])
    tables = ["pass", "quarantine", "results"]
    before = {t: version(tmp_path / t) for t in tables}
    report = release(gate, spark, ReleaseRequest(), dry_run=True)
    assert (report.released, report.still_quarantined) == (0, 2)
    assert report.per_check == {"customer-known": (0, 2), "amount-present": (0, 1)}
    assert {t: version(tmp_path / t) for t in tables} == before


def test_a_fix_that_does_not_cure_leaves_the_row_with_its_new_reasons_and_one_that_does_releases_it(
    spark, tmp_path, writer
):
    customers(tmp_path / "customers", [1])
    gate = make(tmp_path, writer)
    stream_batches(spark, tmp_path, gate, [[order(1, 1, amount=None), order(2, 1, amount=None)]])

    doubled = ReleaseRequest(where="id = 1", fixes=(Fix.parse("amount = amount * 2"),))
    report = release(gate, spark, doubled)
    assert (report.released, report.still_quarantined) == (0, 1)
    one = next(r for r in rows(tmp_path / "quarantine") if r["id"] == 1)
    assert one["amount"] is None  # the quarantine keeps the row as it arrived
    assert one["_dq_release"]["fix"] == "`amount` = amount * 2"
    assert [e["check-id"] for e in one["_dq_release"]["errors"]] == ["amount-present"]

    cured = release(gate, spark, ReleaseRequest(checks=("amount-present",), fixes=(Fix.parse("amount = 0"),)))
    assert (cured.released, cured.still_quarantined) == (2, 0)
    assert sorted((r["id"], r["amount"]) for r in rows(tmp_path / "pass")) == [(1, 0.0), (2, 0.0)]
    assert all(r["amount"] is None for r in rows(tmp_path / "quarantine"))


def test_bad_options_name_the_option(spark, tmp_path):
    customers(tmp_path / "customers", [1])
    gate = make(tmp_path, "delta-rs")
    stream_batches(spark, tmp_path, gate, [[order(1, 2)]])
    cases = {
        "--set": ReleaseRequest(fixes=(Fix.parse("nope = 1"),)),
        "--where": ReleaseRequest(where="no_such_column > 1"),
    }
    for option, request in cases.items():
        with pytest.raises(ConfigError) as caught:
            release(gate, spark, request)
        assert caught.value.field_path == option
    with pytest.raises(ConfigError) as caught:
        release(gate, spark, ReleaseRequest(fixes=(Fix.parse("amount = 'x' +"),)))
    assert caught.value.field_path == "--set"
    assert version(tmp_path / "quarantine") == 1  # created, then the one batch: nothing written since


def test_a_batch_quarantined_for_an_aggregate_stays_unless_the_release_names_that_check(spark, tmp_path):
    customers(tmp_path / "customers", [1])
    checks = [*CHECKS, {"check": "row-count-max-check", "check-id": "batch-small", "max-count": 2}]
    gate = QualityGate(
        "orders",
        CheckSet.from_dicts(checks),
        pass_table=str(tmp_path / "pass"),
        quarantine_table=str(tmp_path / "quarantine"),
        results_table=str(tmp_path / "results"),
        reference_datasets={
            "customers": ReferenceSpec("json", str(tmp_path / "customers"), schema="id BIGINT")
        },
        writer="delta-rs",
    )
    # the batch of three breaks batch-small: all three are quarantined, order 2 for its customer as well
    stream_batches(spark, tmp_path, gate, [[order(1, 1), order(2, 5), order(3, 1)]])
    assert sorted(r["id"] for r in rows(tmp_path / "quarantine")) == [1, 2, 3]
    customers(tmp_path / "customers", [1, 5])

    report = release(gate, spark, ReleaseRequest(checks=("customer-known",)))
    assert (report.released, report.still_quarantined) == (0, 1)  # its batch's verdict still holds
    two = next(r for r in rows(tmp_path / "quarantine") if r["id"] == 2)
    assert [e["check-id"] for e in two["_dq_release"]["errors"]] == ["batch-small"]

    accepted = release(gate, spark, ReleaseRequest(checks=("batch-small",)))  # the operator accepts the batch
    assert (accepted.released, accepted.still_quarantined) == (3, 0)
    assert sorted(r["id"] for r in rows(tmp_path / "pass")) == [1, 2, 3]


def test_a_corrected_malformed_line_is_parsed_again_and_released(spark, tmp_path, writer):
    from deltalake import DeltaTable

    from streaming_dq.sink import with_corrupt_record_column
    from streaming_dq.sources.reparse import RecordParser

    customers(tmp_path / "customers", [1])
    gate = make(tmp_path, writer)
    bad_amount = '{"id": 2, "customer_id": 1, "amount": "ten", "ts": "2026-11-01T10:00:00Z"}'
    cut_off = '{"id": 3, "customer_id": 1, "amou'
    land(tmp_path / "landing", "b000", [order(1, 1), bad_amount, cut_off])
    schema = with_corrupt_record_column(SCHEMA)
    sdf = spark.readStream.format("json").schema(schema).load(str(tmp_path / "landing"))
    run(gate, sdf, tmp_path / "checkpoint")
    quarantined = rows(tmp_path / "quarantine")
    assert sorted(r["_dq_raw"] for r in quarantined) == sorted([bad_amount, cut_off])
    by_raw = {r["_dq_raw"]: r for r in quarantined}  # Spark keeps the fields it could parse (PERMISSIVE)
    assert (by_raw[bad_amount]["id"], by_raw[bad_amount]["amount"], by_raw[cut_off]["id"]) == (2, None, None)

    malformed = ReleaseRequest(checks=("malformed-record",))
    without = release(gate, spark, malformed, dry_run=True)  # no parser: malformed stays malformed
    assert (without.released, without.still_quarantined) == (0, 2)

    fixed_line = bad_amount.replace('"ten"', "10.0")
    DeltaTable(str(tmp_path / "quarantine")).update(
        updates={"_dq_raw": "'" + fixed_line.replace("'", "''") + "'"}, predicate="_dq_raw LIKE '%\"ten\"%'"
    )  # the operator corrects the raw text in the quarantine table itself
    parser = RecordParser(parse_ddl(SCHEMA), {}, "_corrupt_record", None)
    report = release(gate, spark, malformed, parser=parser)
    assert (report.released, report.still_quarantined) == (1, 1)
    passed = {r["id"]: r for r in rows(tmp_path / "pass")}
    assert sorted(passed) == [1, 2] and passed[2]["amount"] == 10.0 and passed[2]["customer_id"] == 1
    still = next(r for r in rows(tmp_path / "quarantine") if r["_dq_raw"] == cut_off)
    assert [e["check-id"] for e in still["_dq_release"]["errors"]] == ["malformed-record"]


def test_discard_deletes_the_old_rows_of_the_checks_named_and_records_it(spark, tmp_path, writer):
    from datetime import timedelta

    from streaming_dq.release.discard import discard

    customers(tmp_path / "customers", [1])
    gate = make(tmp_path, writer)
    stream_batches(spark, tmp_path, gate, [[order(1, 5), order(2, 1, amount=None), order(3, 6)]])
    before = version(tmp_path / "quarantine")

    young = discard(gate, spark, timedelta(days=90), dry_run=True)
    assert young.discarded == 0  # nothing is 90 days old
    dry = discard(gate, spark, timedelta(0), checks=("customer-known",), dry_run=True)
    assert (dry.discarded, dry.per_check) == (2, {"customer-known": 2})
    assert version(tmp_path / "quarantine") == before  # a dry run writes nothing

    report = discard(gate, spark, timedelta(0), checks=("customer-known",))
    assert (report.discarded, report.resumed) == (2, False)
    assert [r["id"] for r in rows(tmp_path / "quarantine")] == [2]  # the amount row stays
    assert version(tmp_path / "quarantine") == before + 1  # one commit
    records = [r for r in rows(tmp_path / "results") if r["kind"] == "discard" and r["check_id"] is None]
    assert sorted((r["status"], r["rows"]) for r in records) == [("finished", 2), ("started", 2)]


def test_with_spark_s_writer_the_released_rows_never_come_to_the_driver(spark, tmp_path, monkeypatch):
    """A structural fact, not a timing: while a release of 3,000 rows runs on Spark's writer, every result the
    driver receives (collect, toArrow, toPandas, toLocalIterator) is a few rows of counts, never the rows."""
    customers(tmp_path / "customers", [1])
    gate = make(tmp_path, "spark")
    stream_batches(spark, tmp_path, gate, [[order(i, 9) for i in range(3_000)]])
    customers(tmp_path / "customers", [1, 9])

    DataFrame = type(spark.range(1))  # the classic DataFrame, whose methods the session's frames run
    received: list[int] = []
    for name in ("collect", "toArrow", "toPandas"):
        original = getattr(DataFrame, name)

        def counted(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            result = _original(self, *args, **kwargs)
            received.append(len(result) if not hasattr(result, "num_rows") else result.num_rows)
            return result

        monkeypatch.setattr(DataFrame, name, counted)
    original_iterator = DataFrame.toLocalIterator

    def iterated(self: Any, *args: Any, **kwargs: Any) -> Any:
        for row in original_iterator(self, *args, **kwargs):
            received.append(1)
            yield row

    monkeypatch.setattr(DataFrame, "toLocalIterator", iterated)

    report = release(gate, spark, ReleaseRequest(checks=("customer-known",)))
    assert (report.released, report.still_quarantined) == (3_000, 0)
    assert received, "the release read its counts through one of the spied methods"
    assert sum(received) < 100, received  # counts per chunk and check, not 3,000 rows
    monkeypatch.undo()
    assert len(rows(tmp_path / "pass")) == 3_000
