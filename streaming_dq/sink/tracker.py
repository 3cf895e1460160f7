"""The gate's accumulated metrics: per-batch states of every observable check and event-time windows.

:class:`MetricsTracker` binds the metrics store (a Delta table written with the batch's app transaction, last
of all targets, through the gate's writer) to the window accumulator (in-memory, rebuilt from the store at
start-up and after a failed batch). The per-window states come from the router: grouped in Arrow by the
driver router, in the aggregation job by the Spark router.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from streaming_dq.core.base_check import ObservableAggregateCheck
from streaming_dq.core.modes import LateDataPolicy
from streaming_dq.metrics.accumulator import DEFAULT_REOPEN_HORIZON, WindowAccumulator
from streaming_dq.metrics.store import MetricsStore
from streaming_dq.metrics.window_update import WindowUpdate
from streaming_dq.tables.targets import writing

if TYPE_CHECKING:
    from datetime import datetime

    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.engine.decision import BatchDecision
    from streaming_dq.sink.options import GateOptions
    from streaming_dq.sink.records import BatchContext
    from streaming_dq.sink.rows import SplitBatch
    from streaming_dq.states.keyed import WindowStates
    from streaming_dq.tables import DeltaTarget, TableWriter

logger = logging.getLogger("streaming_dq.gate")


class MetricsTracker:
    """Accumulates a gate's observable metrics per batch, per window and over the stream's life.

    Args:
        gate: The gate's name.
        check_set: The gate's checks; those with ``scope: {window: ...}`` are judged per window.
        target: The metrics Delta table (its storage options and table properties go to the store).
        event_time: The event-time column (required when a check is window-scoped).
        profiles: Profiles; a closed window is judged under those active on the window's date.
        timezone: Zone of window boundaries and profile dates.
        allowed_lateness: How far behind the largest event time seen a row may arrive before its window
            closes (the watermark is max event time minus this).
        late_data: ``count`` (rows of a closed window are counted as late, not merged) or ``reopen``.
        reopen_horizon: Under ``reopen``, how long after the watermark passed a window's end its late rows still
            reopen it (after that the window leaves memory and its late rows are counted).
    """

    def __init__(
        self,
        gate: str,
        check_set: CheckSet,
        target: DeltaTarget,
        *,
        event_time: str | None,
        profiles: Sequence[Any] = (),
        timezone: str = "UTC",
        allowed_lateness: timedelta = timedelta(0),
        late_data: LateDataPolicy = "count",
        reopen_horizon: timedelta = DEFAULT_REOPEN_HORIZON,
    ) -> None:
        self.gate = gate
        self.target = target
        self.window_checks = [c for c in check_set if isinstance(c, ObservableAggregateCheck) and c.scope]
        if self.window_checks and not event_time:
            from streaming_dq.exceptions import ConfigError

            raise ConfigError("window-scoped checks need gate.event-time", field_path="gate.event-time")
        self.event_time = event_time
        self.timezone = timezone
        self.store = MetricsStore(
            target.uri,
            storage_options=dict(target.storage_options) or None,
            configuration=target.configuration,
        )
        self.accumulator = WindowAccumulator(
            gate,
            self.window_checks,
            profiles=profiles,
            timezone=timezone,
            allowed_lateness=allowed_lateness,
            late_data=late_data,
            reopen_horizon=reopen_horizon,
        )
        self._stale = True

    @classmethod
    def for_gate(cls, options: GateOptions, check_set: CheckSet) -> MetricsTracker | None:
        """The tracker of a gate's options (None without a metrics table)."""
        if options.metrics_table is None:
            return None
        return cls(
            options.name,
            check_set,
            options.metrics_table,
            event_time=options.event_time,
            profiles=options.profiles if options.event_time else (),
            timezone=options.timezone,
            allowed_lateness=options.allowed_lateness,
            late_data=options.late_data,
            reopen_horizon=options.reopen_horizon,
        )

    def ensure_table(self) -> None:
        self.store.ensure_table()

    def invalidate(self) -> None:
        """Forget in-memory state (a batch failed after merging it): rebuild from the store before the next."""
        self._stale = True

    def prepare(self, writer: TableWriter, ctx: BatchContext) -> AbstractContextManager[None]:
        """Rebuild the windows from the metrics table when stale (a committer's participant; gives the run
        nothing)."""
        if self.window_checks:
            with writing(self.target, ctx.batch_id):
                self._refresh()
        return nullcontext()

    def committed(self, ctx: BatchContext, split: SplitBatch) -> None:
        """Nothing to take in: the batch's windows were merged by :meth:`update` before its commits."""

    def _refresh(self) -> None:
        if self._stale:
            self.accumulator.restore(self.store.read(self.gate))
            self._stale = False

    def is_committed(self, app_id: str, batch_id: int) -> bool:
        return self.store.committed(app_id, batch_id)

    def use_writer(self, writer: TableWriter) -> None:
        """Write the metrics table with the gate's writer (chosen on the first batch)."""
        self.store.writer = writer

    def update(
        self, batch_id: int, window_states: WindowStates | None, max_event_time: datetime | None
    ) -> WindowUpdate | None:
        """Merge one (not yet committed) batch's window states; None without window checks or states."""
        if not self.window_checks or window_states is None:
            return None
        self._refresh()
        return self.accumulator.update(batch_id, window_states, max_event_time)

    def close_open_windows(self, batch_id: int) -> WindowUpdate | None:
        """Judge every open window that holds rows (the input has ended); None without window checks."""
        if not self.window_checks:
            return None
        self._refresh()
        return self.accumulator.close_open_windows(batch_id)

    def commit(
        self,
        *,
        app_id: str,
        batch_id: int,
        decision: BatchDecision | None,
        check_types: dict[str, str],
        update: WindowUpdate | None,
    ) -> bool:
        """Write the batch's states (and window results) with the batch's app transaction; False if skipped."""
        table = self.store.records_for_batch(
            gate=self.gate,
            app_id=app_id,
            batch_id=batch_id,
            states=decision.states if decision is not None else {},
            check_types=check_types,
            update=update,
        )
        return self.store.write(table, app_id, batch_id)
