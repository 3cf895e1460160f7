"""The demo's line per batch (``streaming-dq demo``): counts in colour, then the aggregate verdicts worth a look and
the event-time windows the batch closed. ``run``'s plainer lines, for logs, are :mod:`~streaming_dq.cli.progress`'s.
"""

from __future__ import annotations

from rich.markup import escape

from streaming_dq.core.outcome import BatchOutcome
from streaming_dq.profiles.event_time import time_zone

__all__ = ["aggregate_notes", "batch_line", "window_notes"]


def batch_line(outcome: BatchOutcome, zone: str) -> str:
    """A batch's progress: one line of counts, then indented lines for aggregates and closed windows."""
    if outcome.status == "skipped_replay":
        return f"  batch {outcome.batch_id:>2}  [dim]replayed, already committed: nothing written[/]"
    when = ""
    if outcome.min_event_time is not None and outcome.max_event_time is not None:
        tz = time_zone(zone)
        low, high = outcome.min_event_time.astimezone(tz), outcome.max_event_time.astimezone(tz)
        when = f"{low:%a %d %b %H:%M}-{high:%H:%M}"
    q, w = outcome.rows_quarantined, outcome.rows_warned
    parts = [
        f"  batch {outcome.batch_id:>2}  {when:<22}",
        f"in {outcome.rows_in:>3}",
        f"[green]passed {outcome.rows_passed:>3}[/]",
        f"[red]quarantined {q:>3}[/]" if q else "quarantined   0",
        f"[yellow]warned {w:>2}[/]" if w else "warned  0",
        f"{outcome.duration_seconds:5.1f} s",
    ]
    if outcome.rows_malformed:
        parts[3] += f" [dim]({outcome.rows_malformed} malformed)[/]"
    if outcome.active_profiles:
        parts.append(f"[magenta]{escape(', '.join(outcome.active_profiles))}[/]")
    notes = aggregate_notes(outcome)
    lines = ["  ".join(parts)]
    if notes:
        lines.append(" " * 12 + "[dim];[/] ".join(notes))
    lines += [" " * 12 + note for note in window_notes(outcome, zone)]
    return "\n".join(lines)


def aggregate_notes(outcome: BatchOutcome) -> list[str]:
    """The batch's aggregate verdicts worth a look: failed, or scaled by a profile."""
    aggregates = [c for c in outcome.checks if c.kind != "row" and c.raw_value is not None]
    split = len({c.check_id for c in aggregates}) < len(aggregates)  # profiles split the batch in regimes
    notes = []
    for check in aggregates:
        if check.status != "failed" and check.multiplier == 1.0:
            continue
        value = f"{check.raw_value:g}"
        if check.multiplier != 1.0 and check.adjusted_value is not None:
            value += f" x{check.multiplier:g} = {check.adjusted_value:g}"
        regime = ""
        if split and check.regime != outcome.active_profiles:
            regime = f" [{', '.join(check.regime) or 'rows without a profile'}]"
        verdict = f"[red]failed ({check.severity})[/]" if check.status == "failed" else check.status
        notes.append(f"{escape(check.check_id + regime)} {escape(value)} {verdict}")
    return notes


def window_notes(outcome: BatchOutcome, zone: str) -> list[str]:
    """The event-time windows this batch closed, with their verdicts."""
    tz = time_zone(zone)
    notes = []
    for window in outcome.windows:
        if window.status not in ("passed", "failed") or window.raw_value is None:
            continue  # provisional: the window is still open
        value = f"{window.raw_value:g}"
        if window.multiplier != 1.0 and window.adjusted_value is not None:
            value += f" x{window.multiplier:g} = {window.adjusted_value:g}"
        verdict = "[green]passed[/]" if window.status == "passed" else f"[red]failed ({window.severity})[/]"
        day = window.window_start.astimezone(tz)
        notes.append(
            f"window {day:%a %d %b} closed: [bold]{escape(window.check_id)}[/] {escape(value)} {verdict}"
        )
    return notes
