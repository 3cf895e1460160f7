"""The driver's index of the keys a gate remembers: the keys table's records the horizon reaches, in NumPy.

The driver router judges duplicates across batches on the rows it holds
(:mod:`~streaming_dq.checks.stream_keys_arrow`); this index answers its two questions without a Spark job: a
key's latest sighting (:meth:`KeyIndex.last_seen`) and, for the keys found, their first occurrence
(:meth:`KeyIndex.first_of`). It holds one entry per record of the keys table (a check, a key, a batch): the
key's 128-bit hash as two words, the record's last and first event times, its batch id and app id - 44 bytes
(``ENTRY_BYTES``); the record's origin stays in the table and is read for the keys found only.

Entries live in sorted segments (by the hash's first word): a committed batch's records become a new
segment, and segments of similar size are merged (a binary counter: each entry is merged O(log n) times),
so taking a batch in costs about its own size, not the index's. The keys table stays the record: the index
is built from it at start and after a failed batch, and rebuilt when another process has written it.

What the index answers is what the Spark form's read of the keys table answers: records older than the
cutoff (:meth:`KeyIndex.prune`, the start of the oldest day a batch may need) and the batch's own records
(a replay) are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from streaming_dq.checks.stream_keys import KEYS_SCHEMA, KeyCheck
from streaming_dq.checks.stream_keys_arrow import Earlier, hash_words, judge, micros
from streaming_dq.exceptions import InternalError

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from streaming_dq.sink.records import BatchContext

__all__ = ["ENTRY_BYTES", "INDEX_COLUMNS", "DeferredKeys", "KeyIndex", "index_of", "origins"]

#: The keys table's columns the index is built from.
INDEX_COLUMNS = ("check_id", "key_hash", "last_event_time", "event_time", "batch_id", "app_id")
#: The bytes one remembered record costs in the index (two hash words, two times, a batch id, an app code).
ENTRY_BYTES = 8 + 8 + 8 + 8 + 8 + 4

_NONE = np.iinfo(np.int64).min


@dataclass
class _Segment:
    """Entries sorted by ``hi``."""

    hi: np.ndarray
    lo: np.ndarray
    last: np.ndarray
    first: np.ndarray
    batch: np.ndarray
    app: np.ndarray  # int32 code into KeyIndex.apps

    def __len__(self) -> int:
        return len(self.hi)

    @staticmethod
    def sorted(
        hi: np.ndarray,
        lo: np.ndarray,
        last: np.ndarray,
        first: np.ndarray,
        batch: np.ndarray,
        app: np.ndarray,
    ) -> _Segment:
        order = np.argsort(hi, kind="stable")
        return _Segment(hi[order], lo[order], last[order], first[order], batch[order], app[order])

    def where(self, keep: np.ndarray) -> _Segment:
        return _Segment(
            self.hi[keep], self.lo[keep], self.last[keep], self.first[keep], self.batch[keep], self.app[keep]
        )

    @staticmethod
    def merged(a: _Segment, b: _Segment) -> _Segment:
        return _Segment.sorted(
            *(
                np.concatenate([getattr(a, f), getattr(b, f)])
                for f in ("hi", "lo", "last", "first", "batch", "app")
            )
        )

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, f).nbytes for f in ("hi", "lo", "last", "first", "batch", "app"))


@dataclass(frozen=True)
class _Matches:
    """Entries of one check that match some asked keys: ``query`` (which key), and the entry's values."""

    query: np.ndarray
    last: np.ndarray
    first: np.ndarray
    batch: np.ndarray
    app: np.ndarray


class KeyIndex:
    """The remembered records of a gate's stream-scoped checks (see the module).

    Args:
        check_ids: The checks the index answers for.
    """

    def __init__(self, check_ids: list[str]) -> None:
        self._segments: dict[str, list[_Segment]] = {c: [] for c in check_ids}
        self.apps: list[str] = []
        self._app_codes: dict[str, int] = {}
        self.cutoff = _NONE
        self._exclude: tuple[int, int] | None = None  # (app code, batch id) of the batch being judged

    # -- filling ------------------------------------------------------------------------------------------

    def add(self, records: pa.Table) -> None:
        """Take in keys-table records (at least :data:`INDEX_COLUMNS`), e.g. a committed batch's."""
        if records.num_rows == 0:
            return
        apps = records.column("app_id").combine_chunks().dictionary_encode()
        codes = np.array([self._app_code(a) for a in apps.dictionary.to_pylist()], np.int32)
        app = codes[np.asarray(apps.indices.to_numpy(zero_copy_only=False), dtype=np.int64)]
        hi, lo = hash_words(records.column("key_hash"))
        last = micros(records.column("last_event_time"))
        first = micros(records.column("event_time"))
        batch = np.asarray(records.column("batch_id").to_numpy(), dtype=np.int64)
        check = records.column("check_id").combine_chunks().dictionary_encode()
        names = check.dictionary.to_pylist()
        which = np.asarray(check.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        for k, name in enumerate(names):
            if name not in self._segments:
                continue
            keep = (which == k) & (last >= self.cutoff)
            if keep.any():
                segment = _Segment.sorted(hi[keep], lo[keep], last[keep], first[keep], batch[keep], app[keep])
                self._push(name, segment)

    def _push(self, check_id: str, segment: _Segment) -> None:
        segments = self._segments[check_id]
        segments.append(segment)
        while len(segments) > 1 and len(segments[-2]) <= 2 * len(segments[-1]):
            b, a = segments.pop(), segments.pop()
            segments.append(_Segment.merged(a, b))

    def _app_code(self, app_id: str) -> int:
        if app_id not in self._app_codes:
            self._app_codes[app_id] = len(self.apps)
            self.apps.append(app_id)
        return self._app_codes[app_id]

    def prune(self, cutoff_micros: int) -> None:
        """Leave out the records whose last event time is before ``cutoff_micros`` (they can no longer count)."""
        if cutoff_micros <= self.cutoff:
            return
        self.cutoff = cutoff_micros
        for check_id, segments in self._segments.items():
            kept = [s.where(s.last >= cutoff_micros) for s in segments]
            self._segments[check_id] = [s for s in kept if len(s)]

    def judging(self, app_id: str, batch_id: int) -> None:
        """The batch about to be judged: its own records (present when it is replayed) are left out."""
        code = self._app_codes.get(app_id)
        self._exclude = None if code is None else (code, batch_id)

    # -- what a batch asks --------------------------------------------------------------------------------

    def __len__(self) -> int:
        return sum(len(s) for segments in self._segments.values() for s in segments)

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for segments in self._segments.values() for s in segments)

    def _matches(self, check_id: str, hi: np.ndarray, lo: np.ndarray) -> _Matches:
        parts: list[tuple[np.ndarray, ...]] = []
        for s in self._segments.get(check_id, []):
            left = np.searchsorted(s.hi, hi, "left")
            count = np.searchsorted(s.hi, hi, "right") - left
            total = int(count.sum())
            if not total:
                continue
            query = np.repeat(np.arange(len(hi)), count)
            starts = np.repeat(np.cumsum(count) - count, count)
            at = left[query] + (np.arange(total) - starts)
            ok = s.lo[at] == lo[query]
            if self._exclude is not None:
                code, batch = self._exclude
                ok &= ~((s.app[at] == code) & (s.batch[at] == batch))
            at, query = at[ok], query[ok]
            parts.append((query, s.last[at], s.first[at], s.batch[at], s.app[at]))
        if not parts:
            empty = np.empty(0, np.int64)
            return _Matches(empty, empty, empty, empty, np.empty(0, np.int32))
        return _Matches(*(np.concatenate([p[k] for p in parts]) for k in range(5)))

    def last_seen(self, check_id: str, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
        """Per key, its latest sighting (int64 microseconds; the smallest int64 when none)."""
        found = self._matches(check_id, hi, lo)
        out = np.full(len(hi), _NONE, np.int64)
        np.maximum.at(out, found.query, found.last)
        return out

    def first_occurrences(
        self, check_id: str, hi: np.ndarray, lo: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Per key (each was found), its first occurrence: event time, batch id, app id (the earliest by event
        time, then batch id, as the Spark form's ``min_by``)."""
        found = self._matches(check_id, hi, lo)
        order = np.lexsort((found.batch, found.first, found.query))
        q = found.query[order]
        head = np.ones(len(q), bool)
        head[1:] = q[1:] != q[:-1]
        pick = order[head]
        if len(pick) != len(hi):
            raise InternalError(f"check {check_id!r}: a key's first occurrence is not in the index")
        apps = [self.apps[int(c)] for c in found.app[pick]]
        return found.first[pick], found.batch[pick], apps


def index_of(
    table: DeltaTable, gate: str, check_ids: list[str], oldest: date | None, cutoff: int | None
) -> KeyIndex:
    """The index of a keys table's records of ``gate``: the partitions from ``oldest`` on, read one record batch
    at a time by delta-rs (``cutoff``: leave out the records last seen before it, in microseconds)."""
    from streaming_dq.tables.reading import sql_literal

    index = KeyIndex(check_ids)
    if cutoff is not None:
        index.prune(cutoff)
    predicate = f"gate = {sql_literal(gate)}"
    if oldest is not None:
        predicate += f" AND event_date >= '{oldest.isoformat()}'"
    schema = pa.schema([KEYS_SCHEMA.field(c) for c in INDEX_COLUMNS])
    scan = table.scan(columns=list(INDEX_COLUMNS), predicate=predicate)
    for batch in pa.RecordBatchReader.from_stream(scan):
        index.add(pa.Table.from_batches([batch]).select(schema.names).cast(schema))
    return index


def origins(
    table: DeltaTable, gate: str, check_id: str, keys: tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]
) -> pa.Array:
    """The origins of some records (``keys``: their hash words, batch ids and app ids), read from the keys table:
    only the files of their batches are scanned (a batch's records are its own files, and their ``batch_id``
    statistics prune the rest)."""
    from streaming_dq.tables.reading import sql_literal

    hi, lo, batch, apps = keys
    batches = ", ".join(str(b) for b in sorted({int(b) for b in batch}))
    predicate = (
        f"gate = {sql_literal(gate)} AND check_id = {sql_literal(check_id)} AND batch_id IN ({batches})"
    )
    rows = pa.table(table.scan(columns=["key_hash", "batch_id", "app_id", "origin"], predicate=predicate))
    rh, rl = hash_words(rows.column("key_hash"))
    columns = (rows.column(c).to_pylist() for c in ("batch_id", "app_id", "origin"))
    where = {(int(h), int(l_), b, a): o for h, l_, b, a, o in zip(rh, rl, *columns, strict=True)}
    found = [where.get((int(h), int(l_), int(b), a)) for h, l_, b, a in zip(hi, lo, batch, apps, strict=True)]
    return pa.array(found, pa.string())


class DeferredKeys:
    """The driver router's duplicates flags, decided from the collected rows against the index
    (:class:`~streaming_dq.engine.arrow.DeferredFlags`; the judge is
    :func:`~streaming_dq.checks.stream_keys_arrow.judge`, this its :class:`Remembered`).

    Args:
        index: The index, brought up to date for the batch.
        checks: The checks judged across batches.
        ctx: The batch.
        watermarks: Per check, its latest event time before the batch.
        gate: The gate's name (the keys table's ``gate``).
        table: The keys table, read when a found key's origin is asked for.
    """

    def __init__(
        self,
        index: KeyIndex,
        checks: Sequence[KeyCheck],
        ctx: BatchContext,
        watermarks: dict[str, datetime | None],
        gate: str,
        table: Callable[[], DeltaTable],
    ) -> None:
        self.index, self.checks, self.ctx, self.watermarks = index, list(checks), ctx, watermarks
        self.gate, self._table = gate, table
        self.check_ids: Sequence[str] = [c.check_id for c in self.checks]
        self._by_id = {c.check_id: c for c in self.checks}

    def last_seen(self, check_id: str, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
        return self.index.last_seen(check_id, hi, lo)

    def first_of(self, check_id: str, hi: np.ndarray, lo: np.ndarray) -> Earlier:
        """The first occurrence of remembered keys, its origin read from the keys table for these keys only (a
        check without order-by has none)."""
        event_time, batch, apps = self.index.first_occurrences(check_id, hi, lo)
        if not self._by_id[check_id].order_by or not len(hi):
            found = pa.nulls(len(hi), pa.string())
        else:
            found = origins(self._table(), self.gate, check_id, (hi, lo, batch, apps))
        return Earlier(event_time, batch, pa.array(apps, pa.string()), found)

    def finish(self, table: pa.Table) -> tuple[pa.Table, dict[str, np.ndarray]]:
        judged = judge(table, self.checks, self, self.watermarks, self.ctx.app_id, self.ctx.batch_id)
        return judged.table, judged.fired
