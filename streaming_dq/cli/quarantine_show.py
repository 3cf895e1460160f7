"""``streaming-dq quarantine show CONFIG``: a gate's quarantined rows with their reasons and release state.

The rows are read by :func:`streaming_dq.release.browse.browse` (delta-rs, no Spark unless catalog table
names must be looked up). In a terminal: one line per row (batch, checks failed, state, where a duplicate was
first seen, the raw text of a malformed record, and the row's own columns); ``--json``: the rows with every
column. ``--mask COLUMN`` shows ``***`` for a column's values (personal data, in output you share).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from streaming_dq.exceptions import ConfigError

if TYPE_CHECKING:
    from streaming_dq.cli.sessions import Progress
    from streaming_dq.release.browse import QuarantineView, State

__all__ = ["run_show"]


def run_show(
    config_path: Path,
    out: Console,
    *,
    checks: Sequence[str],
    batches: str | None,
    states: Sequence[str],
    limit: int,
    mask: Sequence[str],
    as_json: bool,
    progress: Progress,
) -> int:
    """Print the quarantined rows of the gate in ``config_path`` that match; the exit code (0).

    Raises:
        ConfigError: the config or an option is invalid (a check id, state or masked column it lacks).
    """
    from deltalake import DeltaTable

    from streaming_dq.cli.releasing import refuse_unknown_selection
    from streaming_dq.cli.sessions import opened_gate
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.release import parse_batch_range
    from streaming_dq.release.browse import STATES, browse, masked
    from streaming_dq.tables.storage import delta_rs_options

    config = load_gate_config(config_path)
    refuse_unknown_selection(config, list(checks), ())
    bounds = parse_batch_range(batches) if batches else (None, None)
    wrong = [s for s in states if s not in STATES]
    if wrong:
        raise ConfigError(
            f"{wrong[0]!r} is not a state: one of {', '.join(STATES)}",
            source=str(config_path),
            field_path="--state",
        )
    with opened_gate(config, "quarantine show", progress=progress) as opened:
        target = opened.config.table("quarantine")
    if not DeltaTable.is_deltatable(
        target.uri, storage_options=delta_rs_options(target.storage_options) or None
    ):
        raise ConfigError(
            f"the quarantine table {target.uri} does not exist yet (no batch has run)",
            source=str(config_path),
            field_path="targets.quarantine",
        )
    view = browse(
        target, checks=checks, batches=bounds, states=[s for s in STATES if s in states], limit=limit
    )
    unknown = [c for c in mask if c not in view.rows.column_names]
    if unknown:
        raise ConfigError(
            f"the quarantine table has no column {unknown[0]!r} to mask",
            source=str(config_path),
            field_path="--mask",
        )
    rows = masked(view.rows.to_pylist(), mask)
    if as_json:
        out.print_json(
            json.dumps(
                {"gate": config.gate.name, "table": target.uri, "matched": view.matched, "shown": len(rows),
                 "rows": [{**r, "state": s} for r, s in zip(rows, _states(view), strict=True)]},
                default=_json_value,
            )
        )  # fmt: skip
        return 0
    _print(view, rows, out, config.gate.name)
    return 0


def _states(view: QuarantineView) -> list[State]:
    from streaming_dq.release.browse import row_states

    return row_states(view.rows)


def _json_value(value: object) -> str:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def _print(view: QuarantineView, rows: list[dict[str, Any]], out: Console, gate: str) -> None:
    from streaming_dq.checks.stream_keys import FIRST_SEEN_COLUMN
    from streaming_dq.engine.result import ERRORS_COLUMN
    from streaming_dq.sink.schemas import QUARANTINE_COLUMNS

    if not rows:
        out.print(escape(f"gate {gate!r}: no quarantined row matches ({view.scanned:,} scanned)"))
        return
    table = Table("batch", "failed", "state", "first seen", "row", show_lines=False, expand=False)
    own = [n for n in view.rows.column_names if n not in QUARANTINE_COLUMNS.names]
    for row, state in zip(rows, _states(view), strict=True):
        failed = ", ".join(dict.fromkeys(e["check-id"] for e in row.get(ERRORS_COLUMN) or []))
        release = row.get("_dq_release") or {}
        shown_state = f"{state} (release {release['id'][:8]})" if release.get("id") else state
        first = "; ".join(_pointer(p) for p in row.get(FIRST_SEEN_COLUMN) or [])
        raw = row.get("_dq_raw")
        values = ", ".join(f"{c}={_text(row.get(c))}" for c in own)
        shown = f"raw: {raw}" if raw is not None and all(row.get(c) is None for c in own) else values
        table.add_row(
            str(row.get("_dq_batch_id")), escape(failed), escape(shown_state), escape(first), escape(shown)
        )
    out.print(table)
    more = f" (the first {len(rows):,})" if view.matched > len(rows) else ""
    out.print(escape(f"{view.matched:,} quarantined row(s) match{more}"), style="dim")


def _pointer(p: Mapping[str, Any]) -> str:
    if p.get("late"):
        return f"{p['check_id']}: too late to judge"
    where = f", {p['origin']}" if p.get("origin") else ""
    return f"{p['check_id']}: batch {p.get('batch_id')}{where}"


def _text(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    return "NULL" if value is None else str(value)
