"""Duplicates across micro-batches in Arrow: the driver router's form of :mod:`~streaming_dq.checks.stream_keys`.

The driver router holds every row of a batch after its one collect. There, a batch's earlier occurrences are
found without a Spark job: the rows arrive with each check's key, key hash, judged and late flags and origin
(:func:`~streaming_dq.checks.stream_keys.key_columns`, the same encoding as the Spark form's), and this module
orders the judged rows of each key (event time, order-by values, row hash: the Spark form's window order),
asks the driver's index of remembered keys (:class:`Remembered`) for each key's latest sighting and first
occurrence, and writes :data:`~streaming_dq.checks.stream_keys.FIRST_SEEN_COLUMN` and
:data:`~streaming_dq.checks.stream_keys.KEYS_COLUMN` exactly as the Spark form does. The two forms are held
equal by ``tests/spark/test_stream_duplicates.py`` (both routers write the same tables) and
``tests/spark/test_stream_keys_forms.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from streaming_dq.checks.stream_keys import (
    FIRST_SEEN_COLUMN,
    FIRST_SEEN_TYPE,
    KEY_HELPER_PREFIX,
    KEY_RECORD_TYPE,
    KEYS_COLUMN,
    KeyCheck,
    key_helper,
)

__all__ = ["Earlier", "Judged", "Remembered", "hash_words", "judge", "micros"]

_UTC_TS = pa.timestamp("us", tz="UTC")
_NONE = np.iinfo(np.int64).min
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: pyarrow 25 places NULLs per sort key (the sort-wide option is deprecated there); older ones take only that.
_NULLS_PER_KEY = int(pa.__version__.split(".")[0]) >= 25


@dataclass(frozen=True)
class Earlier:
    """The first occurrence of each of some remembered keys (aligned with the keys asked for)."""

    event_time: np.ndarray  # int64 microseconds since the epoch (UTC)
    batch_id: np.ndarray  # int64
    app_id: pa.Array  # string
    origin: pa.Array  # string (NULL when the check has no order-by)


class Remembered(Protocol):
    """What a batch asks of the keys remembered before it (the driver's index of the keys table)."""

    def last_seen(self, check_id: str, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
        """Per key (its hash as two uint64 words), the latest event time it was seen at (int64 microseconds),
        or the smallest int64 when it was not seen."""
        ...

    def first_of(self, check_id: str, hi: np.ndarray, lo: np.ndarray) -> Earlier:
        """The first occurrence of each of these keys, which :meth:`last_seen` found."""
        ...


@dataclass(frozen=True)
class Judged:
    """A collected batch after :func:`judge`.

    Attributes:
        table: The rows with :data:`FIRST_SEEN_COLUMN` and :data:`KEYS_COLUMN` filled in and the helper columns
            gone.
        fired: Per check id, the rows its flag fires on (seen before, or too late under ``late: quarantine``).
    """

    table: pa.Table
    fired: dict[str, np.ndarray]


def hash_words(hashes: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """16-byte key hashes as two uint64 words each (a NULL hash becomes zeros: never judged)."""
    arr = hashes.combine_chunks() if isinstance(hashes, pa.ChunkedArray) else hashes
    n = len(arr)
    if arr.null_count:
        arr = pc.fill_null(arr, pa.scalar(b"\0" * 16, arr.type))
    fixed = arr.cast(pa.binary(16))
    words = np.frombuffer(fixed.buffers()[1], dtype="<u8", count=2 * n, offset=16 * fixed.offset)
    words = words.reshape(n, 2)
    return words[:, 0].copy(), words[:, 1].copy()


def _micros_of(value: datetime) -> int:
    return (value - _EPOCH) // timedelta(microseconds=1)


def micros(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Timestamps as int64 microseconds (NULL: the smallest int64)."""
    ints = column.cast(_UTC_TS).cast(pa.int64())
    return np.asarray(pc.fill_null(ints, _NONE).to_numpy(zero_copy_only=False), dtype=np.int64)


def _bools(column: pa.ChunkedArray) -> np.ndarray:
    return np.asarray(pc.fill_null(column, False).to_numpy(zero_copy_only=False), dtype=bool)


@dataclass
class _Pointers:
    """One check's pointers, per row: which kind and where the values come from."""

    kind: np.ndarray  # 0 none, 1 seen before, 2 seen earlier in the batch, 3 too late
    row_of_first: np.ndarray  # kind 2: the row of the key's first occurrence in the batch
    before: Earlier | None
    before_rows: np.ndarray  # kind 1: the rows, in the order of ``before``


def judge(
    table: pa.Table,
    checks: Sequence[KeyCheck],
    seen: Remembered,
    watermarks: Mapping[str, datetime | None],
    app_id: str,
    batch_id: int,
) -> Judged:
    """Fill in ``table``'s first-seen pointers and key records for ``checks`` (see the module): a row is too
    late when its event time is more than the horizon behind its check's watermark (the Spark form's rule)."""
    n = table.num_rows
    t = micros(table.column(key_helper("t")))
    row_hash = table.column(key_helper("rh"))
    structs: list[pa.StructArray] = []
    valid: list[np.ndarray] = []
    records: list[pa.StructArray] = []
    recorded: list[np.ndarray] = []
    fired: dict[str, np.ndarray] = {}
    for i, check in enumerate(checks):
        assert check.horizon is not None
        h = int(check.horizon.total_seconds() * 1_000_000)
        eligible = _bools(table.column(key_helper("e", i)))
        mark = watermarks.get(check.check_id)
        late = eligible & (t < _micros_of(mark) - h) if mark is not None else np.zeros(n, bool)
        judged = eligible & ~late
        hi, lo = hash_words(table.column(key_helper("h", i)))
        rows = _in_batch_order(table, i, len(check.order_by), judged, hi, lo, t, row_hash)
        hs, ls, ts = hi[rows], lo[rows], t[rows]
        starts = np.ones(len(rows), bool)
        starts[1:] = (hs[1:] != hs[:-1]) | (ls[1:] != ls[:-1])
        group = np.cumsum(starts) - 1
        first_at = np.flatnonzero(starts)
        last_at = np.append(first_at[1:], len(rows)) - 1
        previous = np.empty_like(ts)
        if len(ts):
            previous[0] = _NONE
            previous[1:] = ts[:-1]
        here = ~starts & (previous >= ts - h)

        last = seen.last_seen(check.check_id, hs, ls)
        before = (last != _NONE) & (last >= ts - h)
        kind = np.zeros(n, np.int8)
        kind[rows[here]] = 2
        kind[rows[before]] = 1  # an earlier batch's occurrence is the key's first
        kind[late] = 3
        row_of_first = np.zeros(n, np.int64)
        row_of_first[rows] = rows[first_at[group]]
        earlier = seen.first_of(check.check_id, hs[before], ls[before]) if before.any() else None
        pointers = _Pointers(kind, row_of_first, earlier, rows[before])
        structs.append(_pointer_array(table, i, check.check_id, pointers, t, app_id, batch_id))
        valid.append(kind != 0)
        fired[check.check_id] = (kind == 1) | (kind == 2) | ((kind == 3) & (check.late == "quarantine"))

        first_rows, last_rows = rows[first_at], rows[last_at]
        records.append(_record_array(table, i, check.check_id, first_rows, t[last_rows]))
        mask = np.zeros(n, bool)
        mask[first_rows] = True
        recorded.append(mask)
        # the record array is in first_rows order: put it in row order for the list below
        records[-1] = _scatter(records[-1], first_rows, n)

    helpers = [c for c in table.column_names if c.startswith(KEY_HELPER_PREFIX)]
    out = table.drop_columns([*helpers, FIRST_SEEN_COLUMN, KEYS_COLUMN])
    out = out.append_column(
        pa.field(FIRST_SEEN_COLUMN, FIRST_SEEN_TYPE), _lists(structs, valid, FIRST_SEEN_TYPE)
    )
    out = out.append_column(
        pa.field(KEYS_COLUMN, KEY_RECORD_TYPE), _lists(records, recorded, KEY_RECORD_TYPE)
    )
    return Judged(out, fired)


def _in_batch_order(
    table: pa.Table,
    i: int,
    n_order: int,
    judged: np.ndarray,
    hi: np.ndarray,
    lo: np.ndarray,
    t: np.ndarray,
    row_hash: pa.ChunkedArray,
) -> np.ndarray:
    """The judged rows' positions by (key hash, event time, order-by values, row hash): the Spark form's
    window order (its partitions are the key hashes; a NULL order-by value first, as Spark's ascending)."""
    idx = np.flatnonzero(judged)
    columns: dict[str, Any] = {"hi": hi[idx], "lo": lo[idx], "t": t[idx]}
    for j in range(n_order):
        columns[f"b{j}"] = table.column(key_helper(f"b{i}_", j)).take(pa.array(idx))
    columns["rh"] = row_hash.take(pa.array(idx))
    keys = pa.table(columns)
    if _NULLS_PER_KEY:
        order = pc.sort_indices(
            keys, sort_keys=[(name, "ascending", "at_start") for name in keys.column_names]
        )
    else:
        order = pc.sort_indices(
            keys, sort_keys=[(name, "ascending") for name in keys.column_names], null_placement="at_start"
        )
    return idx[np.asarray(order.to_numpy(), dtype=np.int64)]


def _pointer_array(
    table: pa.Table, i: int, check_id: str, p: _Pointers, t: np.ndarray, app_id: str, batch_id: int
) -> pa.StructArray:
    """One check's pointer per row (NULL where ``kind`` is 0), typed as :data:`FIRST_SEEN_TYPE`'s element."""
    n = len(p.kind)
    first = p.row_of_first
    event_time = np.where(p.kind == 2, t[first], _NONE)
    batch = np.where(p.kind == 2, batch_id, 0).astype(np.int64)
    # strings: the batch's origins, then the app id, then those of the earlier occurrences
    origins = table.column(key_helper("o", i)).combine_chunks().cast(pa.string())
    apps: pa.Array = pa.array([app_id], pa.string())
    origin_at = np.full(n, -1, np.int64)
    app_at = np.full(n, -1, np.int64)
    origin_at[p.kind == 2] = first[p.kind == 2]
    app_at[p.kind == 2] = 0
    if p.before is not None:
        b = p.before_rows
        event_time[b] = p.before.event_time
        batch[b] = p.before.batch_id
        origin_at[b] = n + np.arange(len(b))
        app_at[b] = 1 + np.arange(len(b))
        origins = pa.concat_arrays([origins, p.before.origin.cast(pa.string())])
        apps = pa.concat_arrays([apps, p.before.app_id.cast(pa.string())])
    late = p.kind == 3
    timed = (p.kind == 1) | (p.kind == 2)
    fields = list(FIRST_SEEN_TYPE.value_type)
    arrays = [
        pa.array(np.full(n, check_id, object), pa.string()),
        table.column(key_helper("k", i)).combine_chunks().cast(pa.string()),
        pa.array(batch, pa.int64(), mask=~timed),
        apps.take(pa.array(app_at, mask=~timed)),
        pa.array(event_time, pa.int64(), mask=~timed).cast(_UTC_TS),
        origins.take(pa.array(origin_at, mask=origin_at < 0)),
        pa.array(late),
    ]
    return pa.StructArray.from_arrays(arrays, fields=fields, mask=pa.array(p.kind == 0))


def _record_array(
    table: pa.Table, i: int, check_id: str, first_rows: np.ndarray, last_times: np.ndarray
) -> pa.StructArray:
    """One check's key records (one per key of the batch, on its first judged row), in ``first_rows`` order."""
    take = pa.array(first_rows)
    arrays = [
        pa.array(np.full(len(first_rows), check_id, object), pa.string()),
        table.column(key_helper("h", i)).take(take).combine_chunks().cast(pa.binary()),
        table.column(key_helper("k", i)).take(take).combine_chunks().cast(pa.string()),
        table.column(key_helper("t")).take(take).combine_chunks().cast(_UTC_TS),
        pa.array(last_times, pa.int64()).cast(_UTC_TS),
        table.column(key_helper("o", i)).take(take).combine_chunks().cast(pa.string()),
    ]
    return pa.StructArray.from_arrays(arrays, fields=list(KEY_RECORD_TYPE.value_type))


def _scatter(values: pa.StructArray, rows: np.ndarray, n: int) -> pa.StructArray:
    """``values`` (one per row of ``rows``) placed at those rows of an ``n``-row array, NULL elsewhere."""
    at = np.full(n, -1, np.int64)
    at[rows] = np.arange(len(rows))
    return values.take(pa.array(at, mask=at < 0))


def _lists(per_check: list[Any], present: list[np.ndarray], list_type: pa.ListType) -> pa.Array:
    """Per row, the present values of every check in check order as a list; NULL on a row with none (the
    Spark form's ``_present``)."""
    n = len(present[0]) if present else 0
    if not per_check:
        return pa.nulls(n, list_type)
    matrix = np.stack(present, axis=1)  # rows x checks
    rows, checks = np.nonzero(matrix)  # row-major: a row's checks in check order
    values = pa.concat_arrays(per_check).take(pa.array(checks * n + rows))
    counts = matrix.sum(axis=1)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values, type=list_type, mask=pa.array(counts == 0))
