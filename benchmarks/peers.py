"""Other tools on the same batch with equivalent checks, each in its own virtual environment.

Every tool (ours included) runs as a subprocess of ``benchmarks/peer_driver.py`` with its own SparkSession
configured like ours; the subprocesses run one after another in rounds (A B C ... A B C ...), each doing one
warm-up and ``peer_reps`` timed runs. A tool whose venv cannot be built, or that fails, is recorded with the
reason, never dropped silently.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.data import ensure_dataset

VENVS = Path(__file__).resolve().parent / ".venvs"
DRIVER = Path(__file__).resolve().parent / "peer_driver.py"


@dataclass(frozen=True)
class Peer:
    tool: str
    work: str  # "split+write" or "validate"
    venv: str | None  # None: the project's own environment
    packages: tuple[str, ...] = ()
    note: str = ""


PEERS: tuple[Peer, ...] = (
    Peer("streaming_dq-gate", "split+write", None, note="QualityGate called on the batch (batch id 0)"),
    Peer(
        "streaming_dq-engine",
        "split+write",
        None,
        note="BatchDQEngine.run_batch, pass_df/fail_df written, summary (the SparkDQ route, our engine)",
    ),
    Peer(
        "streaming_dq-validate",
        "validate",
        None,
        note="BatchDQEngine.run_batch + summary + aggregate results",
    ),
    Peer("naive", "split+write", None, note="one Spark action per rule, then two filtered writes"),
    Peer(
        "sparkdq",
        "split+write",
        "sparkdq",
        ("sparkdq[spark]", "pandas<3", "pyarrow", "deltalake"),
        "run_batch, pass_df/fail_df written, summary(); its own pyspark (<4)",
    ),
    Peer(
        "dqx",
        "split+write",
        "dqx",
        ("databricks-labs-dqx", "pyspark==4.2.0", "pandas<3", "pyarrow", "deltalake"),
        "apply_checks_by_metadata_and_split, both written; DQEngine needs a WorkspaceClient and calls the "
        "workspace when built, so it gets a mocked client (no Databricks workspace here)",
    ),
    Peer(
        "cuallee",
        "validate",
        "cuallee",
        ("cuallee", "pyspark==4.2.0", "pandas<3", "pyarrow", "deltalake"),
        "Check.validate(df).collect(); no row split; no row-count rule (its results carry the row count)",
    ),
    Peer(
        "gx",
        "validate",
        "gx",
        ("great-expectations[spark]", "pandas<3", "deltalake"),
        "ephemeral context, Spark dataframe asset, suite.validate; no row split",
    ),
)
REFERENCE = {"split+write": "streaming_dq-gate", "validate": "streaming_dq-validate"}


def python_for(peer: Peer, log: Any = print) -> tuple[Path | None, str]:
    """The interpreter for ``peer`` (building its venv on first use), or None and why."""
    if peer.venv is None:
        return Path(sys.executable), ""
    root = VENVS / peer.venv
    python = root / "bin" / "python"
    built = root / ".built"  # written once pip has installed everything: an interrupted build is redone
    if python.exists() and built.exists() and built.read_text() == "\n".join(peer.packages):
        return python, ""
    if root.exists():
        shutil.rmtree(root)
    log(f"  building {root} ({', '.join(peer.packages)})")
    made = subprocess.run(["python3", "-m", "venv", str(root)], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        return None, f"venv: {made.stderr.strip()[-300:]}"
    try:
        pip = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *peer.packages],
            capture_output=True,
            text=True,
            check=False,
            timeout=1800,
        )
    except subprocess.TimeoutExpired:
        return None, "pip install timed out"
    if pip.returncode != 0:
        return None, f"pip install failed: {pip.stderr.strip()[-500:]}"
    built.write_text("\n".join(peer.packages))
    return python, ""


def _run_driver(python: Path, peer: Peer, data: Path, checks: int, reps: int, out: Path) -> dict[str, Any]:
    cmd = [str(python), str(DRIVER), "--tool", peer.tool, "--data", str(data), "--checks", str(checks)]
    cmd += ["--reps", str(reps), "--out", str(out)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=1800)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": "timed out after 1800 s"}
    for line in done.stdout.splitlines():
        if line.startswith("PEER-RESULT "):
            return dict(json.loads(line[len("PEER-RESULT ") :]))
    return {"ok": False, "error": f"exit {done.returncode}: {done.stderr.strip()[-500:]}"}


def run_peers(config: Any, log: Any = print) -> dict[str, Any]:
    """Run every peer (or ``config.peer_tools``) in rounds; return timings, statuses and ratios."""
    peers = [p for p in PEERS if not config.peer_tools or p.tool in config.peer_tools or p.venv is None]
    data = ensure_dataset(config.work / "peer-data", config.peer_rows, 1) / "batch-0000.parquet"
    log(f"peers: {config.peer_rows:,}-row batch, {config.peer_checks} checks, {config.peer_rounds} rounds")
    pythons = {p.tool: python_for(p, log) for p in peers}
    runs: dict[str, list[dict[str, Any]]] = {p.tool: [] for p in peers}
    for r in range(config.peer_rounds):
        shift = r % len(peers)
        for peer in peers[shift:] + peers[:shift]:
            python, _why = pythons[peer.tool]
            if python is None or (runs[peer.tool] and not runs[peer.tool][-1].get("ok")):
                continue
            result = _run_driver(
                python, peer, data, config.peer_checks, config.peer_reps, config.work / "peer-out" / peer.tool
            )
            runs[peer.tool].append(result)
            log(f"  round {r} {peer.tool:<22} {result.get('seconds') or result.get('error', '')[:200]}")
    return _compare(peers, pythons, runs, config)


def _compare(
    peers: list[Peer],
    pythons: dict[str, tuple[Path | None, str]],
    runs: dict[str, list[dict[str, Any]]],
    config: Any,
) -> dict[str, Any]:
    medians: dict[str, float] = {}
    rows = []
    for peer in peers:
        python, why = pythons[peer.tool]
        results = runs[peer.tool]
        seconds = [s for res in results if res.get("ok") for s in res["seconds"]]
        failed = next((res for res in results if not res.get("ok")), None)
        status = "ran"
        if python is None:
            status = f"could not install: {why}"
        elif failed is not None:
            status = f"failed: {failed.get('error', '')[:300]}"
        elif not seconds:
            status = "not run"
        info = next((res.get("info") for res in reversed(results) if res.get("ok")), {}) or {}
        versions = next((res.get("versions") for res in results if res.get("versions")), {})
        if seconds and status == "ran":
            medians[peer.tool] = statistics.median(seconds)
        lost = None
        if "pass_rows" in info and "fail_rows" in info:
            lost = config.peer_rows - info["pass_rows"] - info["fail_rows"]
        rows.append(
            {
                "tool": peer.tool,
                "work": peer.work,
                "venv": f"benchmarks/.venvs/{peer.venv}" if peer.venv else "project .venv",
                "note": peer.note,
                "versions": versions,
                "seconds": seconds,
                "median": medians.get(peer.tool),
                "status": status,
                "info": info,
                "rows_lost": lost,
            }
        )
    for row in rows:
        ref = REFERENCE[row["work"]]
        row["compared_with"] = ref
        ours = medians.get(ref)
        row["ratio_to_ours"] = row["median"] / ours if row["median"] is not None and ours else None
    comparisons = [r for r in rows if not r["tool"].startswith("streaming_dq")]
    return {
        "description": (
            f"One {config.peer_rows:,}-row batch (Parquet, read afresh every run), {config.peer_checks} checks "
            "of the same mix (SparkDQ-compatible: the mean check becomes a row-count-between check), every "
            f"tool in its own subprocess and SparkSession (local[2]), {config.peer_rounds} interleaved rounds "
            f"of one warm-up + {config.peer_reps} timed runs; median seconds. `split+write` tools are compared "
            "with the gate called on the batch, `validate` tools (no row split) with our engine's "
            "validation alone."
        ),
        "rows": config.peer_rows,
        "checks": config.peer_checks,
        "all": rows,
        "comparisons": comparisons,
    }
