"""``sql-metric-check``: one value a SQL query computes over the batch, against a comparator.

``{check: sql-metric-check, check-id, query: "SELECT avg(amount) FROM {{ input_view }}", between: [20, 1000]}``:
the batch (the rows the check's ``filter`` selects) is the view ``{{ input_view }}`` names; the query's first
column of its first row is the metric (a boolean is 1 or 0), compared by exactly one of ``gt``, ``ge``, ``lt``,
``le``, ``eq``, ``ne``, ``between`` or ``not-between``. What a data contract's ``sql`` rules and
``duplicateValues`` metrics become (:mod:`streaming_dq.config.odcs`).

A classic aggregate: the query runs as its own Spark job on the batch, judged per batch (a window's value is not
mergeable from a query). The batch's view is a temporary view named after the check, replaced every batch. A
query that does not analyse fails the batch with the check's id and Spark's message.

NULL semantics: a NULL value, or a query that returns no row, is undefined and fails the check.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, ClassVar

from pydantic import Field
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.metric import ALL_COMPARATORS, AllComparatorsConfig, Threshold
from streaming_dq.checks.wording import MetricDetails
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.results import AggregateEvaluationResult
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import quote
from streaming_dq.exceptions import CheckEvaluationError, ConfigError

_PLACEHOLDER = re.compile(r"\{\{\s*input_view\s*\}\}")


class SqlMetricCheck(Threshold, MetricDetails):
    """The single value of ``query`` over the batch against one comparator (see the module)."""

    comparators: ClassVar[tuple[str, ...]] = ALL_COMPARATORS

    def __init__(
        self,
        check_id: str,
        query: str,
        label: str | None = None,
        gt: float | None = None,
        ge: float | None = None,
        lt: float | None = None,
        le: float | None = None,
        eq: float | None = None,
        ne: float | None = None,
        between: tuple[float, float] | None = None,
        not_between: tuple[float, float] | None = None,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        if not _PLACEHOLDER.search(query):
            raise ConfigError(
                f"check {check_id!r}: the query reads no {{{{ input_view }}}}", field_path="query"
            )
        self.query = query
        self.label = label
        self._set_threshold(check_id, gt, ge, lt, le, eq, between, ne=ne, not_between=not_between)

    @property
    def view_name(self) -> str:
        return "__dq_metric_" + hashlib.sha1(self.check_id.encode()).hexdigest()[:12]

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        view = df if self.filter is None else df.where(F.coalesce(F.expr(self.filter), F.lit(False)))
        view.createOrReplaceTempView(self.view_name)
        try:
            row = df.sparkSession.sql(_PLACEHOLDER.sub(quote(self.view_name), self.query)).first()
        except Exception as exc:  # Spark's analysis error, named with the check (never swallowed: re-raised)
            raise CheckEvaluationError(self.check_id, f"the query fails: {str(exc).splitlines()[0]}") from exc
        raw = row[0] if row is not None and len(row) else None
        try:
            value = None if raw is None else float(raw)
        except (TypeError, ValueError):
            raise CheckEvaluationError(self.check_id, f"the query returns {raw!r}, not a number") from None
        adjusted = None if value is None else value * multiplier
        metrics = {"value": value, "multiplier": multiplier, "adjusted": adjusted}
        return AggregateEvaluationResult(self.accepts(adjusted), metrics)

    def metric_label(self) -> str:
        return self.label or "The query's value"


@register_check_config(check_name="sql-metric-check")
class SqlMetricCheckConfig(AllComparatorsConfig):
    """``{check: sql-metric-check, check-id, query, label?, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = SqlMetricCheck
    query: str = Field(min_length=1)
    label: str | None = None
