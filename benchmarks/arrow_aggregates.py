"""``python -m benchmarks.arrow_aggregates [--rows 100000 1000000] [--reps 5]``: the driver router's observed
aggregates in Spark's job or in pyarrow on the collected rows, which is cheaper?

The driver router collects every batch (``observe`` + ``toArrow``: one Spark job) and splits it in pyarrow; the
observable aggregates are computed by ``observe`` inside that job. Once the rows are on the driver, pyarrow's
kernels could compute the same states instead. On one cached batch of the benchmark data, interleaved, medians:

* ``job``: the gate-shaped job without aggregates: the rows plus one boolean of the 50-check mix's row
  predicates, ``toArrow``;
* ``job+observe``: the same job with the mix's observed states attached by ``observe`` (at 50 checks: the row
  count, 5 non-NULL counts, the moments of one column: what the shared states come to);
* ``arrow``: the same states by pyarrow kernels over the collected table (what replacing ``observe`` would add
  back on the driver).

No profiles (one override group): with profiles each state is per regime, a group-by in either engine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from streaming_dq.compat.spark import to_arrow

COUNTED = ["customer_id", "email", "amount", "order_id", "sku"]


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.arrow_aggregates")
    parser.add_argument("--rows", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql import Observation, SparkSession
    from pyspark.sql import functions as F

    from benchmarks.data import make_batch
    from benchmarks.rules import row_predicate, rule_mix

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rules = [r for r in rule_mix(50) if r.is_row]
    failed = F.lit(False)
    for rule in rules:
        failed = failed | row_predicate(rule)
    for rows in args.rows:
        df = spark.createDataFrame(make_batch(rows, 0)).cache()
        df.count()
        shaped = df.withColumn("__failed", failed)

        def job(shaped: Any = shaped) -> pa.Table:
            return to_arrow(shaped)

        def job_observe(shaped: Any = shaped) -> pa.Table:
            obs = Observation()
            aggs = [F.count(F.lit(1)).alias("n"), *(F.count(c).alias(f"nn_{c}") for c in COUNTED)]
            aggs += [
                F.count("amount").alias("m_n"),
                F.avg("amount").alias("m_mean"),
                F.var_pop("amount").alias("m_var"),
            ]
            table = to_arrow(shaped.observe(obs, *aggs))
            obs.get  # noqa: B018 - the values, as the gate reads them
            return table

        collected = job()

        def arrow(collected: pa.Table = collected) -> dict[str, Any]:
            amount = collected.column("amount")
            out: dict[str, Any] = {"n": collected.num_rows}
            out |= {c: collected.num_rows - collected.column(c).null_count for c in COUNTED}
            out |= {"mean": pc.mean(amount).as_py(), "var": pc.variance(amount, ddof=0).as_py()}
            return out

        times: dict[str, list[float]] = {"job": [], "job+observe": [], "arrow": []}
        job_observe()  # warm-up (code generation)
        for rep in range(args.reps):
            order = [("job", job), ("job+observe", job_observe), ("arrow", arrow)]
            for name, fn in order[rep % 3 :] + order[: rep % 3]:
                times[name].append(_timed(fn))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(
            f"{rows:>9,} rows  job {med['job']:.3f} s  job+observe {med['job+observe']:.3f} s  "
            f"(observe adds {med['job+observe'] - med['job']:+.3f} s)  arrow {med['arrow'] * 1000:.1f} ms",
            flush=True,
        )
        df.unpersist()
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
