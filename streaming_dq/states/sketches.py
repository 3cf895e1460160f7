"""The sketch states (Apache DataSketches binary formats, as Spark writes them): HLL for distinct counts and
KLL for quantiles, merged with the ``datasketches`` package, so accumulation needs no Spark job."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.exceptions import InternalError
from streaming_dq.states.base import Kind

__all__ = ["HLL_LG_K", "KLL_K", "HllState", "KllState", "kll_from_values"]

HLL_LG_K = 12

#: The KLL sketches' accuracy parameter (Spark's and DataSketches' default: ~1.65% normalized rank error).
KLL_K = 200


@dataclass(frozen=True)
class _SketchState(Kind):
    """What the two sketch kinds share: serialized bytes, and no bytes for a sketch of no values."""

    sketched: ClassVar[bool] = True
    sketch: bytes | None = None

    @classmethod
    def _is_empty(cls, sketch: bytes) -> bool:
        raise NotImplementedError

    @classmethod
    def of(cls, sketch: bytes | None) -> Self:
        """The state of serialized sketch bytes; a sketch of no values is the identity (``sketch`` None), so
        Spark's empty sketch and a group without values are stored alike."""
        if not sketch:
            return cls()
        return cls() if cls._is_empty(bytes(sketch)) else cls(bytes(sketch))

    def to_record(self) -> dict[str, Any]:
        return {"sketch": self.sketch}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Self:
        return cls.of(record.get("sketch"))


@dataclass(frozen=True)
class HllState(_SketchState):
    """An HLL sketch (Apache DataSketches binary format, as written by Spark's ``hll_sketch_agg``).

    Merged with the ``datasketches`` package, so accumulation needs no Spark job.
    """

    kind: ClassVar[str] = "hll"

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

    @classmethod
    def spark_aggregations(cls, value: Column) -> dict[str, Column]:
        return {"sketch": F.hll_sketch_agg(value, HLL_LG_K)}

    @classmethod
    def row_input(cls, expr: Column | None) -> Column | None:
        if expr is None:
            raise InternalError("an hll state needs an expression")
        return expr

    @classmethod
    def from_grouped_values(
        cls, keys: pa.Array | pa.ChunkedArray, values: pa.Array | pa.ChunkedArray
    ) -> dict[Hashable, Any]:
        """One sketch per group over its distinct non-NULL values (NULLs are ignored, as in Spark)."""
        from datasketches import hll_sketch, tgt_hll_type

        distinct = pa.table({"key": keys, "v": values}).group_by("key").aggregate([("v", "distinct")])
        out: dict[Hashable, Any] = {}
        for key, group in zip(
            distinct.column("key").to_pylist(), distinct.column("v_distinct").to_pylist(), strict=True
        ):
            if not group:
                out[key] = cls()
                continue
            sketch = hll_sketch(HLL_LG_K, tgt_hll_type.HLL_4)
            for value in group:
                sketch.update(value.hex() if isinstance(value, bytes) else value)
            out[key] = cls(bytes(sketch.serialize_compact()))
        return out

    @classmethod
    def _is_empty(cls, sketch: bytes) -> bool:
        from datasketches import hll_sketch

        return bool(hll_sketch.deserialize(sketch).is_empty())


@dataclass(frozen=True)
class KllState(_SketchState):
    """A KLL quantile sketch of doubles (Apache DataSketches binary format, as written by Spark's
    ``kll_sketch_agg_double``): any quantile of the values it saw, within a rank error of ~1.65%.

    Merged with the ``datasketches`` package, so a window's or the stream's quantiles need no rescan. Merging
    is not bit-for-bit deterministic (KLL compacts at random), only within its rank error.
    """

    kind: ClassVar[str] = "kll"

    @classmethod
    def _is_empty(cls, sketch: bytes) -> bool:
        from datasketches import kll_doubles_sketch

        return bool(kll_doubles_sketch.deserialize(sketch).is_empty())

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

    @classmethod
    def spark_aggregations(cls, value: Column) -> dict[str, Column]:
        number = value.cast("double")  # NaN is not a value to rank: left out like NULL
        return {"sketch": F.kll_sketch_agg_double(F.when(~F.isnan(number), number), KLL_K)}

    @classmethod
    def from_grouped_values(
        cls, keys: pa.Array | pa.ChunkedArray, values: pa.Array | pa.ChunkedArray
    ) -> dict[Hashable, Any]:
        """One sketch per group over its non-NULL values."""
        grouped = (
            pa.table({"key": keys, "v": values.cast(pa.float64())}).group_by("key").aggregate([("v", "list")])
        )
        return {
            key: kll_from_values(group)
            for key, group in zip(
                grouped.column("key").to_pylist(), grouped.column("v_list").to_pylist(), strict=True
            )
        }


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
