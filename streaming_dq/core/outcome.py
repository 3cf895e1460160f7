"""What the gate decided for one micro-batch, as plain values.

These frozen records are the contract between the sink (which produces them after its commits) and the
consumers that never touch Spark: the Prometheus exporter, the console progress lines and the CLI summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from datetime import date, datetime, timedelta
from typing import Literal

CheckKind = Literal["row", "aggregate", "window"]
CheckStatus = Literal["passed", "failed", "skipped", "provisional"]
BatchStatus = Literal["committed", "skipped_replay"]


@dataclass(frozen=True)
class AnomalyVerdictFields:
    """What an anomaly check's verdict adds to a check or window outcome (None for every other check).

    Keyword-only, so the outcomes keep their positional fields.

    Attributes:
        expected_value: The baseline's centre.
        band_low: The band's lower edge (None: unbounded below).
        band_high: The band's upper edge (None: unbounded above).
        score: How far off the centre, in the band's unit.
        history: How many past values the baseline held.
        reason: Why the check was skipped (e.g. not enough history), else None.
    """

    _: KW_ONLY
    expected_value: float | None = None
    band_low: float | None = None
    band_high: float | None = None
    score: float | None = None
    history: int | None = None
    reason: str | None = None


@dataclass(frozen=True)
class CheckOutcome(AnomalyVerdictFields):
    """One check's verdict in one batch (or one window, for window-scoped checks).

    Attributes:
        check_id: The check's id (bounded by config, so usable as a label).
        check_type: The registered check name, e.g. ``null-check``.
        kind: ``row``, ``aggregate`` or ``window``.
        severity: Effective severity after profile overrides (``critical``/``warning``).
        status: ``passed``, ``failed``, ``skipped`` (disabled by a profile) or ``provisional`` (open window).
        violations: Rows that violated a row check in this batch (None for aggregates).
        raw_value: The aggregate's metric before the profile multiplier (None for row checks).
        adjusted_value: ``raw_value * multiplier``: the value compared with the threshold.
        multiplier: The product of the active profiles' multipliers for this check.
        profiles: Names of the profiles whose rules applied to this check.
        regime: Names of all profiles active for the rows this verdict covers (empty: no profile).

    A batch-scoped anomaly check's verdict also carries ``expected_value``, ``band_low``, ``band_high``,
    ``score``, ``history`` and ``reason`` (as :class:`WindowOutcome` does).
    """

    check_id: str
    check_type: str
    kind: CheckKind
    severity: str
    status: CheckStatus
    violations: int | None = None
    raw_value: float | None = None
    adjusted_value: float | None = None
    multiplier: float = 1.0
    profiles: tuple[str, ...] = ()
    regime: tuple[str, ...] = ()


@dataclass(frozen=True)
class WindowOutcome(AnomalyVerdictFields):
    """The verdict of a window-scoped check over one closed (or still open) event-time window.

    An anomaly check's verdict also carries ``expected_value``, the band (``band_low``/``band_high``; None:
    unbounded on that side), ``score`` (how far off, in the band's unit), ``history`` (the baseline's size),
    ``reason`` (why it was skipped) and ``in_baseline`` (whether later windows may compare with this one).
    """

    check_id: str
    check_type: str
    window: str
    window_start: datetime
    window_end: datetime
    severity: str
    status: CheckStatus
    raw_value: float | None
    adjusted_value: float | None
    multiplier: float = 1.0
    profiles: tuple[str, ...] = ()
    in_baseline: bool | None = None


@dataclass(frozen=True)
class KeysState:
    """The keys table after a batch (``unique-key-check`` with a horizon, docs/streaming.md).

    Attributes:
        keys: Rows in the keys table (one per check, key and batch the key occurred in).
        oldest: The oldest event date it still holds (None: empty).
        horizon: The longest horizon of the gate's checks across batches.
        late: Per check, the batch's rows too late to judge (quarantined or passed, as its ``late`` says).
    """

    keys: int
    oldest: date | None
    horizon: timedelta
    late: Mapping[str, int] = field(default_factory=dict)


#: What a registry-framed source made of a schema id's messages: ``readable`` (the writer schema was found
#: and resolves to the reader schema; a corrupt payload among them is still quarantined, as a malformed row),
#: or why none of them could be read.
SchemaVerdict = Literal[
    "readable", "unknown", "incompatible", "wrong-type", "unreachable", "unframed", "tombstone"
]


@dataclass(frozen=True)
class SchemaMessages:
    """A batch's messages of one topic framed with one schema id (``value.format: avro-registry``).

    Attributes:
        topic: The Kafka topic.
        schema_id: The id the frame named (None: no frame, or no value).
        verdict: What became of them (:data:`SchemaVerdict`).
        messages: How many.
    """

    topic: str
    schema_id: int | None
    verdict: SchemaVerdict
    messages: int


@dataclass(frozen=True)
class BatchOutcome:
    """Everything the gate did with one micro-batch.

    ``status == "skipped_replay"`` means every target had already committed this batch id for this app id:
    nothing was written and nothing must be counted again. ``maintenance`` is the maintenance run the gate
    made after the batch's commits, when one was due; ``keys`` the keys table after them (checks across
    batches only); ``schemas`` the messages per schema id of a registry-framed source.
    """

    gate: str
    batch_id: int
    status: BatchStatus
    rows_in: int = 0
    rows_passed: int = 0
    rows_quarantined: int = 0
    rows_warned: int = 0
    rows_malformed: int = 0
    rows_late: int = 0
    rows_null_event_time: int = 0
    duration_seconds: float = 0.0
    committed_at: float = 0.0
    min_event_time: datetime | None = None
    max_event_time: datetime | None = None
    active_profiles: tuple[str, ...] = ()
    checks: tuple[CheckOutcome, ...] = field(default_factory=tuple)
    windows: tuple[WindowOutcome, ...] = field(default_factory=tuple)
    maintenance: MaintenanceReport | None = None
    keys: KeysState | None = None
    schemas: tuple[SchemaMessages, ...] = ()


@dataclass(frozen=True)
class TableReport:
    """What maintenance did to one table.

    Attributes:
        role: ``pass``, ``quarantine``, ``results`` or ``metrics``.
        uri: The table.
        files_before: Data files before.
        files_after: Data files after.
        compacted: Files rewritten and files written by the compaction (None: not compacted).
        checkpointed: Whether a log checkpoint was written.
        vacuumed: Files a vacuum deleted (or listed, in a dry run); None: no vacuum.
        dry_run: Whether the vacuum only listed.
        rolled_up: Metrics rows before and after the roll-up (None: not rolled up).
        forgotten: Keys dropped for being older than their check's horizon needs (the keys table; None: not
            pruned).
        log_retention: The ``delta.logRetentionDuration`` this run set (None: left as it was).
        seconds: Time spent on the table.
        error: Why the table's maintenance failed (the other tables are still maintained).
    """

    role: str
    uri: str
    files_before: int = 0
    files_after: int = 0
    compacted: tuple[int, int] | None = None
    checkpointed: bool = False
    vacuumed: int | None = None
    dry_run: bool = False
    rolled_up: tuple[int, int] | None = None
    forgotten: int | None = None
    log_retention: timedelta | None = None
    seconds: float = 0.0
    error: str | None = None

    def line(self) -> str:
        """One line for logs and the CLI: ``pass /data/p: 412 -> 3 files (compacted 412 into 3), checkpoint``."""
        parts = [f"{self.files_before} -> {self.files_after} files"]
        if self.compacted is not None:
            removed, added = self.compacted
            parts.append(f"compacted {removed} into {added}" if removed else "nothing to compact")
        if self.log_retention is not None:
            parts.append(f"log retention set to {duration_text(self.log_retention)}")
        if self.checkpointed:
            parts.append("checkpoint")
        if self.rolled_up is not None:
            before, after = self.rolled_up
            parts.append(f"rolled up {before} rows into {after}" if before != after else "nothing to roll up")
        if self.forgotten is not None:
            parts.append(f"forgot {self.forgotten} keys beyond the horizon")
        if self.vacuumed is not None:
            verb = "would delete" if self.dry_run else "vacuumed"
            parts.append(f"{verb} {self.vacuumed} files")
        if self.error is not None:
            parts.append(f"FAILED: {self.error}")
        return f"{self.role} {self.uri}: " + ", ".join(parts) + f" ({self.seconds:.2f} s)"


@dataclass(frozen=True)
class MaintenanceReport:
    """One maintenance run over a gate's tables."""

    started_at: datetime
    tables: tuple[TableReport, ...] = field(default_factory=tuple)
    seconds: float = 0.0
    batch_id: int | None = None

    @property
    def failed(self) -> tuple[TableReport, ...]:
        return tuple(t for t in self.tables if t.error is not None)


def duration_text(delta: timedelta) -> str:
    """``7 days``, ``2 hours``, ``90 seconds``: a duration in its largest whole unit."""
    seconds = delta.total_seconds()
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
        if seconds >= size and (seconds % size == 0 or size == 3600):
            amount = seconds / size
            return f"{amount:g} {unit}" + ("" if amount == 1 else "s")
    return f"{seconds:g} seconds"
