"""Mergeable metric states.

Every observable aggregate is computed as one of these states in the batch's single aggregation pass. States
form a commutative monoid: ``merge`` is associative and commutative and ``identity()`` changes nothing, so the
state of a window or of the stream's whole life is the fold of its batches' states, never a rescan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

from streaming_dq.exceptions import InternalError

StateKind = Literal["count", "sum", "min", "max", "moments", "hll", "kll"]

HLL_LG_K = 12

#: The KLL sketches' accuracy parameter (Spark's and DataSketches' default: ~1.65% normalized rank error).
KLL_K = 200


class State(Protocol):
    kind: ClassVar[str]

    def merge(self, other: Any) -> Any: ...

    def to_record(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class CountState:
    """A number of rows (e.g. rows, NULLs, rows matching a predicate)."""

    kind: ClassVar[str] = "count"
    n: int = 0

    @classmethod
    def identity(cls) -> CountState:
        return cls()

    def merge(self, other: CountState) -> CountState:
        return CountState(self.n + other.n)

    @property
    def value(self) -> float:
        return float(self.n)

    def to_record(self) -> dict[str, Any]:
        return {"n": self.n}


@dataclass(frozen=True)
class SumState:
    """The sum of the non-NULL values of a numeric expression and how many there were."""

    kind: ClassVar[str] = "sum"
    total: float = 0.0
    n: int = 0

    @classmethod
    def identity(cls) -> SumState:
        return cls()

    def merge(self, other: SumState) -> SumState:
        return SumState(self.total + other.total, self.n + other.n)

    @property
    def value(self) -> float | None:
        return self.total if self.n else None

    def to_record(self) -> dict[str, Any]:
        return {"n": self.n, "sum": self.total}


@dataclass(frozen=True)
class MinState:
    """The smallest non-NULL value (None for no value)."""

    kind: ClassVar[str] = "min"
    extreme: float | None = None

    @classmethod
    def identity(cls) -> MinState:
        return cls()

    def merge(self, other: MinState) -> MinState:
        if self.extreme is None:
            return other
        if other.extreme is None:
            return self
        return MinState(min(self.extreme, other.extreme))

    @property
    def value(self) -> float | None:
        return self.extreme

    def to_record(self) -> dict[str, Any]:
        return {"value": self.extreme}


@dataclass(frozen=True)
class MaxState:
    """The largest non-NULL value (None for no value)."""

    kind: ClassVar[str] = "max"
    extreme: float | None = None

    @classmethod
    def identity(cls) -> MaxState:
        return cls()

    def merge(self, other: MaxState) -> MaxState:
        if self.extreme is None:
            return other
        if other.extreme is None:
            return self
        return MaxState(max(self.extreme, other.extreme))

    @property
    def value(self) -> float | None:
        return self.extreme

    def to_record(self) -> dict[str, Any]:
        return {"value": self.extreme}


@dataclass(frozen=True)
class MomentsState:
    """Count, mean and M2 (sum of squared deviations) of the non-NULL values: mean and variance merge exactly.

    Merging uses Chan et al.'s parallel update, which stays accurate where a naive sum of squares cancels.
    """

    kind: ClassVar[str] = "moments"
    n: int = 0
    mean: float = 0.0
    m2: float = 0.0

    @classmethod
    def identity(cls) -> MomentsState:
        return cls()

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


@dataclass(frozen=True)
class HllState:
    """An HLL sketch (Apache DataSketches binary format, as written by Spark's ``hll_sketch_agg``).

    Merged with the ``datasketches`` package, so accumulation needs no Spark job.
    """

    kind: ClassVar[str] = "hll"
    sketch: bytes | None = None

    @classmethod
    def identity(cls) -> HllState:
        return cls()

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


@dataclass(frozen=True)
class KllState:
    """A KLL quantile sketch of doubles (Apache DataSketches binary format, as written by Spark's
    ``kll_sketch_agg_double``): any quantile of the values it saw, within a rank error of ~1.65%.

    Merged with the ``datasketches`` package, so a window's or the stream's quantiles need no rescan. Merging
    is not bit-for-bit deterministic (KLL compacts at random), only within its rank error.
    """

    kind: ClassVar[str] = "kll"
    sketch: bytes | None = None

    @classmethod
    def identity(cls) -> KllState:
        return cls()

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


STATE_TYPES: dict[str, type] = {
    cls.kind: cls for cls in (CountState, SumState, MinState, MaxState, MomentsState, HllState, KllState)
}


def empty_state(kind: str) -> Any:
    """The identity state of a kind."""
    return STATE_TYPES[kind]()


def state_from_record(kind: str, record: dict[str, Any]) -> Any:
    """Rebuild a state from :meth:`to_record` output (as stored in the metrics table)."""
    if kind == "count":
        return CountState(int(record.get("n") or 0))
    if kind == "sum":
        return SumState(float(record.get("sum") or 0.0), int(record.get("n") or 0))
    if kind == "min":
        return MinState(record.get("value"))
    if kind == "max":
        return MaxState(record.get("value"))
    if kind == "moments":
        return MomentsState(
            int(record.get("n") or 0), float(record.get("mean") or 0.0), float(record.get("m2") or 0.0)
        )
    if kind == "hll":
        sketch = record.get("sketch")
        return HllState(bytes(sketch) if sketch is not None else None)
    if kind == "kll":
        return KllState.of(record.get("sketch"))
    raise InternalError(f"unknown state kind {kind!r}")
