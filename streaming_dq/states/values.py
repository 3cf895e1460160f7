"""The value states: counts, sums, extremes and moments (count, mean, M2), merged exactly."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.states.base import Kind

__all__ = ["CountState", "ExtremumState", "MaxState", "MinState", "MomentsState", "SumState"]


@dataclass(frozen=True)
class CountState(Kind):
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
class SumState(Kind):
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
class ExtremumState(Kind):
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
    """The smallest non-NULL value (None for no value). NaN sorts above every number, as in Spark: the minimum
    is NaN only when every value is."""

    kind: ClassVar[str] = "min"

    @staticmethod
    def _pick(a: float, b: float) -> float:
        if math.isnan(a):
            return b
        return a if math.isnan(b) else min(a, b)

    @classmethod
    def arrow_columns(cls, col: str, values: pa.Array | pa.ChunkedArray) -> dict[str, Any]:
        number = values.cast(cls.arrow_type())
        # the min of the numbers (NaN as NULL): Arrow's min of NaN alone is NaN, NULL or +inf by version (+inf
        # beside Spark 3.5's NumPy-1 pyarrow, NULL in pyarrow 21); whether a NaN was there is its own column
        nan = pc.is_nan(number)
        return {col: pc.if_else(nan, pa.scalar(None, cls.arrow_type()), number), f"{col}_nan": nan}

    @classmethod
    def arrow_aggregates(cls, col: str) -> list[tuple[Any, ...]]:
        return [(col, "min"), (f"{col}_nan", "any")]

    @classmethod
    def from_arrow_row(cls, col: str, row: Mapping[str, Any]) -> MinState:
        value = row[f"{col}_min"]
        if value is None or math.isnan(value):
            return cls(math.nan if row.get(f"{col}_nan_any") else None)
        return cls(float(value))


@dataclass(frozen=True)
class MaxState(ExtremumState):
    """The largest non-NULL value (None for no value). NaN sorts above every number, as in Spark: one NaN makes
    the maximum NaN."""

    kind: ClassVar[str] = "max"

    @staticmethod
    def _pick(a: float, b: float) -> float:
        if math.isnan(a) or math.isnan(b):
            return math.nan
        return max(a, b)

    @classmethod
    def arrow_columns(cls, col: str, values: pa.Array | pa.ChunkedArray) -> dict[str, Any]:
        number = values.cast(cls.arrow_type())
        return {col: number, f"{col}_nan": pc.is_nan(number)}  # Arrow's max leaves NaN out; Spark's does not

    @classmethod
    def arrow_aggregates(cls, col: str) -> list[tuple[Any, ...]]:
        return [(col, "max"), (f"{col}_nan", "any")]

    @classmethod
    def from_arrow_row(cls, col: str, row: Mapping[str, Any]) -> MaxState:
        if row.get(f"{col}_nan_any"):
            return cls(math.nan)
        value = row[f"{col}_max"]
        return cls(float(value) if value is not None else None)


@dataclass(frozen=True)
class MomentsState(Kind):
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
