"""The report's sections on the quarantine table: its rows by state and reason with samples, and the rows
quarantined as keys first seen in an earlier micro-batch."""

from __future__ import annotations

from html import escape

from streaming_dq.report.data import GateReport
from streaming_dq.report.markup import cell as _cell
from streaming_dq.report.markup import data as _data
from streaming_dq.report.markup import number as _n
from streaming_dq.report.markup import table as _table
from streaming_dq.report.markup import when as _t

__all__ = ["quarantine", "repeats"]


def repeats(r: GateReport) -> str:
    q = r.quarantine
    if q is None or not (q.repeats_total or q.repeats_in_batch):
        return (
            "<p>No row in the quarantine table was seen before (a unique-key-check with a horizon judges keys "
            "across micro-batches).</p>"
        )
    out = [
        f"<p>{_n(q.repeats_total)} rows quarantined as a key first seen in an earlier micro-batch (a producer's "
        f"retry, a replayed file), each with a pointer to its first occurrence (<code>_dq_first_seen</code>); "
        f"{_n(q.repeats_in_batch)} more repeated a key earlier in their own micro-batch.</p>"
    ]
    if q.repeats:
        rows = [
            [escape(x.check_id), escape(x.key), _n(x.batch_id), _n(x.first_batch_id) if x.first_batch_id is not None
             else "", _t(x.first_event_time, r.timezone) if x.first_event_time else "", escape(x.origin or "")]
            for x in q.repeats
        ]  # fmt: skip
        title = f"The latest {len(q.repeats)} of them" if len(q.repeats) < q.repeats_total else "All of them"
        out.append(
            _data(
                title,
                _table(
                    [
                        "check",
                        "key",
                        "quarantined in batch",
                        "first seen in batch",
                        "first seen at",
                        "origin",
                    ],
                    rows,
                    numeric=(2, 3),
                ),
            )
        )
    return "".join(out)


def quarantine(r: GateReport) -> str:
    q = r.quarantine
    if q is None:
        return "<p>No quarantine table yet.</p>"
    states = ", ".join(f"{_n(n)} {escape(s)}" for s, n in q.states.items())
    out = [f"<p>{_n(q.rows)} rows in the quarantine table for this report's span: {states}.</p>"]
    if q.masked:
        out.append(
            f'<p class="muted">Masked: {escape(", ".join(q.masked))} (and the raw text of malformed records).</p>'
        )
    if not q.reasons:
        return "".join(out)
    out.append(_table(["check", "type", "severity", "rows"],
                      [[escape(x.check_id), escape(x.check), escape(x.severity), _n(x.rows)] for x in q.reasons],
                      numeric=(3,)))  # fmt: skip
    if q.other_reasons:
        out.append(f'<p class="muted">and {q.other_reasons} more reasons.</p>')
    for x in q.reasons:
        if not x.samples:
            continue
        columns = [c for c in q.columns if c in x.samples[0] and c not in ("_dq_gate",)]
        rows = [[_cell(s.get(c)) for c in columns] for s in x.samples]
        out.append(
            _data(
                f"Sample rows quarantined for {x.check_id} ({len(x.samples)} of {x.rows:,})",
                _table(columns, rows),
            )
        )
    return "".join(out)
