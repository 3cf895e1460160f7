"""The commit order of a batch: which tables still lack it, then results, then the metrics table last.

Every commit carries the app transaction ``(app id, batch id)``, so each table knows on its own whether it has
a batch. The rows (pass, quarantine) are written by the router; :class:`BatchCommitter` writes what follows
them: the per-check results (the batch-complete marker of the three row-level tables) and, LAST, the metrics
table - once that has the batch, every other table has it too. A replay writes only what is missing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from streaming_dq.core.modes import TargetRole
from streaming_dq.sink.records import BatchContext, window_results
from streaming_dq.tables import AppTransaction, DeltaTarget, TableWriter
from streaming_dq.tables.targets import writing

if TYPE_CHECKING:
    import pyarrow as pa

    from streaming_dq.engine.decision import BatchDecision
    from streaming_dq.metrics.window_update import WindowUpdate
    from streaming_dq.sink.tracker import MetricsTracker

logger = logging.getLogger("streaming_dq.gate")

__all__ = ["END_OF_INPUT", "BatchCommitter"]

#: The app id suffix of the commits that close the windows left open at the end of the input.
END_OF_INPUT = "/end-of-input"


class BatchCommitter:
    """Owns the order of a gate's commits (see the module).

    Args:
        targets: The row-level tables by role.
        tracker: The metrics tracker (None: the gate has no metrics table).
        check_types: Each check's type name, as the metrics table records it.
    """

    def __init__(
        self,
        targets: Mapping[TargetRole, DeltaTarget],
        tracker: MetricsTracker | None,
        check_types: Mapping[str, str],
    ) -> None:
        self.targets = dict(targets)
        self.tracker = tracker
        self.check_types = dict(check_types)

    def pending(self, writer: TableWriter, txn: AppTransaction) -> dict[TargetRole, DeltaTarget]:
        """The row-level tables that lack ``txn``."""
        pending: dict[TargetRole, DeltaTarget] = {}
        for role, target in self.targets.items():
            with writing(target, txn.version):
                if not writer.is_committed(target, txn):
                    pending[role] = target
        return pending

    def metrics_pending(self, txn: AppTransaction) -> bool:
        """Whether the metrics table lacks ``txn`` (False without one)."""
        if self.tracker is None:
            return False
        with writing(self.tracker_target, txn.version):
            return not self.tracker.is_committed(txn.app_id, txn.version)

    @property
    def tracker_target(self) -> DeltaTarget:
        assert self.tracker is not None
        return self.tracker.target

    def write_results(self, writer: TableWriter, rows: pa.Table, txn: AppTransaction) -> None:
        """The per-check results rows (older tables lack the newer columns: their schema is merged)."""
        target = self.targets["results"]
        with writing(target, txn.version):
            writer.append(target, rows, txn, merge_schema=True)

    def commit_metrics(
        self, ctx: BatchContext, decision: BatchDecision | None, update: WindowUpdate | None
    ) -> None:
        """The metrics table, LAST: once it has the batch, every other table has it too."""
        assert self.tracker is not None
        with writing(self.tracker_target, ctx.batch_id):
            self.tracker.commit(
                app_id=ctx.app_id,
                batch_id=ctx.batch_id,
                decision=decision,
                check_types=self.check_types,
                update=update,
            )

    def close_windows(self, writer: TableWriter, gate: str, app_id: str) -> WindowUpdate | None:
        """Judge and commit the windows still open after the last committed batch (see
        ``QualityGate.close_windows``): results first, the metrics table last, both under
        ``(<app id>/end-of-input, last batch id)``.

        Returns:
            The committed update; None without window-scoped checks, before the first batch, or when this end
            of input is already closed.
        """
        tracker = self.tracker
        if tracker is None or not tracker.window_checks:
            return None
        with writing(self.tracker_target, None):
            last = writer.committed_version(self.tracker_target, app_id)
            txn = AppTransaction(f"{app_id}{END_OF_INPUT}", last if last is not None else 0)
            if last is None or tracker.is_committed(txn.app_id, txn.version):
                return None
        ctx = BatchContext(gate, txn.version, txn.app_id, datetime.now(UTC))
        try:
            update = tracker.close_open_windows(txn.version)
            assert update is not None
            results = self.targets.get("results")
            if results is not None and update.closed:
                with writing(results, txn.version):
                    if not writer.is_committed(results, txn):
                        writer.append(results, window_results(ctx, update.closed), txn, merge_schema=True)
            self.commit_metrics(ctx, None, update)
        except Exception:
            tracker.invalidate()  # it judged windows that were not committed
            raise
        logger.info(
            "gate %r: end of input after batch %d: %d window verdict(s)",
            gate,
            txn.version,
            len(update.closed),
        )
        return update
