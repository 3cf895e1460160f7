"""NULL checks.

NULL semantics: these checks are *about* NULLs, so a NULL is the thing they look for, never "not applicable".
"""

from __future__ import annotations

from functools import reduce
from typing import ClassVar

from pydantic import Field
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.config.registry import register_check_config
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.severity import Severity


class NullCheck(BaseRowCheck):
    """Fails a row when any of ``columns`` is NULL."""

    def __init__(
        self, check_id: str, columns: list[str], severity: Severity = Severity.CRITICAL, **kw: object
    ):
        super().__init__(check_id, severity, **kw)  # type: ignore[arg-type]
        self.columns = list(columns)

    def failure_condition(self, df: DataFrame) -> Column:
        return reduce(lambda a, b: a | b, [F.col(c).isNull() for c in self.columns])


class NotNullCheck(BaseRowCheck):
    """Fails a row when any of ``columns`` is NOT NULL (for columns that must stay empty)."""

    def __init__(
        self, check_id: str, columns: list[str], severity: Severity = Severity.CRITICAL, **kw: object
    ):
        super().__init__(check_id, severity, **kw)  # type: ignore[arg-type]
        self.columns = list(columns)

    def failure_condition(self, df: DataFrame) -> Column:
        return reduce(lambda a, b: a | b, [F.col(c).isNotNull() for c in self.columns])


class ExactlyOneNotNullCheck(BaseRowCheck):
    """Fails a row unless exactly one of ``columns`` is NOT NULL."""

    def __init__(
        self, check_id: str, columns: list[str], severity: Severity = Severity.CRITICAL, **kw: object
    ):
        super().__init__(check_id, severity, **kw)  # type: ignore[arg-type]
        self.columns = list(columns)

    def failure_condition(self, df: DataFrame) -> Column:
        present = reduce(lambda a, b: a + b, [F.col(c).isNotNull().cast("int") for c in self.columns])
        return present != F.lit(1)


class _ColumnsConfig(BaseRowCheckConfig):
    _abstract: ClassVar[bool] = True
    columns: list[str] = Field(min_length=1)


@register_check_config(check_name="null-check")
class NullCheckConfig(_ColumnsConfig):
    check_class: ClassVar[type[BaseCheck]] = NullCheck


@register_check_config(check_name="not-null-check")
class NotNullCheckConfig(_ColumnsConfig):
    check_class: ClassVar[type[BaseCheck]] = NotNullCheck


@register_check_config(check_name="exactly-one-not-null-check")
class ExactlyOneNotNullCheckConfig(_ColumnsConfig):
    check_class: ClassVar[type[BaseCheck]] = ExactlyOneNotNullCheck
