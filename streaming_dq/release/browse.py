"""The quarantine to look at: ``streaming-dq quarantine show`` reads a gate's quarantine table, selects rows by
check, batch and release state, and keeps the first ``limit`` of them with a count of all that match.

The table is read by delta-rs, one record batch at a time (the batch range pushed down to the file
statistics), so memory holds the rows shown and one record batch, whatever the table's size. Rows come in the
table's own order: ``--batches`` chooses which part of the stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from streaming_dq.engine.result import ERRORS_COLUMN
from streaming_dq.release.judge import DISCARDED, RELEASED
from streaming_dq.sink.schemas import BATCH_ID_COLUMN, RELEASE_COLUMN
from streaming_dq.tables import DeltaTarget

__all__ = ["MASK", "STATES", "QuarantineView", "State", "browse", "masked", "row_states"]

#: What a masked value shows (``--mask COLUMN``: personal data, in output people share).
MASK = "***"

#: A quarantined row's state: still in quarantine (never released, or judged again by a release and still
#: failing: its ``_dq_release`` says which), released to the pass table, or discarded.
State = Literal["quarantined", "released", "discarded"]
STATES: tuple[State, ...] = ("quarantined", "released", "discarded")


@dataclass(frozen=True)
class QuarantineView:
    """Rows of a quarantine table: the first ones that matched, and how many matched in all."""

    rows: pa.Table
    matched: int
    scanned: int


def row_states(table: pa.Table) -> list[State]:
    """Each row's :data:`State`, from its ``_dq_release`` (the states a release writes, :mod:`.judge`)."""
    if RELEASE_COLUMN not in table.column_names:
        return ["quarantined"] * table.num_rows
    named: dict[str | None, State] = {RELEASED: "released", DISCARDED: "discarded"}
    states = pc.struct_field(table.column(RELEASE_COLUMN), "state").to_pylist()
    return [named.get(s, "quarantined") for s in states]


def browse(
    target: DeltaTarget,
    *,
    checks: Sequence[str] = (),
    batches: tuple[int | None, int | None] = (None, None),
    states: Sequence[State] = (),
    limit: int = 20,
) -> QuarantineView:
    """The quarantined rows of ``target`` failing any of ``checks`` (all rows without), of the batch ids in
    ``batches`` (inclusive bounds), in one of ``states`` (any without): the first ``limit``, and the count."""
    import pyarrow.dataset as ds
    from deltalake import DeltaTable

    from streaming_dq.tables.storage import delta_rs_options

    table = DeltaTable(target.uri, storage_options=delta_rs_options(target.storage_options) or None)
    dataset = table.to_pyarrow_dataset()
    lo, hi = batches
    bounds = [ds.field(BATCH_ID_COLUMN) >= lo] if lo is not None else []
    bounds += [ds.field(BATCH_ID_COLUMN) <= hi] if hi is not None else []
    where = bounds[0] & bounds[1] if len(bounds) == 2 else bounds[0] if bounds else None
    kept: list[pa.Table] = []
    shown = matched = scanned = 0
    for record_batch in dataset.to_batches(filter=where):
        part = pa.Table.from_batches([record_batch])
        scanned += part.num_rows
        if checks:
            part = part.filter(_fails_any(part, checks))
        if states:
            part = part.filter(pa.array([s in states for s in row_states(part)], pa.bool_()))
        matched += part.num_rows
        if shown < limit and part.num_rows:
            kept.append(part.slice(0, limit - shown))
            shown += kept[-1].num_rows
    rows = pa.concat_tables(kept) if kept else dataset.schema.empty_table()
    return QuarantineView(rows, matched, scanned)


def _fails_any(part: pa.Table, checks: Sequence[str]) -> pa.Array:
    """True on the rows whose ``_dq_errors`` name any of ``checks``."""
    errors = part.column(ERRORS_COLUMN).combine_chunks()
    hits = pc.is_in(pc.struct_field(pc.list_flatten(errors), "check-id"), value_set=pa.array(list(checks)))
    rows = set(pc.filter(pc.list_parent_indices(errors), hits).to_pylist())
    return pa.array([i in rows for i in range(part.num_rows)], pa.bool_())


def masked(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> list[dict[str, Any]]:
    """``rows`` with the values of ``columns`` shown as :data:`MASK` (NULL stays NULL: its absence is no
    secret)."""
    hidden = set(columns)
    return [{k: (MASK if k in hidden and v is not None else v) for k, v in row.items()} for row in rows]
