"""A gate's report read from its tables (:mod:`.data` says what it holds).

Everything comes from the tables (either writer's), read with delta-rs through
:func:`streaming_dq.tables.reading.read_table` and ``DeltaTable.scan`` (no Spark): the results table through the
one results-row codec (:class:`~streaming_dq.core.outcome_rows.ResultsLog`), the quarantine table one record
batch at a time (memory holds the samples and one record batch, whatever the table's size). A day is a day of
the gate's time zone, and a batch counts on the day of its latest event time (its validation time when it had
no event time): the day its data is about, not the day it was processed.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from streaming_dq.core.outcome import BatchOutcome
from streaming_dq.core.outcome_rows import ResultsLog
from streaming_dq.release.request import ReleaseRequest
from streaming_dq.report.data import (
    BatchPoint,
    CheckDay,
    CheckSeries,
    DayRows,
    GateReport,
    MaintenanceEntry,
    ProfileSpan,
    ReleaseEntry,
    ReportOptions,
    WindowSeries,
    WindowVerdict,
)
from streaming_dq.report.table_rows import quarantine_summary, rows_by_day, timestamp_literal

if TYPE_CHECKING:
    from streaming_dq.config.gate_config import GateConfig
    from streaming_dq.tables import DeltaTarget

__all__ = ["check_series", "gate_report", "profile_spans", "quarantine_summary", "window_series"]


def gate_report(
    config: GateConfig,
    config_text: str,
    options: ReportOptions,
    *,
    now: datetime | None = None,
) -> GateReport:
    """The report of the gate ``config`` (catalog names already answered: ``config.table`` gives locations).

    Args:
        config: The gate's config.
        config_text: The configuration to show (already redacted, :func:`redacted_config`).
        options: What to put in.
        now: The report's time (default: now).
    """
    from deltalake import DeltaTable

    from streaming_dq.tables.storage import delta_rs_options

    zone = ZoneInfo(config.gate.timezone)
    paths = config.targets.paths()
    notes: list[str] = []

    def exists(target: DeltaTarget) -> bool:
        opts = delta_rs_options(target.storage_options) or None
        return bool(DeltaTable.is_deltatable(target.uri, storage_options=opts))

    log = ResultsLog((), {}, {})
    if "results" in paths and exists(results := config.table("results")):
        log = ResultsLog.of(_results_rows(results, config.gate.name, options.since))
    else:
        notes.append("no results table yet: no batch has been committed")
    outcomes = list(log.outcomes)
    batches = [_batch_point(o, zone) for o in outcomes]
    quarantine = None
    if "quarantine" in paths and exists(target := config.table("quarantine")):
        quarantine = quarantine_summary(target, config.gate.name, options)
    by_day: list[DayRows] = []
    if config.gate.event_time and "quarantine" in paths and exists(config.table("pass")):
        q = config.table("quarantine")
        by_day = rows_by_day(
            config.table("pass"), q if exists(q) else None, config.gate.name, config.gate.event_time, zone,
            options.since,
        )  # fmt: skip
    lifetime: list[dict[str, Any]] = []
    if "metrics" in paths and exists(metrics := config.table("metrics")):
        from streaming_dq.metrics.store import metrics_table

        lifetime = metrics_table(metrics.uri, gate=config.gate.name, checks=list(config.check_set()),
                                 storage_options=metrics.storage_options)  # fmt: skip
    return GateReport(
        gate=config.gate.name,
        timezone=config.gate.timezone,
        generated_at=now or datetime.now(UTC),
        since=options.since,
        tables={role: config.table(role).uri for role in paths},
        batches=batches,
        checks=check_series(outcomes, batches),
        windows=window_series(outcomes),
        profiles=profile_spans(outcomes),
        quarantine=quarantine,
        releases=release_entries(log),
        maintenance=maintenance_entries(outcomes),
        lifetime=[
            {k: line.get(k) for k in ("check", "raw", "adjusted", "multiplier", "profiles")}
            for line in lifetime
        ],
        config_text=config_text,
        notes=notes,
        rows_by_day=by_day,
    )


def _results_rows(target: DeltaTarget, gate: str, since: datetime | None) -> list[dict[str, Any]]:
    from streaming_dq.tables.reading import read_table, sql_literal

    predicate = f"gate = {sql_literal(gate)}"
    if since is not None:
        predicate += f" AND validation_ts >= {timestamp_literal(since)}"
    return read_table(target.uri, storage_options=target.storage_options, predicate=predicate).to_pylist()


def _local_day(t: datetime, zone: ZoneInfo) -> date:
    return t.astimezone(zone).date()


def _batch_point(o: BatchOutcome, zone: ZoneInfo) -> BatchPoint:
    validated = datetime.fromtimestamp(o.committed_at - o.duration_seconds, UTC)
    anchor = o.max_event_time or validated
    return BatchPoint(
        batch_id=o.batch_id,
        validated_at=validated,
        day=_local_day(anchor, zone),
        event_time_min=o.min_event_time,
        event_time_max=o.max_event_time,
        rows=o.rows_in,
        passed=o.rows_passed,
        quarantined=o.rows_quarantined,
        warned=o.rows_warned,
        malformed=o.rows_malformed,
        late=o.rows_late,
        seconds=o.duration_seconds,
        profiles=tuple(o.active_profiles),
    )


def check_series(outcomes: Sequence[BatchOutcome], batches: Sequence[BatchPoint]) -> list[CheckSeries]:
    """Each batch-scoped check's series, in the order checks first appear. A batch whose rows fell under two
    profile regimes has an outcome per regime: its point is their sum (failed when either failed)."""
    day_of = {b.batch_id: b.day for b in batches}
    rows_of = {b.batch_id: b.rows for b in batches}
    per: dict[str, dict[int, list[Any]]] = defaultdict(dict)
    heads: dict[str, Any] = {}
    for o in outcomes:
        for c in o.checks:
            heads[c.check_id] = c
            value = c.adjusted_value if c.adjusted_value is not None else c.raw_value
            point = per[c.check_id].get(o.batch_id)
            if point is None:
                per[c.check_id][o.batch_id] = [c.status, c.violations, value]
                continue
            point[0] = _merged_status(point[0], c.status)
            point[1] = (
                None if point[1] is None and c.violations is None else (point[1] or 0) + (c.violations or 0)
            )
            point[2] = value if point[2] is None else point[2]
    series = []
    for check_id, points in per.items():
        head = heads[check_id]
        days: dict[date, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for batch_id, (status, violations, _) in points.items():
            if status == "skipped":
                continue
            tally = days[day_of[batch_id]]
            tally[0] += 1
            tally[1] += status == "failed"
            if head.kind == "row":
                tally[2] += int(violations or 0)
                tally[3] += rows_of[batch_id]
        ids = sorted(points)
        series.append(
            CheckSeries(
                check_id=check_id,
                check_type=head.check_type,
                kind=head.kind,
                severity=head.severity,
                batch_ids=ids,
                statuses=[points[b][0] for b in ids],
                violations=[points[b][1] for b in ids],
                values=[points[b][2] for b in ids],
                days=[CheckDay(d, *t) for d, t in sorted(days.items())],
            )
        )
    return series


_STATUS_RANK = {"failed": 3, "passed": 2, "provisional": 1, "skipped": 0}


def _merged_status(a: str, b: str) -> str:
    return a if _STATUS_RANK.get(a, 0) >= _STATUS_RANK.get(b, 0) else b


def window_series(outcomes: Sequence[BatchOutcome]) -> list[WindowSeries]:
    """The latest verdict of every window, by check and window size, windows by start."""
    latest: dict[tuple[str, str], dict[datetime, WindowVerdict]] = defaultdict(dict)
    heads: dict[tuple[str, str], tuple[str, str]] = {}
    for o in outcomes:
        for w in o.windows:
            key = (w.check_id, w.window)
            heads[key] = (w.check_type, w.severity)
            latest[key][w.window_start] = WindowVerdict(
                start=w.window_start,
                end=w.window_end,
                status=w.status,
                value=w.adjusted_value if w.adjusted_value is not None else w.raw_value,
                expected=w.expected_value,
                band_low=w.band_low,
                band_high=w.band_high,
                score=w.score,
                reason=w.reason,
                batch_id=o.batch_id,
            )
    return [
        WindowSeries(check_id, heads[(check_id, size)][0], heads[(check_id, size)][1], size,
                     [verdicts[s] for s in sorted(verdicts)])
        for (check_id, size), verdicts in latest.items()
    ]  # fmt: skip


def profile_spans(outcomes: Sequence[BatchOutcome]) -> list[ProfileSpan]:
    """Each profile's runs of consecutive batches (in batch order) during which it was active."""
    spans: list[ProfileSpan] = []
    open_: dict[str, list[Any]] = {}
    for o in outcomes:
        if o.min_event_time is None or o.max_event_time is None:
            continue
        active = set(o.active_profiles)
        for name in [n for n in open_ if n not in active]:
            start, end, count = open_.pop(name)
            spans.append(ProfileSpan(name, start, end, count))
        for name in o.active_profiles:
            if name in open_:
                run = open_[name]
                run[0], run[1], run[2] = (
                    min(run[0], o.min_event_time),
                    max(run[1], o.max_event_time),
                    run[2] + 1,
                )
            else:
                open_[name] = [o.min_event_time, o.max_event_time, 1]
    spans += [ProfileSpan(name, start, end, count) for name, (start, end, count) in open_.items()]
    return sorted(spans, key=lambda s: (s.profile, s.start))


def release_entries(log: ResultsLog) -> list[ReleaseEntry]:
    """The releases and discards of the log, by time."""
    entries = []
    for app_id, history in log.releases.items():
        started = history.started
        request = json.loads(started.request) if started and started.request else {}
        totals = (history.finished or {}).get(None, (0, 0))
        per_check = {c: n for c, (n, _) in (history.finished or {}).items() if c is not None}
        asked = request.get("request") or {}
        entries.append(
            ReleaseEntry(
                kind="release",
                app_id=app_id,
                at=started.at if started else None,
                by=request.get("by"),
                note=asked.get("note"),
                request=ReleaseRequest.from_dict(asked).describe() if asked else "",
                finished=history.finished is not None,
                rows=totals[0],
                still_failing=totals[1],
                per_check=per_check,
            )
        )
    for app_id, records in log.discards.items():
        start = next((r for r in records if r.status == "started"), None)
        request = json.loads(start.request) if start and start.request else {}
        finished = {r.check_id: r.deleted for r in records if r.status == "finished"}
        entries.append(
            ReleaseEntry(
                kind="discard",
                app_id=app_id,
                at=start.at if start else None,
                by=request.get("by"),
                note=request.get("note"),
                request=_discard_request(request),
                finished=bool(finished),
                rows=finished.get(None, 0),
                still_failing=0,
                per_check={c: n for c, n in finished.items() if c is not None},
            )
        )
    return sorted(entries, key=lambda e: e.at or datetime.min.replace(tzinfo=UTC))


def _discard_request(request: Mapping[str, Any]) -> str:
    parts = [f"older than {request['cutoff']}"] if request.get("cutoff") else []
    parts += [f"--check {c}" for c in request.get("checks") or ()]
    return " ".join(parts)


def maintenance_entries(outcomes: Sequence[BatchOutcome]) -> list[MaintenanceEntry]:
    """The maintenance runs the batches carry, by start."""
    runs = []
    for o in outcomes:
        m = o.maintenance
        if m is None:
            continue
        tables = [
            {"table": t.role, "files_after": t.files_after, "seconds": t.seconds, "error": t.error}
            for t in m.tables
        ]
        runs.append(MaintenanceEntry(m.started_at, m.seconds, o.batch_id, tables))
    return sorted(runs, key=lambda r: r.started_at)
