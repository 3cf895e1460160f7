"""One plan per input schema, kept across runs: the gate's micro-batches and ``BatchDQEngine.run_batch``.

Building a plan turns every check into Spark Columns (through py4j: a fixed cost per build that grows with the
checks); the Columns are unresolved expressions, valid for any DataFrame of the same schema. So a plan is
built once per ``(schema, malformed column)`` and reused; a schema change (drift) builds a new one.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from pyspark.sql import DataFrame

from streaming_dq.engine.plan import ValidationPlan

__all__ = ["PlanCache"]

PlanKey = tuple[str, str | None]


class PlanCache:
    """The plans of the last ``capacity`` input schemas, least recently used dropped first.

    Args:
        build: Makes the plan of a malformed column (None: the input has none).
        capacity: How many schemas to keep (a stream has one at a time; a drift adds one).

    Example:
        >>> cache = PlanCache(lambda malformed: ValidationPlan(checks, malformed_column=malformed))  # doctest: +SKIP
        >>> plan = cache.plan_for(df, None)  # doctest: +SKIP
    """

    def __init__(self, build: Callable[[str | None], ValidationPlan], capacity: int = 4) -> None:
        self._build = build
        self._capacity = capacity
        self._plans: OrderedDict[PlanKey, ValidationPlan] = OrderedDict()

    def plan_for(self, df: DataFrame, malformed: str | None) -> ValidationPlan:
        """The plan of ``df``'s schema; one built for a schema not seen recently (a start, a drift) first
        is prepared for such rows (:meth:`ValidationPlan.prepare`: its checks held against the schema, their
        Columns built).

        Raises:
            ConfigError: The event-time column is missing or not a date/timestamp.
            CheckEvaluationError: A check's column or filter cannot be evaluated on ``df``.
        """
        key = (df.schema.json(), malformed)
        plan = self._plans.get(key)
        if plan is not None:
            self._plans.move_to_end(key)
            return plan
        plan = self._build(malformed)
        plan.prepare(df)
        self._plans[key] = plan
        if len(self._plans) > self._capacity:
            self._plans.popitem(last=False)
        return plan

    def clear(self) -> None:
        self._plans.clear()

    def __len__(self) -> int:
        return len(self._plans)
