"""Metric checks: an aggregate of one column compared with a threshold written as a key.

``{check: mean-check, check-id: basket, column: amount, between: [20, 60]}`` -- exactly one of ``gt``, ``ge``,
``lt``, ``le``, ``eq`` (a number) or ``between`` (``[low, high]``, both inclusive) must be given.

All are observable: the metric is decided from mergeable states, so the same check also holds over an
event-time window or a stream's whole life. The profile multiplier scales the metric before the comparison.

* ``mean-check``, ``stddev-check`` (sample standard deviation): the moments state (count, mean, M2).
* ``sum-check``, ``min-check``, ``max-check``: sum / min / max states.
* ``null-count-check``: a count state of NULLs.
* ``distinct-count-check``: an HLL sketch (approximate, ~1.6% standard error; values compared as text).

NULL semantics: NULLs are left out of every metric except ``null-count-check``, which counts them. A metric
of no values (the mean of an all-NULL column, the stddev of one value) is undefined and fails the check;
the sum of no values is 0, the null count and distinct count of an empty batch are 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field, ValidationInfo, field_validator, model_validator

from streaming_dq.checks.wording import MetricDetails, number
from streaming_dq.core.base_check import BaseCheck, ObservableAggregateCheck
from streaming_dq.core.base_config import BaseAggregateCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col
from streaming_dq.exceptions import ConfigError
from streaming_dq.states.spec import StateSpec

COMPARATORS = ("gt", "ge", "lt", "le", "eq", "between")
#: With the two a data contract's rules also use (ODCS ``mustNotBe``, ``mustNotBeBetween``): rows-where-check's.
ALL_COMPARATORS = (*COMPARATORS, "ne", "not-between")
_SYMBOLS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "==", "ne": "!="}


class Threshold:
    """Exactly one comparator of a scalar metric (``gt``, ``ge``, ``lt``, ``le``, ``eq`` or ``between``; where a
    check offers them, ``ne`` and ``not-between``: outside ``[low, high]``)."""

    #: The comparators the check's config offers (named in the error when none or several are given).
    comparators: ClassVar[tuple[str, ...]] = COMPARATORS

    def _set_threshold(
        self,
        check_id: str,
        gt: float | None,
        ge: float | None,
        lt: float | None,
        le: float | None,
        eq: float | None,
        between: tuple[float, float] | None,
        *,
        ne: float | None = None,
        not_between: tuple[float, float] | None = None,
    ) -> None:
        offered = self.comparators
        values = (gt, ge, lt, le, eq, between, ne, not_between)
        given = {k: v for k, v in zip(ALL_COMPARATORS, values, strict=True) if v is not None}
        if len(given) != 1:
            raise ConfigError(
                f"check {check_id!r}: give exactly one comparator of {', '.join(offered)} "
                f"(got {', '.join(given) or 'none'})",
                field_path=sorted(given)[1] if len(given) > 1 else None,
            )
        self.gt, self.ge, self.lt, self.le, self.eq = gt, ge, lt, le, eq
        self.ne = ne
        self.not_between = (float(not_between[0]), float(not_between[1])) if not_between is not None else None
        self.between = (float(between[0]), float(between[1])) if between is not None else None
        ((self.comparator, threshold),) = given.items()
        #: (low, high) of ``between``; (x, x) for the single-number comparators.
        self.bounds: tuple[float, float] = (
            (float(threshold[0]), float(threshold[1]))
            if isinstance(threshold, tuple | list)
            else (float(threshold), float(threshold))
        )

    def accepts(self, value: float | None) -> bool:
        if value is None or value != value:  # undefined, or NaN
            return False
        low, high = self.bounds
        return {
            "gt": value > low,
            "ge": value >= low,
            "lt": value < low,
            "le": value <= low,
            "eq": value == low,
            "ne": value != low,
            "between": low <= value <= high,
            "not-between": not low <= value <= high,
        }[self.comparator]

    def expectation(self) -> str:
        low, high = self.bounds
        if self.comparator in ("between", "not-between"):
            return f"{'not ' if self.comparator == 'not-between' else ''}between {number(low)} and {number(high)}"
        return f"{_SYMBOLS[self.comparator]} {number(low)}"


class ColumnThreshold(Threshold):
    """A metric of one ``column`` against one comparator: the constructor every such check shares."""

    def __init__(
        self,
        check_id: str,
        column: str,
        gt: float | None = None,
        ge: float | None = None,
        lt: float | None = None,
        le: float | None = None,
        eq: float | None = None,
        between: tuple[float, float] | None = None,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)  # type: ignore[call-arg]  # the check base's
        self.column = column
        self._set_threshold(check_id, gt, ge, lt, le, eq, between)


class _MetricCheck(ColumnThreshold, MetricDetails, ObservableAggregateCheck):
    """One column's metric against one comparator."""

    #: The metric's name in reports (``Mean``).
    label: ClassVar[str] = "Metric"

    def metric_label(self) -> str:
        return f"{self.label} of '{self.column}'"


class MomentsMetricCheck(_MetricCheck):
    """A metric of ``column``'s moments state (count, mean, M2), shared with every check on the same column."""

    column_kind: ClassVar[str | None] = "numeric"

    def state_specs(self) -> dict[str, StateSpec]:
        return {"moments": StateSpec("moments", col(self.column), key=f"value:{self.column}")}


class MeanCheck(MomentsMetricCheck):
    """The mean of the non-NULL values of ``column``.

    NULL semantics: NULLs left out; no values = undefined = fails.

    Example:
        >>> MeanCheck("basket", column="amount", between=(20, 60))  # doctest: +SKIP
    """

    label: ClassVar[str] = "Mean"

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        moments = states["moments"]
        return moments.mean if moments.n else None


class StddevCheck(MomentsMetricCheck):
    """The sample standard deviation of the non-NULL values of ``column``.

    NULL semantics: NULLs left out; fewer than two values = undefined = fails.
    """

    label: ClassVar[str] = "Standard deviation"

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        value: float | None = states["moments"].stddev_samp
        return value


class SumCheck(_MetricCheck):
    """The sum of the non-NULL values of ``column`` (0 when there are none).

    NULL semantics: NULLs left out.
    """

    column_kind: ClassVar[str | None] = "numeric"

    label: ClassVar[str] = "Sum"

    def state_specs(self) -> dict[str, StateSpec]:
        return {"sum": StateSpec("sum", col(self.column), key=f"value:{self.column}")}

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        return float(states["sum"].total)


class MinCheck(_MetricCheck):
    """The smallest non-NULL value of ``column``.

    NULL semantics: NULLs left out; no values = undefined = fails.
    """

    column_kind: ClassVar[str | None] = "numeric"

    label: ClassVar[str] = "Minimum"

    def state_specs(self) -> dict[str, StateSpec]:
        return {"min": StateSpec("min", col(self.column), key=f"value:{self.column}")}

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        value: float | None = states["min"].extreme
        return value


class MaxCheck(_MetricCheck):
    """The largest non-NULL value of ``column``.

    NULL semantics: NULLs left out; no values = undefined = fails.
    """

    column_kind: ClassVar[str | None] = "numeric"

    label: ClassVar[str] = "Maximum"

    def state_specs(self) -> dict[str, StateSpec]:
        return {"max": StateSpec("max", col(self.column), key=f"value:{self.column}")}

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        value: float | None = states["max"].extreme
        return value


class NullCountCheck(_MetricCheck):
    """The number of rows where ``column`` is NULL.

    NULL semantics: NULLs are what is counted.
    """

    label: ClassVar[str] = "NULL count"

    def state_specs(self) -> dict[str, StateSpec]:
        return {"nulls": StateSpec("count", col(self.column).isNull(), key=f"null:{self.column}")}

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        return float(states["nulls"].n)


class DistinctCountCheck(_MetricCheck):
    """The approximate number of distinct non-NULL values of ``column`` (HLL sketch, lgK 12).

    Values are sketched by their text form (cast to string), so sketches of any column type merge the same
    way across batches.

    NULL semantics: NULLs left out; an empty batch has 0 distinct values.
    """

    label: ClassVar[str] = "Distinct count (approx.)"

    def state_specs(self) -> dict[str, StateSpec]:
        return {"hll": StateSpec("hll", col(self.column).cast("string"), key=f"string:{self.column}")}

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        value: float | None = states["hll"].value
        return value


class ComparatorConfig(BaseAggregateCheckConfig):
    """Exactly one comparator: ``gt``, ``ge``, ``lt``, ``le``, ``eq`` (a number) or ``between: [lo, hi]``."""

    _abstract: ClassVar[bool] = True
    #: The comparator keys this config offers (a subclass may offer ALL_COMPARATORS, with their fields).
    comparators: ClassVar[tuple[str, ...]] = COMPARATORS
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    eq: float | None = None
    between: tuple[float, float] | None = None

    @field_validator("between")
    @classmethod
    def _ordered(cls, value: tuple[float, float] | None, info: ValidationInfo) -> tuple[float, float] | None:
        if value is not None and value[0] > value[1]:
            raise ConfigError(f"between: low ({number(value[0])}) must not exceed high ({number(value[1])})")
        return value

    @model_validator(mode="after")
    def _one_comparator(self) -> ComparatorConfig:
        given = [k for k in self.comparators if getattr(self, k.replace("-", "_")) is not None]
        if len(given) != 1:
            offered = ", ".join(self.comparators)
            raise ConfigError(
                f"give exactly one comparator of {offered} (got {', '.join(given) or 'none'})",
                field_path=given[1] if len(given) > 1 else None,
            )
        return self


class AllComparatorsConfig(ComparatorConfig):
    """A config that also offers ``ne`` and ``not-between: [lo, hi]`` (outside the range)."""

    _abstract: ClassVar[bool] = True
    comparators: ClassVar[tuple[str, ...]] = ALL_COMPARATORS
    ne: float | None = None
    not_between: tuple[float, float] | None = Field(default=None, alias="not-between")

    @field_validator("not_between")
    @classmethod
    def _ordered_outside(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        if value is not None and value[0] > value[1]:
            raise ConfigError(
                f"not-between: low ({number(value[0])}) must not exceed high ({number(value[1])})"
            )
        return value


class _MetricConfig(ComparatorConfig):
    _abstract: ClassVar[bool] = True
    column: str


@register_check_config(check_name="mean-check")
class MeanCheckConfig(_MetricConfig):
    """``{check: mean-check, check-id, column, gt|ge|lt|le|eq: x | between: [lo, hi]}``."""

    check_class: ClassVar[type[BaseCheck]] = MeanCheck


@register_check_config(check_name="sum-check")
class SumCheckConfig(_MetricConfig):
    """``{check: sum-check, check-id, column, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = SumCheck


@register_check_config(check_name="min-check")
class MinCheckConfig(_MetricConfig):
    """``{check: min-check, check-id, column, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = MinCheck


@register_check_config(check_name="max-check")
class MaxCheckConfig(_MetricConfig):
    """``{check: max-check, check-id, column, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = MaxCheck


@register_check_config(check_name="stddev-check")
class StddevCheckConfig(_MetricConfig):
    """``{check: stddev-check, check-id, column, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = StddevCheck


@register_check_config(check_name="null-count-check")
class NullCountCheckConfig(_MetricConfig):
    """``{check: null-count-check, check-id, column, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = NullCountCheck


@register_check_config(check_name="distinct-count-check")
class DistinctCountCheckConfig(_MetricConfig):
    """``{check: distinct-count-check, check-id, column, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = DistinctCountCheck
