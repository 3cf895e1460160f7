"""Ratios and target verdicts from the measured cells (pure functions over plain dicts)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

TARGET_GATE_OVER_FLOOR = 1.25
TARGET_MANY_OVER_FEW = 1.2  # #29: both routers
TARGET_JOBS_PER_BATCH = 3


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b <= 0:
        return None
    return a / b


def _index(cells: Sequence[dict[str, Any]]) -> dict[tuple[int, int, str], dict[str, Any]]:
    return {(c["rows"], c["checks"], c["variant"]): c for c in cells}


def overhead(cells: Sequence[dict[str, Any]], metric: str = "stream_median") -> list[dict[str, Any]]:
    """gate/floor, gate/plain and floor/plain per (rows, checks), from medians of ``metric``."""
    idx = _index(cells)
    out = []
    for (rows, checks, variant), gate in sorted(idx.items()):
        if variant != "gate":
            continue
        floor = idx.get((rows, checks, "floor"))
        plain = idx.get((rows, 0, "plain"))
        g, f = gate[metric], floor[metric] if floor else None
        p = plain[metric] if plain else None
        out.append(
            {
                "rows": rows,
                "checks": checks,
                "gate_over_floor": _ratio(g, f),
                "gate_over_plain": _ratio(g, p),
                "floor_over_plain": _ratio(f, p),
                "gate": g,
                "floor": f,
                "plain": p,
            }
        )
    return out


def check_scaling(cells: Sequence[dict[str, Any]], few: int, many: int) -> list[dict[str, Any]]:
    """Time at ``many`` checks / time at ``few`` checks, per batch size, for gate and floor (none when the grid
    ran one number of checks: a cell over itself measures nothing)."""
    if few == many:
        return []
    idx = _index(cells)
    out = []
    for rows in sorted({c["rows"] for c in cells}):
        row: dict[str, Any] = {"rows": rows, "few": few, "many": many}
        for variant in ("gate", "floor"):
            a, b = idx.get((rows, many, variant)), idx.get((rows, few, variant))
            if a is None or b is None:
                break
            row[f"{variant}_stream"] = _ratio(a["stream_median"], b["stream_median"])
            row[f"{variant}_batch_fn"] = _ratio(a["batch_fn_median"], b["batch_fn_median"])
        else:
            out.append(row)
    return out


def jobs(cells: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Spark jobs and SQL executions per micro-batch, per variant and number of checks (all sizes)."""
    groups: dict[tuple[str, int], dict[str, list[int]]] = {}
    for c in cells:
        g = groups.setdefault((c["variant"], c["checks"]), {"jobs": [], "sql": []})
        g["jobs"] += c["jobs_per_batch"]
        g["sql"] += c["sql_executions_per_batch"]
    out = []
    for (variant, checks), g in sorted(groups.items()):
        if not g["jobs"]:
            continue
        out.append(
            {
                "variant": variant,
                "checks": checks,
                "batches": len(g["jobs"]),
                "jobs_min": min(g["jobs"]),
                "jobs_max": max(g["jobs"]),
                "jobs_median": statistics.median(g["jobs"]),
                "sql_max": max(g["sql"]) if g["sql"] else None,
                "sql_median": statistics.median(g["sql"]) if g["sql"] else None,
            }
        )
    return out


def row_scaling(cells: Sequence[dict[str, Any]], checks: int) -> list[dict[str, Any]]:
    """Per-batch function seconds vs rows per batch, at ``checks`` checks."""
    idx = _index(cells)
    out = []
    for rows in sorted({c["rows"] for c in cells}):
        row: dict[str, Any] = {"rows": rows}
        for variant, n in (("plain", 0), ("floor", checks), ("gate", checks)):
            cell = idx.get((rows, n, variant))
            row[variant] = cell["batch_fn_median"] if cell else None
        if row["gate"] is not None:
            row["gate_us_per_row"] = row["gate"] / rows * 1e6
            out.append(row)
    return out


def headline_cell(
    cells: Sequence[dict[str, Any]], rows: int = 1_000_000, checks: int = 20
) -> tuple[int, int]:
    """The (rows, checks) closest to the issue's headline (largest rows measured, checks nearest 20)."""
    measured = [(c["rows"], c["checks"]) for c in cells if c["variant"] == "gate"]
    best_rows = rows if any(r == rows for r, _ in measured) else max(r for r, _ in measured)
    counts = sorted({n for r, n in measured if r == best_rows})
    best_checks = min(counts, key=lambda n: (abs(n - checks), -n))
    return best_rows, best_checks


def targets(
    cells: Sequence[dict[str, Any]],
    *,
    grid_rows: Sequence[int],
    few: int,
    many: int,
    peers: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The issue's targets, each with the measured value and whether it is met."""
    grid_cells = [c for c in cells if c["rows"] in set(grid_rows)]
    out = []
    h_rows, h_checks = headline_cell(grid_cells)
    head = next(o for o in overhead(grid_cells) if o["rows"] == h_rows and o["checks"] == h_checks)
    value = head["gate_over_floor"]
    out.append(
        {
            "target": f"gate / floor at {h_checks} checks, {h_rows:,}-row batches (whole stream)",
            "limit": TARGET_GATE_OVER_FLOOR,
            "value": value,
            "met": value is not None and value <= TARGET_GATE_OVER_FLOOR,
        }
    )
    scaling = [s for s in check_scaling(grid_cells, few, many) if s["rows"] == h_rows]
    if scaling:
        value = scaling[0]["gate_stream"]
        out.append(
            {
                "target": f"gate time at {many} checks / at {few} checks ({h_rows:,}-row batches)",
                "limit": TARGET_MANY_OVER_FEW,
                "value": value,
                "met": value is not None and value <= TARGET_MANY_OVER_FEW,
            }
        )
    gate_jobs = [j for j in jobs(cells) if j["variant"] == "gate"]
    if gate_jobs:
        worst = max(j["jobs_max"] for j in gate_jobs)
        out.append(
            {
                "target": "Spark jobs per micro-batch (gate, any number of checks)",
                "limit": TARGET_JOBS_PER_BATCH,
                "value": worst,
                "met": worst <= TARGET_JOBS_PER_BATCH,
            }
        )
    if peers and peers.get("comparisons"):
        ran = [c for c in peers["comparisons"] if c.get("ratio_to_ours") is not None]
        if ran:
            slowest_ratio = min(c["ratio_to_ours"] for c in ran)
            out.append(
                {
                    "target": "faster than every peer that ran (peer time / ours, smallest)",
                    "limit": 1.0,
                    "value": slowest_ratio,
                    "met": slowest_ratio > 1.0,
                    "lower_is_better": False,
                }
            )
    return out


def finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)
