"""Set-membership checks: ``is-contained-in-check`` and ``is-not-contained-in-check``.

Both take SparkDQ's mapping form ``{column: [values, ...]}``; with several columns a row fails when ANY
column breaks its rule (SparkDQ's is-contained-in required all of them to fail).

NULL semantics: a NULL value is "not applicable" and passes, unless ``treat-null-as-failure: true``. Listing
``null`` among the allowed values makes NULL explicitly allowed in that column; listing it among the
forbidden values makes NULL fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce
from typing import Any, ClassVar

from pydantic import Field, field_validator
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.wording import violations_sentence
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col
from streaming_dq.exceptions import ConfigError


class _MembershipCheck(BaseRowCheck):
    values_by_column: dict[str, list[Any]]
    treat_null_as_failure: bool

    @property
    def columns(self) -> list[str]:
        """The checked columns (the engine verifies they exist)."""
        return list(self.values_by_column)

    def bad(self, value: Column, values: list[Any]) -> Column:
        raise NotImplementedError

    def null_fails(self, values: list[Any]) -> bool:
        return self.treat_null_as_failure

    def failure_condition(self, df: DataFrame) -> Column:
        terms = []
        for name, values in self.values_by_column.items():
            value = col(name)
            listed = [v for v in values if v is not None]
            terms.append(
                F.when(value.isNull(), F.lit(self.null_fails(values))).otherwise(self.bad(value, listed))
            )
        return reduce(lambda a, b: a | b, terms)


class IsContainedInCheck(_MembershipCheck):
    """Fails a row when any column's value is not among its ``allowed_values``.

    NULL semantics: NULL passes unless ``treat_null_as_failure`` (and ``null`` is not listed as allowed).

    Example:
        >>> IsContainedInCheck("status-ok", {"status": ["new", "paid"]})  # doctest: +SKIP
    """

    def __init__(
        self,
        check_id: str,
        allowed_values: Mapping[str, Sequence[Any]],
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.allowed_values = {c: list(v) for c, v in allowed_values.items()}
        self.values_by_column = self.allowed_values
        self.treat_null_as_failure = treat_null_as_failure

    def bad(self, value: Column, values: list[Any]) -> Column:
        return ~value.isin(values) if values else F.lit(True)

    def null_fails(self, values: list[Any]) -> bool:
        return self.treat_null_as_failure and None not in values

    def violation_details(self, violations: int, total: int) -> str:
        if len(self.columns) == 1:
            return violations_sentence(
                self.columns, violations, total, "value not allowed", "values not allowed"
            )
        return violations_sentence(
            self.columns, violations, total, "row with a value not allowed", "rows with a value not allowed"
        )


class IsNotContainedInCheck(_MembershipCheck):
    """Fails a row when any column's value is among its ``forbidden_values``.

    NULL semantics: NULL passes unless ``treat_null_as_failure`` (or ``null`` is listed as forbidden).
    """

    def __init__(
        self,
        check_id: str,
        forbidden_values: Mapping[str, Sequence[Any]],
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.forbidden_values = {c: list(v) for c, v in forbidden_values.items()}
        self.values_by_column = self.forbidden_values
        self.treat_null_as_failure = treat_null_as_failure

    def bad(self, value: Column, values: list[Any]) -> Column:
        return value.isin(values) if values else F.lit(False)

    def null_fails(self, values: list[Any]) -> bool:
        return self.treat_null_as_failure or None in values

    def violation_details(self, violations: int, total: int) -> str:
        if len(self.columns) == 1:
            return violations_sentence(self.columns, violations, total, "forbidden value")
        return violations_sentence(
            self.columns, violations, total, "row with a forbidden value", "rows with a forbidden value"
        )


def _non_empty_lists(field: str, mapping: dict[str, list[Any]]) -> dict[str, list[Any]]:
    if not mapping:
        raise ConfigError(f"{field} must name at least one column")
    empty = [c for c, values in mapping.items() if not values]
    if empty:
        raise ConfigError(f"{field} lists no values for column(s) {', '.join(empty)}")
    return mapping


@register_check_config(check_name="is-contained-in-check")
class IsContainedInCheckConfig(BaseRowCheckConfig):
    """``{check: is-contained-in-check, check-id, allowed-values: {column: [values]}}``."""

    check_class: ClassVar[type[BaseCheck]] = IsContainedInCheck
    allowed_values: dict[str, list[Any]] = Field()
    treat_null_as_failure: bool = False

    @field_validator("allowed_values")
    @classmethod
    def _non_empty(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        return _non_empty_lists("allowed-values", value)


@register_check_config(check_name="is-not-contained-in-check")
class IsNotContainedInCheckConfig(BaseRowCheckConfig):
    """``{check: is-not-contained-in-check, check-id, forbidden-values: {column: [values]}}``."""

    check_class: ClassVar[type[BaseCheck]] = IsNotContainedInCheck
    forbidden_values: dict[str, list[Any]] = Field()
    treat_null_as_failure: bool = False

    @field_validator("forbidden_values")
    @classmethod
    def _non_empty(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        return _non_empty_lists("forbidden-values", value)
