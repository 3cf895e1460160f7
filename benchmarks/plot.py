"""The report's plot, drawn with matplotlib in its own venv (``benchmarks/.venvs/plot``).

matplotlib is not a project dependency: when the running interpreter lacks it, the plot is drawn by a
subprocess in ``benchmarks/.venvs/plot`` (created on first use with ``python3 -m venv`` + ``pip install
matplotlib``). When neither works, no image is written and the report says so.

Run directly: ``python benchmarks/plot.py RESULTS.json OUT.png``.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

VENV = Path(__file__).resolve().parent / ".venvs" / "plot"


def make_plot(results_json: Path, image: Path, log: Any = print) -> str | None:
    """Draw ``image`` from ``results_json``; returns a note for the report, or None when no plot was made."""
    image.parent.mkdir(parents=True, exist_ok=True)
    if importlib.util.find_spec("matplotlib") is not None:
        draw(json.loads(results_json.read_text()), image)
        return "Drawn with matplotlib."
    python = VENV / "bin" / "python"
    if not python.exists():
        log(f"creating {VENV} for matplotlib (not a project dependency)")
        made = subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=False).returncode == 0
        made = (
            made
            and subprocess.run(
                [str(python), "-m", "pip", "install", "-q", "matplotlib"], check=False, timeout=600
            ).returncode
            == 0
        )
        if not made:
            log("matplotlib could not be installed: no plot")
            return None
    # -P: the benchmarks folder stays off sys.path, so none of its modules can shadow one of the standard library
    done = subprocess.run([str(python), "-P", __file__, str(results_json), str(image)], check=False)
    if done.returncode != 0:
        log("plot subprocess failed: no plot")
        return None
    return "Drawn with matplotlib from benchmarks/.venvs/plot (not a project dependency)."


def draw(results: dict[str, Any], image: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = results["cells"]
    grid_rows = results["meta"]["grid"]["rows"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    largest = max(grid_rows)
    for variant, style in (("plain", "k--"), ("floor", "b-o"), ("gate", "r-s")):
        pts = sorted(
            (c["checks"], c["batch_fn_median"])
            for c in cells
            if c["rows"] == largest and c["variant"] == variant
        )
        if variant == "plain" and pts:
            checks = sorted({c["checks"] for c in cells if c["rows"] == largest and c["variant"] == "gate"})
            pts = [(n, pts[0][1]) for n in checks]
        if pts:
            left.plot([p[0] for p in pts], [p[1] for p in pts], style, label=variant)
    left.set_xlabel("checks")
    left.set_ylabel("seconds per micro-batch (foreachBatch function)")
    left.set_title(f"{largest:,} rows per batch")
    left.set_ylim(bottom=0)
    left.legend()
    by_rows: dict[int, list[tuple[int, float]]] = {}
    for o in results["summary"]["overhead_stream"]:
        if o["gate_over_floor"] is not None:
            by_rows.setdefault(o["rows"], []).append((o["checks"], o["gate_over_floor"]))
    for rows, pts in sorted(by_rows.items()):
        pts.sort()
        right.plot([p[0] for p in pts], [p[1] for p in pts], "-o", label=f"{rows:,} rows/batch")
    right.axhline(1.25, color="grey", linestyle=":", label="target 1.25")
    right.set_xlabel("checks")
    right.set_ylabel("gate / floor (whole stream)")
    right.set_title("gate overhead over the hand-written floor")
    right.set_ylim(bottom=0.8)
    right.legend()
    fig.suptitle(f"streaming_dq benchmarks, {results['meta']['date']} ({results['meta']['mode']})")
    fig.tight_layout()
    fig.savefig(image, dpi=110)


if __name__ == "__main__":
    draw(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2]))
