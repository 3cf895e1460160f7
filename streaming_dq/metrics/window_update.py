"""What one batch did to the event-time windows: the states merged per window (:class:`WindowDelta`, what the
metrics store writes) and the verdicts (:class:`WindowUpdate`, what the gate reports and commits)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from streaming_dq.core.outcome import WindowOutcome
from streaming_dq.states.keyed import ROWS_STATE

__all__ = ["WindowDelta", "WindowUpdate"]


@dataclass(frozen=True)
class WindowDelta:
    """The states one batch added for one check and window (what the metrics store writes).

    Attributes:
        check_id: The check.
        window: The check's window size as configured (``1 day``).
        scope: ``window`` (merged into the window), ``late`` (its window was closed and the ``count`` policy,
            or the ``reopen`` horizon, kept it out) or ``no-event-time`` (rows with a NULL event time: in no window).
        start: Window start (UTC); None for ``no-event-time``.
        end: Window end (UTC); None for ``no-event-time``.
        states: ``{state name: state}``, including :data:`ROWS_STATE`.
    """

    check_id: str
    window: str
    scope: Literal["window", "late", "no-event-time"]
    start: datetime | None
    end: datetime | None
    states: Mapping[str, Any]

    @property
    def rows(self) -> int:
        rows = self.states.get(ROWS_STATE)
        return rows.n if rows is not None else 0


@dataclass(frozen=True)
class WindowUpdate:
    """What one batch did to the windows.

    Attributes:
        batch_id: The batch.
        closed: Final verdicts: windows the watermark closed in this batch (each judged once), and windows
            re-judged because late rows reopened them (``reopen`` policy).
        provisional: Verdicts of the windows still open (status ``provisional``, or ``skipped``).
        deltas: The states merged (or counted late) in this batch, for the metrics store.
        late_rows: Rows that arrived after their window closed (the largest count over the window-scoped
            checks: exact when they share one window size).
        null_event_time_rows: Rows with a NULL event time (in no window).
        max_event_time: The largest event time seen so far (over all batches).
        watermark: ``max_event_time - allowed_lateness``: windows ending at or before it are closed.
    """

    batch_id: int
    closed: tuple[WindowOutcome, ...] = ()
    provisional: tuple[WindowOutcome, ...] = ()
    deltas: tuple[WindowDelta, ...] = ()
    late_rows: int = 0
    null_event_time_rows: int = 0
    max_event_time: datetime | None = None
    watermark: datetime | None = None

    @property
    def outcomes(self) -> tuple[WindowOutcome, ...]:
        """Final then provisional verdicts (for ``BatchOutcome.windows``)."""
        return self.closed + self.provisional
