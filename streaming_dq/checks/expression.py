"""``expression-check``: a Spark SQL predicate that must hold for every row.

NULL semantics: a predicate that evaluates to NULL (e.g. ``amount > 0`` on a NULL amount) is "not
applicable" and the row passes, unless ``treat-null-as-failure: true``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.wording import percent, plural
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import check_sql_expression


class ExpressionCheck(BaseRowCheck):
    """Fails a row where ``expression`` (a Spark SQL boolean expression) is false.

    Invalid SQL raises ConfigError (field ``expression``, naming the check) when the check is built while a
    SparkSession is active, otherwise when the engine builds the plan.

    NULL semantics: a NULL result passes unless ``treat_null_as_failure``.

    Example:
        >>> ExpressionCheck("paid-has-amount", "status <> 'paid' OR amount > 0")  # doctest: +SKIP
    """

    def __init__(
        self,
        check_id: str,
        expression: str,
        treat_null_as_failure: bool = False,
        message: str | None = None,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        check_sql_expression(expression, check_id=check_id, field="expression")
        self.expression = expression
        self.treat_null_as_failure = treat_null_as_failure
        self.message = message

    def failure_condition(self, df: DataFrame) -> Column:
        holds = F.expr(self.expression)
        return F.when(holds.isNull(), F.lit(self.treat_null_as_failure)).otherwise(~holds)

    def violation_details(self, violations: int, total: int) -> str:
        if not violations:
            return f"All rows satisfy {self.expression}"
        if self.message:
            return f"{self.message}: {plural(violations, 'row')} ({percent(violations, total)})"
        verb = "violates" if violations == 1 else "violate"
        return f"{plural(violations, 'row')} ({percent(violations, total)}) {verb} {self.expression}"


@register_check_config(check_name="expression-check")
class ExpressionCheckConfig(BaseRowCheckConfig):
    """``{check: expression-check, check-id, expression, treat-null-as-failure?: false, message?}``."""

    check_class: ClassVar[type[BaseCheck]] = ExpressionCheck
    expression: str = Field(min_length=1)
    treat_null_as_failure: bool = False
    message: str | None = Field(default=None, description="Says what a failure means, in the report.")
