"""``python -m benchmarks.soak [--batches 10000 | --quick] [--maintain-every N]``: one gate, many small batches.

The long-run harness of docs/performance.md ("Months, not minutes"): 10,000 batches of 100-1,000 rows (a
simulated fortnight at two minutes of event time a batch; ``--quick``: 1,000), with or without the gate's own
maintenance (``--maintain-every N`` batches, ``--roll-up-after`` wall-clock age of metrics rows,
``--log-retention`` with ``--file-retention``: the tables' log and file horizons, compressed like the run's
time: a 2-minute log here stands for a table written every 10 s keeping days of it). At the end it
measures what a month of it would cost: a restart (a new gate rebuilding its windows from the metrics table,
and its first batch), the read time of each table, and the slopes of latency, RSS and files per table.

The gate's batch function is called directly on prepared DataFrames (the streaming engine's own per-batch
cost is not the gate's), with a results and a metrics table and a daily window check, event time advancing two
minutes a batch. Every batch's latency is recorded, and every ``--every`` batches the RSS of the Python driver
and of the JVM (from /proc) and the files of each table. At the end: the least-squares slope of latency and of
RSS over the batches after warm-up, and the same over the last half alone (a leak keeps its slope; a cache
filling up flattens). Writes ``benchmarks/results/soak-<routing>.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work" / "soak"

CHECKS = [
    {"check": "null-check", "check-id": "id-present", "columns": ["id"]},
    {"check": "numeric-between-check", "check-id": "amount-range", "columns": ["amount"], "min-value": 0,
     "max-value": 1000},
    {"check": "row-count-min-check", "check-id": "batch-volume", "min-count": 10},
    {"check": "mean-check", "check-id": "basket", "column": "amount", "le": 900},
    {"check": "row-count-min-check", "check-id": "daily-volume", "min-count": 100, "scope": {"window": "1 day"}},
]  # fmt: skip


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ys over xs."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def _arrow_mib() -> float:
    import pyarrow as pa

    return pa.total_allocated_bytes() / 2**20


def _traced_mib() -> float | None:
    import tracemalloc

    return tracemalloc.get_traced_memory()[0] / 2**20 if tracemalloc.is_tracing() else None


def rss_by_mapping(pid: int, top: int = 8) -> dict[str, float]:
    """Resident MiB of a process by mapping (``/proc/PID/smaps``): ``[heap]``, ``[anon]`` (malloc arenas of
    other threads, mmap'd blocks), each shared library; the ``top`` largest."""
    by: dict[str, int] = {}
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split(None, 5)
        if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
            name = Path(head[5]).name if len(head) == 6 and head[5].startswith("/") else (
                head[5] if len(head) == 6 else "[anon]")  # fmt: skip
        elif line.startswith("Rss:"):
            by[name] = by.get(name, 0) + int(line.split()[1])
    biggest = sorted(by.items(), key=lambda kv: -kv[1])[:top]
    return {k: round(v / 1024, 1) for k, v in biggest}


def pymalloc_arenas_mib() -> float:
    """MiB of pymalloc arenas currently allocated (``sys._debugmallocstats``): the small-object heap Python
    keeps mapped, used or fragmented, which tracemalloc's traced bytes do not show."""
    import re
    import tempfile

    with tempfile.TemporaryFile(mode="w+") as out:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        found = re.search(r"# arenas allocated current\s*=\s*([\d,]+)", out.read())
    return int(found.group(1).replace(",", "")) if found else float("nan")


def files(table: Path) -> int:
    from deltalake import DeltaTable

    return len(DeltaTable(str(table)).file_uris()) if DeltaTable.is_deltatable(str(table)) else 0


def log_files(table: Path) -> int:
    log = table / "_delta_log"
    return sum(1 for _ in log.glob("*.json")) if log.is_dir() else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak")
    parser.add_argument("--batches", type=int, default=10000)
    parser.add_argument("--quick", action="store_true", help="1,000 batches, warm-up 100, a sample every 50")
    parser.add_argument("--rows", type=int, default=None, help="rows per batch (default: 100-1,000, seeded)")
    parser.add_argument(
        "--maintain-every", type=int, default=0, help="gate maintenance every N batches (0: none)"
    )
    parser.add_argument(
        "--roll-up-after", default="5 minutes", help="with maintenance: metrics rows older than this"
    )
    parser.add_argument(
        "--log-retention", default=None,
        help="with maintenance: the tables' delta.logRetentionDuration (e.g. '5 minutes'); it needs "
        "--file-retention at most as long",
    )  # fmt: skip
    parser.add_argument(
        "--file-retention", default=None,
        help="the tables' delta.deletedFileRetentionDuration at creation (the owner's horizon, time-compressed)",
    )  # fmt: skip
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--routing", choices=["driver", "distributed"], default="driver")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--work", type=Path, default=WORK, help="where the tables go (two runs side by side)")
    parser.add_argument(
        "--malloc-trim", action="store_true",
        help="at each sample, also the RSS after glibc's malloc_trim(0): memory the allocator only kept",
    )  # fmt: skip
    parser.add_argument(
        "--smaps", action="store_true", help="at each sample, the driver's resident memory by mapping",
    )  # fmt: skip
    parser.add_argument(
        "--tracemalloc", action="store_true",
        help="trace Python allocations: the biggest growths between warm-up and the end, by line",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.quick:
        args.batches, args.warmup, args.every = 1000, 100, 50
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start(8)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from streaming_dq import CheckSet, QualityGate
    from streaming_dq.core.scope import parse_duration
    from streaming_dq.maintenance import MaintenancePolicy
    from streaming_dq.tables import DeltaTarget

    builder = SparkSession.builder.master("local[2]").appName("streaming-dq-soak")
    conf = {"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false", "spark.sql.session.timeZone": "UTC",
            "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "2g"}  # fmt: skip
    if args.routing == "distributed":
        from streaming_dq.runtime.jvm import spark_conf

        conf |= spark_conf(["delta"]) | {"spark.databricks.delta.snapshotPartitions": "2"}
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    work = args.work / args.routing
    shutil.rmtree(work, ignore_errors=True)
    tables = {name: work / name for name in ("pass", "quarantine", "results", "metrics")}
    configuration = {}
    if args.file_retention:
        seconds = int(parse_duration(args.file_retention).total_seconds())
        configuration["delta.deletedFileRetentionDuration"] = f"interval {seconds} seconds"
    targets = {name: DeltaTarget(str(path), configuration=configuration) for name, path in tables.items()}
    policy = None
    if args.maintain_every:
        policy = MaintenancePolicy(
            every_batches=args.maintain_every,
            roll_up_after=parse_duration(args.roll_up_after),
            log_retention=parse_duration(args.log_retention) if args.log_retention else None,
        )

    def new_gate() -> QualityGate:
        return QualityGate(
            "soak", CheckSet.from_dicts(CHECKS), pass_table=targets["pass"],
            quarantine_table=targets["quarantine"], results_table=targets["results"],
            metrics_table=targets["metrics"], event_time="ts", timezone="Europe/Berlin",
            writer="spark" if args.routing == "distributed" else "delta-rs", routing=args.routing,
            maintenance=policy,
        )  # fmt: skip

    gate = new_gate()
    sizes = random.Random(7)
    maintenance_s: list[float] = []
    start = datetime(2026, 1, 1, tzinfo=UTC)
    jvm = spark.sparkContext._gateway.proc.pid
    latencies: list[float] = []
    samples: list[dict[str, Any]] = []
    began = time.perf_counter()
    baseline = None
    for batch_id in range(args.batches):
        if args.tracemalloc and batch_id == args.warmup:
            gc.collect()
            baseline = tracemalloc.take_snapshot()
        ts = start + timedelta(minutes=2 * batch_id)
        rows = args.rows or sizes.randint(100, 1000)
        df = spark.range(rows).select(
            F.when(F.col("id") % 97 == 0, F.lit(None)).otherwise(F.col("id")).alias("id"),
            (F.col("id") % 1200).cast("double").alias("amount"),
            (F.lit(ts) + F.make_interval(secs=F.col("id") % 120)).alias("ts"),
        )
        t0 = time.perf_counter()
        outcomes: list[Any] = []
        gate.on_batch = outcomes.append
        gate(df, batch_id)
        latencies.append(time.perf_counter() - t0)
        if outcomes and outcomes[0].maintenance is not None:
            maintenance_s.append(outcomes[0].maintenance.seconds)
        if batch_id % args.every == 0 or batch_id == args.batches - 1:
            gc.collect()
            sample = {
                "batch": batch_id,
                "elapsed_s": time.perf_counter() - began,
                "latency_s": statistics.median(latencies[-args.every :]),
                "python_rss_mib": rss_mib(os.getpid()),
                "jvm_rss_mib": rss_mib(jvm),
                "files": {name: files(path) for name, path in tables.items()},
                "log_files": {name: log_files(path) for name, path in tables.items()},
                "arrow_allocated_mib": _arrow_mib(),
                "python_traced_mib": _traced_mib(),
            }
            if args.malloc_trim:
                import ctypes

                ctypes.CDLL("libc.so.6").malloc_trim(0)
                sample["python_rss_after_trim_mib"] = rss_mib(os.getpid())
            if args.smaps:
                sample["python_rss_by_mapping_mib"] = rss_by_mapping(os.getpid())
                sample["pymalloc_arenas_mib"] = pymalloc_arenas_mib()  # 1 MiB arenas on 3.10+
                sample["threads"] = len(os.listdir(f"/proc/{os.getpid()}/task"))
            samples.append(sample)
            print(json.dumps(sample), flush=True)
    after = [s for s in samples if s["batch"] >= args.warmup]
    half = [s for s in after if s["batch"] >= (args.warmup + args.batches) // 2]

    def slopes(points: list[dict[str, Any]]) -> dict[str, float]:
        xs = [p["batch"] for p in points]
        return {
            "latency_ms_per_1000_batches": slope(xs, [p["latency_s"] * 1000 for p in points]) * 1000,
            "python_rss_mib_per_1000_batches": slope(xs, [p["python_rss_mib"] for p in points]) * 1000,
            "jvm_rss_mib_per_1000_batches": slope(xs, [p["jvm_rss_mib"] for p in points]) * 1000,
        }

    # A month of this, then a restart: a new gate rebuilds its windows from the metrics table (what a driver
    # restart does), then its first batch; and what a downstream reader pays for each table.
    from streaming_dq.metrics.store import MetricsStore
    from streaming_dq.tables import read_table

    t0 = time.perf_counter()
    restored = new_gate()
    restored.writer_for(spark)
    assert restored.tracker is not None
    restored.tracker._refresh()
    restore_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    restored(df, args.batches)
    first_batch_s = time.perf_counter() - t0
    reads = {}
    for name, path in tables.items():
        t0 = time.perf_counter()
        read_rows = read_table(str(path)).num_rows
        reads[name] = {"seconds": time.perf_counter() - t0, "rows": read_rows, "files": files(path)}
    metrics_rows = MetricsStore(tables["metrics"]).read_table("soak").num_rows

    def file_slopes(points: list[dict[str, Any]]) -> dict[str, float]:
        xs = [p["batch"] for p in points]
        return {name: slope(xs, [p["files"][name] for p in points]) * 1000 for name in tables}

    summary = {
        "routing": args.routing,
        "maintain_every": args.maintain_every,
        "roll_up_after": args.roll_up_after if args.maintain_every else None,
        "log_retention": args.log_retention if args.maintain_every else None,
        "file_retention": args.file_retention,
        "maintenance_runs": len(maintenance_s),
        "maintenance_median_s": statistics.median(maintenance_s) if maintenance_s else None,
        "restart_restore_s": restore_s,
        "restart_first_batch_s": first_batch_s,
        "reads": reads,
        "metrics_rows": metrics_rows,
        "files_per_1000_batches_after_warmup": file_slopes(after),
        "batches": args.batches,
        "rows_per_batch": args.rows or "100-1000",
        "seconds": time.perf_counter() - began,
        "median_latency_s": statistics.median(latencies[args.warmup :]),
        "p95_latency_s": sorted(latencies[args.warmup :])[int(0.95 * len(latencies[args.warmup :]))],
        "after_warmup": slopes(after),
        "last_half": slopes(half),
        "samples": samples,
    }
    if baseline is not None:
        gc.collect()
        growth = tracemalloc.take_snapshot().compare_to(baseline, "traceback")
        summary["tracemalloc_top_growth"] = [
            {"kib": round(stat.size_diff / 1024, 1), "blocks": stat.count_diff,
             "where": [f"{f.filename}:{f.lineno}" for f in stat.traceback][-4:]}
            for stat in growth[:15]
        ]  # fmt: skip
    suffix = f"-maintained-{args.maintain_every}" if args.maintain_every else ""
    out = args.out or ROOT / "benchmarks" / "results" / f"soak-{args.routing}{suffix}.json"
    out.write_text(json.dumps(summary, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in summary.items() if k != "samples"}, indent=1))
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
