"""String checks: ``string-min-length-check``, ``string-max-length-check``, ``string-length-between-check``,
``regex-match-check``, ``regex-not-match-check``.

Lengths count characters (Spark's ``length``), and bounds are inclusive by default, as in SparkDQ.

NULL semantics: a NULL value is "not applicable" and passes, unless ``treat-null-as-failure: true``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, ValidationInfo, field_validator
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.wording import violations_sentence
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import check_java_regex, col
from streaming_dq.exceptions import ConfigError


class _StringCheck(BaseRowCheck):
    """One string column; :meth:`bad` decides for non-NULL values."""

    column_kind: ClassVar[str | None] = "string"

    column: str
    treat_null_as_failure: bool

    def bad(self, value: Column) -> Column:
        raise NotImplementedError

    def condition_text(self) -> str:
        raise NotImplementedError

    def failure_condition(self, df: DataFrame) -> Column:
        value = col(self.column)
        return F.when(value.isNull(), F.lit(self.treat_null_as_failure)).otherwise(self.bad(value))

    def violation_details(self, violations: int, total: int) -> str:
        cond = self.condition_text() + (" or NULL" if self.treat_null_as_failure else "")
        return violations_sentence([self.column], violations, total, f"value {cond}", f"values {cond}")


class StringMinLengthCheck(_StringCheck):
    """Fails a row whose ``column`` is shorter than ``min_length`` (or equal to it, unless ``inclusive``).

    NULL semantics: NULL passes unless ``treat_null_as_failure``.
    """

    def __init__(
        self,
        check_id: str,
        column: str,
        min_length: int,
        inclusive: bool = True,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.column = column
        self.min_length = min_length
        self.inclusive = inclusive
        self.treat_null_as_failure = treat_null_as_failure

    def bad(self, value: Column) -> Column:
        n = F.length(value)
        return n < self.min_length if self.inclusive else n <= self.min_length

    def condition_text(self) -> str:
        return f"shorter than {self.min_length if self.inclusive else self.min_length + 1} characters"


class StringMaxLengthCheck(_StringCheck):
    """Fails a row whose ``column`` is longer than ``max_length`` (or equal to it, unless ``inclusive``).

    NULL semantics: NULL passes unless ``treat_null_as_failure``.
    """

    def __init__(
        self,
        check_id: str,
        column: str,
        max_length: int,
        inclusive: bool = True,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.column = column
        self.max_length = max_length
        self.inclusive = inclusive
        self.treat_null_as_failure = treat_null_as_failure

    def bad(self, value: Column) -> Column:
        n = F.length(value)
        return n > self.max_length if self.inclusive else n >= self.max_length

    def condition_text(self) -> str:
        return f"longer than {self.max_length if self.inclusive else self.max_length - 1} characters"


class StringLengthBetweenCheck(_StringCheck):
    """Fails a row whose ``column`` length lies outside ``min_length`` .. ``max_length``.

    ``inclusive`` is a pair (min, max), default ``(True, True)`` as in SparkDQ.
    NULL semantics: NULL passes unless ``treat_null_as_failure``.
    """

    def __init__(
        self,
        check_id: str,
        column: str,
        min_length: int,
        max_length: int,
        inclusive: tuple[bool, bool] = (True, True),
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.column = column
        self.min_length = min_length
        self.max_length = max_length
        self.inclusive = (bool(inclusive[0]), bool(inclusive[1]))
        self.treat_null_as_failure = treat_null_as_failure

    def bad(self, value: Column) -> Column:
        n = F.length(value)
        low = n < self.min_length if self.inclusive[0] else n <= self.min_length
        high = n > self.max_length if self.inclusive[1] else n >= self.max_length
        return low | high

    def condition_text(self) -> str:
        left = "[" if self.inclusive[0] else "("
        right = "]" if self.inclusive[1] else ")"
        return f"with a length outside {left}{self.min_length}, {self.max_length}{right}"


class RegexMatchCheck(_StringCheck):
    """Fails a row whose ``column`` does not contain a match of ``pattern`` (Java regex, Spark's ``rlike``).

    Anchor the pattern (``^...$``) to require a full match. An invalid pattern is a config error when a
    SparkSession is active.

    NULL semantics: NULL passes unless ``treat_null_as_failure``.
    """

    def __init__(
        self,
        check_id: str,
        column: str,
        pattern: str,
        ignore_case: bool = False,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        check_java_regex(pattern, check_id=check_id, field="pattern")
        self.column = column
        self.pattern = pattern
        self.ignore_case = ignore_case
        self.treat_null_as_failure = treat_null_as_failure

    def bad(self, value: Column) -> Column:
        pattern = f"(?i){self.pattern}" if self.ignore_case else self.pattern
        return ~value.rlike(pattern)

    def condition_text(self) -> str:
        return f"not matching /{self.pattern}/{'i' if self.ignore_case else ''}"


class RegexNotMatchCheck(RegexMatchCheck):
    """Fails a row whose ``column`` contains a match of ``pattern`` (a deny pattern: ``(?i)test|dummy``).

    NULL semantics: NULL passes unless ``treat_null_as_failure``.
    """

    def bad(self, value: Column) -> Column:
        return ~super().bad(value)

    def condition_text(self) -> str:
        return f"matching /{self.pattern}/{'i' if self.ignore_case else ''}"


class _StringConfig(BaseRowCheckConfig):
    _abstract: ClassVar[bool] = True
    column: str = Field(min_length=1)
    treat_null_as_failure: bool = False


@register_check_config(check_name="string-min-length-check")
class StringMinLengthCheckConfig(_StringConfig):
    """``{check: string-min-length-check, check-id, column, min-length, inclusive?: true}``."""

    check_class: ClassVar[type[BaseCheck]] = StringMinLengthCheck
    min_length: int = Field(ge=0)
    inclusive: bool = True


@register_check_config(check_name="string-max-length-check")
class StringMaxLengthCheckConfig(_StringConfig):
    """``{check: string-max-length-check, check-id, column, max-length, inclusive?: true}``."""

    check_class: ClassVar[type[BaseCheck]] = StringMaxLengthCheck
    max_length: int = Field(ge=0)
    inclusive: bool = True


@register_check_config(check_name="string-length-between-check")
class StringLengthBetweenCheckConfig(_StringConfig):
    """``{check: string-length-between-check, check-id, column, min-length, max-length, inclusive?}``."""

    check_class: ClassVar[type[BaseCheck]] = StringLengthBetweenCheck
    min_length: int = Field(ge=0)
    max_length: int = Field(ge=0)
    inclusive: tuple[bool, bool] = (True, True)

    @field_validator("max_length")
    @classmethod
    def _ordered(cls, value: int, info: ValidationInfo) -> int:
        low = info.data.get("min_length")
        if low is not None and low > value:
            raise ConfigError(f"max-length ({value}) must not be below min-length ({low})")
        return value


@register_check_config(check_name="regex-match-check")
class RegexMatchCheckConfig(_StringConfig):
    """``{check: regex-match-check, check-id, column, pattern, ignore-case?, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = RegexMatchCheck
    pattern: str = Field(min_length=1)
    ignore_case: bool = False


@register_check_config(check_name="regex-not-match-check")
class RegexNotMatchCheckConfig(RegexMatchCheckConfig):
    """``{check: regex-not-match-check, check-id, column, pattern, ignore-case?, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = RegexNotMatchCheck
