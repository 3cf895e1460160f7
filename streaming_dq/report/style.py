"""The report page's look: its style sheet (light and dark, one column on a phone) and its Content-Security-Policy,
which forbids every fetch so the file opens the same offline (:mod:`~streaming_dq.report.html`)."""

from __future__ import annotations

__all__ = ["CSP", "CSS"]

CSS = """
:root{--fg:#1d2330;--muted:#5b6475;--bg:#fff;--panel:#f5f7fa;--line:#d7dce5;--ok:#1b7f4b;--bad:#b3261e;
--warn:#8a5a00;--accent:#2857a4;--band:#cfdcf3}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ef;--muted:#a3acbd;--bg:#14171c;--panel:#1d2128;
--line:#343a46;--ok:#5fcf8f;--bad:#ff8a80;--warn:#f3c15b;--accent:#8fb4ff;--band:#2c3b57}}
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
color:var(--fg);background:var(--bg)}main{max-width:1180px;margin:0 auto;padding:12px 16px 48px}
h1{font-size:1.5em;margin:.4em 0}h2{font-size:1.2em;margin:1.6em 0 .4em;border-bottom:1px solid var(--line)}
h3{font-size:1.02em;margin:1.2em 0 .3em}nav a{margin-right:.9em}a{color:var(--accent)}
.muted{color:var(--muted)}.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(140px,1fr));gap:8px}
.card{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:8px 10px}
.card b{display:block;font-size:1.35em}.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:.3em 0;font-size:.93em}th,td{border-bottom:1px solid var(--line);
padding:3px 8px;text-align:left;vertical-align:top}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.chart{width:100%;height:auto;max-width:760px;display:block}.grid{stroke:var(--line);stroke-width:1}
.tick{fill:var(--muted);font-size:11px}.passed,.ok{color:var(--ok)}.failed,.bad{color:var(--bad)}
.warning{color:var(--warn)}rect.pass{fill:var(--ok)}rect.warn{fill:var(--warn)}rect.quar{stroke:var(--bad)}
.hatch-bg{fill:var(--bg)}.hatch{stroke:var(--bad);stroke-width:3}.flag{fill:var(--bad);font-size:13px;
font-weight:bold}.line{fill:none;stroke:var(--accent);stroke-width:1.5}.cross{stroke:var(--bad);stroke-width:2.5;
fill:none}.dot{fill:var(--ok)}.ring{fill:none;stroke:var(--accent);stroke-width:2}.skipped{fill:var(--muted)}
.band{fill:var(--band)}.expected{fill:none;stroke:var(--muted);stroke-dasharray:5 4;stroke-width:1.5}
rect.cell{fill:var(--panel);stroke:var(--line)}rect.cell.failed{stroke:var(--bad);stroke-width:2.5}
rect.cell.passed{stroke:var(--ok)}.cell-day{font-size:12px;fill:var(--fg)}.cell-value{font-size:11px;
fill:var(--muted)}.span{fill:var(--accent);opacity:.8}pre{background:var(--panel);padding:10px;overflow-x:auto;
font-size:.85em}details{margin:.3em 0 .8em}summary{cursor:pointer;color:var(--accent)}
.legend span{margin-right:1.2em}.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));
gap:4px 16px;align-items:end}@media (max-width:600px){body{font-size:14px}main{padding:8px}}
"""

#: Nothing may be fetched: styles inline, images only as data: URLs.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
