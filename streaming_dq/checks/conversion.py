"""``castable-check``: text values that must read as a Spark type (``data-type``: ``int``, ``decimal(10,2)``, ``date`` ...).

For landing data kept as strings (CSV, JSON read without a schema, Kafka values): a value fails when Spark's
``try_cast`` to ``data-type`` gives NULL, i.e. the cast the pipeline will run later would fail or lose the value.
Spark's cast rules apply (surrounding spaces are trimmed for numbers, ``1e3`` is a double but not an int,
``2024-02-30`` is no date, a decimal that does not fit its precision fails).

NULL semantics: a NULL value is not applicable and passes unless ``treat-null-as-failure: true``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import Field
from pyspark.sql import Column

from streaming_dq.checks.value_rule import ValueRuleCheck, ValueRuleConfig
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import check_sql_type, quote, try_cast


class CastableCheck(ValueRuleCheck):
    """Fails a row when a value of ``columns`` does not cast to ``data_type`` (Spark's ``try_cast``)."""

    column_kind: ClassVar[str | None] = "string"

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        data_type: str,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        check_sql_type(data_type, check_id=check_id, field="data-type")
        self.data_type = data_type

    def bad_named(self, name: str) -> Column:
        return try_cast(quote(name), self.data_type).isNull()

    def rule_text(self) -> str:
        return f"that does not read as {self.data_type}"


@register_check_config(check_name="castable-check")
class CastableCheckConfig(ValueRuleConfig):
    """``{check: castable-check, check-id, columns, data-type: int | double | decimal(p,s) | date | ...}``."""

    check_class: ClassVar[type[BaseCheck]] = CastableCheck
    data_type: str = Field(min_length=1)
