"""Spark aggregation expressions for each mergeable state kind, and their decoding into states.

A :class:`StateSpec` is what an observable check asks the engine for: a kind and the expression it applies
to. The engine turns every spec of every check into aggregate columns of one pass, and decodes the resolved
values back into :mod:`streaming_dq.states` objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.exceptions import InternalError
from streaming_dq.states.kinds import (
    HLL_LG_K,
    KLL_K,
    CountState,
    HllState,
    KllState,
    MaxState,
    MinState,
    MomentsState,
    StateKind,
    SumState,
)


@dataclass(frozen=True)
class StateSpec:
    """A mergeable state to compute over an expression.

    Attributes:
        kind: The state kind.
        expr: For ``count``: a boolean predicate (None counts every row). For the others: the value expression
            (numeric; timestamps should be converted to epoch seconds by the check).
        key: What ``expr`` computes, in words that identify it (``"null:amount"``, ``"value:amount"``): two
            specs of the same kind and key are computed once in a batch's pass and shared by their checks.
            None (with an ``expr``) shares nothing; a Column cannot be compared safely before analysis.
    """

    kind: StateKind
    expr: Column | None = None
    key: str | None = None

    @property
    def identity(self) -> tuple[str, str] | None:
        """``(kind, key)`` when the state can be shared between checks, else None."""
        if self.expr is None:
            return (self.kind, "*")
        return (self.kind, self.key) if self.key is not None else None

    def aggregations(self, where: Column | None = None) -> dict[str, Column]:
        """Aggregate columns that compute this state, optionally only over rows where ``where`` holds."""
        if self.kind == "count":
            pred = self.expr if self.expr is not None else F.lit(True)
            if where is not None:
                pred = pred & where
            return {"n": F.count_if(F.coalesce(pred, F.lit(False)))}
        assert self.expr is not None, f"a {self.kind} state needs an expression"
        value = self.expr if where is None else F.when(where, self.expr)
        if self.kind == "hll":
            return {"sketch": F.hll_sketch_agg(value, HLL_LG_K)}
        number = value.cast("double")
        if self.kind == "kll":  # NaN is not a value to rank: left out like NULL
            return {"sketch": F.kll_sketch_agg_double(F.when(~F.isnan(number), number), KLL_K)}
        if self.kind == "sum":
            return {"sum": F.sum(number), "n": F.count(number)}
        if self.kind == "min":
            return {"value": F.min(number)}
        if self.kind == "max":
            return {"value": F.max(number)}
        if self.kind == "moments":
            return {"n": F.count(number), "mean": F.avg(number), "m2": F.var_pop(number) * F.count(number)}
        raise InternalError(f"unknown state kind {self.kind!r}")

    def decode(self, values: Mapping[str, Any]) -> Any:
        """Build the state from the resolved aggregate values (keys as in :meth:`aggregations`)."""
        if self.kind == "count":
            return CountState(int(values.get("n") or 0))
        if self.kind == "sum":
            n = int(values.get("n") or 0)
            return SumState(float(values.get("sum") or 0.0) if n else 0.0, n)
        if self.kind == "min":
            v = values.get("value")
            return MinState(float(v) if v is not None else None)
        if self.kind == "max":
            v = values.get("value")
            return MaxState(float(v) if v is not None else None)
        if self.kind == "moments":
            n = int(values.get("n") or 0)
            if n == 0:
                return MomentsState()
            return MomentsState(n, float(values["mean"]), float(values.get("m2") or 0.0))
        if self.kind == "hll":
            sketch = values.get("sketch")
            return HllState(bytes(sketch) if sketch else None)
        if self.kind == "kll":
            return KllState.of(values.get("sketch"))
        raise InternalError(f"unknown state kind {self.kind!r}")
