"""The gate's cost: at most 3 Spark jobs per non-empty batch, the same for 1 check as for 20."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_gate_support import land, make_gate, row, stream

pytestmark = pytest.mark.spark

ONE_CHECK = [{"check": "null-check", "check-id": "id-present", "columns": ["id"]}]
TWENTY_CHECKS = [
    {"check": "null-check", "check-id": f"null-{i}", "columns": [["id", "amount", "ts", "note"][i % 4]]}
    for i in range(10)
] + [{"check": "row-count-min-check", "check-id": f"volume-{i}", "min-count": i} for i in range(10)]


@pytest.fixture
def no_adaptive_execution(spark: Any) -> Iterator[None]:
    """Adaptive execution splits an aggregation into several jobs; the budget is about the gate's own."""
    before = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        yield
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", before)


def jobs_per_batch(spark: Any, tmp_path: Any, checks: list[dict[str, Any]], tag: str) -> list[int]:
    """Run a 2-batch file stream through a gate, each batch in its own job group; count each group's jobs."""
    landing = tmp_path / tag / "landing"
    land(landing, "a", [row(1), row(2, amount=None), row(3, note=None)])
    land(landing, "b", [row(4), row(5)])
    gate = make_gate(tmp_path / tag, checks, event_time="ts")
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
    tracker = sc.statusTracker()
    return [len(tracker.getJobIdsForGroup(f"{tag}-{b}")) for b in range(2)]


@pytest.mark.usefixtures("no_adaptive_execution")
def test_at_most_three_jobs_per_batch_whatever_the_number_of_checks(spark, tmp_path):
    one = jobs_per_batch(spark, tmp_path, ONE_CHECK, "one")
    twenty = jobs_per_batch(spark, tmp_path, TWENTY_CHECKS, "twenty")

    assert all(1 <= n <= 3 for n in one + twenty), (one, twenty)
    assert twenty == one
