"""What a gate's report says (see :mod:`.reading` for where it comes from): the batches, each check's
violations and pass rate per batch and per day, the window verdicts, the active profiles over event time, the
quarantine's top reasons with sample rows, the releases, discards and maintenance runs, and the configuration;
and its ``--json`` twin (:func:`report_json`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any

from streaming_dq.release.browse import MASK

__all__ = [
    "BatchPoint", "CheckDay", "CheckSeries", "DayRows", "GateReport", "MaintenanceEntry", "ProfileSpan", "QuarantineReason",
    "QuarantineSummary", "ReleaseEntry", "Repeat", "ReportOptions", "WindowSeries", "WindowVerdict", "report_json",
]  # fmt: skip


@dataclass(frozen=True)
class ReportOptions:
    """What to put in a report.

    Attributes:
        since: Only batches, verdicts, runs and quarantined rows validated at or after this time (None: all).
        mask: Columns of the quarantined rows shown as ``***`` (and their raw text, which may hold them).
        samples: Sample rows per quarantine reason.
        top: Quarantine reasons listed.
    """

    since: datetime | None = None
    mask: tuple[str, ...] = ()
    samples: int = 3
    top: int = 10


@dataclass(frozen=True)
class BatchPoint:
    """One committed batch."""

    batch_id: int
    validated_at: datetime
    day: date
    event_time_min: datetime | None
    event_time_max: datetime | None
    rows: int
    passed: int
    quarantined: int
    warned: int
    malformed: int
    late: int
    seconds: float
    profiles: tuple[str, ...]


@dataclass(frozen=True)
class DayRows:
    """The rows the pass and quarantine tables hold for one day of event time (the gate's time zone)."""

    day: date | None  # None: rows without an event time
    passed: int
    quarantined: int

    @property
    def rows(self) -> int:
        return self.passed + self.quarantined


@dataclass(frozen=True)
class CheckDay:
    """One check on one day: batches judged and failed, and for a row check its violations over the rows."""

    day: date
    batches: int
    failed: int
    violations: int
    rows: int

    @property
    def pass_rate(self) -> float:
        """The share of rows that passed (a row check), or of batches (an aggregate check)."""
        if self.rows:
            return 1.0 - self.violations / self.rows
        return 1.0 - self.failed / self.batches if self.batches else 1.0


@dataclass(frozen=True)
class CheckSeries:
    """One batch-scoped check over the report's batches: per batch (batch id, status, violations, value) and
    per day."""

    check_id: str
    check_type: str
    kind: str
    severity: str
    batch_ids: list[int]
    statuses: list[str]
    violations: list[int | None]
    values: list[float | None]
    days: list[CheckDay]

    @property
    def failed(self) -> int:
        return sum(s == "failed" for s in self.statuses)


@dataclass(frozen=True)
class WindowVerdict:
    """The latest verdict of one event-time window."""

    start: datetime
    end: datetime
    status: str
    value: float | None
    expected: float | None
    band_low: float | None
    band_high: float | None
    score: float | None
    reason: str | None
    batch_id: int


@dataclass(frozen=True)
class WindowSeries:
    """One window-scoped check's windows of one size, by start."""

    check_id: str
    check_type: str
    severity: str
    window: str
    verdicts: list[WindowVerdict]

    @property
    def anomaly(self) -> bool:
        return any(v.expected is not None or v.reason for v in self.verdicts)


@dataclass(frozen=True)
class ProfileSpan:
    """A profile active over consecutive batches: from the first one's earliest event time to the last one's
    latest."""

    profile: str
    start: datetime
    end: datetime
    batches: int


@dataclass(frozen=True)
class QuarantineReason:
    """Rows quarantined for one check (a row counts once per check it failed), with sample rows."""

    check_id: str
    check: str
    severity: str
    rows: int
    samples: list[dict[str, Any]]


@dataclass(frozen=True)
class Repeat:
    """A row quarantined as a key seen in an earlier micro-batch, with the pointer to the key's first
    occurrence (``_dq_first_seen``)."""

    check_id: str
    key: str
    batch_id: int
    first_batch_id: int | None
    first_event_time: datetime | None
    origin: str | None


@dataclass(frozen=True)
class QuarantineSummary:
    """The quarantine table's rows in the report's time span, by state and by reason."""

    rows: int
    states: dict[str, int]
    reasons: list[QuarantineReason]
    other_reasons: int
    columns: list[str]
    masked: list[str]
    #: Rows quarantined as keys seen in an earlier micro-batch (the latest, at most ``top``), and how many in all.
    repeats: list[Repeat] = field(default_factory=list)
    repeats_total: int = 0
    #: Rows quarantined as keys seen earlier in their own micro-batch.
    repeats_in_batch: int = 0


@dataclass(frozen=True)
class ReleaseEntry:
    """A release or a discard: who ran it, when, what it asked, how many rows it released or deleted."""

    kind: str
    app_id: str
    at: datetime | None
    by: str | None
    note: str | None
    request: str
    finished: bool
    rows: int
    still_failing: int
    per_check: dict[str, int]


@dataclass(frozen=True)
class MaintenanceEntry:
    """One maintenance run: its tables' files after it, seconds and errors."""

    started_at: datetime
    seconds: float
    batch_id: int
    tables: list[dict[str, Any]]


@dataclass(frozen=True)
class GateReport:
    """Everything one gate's report shows (see the module)."""

    gate: str
    timezone: str
    generated_at: datetime
    since: datetime | None
    tables: dict[str, str]
    batches: list[BatchPoint]
    checks: list[CheckSeries]
    windows: list[WindowSeries]
    profiles: list[ProfileSpan]
    quarantine: QuarantineSummary | None
    releases: list[ReleaseEntry]
    maintenance: list[MaintenanceEntry]
    config_text: str
    #: Each observable check's metric over the stream's life, from the metrics table (``streaming-dq metrics``):
    #: check, raw, adjusted, multiplier, profiles. Not narrowed by ``since``: the table accumulates.
    lifetime: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Rows per day of their own event time, as the pass and quarantine tables hold them now (a batch's rows
    #: may span days; releases and discards have moved some since).
    rows_by_day: list[DayRows] = field(default_factory=list)

    @property
    def days(self) -> list[date]:
        return sorted({b.day for b in self.batches})

    def totals(self) -> dict[str, int]:
        keys = ("rows", "passed", "quarantined", "warned", "malformed", "late")
        return {k: sum(getattr(b, k) for b in self.batches) for k in keys}


def _json_default(value: object) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, Mapping):
        return dict(value)
    return str(value)


def report_json(reports: Sequence[GateReport]) -> str:
    """The ``--json`` twin of a report: every gate's report as data (times ISO 8601, UTC unless local days)."""
    gates = []
    for r in reports:
        data = asdict(r)
        for check, series in zip(data["checks"], r.checks, strict=True):
            for day, tallied in zip(check["days"], series.days, strict=True):
                day["pass_rate"] = tallied.pass_rate
        data["totals"] = r.totals()
        gates.append(data)
    return json.dumps({"gates": gates, "mask": MASK}, default=_json_default, indent=1)
