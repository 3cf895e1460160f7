"""``window-gaps-check``: time windows without a row between windows that have rows, within a batch.

The values of ``column`` (a date or timestamp) are bucketed on a fixed grid of ``window`` (``15 minutes``,
``1 day``) aligned to the UTC epoch; whenever the next window holding a row starts more than one window
later, the gap is reported on every row of the last window before it (a missing window has no row of its
own). With ``trailing: true`` the last window is also reported when it ends more than one window before now.
With ``group-by`` each group is its own series. Like DQX's ``has_no_gaps_per_time_window``, it sees one
micro-batch at a time: gaps across batches are the business of a window-scoped ``row-count-min-check``.

Cost: the distinct windows (per group) are computed with one aggregation and a ``lead`` over them, joined
back to the rows; no Python per row.

NULL semantics: a NULL ``column`` is not applicable and passes.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from streaming_dq.checks.wording import violations_sentence
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.scope import parse_duration
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col
from streaming_dq.exceptions import ConfigError


class WindowGapsCheck(BaseRowCheck):
    """Fails the rows of the last window before a gap (see the module docstring)."""

    column_kind: ClassVar[str | None] = "temporal"

    def __init__(
        self,
        check_id: str,
        column: str,
        window: str,
        group_by: list[str] | None = None,
        trailing: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        try:
            size = parse_duration(window)
        except ConfigError as exc:
            raise ConfigError(exc.reason, field_path="window") from None
        if size.total_seconds() <= 0:
            raise ConfigError("window must be longer than 0 seconds", field_path="window")
        self.column = column
        self.window = window
        self.group_by = list(group_by or [])
        self.trailing = trailing
        self._size_us = int(size.total_seconds() * 1_000_000)

    @property
    def columns(self) -> list[str]:  # every column the data must have
        return [self.column, *self.group_by]

    def _bucket(self, value: Column) -> Column:
        return F.floor(F.unix_micros(value.cast("timestamp")) / F.lit(self._size_us))

    def validate(self, df: DataFrame, column: str | None = None) -> DataFrame:
        tag = f"__dq_gap_{abs(hash(self.check_id)) % 10**8}"
        bucket, keys = f"{tag}_b", [f"{tag}_g{i}" for i in range(len(self.group_by))]
        present = (
            df.where(col(self.column).isNotNull() & self.applies())
            .select(
                *[col(g).alias(k) for g, k in zip(self.group_by, keys, strict=True)],
                self._bucket(col(self.column)).alias(bucket),
            )
            .distinct()
        )
        order = Window.partitionBy(*[F.col(k) for k in keys]).orderBy(F.col(bucket))
        following = F.lead(F.col(bucket)).over(order)
        gap = F.coalesce(following - F.col(bucket) > 1, F.lit(False))
        if self.trailing:
            now = self._bucket(F.current_timestamp())
            gap = gap | (following.isNull() & (now - F.col(bucket) > 1))
        flagged = present.select(*keys, F.col(bucket), gap.alias(f"{tag}_gap"))
        on = [self._bucket(col(self.column)) == F.col(bucket)]
        on += [col(g).eqNullSafe(F.col(k)) for g, k in zip(self.group_by, keys, strict=True)]
        joined = df.join(flagged, on=on, how="left")
        verdict = col(self.column).isNotNull() & F.coalesce(F.col(f"{tag}_gap"), F.lit(False))
        return joined.withColumn(column or self.result_column, self.filtered(verdict)).drop(
            bucket, *keys, f"{tag}_gap"
        )

    def violation_details(self, violations: int, total: int) -> str:
        return violations_sentence(
            [self.column],
            violations,
            total,
            f"row just before an empty {self.window} window",
            f"rows just before an empty {self.window} window",
        )


@register_check_config(check_name="window-gaps-check")
class WindowGapsCheckConfig(BaseRowCheckConfig):
    """``{check: window-gaps-check, check-id, column, window: 1 hour, group-by?: [...], trailing?: false}``."""

    check_class: ClassVar[type[BaseCheck]] = WindowGapsCheck
    column: str = Field(min_length=1)
    window: str = Field(min_length=1)
    group_by: list[str] | None = None
    trailing: bool = False
