"""``python -m benchmarks.release [--rows N]``: a release of N quarantined rows, per writer, against a plain
``INSERT ... SELECT`` of the same rows.

One session with delta-spark. A quarantine table of ``rows`` orders in 10 batches, all quarantined for an
unknown customer, is written by Spark; the customer is then in the reference, so every row passes again.
Per writer (``delta-rs``: the embedded default, the rows through the driver; ``spark``: Spark's Delta writer,
the rows on the executors), on a fresh copy of the tables:

* ``release``: :func:`streaming_dq.release.release` with ``--check customer-known`` (default chunks): the rows
  judged again, the quarantine replaced with its marks, the released rows appended to the pass table, the
  record written;
* ``plain``: ``INSERT INTO pass SELECT <input columns> FROM quarantine WHERE <quarantined for the check>`` in
  Spark SQL: what a hand-written one-off job does (no re-check, no mark, no audit, not idempotent).

Wall and CPU seconds (Python driver + JVM) of each, and the ratio; one run (#30 asks for one). Writes
``benchmarks/results/release-latest.json``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.distributed import build_spark, cpu_seconds
from benchmarks.harness import save_result

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work" / "release"
RESULTS = ROOT / "benchmarks" / "results" / "release-latest.json"
WRITERS = ("delta-rs", "spark")
INPUTS = "order_id, customer_id, amount, order_ts"


def quarantine(spark: Any, rows: int, path: Path) -> None:
    """``rows`` orders of customer ``c9`` in 10 batches, quarantined for ``customer-known``."""
    from pyspark.sql import functions as F

    start = datetime(2026, 11, 1, tzinfo=UTC)
    error = F.struct(
        F.lit("foreign-key-row-check").alias("check"),
        F.lit("customer-known").alias("check-id"),
        F.lit("critical").alias("severity"),
    )
    batch = F.col("id") % 10
    frame = spark.range(rows).select(
        F.col("id").cast("string").alias("order_id"),
        F.lit("c9").alias("customer_id"),
        (F.rand(1) * 100).alias("amount"),
        (F.lit(start) + F.make_dt_interval(F.lit(0), F.lit(0), F.col("id") % 1440)).alias("order_ts"),
        F.array(error).alias("_dq_errors"),
        (F.lit(start + timedelta(days=1)) + F.make_dt_interval(F.lit(0), F.lit(0), batch)).alias(
            "_dq_validation_ts"
        ),
        batch.alias("_dq_batch_id"),
        F.lit("orders").alias("_dq_gate"),
        F.lit(None).cast("string").alias("_dq_raw"),
    )
    frame.write.format("delta").mode("overwrite").save(str(path))


def tables(spark: Any, rows: int, work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)
    quarantine(spark, rows, work / "quarantine")
    spark.sql(f"SELECT {INPUTS} FROM delta.`{work / 'quarantine'}` LIMIT 0").write.format("delta").save(
        str(work / "pass")
    )
    (work / "customers").mkdir(parents=True)
    (work / "customers" / "customers.json").write_text('{"id": "c9"}\n', encoding="utf-8")


def run_release(spark: Any, writer: str, work: Path, chunk_rows: int | None) -> dict[str, Any]:
    from streaming_dq import CheckSet, QualityGate
    from streaming_dq.release import ReleaseRequest, release
    from streaming_dq.sink.references import ReferenceSpec

    checks = CheckSet.from_dicts(
        [
            {
                "check": "foreign-key-row-check",
                "check-id": "customer-known",
                "column": "customer_id",
                "reference-dataset": "customers",
                "reference-column": "id",
            },
            {"check": "numeric-min-check", "check-id": "amount", "columns": ["amount"], "min-value": 0},
        ]
    )
    gate = QualityGate(
        "orders",
        checks,
        pass_table=str(work / "pass"),
        quarantine_table=str(work / "quarantine"),
        results_table=str(work / "results"),
        reference_datasets={"customers": ReferenceSpec("json", str(work / "customers"), schema="id STRING")},
        event_time="order_ts",
        writer=writer,  # type: ignore[arg-type]
    )
    from streaming_dq.core.outcome_rows import RESULTS_SCHEMA

    gate.writer_for(spark).create_table(gate.targets["results"], RESULTS_SCHEMA)
    kwargs = {} if chunk_rows is None else {"chunk_rows": chunk_rows}
    report = release(gate, spark, ReleaseRequest(checks=("customer-known",)), **kwargs)
    return {"released": report.released, "chunks": report.chunks}


def run_plain(spark: Any, work: Path) -> dict[str, Any]:
    spark.sql(
        f"INSERT INTO delta.`{work / 'pass'}` SELECT {INPUTS} FROM delta.`{work / 'quarantine'}`"
        " WHERE exists(_dq_errors, e -> e.`check-id` = 'customer-known')"
    )
    return {}


def timed(spark: Any, pids: list[int], fn: Any) -> dict[str, Any]:
    cpu, start = cpu_seconds(pids), time.perf_counter()
    extra = fn()
    return {"seconds": time.perf_counter() - start, "cpu": cpu_seconds(pids) - cpu, **extra}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--chunk-rows", type=int, default=None, help="the release's chunk size (default: its own)")
    p.add_argument("--writers", default=",".join(WRITERS))
    p.add_argument("--quick", action="store_true", help="100,000 rows instead of --rows")
    args = p.parse_args(argv)
    if args.quick:
        args.rows = 100_000
    spark = build_spark()
    pids = [os.getpid(), spark.sparkContext._jvm.ProcessHandle.current().pid()]
    result: dict[str, Any] = {"rows": args.rows, "writers": {}}
    warm = WORK / "warm-up"  # the JVM's first SQL and Delta commits are slow: not counted against either
    tables(spark, 1000, warm)
    run_plain(spark, warm)
    run_release(spark, "spark", warm, None)
    for writer in args.writers.split(","):
        work = WORK / writer
        tables(spark, args.rows, work / "plain")
        plain = timed(spark, pids, lambda: run_plain(spark, work / "plain"))  # noqa: B023 - called at once
        tables(spark, args.rows, work / "release")
        gated = timed(spark, pids, lambda: run_release(spark, writer, work / "release", args.chunk_rows))  # noqa: B023
        result["writers"][writer] = {
            "plain": plain,
            "release": gated,
            "ratio": gated["seconds"] / plain["seconds"],
            "cpu_ratio": gated["cpu"] / plain["cpu"] if plain["cpu"] else None,
        }
    save_result(RESULTS, result)
    print(f"release of {args.rows:,} quarantined rows (one run each; wall / CPU seconds, driver + JVM)")
    for writer, m in result["writers"].items():
        g, pl = m["release"], m["plain"]
        print(
            f"  {writer:<9} release {g['seconds']:.1f} s (cpu {g['cpu']:.1f}, {g['released']:,} released in "
            f"{g['chunks']} chunk(s))  plain INSERT ... SELECT {pl['seconds']:.1f} s (cpu {pl['cpu']:.1f})"
            f"  ratio {m['ratio']:.2f}"
        )
    spark.stop()


if __name__ == "__main__":
    main()
