"""``python -m benchmarks.profile_cost [--quick]``: what an event-time profile costs a gate's batch.

One session, one cached batch of flights over ten days (a timestamp in New York time, a delay, a carrier),
handed to :class:`~streaming_dq.sink.QualityGate` (driver router, delta-rs) as successive micro-batches, in
three variants interleaved round by round:

* ``none``: no profile;
* ``holiday``: one holiday profile (two days) whose rules turn the delay check into a warning and scale the
  volume check;
* ``calendar``: the US public-holiday calendar (eleven holidays of 130 years, the day after each too) with
  the same rules.

Per variant, the median seconds per batch and CPU seconds per batch of the Python driver and the JVM (from
/proc), and the ratios to ``none`` of the same run. The calendar once cost 3-5x a batch without profiles
(#27: the regime mask evaluated once per regime, each holiday a ``date IN (...)`` over its 130 years as
text); the ratio printed here is the number to keep an eye on. Writes ``benchmarks/results/calendar-latest.json``.
"""

from __future__ import annotations

import os
import shutil
import statistics
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from benchmarks.harness import batch_grid, build_spark, interleaved_rounds, save_result

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work" / "calendar"
RESULTS = ROOT / "benchmarks" / "results" / "calendar-latest.json"
VARIANTS = ("none", "holiday", "calendar")


def flights(spark: Any, rows: int) -> Any:
    """``rows`` flights over ten days from 2025-11-20 (Thanksgiving inside), cached and counted."""
    from pyspark.sql import functions as F

    start = datetime(2025, 11, 20, tzinfo=UTC)
    minutes = (F.col("id") * 7) % (10 * 24 * 60)
    df = spark.range(rows).select(
        F.col("id").cast("string").alias("flight_id"),
        (F.lit(start) + F.make_dt_interval(F.lit(0), F.lit(0), minutes)).alias("dep_ts"),
        (F.rand(1) * 600).alias("delay"),
        F.when(F.rand(2) < 0.01, None).otherwise(F.lit("AA")).alias("carrier"),
    )
    df = df.cache()
    df.count()
    return df


def profiles(variant: str) -> list[Any]:
    from streaming_dq.profiles import HolidayProfile, PublicHolidayProfile, tag

    rules = [tag("delays").set(severity="warning"), tag("volume").set(metric_multiplier=0.5)]
    if variant == "holiday":
        return [HolidayProfile("Thanksgiving", date(2025, 11, 27), date(2025, 11, 28), rules=rules)]
    if variant == "calendar":
        return [PublicHolidayProfile("US", country="US", days_after=1, rules=rules)]
    return []


def gate(variant: str, work: Path) -> Any:
    from streaming_dq import CheckSet, QualityGate

    checks = CheckSet.from_dicts(
        [
            {"check": "null-check", "check-id": "carrier", "columns": ["carrier"]},
            {"check": "numeric-between-check", "check-id": "delay", "columns": ["delay"], "min-value": 0,
             "max-value": 500, "tags": ["delays"]},
            {"check": "row-count-min-check", "check-id": "volume", "min-count": 10, "tags": ["volume"]},
        ]
    )  # fmt: skip
    shutil.rmtree(work, ignore_errors=True)
    return QualityGate(
        f"calendar-{variant}",
        checks,
        pass_table=str(work / "pass"),
        quarantine_table=str(work / "quarantine"),
        event_time="dep_ts",
        timezone="America/New_York",
        profiles=profiles(variant),
        writer="delta-rs",
    )


def measure(spark: Any, *, rows: int, batches: int, rounds: int, work: Path) -> dict[str, Any]:
    """Seconds and CPU seconds per batch of each variant, ``rounds`` interleaved rounds of ``batches``."""
    df = flights(spark, rows)
    pids = [os.getpid(), spark.sparkContext._jvm.ProcessHandle.current().pid()]
    seen = interleaved_rounds(
        VARIANTS, lambda v: gate(v, work / v), df, batches=batches, rounds=rounds, pids=pids
    )
    df.unpersist()
    medians = {v: {k: statistics.median(x) for k, x in s.items()} for v, s in seen.items()}
    base = medians["none"]
    return {
        "rows": rows,
        "batches": batches,
        "rounds": rounds,
        "variants": {
            v: {
                **m,
                "seconds_ratio": m["seconds"] / base["seconds"],
                "cpu_ratio": m["cpu"] / base["cpu"] if base["cpu"] else None,
                "all_seconds": seen[v]["seconds"],
            }
            for v, m in medians.items()
        },
    }


def main(argv: list[str] | None = None) -> None:
    rows, batches, rounds = batch_grid(argv, __doc__ or "", quick=(200_000, 2, 3), full=(1_000_000, 3, 3))
    spark = build_spark("streaming-dq-calendar")
    result = measure(spark, rows=rows, batches=batches, rounds=rounds, work=WORK)
    save_result(RESULTS, result)
    print(f"calendar: {rows:,} rows per batch, {batches} batches x {rounds} rounds (medians per batch)")
    for variant, m in result["variants"].items():
        print(
            f"  {variant:<9} {m['seconds']:.3f} s  cpu {m['cpu']:.3f} s  "
            f"vs none: {m['seconds_ratio']:.2f}x wall, {m['cpu_ratio']:.2f}x cpu"
        )
    spark.stop()


if __name__ == "__main__":
    main()
