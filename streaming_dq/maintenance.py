"""Keeping a gate's tables healthy for months: compaction, log checkpoints, vacuum, the metrics roll-up.

Every micro-batch appends at least one file and one commit to each of the gate's tables. Left alone, a table
written every 10 s holds 8,640 more files a day, downstream reads slow down with the file count, and the
metrics table a restart reads back grows without end. A :class:`MaintenancePolicy` says what to do and how
often; :func:`maintain` does it for a set of tables, one :class:`TableReport` per table.

The gate runs it itself between batches (after a batch's last commit, before the next batch starts), so it
never races its own appends, and ``streaming-dq maintain CONFIG`` runs it by hand. None of it changes what a
replay decides: a compaction commits with ``dataChange = false`` and keeps the table's application
transactions (the txn ids the gate reads to skip a replayed batch), a checkpoint carries them, and a vacuum
deletes only files no version younger than its retention references, never with a retention shorter than
the table's ``delta.deletedFileRetentionDuration`` (7 days unless the table says otherwise).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from streaming_dq.exceptions import ConfigError
from streaming_dq.tables.targets import LOG_RETENTION_PROPERTY

if TYPE_CHECKING:
    from streaming_dq.metrics.store import MetricsStore
    from streaming_dq.tables import DeltaTarget, TableWriter

__all__ = [
    "Maintainer",
    "MaintenancePolicy",
    "MaintenanceReport",
    "TableReport",
    "check_log_retention",
    "check_retention",
    "maintain",
]

logger = logging.getLogger("streaming_dq.maintenance")

#: The tables whose rows a user may ask to Z-order (the others are the gate's own bookkeeping).
ZORDER_ROLES = ("pass", "quarantine")


@dataclass(frozen=True)
class MaintenancePolicy:
    """What the gate does to its tables between batches, and how often.

    Attributes:
        every_batches: Run after this many committed batches (counted from the gate's start).
        every: Or after this much time since the last run (or the gate's start); the first of the two.
        compact: Rewrite small files into files of about ``target_file_size``.
        target_file_size: Bytes per file after a compaction (None: the writer's default, 100 MiB for
            delta-rs, 1 GiB for Spark's writer).
        z_order: Columns to Z-order the pass and quarantine tables by (a Z-order rewrites the whole table
            every run, a compaction only the small files: choose it for tables read by those columns).
        checkpoint: Write a log checkpoint after a compaction (delta-rs; Spark's writer writes one every
            ``delta.checkpointInterval`` commits by itself) and remove log files older than
            ``delta.logRetentionDuration`` (30 days by default).
        log_retention: Set the tables' ``delta.logRetentionDuration`` to this (None: leave it). Every
            commit and every table load lists the log directory; on a local or network file system that
            listing reads every file the log keeps (about 17 ms per 1,000 log files per commit, measured),
            and a table written every 10 s keeps 259,200 of them under the 30-day default. It may not be
            shorter than the table's ``delta.deletedFileRetentionDuration``: both bound how far back a
            time-travel read or a downstream stream can start.
        vacuum_retention: Delete files unreferenced for longer than this (None: never; it may not be shorter
            than the table's ``delta.deletedFileRetentionDuration``).
        vacuum_dry_run: List what a vacuum would delete instead of deleting it.
        roll_up_after: Fold metrics-table rows older than this into one row per key (None: never).

    Example:
        >>> MaintenancePolicy(every_batches=500).due(batches=500, seconds=0.0)
        True
    """

    every_batches: int | None = None
    every: timedelta | None = None
    compact: bool = True
    target_file_size: int | None = None
    z_order: tuple[str, ...] = ()
    checkpoint: bool = True
    vacuum_retention: timedelta | None = None
    vacuum_dry_run: bool = False
    roll_up_after: timedelta | None = None
    log_retention: timedelta | None = None

    def __post_init__(self) -> None:
        if self.every_batches is not None and self.every_batches < 1:
            raise ConfigError("must be at least 1 batch", field_path="maintenance.every")
        if self.every is not None and self.every <= timedelta(0):
            raise ConfigError("must be a positive duration", field_path="maintenance.every")
        if self.target_file_size is not None and self.target_file_size < 1024 * 1024:
            raise ConfigError("must be at least 1 MiB", field_path="maintenance.target-file-size")
        if self.vacuum_retention is not None and self.vacuum_retention % timedelta(hours=1):
            raise ConfigError("must be whole hours", field_path="maintenance.vacuum.retention")
        if self.roll_up_after is not None and self.roll_up_after <= timedelta(0):
            raise ConfigError("must be a positive duration", field_path="maintenance.roll-up-after")
        if self.log_retention is not None and (
            self.log_retention <= timedelta(0) or self.log_retention % timedelta(seconds=1)
        ):
            raise ConfigError("must be a positive number of seconds", field_path="maintenance.log-retention")

    @property
    def scheduled(self) -> bool:
        """Whether the gate runs it by itself (``every`` given)."""
        return self.every_batches is not None or self.every is not None

    def due(self, *, batches: int, seconds: float) -> bool:
        """Whether a run is due after ``batches`` committed batches and ``seconds`` since the last run."""
        if self.every_batches is not None and batches >= self.every_batches:
            return True
        return self.every is not None and batches > 0 and seconds >= self.every.total_seconds()


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
            parts.append(f"log retention set to {_text(self.log_retention)}")
        if self.checkpointed:
            parts.append("checkpoint")
        if self.rolled_up is not None:
            before, after = self.rolled_up
            parts.append(f"rolled up {before} rows into {after}" if before != after else "nothing to roll up")
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


def check_retention(writer: TableWriter, target: DeltaTarget, retention: timedelta) -> timedelta:
    """Refuse a vacuum retention shorter than the table's safe minimum; return that minimum.

    Raises:
        ConfigError: ``retention`` is shorter than :meth:`TableWriter.safe_retention` (named in the message).
    """
    minimum = writer.safe_retention(target)
    if retention < minimum:
        raise ConfigError(
            f"{_text(retention)} is shorter than {_text(minimum)}, the safe minimum of {target.uri} (its "
            "delta.deletedFileRetentionDuration): a shorter vacuum could delete files that a time-travel read "
            "or a downstream stream still behind needs",
            field_path="maintenance.vacuum.retention",
        )
    return minimum


def check_log_retention(writer: TableWriter, target: DeltaTarget, retention: timedelta) -> None:
    """Refuse a log retention shorter than the table's ``delta.deletedFileRetentionDuration``.

    Raises:
        ConfigError: It is shorter (the message names the table and its minimum).
    """
    minimum = writer.safe_retention(target)
    if retention < minimum:
        raise ConfigError(
            f"{_text(retention)} is shorter than {_text(minimum)}, the delta.deletedFileRetentionDuration of "
            f"{target.uri}: a time-travel read or a downstream stream could still need the log files it would "
            "remove (lower the table's delta.deletedFileRetentionDuration first if that is meant)",
            field_path="maintenance.log-retention",
        )


def _text(delta: timedelta) -> str:
    seconds = delta.total_seconds()
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
        if seconds >= size and (seconds % size == 0 or size == 3600):
            amount = seconds / size
            return f"{amount:g} {unit}" + ("" if amount == 1 else "s")
    return f"{seconds:g} seconds"


def _interval(delta: timedelta) -> str:
    return f"interval {int(delta.total_seconds())} seconds"


def maintain(
    writer: TableWriter,
    targets: Mapping[str, DeltaTarget],
    policy: MaintenancePolicy,
    *,
    metrics: tuple[MetricsStore, str] | None = None,
    now: datetime | None = None,
    batch_id: int | None = None,
) -> MaintenanceReport:
    """Maintain every table in ``targets`` (by role) under ``policy``; one table's failure does not stop the
    others, and is in its report (and logged).

    Args:
        writer: The gate's writer back-end.
        targets: The tables by role (``pass``, ``quarantine``, ``results``, ``metrics``).
        policy: What to do.
        metrics: The metrics store and the gate's name, to roll up (role ``metrics``).
        now: The clock for the roll-up cut-off (default: now, UTC).
        batch_id: The batch after which it runs (for logs), None when run by hand.

    Raises:
        ConfigError: The vacuum retention is below a table's safe minimum (checked for every table first).
    """
    if policy.vacuum_retention is not None:
        for target in targets.values():
            check_retention(writer, target, policy.vacuum_retention)
    if policy.log_retention is not None:
        for target in targets.values():
            check_log_retention(writer, target, policy.log_retention)
    started, clock = datetime.now(UTC), time.monotonic()
    after = "by hand" if batch_id is None else f"after batch {batch_id}"
    logger.info("maintenance %s: %d table(s)", after, len(targets))
    reports = [
        _maintain_one(writer, role, target, policy, metrics if role == "metrics" else None, now or started)
        for role, target in targets.items()
    ]
    report = MaintenanceReport(started, tuple(reports), time.monotonic() - clock, batch_id)
    for table in report.tables:
        (logger.error if table.error else logger.info)("maintenance: %s", table.line())
    return report


def _maintain_one(
    writer: TableWriter,
    role: str,
    target: DeltaTarget,
    policy: MaintenancePolicy,
    metrics: tuple[MetricsStore, str] | None,
    now: datetime,
) -> TableReport:
    clock = time.monotonic()
    done: dict[str, object] = {}
    files_before = 0
    try:
        files_before = writer.file_count(target)
        if metrics is not None and policy.roll_up_after is not None:
            store, gate = metrics
            done["rolled_up"] = store.roll_up(gate, before=now - policy.roll_up_after)
        if policy.compact:
            z_order = policy.z_order if role in ZORDER_ROLES else ()
            c = writer.compact(target, target_size=policy.target_file_size, z_order=z_order)
            done["compacted"] = (c.files_removed, c.files_added)
        if policy.log_retention is not None and writer.log_retention(target) != policy.log_retention:
            writer.set_properties(target, {LOG_RETENTION_PROPERTY: _interval(policy.log_retention)})
            done["log_retention"] = policy.log_retention
        if policy.checkpoint:
            done["checkpointed"] = writer.checkpoint(target)
        if policy.vacuum_retention is not None:
            deleted = writer.vacuum(target, policy.vacuum_retention, dry_run=policy.vacuum_dry_run)
            done |= {"vacuumed": len(deleted), "dry_run": policy.vacuum_dry_run}
        files_after = writer.file_count(target)
    except Exception as exc:  # reported per table (and logged by maintain); the next run retries
        logger.debug("maintenance of %s failed", target.uri, exc_info=True)
        return TableReport(
            role, target.uri, files_before, files_before, seconds=time.monotonic() - clock,
            error=f"{type(exc).__name__}: {exc}", **done,  # type: ignore[arg-type]
        )  # fmt: skip
    return TableReport(
        role,
        target.uri,
        files_before,
        files_after,
        seconds=time.monotonic() - clock,
        **done,  # type: ignore[arg-type]
    )


class Maintainer:
    """The gate's schedule: counts committed batches and time, runs :func:`maintain` when due.

    Args:
        policy: The policy (``policy.scheduled`` must be true for it ever to run).
        clock: Monotonic seconds (for tests).
    """

    def __init__(self, policy: MaintenancePolicy, *, clock: Callable[[], float] | None = None) -> None:
        self.policy = policy
        self._clock = clock or time.monotonic
        self.batches = 0
        self.last_run = self._clock()
        self.last_report: MaintenanceReport | None = None

    def committed(self) -> bool:
        """Count one committed batch; whether a run is due now."""
        self.batches += 1
        return self.policy.due(batches=self.batches, seconds=self._clock() - self.last_run)

    def run(
        self,
        writer: TableWriter,
        targets: Mapping[str, DeltaTarget],
        *,
        metrics: tuple[MetricsStore, str] | None = None,
        batch_id: int | None = None,
    ) -> MaintenanceReport:
        """Run now and restart the count."""
        report = maintain(writer, targets, self.policy, metrics=metrics, batch_id=batch_id)
        self.batches, self.last_run, self.last_report = 0, self._clock(), report
        return report


def z_order_columns(columns: Sequence[str], available: Sequence[str]) -> None:
    """Refuse Z-order columns the pass table does not have.

    Raises:
        ConfigError: A column is missing (the message lists the table's columns).
    """
    missing = [c for c in columns if c not in available]
    if missing:
        raise ConfigError(
            f"Z-order column(s) {', '.join(missing)} not in the pass table (columns: {', '.join(available)})",
            field_path="maintenance.z-order-by",
        )
