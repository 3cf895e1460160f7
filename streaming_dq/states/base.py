"""Mergeable metric states, one class per kind, each carrying its three forms.

Every observable aggregate is computed as one of these states in the batch's single aggregation pass. States
form a commutative monoid: ``merge`` is associative and commutative and ``identity()`` changes nothing, so the
state of a window or of the stream's whole life is the fold of its batches' states, never a rescan.

A kind is read and written through its class only:

- **Spark form**: :meth:`spark_aggregations` (the aggregate columns of the batch's one pass over a value
  column from :meth:`spark_input`);
- **Arrow form**: :meth:`row_input` (the per-row column the driver router collects), then either
  :meth:`arrow_aggregates` + :meth:`from_arrow_row` (one Arrow group-by per window size) or, for a sketch,
  :meth:`from_grouped_values` (one sketch per group of rows: a regime, a window);
- **record form**: :meth:`to_record` / :meth:`from_record` (the metrics table's columns, and the names of the
  Spark aggregates: the one pass's values decode with :meth:`from_record` too).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, ClassVar, Protocol

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.exceptions import InternalError

__all__ = ["Kind", "State"]


class State(Protocol):
    kind: ClassVar[str]

    def merge(self, other: Any) -> Any: ...

    def to_record(self) -> dict[str, Any]: ...


class Kind:
    """The forms shared by the kinds (a value kind's defaults; count and the sketches override)."""

    kind: ClassVar[str]
    #: A sketch is built per window from the window's values, not from Arrow aggregates.
    sketched: ClassVar[bool] = False

    @classmethod
    def identity(cls) -> Any:
        return cls()

    @classmethod
    def spark_input(cls, expr: Column | None, where: Column | None) -> Column:
        """The column the aggregates read: ``expr`` (``where`` masks the rows outside it to NULL)."""
        if expr is None:
            raise InternalError(f"a {cls.kind} state needs an expression")
        return expr if where is None else F.when(where, expr)

    @classmethod
    def spark_aggregations(cls, value: Column) -> dict[str, Column]:
        """Aggregate columns over ``value``, named by the record fields they fill."""
        raise NotImplementedError

    @classmethod
    def row_input(cls, expr: Column | None) -> Column | None:
        """The per-row column the driver router collects for the Arrow form (None: none needed)."""
        if expr is None:
            raise InternalError(f"a {cls.kind} state needs an expression")
        return expr.cast("double")

    @classmethod
    def arrow_type(cls) -> pa.DataType:
        return pa.float64()

    @classmethod
    def arrow_columns(cls, col: str, values: pa.Array | pa.ChunkedArray) -> dict[str, Any]:
        """The columns :meth:`arrow_aggregates` reads (named ``col`` and ``col_*``), from the per-row input."""
        return {col: values.cast(cls.arrow_type())}

    @classmethod
    def arrow_aggregates(cls, col: str) -> list[tuple[Any, ...]]:
        """Arrow ``group_by().aggregate`` specs over ``col``; their outputs are named ``<col>_<function>``."""
        raise NotImplementedError

    @classmethod
    def from_arrow_row(cls, col: str, row: Mapping[str, Any]) -> Any:
        """The state of one group from the outputs of :meth:`arrow_aggregates`."""
        raise NotImplementedError

    @classmethod
    def from_grouped_values(
        cls, keys: pa.Array | pa.ChunkedArray, values: pa.Array | pa.ChunkedArray
    ) -> dict[Hashable, Any]:
        """A sketch kind's state per group key (a regime, a window start), from each group's values."""
        raise NotImplementedError

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Any:
        """The state of :meth:`to_record`'s fields (the metrics table's row, or the one pass's values)."""
        raise NotImplementedError
