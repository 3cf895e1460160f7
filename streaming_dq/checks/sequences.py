"""``monotonic-check``: values that must only grow (or only shrink) along an order, per group, in a batch.

``{check: monotonic-check, check-id, column: reading, order-by: ts, group-by: [meter_id], direction:
increasing, strict: false}``: a row fails when its ``column`` is below the largest value of the rows before it
(``order-by`` strictly smaller, same group): a meter reading that goes back, a sequence number reused. With
``strict: true`` an equal value fails too; ``direction: decreasing`` mirrors it all.

Rows with the same ``order-by`` value are not ordered among themselves (none of them judges another). Judged
within each micro-batch, like ``window-gaps-check``: the first row of a batch is not compared with the last
row of the batch before. Cost: a ``groupBy(group, order-by)``, a running maximum over its rows (a window
partitioned by the groups) and a join back to the rows.

NULL semantics: a NULL value is not applicable and passes unless ``treat-null-as-failure: true``; it does not
move the running maximum. A row with a NULL ``order-by`` has no place in the order and passes.
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar, Literal

from pydantic import Field
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from streaming_dq.checks.wording import violations_sentence
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col

#: The order a sequence must keep.
SequenceDirection = Literal["increasing", "decreasing"]


class MonotonicCheck(BaseRowCheck):
    """Fails a row whose ``column`` goes against ``direction`` relative to the rows before it (see the module)."""

    def __init__(
        self,
        check_id: str,
        column: str,
        order_by: str,
        group_by: list[str] | None = None,
        direction: SequenceDirection = "increasing",
        strict: bool = False,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.column = column
        self.order_by = order_by
        self.group_by = list(group_by or [])
        self.direction = direction
        self.strict = strict
        self.treat_null_as_failure = treat_null_as_failure

    @property
    def columns(self) -> list[str]:  # the columns the data must have (checked before the first batch)
        return [self.column, self.order_by, *self.group_by]

    def validate(self, df: DataFrame, column: str | None = None) -> DataFrame:
        p = "__dq_mo_" + hashlib.sha1(self.check_id.encode()).hexdigest()[:10]
        keys = [f"{p}_g{i}" for i in range(len(self.group_by))]
        up = self.direction == "increasing"
        value = F.when(self.applies(), col(self.column))  # rows outside the filter set no bar
        steps = (
            df.where(col(self.order_by).isNotNull())
            .groupBy(
                *[col(c).alias(k) for c, k in zip(self.group_by, keys, strict=True)],
                col(self.order_by).alias(f"{p}_o"),
            )
            .agg((F.max(value) if up else F.min(value)).alias(f"{p}_x"))
        )
        before = Window.partitionBy(*keys).orderBy(f"{p}_o").rowsBetween(Window.unboundedPreceding, -1)
        bars = steps.select(
            *keys,
            f"{p}_o",
            (F.max(f"{p}_x") if up else F.min(f"{p}_x")).over(before).alias(f"{p}_bar"),
        )
        on = [col(c).eqNullSafe(bars[k]) for c, k in zip(self.group_by, keys, strict=True)]
        on.append(col(self.order_by) == bars[f"{p}_o"])
        joined = df.join(bars, on=on, how="left")
        x, bar = col(self.column), F.col(f"{p}_bar")
        against = (x <= bar if self.strict else x < bar) if up else (x >= bar if self.strict else x > bar)
        verdict = F.when(x.isNull(), F.lit(self.treat_null_as_failure)).otherwise(
            F.coalesce(against, F.lit(False))
        )
        return joined.withColumn(column or self.result_column, self.filtered(verdict)).drop(
            *keys, f"{p}_o", f"{p}_bar"
        )

    def violation_details(self, violations: int, total: int) -> str:
        word = ("strictly " if self.strict else "") + self.direction
        what = f"not {word} along {self.order_by}" + (
            f" per {', '.join(self.group_by)}" if self.group_by else ""
        )
        return violations_sentence([self.column], violations, total, f"value {what}", f"values {what}")


@register_check_config(check_name="monotonic-check")
class MonotonicCheckConfig(BaseRowCheckConfig):
    """``{check: monotonic-check, check-id, column, order-by, group-by?, direction?: increasing | decreasing,
    strict?: false, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = MonotonicCheck
    column: str = Field(min_length=1)
    order_by: str = Field(min_length=1)
    group_by: list[str] | None = None
    direction: SequenceDirection = "increasing"
    strict: bool = False
    treat_null_as_failure: bool = False
