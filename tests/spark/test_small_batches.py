"""Small batches on Spark's writer: validated on the driver, committed by delta-rs, exactly once either way.

A commit through Spark's Delta writer costs four Spark jobs whatever its size; the gate commits writes of at
most ``driver_commit_rows`` rows with delta-rs instead (the gate's results and metrics rows, a small batch's
pass and quarantine rows), where delta-rs may write the table. These tests read each table's log to see
which engine committed which batch.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from test_gate_support import BASE_CHECKS, SCHEMA, batch_writers, ids, make_gate

pytestmark = pytest.mark.spark


def frame(spark: Any, first: int, n: int) -> Any:
    """``n`` orders with ids from ``first``; every third lacks its amount (quarantined)."""
    rows = [(i, None if i % 3 == 0 else float(i), None, "ok") for i in range(first, first + n)]
    return spark.createDataFrame(rows, SCHEMA)


def test_small_batches_go_through_the_driver_and_large_ones_through_spark_exactly_once(spark, tmp_path):
    gate = make_gate(
        tmp_path,
        BASE_CHECKS,
        writer="spark",
        routing="distributed",
        driver_commit_rows=10,
        metrics_table=str(tmp_path / "metrics"),
    )
    sizes = ((0, 4), (100, 45), (200, 3), (300, 3))
    batches = [frame(spark, first, n) for first, n in sizes]
    gate.ensure_tables(batches[0].schema, spark)

    for b, df in enumerate(batches):
        gate(df, b)

    # 0: the first batch takes the Spark path (its size is unknown), its few rows of each table collected and
    # committed by delta-rs; 1: tried small after a small batch (its first 11 rows read), then the Spark
    # path, 30 pass and 15 quarantine rows by Spark's writer; 2: small, but after a large batch the Spark path
    # is taken directly, its rows committed by delta-rs; 3: on the driver
    by_driver, by_spark = {0, 2, 3}, {1}
    for table in ("pass", "quarantine"):
        writers = batch_writers(tmp_path / table)
        assert {b for b, w in writers.items() if w == "delta-rs"} == by_driver, (table, writers)
        assert {b for b, w in writers.items() if w == "Apache-Spark"} == by_spark, (table, writers)
    for table in ("results", "metrics"):  # a few rows a batch: delta-rs whatever the batch's size
        assert set(batch_writers(tmp_path / table).values()) == {"delta-rs"}, table

    everything = [i for first, n in sizes for i in range(first, first + n)]
    passed, quarantined = Counter(ids(tmp_path / "pass")), Counter(ids(tmp_path / "quarantine"))
    assert passed + quarantined == Counter(everything)
    assert set(quarantined) == {i for i in everything if i % 3 == 0}

    logs = {t: len(list((tmp_path / t / "_delta_log").glob("*.json"))) for t in ("pass", "quarantine")}
    for b, df in enumerate(batches):  # Spark replays every batch: nothing is written twice
        gate(df, b)
    assert {t: len(list((tmp_path / t / "_delta_log").glob("*.json"))) for t in logs} == logs
    assert Counter(ids(tmp_path / "pass")) + Counter(ids(tmp_path / "quarantine")) == Counter(everything)
    replays = [o.status for o in gate.metrics.batches[len(batches) :]]
    assert replays == ["skipped_replay"] * len(batches), replays


def test_a_table_with_a_feature_delta_rs_cannot_write_keeps_sparks_writer(spark, tmp_path):
    """Row tracking (Delta 3.2+): delta-rs refuses to commit to such a table, so Spark's writer does."""
    df = frame(spark, 0, 5)
    (df.limit(0).write.format("delta").option("delta.enableRowTracking", "true").save(str(tmp_path / "pass")))
    gate = make_gate(tmp_path, BASE_CHECKS, writer="spark", routing="distributed")

    gate(df, 0)

    assert batch_writers(tmp_path / "pass") == {0: "Apache-Spark"}
    assert batch_writers(tmp_path / "quarantine") == {0: "delta-rs"}
    assert sorted(ids(tmp_path / "pass")) == [1, 2, 4]


def test_driver_commit_rows_zero_keeps_every_write_on_sparks_writer(spark, tmp_path):
    gate = make_gate(tmp_path, BASE_CHECKS, writer="spark", routing="distributed", driver_commit_rows=0)
    gate(frame(spark, 0, 4), 0)
    for table in ("pass", "quarantine", "results"):
        assert batch_writers(tmp_path / table) == {0: "Apache-Spark"}, table
