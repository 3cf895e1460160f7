"""What maintenance does to a gate's tables, and how often: :class:`MaintenancePolicy`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from streaming_dq.exceptions import ConfigError

__all__ = ["ZORDER_ROLES", "MaintenancePolicy", "z_order_columns"]

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
        phase: Where in its period the schedule starts, in [0, 1): the first run comes after ``1 - phase``
            of ``every_batches`` / ``every``, the next ones a full period apart. Gates sharing a driver get
            evenly spread phases, so their maintenance runs do not all fall on the same batch.

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
    phase: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.phase < 1.0:
            raise ConfigError(
                f"the schedule's phase must be in [0, 1), not {self.phase}", field_path="maintenance"
            )
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

    def head_start(self) -> tuple[int, float]:
        """The batches and seconds the schedule counts as already gone by at the start (its ``phase``)."""
        batches = int(self.phase * self.every_batches) if self.every_batches is not None else 0
        seconds = self.phase * self.every.total_seconds() if self.every is not None else 0.0
        return batches, seconds

    def due(self, *, batches: int, seconds: float) -> bool:
        """Whether a run is due after ``batches`` committed batches and ``seconds`` since the last run."""
        if self.every_batches is not None and batches >= self.every_batches:
            return True
        return self.every is not None and batches > 0 and seconds >= self.every.total_seconds()


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
