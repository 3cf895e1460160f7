"""The streaming grid: plain, floor and gate over the same batches, interleaved, median of repetitions.

For one batch size, a repetition runs every cell once (``plain``, then ``floor``/``gate`` at each number of
checks), in an order rotated by the repetition number so no variant always runs first; every run gets fresh
target tables and a fresh checkpoint. Ratios are taken between medians of the same size.
"""

from __future__ import annotations

import shutil
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.data import ensure_dataset
from benchmarks.harness import JobCounter, run_stream
from benchmarks.rules import rule_mix
from benchmarks.variants import VARIANTS, routed_rows


@dataclass(frozen=True)
class GridConfig:
    """What to measure.

    Attributes:
        rows: Batch sizes (rows per micro-batch).
        checks: Numbers of checks (the first n rules of the mix).
        reps: Timed repetitions per cell (after one untimed warm-up round, unless ``warmup`` is off).
        batches: Micro-batches per stream, per batch size (default 3).
        fixed_rows: Rows of the tiny batch whose fixed cost is measured (0: skip).
        fixed_checks: Checks used for the tiny-batch measurement.
        fixed_batches: Micro-batches per tiny-batch stream.
        warmup: Run one untimed round of every cell first (JIT, file caches).
    """

    rows: Sequence[int]
    checks: Sequence[int]
    reps: int = 3
    batches: dict[int, int] = field(default_factory=dict)
    fixed_rows: int = 100
    fixed_checks: int = 20
    fixed_batches: int = 8
    warmup: bool = True

    def batches_for(self, rows: int) -> int:
        return self.batches.get(rows, 3)


@dataclass
class Cell:
    rows: int
    checks: int
    variant: str
    batches: int
    stream_seconds: list[float] = field(default_factory=list)
    batch_seconds: list[list[float]] = field(default_factory=list)
    jobs_per_batch: list[int] = field(default_factory=list)
    sql_per_batch: list[int] = field(default_factory=list)
    routed: dict[str, int] = field(default_factory=dict)

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.rows, self.checks, self.variant)

    def as_dict(self) -> dict[str, Any]:
        per_batch = [statistics.median(b) for b in self.batch_seconds if b]
        return {
            "rows": self.rows,
            "checks": self.checks,
            "variant": self.variant,
            "batches": self.batches,
            "stream_seconds": self.stream_seconds,
            "stream_median": statistics.median(self.stream_seconds) if self.stream_seconds else None,
            "batch_fn_seconds": self.batch_seconds,
            "batch_fn_median": statistics.median(per_batch) if per_batch else None,
            "jobs_per_batch": self.jobs_per_batch,
            "sql_executions_per_batch": self.sql_per_batch,
            "routed": self.routed,
        }


def measure_size(
    spark: Any,
    work: Path,
    rows: int,
    checks: Sequence[int],
    reps: int,
    batches: int,
    *,
    warmup: bool = True,
    log: Any = print,
) -> list[Cell]:
    """All cells of one batch size, interleaved; returns one :class:`Cell` per (variant, checks)."""
    source = ensure_dataset(work / "data", rows, batches)
    order: list[tuple[str, int]] = [("plain", 0)]
    for n in checks:
        order += [("floor", n), ("gate", n)]
    cells = {(v, n): Cell(rows, n, v, batches) for v, n in order}
    counter = JobCounter(spark)
    rounds = ([-1] if warmup else []) + list(range(reps))
    for rep in rounds:
        shift = max(rep, 0) % len(order)
        for variant, n in order[shift:] + order[:shift]:
            target = work / "targets" / f"{variant}-{rows}-{n}"
            shutil.rmtree(target, ignore_errors=True)
            fn, prepare = VARIANTS[variant](rule_mix(n), target)
            run = run_stream(
                spark,
                source,
                fn,
                checkpoint=target / "_checkpoint",
                counter=counter,
                label=f"{variant}{n}",
                prepare=prepare,
            )
            if run.batches != batches:
                raise RuntimeError(f"{variant}: expected {batches} micro-batches, ran {run.batches}")
            cell = cells[(variant, n)]
            if rep >= 0:
                cell.stream_seconds.append(run.seconds)
                cell.batch_seconds.append(run.batch_seconds)
                cell.jobs_per_batch += [b["jobs"] for b in run.per_batch]
                cell.sql_per_batch += [b["sql_executions"] for b in run.per_batch]
                cell.routed = routed_rows(variant, target)
            log(
                f"  rows={rows:>8} checks={n:>2} {variant:<5} rep={'warm' if rep < 0 else rep}"
                f" stream={run.seconds:7.2f}s batch-fn={statistics.median(run.batch_seconds):6.3f}s"
                f" jobs/batch={[b['jobs'] for b in run.per_batch]}"
            )
            shutil.rmtree(target, ignore_errors=True)
    return list(cells.values())


def measure_grid(spark: Any, work: Path, config: GridConfig, *, log: Any = print) -> list[Cell]:
    """Every size of ``config`` (largest first is not required: sizes are independent)."""
    out: list[Cell] = []
    for i, rows in enumerate(config.rows):
        log(f"rows per batch: {rows} ({config.batches_for(rows)} batches per stream, {config.reps} reps)")
        out += measure_size(
            spark,
            work,
            rows,
            config.checks,
            config.reps,
            config.batches_for(rows),
            warmup=config.warmup and i == 0,
            log=log,
        )
    if config.fixed_rows:
        log(f"fixed cost: {config.fixed_rows}-row batches, {config.fixed_checks} checks")
        out += measure_size(
            spark,
            work,
            config.fixed_rows,
            [config.fixed_checks],
            config.reps,
            config.fixed_batches,
            warmup=False,
            log=log,
        )
    return out
