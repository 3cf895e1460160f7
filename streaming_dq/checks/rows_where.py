"""``rows-where-check``: how many rows a SQL predicate holds for, in rows or as a percent of the rows.

``{check: rows-where-check, check-id, where: "status IS NULL OR status IN ('', 'n/a')", unit: percent, lt: 1}``:
the number of rows where ``where`` is true (``unit: rows``, the default) or that number as a percent of all the
rows (``unit: percent``, 0 to 100) against exactly one comparator of ``gt``, ``ge``, ``lt``, ``le``, ``eq``,
``ne``, ``between`` or ``not-between`` (outside ``[low, high]``). Without ``where`` every row counts: the row
count, with every comparator.

It is what a data contract's library metrics (ODCS ``nullValues``, ``missingValues``, ``invalidValues``,
``rowCount``) become (:mod:`streaming_dq.config.odcs`), and is as useful without one.

Observable: two count states (the rows, the rows where the predicate holds), so it rides on the batch's one
pass and holds over an event-time window or the stream's life as the other metric checks do.

NULL semantics: a row where ``where`` is NULL does not count (``status IN ('a')`` is NULL for a NULL status:
write ``status IS NULL OR ...`` to count those). The percent of no rows is 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field
from pyspark.sql import functions as F

from streaming_dq.checks.metric import ALL_COMPARATORS, AllComparatorsConfig, Threshold
from streaming_dq.checks.wording import MetricDetails
from streaming_dq.core.base_check import BaseCheck, ObservableAggregateCheck
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import check_sql_expression
from streaming_dq.exceptions import ConfigError
from streaming_dq.states.spec import StateSpec

Unit = Literal["rows", "percent"]


class RowsWhereCheck(Threshold, MetricDetails, ObservableAggregateCheck):
    """The rows where ``where`` holds (all rows without it), counted or as a percent (see the module)."""

    comparators: ClassVar[tuple[str, ...]] = ALL_COMPARATORS

    def __init__(
        self,
        check_id: str,
        where: str | None = None,
        unit: Unit = "rows",
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
        if unit not in ("rows", "percent"):
            raise ConfigError(
                f"check {check_id!r}: unit must be rows or percent, not {unit!r}", field_path="unit"
            )
        if where is not None:
            check_sql_expression(where, check_id=check_id, field="where")
        self.where = where
        self.unit: Unit = unit
        self._set_threshold(check_id, gt, ge, lt, le, eq, between, ne=ne, not_between=not_between)

    def state_specs(self) -> dict[str, StateSpec]:
        specs = {"rows": StateSpec("count")}
        if self.where is not None:
            specs["hits"] = StateSpec("count", F.expr(self.where), key=f"where:{self.where}")
        return specs

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        rows = states["rows"].n
        hits = states["hits"].n if self.where is not None else rows
        if self.unit == "percent":
            return 100.0 * hits / rows if rows else 0.0
        return float(hits)

    def metric_label(self) -> str:
        if self.where is None:
            return "Row count" if self.unit == "rows" else "Rows (% of rows)"
        return f"Rows where {self.where}" + (" (% of rows)" if self.unit == "percent" else "")

    def expectation(self) -> str:
        return super().expectation() + ("%" if self.unit == "percent" else "")


@register_check_config(check_name="rows-where-check")
class RowsWhereCheckConfig(AllComparatorsConfig):
    """``{check: rows-where-check, check-id, where?, unit?: rows | percent, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = RowsWhereCheck
    where: str | None = Field(default=None, min_length=1)
    unit: Unit = "rows"
