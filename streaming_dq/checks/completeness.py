"""Completeness checks (observable: count states, so they merge across batches and windows).

* ``completeness-ratio-check``: non-NULL values of ``column`` / rows >= ``min-ratio``.
* ``columns-are-complete-check``: none of ``columns`` holds a NULL.

NULL semantics: these checks count NULLs; NaN is a value, not a NULL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import Field

from streaming_dq.checks.wording import MetricDetails, number, plural, subject
from streaming_dq.core.base_check import BaseCheck, ObservableAggregateCheck
from streaming_dq.core.base_config import BaseAggregateCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.results import AggregateCheckResult, AggregateEvaluationResult
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col
from streaming_dq.states.spec import StateSpec


class CompletenessRatioCheck(MetricDetails, ObservableAggregateCheck):
    """Passes when the share of rows where ``column`` is not NULL is at least ``min_ratio``.

    An empty batch is complete (ratio 1, as in SparkDQ). The profile multiplier scales the ratio.

    NULL semantics: NULLs are what is measured.

    Example:
        >>> CompletenessRatioCheck("email-mostly-set", column="email", min_ratio=0.95)  # doctest: +SKIP
    """

    def __init__(
        self, check_id: str, column: str, min_ratio: float, severity: Severity = Severity.CRITICAL, **kw: Any
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.column = column
        self.min_ratio = min_ratio

    def state_specs(self) -> dict[str, StateSpec]:
        return {
            "rows": StateSpec("count"),
            "present": StateSpec("count", col(self.column).isNotNull(), key=f"not-null:{self.column}"),
        }

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        rows, present = states["rows"].n, states["present"].n
        return present / rows if rows else 1.0

    def accepts(self, value: float | None) -> bool:
        return value is not None and value >= self.min_ratio

    def evaluate_states(
        self, states: Mapping[str, Any], *, multiplier: float = 1.0
    ) -> AggregateEvaluationResult:
        base = super().evaluate_states(states, multiplier=multiplier)
        extra = {"non_null_count": states["present"].n, "row_count": states["rows"].n}
        return AggregateEvaluationResult(base.passed, {**base.metrics, **extra})

    def metric_label(self) -> str:
        return f"Completeness of '{self.column}'"

    def expectation(self) -> str:
        return f">= {number(self.min_ratio)}"


class ColumnsAreCompleteCheck(MetricDetails, ObservableAggregateCheck):
    """Passes when none of ``columns`` holds a NULL in any row. The metric is the number of NULLs.

    NULL semantics: NULLs are what is counted.
    """

    def __init__(
        self, check_id: str, columns: Sequence[str], severity: Severity = Severity.CRITICAL, **kw: Any
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.columns = list(columns)

    def state_specs(self) -> dict[str, StateSpec]:
        return {
            f"nulls{i}": StateSpec("count", col(c).isNull(), key=f"null:{c}")
            for i, c in enumerate(self.columns)
        }

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        return float(sum(states[f"nulls{i}"].n for i in range(len(self.columns))))

    def accepts(self, value: float | None) -> bool:
        return value == 0

    def evaluate_states(
        self, states: Mapping[str, Any], *, multiplier: float = 1.0
    ) -> AggregateEvaluationResult:
        base = super().evaluate_states(states, multiplier=multiplier)
        nulls = {c: states[f"nulls{i}"].n for i, c in enumerate(self.columns)}
        extra = {"null_counts": nulls, "failed_columns": [c for c, n in nulls.items() if n]}
        return AggregateEvaluationResult(base.passed, {**base.metrics, **extra})

    def details(self, result: AggregateCheckResult) -> str:
        m = result.metrics
        if result.status == "skipped" or "null_counts" not in m:
            return super().details(result)
        failed = m["failed_columns"]
        if not failed:
            return f"{subject(self.columns)} {'is' if len(self.columns) == 1 else 'are'} complete"
        counts = ", ".join(f"{c}: {m['null_counts'][c]}" for c in failed)
        total = int(m["value"] or 0)
        verb = "has" if len(self.columns) == 1 else "have"
        return f"{subject(self.columns)} {verb} {plural(total, 'null value')} ({counts})"

    def metric_label(self) -> str:
        return "NULL values"

    def expectation(self) -> str:
        return "none"


@register_check_config(check_name="completeness-ratio-check")
class CompletenessRatioCheckConfig(BaseAggregateCheckConfig):
    """``{check: completeness-ratio-check, check-id, column, min-ratio}``."""

    check_class: ClassVar[type[BaseCheck]] = CompletenessRatioCheck
    column: str = Field(min_length=1)
    min_ratio: float = Field(ge=0.0, le=1.0)


@register_check_config(check_name="columns-are-complete-check")
class ColumnsAreCompleteCheckConfig(BaseAggregateCheckConfig):
    """``{check: columns-are-complete-check, check-id, columns}``."""

    check_class: ClassVar[type[BaseCheck]] = ColumnsAreCompleteCheck
    columns: list[str] = Field(min_length=1)
