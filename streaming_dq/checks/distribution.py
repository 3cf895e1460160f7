"""The distribution of a column's values in a batch: ``in-distribution-check``, ``entropy-check`` and
``distinct-values-check``.

Values are told apart by their text (the value cast to string: ``1`` for an int, ``1.0`` for a double), so a
config's expected values are written the way Spark prints them. NULLs are left out of every distribution.

These are *classic* aggregates: each is one Spark job over the batch (a ``groupBy`` of the column's values; at
most ``max-values + 1`` groups reach the driver, or none for the entropy), judged per batch, never per
event-time window: a frequency table is not a bounded mergeable state.

* ``in-distribution-check``: the batch's value shares against ``expected`` shares (``{DE: 0.5, FR: 0.3,
  IT: 0.2}``): the total variation distance (half the sum of ``|observed - expected|`` over every value,
  unexpected values counted with an expected share of 0) at most ``max-distance``; or, with
  ``distance: max-deviation``, the largest ``|observed - expected|`` of any value. An empty batch (no values)
  fails: it has no distribution.
* ``entropy-check``: the Shannon entropy (natural log) of the value distribution against a comparator: 0 for
  one value, ``ln(k)`` for k equally frequent values. No values = undefined = fails.
* ``distinct-values-check``: the set of distinct values ``subset-of`` / ``superset-of`` / ``equal-to`` a set
  (exactly one). ``subset-of`` differs from ``is-contained-in-check`` in what it fails: the batch, once,
  naming the unexpected values, where the row check quarantines each row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.metric import ColumnThreshold, ComparatorConfig
from streaming_dq.checks.wording import MetricDetails, number
from streaming_dq.core.base_check import BaseAggregateCheck, BaseCheck
from streaming_dq.core.base_config import BaseAggregateCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.results import AggregateCheckResult, AggregateEvaluationResult
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col
from streaming_dq.exceptions import CheckEvaluationError, ConfigError

#: How far two distributions are apart: the total variation, or the largest single-value deviation.
Distance = Literal["total-variation", "max-deviation"]

#: How many values a report names at most.
_SHOWN = 5


def _text(value: Any) -> str:
    """A config value as Spark prints it: YAML's ``true`` as ``true``, ``1`` as ``1``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _shown(values: list[str]) -> str:
    more = f" and {len(values) - _SHOWN} more" if len(values) > _SHOWN else ""
    return ", ".join(repr(v) for v in values[:_SHOWN]) + more


class _ValueCounts:
    check_id: str
    column: str
    max_values: int

    def value_counts(self, df: DataFrame) -> dict[str, int]:
        """``{value text: rows}`` of the non-NULL values (one job).

        Raises:
            CheckEvaluationError: The batch has more than ``max_values`` distinct values.
        """
        text = col(self.column).cast("string")
        rows = (
            df.where(text.isNotNull())
            .groupBy(text.alias("v"))
            .agg(F.count(F.lit(1)).alias("n"))
            .limit(self.max_values + 1)
            .collect()
        )
        if len(rows) > self.max_values:
            raise CheckEvaluationError(
                self.check_id,
                f"column {self.column!r} has more than {self.max_values} distinct values in this batch "
                "(raise max-values, or this column is not categorical)",
            )
        return {r["v"]: int(r["n"]) for r in rows}


class InDistributionCheck(MetricDetails, _ValueCounts, BaseAggregateCheck):
    """The batch's value shares of ``column`` within ``max_distance`` of ``expected``.

    NULL semantics: NULLs are left out of the shares; a batch without values fails.
    """

    def __init__(
        self,
        check_id: str,
        column: str,
        expected: Mapping[Any, float],
        max_distance: float,
        distance: Distance = "total-variation",
        max_values: int = 10_000,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        if not expected:
            raise ConfigError("expected must give at least one value's share", field_path="expected")
        shares = {_text(k): float(v) for k, v in expected.items()}
        total = sum(shares.values())
        if any(v < 0 for v in shares.values()) or not math.isclose(total, 1.0, abs_tol=1e-6):
            raise ConfigError(
                f"expected shares must be >= 0 and add up to 1 (they add up to {number(total)})",
                field_path="expected",
            )
        self.column = column
        self.expected = shares
        self.max_distance = float(max_distance)
        self.distance = distance
        self.max_values = int(max_values)

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        counts = self.value_counts(df)
        total = sum(counts.values())
        if not total:
            return AggregateEvaluationResult(False, {"value": None, "row_count": 0})
        observed = {v: n / total for v, n in counts.items()}
        gaps = {v: abs(observed.get(v, 0.0) - self.expected.get(v, 0.0)) for v in {*observed, *self.expected}}
        value = max(gaps.values()) if self.distance == "max-deviation" else 0.5 * sum(gaps.values())
        worst = sorted(gaps, key=lambda v: (-gaps[v], v))[:_SHOWN]
        metrics = {
            "value": value,
            "multiplier": multiplier,
            "adjusted": value,
            "values_counted": total,
            "largest_deviations": {
                v: round(observed.get(v, 0.0) - self.expected.get(v, 0.0), 6) for v in worst
            },
            "unexpected_values": sorted(v for v in observed if v not in self.expected)[:_SHOWN],
        }
        return AggregateEvaluationResult(value <= self.max_distance + 1e-12, metrics)

    def details(self, result: AggregateCheckResult) -> str:
        text = super().details(result)
        m = result.metrics
        if result.status == "failed" and m.get("largest_deviations"):
            shifts = ", ".join(f"{v}: {d:+.4f}" for v, d in m["largest_deviations"].items())
            text += f" (largest shifts of share: {shifts})"
        return text

    def metric_label(self) -> str:
        name = "Largest share deviation" if self.distance == "max-deviation" else "Total variation distance"
        return f"{name} of '{self.column}' from the expected distribution"

    def expectation(self) -> str:
        return f"<= {number(self.max_distance)}"


class EntropyCheck(ColumnThreshold, MetricDetails, BaseAggregateCheck):
    """The Shannon entropy (nats) of the distribution of ``column``'s non-NULL values, one job per batch."""

    def metric_label(self) -> str:
        return f"Entropy of '{self.column}'"

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        counts = (
            df.where(col(self.column).isNotNull()).groupBy(col(self.column)).agg(F.count(F.lit(1)).alias("n"))
        )
        row = counts.agg(
            F.sum("n").alias("total"), F.sum(F.col("n") * F.log(F.col("n"))).alias("nlogn")
        ).first()
        total = int(row["total"] or 0) if row is not None else 0
        value = math.log(total) - float(row["nlogn"]) / total if total and row is not None else None
        if value is not None:
            value = max(value, 0.0)  # -0.0 / rounding of a single value
        adjusted = value * multiplier if value is not None else None
        metrics = {"value": value, "multiplier": multiplier, "adjusted": adjusted, "values_counted": total}
        return AggregateEvaluationResult(self.accepts(adjusted), metrics)


#: The set relations of ``distinct-values-check``.
RELATIONS = ("subset-of", "superset-of", "equal-to")


class DistinctValuesCheck(MetricDetails, _ValueCounts, BaseAggregateCheck):
    """The set of ``column``'s distinct non-NULL values (as text) in relation to ``values``.

    NULL semantics: NULLs are not values; an empty batch is a subset of anything and a superset of nothing
    but the empty set.
    """

    def __init__(
        self,
        check_id: str,
        column: str,
        subset_of: list[Any] | None = None,
        superset_of: list[Any] | None = None,
        equal_to: list[Any] | None = None,
        max_values: int = 10_000,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        given = {
            k: v for k, v in zip(RELATIONS, (subset_of, superset_of, equal_to), strict=True) if v is not None
        }
        if len(given) != 1:
            raise ConfigError(
                f"give exactly one of {', '.join(RELATIONS)} (got {', '.join(given) or 'none'})",
                field_path=sorted(given)[1] if len(given) > 1 else None,
            )
        ((self.relation, values),) = given.items()
        self.column = column
        self.values = sorted({_text(v) for v in values})
        self.max_values = int(max_values)

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        seen = set(self.value_counts(df))
        allowed = set(self.values)
        unexpected = sorted(seen - allowed) if self.relation in ("subset-of", "equal-to") else []
        missing = sorted(allowed - seen) if self.relation in ("superset-of", "equal-to") else []
        metrics = {
            "value": len(unexpected) + len(missing),
            "distinct_values": len(seen),
            "unexpected_values": unexpected[: _SHOWN * 4],
            "missing_values": missing[: _SHOWN * 4],
        }
        return AggregateEvaluationResult(not unexpected and not missing, metrics)

    def details(self, result: AggregateCheckResult) -> str:
        m = result.metrics
        if result.status == "skipped" or "distinct_values" not in m:
            return super().details(result)
        parts = []
        if m["unexpected_values"]:
            parts.append(f"unexpected {_shown(m['unexpected_values'])}")
        if m["missing_values"]:
            parts.append(f"missing {_shown(m['missing_values'])}")
        what = "; ".join(parts) if parts else f"{m['distinct_values']} distinct values, as expected"
        return f"Distinct values of '{self.column}' ({self.relation.replace('-', ' ')} the {len(self.values)} given): {what}"


class _CategoricalConfig(BaseAggregateCheckConfig):
    _abstract: ClassVar[bool] = True
    column: str = Field(min_length=1)
    max_values: int = Field(default=10_000, ge=1)


@register_check_config(check_name="in-distribution-check")
class InDistributionCheckConfig(_CategoricalConfig):
    """``{check: in-distribution-check, check-id, column, expected: {value: share}, max-distance,
    distance?: total-variation | max-deviation, max-values?: 10000}``."""

    check_class: ClassVar[type[BaseCheck]] = InDistributionCheck
    expected: dict[str, float] = Field(min_length=1)
    max_distance: float = Field(ge=0.0, le=1.0)
    distance: Distance = "total-variation"

    @field_validator("expected", mode="before")
    @classmethod
    def _keys_as_text(cls, value: Any) -> Any:
        return {_text(k): v for k, v in value.items()} if isinstance(value, Mapping) else value


@register_check_config(check_name="entropy-check")
class EntropyCheckConfig(ComparatorConfig):
    """``{check: entropy-check, check-id, column, <comparator>}``."""

    check_class: ClassVar[type[BaseCheck]] = EntropyCheck
    column: str = Field(min_length=1)


@register_check_config(check_name="distinct-values-check")
class DistinctValuesCheckConfig(_CategoricalConfig):
    """``{check: distinct-values-check, check-id, column, subset-of | superset-of | equal-to: [...]}``."""

    check_class: ClassVar[type[BaseCheck]] = DistinctValuesCheck
    subset_of: list[Any] | None = None
    superset_of: list[Any] | None = None
    equal_to: list[Any] | None = None

    @model_validator(mode="after")
    def _one_relation(self) -> DistinctValuesCheckConfig:
        given = [k for k in ("subset_of", "superset_of", "equal_to") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ConfigError(
                f"give exactly one of {', '.join(RELATIONS)} "
                f"(got {', '.join(g.replace('_', '-') for g in given) or 'none'})",
                field_path=given[1].replace("_", "-") if len(given) > 1 else None,
            )
        return self
