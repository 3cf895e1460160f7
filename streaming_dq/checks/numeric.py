"""Numeric bound checks: ``numeric-min-check``, ``numeric-max-check``, ``numeric-between-check``.

NULL semantics: a NULL value is "not applicable" and passes, unless ``treat-null-as-failure: true``. NaN
follows Spark's ordering (larger than every number): it fails a max bound and passes a min bound.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, ClassVar

from pydantic import Field, ValidationInfo, field_validator

from streaming_dq.checks.bounds import BetweenBoundCheck, MaxBoundCheck, MinBoundCheck
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.exceptions import ConfigError

Number = int | float | Decimal


class NumericMinCheck(MinBoundCheck):
    """Fails a row when any of ``columns`` is below ``min_value`` (or equal to it unless ``inclusive``).

    NULL semantics: NULL passes unless ``treat_null_as_failure``.

    Example:
        >>> NumericMinCheck("qty-positive", columns=["qty"], min_value=0)  # doctest: +SKIP
    """

    column_kind: ClassVar[str | None] = "numeric"


class NumericMaxCheck(MaxBoundCheck):
    """Fails a row when any of ``columns`` is above ``max_value`` (or equal to it unless ``inclusive``).

    NULL semantics: NULL passes unless ``treat_null_as_failure``.
    """

    column_kind: ClassVar[str | None] = "numeric"


class NumericBetweenCheck(BetweenBoundCheck):
    """Fails a row when any of ``columns`` lies outside ``min_value`` .. ``max_value``.

    ``inclusive`` is a pair (min, max), default ``(False, False)`` as in SparkDQ.
    NULL semantics: NULL passes unless ``treat_null_as_failure``.
    """

    column_kind: ClassVar[str | None] = "numeric"


class _NumericConfig(BaseRowCheckConfig):
    _abstract: ClassVar[bool] = True
    columns: list[str] = Field(min_length=1)
    treat_null_as_failure: bool = False


@register_check_config(check_name="numeric-min-check")
class NumericMinCheckConfig(_NumericConfig):
    """``{check: numeric-min-check, check-id, columns, min-value, inclusive?, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = NumericMinCheck
    min_value: Number
    inclusive: bool = False


@register_check_config(check_name="numeric-max-check")
class NumericMaxCheckConfig(_NumericConfig):
    """``{check: numeric-max-check, check-id, columns, max-value, inclusive?, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = NumericMaxCheck
    max_value: Number
    inclusive: bool = False


@register_check_config(check_name="numeric-between-check")
class NumericBetweenCheckConfig(_NumericConfig):
    """``{check: numeric-between-check, check-id, columns, min-value, max-value, inclusive?: [lo, hi]}``."""

    check_class: ClassVar[type[BaseCheck]] = NumericBetweenCheck
    min_value: Number
    max_value: Number
    inclusive: tuple[bool, bool] = (False, False)

    @field_validator("max_value")
    @classmethod
    def _ordered(cls, value: Any, info: ValidationInfo) -> Any:
        low = info.data.get("min_value")
        if low is not None and low > value:
            raise ConfigError(f"max-value ({value}) must not be below min-value ({low})")
        return value
