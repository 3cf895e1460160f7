"""NULL checks: ``null-check``, ``not-null-check``, ``exactly-one-not-null-check``.

NULL semantics: these checks are *about* NULLs, so a NULL is the thing they look for, never "not applicable".
Note the SparkDQ naming: ``null-check`` fails rows where a column IS NULL (it checks for NULLs), and
``not-null-check`` fails rows where a column is NOT NULL (for columns that must stay empty).
"""

from __future__ import annotations

from functools import reduce
from typing import Any, ClassVar

from pydantic import Field
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.wording import violations_sentence
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col


class _ColumnsCheck(BaseRowCheck):
    def __init__(
        self, check_id: str, columns: list[str], severity: Severity = Severity.CRITICAL, **kw: Any
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.columns = list(columns)


class NullCheck(_ColumnsCheck):
    """Fails a row when any of ``columns`` is NULL.

    NULL semantics: a NULL fails the row.

    Example:
        >>> NullCheck("id-present", columns=["id"])  # doctest: +SKIP
    """

    def failure_condition(self, df: DataFrame) -> Column:
        return reduce(lambda a, b: a | b, [col(c).isNull() for c in self.columns])

    def violation_details(self, violations: int, total: int) -> str:
        if len(self.columns) == 1:
            return violations_sentence(self.columns, violations, total, "null value")
        return violations_sentence(self.columns, violations, total, "row with a null value")


class NotNullCheck(_ColumnsCheck):
    """Fails a row when any of ``columns`` is NOT NULL (for columns that must stay empty).

    NULL semantics: a NULL passes; any value fails the row.
    """

    def failure_condition(self, df: DataFrame) -> Column:
        return reduce(lambda a, b: a | b, [col(c).isNotNull() for c in self.columns])

    def violation_details(self, violations: int, total: int) -> str:
        if len(self.columns) == 1:
            return violations_sentence(self.columns, violations, total, "non-null value")
        return violations_sentence(self.columns, violations, total, "row with a non-null value")


class ExactlyOneNotNullCheck(_ColumnsCheck):
    """Fails a row unless exactly one of ``columns`` is NOT NULL.

    NULL semantics: counted, not skipped: a row with all NULLs fails, as does one with two values.
    """

    def failure_condition(self, df: DataFrame) -> Column:
        present = reduce(lambda a, b: a + b, [col(c).isNotNull().cast("int") for c in self.columns])
        return present != F.lit(1)

    def violation_details(self, violations: int, total: int) -> str:
        return violations_sentence(
            self.columns, violations, total, "row without exactly one value", "rows without exactly one value"
        )


class _ColumnsConfig(BaseRowCheckConfig):
    _abstract: ClassVar[bool] = True
    columns: list[str] = Field(min_length=1)


@register_check_config(check_name="null-check")
class NullCheckConfig(_ColumnsConfig):
    """``{check: null-check, check-id, columns}``."""

    check_class: ClassVar[type[BaseCheck]] = NullCheck


@register_check_config(check_name="not-null-check")
class NotNullCheckConfig(_ColumnsConfig):
    """``{check: not-null-check, check-id, columns}``."""

    check_class: ClassVar[type[BaseCheck]] = NotNullCheck


@register_check_config(check_name="exactly-one-not-null-check")
class ExactlyOneNotNullCheckConfig(_ColumnsConfig):
    """``{check: exactly-one-not-null-check, check-id, columns}``."""

    check_class: ClassVar[type[BaseCheck]] = ExactlyOneNotNullCheck
