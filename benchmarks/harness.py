"""The pieces every measurement shares: the SparkSession, job accounting, and the timed stream.

Job accounting is listener-free: inside ``foreachBatch`` the batch function tags its thread's jobs with a
per-batch tag (``SparkContext.addJobTag``); afterwards the status tracker's ``getJobIdsForTag`` gives the
jobs of every batch, and the SQL status store maps those jobs to the SQL executions (queries) that ran them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BatchFn = Callable[[Any, int], None]


def build_spark(app_name: str = "streaming-dq-bench") -> Any:
    """ONE session for the whole run: local[2], 2 shuffle partitions, UI off, UTC."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.streaming.stopGracefullyOnShutdown", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@dataclass
class JobCounter:
    """Tags each batch's jobs and counts them (and their SQL executions) afterwards."""

    spark: Any
    tags: list[str] = field(default_factory=list)

    def wrap(self, fn: BatchFn, label: str) -> BatchFn:
        """``fn`` with every Spark job it triggers tagged ``<label>-<run>-<batch_id>``."""
        run = uuid.uuid4().hex[:8]
        sc = self.spark.sparkContext

        def tagged(batch_df: Any, batch_id: int) -> None:
            tag = f"bench-{label}-{run}-{batch_id}"
            self.tags.append(tag)
            sc.addJobTag(tag)
            try:
                fn(batch_df, batch_id)
            finally:
                sc.removeJobTag(tag)

        return tagged

    def per_batch(self, settle_seconds: float = 5.0) -> list[dict[str, int]]:
        """Jobs and SQL executions of every tagged batch (waits for the listener bus to catch up)."""
        tracker = self.spark.sparkContext._jsc.sc().statusTracker()
        deadline = time.monotonic() + settle_seconds
        while True:
            jobs = {t: sorted(int(j) for j in tracker.getJobIdsForTag(t)) for t in self.tags}
            unfinished = any(
                (info := tracker.getJobInfo(j)).isEmpty() or str(info.get().status()) == "RUNNING"
                for ids in jobs.values()
                for j in ids
            )
            if not unfinished or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        executions = _executions_by_job(self.spark)
        out = []
        for tag in self.tags:
            ids = jobs[tag]
            out.append(
                {"jobs": len(ids), "sql_executions": len({executions[j] for j in ids if j in executions})}
            )
        return out


def _executions_by_job(spark: Any) -> dict[int, int]:
    """job id -> SQL execution id, from the SQL status store (kept even with the UI off)."""
    store = spark._jsparkSession.sharedState().statusStore()
    out: dict[int, int] = {}
    it = store.executionsList().iterator()
    while it.hasNext():
        ex = it.next()
        jobs = ex.jobs().keys().iterator()
        while jobs.hasNext():
            out[int(jobs.next())] = int(ex.executionId())
    return out


@dataclass(frozen=True)
class StreamRun:
    seconds: float
    batches: int
    batch_seconds: list[float]
    per_batch: list[dict[str, int]]


def run_stream(
    spark: Any,
    source_dir: Path,
    fn: BatchFn,
    *,
    checkpoint: Path,
    counter: JobCounter | None = None,
    label: str = "stream",
    prepare: Callable[[Any, Any], None] | None = None,
) -> StreamRun:
    """Time a whole ``availableNow`` stream over ``source_dir`` (one file per micro-batch)."""
    schema = spark.read.parquet(str(source_dir)).schema
    shutil.rmtree(checkpoint, ignore_errors=True)
    if prepare is not None:
        prepare(spark, schema)
    batch_fn = counter.wrap(fn, label) if counter is not None else fn
    seen: list[int] = []

    batch_seconds: list[float] = []

    def each(batch_df: Any, batch_id: int) -> None:
        seen.append(batch_id)
        t0 = time.perf_counter()
        batch_fn(batch_df, batch_id)
        batch_seconds.append(time.perf_counter() - t0)

    stream = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(source_dir))
    started = time.perf_counter()
    query = (
        stream.writeStream.foreachBatch(each)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    seconds = time.perf_counter() - started
    if query.exception() is not None:
        raise RuntimeError(f"stream {label} failed: {query.exception()}")
    per_batch = counter.per_batch() if counter is not None else []
    if counter is not None:
        counter.tags.clear()
    return StreamRun(seconds, len(seen), batch_seconds, per_batch)


def interleaved_rounds(
    variants: Sequence[str],
    make_gate: Callable[[str], Any],
    df: Any,
    *,
    batches: int,
    rounds: int,
    pids: Sequence[int],
) -> dict[str, dict[str, list[float]]]:
    """Seconds and CPU seconds per batch of each variant's gate over ``df``, in ``rounds`` rounds of
    ``batches`` batches, the variants interleaved within each round. Each round builds the gates anew and
    runs a first batch that creates their tables, not counted; the first round warms up and is dropped."""
    from benchmarks.distributed import cpu_seconds

    seen: dict[str, dict[str, list[float]]] = {v: {"seconds": [], "cpu": []} for v in variants}
    for _ in range(rounds + 1):
        for variant in variants:
            fn = make_gate(variant)
            fn(df, 0)
            cpu, start = cpu_seconds(pids), time.perf_counter()
            for batch in range(1, batches + 1):
                fn(df, batch)
            seen[variant]["seconds"].append((time.perf_counter() - start) / batches)
            seen[variant]["cpu"].append((cpu_seconds(pids) - cpu) / batches)
    for values in seen.values():
        del values["seconds"][0], values["cpu"][0]
    return seen


def batch_grid(
    argv: Sequence[str] | None, doc: str, *, quick: tuple[int, int, int], full: tuple[int, int, int]
) -> tuple[int, int, int]:
    """``(rows, batches, rounds)`` from ``--quick`` or ``--rows/--batches/--rounds`` (``full`` by default),
    the command line of the benchmarks that hand one cached batch to a gate again and again."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="{:,} rows, {} batches, {} rounds".format(*quick))
    p.add_argument("--rows", type=int, default=full[0])
    p.add_argument("--batches", type=int, default=full[1])
    p.add_argument("--rounds", type=int, default=full[2])
    args = p.parse_args(argv)
    return quick if args.quick else (args.rows, args.batches, args.rounds)


def save_result(path: Path, result: dict[str, Any]) -> None:
    """Write a benchmark's result as JSON to ``path``, stamped with when it was measured (``measured_at``)."""
    result["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
