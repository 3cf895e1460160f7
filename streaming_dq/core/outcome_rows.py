"""The results table's rows and the outcomes they describe: ONE codec, written by the sink, read by the
exporter's follower (under Spark Connect the batches run on the server, and the client learns of them here).

A batch is one ``kind = "batch"`` row (its row counts), one row per check outcome (``row`` / ``aggregate``,
with an anomaly verdict's fields for a batch-scoped anomaly check), one per window verdict (``window``), and
one per table of the maintenance run made after the previous batch (``maintenance``, see
:func:`encode_outcome`). :func:`decode_outcomes` rebuilds the :class:`~streaming_dq.core.outcome.BatchOutcome`
of every batch among some rows; ``decode_outcomes(encode_outcome(o, ...))`` gives ``o`` back (what the rows
do not keep: a maintenance report's table paths and compaction details, and a window's ``in_baseline``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa

from streaming_dq.core.outcome import (
    BatchOutcome,
    CheckOutcome,
    MaintenanceReport,
    SchemaMessages,
    TableReport,
    WindowOutcome,
)
from streaming_dq.core.results_log import (
    DISCARD_KIND,
    MAINTENANCE_KIND,
    RELEASE_KIND,
    DiscardRecord,
    MaintenanceRecord,
    ReleaseRecord,
    decode_record,
    encode_records,
)

__all__ = [
    "DISCARD_KIND",
    "MAINTENANCE_KIND",
    "RELEASE_KIND",
    "RESULTS_SCHEMA",
    "VERDICT_COLUMNS",
    "ReleaseHistory",
    "ResultsLog",
    "decode_outcomes",
    "decode_release_rows",
    "encode_outcome",
    "finished_quarantine_counts",
    "results_table",
    "verdict_fields",
]

UTC_TIMESTAMP = pa.timestamp("us", tz="UTC")

#: The columns an anomaly verdict adds to a window's or a batch check's row (NULL for other checks).
VERDICT_COLUMNS: tuple[pa.Field, ...] = (
    pa.field("expected_value", pa.float64()),
    pa.field("band_low", pa.float64()),
    pa.field("band_high", pa.float64()),
    pa.field("score", pa.float64()),
    pa.field("history", pa.int64()),
    pa.field("reason", pa.string()),
)
_VERDICT_NAMES = tuple(f.name for f in VERDICT_COLUMNS)

#: One row per check per batch (and per window verdict), plus one ``kind = "batch"`` row per batch with its
#: row counts (check columns NULL): the results table alone tells what every batch did.
RESULTS_SCHEMA = pa.schema(
    [
        pa.field("gate", pa.string()),
        pa.field("batch_id", pa.int64()),
        pa.field("app_id", pa.string()),
        pa.field("check_id", pa.string()),
        pa.field("check_type", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("severity", pa.string()),
        pa.field("status", pa.string()),
        pa.field("violations", pa.int64()),
        pa.field("rows", pa.int64()),
        pa.field("raw_value", pa.float64()),
        pa.field("multiplier", pa.float64()),
        pa.field("adjusted_value", pa.float64()),
        pa.field("profiles", pa.list_(pa.string())),
        pa.field("regime", pa.list_(pa.string())),
        pa.field("event_time_min", UTC_TIMESTAMP),
        pa.field("event_time_max", UTC_TIMESTAMP),
        pa.field("validation_ts", UTC_TIMESTAMP),
        pa.field("window", pa.string()),
        pa.field("window_start", UTC_TIMESTAMP),
        pa.field("window_end", UTC_TIMESTAMP),
        pa.field("rows_passed", pa.int64()),
        pa.field("rows_quarantined", pa.int64()),
        pa.field("rows_warned", pa.int64()),
        pa.field("rows_malformed", pa.int64()),
        pa.field("rows_late", pa.int64()),
        pa.field("rows_null_event_time", pa.int64()),
        pa.field("duration_seconds", pa.float64()),
        *VERDICT_COLUMNS,
    ]
)


def verdict_fields(o: CheckOutcome | WindowOutcome) -> dict[str, Any]:
    """The columns an anomaly verdict adds to a row (None for every other check), by name."""
    return {name: getattr(o, name) for name in _VERDICT_NAMES}


def encode_outcome(
    outcome: BatchOutcome,
    *,
    app_id: str,
    validation_ts: datetime,
    maintenance: MaintenanceReport | None = None,
    windows: Sequence[WindowOutcome] | None = None,
) -> list[dict[str, Any]]:
    """The results rows of one committed batch.

    Args:
        outcome: The batch's outcome (its ``maintenance`` is not encoded: see ``maintenance``).
        app_id: The batch's app transaction id.
        validation_ts: When the batch was validated (every row carries it; the batch row with its duration).
        maintenance: The maintenance run after the PREVIOUS batch, written with this batch's rows (a reader
            learns of it one batch late); None: none to report.
        windows: The window verdicts to write (default: the outcome's).
    """
    head = {"gate": outcome.gate, "batch_id": outcome.batch_id, "app_id": app_id}
    times = {
        "event_time_min": outcome.min_event_time,
        "event_time_max": outcome.max_event_time,
        "validation_ts": validation_ts,
    }
    rows: list[dict[str, Any]] = [
        {
            **head,
            "kind": "batch",
            "status": "committed",
            "rows": outcome.rows_in,
            "profiles": list(outcome.active_profiles),
            **times,
            "rows_passed": outcome.rows_passed,
            "rows_quarantined": outcome.rows_quarantined,
            "rows_warned": outcome.rows_warned,
            "rows_malformed": outcome.rows_malformed,
            "rows_late": outcome.rows_late,
            "rows_null_event_time": outcome.rows_null_event_time,
            "duration_seconds": outcome.duration_seconds,
            "reason": encode_schemas(outcome.schemas),
        }
    ]
    rows += [
        {
            **head,
            "check_id": c.check_id,
            "check_type": c.check_type,
            "kind": c.kind,
            "severity": c.severity,
            "status": c.status,
            "violations": c.violations,
            "rows": outcome.rows_in,
            "raw_value": c.raw_value,
            "multiplier": c.multiplier,
            "adjusted_value": c.adjusted_value,
            "profiles": list(c.profiles),
            "regime": list(c.regime),
            **times,
            **verdict_fields(c),
        }
        for c in outcome.checks
    ]
    rows += [window_row(head, w, times) for w in (outcome.windows if windows is None else windows)]
    if maintenance is not None:
        rows += maintenance_rows(head, maintenance)
    return rows


def window_row(head: Mapping[str, Any], w: WindowOutcome, times: Mapping[str, Any]) -> dict[str, Any]:
    """The row of one window verdict (``kind = "window"``); ``head`` is gate, batch id and app id."""
    return {
        **head,
        "check_id": w.check_id,
        "check_type": w.check_type,
        "kind": "window",
        "severity": w.severity,
        "status": w.status,
        "raw_value": w.raw_value,
        "multiplier": w.multiplier,
        "adjusted_value": w.adjusted_value,
        "profiles": list(w.profiles),
        "regime": list(w.profiles),
        **times,
        "window": w.window,
        "window_start": w.window_start,
        "window_end": w.window_end,
        **verdict_fields(w),
    }


def maintenance_rows(head: Mapping[str, Any], report: MaintenanceReport) -> list[dict[str, Any]]:
    """A maintenance run as rows, one :class:`~streaming_dq.core.results_log.MaintenanceRecord` per table;
    ``head`` is gate, batch id and app id."""
    return encode_records(
        MaintenanceRecord(
            gate=head["gate"],
            app_id=head["app_id"],
            batch_id=head["batch_id"],
            table=t.role,
            status="failed" if t.error is not None else "maintained",
            files_after=t.files_after,
            table_seconds=t.seconds,
            started_at=report.started_at,
            run_seconds=report.seconds,
            error=t.error,
        )
        for t in report.tables
    )


#: Rows by check id (None: the totals) -> (released, still failing).
ReleaseCounts = dict[str | None, tuple[int, int]]


@dataclass
class ReleaseHistory:
    """One release as its record tells it: the ``started`` row, each chunk's counts, the finished counts
    (None while unfinished)."""

    started: ReleaseRecord | None = None
    chunks: dict[int, ReleaseCounts] = field(default_factory=dict)
    finished: ReleaseCounts | None = None


@dataclass(frozen=True)
class ResultsLog:
    """The read model of a gate's results rows: the committed batches' outcomes, the releases and the
    discards' records by their app id (a ``started`` row, committed under ``<app id>/start``, filed with
    its release or discard)."""

    outcomes: tuple[BatchOutcome, ...]
    releases: dict[str, ReleaseHistory]
    discards: dict[str, tuple[DiscardRecord, ...]]

    @classmethod
    def of(cls, rows: Iterable[Mapping[str, Any]]) -> ResultsLog:
        rows = list(rows)
        releases: dict[str, ReleaseHistory] = {}
        discards: dict[str, list[DiscardRecord]] = defaultdict(list)
        for row in rows:
            record = decode_record(row)
            if isinstance(record, ReleaseRecord):
                entry = releases.setdefault(record.release_id, ReleaseHistory())
                counts = (record.released, record.still_failing)
                if record.status == "started":
                    entry.started = record
                elif record.status == "chunk" and record.chunk is not None:
                    entry.chunks.setdefault(record.chunk, {})[record.check_id] = counts
                elif record.status == "finished":
                    entry.finished = {**(entry.finished or {}), record.check_id: counts}
            elif isinstance(record, DiscardRecord):
                discards[record.discard_id].append(record)
        return cls(tuple(decode_outcomes(rows)), releases, {k: tuple(v) for k, v in discards.items()})

    def finished_quarantine_counts(self) -> dict[str, tuple[str, dict[str | None, int]]]:
        """The finished releases and discards: app id -> (kind, rows released or deleted by check id, None
        for the total)."""
        out: dict[str, tuple[str, dict[str | None, int]]] = {}
        for app_id, release in self.releases.items():
            if release.finished is not None:
                out[app_id] = (RELEASE_KIND, {c: released for c, (released, _) in release.finished.items()})
        for app_id, records in self.discards.items():
            finished = {r.check_id: r.deleted for r in records if r.status == "finished"}
            if finished:
                out[app_id] = (DISCARD_KIND, finished)
        return out


def decode_release_rows(rows: Iterable[Mapping[str, Any]]) -> dict[str, ReleaseHistory]:
    """The releases among results rows, by app id (:attr:`ResultsLog.releases`)."""
    return ResultsLog.of(rows).releases


def finished_quarantine_counts(
    rows: Iterable[Mapping[str, Any]],
) -> dict[str, tuple[str, dict[str | None, int]]]:
    """The finished releases and discards among results rows (:meth:`ResultsLog.finished_quarantine_counts`)."""
    return ResultsLog.of(rows).finished_quarantine_counts()


def results_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Rows as an Arrow table of :data:`RESULTS_SCHEMA` (a column a row lacks is NULL)."""
    return pa.Table.from_pylist(list(rows), schema=RESULTS_SCHEMA)


def decode_outcomes(rows: Iterable[Mapping[str, Any]]) -> list[BatchOutcome]:
    """Rebuild the :class:`BatchOutcome` of every batch whose ``kind = "batch"`` row is among ``rows``, by
    batch id; its ``maintenance`` is the run its ``maintenance`` rows carry."""
    by_batch: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["kind"] in (RELEASE_KIND, DISCARD_KIND):  # a release's or a discard's record, not a batch's
            continue
        by_batch[int(row["batch_id"])].append(row)
    outcomes = []
    for batch_id in sorted(by_batch):
        group = by_batch[batch_id]
        summary = next((r for r in group if r["kind"] == "batch"), None)
        if summary is None:  # a table written before the gate recorded batch rows
            continue
        duration = float(summary.get("duration_seconds") or 0.0)
        committed = summary["validation_ts"] + timedelta(seconds=duration)
        outcomes.append(
            BatchOutcome(
                gate=summary["gate"],
                batch_id=batch_id,
                status="committed",
                rows_in=int(summary.get("rows") or 0),
                rows_passed=int(summary.get("rows_passed") or 0),
                rows_quarantined=int(summary.get("rows_quarantined") or 0),
                rows_warned=int(summary.get("rows_warned") or 0),
                rows_malformed=int(summary.get("rows_malformed") or 0),
                rows_late=int(summary.get("rows_late") or 0),
                rows_null_event_time=int(summary.get("rows_null_event_time") or 0),
                duration_seconds=duration,
                committed_at=committed.timestamp(),
                min_event_time=summary.get("event_time_min"),
                max_event_time=summary.get("event_time_max"),
                active_profiles=tuple(summary.get("profiles") or ()),
                checks=tuple(_check(r) for r in group if r["kind"] in ("row", "aggregate")),
                windows=tuple(_window(r) for r in group if r["kind"] == "window"),
                maintenance=_maintenance([r for r in group if r["kind"] == MAINTENANCE_KIND]),
                schemas=decode_schemas(summary.get("reason")),
            )
        )
    return outcomes


def encode_schemas(schemas: Sequence[SchemaMessages]) -> str | None:
    """A batch row's ``reason``: the messages per schema id of a registry-framed source, as JSON (None: the
    source is not framed)."""
    if not schemas:
        return None
    return json.dumps({"schemas": [[s.topic, s.schema_id, s.verdict, s.messages] for s in schemas]})


def decode_schemas(reason: str | None) -> tuple[SchemaMessages, ...]:
    """What :func:`encode_schemas` wrote (a batch row without it: none)."""
    if not reason:
        return ()
    return tuple(SchemaMessages(t, i, v, int(n)) for t, i, v, n in json.loads(reason)["schemas"])


def _decoded_verdict(row: Mapping[str, Any]) -> dict[str, Any]:
    return {name: row.get(name) for name in _VERDICT_NAMES}


def _check(row: Mapping[str, Any]) -> CheckOutcome:
    return CheckOutcome(
        check_id=row["check_id"],
        check_type=row["check_type"],
        kind=row["kind"],
        severity=row["severity"],
        status=row["status"],
        violations=row.get("violations"),
        raw_value=row.get("raw_value"),
        adjusted_value=row.get("adjusted_value"),
        multiplier=float(row["multiplier"] if row.get("multiplier") is not None else 1.0),
        profiles=tuple(row.get("profiles") or ()),
        regime=tuple(row.get("regime") or ()),
        **_decoded_verdict(row),
    )


def _window(row: Mapping[str, Any]) -> WindowOutcome:
    return WindowOutcome(
        check_id=row["check_id"],
        check_type=row["check_type"],
        window=row["window"],
        window_start=row["window_start"],
        window_end=row["window_end"],
        severity=row["severity"],
        status=row["status"],
        raw_value=row.get("raw_value"),
        adjusted_value=row.get("adjusted_value"),
        multiplier=float(row["multiplier"] if row.get("multiplier") is not None else 1.0),
        profiles=tuple(row.get("profiles") or ()),
        **_decoded_verdict(row),
    )


def _maintenance(rows: list[Mapping[str, Any]]) -> MaintenanceReport | None:
    """The maintenance run a batch's rows carry; the tables' paths are not stored, only their roles."""
    records = [r for r in map(decode_record, rows) if isinstance(r, MaintenanceRecord)]
    if not records:
        return None
    tables = tuple(
        TableReport(
            role=r.table,
            uri="",
            files_after=r.files_after,
            seconds=r.table_seconds,
            error=r.error if r.status == "failed" else None,
        )
        for r in records
    )
    first = records[0]
    assert first.started_at is not None
    return MaintenanceReport(first.started_at, tables, first.run_seconds)
