"""The history of batch-scoped anomaly checks: the values of the committed batches a new batch is judged by.

A batch-scoped anomaly check (``baseline: {batches: N}``, no window scope) compares a micro-batch's metric
with the same metric over the last N committed batches. The gate keeps those values here, in commit order,
keyed by ``(app id, batch id)``: a batch Spark replays after a crash is judged against the batches before it,
never against itself, and recorded once. After a restart (or a failed batch) the history is read back from
the gate's results table (its ``kind = "aggregate"`` rows of the check), which is why such a check needs one.

A batch whose verdict came under a profile's rule, or whose metric had no value, is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from streaming_dq.checks.anomaly import AnomalyCheck
from streaming_dq.core.history import using_history
from streaming_dq.exceptions import ConfigError
from streaming_dq.tables.targets import writing

if TYPE_CHECKING:
    from streaming_dq.core.outcome import CheckOutcome
    from streaming_dq.sink.records import BatchContext
    from streaming_dq.sink.rows import SplitBatch
    from streaming_dq.tables import DeltaTarget, TableWriter

__all__ = ["BatchHistory", "batch_anomaly_checks"]

Key = tuple[str, int]


def batch_anomaly_checks(checks: Iterable[Any]) -> list[AnomalyCheck]:
    """The anomaly checks judged per batch (without a window scope)."""
    return [c for c in checks if isinstance(c, AnomalyCheck) and c.batches is not None]


class BatchHistory:
    """Per batch-scoped anomaly check, the committed batches' values (see the module docs).

    Args:
        gate: The gate's name (its results rows only).
        checks: The batch-scoped anomaly checks.
        results: The gate's results table.

    Raises:
        ConfigError: there are such checks but no results table.
    """

    def __init__(self, gate: str, checks: Sequence[AnomalyCheck], results: DeltaTarget | None) -> None:
        if checks and results is None:
            raise ConfigError(
                f"anomaly check {checks[0].check_id!r} judges batches against earlier batches: the gate needs a "
                "results table (targets.results) to keep them",
                field_path="targets.results",
            )
        self.gate = gate
        self.checks = {c.check_id: c for c in checks}
        self.results = results
        self.values: dict[str, dict[Key, float]] = {cid: {} for cid in self.checks}
        self._stale = True

    def invalidate(self) -> None:
        """Read the history back from the results table before the next batch (a batch failed)."""
        self._stale = True

    def prepare(self, writer: TableWriter, ctx: BatchContext) -> AbstractContextManager[None]:
        """The batch's history, given to its validation as a value (a committer's participant)."""
        if not self.checks:
            return nullcontext()
        assert self.results is not None
        with writing(self.results, ctx.batch_id):
            values = self.values_before(writer, ctx.app_id, ctx.batch_id)
        return using_history(values)

    def committed(self, ctx: BatchContext, split: SplitBatch) -> None:
        self.record(ctx.app_id, ctx.batch_id, split.routed.checks)

    def values_before(self, writer: TableWriter, app_id: str, batch_id: int) -> dict[str, list[float]]:
        """Per check, the values of the batches committed before ``(app_id, batch_id)``, oldest first (read
        back from the results table when stale)."""
        if self._stale:
            self._load(writer)
        key = (app_id, batch_id)
        history: dict[str, list[float]] = {}
        for cid, check in self.checks.items():
            values = self.values[cid]
            keys = list(values)
            before = keys[: keys.index(key)] if key in values else keys
            history[cid] = [values[k] for k in before[-check.windows :]]
        return history

    def record(self, app_id: str, batch_id: int, outcomes: Iterable[CheckOutcome]) -> None:
        """After the batch's commits: its values enter the history (once, whatever replays follow)."""
        for outcome in outcomes:
            value = _history_value(outcome.kind, outcome.adjusted_value, outcome.profiles)
            if outcome.check_id in self.values and value is not None:
                self.values[outcome.check_id].setdefault((app_id, batch_id), value)
                self._trim(outcome.check_id)

    def _trim(self, cid: str) -> None:
        values = self.values[cid]
        for key in list(values)[: max(len(values) - 4 * self.checks[cid].windows, 0)]:
            del values[key]

    def _load(self, writer: TableWriter) -> None:
        from streaming_dq.tables.reading import sql_literal

        assert self.results is not None
        self.values = {cid: {} for cid in self.checks}
        if writer.table_schema(self.results) is not None:
            ids = ", ".join(sql_literal(cid) for cid in self.checks)
            predicate = f"gate = {sql_literal(self.gate)} AND kind = 'aggregate' AND check_id IN ({ids})"
            rows = writer.read(self.results, predicate=predicate).to_pylist()
            rows.sort(key=lambda r: (r["validation_ts"], r["app_id"] or "", r["batch_id"]))
            for r in rows:
                value = _history_value("aggregate", r["adjusted_value"], r["profiles"] or ())
                if value is not None:
                    self.values[r["check_id"]].setdefault((r["app_id"], r["batch_id"]), value)
            for cid in self.checks:
                self._trim(cid)
        self._stale = False


def _history_value(kind: str, value: float | None, profiles: Sequence[str]) -> float | None:
    if kind != "aggregate" or value is None or profiles:
        return None
    return float(value)
