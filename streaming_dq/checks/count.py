"""Row-count checks: ``row-count-min-check``, ``row-count-max-check``, ``row-count-between-check``,
``row-count-exact-check`` (observable: one count state, so they merge across batches and windows).

NULL semantics: every row counts, whatever its values. The profile multiplier scales the row count before
the comparison.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field, model_validator

from streaming_dq.checks.wording import MetricDetails, number
from streaming_dq.core.base_check import BaseCheck, ObservableAggregateCheck
from streaming_dq.core.base_config import BaseAggregateCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.exceptions import ConfigError
from streaming_dq.states.spec import StateSpec


class _RowCountCheck(MetricDetails, ObservableAggregateCheck):
    def state_specs(self) -> dict[str, StateSpec]:
        return {"rows": StateSpec("count")}

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        return float(states["rows"].n)

    def metric_label(self) -> str:
        return "Row count"


class RowCountMinCheck(_RowCountCheck):
    """Passes when the number of rows is at least ``min_count``."""

    def __init__(self, check_id: str, min_count: int, severity: Severity = Severity.CRITICAL, **kw: Any):
        super().__init__(check_id, severity, **kw)
        self.min_count = min_count

    def accepts(self, value: float | None) -> bool:
        return value is not None and value >= self.min_count

    def expectation(self) -> str:
        return f">= {number(self.min_count)}"


class RowCountMaxCheck(_RowCountCheck):
    """Passes when the number of rows is at most ``max_count``."""

    def __init__(self, check_id: str, max_count: int, severity: Severity = Severity.CRITICAL, **kw: Any):
        super().__init__(check_id, severity, **kw)
        self.max_count = max_count

    def accepts(self, value: float | None) -> bool:
        return value is not None and value <= self.max_count

    def expectation(self) -> str:
        return f"<= {number(self.max_count)}"


class RowCountBetweenCheck(_RowCountCheck):
    """Passes when ``min_count <= rows <= max_count``."""

    def __init__(
        self, check_id: str, min_count: int, max_count: int, severity: Severity = Severity.CRITICAL, **kw: Any
    ):
        super().__init__(check_id, severity, **kw)
        self.min_count = min_count
        self.max_count = max_count

    def accepts(self, value: float | None) -> bool:
        return value is not None and self.min_count <= value <= self.max_count

    def expectation(self) -> str:
        return f"between {number(self.min_count)} and {number(self.max_count)}"


class RowCountExactCheck(_RowCountCheck):
    """Passes when the number of rows equals ``expected_count``."""

    def __init__(self, check_id: str, expected_count: int, severity: Severity = Severity.CRITICAL, **kw: Any):
        super().__init__(check_id, severity, **kw)
        self.expected_count = expected_count

    def accepts(self, value: float | None) -> bool:
        return value is not None and value == self.expected_count

    def expectation(self) -> str:
        return f"exactly {number(self.expected_count)}"


@register_check_config(check_name="row-count-min-check")
class RowCountMinCheckConfig(BaseAggregateCheckConfig):
    check_class: ClassVar[type[BaseCheck]] = RowCountMinCheck
    min_count: int = Field(ge=0)


@register_check_config(check_name="row-count-max-check")
class RowCountMaxCheckConfig(BaseAggregateCheckConfig):
    check_class: ClassVar[type[BaseCheck]] = RowCountMaxCheck
    max_count: int = Field(ge=0)


@register_check_config(check_name="row-count-between-check")
class RowCountBetweenCheckConfig(BaseAggregateCheckConfig):
    check_class: ClassVar[type[BaseCheck]] = RowCountBetweenCheck
    min_count: int = Field(ge=0)
    max_count: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> RowCountBetweenCheckConfig:
        if self.min_count > self.max_count:
            raise ConfigError("min-count must not exceed max-count", field_path="max-count")
        return self


@register_check_config(check_name="row-count-exact-check")
class RowCountExactCheckConfig(BaseAggregateCheckConfig):
    check_class: ClassVar[type[BaseCheck]] = RowCountExactCheck
    expected_count: int = Field(ge=0)
