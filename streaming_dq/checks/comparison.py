"""Column comparison checks: ``column-less-than-check`` and ``column-greater-than-check``.

SparkDQ's current form compares ``column`` with ``limit``, another column's name or any Spark SQL expression
(``cost_price * 1.2``); strict unless ``inclusive: true``. The older two-column form
(``smaller-column`` / ``greater-column``) is accepted too and turned into the current one.

NULL semantics: when ``column`` or the limit is NULL the comparison is "not applicable" and the row passes,
unless ``treat-null-as-failure: true`` (SparkDQ failed such rows; set the flag to keep that behaviour).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field, model_validator
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.wording import percent, plural
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import check_sql_expression, col, quote
from streaming_dq.exceptions import ConfigError


class _ColumnComparisonCheck(BaseRowCheck):
    #: The relation that must hold: "<" or ">".
    relation: ClassVar[str] = "<"

    def __init__(
        self,
        check_id: str,
        column: str,
        limit: str,
        inclusive: bool = False,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        check_sql_expression(limit, check_id=check_id, field="limit")
        self.column = column
        self.limit = limit
        self.inclusive = inclusive
        self.treat_null_as_failure = treat_null_as_failure

    def failure_condition(self, df: DataFrame) -> Column:
        value, limit = col(self.column), F.expr(self.limit)
        if self.relation == "<":
            holds = value <= limit if self.inclusive else value < limit
        else:
            holds = value >= limit if self.inclusive else value > limit
        return F.when(value.isNull() | limit.isNull(), F.lit(self.treat_null_as_failure)).otherwise(~holds)

    def violation_details(self, violations: int, total: int) -> str:
        rule = f"{self.column} {self.relation}{'=' if self.inclusive else ''} {self.limit}"
        if not violations:
            return f"All rows satisfy {rule}"
        nulls = " (NULL counts as a failure)" if self.treat_null_as_failure else ""
        verb = "violates" if violations == 1 else "violate"
        return f"{plural(violations, 'row')} ({percent(violations, total)}) {verb} {rule}{nulls}"


class ColumnLessThanCheck(_ColumnComparisonCheck):
    """Fails a row unless ``column < limit`` (``<=`` with ``inclusive``).

    NULL semantics: a NULL on either side passes unless ``treat_null_as_failure``.

    Example:
        >>> ColumnLessThanCheck("start-before-end", column="start", limit="end")  # doctest: +SKIP
    """

    relation: ClassVar[str] = "<"


class ColumnGreaterThanCheck(_ColumnComparisonCheck):
    """Fails a row unless ``column > limit`` (``>=`` with ``inclusive``).

    NULL semantics: a NULL on either side passes unless ``treat_null_as_failure``.
    """

    relation: ClassVar[str] = ">"


class _ComparisonConfig(BaseRowCheckConfig):
    _abstract: ClassVar[bool] = True
    #: Which legacy key names ``column`` and which names ``limit``.
    _legacy: ClassVar[tuple[str, str]] = ("smaller", "greater")
    column: str = Field(min_length=1)
    limit: str = Field(min_length=1)
    inclusive: bool = False
    treat_null_as_failure: bool = False

    @model_validator(mode="before")
    @classmethod
    def _legacy_form(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        own, other = cls._legacy
        keys = {f"{own}-column": "column", f"{own}_column": "column"}
        keys |= {f"{other}-column": "limit", f"{other}_column": "limit"}
        if not any(k in data for k in keys):
            return data
        out = {k: v for k, v in data.items() if k not in keys}
        for old, new in keys.items():
            if old in data:
                if new in out:
                    raise ConfigError(f"give either {new} or {old}, not both", field_path=old)
                out[new] = data[old] if new == "column" else quote(str(data[old]))
        return out


@register_check_config(check_name="column-less-than-check")
class ColumnLessThanCheckConfig(_ComparisonConfig):
    """``{check: column-less-than-check, check-id, column, limit, inclusive?: false}``."""

    check_class: ClassVar[type[BaseCheck]] = ColumnLessThanCheck
    _legacy: ClassVar[tuple[str, str]] = ("smaller", "greater")


@register_check_config(check_name="column-greater-than-check")
class ColumnGreaterThanCheckConfig(_ComparisonConfig):
    """``{check: column-greater-than-check, check-id, column, limit, inclusive?: false}``."""

    check_class: ClassVar[type[BaseCheck]] = ColumnGreaterThanCheck
    _legacy: ClassVar[tuple[str, str]] = ("greater", "smaller")
