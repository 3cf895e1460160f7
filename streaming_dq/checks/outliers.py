"""Outliers of a batch: ``mad-outlier-check`` (robust) and ``zscore-outlier-check`` (classic).

``mad-outlier-check``: values far from the batch's median, measured in median absolute deviations.

A value fails when ``|value - median| > k * MAD``, with the median and the MAD (the median of
``|value - median|``) of the batch's non-NULL values (of the rows the check's ``filter`` selects). Robust
where a mean and a standard deviation are not: one wild value moves neither. ``k`` is 3.5 by default (the
common choice, and DQX's ``has_no_outliers``). With ``scale: true`` the MAD is multiplied by 1.4826 first,
which makes ``k`` comparable with a number of standard deviations on normal data.

The medians are exact (Spark's ``median``, interpolating) and computed in the batch's plan, lazily, as two
aggregations joined back to the rows (a classic cost: two more aggregations over the batch, no per-row
Python). A batch whose MAD is 0 (more than half the values equal) flags every value that differs from the
median; a batch without values flags nothing.

``zscore-outlier-check``: a value fails when ``|value - mean| > k * stddev`` (sample standard deviation,
``k`` 3 by default) over the batch's non-NULL values: one global aggregation joined back. One wild value in a
small batch inflates the stddev that judges it (use the MAD check where that matters); a batch of fewer than
two values, or of one repeated value, flags nothing.

NULL semantics: a NULL value is not applicable and passes unless ``treat-null-as-failure: true``. NaN is left
out of the statistics and fails as an outlier (it is no number).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.wording import number, violations_sentence
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col
from streaming_dq.exceptions import ConfigError

#: MAD x 1.4826 estimates the standard deviation of normally distributed values.
MAD_TO_SIGMA = 1.4826


class _OutlierCheck(BaseRowCheck):
    """A numeric ``column`` judged against a spread of the batch, ``k`` spreads wide."""

    column_kind: ClassVar[str | None] = "numeric"

    def __init__(
        self,
        check_id: str,
        column: str,
        k: float,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        if k <= 0:
            raise ConfigError("k must be above 0", field_path="k")
        self.column = column
        self.k = float(k)
        self.treat_null_as_failure = treat_null_as_failure


class MadOutlierCheck(_OutlierCheck):
    """Fails a row whose ``column`` lies more than ``k`` MADs from the batch's median."""

    def __init__(self, check_id: str, column: str, k: float = 3.5, scale: bool = False, **kw: Any) -> None:
        super().__init__(check_id, column, k, **kw)
        self.scale = scale

    def validate(self, df: DataFrame, column: str | None = None) -> DataFrame:
        value = col(self.column).cast("double")
        judged = F.when(self.applies(), value)  # rows outside the filter do not shape the median
        m, mad = f"__dq_m_{self.check_id}", f"__dq_mad_{self.check_id}"
        median = df.agg(F.median(judged).alias(m))
        spread = df.crossJoin(median).agg(
            F.first(F.col(m)).alias(m), F.median(F.abs(judged - F.col(m))).alias(mad)
        )
        joined = df.crossJoin(spread)
        width = F.lit(self.k) * F.col(mad) * (MAD_TO_SIGMA if self.scale else 1.0)
        far = F.abs(value - F.col(m)) > width
        verdict = F.when(value.isNull(), F.lit(self.treat_null_as_failure)).otherwise(
            F.coalesce(far, F.lit(False))
        )
        return joined.withColumn(column or self.result_column, self.filtered(verdict)).drop(m, mad)

    def violation_details(self, violations: int, total: int) -> str:
        unit = "scaled MADs" if self.scale else "MADs"
        return violations_sentence(
            [self.column],
            violations,
            total,
            f"value more than {number(self.k)} {unit} from the median",
            f"values more than {number(self.k)} {unit} from the median",
        )


@register_check_config(check_name="mad-outlier-check")
class MadOutlierCheckConfig(BaseRowCheckConfig):
    """``{check: mad-outlier-check, check-id, column, k?: 3.5, scale?: false, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = MadOutlierCheck
    column: str = Field(min_length=1)
    k: float = Field(default=3.5, gt=0)
    scale: bool = False
    treat_null_as_failure: bool = False


class ZScoreOutlierCheck(_OutlierCheck):
    """Fails a row whose ``column`` lies more than ``k`` sample standard deviations from the batch's mean."""

    def __init__(self, check_id: str, column: str, k: float = 3.0, **kw: Any) -> None:
        super().__init__(check_id, column, k, **kw)

    def validate(self, df: DataFrame, column: str | None = None) -> DataFrame:
        value = col(self.column).cast("double")
        judged = F.when(self.applies() & ~F.isnan(value), value)
        m, sd = f"__dq_zm_{self.check_id}", f"__dq_zsd_{self.check_id}"
        joined = df.crossJoin(df.agg(F.avg(judged).alias(m), F.stddev_samp(judged).alias(sd)))
        far = F.isnan(value) | (F.abs(value - F.col(m)) > F.lit(self.k) * F.col(sd))
        verdict = F.when(value.isNull(), F.lit(self.treat_null_as_failure)).otherwise(
            F.coalesce(far, F.lit(False))
        )
        return joined.withColumn(column or self.result_column, self.filtered(verdict)).drop(m, sd)

    def violation_details(self, violations: int, total: int) -> str:
        what = f"more than {number(self.k)} standard deviations from the mean"
        return violations_sentence([self.column], violations, total, f"value {what}", f"values {what}")


@register_check_config(check_name="zscore-outlier-check")
class ZScoreOutlierCheckConfig(BaseRowCheckConfig):
    """``{check: zscore-outlier-check, check-id, column, k?: 3, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = ZScoreOutlierCheck
    column: str = Field(min_length=1)
    k: float = Field(default=3.0, gt=0)
    treat_null_as_failure: bool = False
