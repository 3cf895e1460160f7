"""Date and timestamp bound checks: ``date-min/max/between-check``, ``timestamp-min/max/between-check``.

Bounds are ISO text (``2024-01-31``, ``2024-01-31 08:00:00``, with an optional UTC offset) or, from YAML,
unquoted dates and datetimes. A bound without an offset is read in the Spark session time zone, as Spark
reads a timestamp literal. Column values are read as dates / timestamps (string columns are parsed).

NULL semantics: a NULL value is "not applicable" and passes, unless ``treat-null-as-failure: true``. A
non-NULL value that cannot be read as a date / timestamp fails.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, ClassVar

from pydantic import Field, ValidationInfo, field_validator

from streaming_dq.checks.bounds import BetweenBoundCheck, MaxBoundCheck, MinBoundCheck
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.exceptions import ConfigError


def iso_date(value: Any) -> str:
    """A date bound as ``YYYY-MM-DD`` (accepts ISO text and ``date`` objects).

    Raises:
        ValueError: ``value`` is not a date.
    """
    if isinstance(value, datetime):
        if value.time() != datetime.min.time():
            raise ConfigError(f"expected a date, got the datetime {value.isoformat()}")
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip()).isoformat()
        except ValueError:
            raise ConfigError(f"expected a date as YYYY-MM-DD, got {value!r}") from None
    raise ConfigError(f"expected a date as YYYY-MM-DD, got {type(value).__name__}")


def iso_timestamp(value: Any) -> str:
    """A timestamp bound as ISO text Spark reads (``YYYY-MM-DD HH:MM:SS[.ffffff][+HH:MM]``).

    Raises:
        ValueError: ``value`` is not a timestamp.
    """
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(f"expected an ISO timestamp (YYYY-MM-DD HH:MM:SS), got {value!r}") from None
    else:
        raise ConfigError(f"expected an ISO timestamp, got {type(value).__name__}")
    return parsed.isoformat(sep=" ")


class DateMinCheck(MinBoundCheck):
    """Fails a row when a date in ``columns`` is before ``min_value`` (or on it, unless ``inclusive``).

    NULL semantics: NULL passes unless ``treat_null_as_failure``; an unreadable value fails.
    """

    column_kind: ClassVar[str | None] = "temporal"

    read_as: ClassVar[str | None] = "date"


class DateMaxCheck(MaxBoundCheck):
    """Fails a row when a date in ``columns`` is after ``max_value`` (or on it, unless ``inclusive``).

    NULL semantics: NULL passes unless ``treat_null_as_failure``; an unreadable value fails.
    """

    column_kind: ClassVar[str | None] = "temporal"

    read_as: ClassVar[str | None] = "date"


class DateBetweenCheck(BetweenBoundCheck):
    """Fails a row when a date in ``columns`` lies outside ``min_value`` .. ``max_value``.

    NULL semantics: NULL passes unless ``treat_null_as_failure``; an unreadable value fails.
    """

    column_kind: ClassVar[str | None] = "temporal"

    read_as: ClassVar[str | None] = "date"


class TimestampMinCheck(MinBoundCheck):
    """Fails a row when a timestamp in ``columns`` is before ``min_value`` (or at it, unless ``inclusive``).

    NULL semantics: NULL passes unless ``treat_null_as_failure``; an unreadable value fails.
    """

    column_kind: ClassVar[str | None] = "temporal"

    read_as: ClassVar[str | None] = "timestamp"


class TimestampMaxCheck(MaxBoundCheck):
    """Fails a row when a timestamp in ``columns`` is after ``max_value`` (or at it, unless ``inclusive``).

    NULL semantics: NULL passes unless ``treat_null_as_failure``; an unreadable value fails.
    """

    column_kind: ClassVar[str | None] = "temporal"

    read_as: ClassVar[str | None] = "timestamp"


class TimestampBetweenCheck(BetweenBoundCheck):
    """Fails a row when a timestamp in ``columns`` lies outside ``min_value`` .. ``max_value``.

    NULL semantics: NULL passes unless ``treat_null_as_failure``; an unreadable value fails.
    """

    column_kind: ClassVar[str | None] = "temporal"

    read_as: ClassVar[str | None] = "timestamp"


class _TemporalConfig(BaseRowCheckConfig):
    _abstract: ClassVar[bool] = True
    columns: list[str] = Field(min_length=1)
    treat_null_as_failure: bool = False


class _DateConfig(_TemporalConfig):
    _abstract: ClassVar[bool] = True

    @field_validator("min_value", "max_value", mode="before", check_fields=False)
    @classmethod
    def _iso(cls, value: Any) -> str:
        return iso_date(value)


class _TimestampConfig(_TemporalConfig):
    _abstract: ClassVar[bool] = True

    @field_validator("min_value", "max_value", mode="before", check_fields=False)
    @classmethod
    def _iso(cls, value: Any) -> str:
        return iso_timestamp(value)


def _check_order(low: str | None, high: str, kind: str) -> None:
    if low is None:
        return
    parse = date.fromisoformat if kind == "date" else datetime.fromisoformat
    lo, hi = parse(low), parse(high)
    try:
        wrong = lo > hi
    except TypeError:  # one bound has an offset, the other not: Spark decides at run time
        return
    if wrong:
        raise ConfigError(f"max-value ({high}) must not be before min-value ({low})")


@register_check_config(check_name="date-min-check")
class DateMinCheckConfig(_DateConfig):
    """``{check: date-min-check, check-id, columns, min-value, inclusive?, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = DateMinCheck
    min_value: str
    inclusive: bool = False


@register_check_config(check_name="date-max-check")
class DateMaxCheckConfig(_DateConfig):
    """``{check: date-max-check, check-id, columns, max-value, inclusive?, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = DateMaxCheck
    max_value: str
    inclusive: bool = False


@register_check_config(check_name="date-between-check")
class DateBetweenCheckConfig(_DateConfig):
    """``{check: date-between-check, check-id, columns, min-value, max-value, inclusive?: [lo, hi]}``."""

    check_class: ClassVar[type[BaseCheck]] = DateBetweenCheck
    min_value: str
    max_value: str
    inclusive: tuple[bool, bool] = (False, False)

    @field_validator("max_value")
    @classmethod
    def _ordered(cls, value: str, info: ValidationInfo) -> str:
        _check_order(info.data.get("min_value"), value, "date")
        return value


@register_check_config(check_name="timestamp-min-check")
class TimestampMinCheckConfig(_TimestampConfig):
    """``{check: timestamp-min-check, check-id, columns, min-value, inclusive?, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = TimestampMinCheck
    min_value: str
    inclusive: bool = False


@register_check_config(check_name="timestamp-max-check")
class TimestampMaxCheckConfig(_TimestampConfig):
    """``{check: timestamp-max-check, check-id, columns, max-value, inclusive?, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = TimestampMaxCheck
    max_value: str
    inclusive: bool = False


@register_check_config(check_name="timestamp-between-check")
class TimestampBetweenCheckConfig(_TimestampConfig):
    """``{check: timestamp-between-check, check-id, columns, min-value, max-value, inclusive?: [lo, hi]}``."""

    check_class: ClassVar[type[BaseCheck]] = TimestampBetweenCheck
    min_value: str
    max_value: str
    inclusive: tuple[bool, bool] = (False, False)

    @field_validator("max_value")
    @classmethod
    def _ordered(cls, value: str, info: ValidationInfo) -> str:
        _check_order(info.data.get("min_value"), value, "timestamp")
        return value
