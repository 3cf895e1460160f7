"""The report's HTML pieces every section uses: times, numbers, tables, folded data, anchors and cells."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

from streaming_dq.report.data import GateReport

__all__ = ["anchor", "cell", "data", "number", "table", "when"]


def when(t: datetime | None, zone: str, fmt: str = "%Y-%m-%d %H:%M %Z") -> str:
    return "-" if t is None else escape(t.astimezone(ZoneInfo(zone)).strftime(fmt))


def number(v: float | int | None) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e6 else f"{v:,.0f}"
    return f"{v:,}"


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Sequence[int] = ()) -> str:
    ths = "".join(
        f'<th scope="col"{" class=n" if i in numeric else ""}>{escape(h)}</th>' for i, h in enumerate(head)
    )
    trs = "".join(
        "<tr>"
        + "".join(f"<td{' class=n' if i in numeric else ''}>{c}</td>" for i, c in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f'<div class="scroll"><table><thead><tr>{ths}</tr></thead><tbody>{trs}</tbody></table></div>'


def data(summary: str, table: str) -> str:
    return f"<details><summary>{escape(summary)}</summary>{table}</details>"


def anchor(r: GateReport, part: str) -> str:
    return f"{escape(r.gate)}-{part}"


def cell(v: Any) -> str:
    if v is None:
        return '<span class="muted">null</span>'
    if isinstance(v, list) and v and isinstance(v[0], dict) and "check-id" in v[0]:
        return escape(", ".join(f"{e['check-id']} ({e['severity']})" for e in v))
    if isinstance(v, datetime):
        return escape(v.isoformat())
    text = str(v)
    return escape(text if len(text) <= 200 else text[:200] + "\u2026")
