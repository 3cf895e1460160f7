"""``streaming-dq metrics``: the accumulated metrics of a gate, read from its metrics table (no Spark)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from streaming_dq.exceptions import ConfigError


def load_lines(config: Path, *, window: str | None, check: str | None) -> tuple[str, list[dict[str, Any]]]:
    """The gate's name and the lines to print (see :func:`streaming_dq.metrics.store.metrics_table`).

    Raises:
        ConfigError: the config is invalid, has no ``targets.metrics``, or the table does not exist yet.
    """
    from deltalake import DeltaTable

    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.metrics.store import metrics_table

    loaded = load_gate_config(config)
    path = loaded.targets.metrics
    if not path:
        raise ConfigError("no metrics table configured", source=str(config), field_path="targets.metrics")
    if not DeltaTable.is_deltatable(path):
        raise ConfigError(
            f"the metrics table {path} does not exist yet: run the gate first", source=str(config),
            field_path="targets.metrics",
        )  # fmt: skip
    checks = list(loaded.check_set())
    lines = metrics_table(path, gate=loaded.gate.name, window=window, check=check, checks=checks)
    return loaded.gate.name, lines


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M %Z")
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value)) or "-"
    return str(value)


def print_lines(gate: str, lines: list[dict[str, Any]], *, as_json: bool, console: Console) -> None:
    """A table for people, or a JSON document for machines."""
    if as_json:
        console.print_json(json.dumps({"gate": gate, "metrics": lines}, default=str))
        return
    table = Table(title=f"gate {gate!r}: accumulated metrics")
    columns = ("check", "window", "window_start", "raw", "multiplier", "adjusted", "status", "profiles")
    for name in columns:
        table.add_column(name.replace("_", " "), justify="right" if name in ("raw", "adjusted") else "left")
    for line in lines:
        table.add_row(*[_cell(line.get(name)) for name in columns])
    console.print(table)
    if not lines:
        console.print("no metrics recorded yet")
