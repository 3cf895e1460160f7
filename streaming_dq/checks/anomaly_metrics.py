"""What an anomaly check measures and how its baseline and band are configured (:mod:`~streaming_dq.checks.anomaly`).

:data:`METRICS` names every metric an ``anomaly-check`` can watch and the threshold check that computes it
from its mergeable states; :func:`metric_name` accepts those checks' names too. ``AnomalyMetric``,
``AnomalyBaseline`` and ``AnomalyBand`` are the ``metric:``, ``baseline:`` and ``band:`` blocks of its config.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from streaming_dq.checks.completeness import CompletenessRatioCheck
from streaming_dq.checks.count import RowCountMinCheck
from streaming_dq.checks.metric import (
    DistinctCountCheck,
    MaxCheck,
    MeanCheck,
    MinCheck,
    NullCountCheck,
    StddevCheck,
    SumCheck,
)
from streaming_dq.core.base_check import ObservableAggregateCheck
from streaming_dq.core.base_config import kebab
from streaming_dq.core.modes import BandKind, Season
from streaming_dq.core.scope import parse_duration
from streaming_dq.core.suggest import did_you_mean
from streaming_dq.exceptions import ConfigError

__all__ = ["METRICS", "AnomalyBand", "AnomalyBaseline", "AnomalyMetric", "metric_name", "metric_source"]

#: metric name -> (the check class that measures it, the threshold its constructor needs but the anomaly
#: check never uses, whether the metric reads a column).
METRICS: dict[str, tuple[type[ObservableAggregateCheck], dict[str, Any], bool]] = {
    "row-count": (RowCountMinCheck, {"min_count": 0}, False),
    "mean": (MeanCheck, {"ge": -math.inf}, True),
    "sum": (SumCheck, {"ge": -math.inf}, True),
    "min": (MinCheck, {"ge": -math.inf}, True),
    "max": (MaxCheck, {"ge": -math.inf}, True),
    "stddev": (StddevCheck, {"ge": -math.inf}, True),
    "null-count": (NullCountCheck, {"ge": 0}, True),
    "distinct-count": (DistinctCountCheck, {"ge": 0}, True),
    "completeness-ratio": (CompletenessRatioCheck, {"min_ratio": 0.0}, True),
}
_ALIASES = {
    **{f"{name}-check": name for name in METRICS},
    **{f"row-count-{k}-check": "row-count" for k in ("min", "max", "between", "exact")},
}


def metric_name(name: str) -> str:
    """The canonical metric name of ``name`` (``mean-check`` -> ``mean``).

    Raises:
        ConfigError: an unknown metric, with close matches.
    """
    key = name.strip().lower()
    if key in METRICS:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    hint = did_you_mean(key, [*METRICS, *_ALIASES])
    raise ConfigError(f"unknown metric {name!r}{hint} (metrics: {', '.join(METRICS)})")


def metric_source(check_id: str, metric: str, column: str | None) -> ObservableAggregateCheck:
    """The check whose states and ``metric_value`` the anomaly check uses (its threshold is never applied)."""
    name = metric_name(metric)
    klass, unused_threshold, needs_column = METRICS[name]
    if needs_column and not column:
        raise ConfigError(f"metric {name!r} needs a column", field_path="metric.column")
    if not needs_column and column:
        raise ConfigError(f"metric {name!r} counts rows: it takes no column", field_path="metric.column")
    args: dict[str, Any] = {"column": column} if needs_column else {}
    return klass(check_id, **args, **unused_threshold)


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=kebab, populate_by_name=True, extra="forbid", frozen=True)


class AnomalyMetric(_Model):
    """``metric: {check: row-count | mean | sum | ..., column: amount}``."""

    check: str = Field(description="The metric: row-count, mean, sum, min, max, stddev, null-count, ...")
    column: str | None = None

    @field_validator("check")
    @classmethod
    def _known(cls, value: str) -> str:
        return metric_name(value)

    @model_validator(mode="after")
    def _column(self) -> AnomalyMetric:
        needs = METRICS[self.check][2]
        if needs and not self.column:
            raise ConfigError(f"metric {self.check!r} needs a column", field_path="column")
        if not needs and self.column:
            raise ConfigError(f"metric {self.check!r} counts rows: it takes no column", field_path="column")
        return self


class AnomalyBaseline(_Model):
    """``baseline: {windows: 4, season: none | daily | weekly, lookback: '90 days'}``, or ``{batches: 20}`` for
    a check without a window scope (a batch against the last 20 committed batches)."""

    @model_validator(mode="after")
    def _windows_or_batches(self) -> AnomalyBaseline:
        if self.batches is not None and self.model_fields_set & {"windows", "season", "lookback"}:
            raise ConfigError(
                "give batches (a batch-scoped check) or windows/season/lookback, not both",
                field_path="batches",
            )
        return self

    windows: int = Field(default=4, ge=1, le=1000)
    batches: int | None = Field(default=None, ge=1, le=10000, description="Batch-scoped: the last N batches.")
    season: Season = "none"
    lookback: str | None = Field(
        default=None, description="How far back a baseline may reach, e.g. '90 days'."
    )

    @field_validator("lookback")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None:
            parse_duration(value)
        return value


class AnomalyBand(_Model):
    """``band: {relative: 0.15} | {stddevs: 3} | {mad: 3.5}``: exactly one; ``min-width: 0.05`` keeps the band
    at least +- 5% of the expected value wide."""

    relative: float | None = Field(default=None, ge=0)
    stddevs: float | None = Field(default=None, ge=0)
    mad: float | None = Field(default=None, ge=0)
    min_width: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _one(self) -> AnomalyBand:
        given = [k for k in ("relative", "stddevs", "mad") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ConfigError(
                f"give exactly one band of relative, stddevs, mad (got {', '.join(given) or 'none'})",
                field_path=given[1] if len(given) > 1 else None,
            )
        return self

    @property
    def kind(self) -> BandKind:
        kind: BandKind = (
            "relative" if self.relative is not None else "stddevs" if self.stddevs is not None else "mad"
        )
        return kind

    @property
    def width(self) -> float:
        value = getattr(self, self.kind)
        assert value is not None
        return float(value)
