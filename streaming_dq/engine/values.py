"""The typed values one aggregation pass over a batch yields, whichever form (Spark or Arrow) computed them.

Each value merges: the Spark router aggregates per regime (and per event-time window) and folds the groups on
the driver, the driver router observes one global row; both end as the same :class:`BatchAggregates`, which is
what :func:`streaming_dq.engine.decision.decide` reads. Nothing here runs Spark.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from streaming_dq.states.keyed import BatchStates, WindowStates, merge_keyed

__all__ = [
    "BatchAggregates",
    "EventTimeStats",
    "RowCounts",
    "from_micros",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def from_micros(value: Any) -> datetime | None:
    """An epoch-microseconds value as an aware UTC datetime (None stays None)."""
    return None if value is None else _EPOCH + timedelta(microseconds=int(value))


def _nonzero(counts: Mapping[Any, int]) -> dict[Any, int]:
    return {k: n for k, n in counts.items() if n}


@dataclass(frozen=True)
class EventTimeStats:
    """A batch's event-time range and how many well-formed rows had no event time."""

    min: datetime | None = None
    max: datetime | None = None
    nulls: int = 0

    @classmethod
    def from_micros(cls, low: Any, high: Any, nulls: Any) -> EventTimeStats:
        return cls(from_micros(low), from_micros(high), int(nulls or 0))

    def merge(self, other: EventTimeStats) -> EventTimeStats:
        lows = [t for t in (self.min, other.min) if t is not None]
        highs = [t for t in (self.max, other.max) if t is not None]
        return EventTimeStats(min(lows, default=None), max(highs, default=None), self.nulls + other.nulls)


@dataclass(frozen=True)
class RowCounts:
    """Row counts per regime ordinal, and how often each row-check flag fired in each regime.

    Attributes:
        rows: Rows per regime.
        failed: Rows a fail-level row check failed, per regime.
        warned: Rows not failed on which a warn-level row check fired, per regime.
        fired: Per ``(flag index, regime)``, the rows on which the flag fired (enabled flags only).
    """

    rows: Mapping[int, int] = field(default_factory=dict)
    failed: Mapping[int, int] = field(default_factory=dict)
    warned: Mapping[int, int] = field(default_factory=dict)
    fired: Mapping[tuple[int, int], int] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        rows: Mapping[int, int],
        failed: Mapping[int, int],
        warned: Mapping[int, int],
        fired: Mapping[tuple[int, int], int],
    ) -> RowCounts:
        """Counts with the zero entries left out (rows keep theirs: a regime's presence is a fact)."""
        return cls(dict(rows), _nonzero(failed), _nonzero(warned), _nonzero(fired))

    def merge(self, other: RowCounts) -> RowCounts:
        def add(a: Mapping[Any, int], b: Mapping[Any, int]) -> dict[Any, int]:
            out = dict(a)
            for key, n in b.items():
                out[key] = out.get(key, 0) + n
            return out

        return RowCounts.of(
            add(self.rows, other.rows),
            add(self.failed, other.failed),
            add(self.warned, other.warned),
            add(self.fired, other.fired),
        )

    def fired_in(self, flag: int, ordinals: frozenset[int] | set[int] | None = None) -> int:
        """Rows on which ``flag`` fired, in the given regimes (all when None)."""
        return sum(n for (i, r), n in self.fired.items() if i == flag and (ordinals is None or r in ordinals))


@dataclass(frozen=True)
class BatchAggregates:
    """Everything one pass aggregated over a batch.

    Attributes:
        counts: Row counts per regime and flag.
        states: The mergeable states of every batch-scoped observable check, per override group.
        event_time: The event-time range.
        windows: The states of every window-scoped check per event-time window (None when the form that
            computed the rest leaves them to the caller, as the driver router does in Arrow).
    """

    counts: RowCounts = field(default_factory=RowCounts)
    states: BatchStates = field(default_factory=dict)
    event_time: EventTimeStats = field(default_factory=EventTimeStats)
    windows: WindowStates | None = None

    def merge(self, other: BatchAggregates) -> BatchAggregates:
        windows = (
            None
            if self.windows is None and other.windows is None
            else merge_keyed(self.windows or {}, other.windows or {})
        )
        return BatchAggregates(
            self.counts.merge(other.counts),
            merge_keyed(self.states, other.states),
            self.event_time.merge(other.event_time),
            windows,
        )
