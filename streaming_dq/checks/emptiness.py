"""Empty values: ``empty-check``, ``null-or-empty-check`` (strings), ``empty-array-check``,
``null-or-empty-array-check``.

Named like ``null-check``: each checks *for* the thing in its name and fails the rows that have it.
A string is empty when it has no characters (``trim: true`` also counts whitespace-only strings as empty);
an array is empty when it has no elements (an array of NULLs is not empty).

NULL semantics: ``empty-check`` and ``empty-array-check`` let NULL pass (pair them with ``null-check``, or
use ``null-or-empty-check``); the ``null-or-empty`` checks fail it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.checks.value_rule import ValueRuleCheck, ValueRuleConfig
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity


class EmptyCheck(ValueRuleCheck):
    """Fails a row when any of ``columns`` is the empty string (or only whitespace, with ``trim``).

    NULL semantics: NULL passes unless ``treat_null_as_failure``.
    """

    column_kind: ClassVar[str | None] = "string"

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        trim: bool = False,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        self.trim = trim

    def bad(self, value: Column) -> Column:
        # Spark's trim removes spaces only; whitespace here is what Java's regex \s matches
        text = F.regexp_replace(value, r"^\s+|\s+$", "") if self.trim else value
        return F.length(text) == 0

    def rule_text(self) -> str:
        return "empty or only whitespace" if self.trim else "empty"


class NullOrEmptyCheck(EmptyCheck):
    """Fails a row when any of ``columns`` is NULL or empty (or only whitespace, with ``trim``)."""

    null_fails: ClassVar[bool] = True

    def rule_text(self) -> str:
        return f"NULL or {super().rule_text()}"


class EmptyArrayCheck(ValueRuleCheck):
    """Fails a row when any of ``columns`` is an array without elements.

    NULL semantics: a NULL array passes unless ``treat_null_as_failure``.
    """

    column_kind: ClassVar[str | None] = "array"

    def bad(self, value: Column) -> Column:
        return F.size(value) == 0

    def rule_text(self) -> str:
        return "an empty array"


class NullOrEmptyArrayCheck(EmptyArrayCheck):
    """Fails a row when any of ``columns`` is NULL or an array without elements."""

    null_fails: ClassVar[bool] = True

    def rule_text(self) -> str:
        return "NULL or an empty array"


@register_check_config(check_name="empty-check")
class EmptyCheckConfig(ValueRuleConfig):
    """``{check: empty-check, check-id, columns: [...], trim?: false, treat-null-as-failure?: false}``."""

    check_class: ClassVar[type[BaseCheck]] = EmptyCheck
    trim: bool = False


@register_check_config(check_name="null-or-empty-check")
class NullOrEmptyCheckConfig(ValueRuleConfig):
    """``{check: null-or-empty-check, check-id, columns: [...], trim?: false}``."""

    check_class: ClassVar[type[BaseCheck]] = NullOrEmptyCheck
    trim: bool = False


@register_check_config(check_name="empty-array-check")
class EmptyArrayCheckConfig(ValueRuleConfig):
    """``{check: empty-array-check, check-id, columns: [...], treat-null-as-failure?: false}``."""

    check_class: ClassVar[type[BaseCheck]] = EmptyArrayCheck


@register_check_config(check_name="null-or-empty-array-check")
class NullOrEmptyArrayCheckConfig(ValueRuleConfig):
    """``{check: null-or-empty-array-check, check-id, columns: [...]}``."""

    check_class: ClassVar[type[BaseCheck]] = NullOrEmptyArrayCheck
