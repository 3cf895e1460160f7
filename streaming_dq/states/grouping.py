"""States per group of rows, computed in Arrow: one ``group_by`` for the value kinds, one sketch per group for
the sketched kinds, every kind through its own class (:mod:`streaming_dq.states.kinds`).

The driver router uses it twice on the rows it collected: per regime ordinal for the batch's observed states,
and per event-time window start for the window-scoped checks.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from streaming_dq.exceptions import InternalError
from streaming_dq.states.kinds import state_type
from streaming_dq.states.values import CountState

__all__ = ["GroupedStates", "grouped_states"]

_KEY = "k"
_ROWS = "count_all"


@dataclass(frozen=True)
class GroupedStates:
    """What :func:`grouped_states` found: per group key, its row count and each named state.

    A key with no rows is absent from both; read it as the identity state of each kind.
    """

    rows: dict[Any, int] = field(default_factory=dict)
    states: dict[Any, dict[str, Any]] = field(default_factory=dict)


def grouped_states(
    keys: pa.Array | pa.ChunkedArray, inputs: Mapping[str, tuple[str, pa.Array | pa.ChunkedArray | None]]
) -> GroupedStates:
    """The state of every input over the rows of each distinct key.

    Args:
        keys: One group key per row (a regime ordinal, a window start; NULL is a key of its own).
        inputs: Per state name, its kind and its per-row input (the kind's ``row_input`` as collected); None
            for a count of every row.

    Example:
        >>> g = grouped_states(pa.array([0, 0, 1]), {"n": ("count", None), "v": ("sum", pa.array([1.0, 2.0, 5.0]))})
        >>> g.rows, g.states[0]["v"]
        ({0: 2, 1: 1}, SumState(total=3.0, n=2))
    """
    columns: dict[str, Any] = {_KEY: keys}
    aggs: list[tuple[Any, ...]] = [([], _ROWS)]
    decoders: dict[str, tuple[str, str]] = {}
    sketches: dict[str, tuple[str, Any]] = {}
    for name, (kind, values) in inputs.items():
        state = state_type(kind)
        if values is None:
            if kind != "count":
                raise InternalError(f"state {name!r}: a {kind} state needs its per-row values")
            decoders[name] = (kind, "")  # every row counts: the group's row count
        elif state.sketched:
            sketches[name] = (kind, values)
        else:
            col = f"c{len(columns)}"
            columns.update(state.arrow_columns(col, values))
            aggs += state.arrow_aggregates(col)
            decoders[name] = (kind, col)
    out = GroupedStates()
    for row in pa.table(columns).group_by(_KEY).aggregate(aggs).to_pylist():
        key: Hashable = row[_KEY]
        out.rows[key] = int(row[_ROWS])
        out.states[key] = {
            name: state_type(kind).from_arrow_row(col, row) if col else CountState(int(row[_ROWS]))
            for name, (kind, col) in decoders.items()
        }
    for name, (kind, values) in sketches.items():
        for key, sketch in state_type(kind).from_grouped_values(keys, values).items():
            out.states.setdefault(key, {})[name] = sketch
    return out
