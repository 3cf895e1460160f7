"""``python -m benchmarks.duplicates [--keys 1000000 10000000] [--rows 100000] [--rounds 3]``: the per-batch
cost of a ``unique-key-check`` across batches (#44), per router, against the same gate without it and a plain
Delta append of the same batch.

One session with delta-spark. Per key count, a keys table of that many keys spread over the 7 days of the
horizon is written by Spark (the key hashes made by the same expression the gate uses); a gate judges
100k-row batches of which 1% repeat a remembered key. Per router (``driver``: delta-rs, the embedded default;
``distributed``: Spark's writer) and round, interleaved:

* ``with``: the gate with ``order-once`` (horizon 7 days) and a null check;
* ``without``: the same gate with the null check only;
* ``plain``: ``batch.write.format("delta").mode("append")`` to a table.

Each variant appends to its own tables (a new batch id per round); wall and CPU seconds (Python driver + JVM)
per batch, their medians and the ratios with/without and with/plain; the keys table's size on disk per million
keys, and per batch the Spark jobs (tagged) and Delta commits (versions added to the variant's tables) of each
variant. Writes ``benchmarks/results/duplicates-latest.json`` (a key count measured again replaces its entry).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.distributed import build_spark, cpu_seconds
from benchmarks.harness import JobCounter, save_result
from streaming_dq.compat.spark import from_arrow, to_arrow

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work" / "duplicates"
RESULTS = ROOT / "benchmarks" / "results" / "duplicates-latest.json"
NOW = datetime(2026, 11, 8, tzinfo=UTC)
HORIZON = timedelta(days=7)


def keys_table(spark: Any, keys: int, path: Path) -> float:
    """``keys`` remembered keys (ids 0..keys-1) over the horizon's 7 days; MiB on disk."""
    from pyspark.sql import functions as F

    key = F.to_json(F.array(F.col("id").cast("string")))
    seconds = (F.col("id") % (7 * 86_400)).cast("long")
    ts = F.timestamp_seconds(F.lit(int((NOW - HORIZON).timestamp())) + seconds)
    frame = spark.range(keys).select(
        F.lit("orders").alias("gate"),
        F.lit("order-once").alias("check_id"),
        F.unhex(F.md5(key)).alias("key_hash"),
        key.alias("key"),
        ts.alias("event_time"),
        ts.alias("last_event_time"),
        F.concat(F.lit("offset="), F.col("id").cast("string")).alias("origin"),
        F.to_date(ts).alias("event_date"),
        F.lit(0).cast("long").alias("batch_id"),
        F.lit("history").alias("app_id"),
    )
    frame.write.format("delta").partitionBy("event_date").mode("overwrite").save(str(path))
    return sum(f.stat().st_size for f in path.rglob("*.parquet")) / 2**20


def batch(spark: Any, rows: int, keys: int, round_: int) -> Any:
    """``rows`` orders in the last day: 1% repeat a remembered key, the rest are new (and distinct per round)."""
    from pyspark.sql import functions as F

    fresh = F.lit(keys + round_ * rows) + F.col("id")
    order_id = F.when(F.col("id") % 100 == 0, F.col("id") * 7 % keys).otherwise(fresh)
    ts = F.timestamp_seconds(F.lit(int(NOW.timestamp())) - F.col("id") % 86_400)
    frame = spark.range(rows).select(
        order_id.alias("order_id"),
        ts.alias("ts"),
        F.col("id").alias("offset"),
        (F.rand(3) * 100).alias("amount"),
    )
    return from_arrow(spark, to_arrow(frame))  # an in-memory batch: the source's cost is not measured


def gate(variant: str, router: str, work: Path) -> Any:
    from streaming_dq import CheckSet, QualityGate

    checks: list[dict[str, Any]] = [
        {"check": "null-check", "check-id": "amount-present", "columns": ["amount"]}
    ]
    if variant == "with":
        checks.append(
            {
                "check": "unique-key-check",
                "check-id": "order-once",
                "columns": ["order_id"],
                "horizon": "7 days",
            }
        )
    return QualityGate(
        "orders",
        CheckSet.from_dicts(checks),
        pass_table=str(work / "pass"),
        quarantine_table=str(work / "quarantine"),
        keys_table=str(work / "keys") if variant == "with" else None,
        event_time="ts",
        writer="delta-rs" if router == "driver" else "spark",
        routing=router,
        driver_commit_rows=0,
    )


def delta_versions(folder: Path) -> int:
    """The sum of the versions of the Delta tables directly under ``folder`` (or ``folder`` itself)."""
    from deltalake import DeltaTable

    tables = (
        [folder]
        if (folder / "_delta_log").exists()
        else [p for p in folder.glob("*") if (p / "_delta_log").exists()]
    )
    return sum(DeltaTable(str(t)).version() for t in tables)


def restart(spark: Any, work: Path, router: str, rows: int, keys: int) -> dict[str, float]:
    """A new gate on the ``with`` variant's tables (a restart): its first batch builds the driver's index from
    the keys table; the second does not. Wall seconds of each, and the index's size."""
    g = gate("with", router, work)
    out: dict[str, float] = {}
    for n, name in ((101, "first_batch_seconds"), (102, "second_batch_seconds")):
        df = batch(spark, rows, keys, n)
        df.persist()
        df.count()
        wall = time.perf_counter()
        g(df, n)
        out[name] = round(time.perf_counter() - wall, 3)
        df.unpersist()
    index = g.seen_keys.index
    if index is not None:
        out["index_entries"] = len(index)
        out["index_mib"] = round(index.nbytes / 2**20, 1)
        out["index_bytes_per_entry"] = round(index.nbytes / max(len(index), 1), 1)
    return out


def measure(spark: Any, keys: int, rows: int, rounds: int, routers: list[str]) -> dict[str, Any]:
    root = WORK / f"{keys}"
    shutil.rmtree(root, ignore_errors=True)
    size = keys_table(spark, keys, root / "history")
    jvm = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    pids = [os.getpid(), int(jvm)]
    out: dict[str, Any] = {"keys": keys, "rows": rows, "keys_mib": round(size, 1)}
    for router in routers:
        gates = {}
        for variant in ("with", "without"):
            work = root / router / variant
            if variant == "with":
                shutil.copytree(root / "history", work / "keys")
            gates[variant] = gate(variant, router, work)
        times: dict[str, list[tuple[float, float]]] = {"with": [], "without": [], "plain": []}
        counter = JobCounter(spark)
        plain_path = str(root / router / "plain")
        calls = {
            "with": counter.wrap(gates["with"], f"{router}-with"),
            "without": counter.wrap(gates["without"], f"{router}-without"),
            "plain": counter.wrap(
                lambda df, _b, path=plain_path: df.write.format("delta").mode("append").save(path),
                f"{router}-plain",
            ),
        }
        labels: list[str] = []
        commits: dict[str, list[int]] = {"with": [], "without": [], "plain": []}
        for r in range(rounds + 1):  # round 0 warms the session, the plans and the tables up
            df = batch(spark, rows, keys, r)
            df.persist()
            df.count()
            for variant in ("without", "with", "plain"):
                folder = root / router / (variant if variant != "plain" else "plain")
                before = delta_versions(folder)
                cpu, wall = cpu_seconds(pids), time.perf_counter()
                calls[variant](df, r)
                if r:
                    times[variant].append((time.perf_counter() - wall, cpu_seconds(pids) - cpu))
                    commits[variant].append(delta_versions(folder) - before)
                labels.append(variant if r else "")
            df.unpersist()
        jobs: dict[str, list[int]] = {"with": [], "without": [], "plain": []}
        for label, counted in zip(labels, counter.per_batch(), strict=True):
            if label:
                jobs[label].append(counted["jobs"])
        med = {
            v: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
            for v, t in times.items()
        }
        out[router] = {
            "wall_seconds": {v: round(m[0], 3) for v, m in med.items()},
            "cpu_seconds": {v: round(m[1], 3) for v, m in med.items()},
            "with_over_without": round(med["with"][0] / med["without"][0], 2),
            "with_over_plain": round(med["with"][0] / med["plain"][0], 2),
            "cpu_with_over_without": round(med["with"][1] / med["without"][1], 2),
            "runs": {v: [[round(w, 3), round(c, 3)] for w, c in t] for v, t in times.items()},
            # structural, per batch: Spark jobs (tagged) and Delta commits (table versions added)
            "spark_jobs_per_batch": {v: statistics.median(n) for v, n in jobs.items()},
            "delta_commits_per_batch": {v: statistics.median(n) for v, n in commits.items()},
        }
        if router == "driver":
            out[router]["restart"] = restart(spark, root / router / "with", router, rows, keys)
        print(keys, router, out[router], flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--routers", nargs="+", default=["driver", "distributed"])
    args = parser.parse_args()
    spark = build_spark()
    results = [measure(spark, k, args.rows, args.rounds, args.routers) for k in args.keys]
    # a key count measured alone (50M takes long) replaces its own entry and keeps the others, each with its date
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    before = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {"results": []}
    kept = before["results"]
    for result in kept:
        result.setdefault("measured_at", before.get("measured_at"))
    for result in results:
        result["measured_at"] = stamp
    merged = [r for r in kept if r["keys"] not in args.keys] + results
    merged.sort(key=lambda r: int(r["keys"]))
    save_result(RESULTS, {"benchmark": "duplicates", "horizon_days": 7, "results": merged})
    shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
