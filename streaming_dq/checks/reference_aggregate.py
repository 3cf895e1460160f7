"""``reference-aggregate-check``: an aggregate of the batch equals the same aggregate of a reference dataset,
for the whole batch or per group (DQX's ``aggr_matches_dataset``; the referential checks are in
:mod:`~streaming_dq.checks.integrity`).

NULL semantics: group keys match null-safely; two undefined aggregates (no values) are equal, one undefined
against a value differs.
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar

from pydantic import Field, model_validator
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.aggregate import FUNCTIONS, _Aggregate, function_name
from streaming_dq.checks.wording import violations_sentence
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck, IntegrityCheckMixin
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import check_sql_expression, col, quote, try_cast
from streaming_dq.exceptions import CheckEvaluationError, ConfigError

__all__ = ["ReferenceAggregateCheck", "ReferenceAggregateCheckConfig"]


class ReferenceAggregateCheck(_Aggregate, IntegrityCheckMixin, BaseRowCheck):
    """An aggregate of the batch equals the same aggregate of a reference dataset (DQX's
    ``aggr_matches_dataset``): ``function`` of ``column`` against ``function`` of ``reference-column``, for the
    whole batch or per group of ``group-by`` (matched by position with ``reference-group-by``, NULL keys
    null-safely). Every row of a batch (or group) whose aggregate differs fails; a group the reference lacks
    differs. Equal within ``abs-tolerance`` / ``rel-tolerance``; two undefined aggregates (no values) are equal.

    Costs two aggregations (the batch's groups and the reference's) joined back to the rows; the reference is
    re-aggregated every batch (it may change between batches). ``reference-filter`` (SQL) limits the
    reference rows, the check's ``filter`` the batch rows aggregated (and judged).

    NULL semantics: the functions leave NULLs out, as in ``aggregate-check``.
    """

    def __init__(
        self,
        check_id: str,
        function: str,
        column: str,
        reference_dataset: str,
        reference_column: str | None = None,
        group_by: list[str] | None = None,
        reference_group_by: list[str] | None = None,
        reference_filter: str | None = None,
        params: dict[str, Any] | None = None,
        abs_tolerance: float | None = None,
        rel_tolerance: float | None = None,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self._init_aggregate(function, column, params, {"eq": 0.0}, abs_tolerance, rel_tolerance)
        self.reference_dataset = reference_dataset
        self.reference_column = reference_column or column
        self.group_by = list(group_by or [])
        self.reference_group_by = list(reference_group_by or self.group_by)
        if reference_group_by and not group_by:
            raise ConfigError("reference-group-by needs group-by", field_path="reference-group-by")
        if len(self.reference_group_by) != len(self.group_by):
            raise ConfigError(
                "reference-group-by must name as many columns as group-by", field_path="reference-group-by"
            )
        if reference_filter is not None:
            check_sql_expression(reference_filter, check_id=check_id, field="reference-filter")
        self.reference_filter = reference_filter

    @property
    def columns(self) -> list[str]:  # the columns the data must have (checked before the first batch)
        return [*self.group_by, *([self.column] if self.column else [])]

    def _reference_value(self) -> Any:
        if self._input == "*":
            return F.lit(1)
        return F.expr(self.reference_column) if self.function == "count-if" else col(self.reference_column)

    def validate(self, df: DataFrame, column: str | None = None) -> DataFrame:
        p = "__dq_ra_" + hashlib.sha1(self.check_id.encode()).hexdigest()[:10]
        keys = [f"{p}_k{i}" for i in range(len(self.group_by))]
        ref = self.get_reference_df(self.reference_dataset)
        missing = [c for c in self.reference_group_by if c not in ref.columns]
        if self._input != "*" and self.function != "count-if" and self.reference_column not in ref.columns:
            missing.append(self.reference_column)
        if missing:
            raise CheckEvaluationError(
                self.check_id,
                f"reference dataset {self.reference_dataset!r} has no column(s) {', '.join(missing)} "
                f"(columns: {', '.join(ref.columns)})",
            )
        if self.reference_filter is not None:
            ref = ref.where(F.coalesce(F.expr(self.reference_filter), F.lit(False)))
        ours = df.groupBy(*[col(c).alias(k) for c, k in zip(self.group_by, keys, strict=True)]).agg(
            self.aggregate(self.filter).alias(f"{p}_a")
        )
        theirs = ref.groupBy(
            *[
                try_cast(quote(r), df.schema[c].dataType).alias(k)
                for r, c, k in zip(self.reference_group_by, self.group_by, keys, strict=True)
            ]
        ).agg(
            FUNCTIONS[self.function](self._reference_value(), self.params).cast("double").alias(f"{p}_b"),
            F.lit(True).alias(f"{p}_present"),
        )
        stats = ours.join(
            theirs,
            on=[ours[k].eqNullSafe(theirs[k]) for k in keys] if keys else F.lit(True),
            how="left",
        ).select(
            *[ours[k] for k in keys],
            self._differs(F.col(f"{p}_a"), F.col(f"{p}_b"), F.col(f"{p}_present")).alias(f"{p}_bad"),
        )
        if keys:
            on = [col(c).eqNullSafe(stats[k]) for c, k in zip(self.group_by, keys, strict=True)]
            joined = df.join(stats, on=on, how="left").drop(*keys)
        else:
            joined = df.crossJoin(stats)
        flag = self.filtered(F.coalesce(F.col(f"{p}_bad"), F.lit(False)))
        return joined.withColumn(column or self.result_column, flag).drop(f"{p}_bad")

    def _differs(self, a: Any, b: Any, present: Any) -> Any:
        diff = F.abs(a - b)
        near = (diff <= self.abs_tolerance) | (
            diff <= F.lit(self.rel_tolerance) * F.greatest(F.abs(a), F.abs(b))
        )
        return (
            F.when(present.isNull(), F.lit(True))  # a group the reference lacks
            .when(a.isNull() & b.isNull(), F.lit(False))
            .when(a.isNull() | b.isNull(), F.lit(True))
            .otherwise(~F.coalesce(near, F.lit(False)))
        )

    def violation_details(self, violations: int, total: int) -> str:
        where = f"{self.reference_dataset}.{self.reference_column}"
        scope = f"a group of {', '.join(self.group_by)}" if self.group_by else "a batch"
        what = f"in {scope} whose {self.label()} differs from the {self.function} of {where}"
        return violations_sentence(
            self.group_by or [self._input], violations, total, f"row {what}", f"rows {what}"
        )


@register_check_config(check_name="reference-aggregate-check")
class ReferenceAggregateCheckConfig(BaseRowCheckConfig):
    """``{check: reference-aggregate-check, check-id, function, column, reference-dataset, reference-column?,
    group-by?, reference-group-by?, reference-filter?, params?, abs-tolerance?, rel-tolerance?}``."""

    check_class: ClassVar[type[BaseCheck]] = ReferenceAggregateCheck
    function: str
    column: str = Field(min_length=1)
    reference_dataset: str = Field(min_length=1)
    reference_column: str | None = Field(default=None, min_length=1)
    group_by: list[str] | None = None
    reference_group_by: list[str] | None = None
    reference_filter: str | None = Field(default=None, min_length=1)
    params: dict[str, Any] | None = None
    abs_tolerance: float | None = Field(default=None, ge=0)
    rel_tolerance: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _known_function(self) -> ReferenceAggregateCheckConfig:
        function_name(self.function)
        return self
