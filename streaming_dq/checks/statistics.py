"""Statistics of a column as observable metric checks: they ride on the batch's one pass and merge across
batches and event-time windows like ``mean-check``.

* ``variance-check``: the sample variance (the moments state ``mean-check`` and ``stddev-check`` share).
* ``correlation-check``: Pearson's correlation of two columns, over the rows where both are set. Three moments
  states (of ``x``, ``y`` and ``x + y`` on those rows) give the covariance exactly as they merge:
  ``cov = (M2[x+y] - M2[x] - M2[y]) / 2n``; no sum of products that could cancel.
* ``quantile-check``: any quantile (``quantile: 0.95``) from a KLL sketch (Spark's ``kll_sketch_agg_double``,
  merged with ``datasketches``): within a normalized rank error of ~1.65% (the value returned lies between
  the true 93.35th and 96.65th percentiles for ``0.95``), mergeable, so a window's p95 is judged once the
  watermark closes it without rescanning its rows. ``aggregate-check`` with ``percentile`` is exact but
  classic (its own job, per batch only).
* ``compliance-ratio-check``: the share of rows where a SQL predicate holds, at least ``min-ratio`` (two
  count states). Where ``tolerance`` on a row check judges one batch, this judges windows too.

NULL semantics: NULLs (and NaN) are left out of the statistics; a statistic of too few values (a variance of
one value, a correlation of a constant column) is undefined and fails the check. A predicate that is NULL
does not hold (the row does not comply); an empty batch complies (ratio 1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field, field_validator
from pyspark.sql import functions as F

from streaming_dq.checks.metric import ComparatorConfig, MomentsMetricCheck, _MetricCheck, _MetricConfig
from streaming_dq.checks.wording import number
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.base_config import BaseAggregateCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.results import AggregateEvaluationResult
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import check_sql_expression, col
from streaming_dq.exceptions import ConfigError
from streaming_dq.states.spec import StateSpec


class VarianceCheck(MomentsMetricCheck):
    """The sample variance of the non-NULL values of ``column``.

    NULL semantics: NULLs left out; fewer than two values = undefined = fails.
    """

    label: ClassVar[str] = "Variance"

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        value: float | None = states["moments"].variance_samp
        return value


class CorrelationCheck(_MetricCheck):
    """Pearson's correlation of ``columns[0]`` and ``columns[1]`` over the rows where both are set.

    NULL semantics: a row with a NULL (or NaN) in either column is left out; fewer than two such rows, or a
    column that is constant on them, = undefined = fails.
    """

    column_kind: ClassVar[str | None] = "numeric"
    label: ClassVar[str] = "Correlation"

    def __init__(self, check_id: str, columns: list[str], **kw: Any) -> None:
        if len(columns) != 2:
            raise ConfigError("correlation-check needs exactly two columns", field_path="columns")
        super().__init__(check_id, columns[0], **kw)
        self.columns = list(columns)

    def state_specs(self) -> dict[str, StateSpec]:
        a, b = self.columns
        x, y = col(a).cast("double"), col(b).cast("double")
        pair = x.isNotNull() & y.isNotNull() & ~F.isnan(x) & ~F.isnan(y)
        key = f"{a}\x00{b}"
        return {
            "x": StateSpec("moments", F.when(pair, x), key=f"pair-x:{key}"),
            "y": StateSpec("moments", F.when(pair, y), key=f"pair-y:{key}"),
            "sum": StateSpec("moments", F.when(pair, x + y), key=f"pair-sum:{key}"),
        }

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        x, y, s = states["x"], states["y"], states["sum"]
        if x.n < 2 or x.m2 <= 0.0 or y.m2 <= 0.0:
            return None
        r = (s.m2 - x.m2 - y.m2) / (2.0 * math.sqrt(x.m2 * y.m2))
        return min(1.0, max(-1.0, r))

    def metric_label(self) -> str:
        return f"Correlation of '{self.columns[0]}' and '{self.columns[1]}'"


class QuantileCheck(_MetricCheck):
    """The ``quantile`` (0 to 1) of the non-NULL values of ``column``, from a mergeable KLL sketch.

    NULL semantics: NULLs and NaN left out; no values = undefined = fails.
    """

    column_kind: ClassVar[str | None] = "numeric"
    label: ClassVar[str] = "Quantile"
    spark_feature: ClassVar[str | None] = "kll_sketch"

    def __init__(self, check_id: str, column: str, quantile: float, **kw: Any) -> None:
        super().__init__(check_id, column, **kw)
        if not 0.0 <= float(quantile) <= 1.0:
            raise ConfigError("quantile must be between 0 and 1", field_path="quantile")
        self.quantile = float(quantile)

    def state_specs(self) -> dict[str, StateSpec]:
        return {"kll": StateSpec("kll", col(self.column), key=f"value:{self.column}")}

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        value: float | None = states["kll"].quantile(self.quantile)
        return value

    def metric_label(self) -> str:
        return f"Quantile {number(self.quantile)} (approx.) of '{self.column}'"


class ComplianceRatioCheck(_MetricCheck):
    """The share of rows where ``predicate`` (Spark SQL) holds, at least ``min_ratio``.

    NULL semantics: a NULL predicate does not hold; an empty batch complies (ratio 1).
    """

    label: ClassVar[str] = "Compliance"
    #: Resolved against the stream's schema by ``gate.start()`` like a ``filter``.
    predicate_fields: ClassVar[tuple[str, ...]] = ("predicate",)

    def __init__(
        self,
        check_id: str,
        predicate: str,
        min_ratio: float,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, predicate, ge=min_ratio, severity=severity, **kw)
        check_sql_expression(predicate, check_id=check_id, field="predicate")
        self.column = None  # type: ignore[assignment]  # a predicate, not a column of the schema
        self.predicate = predicate
        self.min_ratio = float(min_ratio)

    def state_specs(self) -> dict[str, StateSpec]:
        return {
            "rows": StateSpec("count"),
            "holds": StateSpec("count", F.expr(self.predicate), key=f"predicate:{self.predicate}"),
        }

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        rows = states["rows"].n
        return states["holds"].n / rows if rows else 1.0

    def evaluate_states(
        self, states: Mapping[str, Any], *, multiplier: float = 1.0
    ) -> AggregateEvaluationResult:
        base = super().evaluate_states(states, multiplier=multiplier)
        extra = {"compliant_rows": states["holds"].n, "row_count": states["rows"].n}
        return AggregateEvaluationResult(base.passed, {**base.metrics, **extra})

    def metric_label(self) -> str:
        return f"Share of rows where {self.predicate}"


@register_check_config(check_name="variance-check")
class VarianceCheckConfig(_MetricConfig):
    """``{check: variance-check, check-id, column, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = VarianceCheck


@register_check_config(check_name="correlation-check")
class CorrelationCheckConfig(ComparatorConfig):
    """``{check: correlation-check, check-id, columns: [x, y], <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = CorrelationCheck
    columns: list[str] = Field(min_length=2, max_length=2)

    @field_validator("columns")
    @classmethod
    def _named(cls, value: list[str]) -> list[str]:
        if any(not c for c in value):
            raise ConfigError("columns must be two column names")
        return value


@register_check_config(check_name="quantile-check")
class QuantileCheckConfig(_MetricConfig):
    """``{check: quantile-check, check-id, column, quantile: 0.95, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = QuantileCheck
    quantile: float = Field(ge=0.0, le=1.0)


@register_check_config(check_name="compliance-ratio-check")
class ComplianceRatioCheckConfig(BaseAggregateCheckConfig):
    """``{check: compliance-ratio-check, check-id, predicate: "<SQL>", min-ratio}``."""

    check_class: ClassVar[type[BaseCheck]] = ComplianceRatioCheck
    predicate: str = Field(min_length=1)
    min_ratio: float = Field(ge=0.0, le=1.0)
