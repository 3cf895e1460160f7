"""``sql-query-check``: a Spark SQL query over the batch decides which rows fail (DQX's ``sql_query``).

``{check: sql-query-check, check-id, query: "SELECT id, amount > 2 * avg(amount) OVER () AS condition FROM
{{ input_view }}", merge-columns: [id]}``: the batch (the rows the check's ``filter`` selects) is the view
``{{ input_view }}`` names (``input-placeholder`` renames the placeholder); the query returns a boolean
``condition`` column (``condition-column`` renames it), true where the check fails (``negate: true`` flips it).

* With ``merge-columns`` the result is joined back on those columns (NULL matches NULL): a row fails when any
  result row of its key has a true condition; a row without a result row passes. The result is reduced to one
  row per key first, so a query that returns a key twice never duplicates a row of the batch.
* Without, the check is dataset-level: every row fails when any result row's condition is true.

The query is planned with the batch (lazy: no job of its own unless the query needs one, e.g. a window over
the whole batch sorts it). The batch's view is a temporary view named after the check, replaced every batch.
A query that does not analyse (a missing column, no condition column) fails the batch with the check's id and
Spark's message; a condition that is not boolean too.

NULL semantics: a NULL condition passes.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any, ClassVar

from pydantic import Field
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, NullType

from streaming_dq.checks.wording import percent, plural, violations_sentence
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col, quote
from streaming_dq.exceptions import CheckEvaluationError, ConfigError


class SqlQueryCheck(BaseRowCheck):
    """Fails the rows a SQL query over the batch marks (see the module)."""

    def __init__(
        self,
        check_id: str,
        query: str,
        merge_columns: list[str] | None = None,
        condition_column: str = "condition",
        negate: bool = False,
        input_placeholder: str = "input_view",
        message: str | None = None,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        if not query.strip():
            raise ConfigError("query must not be empty", field_path="query")
        self._placeholder = re.compile(r"\{\{\s*" + re.escape(input_placeholder) + r"\s*\}\}")
        self.query = query
        self.merge_columns = list(merge_columns or [])
        self.condition_column = condition_column
        self.negate = negate
        self.input_placeholder = input_placeholder
        self.message = message

    @property
    def columns(self) -> list[str]:  # the columns the data must have (checked before the first batch)
        return self.merge_columns

    @property
    def view_name(self) -> str:
        return "__dq_sql_" + hashlib.sha1(self.check_id.encode()).hexdigest()[:12]

    def validate(self, df: DataFrame, column: str | None = None) -> DataFrame:
        view = df if self.filter is None else df.where(F.coalesce(F.expr(self.filter), F.lit(False)))
        view.createOrReplaceTempView(self.view_name)
        try:
            result = df.sparkSession.sql(self._placeholder.sub(quote(self.view_name), self.query))
            dtype = result.schema[self.condition_column].dataType
        except KeyError:
            raise CheckEvaluationError(
                self.check_id,
                f"the query returns no column {self.condition_column!r} (columns: {', '.join(result.columns)})",
            ) from None
        if not isinstance(dtype, BooleanType | NullType):
            raise CheckEvaluationError(
                self.check_id, f"the query's {self.condition_column!r} is {dtype.simpleString()}, not boolean"
            )
        absent = [c for c in self.merge_columns if c not in result.columns]
        if absent:
            raise CheckEvaluationError(
                self.check_id, f"the query returns no merge column(s) {', '.join(absent)}"
            )
        p = "__dq_sq_" + hashlib.sha1(self.check_id.encode()).hexdigest()[:10]
        condition = ~col(self.condition_column) if self.negate else col(self.condition_column)
        fails = F.max(F.coalesce(condition, F.lit(False)).cast("int")) > 0
        keys = [f"{p}_k{i}" for i in range(len(self.merge_columns))]
        verdicts = result.groupBy(
            *[col(c).alias(k) for c, k in zip(self.merge_columns, keys, strict=True)]
        ).agg(fails.alias(f"{p}_bad"))
        if keys:
            on = [col(c).eqNullSafe(verdicts[k]) for c, k in zip(self.merge_columns, keys, strict=True)]
            joined = df.join(verdicts, on=functools.reduce(lambda a, b: a & b, on), how="left").drop(*keys)
        else:
            joined = df.crossJoin(verdicts)
        flag = self.filtered(F.coalesce(F.col(f"{p}_bad"), F.lit(False)))
        return joined.withColumn(column or self.result_column, flag).drop(f"{p}_bad")

    def violation_details(self, violations: int, total: int) -> str:
        what = "row the query marks" if self.merge_columns else "row of a batch the query marks"
        if self.message and violations:
            many = what.replace("row", "rows", 1)
            return f"{self.message}: {plural(violations, what, many)} ({percent(violations, total)})"
        return violations_sentence(
            self.merge_columns or ["*"], violations, total, what, what.replace("row", "rows", 1)
        )


@register_check_config(check_name="sql-query-check")
class SqlQueryCheckConfig(BaseRowCheckConfig):
    """``{check: sql-query-check, check-id, query, merge-columns?, condition-column?: condition, negate?,
    input-placeholder?: input_view, message?}``."""

    check_class: ClassVar[type[BaseCheck]] = SqlQueryCheck
    query: str = Field(min_length=1)
    merge_columns: list[str] | None = None
    condition_column: str = Field(default="condition", min_length=1)
    negate: bool = False
    input_placeholder: str = Field(default="input_view", min_length=1)
    message: str | None = Field(default=None, description="Says what a failure means, in the report.")
