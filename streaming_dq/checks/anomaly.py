"""Anomaly checks: a window's metric judged against the same metric's own past windows.

``{check: anomaly-check, check-id: daily-orders, metric: {check: row-count}, scope: {window: 1 day},
baseline: {windows: 4, season: weekly}, band: {mad: 3.5}, min-history: 4, severity: warning}``

* ``metric``: any observable metric: ``row-count``, ``mean``, ``sum``, ``min``, ``max``, ``stddev``,
  ``null-count``, ``distinct-count``, ``completeness-ratio`` (the last six with ``column``). The names of the
  threshold checks that measure them are accepted too (``row-count-min-check``, ``mean-check`` ...): the
  metric is exactly the one that check computes, from the same mergeable states, in the batch's one pass.
* ``scope: {window: ...}``: the check judges event-time windows, each ONCE when the watermark closes it
  (``late-data``, ``allowed-lateness`` as for every window check), under the profiles of its date. Without a
  scope, ``baseline: {batches: N}`` judges each micro-batch against the last N committed batches (the gate
  keeps them and reads them back from its results table after a restart; batches a profile applied to are
  left out).
* ``baseline``: the ``windows`` most recent earlier windows of the same ``season`` (``none``: the previous
  windows; ``daily``: the same time on previous days, for windows under a day; ``weekly``: the same weekday
  and time) within ``lookback`` (default: 3 x windows seasons). Windows a profile applied to are left out of
  later baselines unless the profile's rule says ``keep-in-baseline: true`` (so Christmas does not poison
  January); so are windows without a value.
* ``band``: exactly one of ``relative: r`` (median +- r x |median|), ``stddevs: k`` (mean +- k x stddev) or
  ``mad: k`` (median +- k x 1.4826 x MAD), and ``min-width: m`` (the band at least +- m x |expected| wide:
  a few near-equal counts have a spread of 0); ``direction``: ``both`` (default), ``above`` or ``below``.
* ``min-history`` (default: ``baseline.windows``): fewer baseline values and the window is ``skipped`` with
  the reason "not enough history" -- never a guess.

A profile's ``metric-multiplier`` scales the observed value before the comparison (and that scaled value is
what later baselines see); ``disable`` skips the window; a ``severity`` rule downgrades it. The verdict carries
observed value, expected value, band and score (:mod:`streaming_dq.metrics.baseline`).

NULL semantics: those of the metric (NULLs are left out of means and sums, counted by ``null-count``). A
window whose metric has no value (the mean of a window without values) is skipped with that reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, ClassVar

from pydantic import Field, model_validator

from streaming_dq.checks.anomaly_metrics import (
    METRICS,
    AnomalyBand,
    AnomalyBaseline,
    AnomalyMetric,
    metric_name,
    metric_source,
)
from streaming_dq.checks.wording import number
from streaming_dq.core.base_check import BaseCheck, ObservableAggregateCheck
from streaming_dq.core.base_config import BaseAggregateCheckConfig
from streaming_dq.core.history import batch_history
from streaming_dq.core.modes import BandKind, Direction, Season
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.results import AggregateCheckResult, AggregateEvaluationResult
from streaming_dq.core.scope import parse_duration
from streaming_dq.core.severity import Severity
from streaming_dq.exceptions import ConfigError, InternalError
from streaming_dq.metrics.baseline import AnomalyVerdict, HistoryPoint, judge_anomaly, pick_baseline
from streaming_dq.states.spec import StateSpec

__all__ = ["METRICS", "AnomalyCheck", "AnomalyCheckConfig", "metric_source", "verdict_fields"]

_SEASON_PERIODS = {"daily": timedelta(days=1), "weekly": timedelta(days=7)}


def verdict_fields(verdict: AnomalyVerdict) -> dict[str, Any]:
    """The verdict's values as the outcome fields and table columns call them (without ``_value``)."""
    return {
        "expected": verdict.expected, "band_low": verdict.low, "band_high": verdict.high,
        "score": verdict.score, "history": verdict.history, "reason": verdict.reason,
    }  # fmt: skip


class AnomalyCheck(ObservableAggregateCheck):
    """A window-scoped metric judged against its own history (see the module docs).

    Example:
        >>> from streaming_dq.core.scope import WindowScope
        >>> check = AnomalyCheck("daily-orders", metric="row-count", scope=WindowScope(window="1 day"),
        ...                      windows=4, season="weekly", band="mad", width=3.5)
        >>> check.judge(150.0, [], datetime(2025, 3, 6), timezone="UTC").reason
        'not enough history: 0 of 4 windows'
    """

    def __init__(
        self,
        check_id: str,
        metric: str,
        column: str | None = None,
        *,
        windows: int = 4,
        season: Season = "none",
        band: BandKind = "relative",
        width: float = 0.15,
        min_width: float = 0.0,
        min_history: int | None = None,
        direction: Direction = "both",
        lookback: timedelta | None = None,
        batches: int | None = None,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        if (self.scope is None) == (batches is None):
            raise ConfigError(
                f"check {check_id!r}: an anomaly check judges event-time windows (scope: {{window: 1 day}}) "
                "or batches (baseline: {batches: 20}): give exactly one",
                field_path="scope",
            )
        self.source = metric_source(check_id, metric, column)
        self.metric = metric_name(metric)
        self.column = column
        self.column_kind = type(self.source).column_kind  # type: ignore[misc]
        #: Batch-scoped: the last ``batches`` committed batches' values are the baseline (set by the gate).
        self.batches = batches
        if batches is not None:
            windows = batches
            if season != "none":
                raise ConfigError(
                    "baseline.season applies to windows, not batches", field_path="baseline.season"
                )
        if windows < 1:
            raise ConfigError("baseline.windows must be at least 1", field_path="baseline.windows")
        if season not in ("none", "daily", "weekly"):
            raise ConfigError(f"must be none, daily or weekly, got {season!r}", field_path="baseline.season")
        if self.scope is not None:
            self._check_season(season)
        if not math.isfinite(width) or width < 0:
            raise ConfigError(f"band width must be a finite number >= 0, got {width!r}", field_path="band")
        if not math.isfinite(min_width) or min_width < 0:
            raise ConfigError(
                f"band min-width must be a finite number >= 0, got {min_width!r}", field_path="band"
            )
        self.windows, self.season, self.band, self.width = windows, season, band, float(width)
        self.min_width = float(min_width)
        self.min_history = windows if min_history is None else min_history
        if not 1 <= self.min_history <= windows:
            raise ConfigError(
                f"min-history must be between 1 and the baseline's size ({windows}), got {self.min_history}",
                field_path="min-history",
            )
        self.direction = direction
        size = self.scope.size if self.scope is not None else timedelta(0)
        period = _SEASON_PERIODS.get(season, size)
        self.lookback = lookback if lookback is not None else 3 * windows * period
        if self.scope is not None and self.lookback < windows * period:
            raise ConfigError(
                f"baseline.lookback must reach {windows} {'seasons' if season != 'none' else 'windows'} back",
                field_path="baseline.lookback",
            )

    def _check_season(self, season: str) -> None:
        assert self.scope is not None
        size = self.scope.size
        if season == "daily" and size >= timedelta(days=1):
            raise ConfigError(
                f"season daily compares windows shorter than a day with the same time on earlier days; "
                f"the window is {self.scope.window}",
                field_path="baseline.season",
            )
        if season == "weekly" and size > timedelta(days=1):
            raise ConfigError(
                f"season weekly compares a weekday with earlier ones: the window ({self.scope.window}) must be "
                "a day or shorter",
                field_path="baseline.season",
            )

    def _parameters(self) -> dict[str, Any]:
        params = super()._parameters()
        params["lookback"] = f"{self.lookback.total_seconds() / 86400:g} days"
        return params

    def state_specs(self) -> dict[str, StateSpec]:
        return self.source.state_specs()

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        return self.source.metric_value(states)

    def accepts(self, value: float | None) -> bool:
        raise InternalError(f"anomaly check {self.check_id!r} is judged against its history, not a threshold")

    def evaluate_states(
        self, states: Mapping[str, Any], *, multiplier: float = 1.0
    ) -> AggregateEvaluationResult:
        """A batch-scoped check's verdict: this batch's metric (times ``multiplier``) against
        the committed batches before this one (:func:`~streaming_dq.core.history.batch_history`: the gate
        passes them to the run)."""
        if self.batches is None:
            raise InternalError(f"anomaly check {self.check_id!r} is judged per window, by the accumulator")
        raw = self.metric_value(states)
        adjusted = raw * multiplier if raw is not None and not math.isnan(raw) else raw
        verdict = judge_anomaly(
            adjusted,
            batch_history(self.check_id)[-self.windows :],
            self.band,
            self.width,
            min_history=self.min_history,
            direction=self.direction,
            min_width=self.min_width,
        )
        metrics = {"value": raw, "multiplier": multiplier, "adjusted": adjusted, **verdict_fields(verdict)}
        return AggregateEvaluationResult(verdict.status != "failed", metrics)

    def wrap(self, outcome: AggregateEvaluationResult, **kw: Any) -> AggregateCheckResult:
        """``skipped`` (with the reason in the metrics) when there was not enough history to judge."""
        wrapped = super().wrap(outcome, **kw)
        return replace(wrapped, status="skipped") if outcome.metrics.get("reason") else wrapped

    def judge(
        self, observed: float | None, history: Sequence[HistoryPoint], start: datetime, *, timezone: str
    ) -> AnomalyVerdict:
        """The verdict of the window starting at ``start`` (UTC) with ``observed`` (after the multiplier)."""
        baseline = pick_baseline(
            history,
            start,
            windows=self.windows,
            season=self.season,
            timezone=timezone,
            lookback=self.lookback,
        )
        return judge_anomaly(
            observed,
            baseline,
            self.band,
            self.width,
            min_history=self.min_history,
            direction=self.direction,
            min_width=self.min_width,
        )

    def details(self, result: AggregateCheckResult) -> str:
        m = result.metrics
        if m.get("reason"):
            return f"{self.metric_label()} is {number(m.get('adjusted'))}; skipped: {m['reason']}"
        if m.get("expected") is None:
            return super().details(result)
        low = "-inf" if m.get("band_low") is None else number(m["band_low"])
        high = "inf" if m.get("band_high") is None else number(m["band_high"])
        return (
            f"{self.metric_label()} is {number(m.get('adjusted'))}; expected {number(m['expected'])} in "
            f"[{low}, {high}] over the last {m.get('history')} batches (score {number(m.get('score'))})"
        )

    def metric_label(self) -> str:
        return self.metric.replace("-", " ").capitalize() + (f" of '{self.column}'" if self.column else "")


# -- config ---------------------------------------------------------------------------------------------------


@register_check_config(check_name="anomaly-check")
class AnomalyCheckConfig(BaseAggregateCheckConfig):
    """``{check: anomaly-check, check-id, metric: {...}, scope: {window: ...}, baseline: {...}, band: {...},
    min-history, direction}``."""

    check_class: ClassVar[type[BaseCheck]] = AnomalyCheck
    metric: AnomalyMetric
    baseline: AnomalyBaseline = AnomalyBaseline()
    band: AnomalyBand = AnomalyBand(relative=0.15)
    min_history: int | None = Field(default=None, ge=1)
    direction: Direction = "both"

    @model_validator(mode="after")
    def _window_or_batches(self) -> AnomalyCheckConfig:
        if self.scope is None and self.baseline.batches is None:
            raise ConfigError(
                "an anomaly check judges event-time windows (scope: {window: 1 day}) or batches "
                "(baseline: {batches: 20}): give one",
                field_path="scope",
            )
        if self.scope is not None and self.baseline.batches is not None:
            raise ConfigError(
                "baseline.batches is for a check without a window scope; windows: N for windows",
                field_path="baseline.batches",
            )
        return self

    def check_parameters(self) -> dict[str, Any]:
        return {
            "check_id": self.check_id,
            "severity": self.severity,
            "tags": self.tags,
            "group": self.group,
            "scope": self.scope,
            "metric": self.metric.check,
            "column": self.metric.column,
            "windows": self.baseline.windows,
            "batches": self.baseline.batches,
            "season": self.baseline.season,
            "lookback": parse_duration(self.baseline.lookback) if self.baseline.lookback else None,
            "band": self.band.kind,
            "width": self.band.width,
            "min_width": self.band.min_width,
            "min_history": self.min_history,
            "direction": self.direction,
        }
