"""``python -m benchmarks.fleet [--quick]``: N gates on one driver against N separate drivers.

Each gate is a small JSON job of its own (landing folder, checkpoint, pass/quarantine/results tables, four
checks, delta-rs, one landing file per micro-batch, available-now). Two ways to run N of them:

* ``one driver``: ``streaming-dq run g1.yaml ... gN.yaml`` (one Python process, one JVM, N queries in
  fair-scheduler pools);
* ``separate``: N ``streaming-dq run gI.yaml`` processes started together.

Per (way, N): the wall seconds from launch to the last exit (JVM starts included), rows per second over that,
the peak resident memory of every process of the run together (sampled from /proc every 0.1 s), CPU seconds
of the whole process tree (JVMs included, sampled likewise), and the median and 90th percentile of the gate's
own seconds per batch (the ``s`` column of the batch lines). The two ways run interleaved, each N ``--rounds`` times; medians are
reported. Writes ``benchmarks/results/fleet-latest.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work" / "fleet"
RESULTS = ROOT / "benchmarks" / "results" / "fleet-latest.json"
CLI = Path(sys.executable).parent / "streaming-dq"
WAYS = ("one driver", "separate")
BATCH_LINE = re.compile(r"batch +\d+ +in +([\d,]+) .* ([\d.]+) s")

CONFIG = """\
gate: {{name: {name}}}
source:
  format: json
  path: landing
  schema: "id BIGINT, customer STRING, amount DOUBLE, ts TIMESTAMP"
  max-files-per-trigger: 1
  trigger: available-now
checkpoint: state
targets: {{pass: tables/pass, quarantine: tables/quarantine, results: tables/results, writer: delta-rs}}
checks:
  - {{check: null-check, check-id: customer, columns: [customer]}}
  - {{check: numeric-min-check, check-id: amount, columns: [amount], min-value: 0}}
  - {{check: row-count-min-check, check-id: volume, min-count: 1}}
  - {{check: mean-check, check-id: basket, column: amount, ge: 0}}
spark:
  master: "local[2]"
  conf: {{spark.sql.shuffle.partitions: "2", spark.ui.enabled: "false"}}
"""


def make_gates(base: Path, n: int, *, batches: int, rows: int) -> list[Path]:
    """``n`` gate folders under ``base``, each with ``batches`` landing files of ``rows`` records."""
    shutil.rmtree(base, ignore_errors=True)
    configs = []
    for g in range(n):
        folder = base / f"g{g:02d}"
        (folder / "landing").mkdir(parents=True)
        for b in range(batches):
            lines = []
            for i in range(rows):
                k = b * rows + i
                customer = None if k % 53 == 0 else f"c{k % 97}"
                amount = -1.0 if k % 61 == 0 else float(k % 500)
                record = {"id": k, "customer": customer, "amount": amount, "ts": "2025-03-01T00:00:00Z"}
                lines.append(json.dumps(record))
            path = folder / "landing" / f"part-{b:04d}.json"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            os.utime(path, (1_700_000_000 + b, 1_700_000_000 + b))
        config = folder / "gate.yaml"
        config.write_text(CONFIG.format(name=f"g{g:02d}"), encoding="utf-8")
        configs.append(config)
    return configs


def _tree(root: int) -> list[int]:
    """``root`` and its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass  # the process ended between the listing and the read
    return 0


def _cpu_seconds(pid: int) -> float | None:
    """utime + stime of a live process from /proc (None: it ended). ``getrusage(RUSAGE_CHILDREN)`` would miss
    the JVMs: pyspark never waits for its gateway JVM, so its CPU time never reaches the parent's children."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_way(way: str, configs: list[Path], log_dir: Path) -> dict[str, Any]:
    """Run the gates one way; wall, peak RSS, CPU seconds, gate seconds per batch."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "COLUMNS": "200"}
    commands = (
        [[str(CLI), "run", *map(str, configs)]]
        if way == "one driver"
        else [[str(CLI), "run", str(c)] for c in configs]
    )
    logs = [log_dir / f"{way.replace(' ', '-')}-{i}.log" for i in range(len(commands))]
    start = time.monotonic()
    procs = []
    for command, log in zip(commands, logs, strict=True):
        with log.open("wb") as sink:
            procs.append(subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env))
    peak = 0
    # the last CPU seconds sampled per process of the run (up to 0.1 s of each is lost)
    cpu_seen: dict[int, float] = {}
    while any(p.poll() is None for p in procs):
        pids = [pid for p in procs for pid in _tree(p.pid)]
        peak = max(peak, sum(_rss_bytes(pid) for pid in pids))
        for pid in pids:
            seconds = _cpu_seconds(pid)
            if seconds is not None:
                cpu_seen[pid] = seconds
        time.sleep(0.1)
    wall = time.monotonic() - start
    failed = [(log, p.returncode) for p, log in zip(procs, logs, strict=True) if p.returncode != 0]
    if failed:
        raise RuntimeError(f"{way}: a run failed: {failed}: {failed[0][0].read_text()[-2000:]}")
    seconds, rows = [], 0
    for log in logs:
        for line in log.read_text(encoding="utf-8").splitlines():
            m = BATCH_LINE.search(line)
            if m:
                rows += int(m.group(1).replace(",", ""))
                seconds.append(float(m.group(2)))
    cpu = sum(cpu_seen.values())
    return {
        "wall": wall,
        "rows": rows,
        "rows_per_second": rows / wall,
        "peak_rss_mib": peak / 2**20,
        "cpu": cpu,
        "batch_median": statistics.median(seconds),
        "batch_p90": statistics.quantiles(seconds, n=10)[-1] if len(seconds) > 1 else seconds[0],
        "batches": len(seconds),
    }


def measure(ns: list[int], *, batches: int, rows: int, rounds: int) -> dict[str, Any]:
    seen: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for _ in range(rounds):
        for n in ns:
            for way in WAYS if n > 1 else WAYS[:1]:
                base = WORK / f"{way.replace(' ', '-')}-{n}"
                configs = make_gates(base, n, batches=batches, rows=rows)
                result = run_way(way, configs, base)
                seen.setdefault(str(n), {}).setdefault(way, []).append(result)
                print(
                    f"  N={n:<3} {way:<10} wall {result['wall']:6.1f} s  rss {result['peak_rss_mib']:7.0f} MiB"
                    f"  cpu {result['cpu']:6.1f} s  batch {result['batch_median']:.2f} s",
                    flush=True,
                )
    out: dict[str, Any] = {}
    for n, ways in seen.items():
        out[n] = {
            way: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for way, runs in ways.items()
        }
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="N = 1 and 4, 3 batches of 200 rows, 1 round")
    p.add_argument("--gates", default="1,4,16", help="the Ns, comma-separated")
    p.add_argument("--batches", type=int, default=5)
    p.add_argument("--rows", type=int, default=500)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)
    if args.quick:
        ns, batches, rows, rounds = [1, 4], 3, 200, 1
    else:
        ns, batches, rows, rounds = (
            [int(x) for x in args.gates.split(",")],
            args.batches,
            args.rows,
            args.rounds,
        )
    print(
        f"fleet: N gates x {batches} batches of {rows} rows, one driver against N drivers ({rounds} round(s))"
    )
    result = {
        "batches": batches,
        "rows": rows,
        "rounds": rounds,
        "cores": os.cpu_count(),
        "gates": measure(ns, batches=batches, rows=rows, rounds=rounds),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print("  medians:")
    for n, ways in result["gates"].items():
        one = ways["one driver"]
        line = (
            f"  N={n:<3} one driver: {one['wall']:.1f} s, {one['rows_per_second']:.0f} rows/s, "
            f"{one['peak_rss_mib']:.0f} MiB, batch {one['batch_median']:.2f} s"
        )
        if "separate" in ways:
            sep = ways["separate"]
            line += (
                f" | separate: {sep['wall']:.1f} s, {sep['rows_per_second']:.0f} rows/s, "
                f"{sep['peak_rss_mib']:.0f} MiB, batch {sep['batch_median']:.2f} s"
                f" | memory one/separate {one['peak_rss_mib'] / sep['peak_rss_mib']:.2f}"
                f", throughput one/separate {one['rows_per_second'] / sep['rows_per_second']:.2f}"
            )
        print(line)


if __name__ == "__main__":
    main()
