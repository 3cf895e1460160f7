"""What a gate's run did: its totals, counted by a listener of the gate's outcome feed.

:class:`JobTotals` sums one gate's committed batches (rows, failed checks, window verdicts at the end of the
input) for the job's last lines and its exit code; :class:`TotalsListener` keeps it up to date from the gate's
outcome feed (:mod:`~streaming_dq.core.listeners`), whether the batches ran here or on a Spark Connect server.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from streaming_dq.core.listeners import OutcomeListener
from streaming_dq.core.outcome import BatchOutcome, CheckOutcome, WindowOutcome

__all__ = ["FleetTotals", "JobTotals", "TotalsListener"]


@dataclass
class JobTotals:
    """What a gate's run did, summed over its committed batches (replayed batches are not counted)."""

    batches: int = 0
    replayed: int = 0
    rows_in: int = 0
    rows_passed: int = 0
    rows_quarantined: int = 0
    rows_warned: int = 0
    rows_malformed: int = 0
    failed: bool = False
    error: str | None = None
    interrupted: int | None = None
    #: Window verdicts given when the input ended (``close_windows``), none before or without it.
    windows_closed: int = 0
    #: The checks that failed in a batch or a window verdict, by id, with their (effective) severities.
    failed_checks: dict[str, set[str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def failures_at(self, severities: frozenset[str]) -> list[str]:
        """The ids of the checks that failed at one of ``severities`` (``--fail-on``), in first-failed order."""
        return [check for check, seen in self.failed_checks.items() if seen & severities]

    def count_failures(self, verdicts: Sequence[CheckOutcome | WindowOutcome]) -> None:
        """Note the failed verdicts among ``verdicts``."""
        with self._lock:
            for verdict in verdicts:
                if verdict.status == "failed":
                    self.failed_checks.setdefault(verdict.check_id, set()).add(verdict.severity)

    def add(self, outcome: BatchOutcome) -> None:
        """Count one batch outcome."""
        with self._lock:
            if outcome.status == "skipped_replay":
                self.replayed += 1
                return
            self.batches += 1
            self.rows_in += outcome.rows_in
            self.rows_passed += outcome.rows_passed
            self.rows_quarantined += outcome.rows_quarantined
            self.rows_warned += outcome.rows_warned
            self.rows_malformed += outcome.rows_malformed
        self.count_failures([*outcome.checks, *outcome.windows])


@dataclass
class FleetTotals:
    """Each gate's totals, in the order of the configs, and the signal that stopped the run (if any)."""

    gates: dict[str, JobTotals]
    interrupted: int | None = None

    @property
    def failed(self) -> list[str]:
        """The gates whose stream failed."""
        return [name for name, totals in self.gates.items() if totals.failed]


class TotalsListener(OutcomeListener):
    """Counts a gate's outcomes into its :class:`JobTotals` (a listener of the gate's outcome feed)."""

    def __init__(self, totals: JobTotals) -> None:
        self.totals = totals

    def record_batch(self, outcome: BatchOutcome) -> None:
        self.totals.add(outcome)

    def record_windows(self, windows: Sequence[WindowOutcome]) -> None:
        self.totals.windows_closed += len(windows)
        self.totals.count_failures(windows)
