"""``streaming-dq metrics``: the accumulated metrics of a gate, read from its metrics table (no Spark unless
catalog table names must be looked up).

Window starts are shown in the gate's time zone (a day window as the local day it covers, ``Mon
2025-12-22``), never cut: a cell that does not fit wraps, and output to a pipe is as wide as it needs.
A window size or check id the config does not have is an error with the close matches, not an empty table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from datetime import time as datetime_time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from rich.console import Console
from rich.table import Table

from streaming_dq.cli.sessions import Progress
from streaming_dq.core.suggest import did_you_mean
from streaming_dq.exceptions import ConfigError


@dataclass(frozen=True)
class MetricsView:
    """What ``streaming-dq metrics`` prints: the gate, its time zone and the lines."""

    gate: str
    timezone: str
    lines: list[dict[str, Any]]


def _close(value: str, choices: list[str]) -> str:
    return did_you_mean(value, choices) or f" (there are: {', '.join(choices) or 'none'})"


def _window_of(config: Path, window: str, windows: dict[str, Any]) -> str:
    """The config's spelling of ``window`` (``24 hours`` finds ``1 day``)."""
    from streaming_dq.core.scope import parse_window

    try:
        size = parse_window(window)
    except ConfigError as exc:
        raise ConfigError(exc.reason, source=str(config), field_path="--window") from None
    for spelled, parsed in windows.items():
        if parsed == size:
            return spelled
    raise ConfigError(
        f"no check of this gate is judged over {window!r} windows" + _close(window, sorted(windows)),
        source=str(config),
        field_path="--window",
    )


def load_lines(
    config: Path, *, window: str | None, check: str | None, progress: Progress | None = None
) -> MetricsView:
    """The lines to print (see :func:`streaming_dq.metrics.store.metrics_table`); no Spark unless the config
    names catalog tables.

    Raises:
        ConfigError: the config is invalid, has no ``targets.metrics`` or the table does not exist yet, or
            ``window``/``check`` is not one of the config's.
    """
    from deltalake import DeltaTable

    from streaming_dq.cli.sessions import opened_gate
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.core.scope import parse_window
    from streaming_dq.metrics.store import metrics_table
    from streaming_dq.tables.storage import delta_rs_options

    loaded = load_gate_config(config)
    checks = list(loaded.check_set())
    if check is not None and check not in {c.check_id for c in checks}:
        reason = f"the gate has no check {check!r}" + _close(check, [c.check_id for c in checks])
        raise ConfigError(reason, source=str(config), field_path="--check")
    scopes = [scope.window for c in checks if (scope := getattr(c, "scope", None)) is not None]
    windows = {window_size: parse_window(window_size) for window_size in scopes}
    if window is not None:
        window = _window_of(config, window, windows)
    if not loaded.targets.metrics:
        raise ConfigError("no metrics table configured", source=str(config), field_path="targets.metrics")
    with opened_gate(
        loaded, "metrics", progress=progress
    ) as opened:  # catalog names answered as `run` answers them (#42)
        loaded = opened.config
    path = loaded.table("metrics").uri
    table = loaded.table("metrics")
    if not DeltaTable.is_deltatable(path, storage_options=delta_rs_options(table.storage_options)):
        raise ConfigError(
            f"the metrics table {path} does not exist yet: run the gate first", source=str(config),
            field_path="targets.metrics",
        )  # fmt: skip
    lines = metrics_table(
        path,
        gate=loaded.gate.name,
        window=window,
        check=check,
        checks=checks,
        storage_options=table.storage_options,
    )
    return MetricsView(loaded.gate.name, loaded.gate.timezone, lines)


def _number(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return str(value)


def _span(line: dict[str, Any], tz: ZoneInfo) -> str:
    start, end = line.get("window_start"), line.get("window_end")
    if not isinstance(start, datetime):
        return "-"
    start = start.astimezone(tz)
    if isinstance(end, datetime):
        end = end.astimezone(tz)
        if start.time() == end.time() == datetime_time(0) and (end - start).days == 1:
            return f"{start:%a %Y-%m-%d}"
        if start.date() == end.date():
            return f"{start:%a %Y-%m-%d %H:%M}-{end:%H:%M}"
        return f"{start:%Y-%m-%d %H:%M} .. {end:%Y-%m-%d %H:%M}"
    return f"{start:%Y-%m-%d %H:%M}"


def _value(line: dict[str, Any]) -> str:
    raw, adjusted, multiplier = line.get("raw"), line.get("adjusted"), line.get("multiplier")
    if adjusted is not None and multiplier not in (None, 1, 1.0):
        return f"{_number(adjusted)} ({_number(raw)} x{multiplier:g})"
    return _number(adjusted if adjusted is not None else raw)


def _expected(line: dict[str, Any]) -> str:
    """An anomaly verdict's expected value and band (``100.5 (85.43 .. 115.6)``), or why it was skipped."""
    if line.get("reason"):
        return str(line["reason"])
    if line.get("expected") is None:
        return "-"
    low, high = line.get("band_low"), line.get("band_high")
    band = f"{'-inf' if low is None else _number(low)} .. {'inf' if high is None else _number(high)}"
    return f"{_number(line['expected'])} ({band})"


def print_lines(view: MetricsView, *, as_json: bool, console: Console) -> None:
    """A table for people, or a JSON document for machines (times in UTC, ISO 8601)."""
    if as_json:
        console.print_json(json.dumps({"gate": view.gate, "metrics": view.lines}, default=str))
        return
    tz = ZoneInfo(view.timezone)
    windowed = any(isinstance(line.get("window_start"), datetime) for line in view.lines)
    table = Table(
        title=f"gate {view.gate!r}: accumulated metrics"
        + (f" (times in {view.timezone})" if windowed else "")
    )
    anomalies = any(line.get("expected") is not None or line.get("reason") for line in view.lines)
    columns = [
        ("check", "left"),
        ("window", "left"),
        ("span", "left"),
        ("value", "right"),
        ("status", "left"),
    ]
    columns += [("expected (band)", "right"), ("score", "right")] if anomalies else []
    for name, justify in [*columns, ("profiles", "left")]:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for line in view.lines:
        cells = [str(line["check"]), str(line.get("window") or "-"), _span(line, tz), _value(line)]
        cells.append(str(line.get("status") or "-"))
        if anomalies:
            cells += [_expected(line), _number(line.get("score"))]
        table.add_row(*cells, ", ".join(line.get("profiles") or ()) or "-")
    console.print(table)
    if not view.lines:
        console.print("no metrics recorded yet")
