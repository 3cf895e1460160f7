"""Any curated aggregate against a limit: ``aggregate-check`` (the batch) and ``group-aggregate-check``
(each group of ``group-by``; the rows of a failing group fail).

``{check: aggregate-check, check-id, function: p95 ..., column, le: 500}``: ``function`` is one of
:data:`FUNCTIONS` (``count``, ``sum``, ``avg``, ``min``, ``max``, ``count-distinct``,
``approx-count-distinct``, ``count-if``, ``stddev``, ``stddev-pop``, ``stddev-samp``, ``variance``,
``var-pop``, ``var-samp``, ``median``, ``mode``, ``skewness``, ``kurtosis``, ``percentile``,
``approx-percentile``); ``column`` a column name, ``*`` (``count`` only: every row) or, for ``count-if``, a
SQL predicate; exactly one comparator of ``gt``, ``ge``, ``lt``, ``le``, ``eq``, ``ne``, ``between``; ``eq`` and
``ne`` take ``abs-tolerance`` / ``rel-tolerance`` (equal when ``|a - b| <= abs`` or ``|a - b| <= rel *
max(|a|, |b|)``). ``row-filter`` (SQL) limits the rows aggregated.

These are *classic* aggregates: each runs as its own Spark job on the batch (a global aggregate, or a
``groupBy`` joined back for ``group-aggregate-check``) instead of riding on the batch's one pass, because
most of these functions are not mergeable (median, mode, percentiles, exact distinct counts) and a group-by
has no bounded state; they are judged per batch, never per event-time window. The mergeable ones with a
single value per batch (count, sum, mean, min, max, stddev) exist as observable metric checks too
(``mean-check`` ...), which cost nothing extra and also judge windows.

NULL semantics: the functions leave NULLs out (``count`` of a column counts its non-NULL values, of ``*``
every row); a metric of no values (the average of an all-NULL column) is undefined and fails the check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, Field, model_validator
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.wording import MetricDetails, number, violations_sentence
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseAggregateCheckConfig, BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.results import AggregateEvaluationResult
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import check_sql_expression, col
from streaming_dq.core.suggest import did_you_mean
from streaming_dq.exceptions import ConfigError

Builder = Callable[[Column, dict[str, Any]], Column]


def _percentile(exact: bool) -> Builder:
    def build(value: Column, params: dict[str, Any]) -> Column:
        if exact:
            return F.percentile(value, float(params["percentile"]))
        return F.percentile_approx(value, float(params["percentile"]), int(params.get("accuracy", 10000)))

    return build


#: The curated aggregate functions (kebab-case names; DQX's snake-case names are accepted too).
FUNCTIONS: dict[str, Builder] = {
    "count": lambda v, p: F.count(v),
    "sum": lambda v, p: F.sum(v),
    "avg": lambda v, p: F.avg(v),
    "min": lambda v, p: F.min(v),
    "max": lambda v, p: F.max(v),
    "count-distinct": lambda v, p: F.count_distinct(v),
    "approx-count-distinct": lambda v, p: F.approx_count_distinct(v, float(p.get("rsd", 0.05))),
    "count-if": lambda v, p: F.count_if(v),
    "stddev": lambda v, p: F.stddev(v),
    "stddev-pop": lambda v, p: F.stddev_pop(v),
    "stddev-samp": lambda v, p: F.stddev_samp(v),
    "variance": lambda v, p: F.variance(v),
    "var-pop": lambda v, p: F.var_pop(v),
    "var-samp": lambda v, p: F.var_samp(v),
    "median": lambda v, p: F.median(v),
    "mode": lambda v, p: F.mode(v),
    "skewness": lambda v, p: F.skewness(v),
    "kurtosis": lambda v, p: F.kurtosis(v),
    "percentile": _percentile(exact=True),
    "approx-percentile": _percentile(exact=False),
}
_PARAMS = {"percentile": {"percentile", "accuracy"}, "approx-percentile": {"percentile", "accuracy"}}
_PARAMS["approx-count-distinct"] = {"rsd"}
COMPARATORS = ("gt", "ge", "lt", "le", "eq", "ne", "between")
_SYMBOLS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "=", "ne": "<>"}


def function_name(name: str) -> str:
    """``approx_percentile`` -> ``approx-percentile``; an unknown name is a ConfigError with close matches."""
    kebab = name.strip().lower().replace("_", "-")
    if kebab not in FUNCTIONS:
        raise ConfigError(
            f"unknown aggregate function {name!r}{did_you_mean(kebab, FUNCTIONS)}", field_path="function"
        )
    return kebab


class _Aggregate:
    """The shared part: function, input, comparator, and the comparison as Python and as SQL."""

    check_id: str
    column: str | None
    _input: str
    function: str
    params: dict[str, Any]
    comparator: str
    bounds: tuple[float, float]
    abs_tolerance: float
    rel_tolerance: float

    def _init_aggregate(
        self,
        function: str,
        column: str,
        params: dict[str, Any] | None,
        given: dict[str, Any],
        abs_tolerance: float | None,
        rel_tolerance: float | None,
    ) -> None:
        self._init_function(function, column, params)
        present = {k: v for k, v in given.items() if v is not None}
        if len(present) != 1:
            raise ConfigError(
                f"give exactly one comparator of {', '.join(COMPARATORS)} (got {', '.join(present) or 'none'})",
                field_path=sorted(present)[1] if len(present) > 1 else None,
            )
        ((self.comparator, limit),) = present.items()
        self.bounds = (
            (float(limit[0]), float(limit[1]))
            if isinstance(limit, list | tuple)
            else (float(limit), float(limit))
        )
        if (abs_tolerance or rel_tolerance) and self.comparator not in ("eq", "ne"):
            raise ConfigError("abs-tolerance and rel-tolerance are for eq and ne", field_path="abs-tolerance")
        self.abs_tolerance = float(abs_tolerance or 0.0)
        self.rel_tolerance = float(rel_tolerance or 0.0)

    def _init_function(self, function: str, column: str, params: dict[str, Any] | None) -> None:
        self.function = function_name(function)
        self._input = column
        # a plain column name is reported and checked against the stream's schema; '*' and predicates are not
        self.column = None if column == "*" or self.function == "count-if" else column
        self.params = dict(params or {})
        allowed = _PARAMS.get(self.function, set())
        unknown = sorted(set(self.params) - allowed)
        if unknown:
            raise ConfigError(
                f"{self.function} takes no parameter {unknown[0]!r}"
                + (f" (it takes {', '.join(sorted(allowed))})" if allowed else ""),
                field_path="params",
            )
        if self.function in ("percentile", "approx-percentile"):
            p = self.params.get("percentile")
            if not isinstance(p, int | float) or not 0.0 <= float(p) <= 1.0:
                raise ConfigError(f"{self.function} needs params.percentile in [0, 1]", field_path="params")
        if column == "*" and self.function != "count":
            raise ConfigError("column '*' is for function count only", field_path="column")
        if self.function == "count-if":
            check_sql_expression(column, check_id=self.check_id, field="column")

    def input_column(self) -> Column:
        if self._input == "*":
            return F.lit(1)
        return F.expr(self._input) if self.function == "count-if" else col(self._input)

    def aggregate(self, row_filter: str | None) -> Column:
        value = self.input_column()
        if row_filter is not None:  # rows outside the filter contribute NULL, which every function skips
            value = F.when(F.coalesce(F.expr(row_filter), F.lit(False)), value)
            if self.function == "count-if":
                value = F.coalesce(value, F.lit(False))
        return FUNCTIONS[self.function](value, self.params).cast("double")

    def _equal(self, a: float, b: float) -> bool:
        diff = abs(a - b)
        return diff <= self.abs_tolerance or diff <= self.rel_tolerance * max(abs(a), abs(b))

    def accepts_value(self, value: float | None) -> bool:
        if value is None or value != value:  # undefined (no values) or NaN
            return False
        low, high = self.bounds
        return {
            "gt": lambda: value > low,
            "ge": lambda: value >= low,
            "lt": lambda: value < low,
            "le": lambda: value <= low,
            "eq": lambda: self._equal(value, low),
            "ne": lambda: not self._equal(value, low),
            "between": lambda: low <= value <= high,
        }[self.comparator]()

    def accepts_column(self, value: Column) -> Column:
        """The same comparison in Spark (NULL or NaN: False)."""
        low, high = self.bounds
        diff = F.abs(value - F.lit(low))
        equal = (diff <= self.abs_tolerance) | (
            diff <= F.lit(self.rel_tolerance) * F.greatest(F.abs(value), F.lit(abs(low)))
        )
        verdict = {
            "gt": value > low,
            "ge": value >= low,
            "lt": value < low,
            "le": value <= low,
            "eq": equal,
            "ne": ~equal,
            "between": (value >= low) & (value <= high),
        }[self.comparator]
        return F.coalesce(verdict & ~F.isnan(value), F.lit(False))

    def label(self) -> str:
        extra = f"({number(self.params['percentile'])})" if "percentile" in self.params else ""
        return f"{self.function}{extra} of '{self._input}'"

    def expectation_text(self) -> str:
        low, high = self.bounds
        if self.comparator == "between":
            return f"between {number(low)} and {number(high)}"
        tol = ""
        if self.abs_tolerance or self.rel_tolerance:
            tol = f" (tolerance abs {number(self.abs_tolerance)}, rel {number(self.rel_tolerance)})"
        return f"{_SYMBOLS[self.comparator]} {number(low)}{tol}"


class AggregateCheck(_Aggregate, MetricDetails):
    """A curated aggregate of the batch (optionally of the rows ``row-filter`` selects) against a limit.

    Fails the batch like any aggregate check (every row of the batch goes to quarantine at a fail level).
    """

    def __init__(
        self,
        check_id: str,
        function: str,
        column: str,
        params: dict[str, Any] | None = None,
        row_filter: str | None = None,
        gt: float | None = None,
        ge: float | None = None,
        lt: float | None = None,
        le: float | None = None,
        eq: float | None = None,
        ne: float | None = None,
        between: tuple[float, float] | None = None,
        abs_tolerance: float | None = None,
        rel_tolerance: float | None = None,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        given = {"gt": gt, "ge": ge, "lt": lt, "le": le, "eq": eq, "ne": ne, "between": between}
        self._init_aggregate(function, column, params, given, abs_tolerance, rel_tolerance)
        if row_filter is not None:
            check_sql_expression(row_filter, check_id=check_id, field="row-filter")
        self.row_filter = row_filter
        self.gt, self.ge, self.lt, self.le, self.eq, self.ne, self.between = gt, ge, lt, le, eq, ne, between

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        row = df.agg(self.aggregate(self.row_filter).alias("v")).first()
        raw = None if row is None else row["v"]
        adjusted = raw * multiplier if raw is not None else None
        metrics = {"value": raw, "multiplier": multiplier, "adjusted": adjusted}
        return AggregateEvaluationResult(self.accepts_value(adjusted), metrics)

    def metric_label(self) -> str:
        return self.label()[0].upper() + self.label()[1:]

    def expectation(self) -> str:
        return self.expectation_text()


class GroupAggregateCheck(_Aggregate, BaseRowCheck):
    """A curated aggregate per group of ``group-by`` against a limit: every row of a failing group fails.

    The groups are computed with one ``groupBy`` of the batch joined back on the group keys (NULL keys form
    their own group). With a ``filter``, only the rows it selects are aggregated and can fail.
    """

    def __init__(
        self,
        check_id: str,
        function: str,
        column: str,
        group_by: Sequence[str],
        params: dict[str, Any] | None = None,
        gt: float | None = None,
        ge: float | None = None,
        lt: float | None = None,
        le: float | None = None,
        eq: float | None = None,
        ne: float | None = None,
        between: tuple[float, float] | None = None,
        abs_tolerance: float | None = None,
        rel_tolerance: float | None = None,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        given = {"gt": gt, "ge": ge, "lt": lt, "le": le, "eq": eq, "ne": ne, "between": between}
        self._init_aggregate(function, column, params, given, abs_tolerance, rel_tolerance)
        if not group_by:
            raise ConfigError("group-by must name at least one column", field_path="group-by")
        self.group_by = list(group_by)
        self.gt, self.ge, self.lt, self.le, self.eq, self.ne, self.between = gt, ge, lt, le, eq, ne, between

    @property
    def columns(self) -> list[str]:  # the columns the data must have (checked before the first batch)
        return [*self.group_by, *([self.column] if self.column else [])]

    def validate(self, df: DataFrame, column: str | None = None) -> DataFrame:
        keys = [f"__dq_g{i}" for i in range(len(self.group_by))]
        ok = f"__dq_ok_{self.check_id}"
        stats = (
            df.groupBy(*[col(c).alias(k) for c, k in zip(self.group_by, keys, strict=True)])
            .agg(self.aggregate(self.filter).alias("__dq_v"))
            .select(*keys, self.accepts_column(F.col("__dq_v")).alias(ok))
        )
        on = [col(c).eqNullSafe(stats[k]) for c, k in zip(self.group_by, keys, strict=True)]
        joined = df.join(stats, on=on, how="left")
        flag = self.filtered(~F.coalesce(joined[ok], F.lit(True)))
        return joined.withColumn(column or self.result_column, flag).drop(*keys, ok)

    def violation_details(self, violations: int, total: int) -> str:
        cond = (
            f"in a group of {', '.join(self.group_by)} whose {self.label()} is not {self.expectation_text()}"
        )
        return violations_sentence(self.group_by, violations, total, f"row {cond}", f"rows {cond}")


class _AggregateFields(BaseModel):
    """The fields both aggregate configs have (a mixin of the two config classes below)."""

    function: str
    column: str = Field(min_length=1)
    params: dict[str, Any] | None = None
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    eq: float | None = None
    ne: float | None = None
    between: tuple[float, float] | None = None
    abs_tolerance: float | None = Field(default=None, ge=0)
    rel_tolerance: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _known_function(self) -> _AggregateFields:
        function_name(self.function)
        return self


class AggregateCheckConfig(BaseAggregateCheckConfig, _AggregateFields):
    """``{check: aggregate-check, check-id, function, column, params?, row-filter?, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = AggregateCheck
    row_filter: str | None = Field(default=None, min_length=1)


class GroupAggregateCheckConfig(BaseRowCheckConfig, _AggregateFields):
    """``{check: group-aggregate-check, check-id, function, column, group-by: [...], params?, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = GroupAggregateCheck
    group_by: list[str] = Field(min_length=1)


register_check_config(check_name="aggregate-check")(AggregateCheckConfig)
register_check_config(check_name="group-aggregate-check")(GroupAggregateCheckConfig)
