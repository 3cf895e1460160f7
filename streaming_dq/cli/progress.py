"""The lines ``streaming-dq run`` prints: the start, one per batch, one per window verdict, and the end."""

from __future__ import annotations

from datetime import time as datetime_time
from typing import TYPE_CHECKING

from rich.markup import escape

from streaming_dq.cli.common import count
from streaming_dq.tables.catalog import shown

if TYPE_CHECKING:
    from collections.abc import Sequence

    from streaming_dq.config.gate_config import GateConfig
    from streaming_dq.core.outcome import BatchOutcome, WindowOutcome
    from streaming_dq.runtime.fleet import JobTotals

__all__ = ["anomaly_text", "batch_line", "end_line", "start_line", "window_lines"]


def batch_line(outcome: BatchOutcome) -> str:
    if outcome.status == "skipped_replay":
        return f"batch {outcome.batch_id:>4}  [dim]replayed, already committed: nothing written[/]"
    parts = [
        f"batch {outcome.batch_id:>4}",
        f"in {outcome.rows_in:>7,}",
        f"[green]passed {outcome.rows_passed:>7,}[/]",
        f"[red]quarantined {outcome.rows_quarantined:>6,}[/]"
        if outcome.rows_quarantined
        else "quarantined      0",
        f"[yellow]warned {outcome.rows_warned:>6,}[/]" if outcome.rows_warned else "warned      0",
        f"{outcome.duration_seconds:6.2f} s",
    ]
    extras = [f"{outcome.rows_malformed:,} malformed"] if outcome.rows_malformed else []
    failed = [c for c in outcome.checks if c.status == "failed" and c.check_id != "malformed-record"]
    critical = [c.check_id for c in failed if c.severity != "warning"]
    row_warnings = [c.check_id for c in failed if c.severity == "warning" and c.kind == "row"]
    batch_warnings = [c.check_id for c in failed if c.severity == "warning" and c.kind != "row"]
    if critical:
        extras.append("failed: " + ", ".join(dict.fromkeys(critical)))
    if row_warnings:  # the rows counted as warned
        extras.append("row warnings: " + ", ".join(dict.fromkeys(row_warnings)))
    if batch_warnings:  # a verdict on the batch: carried by every passed row, not counted as warned rows
        extras.append("batch warning: " + ", ".join(dict.fromkeys(batch_warnings)))
    if outcome.active_profiles:
        extras.append("profiles: " + ", ".join(outcome.active_profiles))
    line = "  ".join(parts)
    return line + (f"  [dim]({escape('; '.join(extras))})[/]" if extras else "")


def anomaly_text(w: WindowOutcome) -> str:
    """``"  expected 100.5 in [85.43, 115.6], score 0.29"`` for an anomaly verdict, its reason when skipped."""
    if w.reason:
        return f"  ({w.reason})"
    if w.expected_value is None:
        return ""
    low = "-inf" if w.band_low is None else f"{w.band_low:,.6g}"
    high = "inf" if w.band_high is None else f"{w.band_high:,.6g}"
    score = "" if w.score is None else f", score {w.score:.3g}"
    return f"  expected {w.expected_value:,.6g} in [{low}, {high}]{score} over {w.history} windows"


def window_lines(windows: Sequence[WindowOutcome], timezone: str) -> list[str]:
    """One line per event-time window whose verdict became final (in a batch), in the gate's time zone."""
    from zoneinfo import ZoneInfo

    tz, lines = ZoneInfo(timezone), []
    for w in windows:
        if w.status not in ("passed", "failed") and not (w.status == "skipped" and w.reason):
            continue  # an open window's running value is not a verdict yet
        start, end = w.window_start.astimezone(tz), w.window_end.astimezone(tz)
        midnight = start.time() == end.time() == datetime_time(0)
        span = (
            f"{start:%a %Y-%m-%d}"
            if midnight and (end - start).days == 1
            else f"{start:%Y-%m-%d %H:%M} .. {end:%Y-%m-%d %H:%M}"
        )
        value = "" if w.adjusted_value is None else f"  value {w.adjusted_value:,.6g}"
        if w.multiplier not in (1, 1.0) and w.raw_value is not None:
            value += f" ({w.raw_value:,.6g} x{w.multiplier:g})"
        colour = (
            "red"
            if w.status == "failed" and w.severity == "critical"
            else "yellow"
            if w.status == "failed"
            else "green"
        )
        verdict = f"[{colour}]{w.status}[/]" + (f" ({w.severity})" if w.status == "failed" else "")
        value += anomaly_text(w)
        lines.append(f"      window {escape(w.check_id)} {span} ({timezone}): {verdict}{escape(value)}")
    return lines


def start_line(config: GateConfig, metrics_url: str | None) -> str:
    src = config.source
    trigger = "available-now" if src.trigger.available_now else f"every {src.trigger.processing_time}"
    if src.format == "kafka":
        topics = src.subscribe or src.subscribe_pattern or src.assign
        assert src.value is not None
        where = f"{src.value.format} messages of {topics} at {src.bootstrap_servers}"
        line = f"gate {config.gate.name!r}: kafka, {where} ({trigger})"
    else:
        line = f"gate {config.gate.name!r}: {src.format} from {shown(src.path or '')} ({trigger})"
    return line + (f"; metrics at {metrics_url}" if metrics_url else "")


def end_line(config: GateConfig, totals: JobTotals) -> str:
    t = totals
    counts = (
        f"{t.batches} batch{'' if t.batches == 1 else 'es'}, {count(t.rows_in, 'row')} in: {t.rows_passed:,} "
        f"passed, {t.rows_quarantined:,} quarantined, {t.rows_warned:,} warned"
    )
    if t.replayed:
        counts += f" ({t.replayed} replayed batches skipped)"
    targets = config.targets
    return f"{counts}\npass table: {shown(targets.pass_table)}\nquarantine table: {shown(targets.quarantine)}"
