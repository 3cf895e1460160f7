"""The report's charts as inline SVG: no script, no font or style fetched, so a report opens offline.

Every chart is an ``<svg role="img">`` with a ``<title>`` and a ``<desc>`` that say in words what it shows,
and its marks carry a ``data-mark`` attribute (one per day, window, batch or span the data has: the browser
test counts them). Meaning never rests on colour alone: a failed mark is a cross, a passed one a dot, an open
window a ring, and the quarantined share of a bar is hatched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from html import escape
from itertools import count

__all__ = ["GLYPHS", "Bar", "band_chart", "bar_chart", "calendar", "spans_chart", "sparkline"]

#: A verdict's glyph, shown beside (or instead of) its colour: the one spelling of the report's statuses.
GLYPHS = {"passed": "\u2713", "failed": "\u2717", "provisional": "\u2026", "skipped": "\u2013"}

WIDTH, HEIGHT = 720, 200
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 12, 34
_ids = count()


def _id(prefix: str) -> str:
    return f"{prefix}-{next(_ids)}"


def _open(title: str, desc: str, height: int = HEIGHT, width: int = WIDTH) -> tuple[str, str]:
    t, d = _id("t"), _id("d")
    head = (
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-labelledby="{t} {d}" '
        f'preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{t}">{escape(title)}</title><desc id="{d}">{escape(desc)}</desc>'
    )
    return head, "</svg>"


def _num(v: float) -> str:
    if abs(v) >= 1e6:
        return f"{v / 1e6:.3g}M"
    if abs(v) >= 1e3:
        return f"{v / 1e3:.3g}k"
    return f"{v:.3g}"


def _y_axis(lo: float, hi: float, fmt: Callable[[float], str] = _num, height: int = HEIGHT) -> str:
    bottom = height - BOTTOM
    out = []
    for i in range(3):
        v = lo + (hi - lo) * i / 2
        y = bottom - (bottom - TOP) * i / 2
        out.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(fmt(v))}</text>'
        )
    return "".join(out)


def _x_labels(labels: Sequence[str], xs: Sequence[float], height: int = HEIGHT) -> str:
    if not labels:
        return ""
    step = max(1, len(labels) // 8)
    y = height - BOTTOM + 16

    def anchor(x: float) -> str:
        return "end" if x > WIDTH - RIGHT - 30 else "start" if x < LEFT + 30 else "middle"

    return "".join(
        f'<text class="tick" x="{x:.1f}" y="{y}" text-anchor="{anchor(x)}">{escape(label)}</text>'
        for i, (label, x) in enumerate(zip(labels, xs, strict=True))
        if i % step == 0
    )


@dataclass(frozen=True)
class Bar:
    """One stacked segment's series: its name, values per label and CSS class (``hatched`` adds a pattern)."""

    name: str
    values: Sequence[float]
    css: str


def bar_chart(
    title: str,
    desc: str,
    labels: Sequence[str],
    bars: Sequence[Bar],
    *,
    mark: str,
    fmt: Callable[[float], str] = _num,
    y_max: float | None = None,
    flags: Sequence[str] = (),
    height: int = HEIGHT,
    tips: Sequence[str] = (),
) -> str:
    """Stacked bars, one group per label (one ``data-mark`` per label); ``flags``: a glyph under a label's bar
    (e.g. a cross for a failed day), "" for none; ``tips``: a label's tooltip (default: the values)."""
    head, tail = _open(title, desc, height)
    n = len(labels)
    totals = [sum(b.values[i] for b in bars) for i in range(n)]
    top = y_max if y_max is not None else max(totals, default=0) or 1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, height - TOP - BOTTOM
    slot = plot_w / max(n, 1)
    bar_w = max(slot * 0.7, 0.5)
    pattern = _id("hatch")
    parts = [
        head,
        f'<defs><pattern id="{pattern}" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect class="hatch-bg" width="6" height="6"/>'
        f'<line class="hatch" x1="0" y1="0" x2="0" y2="6"/></pattern></defs>',
        _y_axis(0, top, fmt, height),
    ]
    xs = []
    for i, label in enumerate(labels):
        x = LEFT + slot * i + (slot - bar_w) / 2
        xs.append(x + bar_w / 2)
        y: float = TOP + plot_h
        words = tips[i] if i < len(tips) else ", ".join(f"{b.name} {fmt(b.values[i])}" for b in bars)
        group = [f'<g data-mark="{escape(mark)}"><title>{escape(label)}: {escape(words)}</title>']
        for b in bars:
            h = plot_h * b.values[i] / top if top else 0
            if h <= 0:
                continue
            y -= h
            fill = f' fill="url(#{pattern})"' if "hatched" in b.css else ""
            group.append(
                f'<rect class="{b.css}" x="{x:.2f}" y="{y:.2f}" width="{bar_w:.2f}" height="{h:.2f}"{fill}/>'
            )
        if i < len(flags) and flags[i]:
            group.append(
                f'<text class="flag" x="{x + bar_w / 2:.1f}" y="{TOP + plot_h - 3:.1f}" '
                f'text-anchor="middle">{escape(flags[i])}</text>'
            )
        parts.append("".join(group) + "</g>")
    parts += [_x_labels(labels, xs, height), tail]
    return "".join(parts)


def sparkline(
    title: str,
    desc: str,
    xs: Sequence[int],
    ys: Sequence[float],
    failed: Sequence[bool],
    *,
    mark: str = "failed-batch",
) -> str:
    """One line over the batches (a single path however many) with a cross on each failed batch."""
    height = 150
    head, tail = _open(title, desc, height)
    if not xs:
        return head + tail
    lo_x, hi_x = min(xs), max(xs)
    top = max(ys, default=0) or 1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, height - TOP - BOTTOM

    def px(x: int) -> float:
        return LEFT + (plot_w * (x - lo_x) / (hi_x - lo_x) if hi_x > lo_x else plot_w / 2)

    def py(y: float) -> float:
        return TOP + plot_h - plot_h * y / top

    path = " ".join(
        f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(y):.1f}"
        for i, (x, y) in enumerate(zip(xs, ys, strict=True))
    )
    parts = [head, _y_axis(0, top, height=height), f'<path class="line" d="{path}"/>']
    for x, y, bad in zip(xs, ys, failed, strict=True):
        if bad:
            cx, cy = px(x), py(y)
            parts.append(
                f'<path data-mark="{mark}" class="cross" d="M{cx - 4:.1f},{cy - 4:.1f}l8,8m0,-8l-8,8">'
                f"<title>batch {x}: failed, {_num(y)}</title></path>"
            )
    labels = [f"batch {lo_x}", f"batch {hi_x}"] if hi_x > lo_x else [f"batch {lo_x}"]
    parts += [_x_labels(labels, [px(lo_x), px(hi_x)][: len(labels)], height), tail]
    return "".join(parts)


@dataclass(frozen=True)
class Point:
    """A window's verdict on a band chart."""

    label: str
    value: float | None
    expected: float | None
    low: float | None
    high: float | None
    status: str
    words: str


def _shape(status: str, cx: float, cy: float, mark: str, words: str) -> str:
    tip = f"<title>{escape(words)}</title>"
    if status == "failed":
        return (f'<path data-mark="{mark}" class="cross" d="M{cx - 5:.1f},{cy - 5:.1f}l10,10m0,-10l-10,10">'
                f"{tip}</path>")  # fmt: skip
    css = {"passed": "dot", "provisional": "ring"}.get(status, "skipped")
    return f'<circle data-mark="{mark}" class="{css}" cx="{cx:.1f}" cy="{cy:.1f}" r="4">{tip}</circle>'


def band_chart(title: str, desc: str, points: Sequence[Point], *, mark: str = "window") -> str:
    """Values over windows with the anomaly band (shaded) and the expected value (dashed); one mark per
    window: a dot passed, a cross failed, a ring open, a square skipped."""
    head, tail = _open(title, desc)
    known = [v for p in points for v in (p.value, p.expected, p.low, p.high) if v is not None]
    lo, hi = (min(known), max(known)) if known else (0.0, 1.0)
    lo, hi = (lo - 1, hi + 1) if lo == hi else (lo - (hi - lo) * 0.05, hi + (hi - lo) * 0.05)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    n = len(points)

    def px(i: int) -> float:
        return LEFT + (plot_w * (i + 0.5) / n if n else 0)

    def py(v: float) -> float:
        return TOP + plot_h - plot_h * (v - lo) / (hi - lo)

    parts = [head, _y_axis(lo, hi)]
    banded = [(i, p) for i, p in enumerate(points) if p.low is not None or p.high is not None]
    if banded:
        upper = [f"{px(i):.1f},{py(p.high if p.high is not None else hi):.1f}" for i, p in banded]
        lower = [f"{px(i):.1f},{py(p.low if p.low is not None else lo):.1f}" for i, p in reversed(banded)]
        parts.append(f'<polygon class="band" points="{" ".join(upper + lower)}"/>')
    expected = [(i, p.expected) for i, p in enumerate(points) if p.expected is not None]
    if expected:
        d = " ".join(f"{'M' if k == 0 else 'L'}{px(i):.1f},{py(v):.1f}" for k, (i, v) in enumerate(expected))
        parts.append(f'<path class="expected" d="{d}"/>')
    for i, p in enumerate(points):
        y = py(p.value) if p.value is not None else TOP + plot_h
        parts.append(_shape(p.status, px(i), y, mark, p.words))
    parts += [_x_labels([p.label for p in points], [px(i) for i in range(n)]), tail]
    return "".join(parts)


def calendar(
    title: str, desc: str, days: Sequence[tuple[date, str, str, str]], *, mark: str = "window"
) -> str:
    """A month-style calendar, one week per row (Monday first): one cell per judged day with its status
    glyph and value; ``days`` holds (day, status, text in the cell, words for the tooltip)."""
    if not days:
        head, tail = _open(title, desc, 40)
        return head + tail
    first = min(d for d, *_ in days)
    monday = first - timedelta(days=first.weekday())
    weeks = (max(d for d, *_ in days) - monday).days // 7 + 1
    cell, gap, left, top = 92, 4, 64, 22
    width, height = left + 7 * (cell + gap), top + weeks * (cell * 0.6 + gap) + 4
    head, tail = _open(title, desc, int(height), width)
    parts = [head]
    for i, name in enumerate(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")):
        parts.append(
            f'<text class="tick" x="{left + i * (cell + gap) + cell / 2}" y="14" text-anchor="middle">{name}</text>'
        )
    for w in range(weeks):
        start = monday + timedelta(days=7 * w)
        parts.append(
            f'<text class="tick" x="{left - 6}" y="{top + w * (cell * 0.6 + gap) + cell * 0.35:.1f}" text-anchor="end">{start:%b %d}</text>'
        )
    for day, status, text, words in days:
        offset = (day - monday).days
        x, y = left + (offset % 7) * (cell + gap), top + (offset // 7) * (cell * 0.6 + gap)
        parts.append(
            f'<g data-mark="{mark}"><title>{escape(words)}</title>'
            f'<rect class="cell {escape(status)}" x="{x}" y="{y:.1f}" width="{cell}" height="{cell * 0.6:.1f}" rx="4"/>'
            f'<text class="cell-day" x="{x + 5}" y="{y + 14:.1f}">{day.day} {GLYPHS.get(status, "?")}</text>'
            f'<text class="cell-value" x="{x + 5}" y="{y + 34:.1f}">{escape(text)}</text></g>'
        )
    return "".join(parts) + tail


def spans_chart(title: str, desc: str, rows: Sequence[str], spans: Sequence[tuple[str, datetime, datetime, str]],
                *, mark: str = "profile-span") -> str:  # fmt: skip
    """A time line: one row per name, one bar per (name, start, end, words) span."""
    left, row_h = 150, 26
    height = TOP + row_h * max(len(rows), 1) + BOTTOM
    head, tail = _open(title, desc, height)
    if not spans:
        return head + tail
    lo, hi = min(s[1] for s in spans), max(s[2] for s in spans)
    total = (hi - lo).total_seconds() or 1.0
    plot_w = WIDTH - left - RIGHT

    def px(t: datetime) -> float:
        return left + plot_w * (t - lo).total_seconds() / total

    parts = [head]
    for r, name in enumerate(rows):
        y = TOP + r * row_h
        parts.append(f'<text class="tick" x="{left - 6}" y="{y + 16}" text-anchor="end">{escape(name)}</text>'
                     f'<line class="grid" x1="{left}" x2="{WIDTH - RIGHT}" y1="{y + row_h - 2}" y2="{y + row_h - 2}"/>')  # fmt: skip
    for name, start, end, words in spans:
        y = TOP + rows.index(name) * row_h + 4
        x = px(start)
        parts.append(f'<rect data-mark="{mark}" class="span" x="{x:.1f}" y="{y}" width="{max(px(end) - x, 2):.1f}" '
                     f'height="{row_h - 10}"><title>{escape(words)}</title></rect>')  # fmt: skip
    base = TOP + row_h * len(rows) + 16
    parts.append(f'<text class="tick" x="{left}" y="{base}">{lo:%Y-%m-%d %H:%M}</text>'
                 f'<text class="tick" x="{WIDTH - RIGHT}" y="{base}" text-anchor="end">{hi:%Y-%m-%d %H:%M}</text>')  # fmt: skip
    return "".join(parts) + tail
