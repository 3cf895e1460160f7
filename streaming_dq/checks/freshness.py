"""``freshness-check`` (observable: a max state over the column as epoch seconds).

Passes when the newest value of ``column`` is at most ``interval`` ``period``s older than the reference time:
``reference-time`` when given (tests, replays), else the current time in UTC at evaluation. Months and years
are calendar months and years counted back from the reference time, as Spark's ``INTERVAL`` does.

The metric is the age of the newest value in seconds; the profile multiplier scales that age.

NULL semantics: NULLs are ignored; a batch without any value (empty, or all NULL) fails, as nothing shows
the data is fresh. A value that cannot be read as a timestamp is ignored.
"""

from __future__ import annotations

import calendar
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator
from pyspark.sql import functions as F

from streaming_dq.checks.wording import MetricDetails, number
from streaming_dq.core.base_check import BaseCheck, ObservableAggregateCheck
from streaming_dq.core.base_config import BaseAggregateCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.results import AggregateCheckResult, AggregateEvaluationResult
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import quote, try_cast
from streaming_dq.states.spec import StateSpec

FreshnessPeriod = Literal["year", "month", "week", "day", "hour", "minute", "second"]

_SECONDS = {"week": 604800, "day": 86400, "hour": 3600, "minute": 60, "second": 1}


def months_back(moment: datetime, months: int) -> datetime:
    """``moment`` moved back by calendar months (the day clamped to the month's length)."""
    index = moment.year * 12 + moment.month - 1 - months
    year, month = divmod(index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


class FreshnessCheck(MetricDetails, ObservableAggregateCheck):
    """Passes when the newest ``column`` value is no older than ``interval`` ``period``s.

    NULL semantics: NULLs are ignored; no value at all fails.

    Example:
        >>> FreshnessCheck("recent", column="event_time", interval=2, period="hour")  # doctest: +SKIP
    """

    column_kind: ClassVar[str | None] = "temporal"

    def __init__(
        self,
        check_id: str,
        column: str,
        interval: int,
        period: FreshnessPeriod,
        reference_time: datetime | None = None,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.column = column
        self.interval = interval
        self.period = period
        if reference_time is not None and reference_time.tzinfo is None:
            reference_time = reference_time.replace(tzinfo=UTC)
        self.reference_time = reference_time

    def now(self) -> datetime:
        """The reference time: ``reference_time`` or the current UTC time."""
        return self.reference_time or datetime.now(UTC)

    def max_age_seconds(self, now: datetime) -> float:
        """The largest allowed age at ``now``, in seconds."""
        if self.period in _SECONDS:
            return float(self.interval * _SECONDS[self.period])
        months = self.interval * (12 if self.period == "year" else 1)
        return (now - months_back(now, months)).total_seconds()

    def state_specs(self) -> dict[str, StateSpec]:
        epoch = F.unix_micros(try_cast(quote(self.column), "timestamp")) / F.lit(1_000_000.0)
        return {"newest": StateSpec("max", epoch, key=f"epoch-seconds:{self.column}")}

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        newest = states["newest"].extreme
        return None if newest is None else self.now().timestamp() - newest

    def accepts(self, value: float | None) -> bool:
        return value is not None and value <= self.max_age_seconds(self.now())

    def evaluate_states(
        self, states: Mapping[str, Any], *, multiplier: float = 1.0
    ) -> AggregateEvaluationResult:
        now = self.now()
        newest = states["newest"].extreme
        age = None if newest is None else now.timestamp() - newest
        adjusted = None if age is None else age * multiplier
        limit = self.max_age_seconds(now)
        metrics = {
            "value": age,
            "multiplier": multiplier,
            "adjusted": adjusted,
            "max_age_seconds": limit,
            "newest": None if newest is None else datetime.fromtimestamp(newest, UTC).isoformat(),
            "reference_time": now.isoformat(),
        }
        return AggregateEvaluationResult(adjusted is not None and adjusted <= limit, metrics)

    def details(self, result: AggregateCheckResult) -> str:
        m = result.metrics
        if result.status != "skipped" and "newest" in m and m["newest"] is None:
            return f"Column '{self.column}' has no timestamp; expected one at most {self.window()} old"
        return super().details(result)

    def metric_label(self) -> str:
        return f"Age in seconds of the newest '{self.column}'"

    def window(self) -> str:
        """The allowed age in words: ``2 hours``."""
        unit = self.period if self.interval == 1 else f"{self.period}s"
        return f"{number(self.interval)} {unit}"

    def expectation(self) -> str:
        return f"at most {self.window()} ({number(self.max_age_seconds(self.now()))} s)"


@register_check_config(check_name="freshness-check")
class FreshnessCheckConfig(BaseAggregateCheckConfig):
    """``{check: freshness-check, check-id, column, interval, period, reference-time?}``."""

    check_class: ClassVar[type[BaseCheck]] = FreshnessCheck
    column: str = Field(min_length=1)
    interval: int = Field(gt=0)
    period: FreshnessPeriod
    reference_time: datetime | None = None

    @field_validator("period", mode="before")
    @classmethod
    def _singular(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip().lower()
            return text[:-1] if text.endswith("s") and text[:-1] in (*_SECONDS, "year", "month") else text
        return value
