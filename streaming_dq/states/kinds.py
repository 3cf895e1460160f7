"""Mergeable metric states, one class per kind, each carrying its three forms.

Every observable aggregate is computed as one of these states in the batch's single aggregation pass. States
form a commutative monoid: ``merge`` is associative and commutative and ``identity()`` changes nothing, so the
state of a window or of the stream's whole life is the fold of its batches' states, never a rescan.

A kind is read and written through its class only:

- **Spark form**: :meth:`spark_aggregations` (the aggregate columns of the batch's one pass over a value
  column from :meth:`spark_input`);
- **Arrow form**: :meth:`row_input` (the per-row column the driver router collects), then either
  :meth:`arrow_aggregates` + :meth:`from_arrow_row` (one Arrow group-by per window size) or, for a sketch,
  :meth:`from_window_values` (one sketch per window);
- **record form**: :meth:`to_record` / :meth:`from_record` (the metrics table's columns, and the names of the
  Spark aggregates: the one pass's values decode with :meth:`from_record` too).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Literal, Protocol

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.exceptions import InternalError

StateKind = Literal["count", "sum", "min", "max", "moments", "hll", "kll"]

HLL_LG_K = 12

#: The KLL sketches' accuracy parameter (Spark's and DataSketches' default: ~1.65% normalized rank error).
KLL_K = 200


class State(Protocol):
    kind: ClassVar[str]

    def merge(self, other: Any) -> Any: ...

    def to_record(self) -> dict[str, Any]: ...


class _Kind:
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
    def arrow_aggregates(cls, col: str) -> list[tuple[Any, ...]]:
        """Arrow ``group_by().aggregate`` specs over ``col``; their outputs are named ``<col>_<function>``."""
        raise NotImplementedError

    @classmethod
    def from_arrow_row(cls, col: str, row: Mapping[str, Any]) -> Any:
        """The state of one group from the outputs of :meth:`arrow_aggregates`."""
        raise NotImplementedError

    @classmethod
    def from_window_values(cls, starts: pa.Array, values: pa.ChunkedArray) -> dict[datetime | None, Any]:
        """A sketch kind's state per window start, from each window's values."""
        raise NotImplementedError

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Any:
        """The state of :meth:`to_record`'s fields (the metrics table's row, or the one pass's values)."""
        raise NotImplementedError


@dataclass(frozen=True)
class CountState(_Kind):
    """A number of rows (e.g. rows, NULLs, rows matching a predicate)."""

    kind: ClassVar[str] = "count"
    n: int = 0

    def merge(self, other: CountState) -> CountState:
        return CountState(self.n + other.n)

    @property
    def value(self) -> float:
        return float(self.n)

    def to_record(self) -> dict[str, Any]:
        return {"n": self.n}

    @classmethod
    def spark_input(cls, expr: Column | None, where: Column | None) -> Column:
        """The predicate counted (every row when ``expr`` is None), NULL counted as false."""
        pred = expr if expr is not None else F.lit(True)
        if where is not None:
            pred = pred & where
        return F.coalesce(pred, F.lit(False))

    @classmethod
    def spark_aggregations(cls, value: Column) -> dict[str, Column]:
        return {"n": F.count_if(value)}

    @classmethod
    def row_input(cls, expr: Column | None) -> Column | None:
        return None if expr is None else F.coalesce(expr, F.lit(False))

    @classmethod
    def arrow_type(cls) -> pa.DataType:
        return pa.int64()

    @classmethod
    def arrow_aggregates(cls, col: str) -> list[tuple[Any, ...]]:
        return [(col, "sum")]

    @classmethod
    def from_arrow_row(cls, col: str, row: Mapping[str, Any]) -> CountState:
        return cls(int(row[f"{col}_sum"] or 0))

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> CountState:
        return cls(int(record.get("n") or 0))


@dataclass(frozen=True)
class SumState(_Kind):
    """The sum of the non-NULL values of a numeric expression and how many there were."""

    kind: ClassVar[str] = "sum"
    total: float = 0.0
    n: int = 0

    def merge(self, other: SumState) -> SumState:
        return SumState(self.total + other.total, self.n + other.n)

    @property
    def value(self) -> float | None:
        return self.total if self.n else None

    def to_record(self) -> dict[str, Any]:
        return {"n": self.n, "sum": self.total}

    @classmethod
    def spark_aggregations(cls, value: Column) -> dict[str, Column]:
        number = value.cast("double")
        return {"sum": F.sum(number), "n": F.count(number)}

    @classmethod
    def arrow_aggregates(cls, col: str) -> list[tuple[Any, ...]]:
        return [(col, "sum"), (col, "count")]

    @classmethod
    def from_arrow_row(cls, col: str, row: Mapping[str, Any]) -> SumState:
        return cls.from_record({"sum": row[f"{col}_sum"], "n": row[f"{col}_count"]})

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> SumState:
        n = int(record.get("n") or 0)
        return cls(float(record.get("sum") or 0.0) if n else 0.0, n)


@dataclass(frozen=True)
class ExtremumState(_Kind):
    """The smallest (:class:`MinState`) or largest (:class:`MaxState`) non-NULL value; None for no value."""

    kind: ClassVar[str]
    extreme: float | None = None

    @staticmethod
    def _pick(a: float, b: float) -> float:
        raise NotImplementedError

    def merge(self, other: Any) -> Any:
        if self.extreme is None:
            return other
        if other.extreme is None:
            return self
        return type(self)(self._pick(self.extreme, other.extreme))

    @property
    def value(self) -> float | None:
        return self.extreme

    def to_record(self) -> dict[str, Any]:
        return {"value": self.extreme}

    @classmethod
    def spark_aggregations(cls, value: Column) -> dict[str, Column]:
        return {"value": getattr(F, cls.kind)(value.cast("double"))}

    @classmethod
    def arrow_aggregates(cls, col: str) -> list[tuple[Any, ...]]:
        return [(col, cls.kind)]

    @classmethod
    def from_arrow_row(cls, col: str, row: Mapping[str, Any]) -> Any:
        return cls.from_record({"value": row[f"{col}_{cls.kind}"]})

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Any:
        value = record.get("value")
        return cls(float(value) if value is not None else None)


@dataclass(frozen=True)
class MinState(ExtremumState):
    """The smallest non-NULL value (None for no value)."""

    kind: ClassVar[str] = "min"

    @staticmethod
    def _pick(a: float, b: float) -> float:
        return min(a, b)


@dataclass(frozen=True)
class MaxState(ExtremumState):
    """The largest non-NULL value (None for no value)."""

    kind: ClassVar[str] = "max"

    @staticmethod
    def _pick(a: float, b: float) -> float:
        return max(a, b)


@dataclass(frozen=True)
class MomentsState(_Kind):
    """Count, mean and M2 (sum of squared deviations) of the non-NULL values: mean and variance merge exactly.

    Merging uses Chan et al.'s parallel update, which stays accurate where a naive sum of squares cancels.
    """

    kind: ClassVar[str] = "moments"
    n: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def merge(self, other: MomentsState) -> MomentsState:
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * other.n / n
        m2 = self.m2 + other.m2 + delta * delta * self.n * other.n / n
        return MomentsState(n, mean, m2)

    @property
    def value(self) -> float | None:
        return self.mean if self.n else None

    @property
    def variance_pop(self) -> float | None:
        return self.m2 / self.n if self.n else None

    @property
    def variance_samp(self) -> float | None:
        return max(self.m2, 0.0) / (self.n - 1) if self.n > 1 else None

    @property
    def stddev_samp(self) -> float | None:
        variance = self.variance_samp
        return math.sqrt(variance) if variance is not None else None

    def to_record(self) -> dict[str, Any]:
        return {"n": self.n, "mean": self.mean, "m2": self.m2}

    @classmethod
    def spark_aggregations(cls, value: Column) -> dict[str, Column]:
        number = value.cast("double")
        return {"n": F.count(number), "mean": F.avg(number), "m2": F.var_pop(number) * F.count(number)}

    @classmethod
    def arrow_aggregates(cls, col: str) -> list[tuple[Any, ...]]:
        return [(col, "count"), (col, "mean"), (col, "variance", pc.VarianceOptions(ddof=0))]

    @classmethod
    def from_arrow_row(cls, col: str, row: Mapping[str, Any]) -> MomentsState:
        n = int(row[f"{col}_count"] or 0)
        if n == 0:
            return cls()
        return cls(n, float(row[f"{col}_mean"]), float(row[f"{col}_variance"]) * n)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> MomentsState:
        n = int(record.get("n") or 0)
        if n == 0:
            return cls()
        return cls(n, float(record.get("mean") or 0.0), float(record.get("m2") or 0.0))


@dataclass(frozen=True)
class HllState(_Kind):
    """An HLL sketch (Apache DataSketches binary format, as written by Spark's ``hll_sketch_agg``).

    Merged with the ``datasketches`` package, so accumulation needs no Spark job.
    """

    kind: ClassVar[str] = "hll"
    sketched: ClassVar[bool] = True
    sketch: bytes | None = None

    def merge(self, other: HllState) -> HllState:
        if other.sketch is None:
            return self
        if self.sketch is None:
            return other
        from datasketches import hll_sketch, hll_union, tgt_hll_type

        union = hll_union(HLL_LG_K)
        union.update(hll_sketch.deserialize(self.sketch))
        union.update(hll_sketch.deserialize(other.sketch))
        return HllState(bytes(union.get_result(tgt_hll_type.HLL_4).serialize_compact()))

    @property
    def value(self) -> float | None:
        if self.sketch is None:
            return 0.0
        from datasketches import hll_sketch

        return float(round(hll_sketch.deserialize(self.sketch).get_estimate()))

    def to_record(self) -> dict[str, Any]:
        return {"sketch": self.sketch}

    @classmethod
    def spark_aggregations(cls, value: Column) -> dict[str, Column]:
        return {"sketch": F.hll_sketch_agg(value, HLL_LG_K)}

    @classmethod
    def row_input(cls, expr: Column | None) -> Column | None:
        if expr is None:
            raise InternalError("an hll state needs an expression")
        return expr

    @classmethod
    def from_window_values(cls, starts: pa.Array, values: pa.ChunkedArray) -> dict[datetime | None, Any]:
        """One sketch per window over its distinct non-NULL values (NULLs are ignored, as in Spark)."""
        from datasketches import hll_sketch, tgt_hll_type

        distinct = pa.table({"ws": starts, "v": values}).group_by("ws").aggregate([("v", "distinct")])
        out: dict[datetime | None, Any] = {}
        for start, group in zip(
            distinct.column("ws").to_pylist(), distinct.column("v_distinct").to_pylist(), strict=True
        ):
            if not group:
                out[start] = cls()
                continue
            sketch = hll_sketch(HLL_LG_K, tgt_hll_type.HLL_4)
            for value in group:
                sketch.update(value.hex() if isinstance(value, bytes) else value)
            out[start] = cls(bytes(sketch.serialize_compact()))
        return out

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> HllState:
        sketch = record.get("sketch")
        return cls(bytes(sketch) if sketch else None)


@dataclass(frozen=True)
class KllState(_Kind):
    """A KLL quantile sketch of doubles (Apache DataSketches binary format, as written by Spark's
    ``kll_sketch_agg_double``): any quantile of the values it saw, within a rank error of ~1.65%.

    Merged with the ``datasketches`` package, so a window's or the stream's quantiles need no rescan. Merging
    is not bit-for-bit deterministic (KLL compacts at random), only within its rank error.
    """

    kind: ClassVar[str] = "kll"
    sketched: ClassVar[bool] = True
    sketch: bytes | None = None

    @classmethod
    def of(cls, sketch: bytes | None) -> KllState:
        """The state of serialized sketch bytes; a sketch of no values is the identity (``sketch`` None), so
        Spark's empty sketch and a window without values are stored alike."""
        if not sketch:
            return cls()
        from datasketches import kll_doubles_sketch

        return cls() if kll_doubles_sketch.deserialize(bytes(sketch)).is_empty() else cls(bytes(sketch))

    def _sketch(self) -> Any:
        from datasketches import kll_doubles_sketch

        return kll_doubles_sketch.deserialize(self.sketch) if self.sketch else kll_doubles_sketch(KLL_K)

    def merge(self, other: KllState) -> KllState:
        if not other.sketch:
            return self
        if not self.sketch:
            return other
        merged = self._sketch()
        merged.merge(other._sketch())
        return KllState(bytes(merged.serialize()))

    @property
    def n(self) -> int:
        return int(self._sketch().n) if self.sketch else 0

    def quantile(self, q: float) -> float | None:
        """The smallest value with at least ``q`` of the values at or below it (None for no values)."""
        sketch = self._sketch()
        return None if sketch.is_empty() else float(sketch.get_quantile(q, inclusive=True))

    @property
    def value(self) -> float | None:
        return self.quantile(0.5)

    def to_record(self) -> dict[str, Any]:
        return {"sketch": self.sketch}

    @classmethod
    def spark_aggregations(cls, value: Column) -> dict[str, Column]:
        number = value.cast("double")  # NaN is not a value to rank: left out like NULL
        return {"sketch": F.kll_sketch_agg_double(F.when(~F.isnan(number), number), KLL_K)}

    @classmethod
    def from_window_values(cls, starts: pa.Array, values: pa.ChunkedArray) -> dict[datetime | None, Any]:
        """One sketch per window over its non-NULL values."""
        grouped = (
            pa.table({"ws": starts, "v": values.cast(pa.float64())}).group_by("ws").aggregate([("v", "list")])
        )
        return {
            start: kll_from_values(group)
            for start, group in zip(
                grouped.column("ws").to_pylist(), grouped.column("v_list").to_pylist(), strict=True
            )
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> KllState:
        return cls.of(record.get("sketch"))


def kll_from_values(values: Any) -> KllState:
    """A sketch of the non-NULL, non-NaN doubles in ``values`` (a numpy array or a sequence)."""
    import numpy as np
    from datasketches import kll_doubles_sketch

    array = np.asarray([v for v in values if v is not None], dtype="float64")
    array = array[~np.isnan(array)]
    if array.size == 0:
        return KllState()
    sketch = kll_doubles_sketch(KLL_K)
    sketch.update(array)
    return KllState(bytes(sketch.serialize()))


STATE_TYPES: dict[str, type[_Kind]] = {
    cls.kind: cls for cls in (CountState, SumState, MinState, MaxState, MomentsState, HllState, KllState)
}


def state_type(kind: str) -> type[_Kind]:
    """The class of a state kind.

    Raises:
        InternalError: No such kind.
    """
    try:
        return STATE_TYPES[kind]
    except KeyError:
        raise InternalError(f"unknown state kind {kind!r}") from None


def empty_state(kind: str) -> Any:
    """The identity state of a kind."""
    return state_type(kind).identity()


def state_from_record(kind: str, record: Mapping[str, Any]) -> Any:
    """Rebuild a state from :meth:`to_record` output (as stored in the metrics table)."""
    return state_type(kind).from_record(record)
