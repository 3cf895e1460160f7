"""Values against a value, a range or a precision: ``equal-to-check``, ``not-equal-to-check``,
``numeric-not-between-check``, ``decimal-places-check``.

``equal-to-check`` and ``not-equal-to-check`` compare each of ``columns`` with ``value`` (a literal) or with
``expression`` (Spark SQL over the row, e.g. another column's name), using Spark's ``=``.

NULL semantics: a NULL value, or a NULL ``expression`` result, is not applicable and passes unless
``treat-null-as-failure: true``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any, ClassVar

from pydantic import Field, model_validator
from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.checks.value_rule import ValueRuleCheck, ValueRuleConfig
from streaming_dq.checks.wording import number
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import check_sql_expression
from streaming_dq.exceptions import ConfigError

Literal_ = int | float | Decimal | str | bool | date | datetime


class _EqualityCheck(ValueRuleCheck):
    """Shared by the two equality checks: the other side is ``value`` or ``expression``."""

    equal: ClassVar[bool]

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        value: Literal_ | None = None,
        expression: str | None = None,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        if (value is None) == (expression is None):
            raise ConfigError("give exactly one of value or expression", field_path="value")
        if expression is not None:
            check_sql_expression(expression, check_id=check_id, field="expression")
        self.value = value
        self.expression = expression

    def other(self) -> Column:
        return F.expr(self.expression) if self.expression is not None else F.lit(self.value)

    def bad(self, value: Column) -> Column:
        other = self.other()
        differs = value != other
        return F.when(other.isNull(), F.lit(self.treat_null_as_failure)).otherwise(
            differs if self.equal else ~differs
        )

    def rule_text(self) -> str:
        shown = self.expression if self.expression is not None else _literal_text(self.value)
        return f"{'not equal' if self.equal else 'equal'} to {shown}"


def _literal_text(value: Any) -> str:
    return number(value) if isinstance(value, int | float) and not isinstance(value, bool) else repr(value)


class EqualToCheck(_EqualityCheck):
    """Fails a row when a value of ``columns`` differs from ``value`` (or from ``expression``'s result)."""

    equal = True


class NotEqualToCheck(_EqualityCheck):
    """Fails a row when a value of ``columns`` equals ``value`` (or ``expression``'s result)."""

    equal = False


class NumericNotBetweenCheck(ValueRuleCheck):
    """Fails a row when a value of ``columns`` lies inside ``min-value`` .. ``max-value``.

    ``inclusive`` is a pair (min, max), default ``[true, true]``: the bounds belong to the forbidden range.
    """

    column_kind: ClassVar[str | None] = "numeric"

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        min_value: int | float | Decimal,
        max_value: int | float | Decimal,
        inclusive: tuple[bool, bool] = (True, True),
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        if min_value > max_value:
            raise ConfigError(
                f"max-value ({max_value}) must not be below min-value ({min_value})", field_path="max-value"
            )
        self.min_value = min_value
        self.max_value = max_value
        self.inclusive = (bool(inclusive[0]), bool(inclusive[1]))

    def bad(self, value: Column) -> Column:
        lo = value >= self.min_value if self.inclusive[0] else value > self.min_value
        hi = value <= self.max_value if self.inclusive[1] else value < self.max_value
        return lo & hi

    def rule_text(self) -> str:
        left = "[" if self.inclusive[0] else "("
        right = "]" if self.inclusive[1] else ")"
        return f"inside {left}{number(self.min_value)}, {number(self.max_value)}{right}"


class DecimalPlacesCheck(ValueRuleCheck):
    """Fails a row when a value of ``columns`` has more than ``max-places`` digits after the decimal point.

    A value has at most ``n`` places when rounding it to ``n`` places (Spark's ``round``, half up) leaves it
    unchanged. For DOUBLE columns that is the value as written in decimal (``0.1`` has one place), not its
    binary expansion.
    """

    column_kind: ClassVar[str | None] = "numeric"

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        max_places: int,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        if max_places < 0:
            raise ConfigError("max-places must be 0 or more", field_path="max-places")
        self.max_places = max_places

    def bad(self, value: Column) -> Column:
        return F.round(value, self.max_places) != value

    def rule_text(self) -> str:
        return f"with more than {self.max_places} decimal place{'' if self.max_places == 1 else 's'}"


class _EqualityConfig(ValueRuleConfig):
    _abstract: ClassVar[bool] = True
    value: Literal_ | None = None
    expression: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_side(self) -> _EqualityConfig:
        if (self.value is None) == (self.expression is None):
            raise ConfigError(
                "give exactly one of value (a literal) or expression (Spark SQL, e.g. a column)",
                field_path="expression" if self.value is not None else "value",
            )
        return self


@register_check_config(check_name="equal-to-check")
class EqualToCheckConfig(_EqualityConfig):
    """``{check: equal-to-check, check-id, columns: [...], value: 5 | expression: other_col}``."""

    check_class: ClassVar[type[BaseCheck]] = EqualToCheck


@register_check_config(check_name="not-equal-to-check")
class NotEqualToCheckConfig(_EqualityConfig):
    """``{check: not-equal-to-check, check-id, columns: [...], value: 0 | expression: other_col}``."""

    check_class: ClassVar[type[BaseCheck]] = NotEqualToCheck


@register_check_config(check_name="numeric-not-between-check")
class NumericNotBetweenCheckConfig(ValueRuleConfig):
    """``{check: numeric-not-between-check, check-id, columns, min-value, max-value, inclusive?: [true, true]}``."""

    check_class: ClassVar[type[BaseCheck]] = NumericNotBetweenCheck
    min_value: int | float | Decimal
    max_value: int | float | Decimal
    inclusive: tuple[bool, bool] = (True, True)


@register_check_config(check_name="decimal-places-check")
class DecimalPlacesCheckConfig(ValueRuleConfig):
    """``{check: decimal-places-check, check-id, columns: [...], max-places: 2}``."""

    check_class: ClassVar[type[BaseCheck]] = DecimalPlacesCheck
    max_places: int = Field(ge=0)
