"""Running maintenance: compaction, log checkpoints, vacuum and the metrics roll-up over a gate's tables."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from streaming_dq.core.outcome import MaintenanceReport, TableReport, duration_text
from streaming_dq.exceptions import ConfigError
from streaming_dq.maintenance.policy import ZORDER_ROLES, MaintenancePolicy
from streaming_dq.tables.storage import mask
from streaming_dq.tables.targets import LOG_RETENTION_PROPERTY

if TYPE_CHECKING:
    from streaming_dq.metrics.store import MetricsStore
    from streaming_dq.tables import DeltaTarget, TableWriter

__all__ = ["Maintainer", "check_log_retention", "check_retention", "maintain"]

logger = logging.getLogger("streaming_dq.maintenance")


def check_retention(writer: TableWriter, target: DeltaTarget, retention: timedelta) -> timedelta:
    """Refuse a vacuum retention shorter than the table's safe minimum; return that minimum.

    Raises:
        ConfigError: ``retention`` is shorter than :meth:`TableWriter.safe_retention` (named in the message).
    """
    minimum = writer.safe_retention(target)
    if retention < minimum:
        raise ConfigError(
            f"{duration_text(retention)} is shorter than {duration_text(minimum)}, the safe minimum of {target.uri} (its "
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
            f"{duration_text(retention)} is shorter than {duration_text(minimum)}, the delta.deletedFileRetentionDuration of "
            f"{target.uri}: a time-travel read or a downstream stream could still need the log files it would "
            "remove (lower the table's delta.deletedFileRetentionDuration first if that is meant)",
            field_path="maintenance.log-retention",
        )


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
    on_table: Callable[[str, TableReport], None] | None = None,
    prune: Mapping[str, Callable[[], int]] | None = None,
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
        on_table: Told each table's role and report as soon as that table is done (progress lines).
        prune: Per role, drops the rows a table no longer needs and says how many, before its compaction (the
            keys table: keys older than their check's horizon needs, :mod:`~streaming_dq.sink.seen_keys`).

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
    reports = []
    for role, target in targets.items():
        one = _maintain_one(
            writer,
            role,
            target,
            policy,
            metrics if role == "metrics" else None,
            now or started,
            (prune or {}).get(role),
        )
        reports.append(one)
        if on_table is not None:
            on_table(role, one)
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
    prune: Callable[[], int] | None = None,
) -> TableReport:
    clock = time.monotonic()
    done: dict[str, object] = {}
    files_before = 0
    try:
        files_before = writer.file_count(target)
        if metrics is not None and policy.roll_up_after is not None:
            store, gate = metrics
            done["rolled_up"] = store.roll_up(gate, before=now - policy.roll_up_after)
        if prune is not None:
            done["forgotten"] = prune()
        z_order = policy.z_order if role in ZORDER_ROLES else ()
        if policy.compact and (files_before > 1 or z_order):  # one file: nothing to bin-pack, no job run
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
            error=mask(f"{type(exc).__name__}: {exc}", target.storage_options),
            **done,  # type: ignore[arg-type]
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
        batches, seconds = policy.head_start()  # the first period is shortened by the policy's phase
        self.batches = batches
        self.last_run = self._clock() - seconds
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
        prune: Mapping[str, Callable[[], int]] | None = None,
    ) -> MaintenanceReport:
        """Run now and restart the count."""
        report = maintain(writer, targets, self.policy, metrics=metrics, batch_id=batch_id, prune=prune)
        self.batches, self.last_run, self.last_report = 0, self._clock(), report
        return report
