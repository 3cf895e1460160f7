"""``python -m benchmarks.small_batches [--quick]``: what a small micro-batch costs the gate, per writer.

A long-running stream on a cluster usually brings many small batches. One session with delta-spark, one cached
batch of ``rows`` orders (a few faulty), handed to :class:`~streaming_dq.sink.QualityGate` as successive
micro-batches writing pass, quarantine, results and metrics tables, in two variants interleaved round by round:

* ``delta-rs``: the driver router, delta-rs commits (the embedded default);
* ``spark``: the Spark router, Delta's Spark writer (a cluster's setup).

Per variant, the median seconds and CPU seconds (Python driver + JVM, from /proc) of the gate per batch,
against the target of #29: at most ~0.6 s of gate time for a 500-row batch on Spark's writer. Writes
``benchmarks/results/small-batches-latest.json``.
"""

from __future__ import annotations

import os
import shutil
import statistics
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.distributed import build_spark
from benchmarks.harness import batch_grid, interleaved_rounds, save_result

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work" / "small-batches"
RESULTS = ROOT / "benchmarks" / "results" / "small-batches-latest.json"
VARIANTS = ("delta-rs", "spark")
#: The gate seconds a 500-row batch may take on Spark's writer (#29).
SPARK_TARGET_SECONDS = 0.6


def orders(spark: Any, rows: int) -> Any:
    """``rows`` orders over one day, 1% without a customer and 1% with a negative amount, cached."""
    from pyspark.sql import functions as F

    df = spark.range(rows).select(
        F.col("id").cast("string").alias("order_id"),
        (
            F.lit(datetime(2025, 3, 1, tzinfo=UTC))
            + F.make_dt_interval(F.lit(0), F.lit(0), F.col("id") % 1440)
        ).alias("order_ts"),
        F.when(F.col("id") % 100 == 7, None).otherwise(F.lit("c1")).alias("customer_id"),
        F.when(F.col("id") % 100 == 9, F.lit(-1.0)).otherwise(F.rand(1) * 100).alias("amount"),
    )
    df = df.cache()
    df.count()
    return df


def checks() -> Any:
    """Two row checks and two aggregates over the orders."""
    from streaming_dq import CheckSet

    return CheckSet.from_dicts(
        [
            {"check": "null-check", "check-id": "customer", "columns": ["customer_id"]},
            {"check": "numeric-min-check", "check-id": "amount", "columns": ["amount"], "min-value": 0},
            {"check": "row-count-min-check", "check-id": "volume", "min-count": 10},
            {"check": "mean-check", "check-id": "basket", "column": "amount", "ge": 0},
        ]
    )


def gate(variant: str, work: Path | str, storage_options: dict[str, str] | None = None) -> Any:
    """The gate of ``variant`` writing its four tables under ``work`` (a local folder, emptied first, or a
    store's URI with its ``storage_options``)."""
    from streaming_dq import QualityGate
    from streaming_dq.tables import DeltaTarget

    if isinstance(work, Path):
        shutil.rmtree(work, ignore_errors=True)

    def table(name: str) -> DeltaTarget:
        return DeltaTarget(f"{work}/{name}", dict(storage_options or {}))

    return QualityGate(
        f"small-{variant}",
        checks(),
        pass_table=table("pass"),
        quarantine_table=table("quarantine"),
        results_table=table("results"),
        metrics_table=table("metrics"),
        event_time="order_ts",
        writer=variant,  # type: ignore[arg-type]
        routing="driver" if variant == "delta-rs" else "distributed",
    )


def measure(spark: Any, *, rows: int, batches: int, rounds: int, work: Path) -> dict[str, Any]:
    """Seconds and CPU seconds per batch of each variant, ``rounds`` interleaved rounds of ``batches``."""
    df = orders(spark, rows)
    pids = [os.getpid(), spark.sparkContext._jvm.ProcessHandle.current().pid()]
    seen = interleaved_rounds(
        VARIANTS, lambda v: gate(v, work / v), df, batches=batches, rounds=rounds, pids=pids
    )
    df.unpersist()
    return {
        "rows": rows,
        "batches": batches,
        "rounds": rounds,
        "target_spark_seconds": SPARK_TARGET_SECONDS,
        "variants": {
            v: {
                "seconds": statistics.median(s["seconds"]),
                "cpu": statistics.median(s["cpu"]),
                "all_seconds": s["seconds"],
            }
            for v, s in seen.items()
        },
    }


def main(argv: list[str] | None = None) -> None:
    rows, batches, rounds = batch_grid(argv, __doc__ or "", quick=(500, 5, 3), full=(500, 10, 3))
    spark = build_spark()
    result = measure(spark, rows=rows, batches=batches, rounds=rounds, work=WORK)
    save_result(RESULTS, result)
    print(f"small batches: {rows:,} rows per batch, {batches} batches x {rounds} rounds (medians per batch)")
    for variant, m in result["variants"].items():
        print(f"  {variant:<9} {m['seconds']:.3f} s  cpu {m['cpu']:.3f} s")
    spark_s = result["variants"]["spark"]["seconds"]
    verdict = "yes" if spark_s <= SPARK_TARGET_SECONDS else "no"
    print(
        f"  target: spark writer <= {SPARK_TARGET_SECONDS} s per {rows}-row batch: {spark_s:.3f} s ({verdict})"
    )
    spark.stop()


if __name__ == "__main__":
    main()
