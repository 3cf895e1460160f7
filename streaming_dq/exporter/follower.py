"""Follow a gate's results table: each batch it committed becomes a :class:`BatchOutcome` again, once.

Under Spark Connect the gate's batch function runs in a Python worker on the Connect server, so the
``metrics`` and ``on_batch`` of the client never see a batch. What the worker did becomes visible exactly
once in the results table: one commit per batch, never repeated for a replay (its app transaction is
recorded). :class:`ResultsFollower` reads the batches committed since it last looked and rebuilds their
outcomes, which the job hands to its Prometheus metrics and console as if the gate had reported them.

The table is read with delta-rs (no Spark job), filtered to the query's app id and to batch ids above the
last one seen; a follower starts after the batches already in the table, so a restarted job does not count
history again (Prometheus handles the counter reset). A maintenance run between batches arrives with the next
batch's rows (``kind = "maintenance"``) and becomes that outcome's ``maintenance``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from streaming_dq.core.outcome import BatchOutcome, CheckOutcome, WindowOutcome

if TYPE_CHECKING:
    from streaming_dq.core.outcome import MaintenanceReport

__all__ = ["ResultsFollower", "outcomes_from_results"]


class ResultsFollower:
    """The batches one query committed to a results table, as outcomes, each reported once.

    Args:
        uri: The results table.
        gate: The gate's name.
        app_id: The query's app id (``<gate>:<query id>``).
        storage_options: delta-rs storage options (object stores).
        after: Report only batch ids above this one; default: above the last one already in the table.

    Example:
        >>> follower = ResultsFollower("/data/orders_results", "orders", f"orders:{query.id}")  # doctest: +SKIP
        >>> for outcome in follower.poll():  # doctest: +SKIP
        ...     metrics.record_batch(outcome)
    """

    def __init__(
        self,
        uri: str,
        gate: str,
        app_id: str,
        *,
        storage_options: Mapping[str, str] | None = None,
        after: int | None = None,
    ) -> None:
        self.uri, self.gate, self.app_id = uri, gate, app_id
        self.storage_options = dict(storage_options or {})
        self.last = after if after is not None else self._last_committed()

    def _rows(self, after: int | None) -> list[dict[str, Any]]:
        from deltalake import DeltaTable

        from streaming_dq.tables.reading import read_table, sql_literal

        if not DeltaTable.is_deltatable(self.uri, storage_options=self.storage_options or None):
            return []
        predicate = f"app_id = {sql_literal(self.app_id)} AND gate = {sql_literal(self.gate)}"
        if after is not None:
            predicate += f" AND batch_id > {int(after)}"
        return read_table(self.uri, storage_options=self.storage_options, predicate=predicate).to_pylist()

    def _last_committed(self) -> int | None:
        ids = [r["batch_id"] for r in self._rows(None) if r["kind"] == "batch"]
        return max(ids, default=None)

    def poll(self) -> list[BatchOutcome]:
        """The outcomes of the batches committed since the last poll, in batch order."""
        outcomes = outcomes_from_results(self._rows(self.last))
        if outcomes:
            self.last = outcomes[-1].batch_id
        return outcomes


def outcomes_from_results(rows: list[dict[str, Any]]) -> list[BatchOutcome]:
    """Rebuild the :class:`BatchOutcome` of every batch whose ``kind = "batch"`` row is among ``rows``."""
    by_batch: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_batch[int(row["batch_id"])].append(row)
    outcomes = []
    for batch_id in sorted(by_batch):
        group = by_batch[batch_id]
        summary = next((r for r in group if r["kind"] == "batch"), None)
        if summary is None:  # a table written before the gate recorded batch rows
            continue
        duration = float(summary["duration_seconds"] or 0.0)
        committed = summary["validation_ts"] + timedelta(seconds=duration)
        outcomes.append(
            BatchOutcome(
                gate=summary["gate"],
                batch_id=batch_id,
                status="committed",
                rows_in=int(summary["rows"] or 0),
                rows_passed=int(summary["rows_passed"] or 0),
                rows_quarantined=int(summary["rows_quarantined"] or 0),
                rows_warned=int(summary["rows_warned"] or 0),
                rows_malformed=int(summary["rows_malformed"] or 0),
                rows_late=int(summary["rows_late"] or 0),
                rows_null_event_time=int(summary["rows_null_event_time"] or 0),
                duration_seconds=duration,
                committed_at=committed.timestamp(),
                min_event_time=summary["event_time_min"],
                max_event_time=summary["event_time_max"],
                active_profiles=tuple(summary["profiles"] or ()),
                checks=tuple(_check(r) for r in group if r["kind"] in ("row", "aggregate")),
                windows=tuple(_window(r) for r in group if r["kind"] == "window"),
                maintenance=_maintenance([r for r in group if r["kind"] == "maintenance"]),
            )
        )
    return outcomes


def _maintenance(rows: list[dict[str, Any]]) -> MaintenanceReport | None:
    """The maintenance run a batch's rows carry (see ``records.maintenance_rows``); the tables' paths are not
    stored, only their roles."""
    from streaming_dq.core.outcome import MaintenanceReport, TableReport

    if not rows:
        return None
    tables = tuple(
        TableReport(
            role=r["check_id"],
            uri="",
            files_after=int(r["rows"] or 0),
            seconds=float(r["raw_value"] or 0.0),
            error=r["reason"] if r["status"] == "failed" else None,
        )
        for r in rows
    )
    first = rows[0]
    return MaintenanceReport(first["validation_ts"], tables, float(first["duration_seconds"] or 0.0))


def _check(row: Mapping[str, Any]) -> CheckOutcome:
    return CheckOutcome(
        check_id=row["check_id"],
        check_type=row["check_type"],
        kind=row["kind"],
        severity=row["severity"],
        status=row["status"],
        violations=row["violations"],
        raw_value=row["raw_value"],
        adjusted_value=row["adjusted_value"],
        multiplier=float(row["multiplier"] if row["multiplier"] is not None else 1.0),
        profiles=tuple(row["profiles"] or ()),
        regime=tuple(row["regime"] or ()),
    )


def _window(row: Mapping[str, Any]) -> WindowOutcome:
    return WindowOutcome(
        check_id=row["check_id"],
        check_type=row["check_type"],
        window=row["window"],
        window_start=row["window_start"],
        window_end=row["window_end"],
        severity=row["severity"],
        status=row["status"],
        raw_value=row["raw_value"],
        adjusted_value=row["adjusted_value"],
        multiplier=float(row["multiplier"] if row["multiplier"] is not None else 1.0),
        profiles=tuple(row["profiles"] or ()),
        expected_value=row.get("expected_value"),
        band_low=row.get("band_low"),
        band_high=row.get("band_high"),
        score=row.get("score"),
        history=row.get("history"),
        reason=row.get("reason"),
    )
