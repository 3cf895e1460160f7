"""Dates and times by format and against the clock: ``date-format-check``, ``timestamp-format-check``,
``not-in-future-check``, ``not-in-near-future-check``, ``older-than-check``.

Formats are Spark's datetime patterns (``yyyy-MM-dd``, ``dd/MM/yyyy HH:mm``), parsed strictly: ``2024-1-5``
is not ``yyyy-MM-dd`` and ``2024-02-30`` is no date. "Now" is Spark's ``current_timestamp()`` (today:
``current_date()`` in the session time zone), taken once per query: a micro-batch is judged against the clock
of its own run, so a batch Spark replays after a failure is judged against the clock of the replay.

NULL semantics: NULL passes unless ``treat-null-as-failure: true``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import Field
from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.checks.value_rule import ValueRuleCheck, ValueRuleConfig
from streaming_dq.compat.spark import try_to_date
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.scope import parse_duration
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col
from streaming_dq.exceptions import ConfigError


class _FormatCheck(ValueRuleCheck):
    column_kind: ClassVar[str | None] = "string"
    default_format: ClassVar[str]
    noun: ClassVar[str]

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        format: str | None = None,  # the config's word, as in Spark's to_date
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        self.format = format or self.default_format
        if not self.format.strip():
            raise ConfigError("format must not be empty", field_path="format")

    def rule_text(self) -> str:
        return f"not a {self.noun} of the form {self.format}"


class DateFormatCheck(_FormatCheck):
    """Fails a row when a value of ``columns`` is not a date written as ``format`` (default ``yyyy-MM-dd``)."""

    default_format = "yyyy-MM-dd"
    noun = "date"

    def bad(self, value: Column) -> Column:
        return try_to_date(value, self.format).isNull()


class TimestampFormatCheck(_FormatCheck):
    """Fails a row when a value of ``columns`` is not a timestamp written as ``format``
    (default ``yyyy-MM-dd HH:mm:ss``)."""

    default_format = "yyyy-MM-dd HH:mm:ss"
    noun = "timestamp"

    def bad(self, value: Column) -> Column:
        return F.try_to_timestamp(value, F.lit(self.format)).isNull()


def _micros(value: Column) -> Column:
    return F.unix_micros(value.cast("timestamp"))


def _seconds(text: str, field: str) -> int:
    try:
        return int(parse_duration(text).total_seconds())
    except ConfigError as exc:
        raise ConfigError(exc.reason, field_path=field) from None


class NotInFutureCheck(ValueRuleCheck):
    """Fails a row when a value of ``columns`` is later than now plus ``offset`` (default ``0 seconds``).

    A DATE counts as its midnight (in the session time zone): today is not in the future.
    """

    column_kind: ClassVar[str | None] = "temporal"

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        offset: str = "0 seconds",
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        self.offset = offset
        self._offset_s = _seconds(offset, "offset")

    def bad(self, value: Column) -> Column:
        return _micros(value) > _micros(F.current_timestamp()) + self._offset_s * 1_000_000

    def rule_text(self) -> str:
        return "in the future" if not self._offset_s else f"more than {self.offset} in the future"


class NotInNearFutureCheck(NotInFutureCheck):
    """Fails a row when a value of ``columns`` lies after now but less than ``offset`` ahead of it
    (``now < value < now + offset``): values in the near future are suspect, the far future is a
    different check's business (``not-in-future-check``).
    """

    def __init__(self, check_id: str, columns: Sequence[str], offset: str, **kw: Any) -> None:
        super().__init__(check_id, columns, offset, **kw)
        if self._offset_s <= 0:
            raise ConfigError("offset must be longer than 0 seconds", field_path="offset")

    def bad(self, value: Column) -> Column:
        now, v = _micros(F.current_timestamp()), _micros(value)
        return (v > now) & (v < now + self._offset_s * 1_000_000)

    def rule_text(self) -> str:
        return f"less than {self.offset} in the future"


class OlderThanCheck(ValueRuleCheck):
    """Fails a row unless a value of ``columns`` is at least ``days`` days before today, or before the
    date in ``than-column`` when given (``date(value) <= date(reference) - days``).

    NULL semantics: a NULL value or a NULL ``than-column`` passes unless ``treat-null-as-failure``.
    """

    column_kind: ClassVar[str | None] = "temporal"

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        days: int,
        than_column: str | None = None,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        if days < 0:
            raise ConfigError("days must be 0 or more", field_path="days")
        self.days = days
        self.than_column = than_column

    def bad(self, value: Column) -> Column:
        reference = F.current_date() if self.than_column is None else col(self.than_column).cast("date")
        too_new = F.datediff(reference, value.cast("date")) < self.days
        return F.when(reference.isNull(), F.lit(self.treat_null_as_failure)).otherwise(too_new)

    def rule_text(self) -> str:
        than = "today" if self.than_column is None else self.than_column
        return f"less than {self.days} day{'' if self.days == 1 else 's'} before {than}"


@register_check_config(check_name="date-format-check")
class DateFormatCheckConfig(ValueRuleConfig):
    """``{check: date-format-check, check-id, columns: [...], format?: yyyy-MM-dd}``."""

    check_class: ClassVar[type[BaseCheck]] = DateFormatCheck
    format: str = Field(default="yyyy-MM-dd", min_length=1)


@register_check_config(check_name="timestamp-format-check")
class TimestampFormatCheckConfig(ValueRuleConfig):
    """``{check: timestamp-format-check, check-id, columns: [...], format?: yyyy-MM-dd HH:mm:ss}``."""

    check_class: ClassVar[type[BaseCheck]] = TimestampFormatCheck
    format: str = Field(default="yyyy-MM-dd HH:mm:ss", min_length=1)


@register_check_config(check_name="not-in-future-check")
class NotInFutureCheckConfig(ValueRuleConfig):
    """``{check: not-in-future-check, check-id, columns: [...], offset?: 0 seconds}``."""

    check_class: ClassVar[type[BaseCheck]] = NotInFutureCheck
    offset: str = "0 seconds"


@register_check_config(check_name="not-in-near-future-check")
class NotInNearFutureCheckConfig(ValueRuleConfig):
    """``{check: not-in-near-future-check, check-id, columns: [...], offset: 1 hour}``."""

    check_class: ClassVar[type[BaseCheck]] = NotInNearFutureCheck
    offset: str


@register_check_config(check_name="older-than-check")
class OlderThanCheckConfig(ValueRuleConfig):
    """``{check: older-than-check, check-id, columns: [...], days: 30, than-column?: shipped_at}``."""

    check_class: ClassVar[type[BaseCheck]] = OlderThanCheck
    days: int = Field(ge=0)
    than_column: str | None = Field(default=None, min_length=1)
