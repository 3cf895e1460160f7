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

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from streaming_dq.checks.stream_keys_arrow import hash_words, micros
from streaming_dq.exceptions import InternalError

__all__ = ["ENTRY_BYTES", "INDEX_COLUMNS", "KeyIndex"]

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
