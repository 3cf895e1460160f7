"""The pure decision of an anomaly check: one observed value against the same metric's own history.

Nothing here touches Spark or a table: :func:`pick_baseline` chooses which past windows a window is compared
with (its season), :func:`judge_anomaly` turns the observed value and those values into a verdict with its
expected value, band and score. The accumulator (:mod:`~streaming_dq.metrics.accumulator`) keeps the history
and calls both when a window closes; docs/anomaly.md explains the choices with a worked example.

Bands (``width`` is the number in the config):

* ``relative``: expected = median of the baseline, band = expected +- width x |expected|; score =
  |observed - expected| / |expected|. Easy to explain ("more than 15% off the usual").
* ``stddevs``: expected = mean, band = mean +- width x sample standard deviation; score = the z-score. Sharp
  on well-behaved series, but one old outlier in the baseline widens the band.
* ``mad``: expected = median, band = median +- width x 1.4826 x MAD (the median absolute deviation, scaled to
  estimate the standard deviation of normal data); score = the robust z-score. An outlier in the baseline
  barely moves it.

A spread of 0 (every baseline value equal) makes the band a point: anything else is an anomaly with an
infinite score. ``min_width`` keeps the band at least +- min_width x |expected| wide (a baseline of four
near-equal integer counts has a MAD of 0, and a change of one would be an anomaly): the score is then measured
in that wider unit. All arithmetic is order-independent (the baseline is sorted before use), so the same history
gives the same verdict whatever batches it arrived in.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from streaming_dq.core.modes import BandKind, Direction, Season
from streaming_dq.core.results import AggregateStatus

__all__ = [
    "MAD_SCALE",
    "AnomalyVerdict",
    "BandKind",
    "Direction",
    "HistoryPoint",
    "Season",
    "judge_anomaly",
    "pick_baseline",
    "season_key",
]

#: MAD x 1.4826 estimates the standard deviation of normally distributed values.
MAD_SCALE = 1.4826
#: The columns an anomaly verdict adds to the results and metrics tables (NULL for other checks).


@dataclass(frozen=True)
class HistoryPoint:
    """One closed window of an anomaly check, as later windows see it.

    Attributes:
        start: The window's start (UTC).
        value: Its metric after the profile multiplier (None: undefined or not judged, never in a baseline).
        profiled: Whether a profile's rule applied to the check on the window's date (left out of later
            baselines unless the check includes profiled windows).
    """

    start: datetime
    value: float | None
    profiled: bool = False


@dataclass(frozen=True)
class AnomalyVerdict:
    """The verdict of one observed value against its baseline.

    Attributes:
        status: ``passed`` (inside the band), ``failed`` (outside) or ``skipped`` (``reason`` says why).
        observed: The value judged (after the profile multiplier).
        expected: The baseline's centre (median, or mean for ``stddevs``); None when skipped for lack of it.
        low: The band's lower edge (None: unbounded below, ``direction: above``).
        high: The band's upper edge (None: unbounded above, ``direction: below``).
        score: How far outside the centre, in the band's unit (relative deviation, z or robust z); the band's
            width is the largest passing score.
        history: How many past values the baseline held.
        reason: Why it was skipped, else None.
    """

    status: AggregateStatus
    observed: float | None
    expected: float | None = None
    low: float | None = None
    high: float | None = None
    score: float | None = None
    history: int = 0
    reason: str | None = None


def season_key(start: datetime, season: Season, timezone: str) -> tuple[int, ...]:
    """What a window must share with a past one to be in its baseline: nothing, its local time of day
    (``daily``: 14:00 with the previous days' 14:00), or its weekday and time (``weekly``)."""
    if season == "none":
        return ()
    local = start.astimezone(ZoneInfo(timezone))
    clock = (local.hour, local.minute, local.second)
    return (local.weekday(), *clock) if season == "weekly" else clock


def pick_baseline(
    history: Sequence[HistoryPoint],
    start: datetime,
    *,
    windows: int,
    season: Season,
    timezone: str,
    lookback: timedelta,
    include_profiled: bool = False,
) -> list[float]:
    """The values a window starting at ``start`` is compared with: the ``windows`` most recent earlier ones
    of the same season, no older than ``lookback``, with a value, and not profiled (unless included).

    Example:
        >>> from datetime import UTC
        >>> days = [HistoryPoint(datetime(2025, 1, d, tzinfo=UTC), float(d)) for d in range(1, 29)]
        >>> pick_baseline(days, datetime(2025, 1, 29, tzinfo=UTC), windows=3, season="weekly",
        ...               timezone="UTC", lookback=timedelta(days=90))
        [22.0, 15.0, 8.0]
    """
    key = season_key(start, season, timezone)
    oldest = start - lookback
    out: list[float] = []
    for point in sorted(history, key=lambda p: p.start, reverse=True):
        if len(out) == windows:
            break
        if not oldest <= point.start < start or point.value is None or not math.isfinite(point.value):
            continue
        if point.profiled and not include_profiled:
            continue
        if season_key(point.start, season, timezone) == key:
            out.append(point.value)
    return out


def _relative(values: list[float]) -> tuple[float, float]:
    centre = statistics.median(values)
    return centre, abs(centre)


def _stddevs(values: list[float]) -> tuple[float, float]:
    centre = math.fsum(values) / len(values)
    return centre, statistics.stdev(values) if len(values) > 1 else 0.0


def _mad(values: list[float]) -> tuple[float, float]:
    centre = statistics.median(values)
    return centre, MAD_SCALE * statistics.median(abs(v - centre) for v in values)


#: band kind -> (centre, spread) of the sorted baseline; the band is centre +- width x spread.
_BANDS: dict[str, Callable[[list[float]], tuple[float, float]]] = {
    "relative": _relative,
    "stddevs": _stddevs,
    "mad": _mad,
}


def judge_anomaly(
    observed: float | None,
    baseline: Sequence[float],
    band: BandKind,
    width: float,
    *,
    min_history: int,
    direction: Direction = "both",
    min_width: float = 0.0,
) -> AnomalyVerdict:
    """Judge ``observed`` against ``baseline`` (see the module docs for the bands).

    ``skipped`` with a reason when the metric has no value (e.g. the mean of a window without values) or the
    baseline holds fewer than ``min_history`` values: the check never guesses. ``direction`` ``above`` only
    flags values above the band (a spike), ``below`` only those under it (a drop). ``min_width``: the band is
    at least +- min_width x |expected| wide.

    Example:
        >>> judge_anomaly(130.0, [100.0, 104.0, 96.0, 101.0], "relative", 0.15, min_history=4)
        AnomalyVerdict(status='failed', observed=130.0, expected=100.5, low=85.425, high=115.575, score=0.2935323383084577, history=4, reason=None)
    """
    values = sorted(float(v) for v in baseline)
    if observed is None or not math.isfinite(observed):
        return AnomalyVerdict("skipped", observed, history=len(values), reason="the metric has no value")
    if len(values) < max(min_history, 1):
        return AnomalyVerdict(
            "skipped",
            observed,
            history=len(values),
            reason=f"not enough history: {len(values)} of {max(min_history, 1)} windows",
        )
    centre, spread = _BANDS[band](values)
    half = max(width * spread, min_width * abs(centre))
    unit = half / width if width > 0 and half > 0 else spread  # the score's unit: the band is `width` of them
    score = abs(observed - centre) / unit if unit > 0 else (0.0 if observed == centre else math.inf)
    low = None if direction == "above" else centre - half
    high = None if direction == "below" else centre + half
    inside = (low is None or observed >= low) and (high is None or observed <= high)
    return AnomalyVerdict("passed" if inside else "failed", observed, centre, low, high, score, len(values))
