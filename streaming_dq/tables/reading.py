"""Reading a Delta table into Arrow on the driver, safely at interpreter exit.

``DeltaTable.to_pyarrow_table()`` scans through a pyarrow dataset over a Python file-system handler: the scan's
read-ahead tasks finish on pyarrow's thread pool after the call returned, and one that drops its last
reference to the handler needs the GIL. When that happens while the interpreter shuts down, CPython 3.11
ends the thread with ``pthread_exit`` inside a ``noexcept`` C++ destructor and the process aborts with
``terminate called without an active exception`` (exit 134), after all its work is done (apache/arrow#34314,
delta-io/delta-rs#2184). Measured here: a script that reads a 20-file table with ``to_pyarrow_table()`` as
its last step aborted in 28 of 40 runs; with :func:`read_table` (delta-rs's own DataFusion scan, no Python
file system) in none of 40. Everything the project reads goes through :func:`read_table`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

from streaming_dq.tables.storage import delta_rs_options

__all__ = ["read_table", "sql_literal"]


def sql_literal(value: str | int | float | bool) -> str:
    """A value as a DataFusion SQL literal (strings single-quoted, quotes doubled).

    Example:
        >>> sql_literal("o'brien")
        "'o''brien'"
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + value.replace("'", "''") + "'"


def read_table(
    uri: str,
    *,
    storage_options: Mapping[str, str] | None = None,
    columns: Sequence[str] | None = None,
    predicate: str | None = None,
) -> pa.Table:
    """The rows of a Delta table (matching ``predicate``) as a pyarrow Table in the table's own schema.

    Args:
        uri: The table.
        storage_options: delta-rs storage options (object stores).
        columns: Only these columns, in this order.
        predicate: A DataFusion SQL predicate (column names are case sensitive), e.g. ``gate = 'orders'``;
            build literals with :func:`sql_literal`.

    Example:
        >>> read_table("/data/orders_pass").num_rows  # doctest: +SKIP
        1042
    """
    from deltalake import DeltaTable

    table = DeltaTable(uri, storage_options=delta_rs_options(storage_options or {}))
    schema = pa.schema(table.schema().to_arrow())
    if columns is not None:
        schema = pa.schema([schema.field(c) for c in columns])
    scanned = pa.table(
        table.scan(columns=list(columns) if columns is not None else None, predicate=predicate)
    )
    return scanned.select(schema.names).cast(schema)  # the scan yields view types
