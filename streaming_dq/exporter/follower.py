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

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from streaming_dq.core.outcome import BatchOutcome
from streaming_dq.core.outcome_rows import (
    DISCARD_KIND,
    RELEASE_KIND,
    decode_outcomes,
    finished_quarantine_counts,
)
from streaming_dq.tables.storage import delta_rs_options

if TYPE_CHECKING:
    pass

__all__ = ["QuarantineFollower", "ResultsFollower", "outcomes_from_results"]


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

        if not DeltaTable.is_deltatable(self.uri, storage_options=delta_rs_options(self.storage_options)):
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
    """Rebuild the :class:`BatchOutcome` of every batch whose ``kind = "batch"`` row is among ``rows`` (the
    results codec, :func:`~streaming_dq.core.outcome_rows.decode_outcomes`, the sink writes them with)."""
    return decode_outcomes(rows)


class QuarantineFollower:
    """The releases and discards of a gate's quarantine that finished, each reported once per process.

    A release or a discard runs in a process of its own (``streaming-dq release``) and records itself in the
    results table; the gate's exporter learns of it here. The first poll reports every finished one in the
    table, so the counters it feeds are totals over the table's history: after a restart they come back to
    the same values (Prometheus sees no reset) and grow only with new releases.

    Args:
        uri: The results table.
        gate: The gate's name.
        storage_options: delta-rs storage options (object stores).
        every: Seconds between two reads of the table (:meth:`poll` returns nothing in between).
        clock: Monotonic seconds.
    """

    def __init__(
        self,
        uri: str,
        gate: str,
        *,
        storage_options: Mapping[str, str] | None = None,
        every: float = 10.0,
        clock: Any = None,
    ) -> None:
        import time

        self.uri, self.gate, self.every = uri, gate, every
        self.storage_options = dict(storage_options or {})
        self._clock = clock or time.monotonic
        self._due = float("-inf")
        self.seen: set[str] = set()

    def poll(self) -> list[tuple[str, dict[str | None, int]]]:
        """``(kind, counts)`` of each release or discard that finished since the last read (see the class)."""
        now = self._clock()
        if now < self._due:
            return []
        self._due = now + self.every
        from deltalake import DeltaTable

        from streaming_dq.tables.reading import read_table, sql_literal

        if not DeltaTable.is_deltatable(self.uri, storage_options=delta_rs_options(self.storage_options)):
            return []
        predicate = (
            f"gate = {sql_literal(self.gate)} AND status = 'finished'"
            f" AND kind IN ({sql_literal(RELEASE_KIND)}, {sql_literal(DISCARD_KIND)})"
        )
        rows = read_table(self.uri, storage_options=self.storage_options, predicate=predicate).to_pylist()
        new = []
        for app_id, found in sorted(finished_quarantine_counts(rows).items()):
            if app_id not in self.seen:
                self.seen.add(app_id)
                new.append(found)
        return new
