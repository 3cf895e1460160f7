"""``python -m benchmarks.catalog [--quick]``: what the gate costs as its check set grows across the catalog.

The same Parquet batches (``benchmarks.data``), as ``availableNow`` streams in ONE session, interleaved:

* ``plain``: the batch appended to one Delta table with delta-rs (what any sink pays);
* ``gate/<set>``: :class:`~streaming_dq.sink.QualityGate` (driver router, delta-rs) with a growing check set:
  ``base`` (10 checks of the streaming benchmark's mix), ``+rows`` (+ the value-rule row checks of the
  catalog that fit the orders data: formats, codes, the clock, Luhn, casts, equality ...), ``+observable``
  (+ the mergeable statistics: variance, correlation, quantile, compliance ratio, distinct count ...) and
  ``+classic`` (+ the checks that cost a job or a join by design: distributions, entropy, z-score outliers,
  a SQL query, a monotonic sequence, an aggregate-check).

The claim it tests: row checks and observable aggregates ride on the batch's one pass, so adding them adds
no Spark job and little CPU per check; classic checks add their job or join each. Per variant: the gate's
Spark jobs per batch (tagged in ``foreachBatch``), stream seconds and CPU seconds of the Python driver and the
JVM (from /proc), medians over the repetitions, and the ratios to ``plain`` measured in the same run.
Writes ``benchmarks/results/catalog-latest.json`` and a Markdown table beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.data import ensure_dataset
from benchmarks.distributed import cpu_seconds
from benchmarks.harness import JobCounter, build_spark, run_stream
from benchmarks.rules import rule_mix, to_check_dict
from benchmarks.variants import plain

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work" / "catalog"
RESULTS = ROOT / "benchmarks" / "results" / "catalog-latest.json"

#: Row checks of the catalog's value rules that fit the orders data (one pass each). Like the base mix they
#: fail a few percent of the rows: a rule that fails most rows measures quarantining, not checking (a
#: Luhn check on customer ids quarantined 89% of the rows and doubled the CPU through the row reasons).
ROWS: list[dict[str, Any]] = [
    {"check": "email-format-check", "columns": ["email"]},
    {"check": "regex-not-match-check", "column": "email", "pattern": "@example\\.invalid$"},
    {"check": "country-code-check", "columns": ["country"]},
    {"check": "currency-code-check", "columns": ["currency"]},
    {"check": "string-case-check", "columns": ["currency", "country"], "case": "upper"},
    {"check": "not-in-future-check", "columns": ["created_at"]},
    {"check": "older-than-check", "columns": ["event_time"], "days": 1},
    {"check": "decimal-places-check", "columns": ["amount"], "max-places": 2},
    {"check": "numeric-not-between-check", "columns": ["quantity"], "min-value": 1000, "max-value": 2000},
    {"check": "not-equal-to-check", "columns": ["quantity"], "value": 0},
    {"check": "null-or-empty-check", "columns": ["sku", "status"]},
    {"check": "castable-check", "columns": ["sku"], "data-type": "string"},
    {"check": "not-in-near-future-check", "columns": ["event_time"], "offset": "1 day"},
    {"check": "null-or-empty-check", "columns": ["email"], "severity": "warning"},
    {"check": "expression-check", "expression": "discount <= amount"},
]
#: Observable aggregates: mergeable states in the same pass.
OBSERVABLE: list[dict[str, Any]] = [
    {"check": "variance-check", "column": "amount", "ge": 0},
    {"check": "correlation-check", "columns": ["amount", "quantity"], "ge": -1},
    {"check": "quantile-check", "column": "amount", "quantile": 0.95, "le": 1e9},
    {"check": "compliance-ratio-check", "predicate": "status <> 'CANCELLED'", "min-ratio": 0.1},
    {"check": "distinct-count-check", "column": "customer_id", "ge": 1},
    {"check": "stddev-check", "column": "discount", "ge": 0},
]
#: Classic checks: a job or a join each.
CLASSIC: list[dict[str, Any]] = [
    {
        "check": "in-distribution-check",
        "column": "currency",
        "expected": {"EUR": 0.25, "USD": 0.25, "GBP": 0.25, "CHF": 0.25},
        "max-distance": 1.0,
    },
    {"check": "entropy-check", "column": "status", "ge": 0},
    {"check": "zscore-outlier-check", "column": "amount", "k": 6, "severity": "warning"},
    {
        "check": "sql-query-check",
        "query": "SELECT count(*) < 0 AS condition FROM {{ input_view }}",
    },
    {"check": "monotonic-check", "column": "order_id", "order-by": "created_at", "severity": "warning"},
    {"check": "aggregate-check", "function": "median", "column": "amount", "ge": 0},
]


def check_sets() -> dict[str, list[dict[str, Any]]]:
    """The growing sets, each a superset of the one before (check ids unique)."""
    from streaming_dq.config.registry import CheckConfigRegistry

    names = CheckConfigRegistry.names()
    base = [to_check_dict(r, names) for r in rule_mix(10)]

    def ids(prefix: str, configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**c, "check-id": f"{prefix}-{i}"} for i, c in enumerate(configs)]

    rows = base + ids("row", ROWS)
    observable = rows + ids("obs", OBSERVABLE)
    return {
        "base": base,
        "+rows": rows,
        "+observable": observable,
        "+classic": observable + ids("classic", CLASSIC),
    }


@dataclass
class Cell:
    variant: str
    checks: int
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    jobs_per_batch: list[float] = field(default_factory=list)

    def median(self, name: str) -> float:
        values = getattr(self, name)
        return statistics.median(values) if values else float("nan")


def gate_variant(configs: list[dict[str, Any]], target: Path) -> Any:
    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.sink import QualityGate

    the_gate = QualityGate(
        "bench-catalog",
        CheckSet.from_dicts(configs),
        pass_table=str(target / "pass"),
        quarantine_table=str(target / "quarantine"),
        results_table=None,
        writer="delta-rs",
    )

    def prepare(spark: Any, schema: Any) -> None:
        the_gate.ensure_tables(schema, spark)

    def batch(batch_df: Any, batch_id: int) -> None:
        the_gate(batch_df, batch_id)

    return batch, prepare


def measure(rows: int, batches: int, reps: int, out: Path | None) -> dict[str, Any]:
    spark = build_spark("streaming-dq-bench-catalog")
    source = ensure_dataset(ROOT / "benchmarks" / ".work" / "data", rows, batches)
    sets = check_sets()
    cells = {"plain": Cell("plain", 0)} | {f"gate/{k}": Cell(f"gate/{k}", len(v)) for k, v in sets.items()}
    pids = [os.getpid(), spark.sparkContext._gateway.proc.pid]
    counter = JobCounter(spark)
    warm = WORK / "warm"
    fn, prepare = gate_variant(sets["+classic"], warm)  # JIT, codegen caches, imports: not measured
    run_stream(spark, source, fn, checkpoint=warm / "chk", prepare=prepare)
    started = datetime.now(UTC)
    for rep in range(reps):
        for name, cell in cells.items():  # interleaved: a slow minute of the machine hits every variant
            target = WORK / f"{name.replace('/', '-')}-{rep}"
            shutil.rmtree(target, ignore_errors=True)
            if name == "plain":
                fn, prepare = plain([], target)
            else:
                fn, prepare = gate_variant(sets[name.split("/", 1)[1]], target)
            cpu0 = cpu_seconds(pids)
            run = run_stream(spark, source, fn, checkpoint=target / "chk", counter=counter, label=name,
                             prepare=prepare)  # fmt: skip
            cell.cpu.append(cpu_seconds(pids) - cpu0)
            cell.seconds.append(run.seconds)
            cell.jobs_per_batch.append(sum(b["jobs"] for b in run.per_batch) / max(run.batches, 1))
            shutil.rmtree(target, ignore_errors=True)
    spark.stop()
    plain_cell = cells["plain"]
    report = {
        "started": started.isoformat(),
        "rows_per_batch": rows,
        "batches": batches,
        "reps": reps,
        "cells": [
            asdict(c)
            | {
                "median_seconds": c.median("seconds"),
                "median_cpu": c.median("cpu"),
                "median_jobs_per_batch": c.median("jobs_per_batch"),
                "seconds_vs_plain": c.median("seconds") / plain_cell.median("seconds"),
                "cpu_vs_plain": c.median("cpu") / plain_cell.median("cpu"),
            }
            for c in cells.values()
        ],
    }
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2), encoding="utf-8")
        out.with_suffix(".md").write_text(markdown(report), encoding="utf-8")
    return report


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"Catalog growth, {report['rows_per_batch']:,} rows x {report['batches']} batches, "
        f"{report['reps']} interleaved repetitions, medians ({report['started']}).",
        "",
        "| variant | checks | jobs / batch | stream s | CPU s (JVM + Python) | s vs plain | CPU vs plain |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for c in report["cells"]:
        lines.append(
            f"| {c['variant']} | {c['checks']} | {c['median_jobs_per_batch']:.1f} | {c['median_seconds']:.2f} | "
            f"{c['median_cpu']:.2f} | {c['seconds_vs_plain']:.2f} | {c['cpu_vs_plain']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="100k rows, 3 batches, 2 repetitions")
    parser.add_argument("--rows", type=int)
    parser.add_argument("--batches", type=int)
    parser.add_argument("--reps", type=int)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows = args.rows or 100_000
    batches = args.batches or 3
    reps = args.reps or (2 if args.quick else 3)
    t0 = time.monotonic()
    report = measure(rows, batches, reps, args.out)
    print(markdown(report), end="")
    print(f"({time.monotonic() - t0:.0f} s; {args.out})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
