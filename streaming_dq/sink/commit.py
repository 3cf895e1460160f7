"""One batch transaction: which tables still lack the batch, then every write in one order, written once here.

Every commit carries the app transaction ``(app id, batch id)``, so each table knows on its own whether it has
a batch, and a second process's commit of the same version is refused by the table (docs/streaming.md,
"Against a second process"). :class:`BatchCommitter` owns the order of a batch's writes:

1. the replay check: the tables that still lack the batch (:meth:`BatchCommitter.pending`; none: skipped);
2. the participants prepare (:class:`BatchParticipant`: cross-batch state read back from the tables, such
   as the anomaly history); the router validates and splits the rows (:mod:`~streaming_dq.sink.rows`);
3. the rows: the pass table, then the quarantine table;
4. the participants' tables (the keys the batch saw, :mod:`~streaming_dq.sink.seen_keys`);
5. the per-check results (the batch-complete marker of the row-level tables);
6. LAST the metrics table: once it has the batch, every other table has it too;
7. the participants learn the batch is committed.

Steps 3 to 6 are :data:`~streaming_dq.core.modes.BATCH_COMMIT_ORDER`, written once there: one loop here
runs it (:func:`commit_in_order`), and ``streaming-dq doctor`` checks the tables against the same
constant. A replay writes only what is missing. The end of the input (:meth:`BatchCommitter.close_windows`)
commits through the same loop (results, then metrics last), and so do a release's chunks and a discard
(:data:`~streaming_dq.core.modes.RELEASE_COMMIT_ORDER`, ``streaming_dq.release``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol, TypeVar

from streaming_dq.core.modes import BATCH_COMMIT_ORDER, TableRole, TargetRole
from streaming_dq.sink.batch_history import BatchHistory, batch_anomaly_checks
from streaming_dq.sink.jobs import described, phase_description
from streaming_dq.sink.records import BatchContext, window_results
from streaming_dq.sink.rows import ROW_ROLES, TableRows
from streaming_dq.sink.seen_keys import SeenKeys, no_key_rows, stream_key_checks
from streaming_dq.sink.tracker import MetricsTracker
from streaming_dq.tables import AppTransaction, DeltaTarget, TableWriter
from streaming_dq.tables.targets import writing

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.core.outcome import BatchOutcome, MaintenanceReport
    from streaming_dq.engine.decision import BatchDecision
    from streaming_dq.metrics.window_update import WindowUpdate
    from streaming_dq.sink.options import GateOptions
    from streaming_dq.sink.rows import SplitBatch

logger = logging.getLogger("streaming_dq.gate")

__all__ = ["END_OF_INPUT", "BatchCommitter", "BatchParticipant", "Pending", "Write", "commit_in_order"]

#: The app id suffix of the commits that close the windows left open at the end of the input.
END_OF_INPUT = "/end-of-input"


class BatchParticipant(Protocol):
    """Cross-batch state kept in step with the tables by the committer (the anomaly history, and next the
    duplicates' first occurrences): read back from the tables, never trusted after a failed batch."""

    def prepare(self, writer: TableWriter, ctx: BatchContext) -> AbstractContextManager[None]:
        """Before the batch is validated: read back what a restart or a failed batch left stale. The context
        returned is open while the batch is validated: what the participant gives the run, as a value."""

    def committed(self, ctx: BatchContext, split: SplitBatch) -> None:
        """After all of the batch's commits: take its values in (once, whatever replays follow)."""

    def invalidate(self) -> None:
        """A batch failed: rebuild from the tables before the next one."""


P = TypeVar("P")


@dataclass(frozen=True)
class Write:
    """One commit of a transaction: its table, and the write that records the transaction there (a write turns
    its back end's errors into :class:`~streaming_dq.exceptions.TargetWriteError` itself, by
    :func:`~streaming_dq.tables.targets.writing`)."""

    target: DeltaTarget
    run: Callable[[], object]


def commit_in_order(
    order: Sequence[TableRole],
    writes: Mapping[TableRole, Write],
    txn: AppTransaction,
    *,
    writer: TableWriter | None = None,
    spark: SparkSession | None = None,
    gate: str = "",
    unit: str = "batch",
) -> list[TableRole]:
    """Run ``writes`` in ``order``: the ONE place a transaction's commits are sequenced, for a batch
    (:data:`~streaming_dq.core.modes.BATCH_COMMIT_ORDER`), the end of the input, and a release's chunk
    (:data:`~streaming_dq.core.modes.RELEASE_COMMIT_ORDER`). With ``writer``, a write whose table already
    records ``txn`` is skipped (a rerun after a crash writes only what is missing); without one the caller
    has asked the tables already (a batch's replay check). Each write's Spark jobs carry its table's role
    (``streaming_dq <gate> <unit> <version>: write <role>``).

    Returns:
        The roles written.
    """
    done: list[TableRole] = []
    for role in order:
        write = writes.get(role)
        if write is None:
            continue
        if writer is not None:
            with writing(write.target, txn.version):
                if writer.is_committed(write.target, txn):
                    continue
        with described(spark, phase_description(gate, txn.version, f"write {role}", unit)):
            write.run()
        done.append(role)
    return done


@dataclass(frozen=True)
class Pending:
    """The tables that still lack a batch: the row-level tables by role, the keys table, and whether the
    metrics table does."""

    tables: dict[TargetRole, DeltaTarget] = field(default_factory=dict)
    metrics: bool = False
    keys: DeltaTarget | None = None

    def __bool__(self) -> bool:
        return bool(self.tables) or self.metrics or self.keys is not None


class BatchCommitter:
    """Owns the order of a gate's commits (see the module).

    Args:
        targets: The row-level tables by role.
        tracker: The metrics tracker (None: the gate has no metrics table).
        check_types: Each check's type name, as the metrics table records it.
        participants: The cross-batch states kept in step with the commits.
        keys: The keys table (:mod:`~streaming_dq.sink.seen_keys`), None without checks across batches.
    """

    def __init__(
        self,
        targets: Mapping[TargetRole, DeltaTarget],
        tracker: MetricsTracker | None,
        check_types: Mapping[str, str],
        participants: Sequence[BatchParticipant] = (),
        keys: DeltaTarget | None = None,
    ) -> None:
        self.targets = dict(targets)
        self.tracker = tracker
        self.check_types = dict(check_types)
        self.participants = list(participants)
        self.keys = keys
        if tracker is not None:
            self.participants.append(tracker)

    @classmethod
    def for_gate(cls, options: GateOptions, check_set: CheckSet) -> BatchCommitter:
        """A gate's committer with its participants: the batch-scoped anomaly checks' history (read back from
        the results table), the keys seen across batches (the keys table), the metrics tracker (the metrics
        table)."""
        seen_keys = SeenKeys(
            options.name,
            stream_key_checks(check_set),
            options.keys_table,
            options.event_time,
            keys_in_memory=options.keys_in_memory,
        )
        return cls(
            options.targets,
            MetricsTracker.for_gate(options, check_set),
            {c.check_id: c.check_type for c in check_set},
            participants=[
                BatchHistory(options.name, batch_anomaly_checks(check_set), options.targets.get("results")),
                seen_keys,
            ],
            keys=seen_keys.target,
        )

    def participant(self, kind: type[P]) -> P:
        """The participant of type ``kind``."""
        return next(p for p in self.participants if isinstance(p, kind))

    def pending(self, writer: TableWriter, txn: AppTransaction) -> Pending:
        """The tables that lack ``txn`` (the replay check: nothing pending, the batch is committed)."""
        tables: dict[TargetRole, DeltaTarget] = {}
        for role, target in self.targets.items():
            with writing(target, txn.version):
                if not writer.is_committed(target, txn):
                    tables[role] = target
        metrics = False
        if self.tracker is not None:
            with writing(self.tracker.target, txn.version):
                metrics = not self.tracker.is_committed(txn.app_id, txn.version)
        keys = None
        if self.keys is not None:
            with writing(self.keys, txn.version):
                keys = None if writer.is_committed(self.keys, txn) else self.keys
        return Pending(tables, metrics, keys)

    @contextmanager
    def prepared(self, writer: TableWriter, ctx: BatchContext) -> Iterator[None]:
        """Every participant prepared; validate the batch inside (a failed read fails the batch like a write)."""
        with ExitStack() as stack:
            for participant in self.participants:
                stack.enter_context(participant.prepare(writer, ctx))
            yield

    def invalidate(self) -> None:
        """A batch failed: every participant rebuilds from the tables before the next."""
        for participant in self.participants:
            participant.invalidate()

    def commit_batch(
        self,
        writer: TableWriter,
        spark: SparkSession,
        ctx: BatchContext,
        pending: Pending,
        split: SplitBatch,
        *,
        started: float,
        maintenance: MaintenanceReport | None = None,
    ) -> BatchOutcome:
        """The batch's writes in the one order (:data:`~streaming_dq.core.modes.BATCH_COMMIT_ORDER`); what is
        committed already is not written again.

        Raises:
            TargetWriteError: A write failed: nothing is reported, Spark replays the batch.
        """
        txn = AppTransaction(ctx.app_id, ctx.batch_id)
        routed = split.routed
        update = None
        if pending.metrics:
            assert self.tracker is not None
            update = self.tracker.update(ctx.batch_id, routed.window_states, routed.event_time.max)
        writes: dict[TableRole, Write] = {
            role: _append(split.rows_for(role), writer, target, txn)
            for role, target in pending.tables.items()
            if role in ROW_ROLES
        }
        if pending.keys is not None:  # a batch quarantined whole, unjudged, records no key: an empty commit
            keys = split.keys.rows if split.keys is not None else no_key_rows()
            writes["keys"] = _append(keys, writer, pending.keys, txn)
        if "results" in pending.tables:

            def results() -> pa.Table:
                duration = time.monotonic() - started
                return routed.results(ctx, update, duration_seconds=duration, maintenance=maintenance)

            writes["results"] = self._results_write(writer, txn, results)
        if pending.metrics:
            writes["metrics"] = self._metrics_write(ctx, routed.decision, update)
        commit_in_order(BATCH_COMMIT_ORDER, writes, txn, spark=spark, gate=ctx.gate)
        for participant in self.participants:
            participant.committed(ctx, split)
        outcome = routed.outcome(ctx, "committed", started, update)
        seen = self.participant(SeenKeys)
        return outcome if seen.state is None else replace(outcome, keys=seen.state)

    def _results_write(self, writer: TableWriter, txn: AppTransaction, rows: Callable[[], pa.Table]) -> Write:
        # older results tables lack the newer columns: their schema is merged
        target = self.targets["results"]

        def append() -> None:
            with writing(target, txn.version):
                writer.append(target, rows(), txn, merge_schema=True)

        return Write(target, append)

    def _metrics_write(
        self, ctx: BatchContext, decision: BatchDecision | None, update: WindowUpdate | None
    ) -> Write:
        tracker = self.tracker
        assert tracker is not None

        def commit() -> None:
            with writing(tracker.target, ctx.batch_id):
                tracker.commit(
                    app_id=ctx.app_id,
                    batch_id=ctx.batch_id,
                    decision=decision,
                    check_types=self.check_types,
                    update=update,
                )

        return Write(tracker.target, commit)

    def close_windows(self, writer: TableWriter, gate: str, app_id: str) -> WindowUpdate | None:
        """Judge and commit the windows still open after the last committed batch (``QualityGate.close_windows``):
        every check's open windows up to its last one that holds rows, once. Results first, the metrics table
        last, both under ``(<app id>/end-of-input, last batch id)``: a rerun after the same last batch, or after
        a crash half-way, writes each verdict once; after later batches a new call closes the windows those
        opened.

        Returns:
            The committed update; None without window-scoped checks, before the first batch, or when this end
            of input is already closed.
        """
        tracker = self.tracker
        if tracker is None or not tracker.window_checks:
            return None
        with writing(tracker.target, None):
            last = writer.committed_version(tracker.target, app_id)
            txn = AppTransaction(f"{app_id}{END_OF_INPUT}", last if last is not None else 0)
            if last is None or tracker.is_committed(txn.app_id, txn.version):
                return None
        ctx = BatchContext(gate, txn.version, txn.app_id, datetime.now(UTC))
        try:
            update = tracker.close_open_windows(txn.version)
            assert update is not None
            writes: dict[TableRole, Write] = {}
            if "results" in self.targets and update.closed:
                with writing(self.targets["results"], txn.version):
                    if not writer.is_committed(self.targets["results"], txn):
                        closed = update.closed
                        writes["results"] = self._results_write(
                            writer, txn, lambda: window_results(ctx, closed)
                        )
            writes["metrics"] = self._metrics_write(ctx, None, update)
            commit_in_order(BATCH_COMMIT_ORDER, writes, txn, gate=gate)
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


def _append(rows: TableRows, writer: TableWriter, target: DeltaTarget, txn: AppTransaction) -> Write:
    def append() -> None:
        with writing(target, txn.version):
            rows.append(writer, target, txn)

    return Write(target, append)
