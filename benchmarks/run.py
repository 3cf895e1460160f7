"""``python -m benchmarks.run [--quick] [--peers] [--out docs/performance.md]``.

Measures, in ONE SparkSession (local[2], 2 shuffle partitions, UI off, UTC), a plain Delta sink, the
hand-written floor and the QualityGate as ``availableNow`` streams over the same Parquet batches, interleaved,
median of several repetitions; then (full run, or ``--quick --peers``) other tools on one batch, each in its
own virtual environment. Writes ``benchmarks/results/latest.json``, ``docs/performance.md`` and a plot.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import analysis
from benchmarks.grid import GridConfig, measure_grid

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work"
RESULTS = ROOT / "benchmarks" / "results" / "latest.json"
DOC = ROOT / "docs" / "performance.md"


@dataclass(frozen=True)
class RunConfig:
    """One benchmark run: the streaming grid, the peers, where to write."""

    grid: GridConfig
    mode: str = "full"
    peers: bool = False
    peer_rows: int = 1_000_000
    peer_checks: int = 20
    peer_rounds: int = 2
    peer_reps: int = 2
    peer_tools: Sequence[str] = ()
    work: Path = WORK
    results: Path | None = RESULTS
    doc: Path | None = DOC
    plot: bool = True
    command: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


FULL = GridConfig(
    rows=[10_000, 100_000, 1_000_000],
    checks=[1, 5, 10, 20, 50],
    reps=3,
    batches={10_000: 5, 100_000: 4, 1_000_000: 3},
)
QUICK = GridConfig(rows=[100_000], checks=[5, 20, 50], reps=3, batches={100_000: 3}, fixed_batches=6)
TINY = GridConfig(rows=[1_000], checks=[1, 2], reps=1, batches={1_000: 2}, fixed_rows=0, warmup=False)


def machine_facts(spark: Any) -> dict[str, Any]:
    """Cores, memory, OS and the versions that matter, for the report."""
    import deltalake
    import pyarrow
    import pyspark

    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False).stderr
    mem_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    return {
        "cores": os.cpu_count(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "deltalake": deltalake.__version__,
        "pyarrow": pyarrow.__version__,
        "java": java.splitlines()[0] if java else "unknown",
        "spark_master": spark.sparkContext.master,
        "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        "load_average_at_start": list(os.getloadavg()),
    }


def summarize(cells: list[dict[str, Any]], grid: GridConfig, peers: dict[str, Any] | None) -> dict[str, Any]:
    """Everything the report shows, derived from the raw cells."""
    grid_rows = list(grid.rows)
    grid_cells = [c for c in cells if c["rows"] in set(grid_rows)]
    counts = sorted(grid.checks)
    few = 5 if 5 in counts else counts[0]
    many = 50 if 50 in counts else counts[-1]
    _, h_checks = analysis.headline_cell(grid_cells)
    fixed = [
        c for c in cells if grid.fixed_rows and c["rows"] == grid.fixed_rows and c["rows"] not in grid_rows
    ]
    return {
        "overhead_stream": analysis.overhead(grid_cells, "stream_median"),
        "overhead_batch_fn": analysis.overhead(grid_cells, "batch_fn_median"),
        "check_scaling": analysis.check_scaling(grid_cells, few, many),
        "jobs": analysis.jobs(cells),
        "row_scaling": analysis.row_scaling(grid_cells, h_checks),
        "fixed_cost": fixed,
        "targets": analysis.targets(cells, grid_rows=grid_rows, few=few, many=many, peers=peers),
        "few": few,
        "many": many,
        "headline_checks": h_checks,
    }


def run(config: RunConfig, spark: Any | None = None, log: Any = print) -> dict[str, Any]:
    """Measure ``config``; write the JSON/markdown/plot it names; return the results dict."""
    from benchmarks.harness import build_spark
    from benchmarks.variants import gate_impl

    own_session = spark is None
    spark = spark or build_spark()
    started = time.perf_counter()
    try:
        facts = machine_facts(spark)
        log(
            f"gate implementation: {gate_impl()}; machine: {facts['cores']} cores, load {facts['load_average_at_start']}"
        )
        cells = [c.as_dict() for c in measure_grid(spark, config.work, config.grid, log=log)]
    finally:
        if own_session:
            spark.stop()
    peers = None
    if config.peers:
        from benchmarks.peers import run_peers

        peers = run_peers(config, log=log)
    results = {
        "meta": {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": config.command,
            "mode": config.mode,
            "gate_impl": gate_impl(),
            "machine": facts,
            "grid": asdict(config.grid),
            "rule_mix": _mix_description(max(config.grid.checks)),
            "seconds_total": None,
        },
        "cells": cells,
        "summary": summarize(cells, config.grid, peers),
        "peers": peers,
    }
    results["meta"]["seconds_total"] = round(time.perf_counter() - started, 1)
    _write(results, config, log)
    return results


def _mix_description(n: int) -> list[dict[str, Any]]:
    from benchmarks.rules import rule_mix, to_check_dict

    try:
        from streaming_dq.config.registry import CheckConfigRegistry

        names: list[str] | None = CheckConfigRegistry.names()
    except ImportError:
        names = None
    return [
        {"rule": r.rule_id, "kind": r.kind, "row": r.is_row, "check": to_check_dict(r, names)["check"]}
        for r in rule_mix(n)
    ]


def _write(results: dict[str, Any], config: RunConfig, log: Any, source: Path | None = None) -> None:
    if config.results is not None:
        config.results.parent.mkdir(parents=True, exist_ok=True)
        config.results.write_text(json.dumps(results, indent=1, default=str) + "\n")
        log(f"wrote {config.results}")
    if config.doc is not None:
        from benchmarks.report import render

        image = config.doc.with_suffix(".png")
        plotted = None
        if config.plot:
            from benchmarks.plot import make_plot

            plotted = make_plot(source or config.results or config.work / "latest.json", image, log=log)
        config.doc.parent.mkdir(parents=True, exist_ok=True)
        config.doc.write_text(render(results, image_path=image.name if plotted else None, plot_note=plotted))
        log(f"wrote {config.doc}")


def parse_args(argv: Sequence[str] | None = None) -> RunConfig:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="reduced grid (100k rows x 5/20/50 checks, 3 reps)")
    p.add_argument(
        "--peers",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the peer tools, each in its own venv (default: on in the full run, off with --quick)",
    )
    p.add_argument("--peer-tools", default="", help="comma-separated subset of peer tools")
    p.add_argument("--peer-rows", type=int, default=None, help="rows of the peers' batch")
    p.add_argument("--reps", type=int, default=None, help="override repetitions per cell")
    p.add_argument("--rows", default="", help="override rows per batch, comma-separated (e.g. 1000000)")
    p.add_argument("--checks", default="", help="override numbers of checks, comma-separated (e.g. 5,20,50)")
    p.add_argument("--out", type=Path, default=DOC, help="markdown report (default docs/performance.md)")
    p.add_argument(
        "--json", type=Path, default=RESULTS, help="raw results (default benchmarks/results/latest.json)"
    )
    p.add_argument("--no-plot", action="store_true", help="skip the plot image")
    p.add_argument(
        "--render-only",
        action="store_true",
        help="re-render --out (and the plot) from --json without measuring",
    )
    args = p.parse_args(argv)
    grid = QUICK if args.quick else FULL
    overrides: dict[str, Any] = {}
    if args.reps:
        overrides["reps"] = args.reps
    if args.rows:
        overrides["rows"] = [int(r) for r in args.rows.split(",")]
    if args.checks:
        overrides["checks"] = [int(n) for n in args.checks.split(",")]
    if overrides:
        grid = GridConfig(**{**asdict(grid), **overrides})
    argv_list = list(sys.argv[1:] if argv is None else argv)
    extra = {"render_only": True} if args.render_only else {}
    return RunConfig(
        grid=grid,
        mode="quick" if args.quick else "full",
        peers=(not args.quick) if args.peers is None else args.peers,
        peer_rows=args.peer_rows or (100_000 if args.quick else 1_000_000),
        peer_tools=tuple(t for t in args.peer_tools.split(",") if t),
        results=args.json,
        doc=args.out,
        plot=not args.no_plot,
        command=shlex.join(["python", "-m", "benchmarks.run", *argv_list]),
        extra=extra,
    )


def main(argv: Sequence[str] | None = None) -> int:
    config = parse_args(argv)
    log = lambda msg: print(msg, flush=True)  # noqa: E731
    if config.extra.get("render_only"):
        if config.results is None or not config.results.exists():
            raise SystemExit("--render-only needs an existing --json results file")
        results = json.loads(config.results.read_text())
        _write(results, replace(config, results=None), log, source=config.results)
        return 0
    run(config, log=log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
