"""The per-batch states of window-scoped checks: their per-row inputs (Spark, lazy) and their grouping by
event-time window (Arrow).

1. :func:`window_state_columns` gives the per-row inputs of every window-scoped check's states; the driver
   router collects them in the batch's single Spark job (the Spark router groups them there instead).
2. :func:`batch_window_states` groups those rows by event-time window in Arrow and builds one mergeable state
   per (check, window, state), each kind through its own class (:mod:`streaming_dq.states.kinds`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from streaming_dq.core.base_check import ObservableAggregateCheck
from streaming_dq.exceptions import ConfigError, InternalError
from streaming_dq.metrics.calendar import window_starts
from streaming_dq.states import CountState, state_type
from streaming_dq.states.grouping import grouped_states
from streaming_dq.states.keyed import ROWS_STATE

if TYPE_CHECKING:
    from pyspark.sql import Column

    from streaming_dq.states.spec import StateSpec
__all__ = [
    "EVENT_TIME_COLUMN",
    "WindowKey",
    "batch_window_states",
    "state_column_name",
    "window_state_columns",
]

WindowKey = tuple[str, datetime | None]
"""(check id, window start in UTC); a None start holds the rows whose event time is NULL."""

#: The extra column carrying the event time (cast to timestamp) next to the state inputs.
EVENT_TIME_COLUMN = "__w_event_time"


def state_column_name(check_id: str, state_name: str) -> str:
    """The extra column holding the per-row input of one state of a window-scoped check."""
    return f"__w__{check_id}__{state_name}"


# -- per-row inputs (Spark, lazy) -----------------------------------------------------------------------------


def window_state_columns(
    window_checks: Sequence[ObservableAggregateCheck], event_time: str
) -> dict[str, Column]:
    """Per-row input columns of every window-scoped check's states, plus the event time.

    Count states get their boolean predicate (NULL -> False; a count of every row needs no column), hll states
    the raw value, the other kinds the value cast to double. Pure and lazy: no Spark action.

    Args:
        window_checks: The plan's ``window_checks``.
        event_time: The event-time column (cast to timestamp in :data:`EVENT_TIME_COLUMN`).

    Example:
        >>> cols = window_state_columns(plan.window_checks, "ts")  # doctest: +SKIP
        >>> v = validate_to_arrow(plan, df, extra_columns=cols)  # doctest: +SKIP
        >>> states = batch_window_states(plan.window_checks, v.extra_columns, timezone="Europe/Berlin")  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    cols: dict[str, Column] = {EVENT_TIME_COLUMN: F.col(event_time).cast("timestamp")}
    for check in window_checks:
        for sname, spec in check.state_specs().items():
            col = _row_input(spec, check.check_id)
            if col is not None:
                cols[state_column_name(check.check_id, sname)] = col
    return cols


def _row_input(spec: StateSpec, check_id: str) -> Column | None:
    try:
        return state_type(spec.kind).row_input(spec.expr)
    except InternalError:
        raise ConfigError(f"check {check_id!r}: a {spec.kind} state needs an expression") from None


# -- per-batch window states (Arrow) --------------------------------------------------------------------------


def batch_window_states(
    window_checks: Sequence[ObservableAggregateCheck],
    table: pa.Table,
    event_time_array: pa.Array | pa.ChunkedArray | None = None,
    size: timedelta | None = None,
    timezone: str = "UTC",
) -> dict[WindowKey, dict[str, Any]]:
    """The states of one batch per (check, event-time window), grouped in Arrow.

    Every group also holds :data:`ROWS_STATE` (its row count). Rows with a NULL event time are in no window:
    they form the group ``(check_id, None)``.

    Args:
        window_checks: The window-scoped checks.
        table: The per-row inputs (``ArrowValidation.extra_columns``), named by :func:`state_column_name`.
        event_time_array: The rows' event times; default: the table's :data:`EVENT_TIME_COLUMN`.
        size: One window size for every check; default: each check's ``scope.size``.
        timezone: Zone whose local midnight aligns the windows.

    Example:
        >>> batch_window_states([orders_per_day], table, timezone="Europe/Berlin")  # doctest: +SKIP
        {('orders-per-day', datetime(2025, 12, 23, 23, 0, tzinfo=UTC)): {'rows': CountState(n=37), ...}}
    """
    ts = table.column(EVENT_TIME_COLUMN) if event_time_array is None else event_time_array
    by_size: dict[timedelta, list[ObservableAggregateCheck]] = defaultdict(list)
    for check in window_checks:
        by_size[size or scope_size(check)].append(check)
    out: dict[WindowKey, dict[str, Any]] = {}
    for window_size, checks in by_size.items():
        out.update(_size_states(checks, table, window_starts(ts, window_size, timezone)))
    return out


def scope_size(check: ObservableAggregateCheck) -> timedelta:
    if check.scope is None:
        raise ConfigError(f"check {check.check_id!r} has no window scope", field_path="scope")
    return check.scope.size


def _size_states(
    checks: Sequence[ObservableAggregateCheck], table: pa.Table, starts: pa.Array
) -> dict[WindowKey, dict[str, Any]]:
    """The states of checks sharing a window size, grouped by window start in one pass
    (:func:`~streaming_dq.states.grouping.grouped_states`)."""
    inputs: dict[str, tuple[str, Any]] = {}
    owners: dict[str, tuple[str, str]] = {}
    for check in checks:
        for sname, kind in state_kinds(check).items():
            name = state_column_name(check.check_id, sname)
            inputs[name] = (kind, table.column(name) if name in table.column_names else None)
            owners[name] = (check.check_id, sname)
    grouped = grouped_states(starts, inputs)
    out: dict[WindowKey, dict[str, Any]] = {}
    for start, rows in grouped.rows.items():
        for check in checks:
            out[(check.check_id, start)] = {ROWS_STATE: CountState(rows)}
        for name, (cid, sname) in owners.items():
            out[(cid, start)][sname] = grouped.states[start][name]
    return out


def state_kinds(check: ObservableAggregateCheck) -> dict[str, str]:
    return {sname: spec.kind for sname, spec in check.state_specs().items()}
