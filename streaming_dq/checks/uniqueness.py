"""Uniqueness checks.

* ``distinct-ratio-check`` (aggregate): distinct non-NULL values / non-NULL values >= ``min-ratio``.
* ``unique-ratio-check`` (aggregate): distinct non-NULL values / all rows >= ``min-ratio``.
* ``unique-rows-check`` (aggregate): no two rows share the values of ``subset-columns`` (all columns if unset).
* ``unique-key-check`` (row): marks every row whose ``columns`` key occurs more than once in the batch; with a
  ``horizon``, every row whose key was seen before in the stream (:mod:`~streaming_dq.checks.stream_keys`).

The aggregates need an exact distinct count or a groupBy, so they are classic aggregate checks (one Spark job
each, not merged across batches); ``distinct-count-check`` is the mergeable, approximate alternative.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from functools import reduce
from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from streaming_dq.checks.stream_keys import FIRST_SEEN_COLUMN, LatePolicy, first_seen_of
from streaming_dq.checks.wording import MetricDetails, number, plural, subject, violations_sentence
from streaming_dq.core.base_check import BaseAggregateCheck, BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseAggregateCheckConfig, BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.results import AggregateCheckResult, AggregateEvaluationResult
from streaming_dq.core.scope import parse_duration
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col, data_columns
from streaming_dq.exceptions import CheckEvaluationError, ConfigError


class _RatioCheck(MetricDetails, BaseAggregateCheck):
    """A ratio of distinct values; the profile multiplier scales the ratio before comparing it."""

    def __init__(
        self, check_id: str, column: str, min_ratio: float, severity: Severity = Severity.CRITICAL, **kw: Any
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.column = column
        self.min_ratio = min_ratio

    def ratio(self, distinct: int, non_null: int, rows: int) -> float:
        raise NotImplementedError

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        value = col(self.column)
        row = df.agg(
            F.count_distinct(value).alias("distinct"),
            F.count(value).alias("non_null"),
            F.count("*").alias("rows"),
        ).first()
        distinct, non_null, rows = (
            (int(row[k] or 0) for k in ("distinct", "non_null", "rows")) if row else (0, 0, 0)
        )
        ratio = self.ratio(distinct, non_null, rows)
        adjusted = ratio * multiplier
        metrics = {
            "value": ratio,
            "multiplier": multiplier,
            "adjusted": adjusted,
            "distinct_count": distinct,
            "non_null_count": non_null,
            "row_count": rows,
        }
        return AggregateEvaluationResult(adjusted >= self.min_ratio, metrics)

    def expectation(self) -> str:
        return f">= {number(self.min_ratio)}"


class DistinctRatioCheck(_RatioCheck):
    """Passes when distinct non-NULL values / non-NULL values of ``column`` is at least ``min_ratio``.

    NULL semantics: NULLs are left out of both counts; a column with no values has ratio 0 (as in SparkDQ).
    """

    def ratio(self, distinct: int, non_null: int, rows: int) -> float:
        return distinct / non_null if non_null else 0.0

    def metric_label(self) -> str:
        return f"Distinct ratio of '{self.column}'"


class UniqueRatioCheck(_RatioCheck):
    """Passes when distinct non-NULL values of ``column`` / all rows is at least ``min_ratio``.

    NULL semantics: NULLs are not counted as values but their rows count in the denominator; no rows gives
    ratio 0 (as in SparkDQ).
    """

    def ratio(self, distinct: int, non_null: int, rows: int) -> float:
        return distinct / rows if rows else 0.0

    def metric_label(self) -> str:
        return f"Unique ratio of '{self.column}'"


class UniqueRowsCheck(BaseAggregateCheck):
    """Passes when no two rows share the values of ``subset_columns`` (all columns when None).

    NULL semantics: NULLs compare equal here (as in a SQL GROUP BY), so two rows that are NULL in the same
    key columns and equal elsewhere are duplicates.
    """

    def __init__(
        self,
        check_id: str,
        subset_columns: Sequence[str] | None = None,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.subset_columns = list(subset_columns) if subset_columns else None

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        names = self.subset_columns or data_columns(df)
        missing = [c for c in names if c not in df.columns]
        if missing:
            raise CheckEvaluationError(self.check_id, f"column(s) {', '.join(missing)} not in the data")
        groups = df.groupBy(*[col(c) for c in names]).count().filter(F.col("count") > 1)
        row = groups.agg(F.count("*").alias("groups"), F.sum("count").alias("rows")).first()
        dup_groups = int(row["groups"] or 0) if row else 0
        dup_rows = int(row["rows"] or 0) if row else 0
        metrics = {
            "value": dup_rows,
            "multiplier": multiplier,
            "adjusted": dup_rows * multiplier,
            "duplicate_groups": dup_groups,
            "columns": names,
        }
        return AggregateEvaluationResult(dup_rows == 0, metrics)

    def details(self, result: AggregateCheckResult) -> str:
        m = result.metrics
        if result.status == "skipped" or "duplicate_groups" not in m:
            return super().details(result)
        rows, groups = int(m["value"]), int(m["duplicate_groups"])
        where = subject(m["columns"])
        verb = "has" if len(m["columns"]) == 1 else "have"
        if not rows:
            return f"{where} {verb} no duplicate rows"
        return f"{where} {verb} {plural(rows, 'duplicate row')} in {plural(groups, 'group')}"


class UniqueKeyCheck(BaseRowCheck):
    """Marks every row whose key (the values of ``columns``) occurs more than once in the batch.

    All rows sharing a key fail, not only the second one: none of them can be trusted to be the right one.

    With a ``horizon`` the check judges the stream instead of the batch: the first occurrence of a key passes
    and every later one within the horizon of event time fails, in this batch or any later one, with a
    pointer to the first occurrence (:mod:`~streaming_dq.checks.stream_keys`; the gate keeps the keys in
    its keys table). ``order_by`` breaks ties of event time inside a batch (e.g. the Kafka partition and
    offset) and names the occurrence in the pointer; ``late`` says what becomes of a row too late to judge.

    NULL semantics: a row with a NULL in any key column passes: an incomplete key identifies nothing, so it
    cannot be a duplicate (as with SQL UNIQUE constraints). Pair with ``null-check`` to reject such keys.
    ``nulls-distinct: false`` compares NULLs as values instead (two rows ``(1, NULL)`` are duplicates).

    With a ``filter`` the key must be unique among the rows the filter selects (the others neither fail nor
    count as duplicates).
    """

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        nulls_distinct: bool = True,
        severity: Severity = Severity.CRITICAL,
        horizon: timedelta | None = None,
        order_by: Sequence[str] = (),
        late: LatePolicy = "quarantine",
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.columns = list(columns)
        self.nulls_distinct = nulls_distinct
        self.horizon = horizon
        self.order_by = list(order_by)
        self.late = late

    @property
    def across_batches(self) -> bool:
        """Whether the check judges the stream (it has a horizon) rather than each batch."""
        return self.horizon is not None

    def failure_condition(self, df: DataFrame) -> Column:
        if self.across_batches:
            if FIRST_SEEN_COLUMN not in df.columns:
                raise CheckEvaluationError(
                    self.check_id,
                    f"judges keys across batches: it runs in a QualityGate with a keys table, which adds "
                    f"{FIRST_SEEN_COLUMN} to the batch",
                )
            return first_seen_of(self.check_id, self.late)
        keys = [col(c) for c in self.columns]
        # with nulls-distinct: false a NULL is a value like any other: (1, NULL) twice is a duplicate
        has_null = (
            reduce(lambda a, b: a | b, [k.isNull() for k in keys]) if self.nulls_distinct else F.lit(False)
        )
        # with a filter, only the rows it selects count as each other's duplicates
        repeats = F.count(F.when(self.applies(), F.lit(1))).over(Window.partitionBy(*keys)) > 1
        return ~has_null & repeats

    def violation_details(self, violations: int, total: int) -> str:
        if self.across_batches:
            return violations_sentence(self.columns, violations, total, "row seen before")
        return violations_sentence(self.columns, violations, total, "duplicate row")


class _RatioConfig(BaseAggregateCheckConfig):
    _abstract: ClassVar[bool] = True
    column: str = Field(min_length=1)
    min_ratio: float = Field(ge=0.0, le=1.0)


@register_check_config(check_name="distinct-ratio-check")
class DistinctRatioCheckConfig(_RatioConfig):
    """``{check: distinct-ratio-check, check-id, column, min-ratio}``."""

    check_class: ClassVar[type[BaseCheck]] = DistinctRatioCheck


@register_check_config(check_name="unique-ratio-check")
class UniqueRatioCheckConfig(_RatioConfig):
    """``{check: unique-ratio-check, check-id, column, min-ratio}``."""

    check_class: ClassVar[type[BaseCheck]] = UniqueRatioCheck


@register_check_config(check_name="unique-rows-check")
class UniqueRowsCheckConfig(BaseAggregateCheckConfig):
    """``{check: unique-rows-check, check-id, subset-columns?: [...]}`` (all columns when omitted)."""

    check_class: ClassVar[type[BaseCheck]] = UniqueRowsCheck
    subset_columns: list[str] | None = Field(default=None, min_length=1)


@register_check_config(check_name="unique-key-check")
class UniqueKeyCheckConfig(BaseRowCheckConfig):
    """``{check: unique-key-check, check-id, columns: [...], nulls-distinct?: true}``; with
    ``horizon: 7 days`` (``order-by?: [...]``, ``late?: quarantine|pass``) across batches."""

    check_class: ClassVar[type[BaseCheck]] = UniqueKeyCheck
    columns: list[str] = Field(min_length=1)
    nulls_distinct: bool = True
    horizon: timedelta | None = None
    order_by: list[str] = Field(default_factory=list)
    late: LatePolicy = "quarantine"

    @field_validator("horizon", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        return parse_duration(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _stream_options_need_a_horizon(self) -> UniqueKeyCheckConfig:
        if self.horizon is None:
            for name in ("order_by", "late"):
                if name in self.model_fields_set:
                    raise ConfigError(
                        f"{name.replace('_', '-')} applies to keys judged across batches: give a horizon",
                        field_path=name.replace("_", "-"),
                    )
        elif self.horizon <= timedelta(0):
            raise ConfigError("horizon must be positive, e.g. '7 days'", field_path="horizon")
        return self
