"""The gate's cost: at most 3 Spark jobs per non-empty batch, the same for 1 check as for 20; Columns built once."""

from __future__ import annotations

import json
import re
import urllib.request
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import functions as F
from test_gate_support import BASE_CHECKS, SCHEMA, ids, land, make_gate, row, stream

from streaming_dq.config.check_set import CheckSet
from streaming_dq.core.base_check import BaseRowCheck
from streaming_dq.tables import read_table

pytestmark = pytest.mark.spark

ONE_CHECK = [{"check": "null-check", "check-id": "id-present", "columns": ["id"]}]
TWENTY_CHECKS = (
    [
        {"check": "null-check", "check-id": f"null-{i}", "columns": [["id", "amount", "ts", "note"][i % 4]]}
        for i in range(5)
    ]
    + [{"check": "row-count-min-check", "check-id": f"volume-{i}", "min-count": i} for i in range(5)]
    # the one-pass families of the wider catalog: value rules and mergeable statistics (a KLL sketch, three
    # moments states of a pair, a predicate's count) add no job either
    + [
        {"check": "regex-not-match-check", "check-id": "no-test", "column": "note", "pattern": "^test"},
        {"check": "castable-check", "check-id": "note-text", "columns": ["note"], "data-type": "string"},
        {"check": "not-equal-to-check", "check-id": "not-minus-one", "columns": ["amount"], "value": -1},
        {"check": "decimal-places-check", "check-id": "cents", "columns": ["amount"], "max-places": 2},
        {"check": "not-in-future-check", "check-id": "not-future", "columns": ["ts"]},
        {"check": "variance-check", "check-id": "amount-var", "column": "amount", "ge": 0},
        {"check": "quantile-check", "check-id": "amount-p90", "column": "amount", "quantile": 0.9, "le": 10},
        {"check": "correlation-check", "check-id": "id-amount", "columns": ["id", "amount"], "ge": -1},
        {
            "check": "compliance-ratio-check",
            "check-id": "noted",
            "predicate": "note IS NOT NULL",
            "min-ratio": 0,
        },
        {"check": "distinct-count-check", "check-id": "ids", "column": "id", "ge": 1},
    ]
)


@pytest.fixture
def no_adaptive_execution(spark: Any) -> Iterator[None]:
    """Adaptive execution splits an aggregation into several jobs; the budget is about the gate's own."""
    before = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        yield
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", before)


def run_in_job_groups(spark: Any, tmp_path: Any, checks: list[dict[str, Any]], tag: str, **kw: Any) -> None:
    """Run a 2-batch file stream through a gate, each batch in its own job group ``<tag>-<batch id>``."""
    landing = tmp_path / tag / "landing"
    land(landing, "a", [row(1), row(2, amount=None), row(3, note=None)])
    land(landing, "b", [row(4), row(5)])
    gate = make_gate(tmp_path / tag, checks, event_time="ts", **kw)
    sdf = stream(spark, landing, maxFilesPerTrigger="1")
    gate.ensure_tables(sdf.schema, spark)
    sc = spark.sparkContext

    def batch(df: Any, batch_id: int) -> None:
        sc.setJobGroup(f"{tag}-{batch_id}", f"gate job budget, batch {batch_id}")
        gate(df, batch_id)

    query = (
        sdf.writeStream.foreachBatch(batch)
        .option("checkpointLocation", str(tmp_path / tag / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None


def jobs_per_batch(spark: Any, tmp_path: Any, checks: list[dict[str, Any]], tag: str, **kw: Any) -> list[int]:
    run_in_job_groups(spark, tmp_path, checks, tag, **kw)
    tracker = spark.sparkContext.statusTracker()
    return [len(tracker.getJobIdsForGroup(f"{tag}-{b}")) for b in range(2)]


def job_descriptions(spark: Any, group: str) -> list[str]:
    """The descriptions of a job group's jobs, in order, from the Spark UI's REST API."""
    sc = spark.sparkContext
    with urllib.request.urlopen(f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/jobs") as response:
        jobs = json.load(response)
    return [
        j.get("description", "") for j in sorted(jobs, key=lambda j: j["jobId"]) if j.get("jobGroup") == group
    ]


@pytest.mark.usefixtures("no_adaptive_execution")
def test_at_most_three_jobs_per_batch_whatever_the_number_of_checks(spark, tmp_path):
    one = jobs_per_batch(spark, tmp_path, ONE_CHECK, "one")
    twenty = jobs_per_batch(spark, tmp_path, TWENTY_CHECKS, "twenty")

    assert all(1 <= n <= 3 for n in one + twenty), (one, twenty)
    assert twenty == one


@pytest.mark.usefixtures("no_adaptive_execution")
def test_duplicates_across_batches_add_no_spark_job_on_the_driver_router(spark, tmp_path):
    # the keys table is read by delta-rs into the driver's index, the batch judged in Arrow on the rows it
    # collected: the batch's one job stays its only one (the Spark form added a scan of the keys table)
    once = {"check": "unique-key-check", "check-id": "id-once", "columns": ["id"], "horizon": "7 days"}
    driver = {"routing": "driver", "writer": "delta-rs"}
    without = jobs_per_batch(spark, tmp_path, ONE_CHECK, "no-keys", **driver)
    keys = str(tmp_path / "keys")
    with_keys = jobs_per_batch(spark, tmp_path, [*ONE_CHECK, once], "keys", keys_table=keys, **driver)

    assert without == [1, 1]
    assert with_keys == without
    assert read_table(keys).num_rows == 5  # both batches' keys were judged and recorded


OVER_THE_BATCH = ("aggregate", "write pass", "write quarantine")
PHASE = re.compile(r"^(Delta: )?streaming_dq orders batch (\d+): ([a-z ]+)(: .*)?$")


@pytest.mark.usefixtures("no_adaptive_execution")
def test_the_spark_router_runs_three_jobs_over_the_batch_whatever_the_number_of_checks(spark, tmp_path):
    """Aggregation, pass write, quarantine write; the results and metrics appends are driver-built tables, and
    Delta's own jobs (a snapshot of the table's log before each write) are labelled by the phase they serve."""
    per_batch: dict[str, list[list[tuple[bool, str]]]] = {}
    for tag, checks in (("one", ONE_CHECK), ("twenty", TWENTY_CHECKS)):
        run_in_job_groups(
            spark, tmp_path, checks, f"spark-{tag}", writer="spark", routing="distributed",
            metrics_table=str(tmp_path / f"spark-{tag}" / "metrics"), driver_commit_rows=0,
        )  # fmt: skip
        per_batch[tag] = []
        for b in range(2):
            phases = []
            for description in job_descriptions(spark, f"spark-{tag}-{b}"):
                match = PHASE.match(description)
                assert match is not None, (
                    description
                )  # every job of the batch is the gate's or Delta's for it
                assert int(match.group(2)) == b
                phases.append((match.group(1) is not None, match.group(3)))
            per_batch[tag].append(phases)
    for tag, batches in per_batch.items():
        for phases in batches:
            gate_jobs = [p for delta, p in phases if not delta]
            assert [p for p in gate_jobs if p in OVER_THE_BATCH] == list(OVER_THE_BATCH), (tag, phases)
            assert sorted(set(gate_jobs) - set(OVER_THE_BATCH)) == ["write metrics", "write results"]
    assert per_batch["one"] == per_batch["twenty"]


def test_the_spark_router_keeps_its_three_jobs_with_adaptive_execution_on(spark, tmp_path):
    """A stream's foreachBatch runs with AQE as the session has it, and AQE submits the aggregation's shuffle
    map stage as a job of its own (the distributed benchmark counted 5 gate jobs a batch): the router turns
    AQE off around its aggregation only, and leaves the setting as it found it."""
    before = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    try:
        run_in_job_groups(
            spark, tmp_path, TWENTY_CHECKS, "aqe", writer="spark", routing="distributed", driver_commit_rows=0
        )
        assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", before)
    for b in range(2):
        phases = [
            m.group(3)
            for d in job_descriptions(spark, f"aqe-{b}")
            if (m := PHASE.match(d)) and not m.group(1)
        ]
        assert [p for p in phases if p in OVER_THE_BATCH] == list(OVER_THE_BATCH), phases


def test_a_small_batch_on_sparks_writer_runs_one_job_and_no_delta_job(spark, tmp_path):
    """After a small batch, a batch of at most ``driver_commit_rows`` rows is collected in one job (adaptive
    execution on, as the session has it) and all four tables committed by delta-rs: none of the jobs Spark's
    Delta writer runs for each commit (the write and the snapshot of the log). The first batch, of unknown
    size, is aggregated on the executors; its few rows per table are collected and committed by delta-rs."""
    before = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    try:
        run_in_job_groups(
            spark, tmp_path, TWENTY_CHECKS, "small", writer="spark", routing="distributed",
            metrics_table=str(tmp_path / "small" / "metrics"),
        )  # fmt: skip
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", before)
    assert job_descriptions(spark, "small-0") == [
        f"streaming_dq orders batch 0: {phase}" for phase in OVER_THE_BATCH
    ]
    assert job_descriptions(spark, "small-1") == ["streaming_dq orders batch 1: collect"]


def test_the_checks_columns_are_built_once_per_input_schema_not_per_batch(spark, tmp_path):
    """Rebuilding every check's Columns through py4j was a per-batch driver cost growing with the checks."""
    checks = CheckSet.from_dicts(BASE_CHECKS)
    built: Counter[str] = Counter()
    for check in checks:
        if isinstance(check, BaseRowCheck):
            original = check.failure_condition

            def counted(df: Any, _original: Any = original, _id: str = check.check_id) -> Any:
                built[_id] += 1
                return _original(df)

            check.failure_condition = counted  # type: ignore[method-assign]
    gate = make_gate(tmp_path, checks)
    batch = [(1, 1.0, None, "a"), (2, None, None, "b"), (3, 3.0, None, None)]

    for batch_id in range(3):
        gate(spark.createDataFrame(batch, SCHEMA), batch_id)
    assert built == Counter({"id-present": 1, "amount-present": 1, "note-present": 1})

    wider = spark.createDataFrame(batch, SCHEMA).withColumn("coupon", F.lit("x"))  # merged: a new schema
    gate(wider, 3)
    assert built == Counter({"id-present": 2, "amount-present": 2, "note-present": 2})
    assert Counter(ids(tmp_path / "pass")) == Counter([1, 3] * 4)  # the verdicts are those of a fresh plan
    assert Counter(ids(tmp_path / "quarantine")) == Counter([2] * 4)


def test_a_direct_call_never_turns_adaptive_execution_off_in_the_callers_session(spark, tmp_path):
    """Outside a streaming query the batch runs on the caller's session, which other threads may share: the
    Spark router leaves AQE as it is there (a thread reading the setting throughout never sees it off)."""
    import threading

    gate = make_gate(
        tmp_path, TWENTY_CHECKS, event_time="ts", writer="spark", routing="distributed", driver_commit_rows=0
    )
    batch = spark.read.schema(SCHEMA).json(str(land(tmp_path / "in", "a", [row(1), row(2), row(3)])))
    gate.ensure_tables(batch.schema, spark)
    before = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.add(str(spark.conf.get("spark.sql.adaptive.enabled")))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        for batch_id in range(3):
            gate(batch, batch_id)
    finally:
        done.set()
        watcher.join(10)
        spark.conf.set("spark.sql.adaptive.enabled", before)
    assert seen == {"true"}
    assert sorted(ids(tmp_path / "pass") + ids(tmp_path / "quarantine")) == [1, 1, 1, 2, 2, 2, 3, 3, 3]
