"""Spark's Delta writer beside a second writer of the same ``(app id, version)`` (#41), and the doctor's
repair read back by Spark's Delta reader."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
from jobs_support import txn_counts

from streaming_dq.exceptions import TransactionTakenError
from streaming_dq.maintenance import doctor
from streaming_dq.tables import AppTransaction, DeltaTarget
from streaming_dq.tables.deltars import DeltaRsWriter
from streaming_dq.tables.spark import SparkDeltaWriter

pytestmark = pytest.mark.spark
APP = "orders:q-spark"


def test_spark_and_delta_rs_racing_on_every_version_commit_each_once(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Spark's writer (the executors write; Delta's conflict check) against delta-rs, at once, per version."""
    target = DeltaTarget(str(tmp_path / "pass"))
    data = pa.table({"order_id": pa.array([1, 2, 3], pa.int64())})
    rust, on_spark = DeltaRsWriter(), SparkDeltaWriter(spark, driver_commit_rows=0)
    rust.create_table(target, data.schema)
    frame = spark.createDataFrame([(1,), (2,), (3,)], "order_id bigint")
    outcomes: Counter[str] = Counter()
    versions = 6
    for version in range(versions):
        txn = AppTransaction(APP, version)
        barrier = threading.Barrier(2)

        def run(which: str, txn: AppTransaction = txn, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                if which == "spark":
                    on_spark.append_frame(target, frame, txn)
                else:
                    rust.append(target, data, txn)
                outcomes[f"{which} returned"] += 1
            except TransactionTakenError:
                outcomes[f"{which} taken"] += 1

        threads = [threading.Thread(target=run, args=(w,)) for w in ("spark", "delta-rs")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert txn_counts(tmp_path / "pass") == Counter({(APP, v): 1 for v in range(versions)})
    assert spark.read.format("delta").load(str(tmp_path / "pass")).count() == versions * 3
    assert sum(outcomes.values()) == 2 * versions  # each either committed, skipped (Spark) or refused


def test_a_repaired_table_reads_back_once_with_spark(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "pass"
    data = pa.table({"order_id": pa.array([1, 2, 3], pa.int64())})
    for version in (0, 1, 1, 2):  # batch 1 committed twice
        write_deltalake(
            str(path),
            pa.table({"order_id": pa.array([version * 10 + i for i in range(3)], pa.int64())}),
            mode="append",
            commit_properties=CommitProperties(app_transactions=[Transaction(APP, version)]),
        )
    del data
    targets = {"pass": DeltaTarget(str(path))}
    found = doctor.examine(targets)
    assert [(f.version, f.log_versions) for f in found] == [(1, (1, 2))]
    doctor.repair(targets, found, dry_run=False)
    assert spark.read.format("delta").load(str(path)).count() == 9
    assert sorted(DeltaTable(str(path)).to_pyarrow_table().column("order_id").to_pylist()) == [
        0, 1, 2, 10, 11, 12, 20, 21, 22,
    ]  # fmt: skip
    history = spark.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()
    assert history[0]["operation"] == "DELETE"
