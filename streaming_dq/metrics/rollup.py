"""Rolling up old metrics rows: many per-batch rows become one merged row per key, exactly.

The metrics table gains rows with every batch (the states of every observable check, what each batch added to
each window, a watermark row, window verdicts). After a month that is hundreds of thousands of rows, all read
back on every restart. States are mergeable, so rows older than a cut-off can be replaced by their fold
without changing anything a reader computes from them:

* ``batch`` rows of one (app, check, override group, state) fold into one ``batch-rollup`` row (a separate
  scope, so per-batch views do not mistake it for a batch); lifetimes include it;
* ``window`` rows of one (app, check, window, state) fold into one ``window`` row, and ``late`` /
  ``no-event-time`` rows likewise: the fold a restart makes is the same;
* ``watermark`` rows of one app fold into one (largest event time and watermark, summed late rows);
* ``window-result`` rows keep, per (app, check, window), the latest verdict and the latest final one (the
  provisional verdicts a window had while it was open are superseded).

A rolled row carries the largest ``written_at`` and ``batch_id`` of the rows it replaced, so it sorts where they
did and still matches the roll-up's own "older than" predicate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from streaming_dq.states import state_from_record
from streaming_dq.states.keyed import merge_named

__all__ = ["ROLLUP_SCOPE", "roll_up_records"]

#: The scope of a row holding the fold of many batches' ``batch`` rows.
ROLLUP_SCOPE = "batch-rollup"

_FINAL = ("passed", "failed", "skipped")
_STATE_KEYS = {
    "batch": ("app_id", "check_id", "check_type", "override_group", "state_name", "kind"),
    ROLLUP_SCOPE: ("app_id", "check_id", "check_type", "override_group", "state_name", "kind"),
    "window": ("app_id", "check_id", "window", "window_start", "window_end", "state_name", "kind"),
    "late": ("app_id", "check_id", "window", "state_name", "kind"),
    "no-event-time": ("app_id", "check_id", "window", "state_name", "kind"),
}
_STATE_FIELDS = ("n", "sum", "mean", "m2", "value", "sketch")


def _order(rec: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        rec.get("written_at") or datetime.min.replace(tzinfo=UTC),
        rec.get("batch_id") or 0,
        rec.get("seq") or 0,
    )


def _state_fields(state: Any) -> dict[str, Any]:
    record = {name: None for name in _STATE_FIELDS} | state.to_record()
    if record.get("sketch") is not None:
        record["sketch"] = bytes(record["sketch"])
    return record


def _newest(group: list[dict[str, Any]]) -> dict[str, Any]:
    return max(group, key=_order)


def _fold_states(scope: str, group: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for rec in group:
        merged = merge_named(merged, {"s": state_from_record(rec["kind"], rec)})
    newest = _newest(group)
    out = {k: None for k in newest} | {k: newest.get(k) for k in ("gate", *_STATE_KEYS[scope])}
    out |= {"scope": ROLLUP_SCOPE if scope == "batch" else scope, "batch_id": newest.get("batch_id")}
    out |= {"written_at": newest.get("written_at")}
    return out | _state_fields(merged["s"])


def _fold_watermarks(group: list[dict[str, Any]]) -> dict[str, Any]:
    newest = _newest(group)
    out = dict(newest)

    def largest(name: str) -> Any:
        values = [r[name] for r in group if r.get(name) is not None]
        return max(values) if values else None

    out["event_time_max"], out["watermark"] = largest("event_time_max"), largest("watermark")
    out["late_rows"] = sum(r.get("late_rows") or 0 for r in group)
    out["null_event_time_rows"] = sum(r.get("null_event_time_rows") or 0 for r in group)
    return out


def _kept_verdicts(group: list[dict[str, Any]]) -> list[dict[str, Any]]:
    latest = _newest(group)
    finals = [r for r in group if r.get("status") in _FINAL]
    kept = [latest]
    if finals and _newest(finals) is not latest:
        kept.insert(0, _newest(finals))
    return kept


def roll_up_records(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows that replace ``records`` (rows of ONE gate): every state folded per key, verdicts thinned.

    Rows of a scope it does not know are kept as they are (a newer version's rows are never lost).

    Example:
        >>> from datetime import datetime, UTC
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> rows = [{"gate": "g", "app_id": "g:q", "batch_id": b, "seq": 0, "written_at": t, "scope": "batch",
        ...          "check_id": "rows", "check_type": "row-count-min-check", "override_group": 0,
        ...          "state_name": "rows", "kind": "count", "n": 10} for b in range(3)]
        >>> [(r["scope"], r["n"], r["batch_id"]) for r in roll_up_records(rows)]
        [('batch-rollup', 30, 2)]
    """
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    kept: list[dict[str, Any]] = []
    for rec in records:
        row = dict(rec)
        scope = row.get("scope")
        if scope in _STATE_KEYS:
            key: tuple[Any, ...] = (scope, *(row.get(k) for k in _STATE_KEYS[scope]))
        elif scope == "watermark":
            key = (scope, row.get("app_id"))
        elif scope == "window-result":
            key = (scope, row.get("app_id"), row.get("check_id"), row.get("window"), row.get("window_start"))
        else:
            kept.append(row)
            continue
        groups.setdefault(key, []).append(row)
    out = kept
    for key, group in groups.items():
        scope = key[0]
        if scope == "watermark":
            out.append(_fold_watermarks(group))
        elif scope == "window-result":
            out.extend(_kept_verdicts(group))
        elif len(group) == 1 and scope != "batch":
            out.append(group[0])
        else:
            out.append(_fold_states(scope, group))
    out.sort(key=_order)
    for seq, row in enumerate(out):
        row["seq"] = seq
    return out
