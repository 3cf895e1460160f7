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

from streaming_dq.states.kinds import StateKind, state_type


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
        kind = state_type(self.kind)
        return kind.spark_aggregations(kind.spark_input(self.expr, where))

    def decode(self, values: Mapping[str, Any]) -> Any:
        """Build the state from the resolved aggregate values (keys as in :meth:`aggregations`)."""
        return state_type(self.kind).from_record(values)
