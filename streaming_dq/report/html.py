"""A report as ONE self-contained HTML file: inline CSS, inline SVG charts, no script, nothing fetched.

The page's Content-Security-Policy forbids every fetch (``default-src 'none'``), so even a browser that would
follow a stray link to a font or an image does not: the file opens the same offline, from an e-mail or behind
a proxy. Each chart has a text alternative (its SVG title and description, and the numbers as a table under
it); status is written as a word and a glyph, never as a colour alone. The layout is one column on a phone
and wider on a desk (CSS only).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

from streaming_dq.report.data import GateReport, WindowSeries
from streaming_dq.report.markup import anchor as _anchor
from streaming_dq.report.markup import data as _data
from streaming_dq.report.markup import number as _n
from streaming_dq.report.markup import table as _table
from streaming_dq.report.markup import when as _t
from streaming_dq.report.quarantine_html import quarantine as _quarantine
from streaming_dq.report.quarantine_html import repeats as _repeats
from streaming_dq.report.style import CSP, CSS
from streaming_dq.report.svg import (
    GLYPHS,
    Bar,
    Point,
    band_chart,
    bar_chart,
    calendar,
    spans_chart,
    sparkline,
)

__all__ = ["CSP", "render"]

#: A verdict as a glyph and a word (an open window is ``provisional`` in the tables).
GLYPH = {
    status: f"{glyph} {'open' if status == 'provisional' else status}" for status, glyph in GLYPHS.items()
}


def render(reports: Sequence[GateReport], *, title: str | None = None) -> str:
    """The HTML of one gate's report, or of a fleet's (an overview, then a section per gate)."""
    names = [r.gate for r in reports]
    title = title or ("streaming-dq report: " + ", ".join(names))
    body = [f"<h1>{escape(title)}</h1>"]
    if reports:
        r0 = reports[0]
        since = f" &middot; since {_t(r0.since, r0.timezone)}" if r0.since else ""
        body.append(f'<p class="muted">Generated {_t(r0.generated_at, r0.timezone)}{since}.</p>')
    if len(reports) > 1:
        body.append(_overview(reports))
    body += [_gate(r, many=len(reports) > 1) for r in reports]
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>"
        + "\n".join(body)
        + "</main></body></html>\n"
    )


def _overview(reports: Sequence[GateReport]) -> str:
    rows = []
    for r in reports:
        t = r.totals()
        failing = sum(c.failed > 0 for c in r.checks) + sum(
            any(v.status == "failed" for v in w.verdicts) for w in r.windows
        )
        rows.append(
            [f'<a href="#{_anchor(r, "gate")}">{escape(r.gate)}</a>', _n(len(r.batches)), _n(t["rows"]),
             _n(t["passed"]), _n(t["quarantined"]), _n(failing)]
        )  # fmt: skip
    head = ["gate", "batches", "rows", "passed", "quarantined", "checks that failed"]
    return "<h2>Gates</h2>" + _table(head, rows, numeric=(1, 2, 3, 4, 5))


def _gate(r: GateReport, *, many: bool) -> str:
    parts = [f'<section id="{_anchor(r, "gate")}" aria-label="gate {escape(r.gate)}">']
    if many:
        parts.append(f"<h2>Gate {escape(r.gate)}</h2>")
    sections = [
        ("summary", "Summary", _summary(r)),
        ("rows", "Rows per day of event time", _rows_per_day(r)),
        ("checks", "Checks", _checks(r)),
        ("windows", "Window verdicts", _windows(r)),
        ("profiles", "Active profiles", _profiles(r)),
        ("lifetime", "Metrics over the stream's life", _lifetime(r)),
        ("quarantine", "Quarantine", _quarantine(r)),
        ("repeats", "Duplicates across batches", _repeats(r)),
        ("releases", "Releases and discards", _releases(r)),
        ("maintenance", "Maintenance", _maintenance(r)),
        ("config", "Configuration", _config(r)),
    ]
    nav = " ".join(f'<a href="#{_anchor(r, key)}">{escape(name)}</a>' for key, name, _ in sections)
    parts.append(f'<nav aria-label="sections of gate {escape(r.gate)}">{nav}</nav>')
    for key, name, html in sections:
        tag = "h3" if many else "h2"
        parts.append(f'<{tag} id="{_anchor(r, key)}">{escape(name)}</{tag}>{html}')
    parts.append("</section>")
    return "\n".join(parts)


def _summary(r: GateReport) -> str:
    t = r.totals()
    ev_min = min((b.event_time_min for b in r.batches if b.event_time_min), default=None)
    ev_max = max((b.event_time_max for b in r.batches if b.event_time_max), default=None)
    cards = [
        ("batches", _n(len(r.batches))), ("rows", _n(t["rows"])), ("passed", _n(t["passed"])),
        ("quarantined", _n(t["quarantined"])), ("passed with a warning", _n(t["warned"])),
        ("malformed", _n(t["malformed"])), ("late", _n(t["late"])),
    ]  # fmt: skip
    html = '<div class="cards">' + "".join(f'<div class="card"><b>{v}</b>{escape(k)}</div>' for k, v in cards)
    html += "</div>"
    html += (
        f'<p>Event time {_t(ev_min, r.timezone)} to {_t(ev_max, r.timezone)}; days are days of '
        f"{escape(r.timezone)}. Tables: " + ", ".join(f"{escape(k)} <code>{escape(v)}</code>" for k, v in r.tables.items()) + ".</p>"
    )  # fmt: skip
    html += "".join(f'<p class="muted">{escape(n)}</p>' for n in r.notes)
    return html


def _rows_per_day(r: GateReport) -> str:
    days = [d for d in r.rows_by_day if d.day is not None]
    undated = sum(d.rows for d in r.rows_by_day if d.day is None)
    if not days:
        return "<p>No row with an event time in the pass and quarantine tables.</p>"
    labels = [f"{d.day:%m-%d}" for d in days]
    first, last = f"{days[0].day:%Y-%m-%d}", f"{days[-1].day:%Y-%m-%d}"
    chart = bar_chart(
        f"Rows per day of event time, gate {r.gate}",
        f"{len(days)} days of the rows' own event time ({r.timezone}) from {first} to {last}, as the pass and "
        f"quarantine tables hold them now: bars of rows passed and quarantined (hatched); "
        f"{sum(d.quarantined for d in days):,} of {sum(d.rows for d in days):,} rows quarantined"
        + (f"; {undated:,} rows without an event time are not drawn." if undated else "."),
        labels,
        [Bar("passed", [d.passed for d in days], "pass"),
         Bar("quarantined", [d.quarantined for d in days], "quar hatched")],
        mark="day",
    )  # fmt: skip
    legend = (
        '<p class="legend"><span><b class="ok">&#9632;</b> passed (green, with or without a warning: warnings '
        'are counted per batch below)</span><span><b class="bad">&#9636;</b> quarantined (hatched red)</span></p>'
    )
    table = _table(
        ["day", "rows", "passed", "quarantined"],
        [[f"{d.day:%Y-%m-%d}", _n(d.rows), _n(d.passed), _n(d.quarantined)] for d in days],
        numeric=(1, 2, 3),
    )
    return chart + legend + _data("The numbers, per day of event time", table)


def _checks(r: GateReport) -> str:
    if not r.checks:
        return "<p>No batch-scoped check was judged in this report.</p>"
    rows = []
    for c in r.checks:
        judged = sum(s != "skipped" for s in c.statuses)
        violations = sum(v or 0 for v in c.violations) if c.kind == "row" else None
        rate = _rate(c.days)
        status = GLYPH["failed"] if c.failed else GLYPH["passed"]
        css = "failed" if c.failed else "passed"
        rows.append(
            [f'<a href="#{_anchor(r, "check-" + c.check_id)}">{escape(c.check_id)}</a>', escape(c.check_type),
             escape(c.severity), _n(judged), _n(c.failed), _n(violations), rate, f'<span class="{css}">{status}</span>']
        )  # fmt: skip
    out = [_table(["check", "type", "severity", "batches", "failed", "violations", "pass rate", "verdict"],
                  rows, numeric=(3, 4, 5, 6))]  # fmt: skip
    for c in r.checks:
        out.append(f'<h3 id="{_anchor(r, "check-" + c.check_id)}">{escape(c.check_id)} '
                   f'<span class="muted">({escape(c.check_type)}, {escape(c.severity)})</span></h3>')  # fmt: skip
        labels = [f"{d.day:%m-%d}" for d in c.days]
        row = c.kind == "row"
        tips = [f"{d.batches} batches, {d.failed} failed" + (f", {d.violations:,} violations in {d.rows:,} rows" if row else "")
                + f", pass rate {d.pass_rate:.2%}" for d in c.days]  # fmt: skip
        out.append('<div class="pair">')
        out.append(
            bar_chart(
                f"{c.check_id}: {'violations' if row else 'failed batches'} per batch day",
                f"{'Rows violating the check' if row else 'Batches in which the check failed'}, each batch "
                f"counted whole on the day of its latest event time ({len(c.days)} such days); a cross marks "
                f"each of the {sum(d.failed > 0 for d in c.days)} days with a failed batch. Pass rate "
                f"{_rate(c.days)}.",
                labels,
                [Bar("violations" if row else "failed batches",
                     [float(d.violations if row else d.failed) for d in c.days], "quar hatched")],
                mark="check-day",
                flags=["\u2717" if d.failed else "" for d in c.days],
                height=150,
                tips=tips,
            )
        )  # fmt: skip
        series = [(b, float(v if c.kind == "row" else (x or 0.0)), s == "failed")
                  for b, v, x, s in zip(c.batch_ids, [v or 0 for v in c.violations], c.values, c.statuses, strict=True)
                  if s != "skipped"]  # fmt: skip
        what = "violations" if c.kind == "row" else "value"
        out.append(
            sparkline(
                f"{c.check_id}: {what} per batch",
                f"{what.capitalize()} in each of {len(series)} batches; a cross marks each of the "
                f"{sum(s[2] for s in series)} failed batches.",
                [s[0] for s in series], [s[1] for s in series], [s[2] for s in series],
            )
        )  # fmt: skip
        out.append("</div>")
        out.append(_data("The numbers, per day", _table(
            ["day", "batches", "failed", "violations", "rows", "pass rate"],
            [[f"{d.day:%Y-%m-%d}", _n(d.batches), _n(d.failed), _n(d.violations if c.kind == "row" else None),
              _n(d.rows if c.kind == "row" else None), f"{d.pass_rate:.2%}"] for d in c.days],
            numeric=(1, 2, 3, 4, 5))))  # fmt: skip
    return "".join(out)


def _rate(days: Sequence[Any]) -> str:
    rows = sum(d.rows for d in days)
    if rows:
        return f"{1 - sum(d.violations for d in days) / rows:.2%}"
    batches = sum(d.batches for d in days)
    return f"{1 - sum(d.failed for d in days) / batches:.2%}" if batches else "-"


def _words(w: WindowSeries, v: Any, zone: str) -> str:
    text = f"{w.check_id} {w.window} from {_t(v.start, zone, '%Y-%m-%d %H:%M')}: {GLYPH.get(v.status, v.status)}, value {_n(v.value)}"
    if v.expected is not None:
        low = "-inf" if v.band_low is None else _n(v.band_low)
        high = "inf" if v.band_high is None else _n(v.band_high)
        text += f", expected {_n(v.expected)} (band {low} .. {high}), score {_n(v.score)}"
    if v.reason:
        text += f" ({v.reason})"
    return text


def _windows(r: GateReport) -> str:
    if not r.windows:
        return "<p>No window verdict in this report.</p>"
    out = []
    zone = ZoneInfo(r.timezone)
    for w in r.windows:
        failed = sum(v.status == "failed" for v in w.verdicts)
        out.append(f"<h3>{escape(w.check_id)} per {escape(w.window)} "
                   f'<span class="muted">({escape(w.check_type)}, {escape(w.severity)})</span></h3>')  # fmt: skip
        starts = [_t(v.start, r.timezone, "%a %Y-%m-%d %H:%M") for v in w.verdicts if v.status == "failed"]
        desc = (f"{len(w.verdicts)} windows of {w.window}, {failed} failed"
                + (f" ({', '.join(starts[:10])}{', ...' if len(starts) > 10 else ''})" if starts else "")
                + ("; each with its expected value and anomaly band" if w.anomaly else "") + ".")  # fmt: skip
        daily = all(
            v.end - v.start == timedelta(days=1) and v.start.astimezone(zone).hour == 0 for v in w.verdicts
        )
        if daily:
            cells = [
                (v.start.astimezone(zone).date(), v.status, _n(v.value), _words(w, v, r.timezone))
                for v in w.verdicts
            ]
            out.append(calendar(f"{w.check_id}: verdict per day", desc, cells))
        else:
            points = [Point(_t(v.start, r.timezone, "%m-%d %H:%M"), v.value, v.expected, v.band_low, v.band_high,
                            v.status, _words(w, v, r.timezone)) for v in w.verdicts]  # fmt: skip
            out.append(band_chart(f"{w.check_id}: value per {w.window}", desc, points))
        head = ["window start", "verdict", "value"] + (["expected", "band", "score"] if w.anomaly else [])
        rows = []
        for v in w.verdicts:
            row = [
                _t(v.start, r.timezone, "%Y-%m-%d %H:%M"),
                f'<span class="{escape(v.status)}">{GLYPH.get(v.status, escape(v.status))}</span>',
                _n(v.value),
            ]
            if w.anomaly:
                band = (
                    "-"
                    if v.band_low is None and v.band_high is None
                    else f"{_n(v.band_low)} .. {_n(v.band_high)}"
                )
                row += [_n(v.expected) if not v.reason else escape(v.reason), band, _n(v.score)]
            rows.append(row)
        out.append(_data("The verdicts", _table(head, rows, numeric=(2, 3, 5))))
    return "".join(out)


def _lifetime(r: GateReport) -> str:
    if not r.lifetime:
        return "<p>No metrics table, or nothing accumulated in it yet.</p>"
    rows = [
        [escape(str(x["check"])), _n(x["adjusted"] if x["adjusted"] is not None else x["raw"]), _n(x["raw"]),
         escape(", ".join(x["profiles"] or ()) or "-")]
        for x in r.lifetime
    ]  # fmt: skip
    note = (
        '<p class="muted">From the metrics table: every batch so far, whatever <code>--since</code> says.</p>'
    )
    return note + _table(["check", "value", "raw value", "profiles"], rows, numeric=(1, 2))


def _profiles(r: GateReport) -> str:
    if not r.profiles:
        return "<p>No profile was active in this report's batches.</p>"
    zone = ZoneInfo(r.timezone)
    names = sorted({s.profile for s in r.profiles})
    spans = [(s.profile, s.start.astimezone(zone), s.end.astimezone(zone),
              f"{s.profile}: {_t(s.start, r.timezone)} to {_t(s.end, r.timezone)}, {s.batches} batches")
             for s in r.profiles]  # fmt: skip
    chart = spans_chart(
        f"Active profiles over event time, gate {r.gate}",
        f"{len(names)} profiles in {len(spans)} spans of event time ({r.timezone}).",
        names,
        spans,
    )
    table = _table(["profile", "from", "to", "batches"],
                   [[escape(s.profile), _t(s.start, r.timezone), _t(s.end, r.timezone), _n(s.batches)] for s in r.profiles],
                   numeric=(3,))  # fmt: skip
    return chart + _data("The spans", table)


def _releases(r: GateReport) -> str:
    if not r.releases:
        return "<p>No release or discard in this report's span.</p>"
    rows = [
        [escape(e.kind), _t(e.at, r.timezone), escape(e.by or "-"), escape(e.request or "all rows"),
         _n(e.rows), _n(e.still_failing) if e.kind == "release" else "-",
         "finished" if e.finished else "<b>not finished</b>", escape(e.note or "")]
        for e in r.releases
    ]  # fmt: skip
    return _table(["what", "when", "who", "selection", "rows released / deleted", "still failing", "state", "note"],
                  rows, numeric=(4, 5))  # fmt: skip


def _maintenance(r: GateReport) -> str:
    if not r.maintenance:
        return "<p>No maintenance run in this report's span.</p>"
    rows = []
    for m in r.maintenance:
        tables = "; ".join(
            f"{t['table']}: {t['files_after']} files"
            + (f" (<b>failed</b>: {escape(str(t['error']))})" if t["error"] else "")
            for t in m.tables
        )
        rows.append([_t(m.started_at, r.timezone), f"{m.seconds:.1f}", tables])
    return _table(["started", "seconds", "tables"], rows, numeric=(1,))


def _config(r: GateReport) -> str:
    return _data("The gate's configuration (secrets shown as ***)", f"<pre>{escape(r.config_text)}</pre>")
