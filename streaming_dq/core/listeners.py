"""The outcome feed: every event a gate's batches, windows, maintenance, releases and progress produce, sent
to a list of listeners.

A gate (and a job's run of it) reports what happened through one :class:`OutcomeFeed`: the Prometheus series
(``GateMetrics``), a job's totals and progress lines, a caller's ``on_batch`` and, next, alert delivery and
lineage are all :class:`OutcomeListener`\\ s on it. The same feed is fed whether the batches run in this
process or on a Spark Connect server (whose outcomes are read back from the results table), so a listener is
written once for both.

A listener overrides the events it cares about; the others do nothing (an object that is no
:class:`OutcomeListener` but has some of its methods, such as an older metrics recorder, hears those). An event is delivered after what it
reports is committed: a listener that raises is logged, and neither un-commits anything nor keeps the event
from the listeners after it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from streaming_dq.core.outcome import BatchOutcome, MaintenanceReport, WindowOutcome

__all__ = ["BatchCallback", "OutcomeFeed", "OutcomeListener"]

logger = logging.getLogger("streaming_dq.gate")


class OutcomeListener:
    """What a gate reports, one method per event (each a no-op here: override what you need)."""

    def record_batch(self, outcome: BatchOutcome) -> None:
        """A batch was committed (or skipped as a replay); ``outcome.maintenance`` carries a maintenance run
        that followed it."""

    def record_failure(self, batch_id: int, error: BaseException) -> None:
        """A batch raised before it committed (Spark replays it)."""

    def record_windows(self, windows: Sequence[WindowOutcome]) -> None:
        """Window verdicts given outside a batch (the end of the input)."""

    def record_maintenance(self, report: MaintenanceReport) -> None:
        """A maintenance run outside a batch (``streaming-dq maintain``)."""

    def record_quarantine(self, kind: str, counts: Mapping[str | None, int]) -> None:
        """A release (``kind = "release"``) or discard (``"discard"``) finished: rows by the check they were
        quarantined for, None for the rows themselves."""

    def record_progress(self, progress: Mapping[str, Any]) -> None:
        """The streaming query's progress (``StreamingQueryProgress`` as a dict)."""


class BatchCallback(OutcomeListener):
    """A plain ``on_batch(outcome)`` function as a listener."""

    def __init__(self, callback: Callable[[BatchOutcome], None]) -> None:
        self.callback = callback

    def record_batch(self, outcome: BatchOutcome) -> None:
        self.callback(outcome)


class OutcomeFeed(OutcomeListener):
    """Delivers every event to each of its listeners, in order (see the module).

    Args:
        listeners: The listeners; None entries are left out.
        gate: Named in the log line of a listener that fails.
    """

    def __init__(self, listeners: Iterable[OutcomeListener | None] = (), *, gate: str = "") -> None:
        self.listeners = [x for x in listeners if x is not None]
        self.gate = gate

    def add(self, listener: OutcomeListener) -> None:
        self.listeners.append(listener)

    def __bool__(self) -> bool:
        return bool(self.listeners)

    def _send(self, about: str, event: str, *args: Any) -> None:
        for listener in self.listeners:
            handler = getattr(listener, event, None)  # a duck-typed listener may leave events out
            if handler is None:
                continue
            try:
                handler(*args)
            except Exception:
                logger.exception(
                    "gate %r: outcome callback failed for %s (%s.%s)",
                    self.gate,
                    about,
                    type(listener).__name__,
                    event,
                )

    def record_batch(self, outcome: BatchOutcome) -> None:
        self._send(f"batch {outcome.batch_id}", "record_batch", outcome)

    def record_failure(self, batch_id: int, error: BaseException) -> None:
        self._send(f"failed batch {batch_id}", "record_failure", batch_id, error)

    def record_windows(self, windows: Sequence[WindowOutcome]) -> None:
        self._send("closed windows", "record_windows", windows)

    def record_maintenance(self, report: MaintenanceReport) -> None:
        self._send("maintenance", "record_maintenance", report)

    def record_quarantine(self, kind: str, counts: Mapping[str | None, int]) -> None:
        self._send(kind, "record_quarantine", kind, counts)

    def record_progress(self, progress: Mapping[str, Any]) -> None:
        self._send("progress", "record_progress", progress)
