"""The shape most row checks share: a rule applied to each value of ``columns``, NULL being not applicable.

A :class:`ValueRuleCheck` fails a row when ANY of its ``columns`` holds a value the rule rejects
(:meth:`ValueRuleCheck.bad`). A NULL value is "not applicable" and passes, unless
``treat_null_as_failure: true``; a rule that is *about* NULLs (``null-or-empty-check``) says so with
:attr:`ValueRuleCheck.null_fails`. Subclasses only write the rule and its wording.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce
from typing import Any, ClassVar

from pydantic import Field
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.wording import violations_sentence
from streaming_dq.core.base_check import BaseRowCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col


class ValueRuleCheck(BaseRowCheck):
    """Fails a row when a value of any of ``columns`` breaks the rule of :meth:`bad`.

    Args:
        check_id: The check's id.
        columns: The columns the rule applies to, each on its own.
        treat_null_as_failure: A NULL fails the row instead of passing it.
        severity: ``critical`` (default) or ``warning``.
    """

    #: NULL breaks the rule whatever ``treat_null_as_failure`` says (checks about missing values).
    null_fails: ClassVar[bool] = False

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.columns = list(columns)
        self.treat_null_as_failure = treat_null_as_failure

    def bad(self, value: Column) -> Column:
        """True when a non-NULL ``value`` breaks the rule (NULL here counts as breaking it too)."""
        raise NotImplementedError

    def bad_named(self, name: str) -> Column:
        """:meth:`bad` for the column called ``name`` (a check that builds its rule as SQL text overrides this)."""
        return self.bad(col(name))

    def rule_text(self) -> str:
        """What a failing value is, in words: ``an empty string``, ``not an e-mail address``."""
        raise NotImplementedError

    def failure_condition(self, df: DataFrame) -> Column:
        on_null = F.lit(self.null_fails or self.treat_null_as_failure)
        terms = [
            F.when(col(c).isNull(), on_null).otherwise(F.coalesce(self.bad_named(c), F.lit(True)))
            for c in self.columns
        ]
        return reduce(lambda a, b: a | b, terms)

    def violation_details(self, violations: int, total: int) -> str:
        cond = self.rule_text() + (" or NULL" if self.treat_null_as_failure and not self.null_fails else "")
        if len(self.columns) == 1:
            return violations_sentence(self.columns, violations, total, f"value {cond}", f"values {cond}")
        return violations_sentence(
            self.columns, violations, total, f"row with a value {cond}", f"rows with a value {cond}"
        )


class ValueRuleConfig(BaseRowCheckConfig):
    """``columns`` and ``treat-null-as-failure``, the fields every value-rule check has."""

    _abstract: ClassVar[bool] = True
    columns: list[str] = Field(min_length=1)
    treat_null_as_failure: bool = False
