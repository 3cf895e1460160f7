"""Anomaly checks: the pure decision (bands, seasons, history) and the accumulator judging a generated year."""

from __future__ import annotations

import math
import statistics
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.anomaly import (
    CHECK_ID,
    anomaly_check,
    batches,
    generate_year,
    holiday_profile,
    run_year,
    score,
)
from streaming_dq.checks.anomaly import AnomalyCheck
from streaming_dq.config.check_set import CheckSet
from streaming_dq.core.scope import WindowScope
from streaming_dq.exceptions import ConfigError
from streaming_dq.metrics.accumulator import WindowAccumulator
from streaming_dq.metrics.baseline import MAD_SCALE, HistoryPoint, judge_anomaly, pick_baseline
from streaming_dq.metrics.calendar import UTC_MICROS, max_event_time
from streaming_dq.metrics.store import batch_records
from streaming_dq.metrics.window_states import EVENT_TIME_COLUMN, batch_window_states
from streaming_dq.profiles import HolidayProfile, check_id
from streaming_dq.profiles.rules import Rule
from streaming_dq.profiles.selectors import CheckIdSelector

BASELINE = [100.0, 104.0, 96.0, 101.0]


def test_each_band_is_its_formula_on_a_known_baseline() -> None:
    relative = judge_anomaly(130.0, BASELINE, "relative", 0.15, min_history=4)
    assert relative.status == "failed" and relative.expected == 100.5
    assert (relative.low, relative.high) == pytest.approx((100.5 * 0.85, 100.5 * 1.15))
    assert relative.score == pytest.approx(29.5 / 100.5)

    mean, sd = statistics.mean(BASELINE), statistics.stdev(BASELINE)
    z = judge_anomaly(106.0, BASELINE, "stddevs", 3, min_history=4)
    assert z.status == "passed" and z.expected == pytest.approx(mean)
    assert (z.low, z.high) == pytest.approx((mean - 3 * sd, mean + 3 * sd))
    assert z.score == pytest.approx((106.0 - mean) / sd)

    mad = MAD_SCALE * statistics.median(abs(v - 100.5) for v in BASELINE)
    robust = judge_anomaly(92.0, BASELINE, "mad", 3.5, min_history=4)
    assert robust.expected == 100.5 and robust.score == pytest.approx(8.5 / mad)
    assert robust.status == ("failed" if 3.5 * mad < 8.5 else "passed")
    assert robust.history == 4 and robust.reason is None


def test_no_history_or_no_value_is_skipped_with_its_reason_never_a_guess() -> None:
    few = judge_anomaly(100.0, [99.0, 101.0], "relative", 0.1, min_history=4)
    assert (few.status, few.reason, few.expected) == ("skipped", "not enough history: 2 of 4 windows", None)
    assert judge_anomaly(None, BASELINE, "mad", 3, min_history=1).reason == "the metric has no value"
    assert judge_anomaly(math.nan, BASELINE, "mad", 3, min_history=1).status == "skipped"


def test_a_baseline_without_spread_is_a_point_band_unless_min_width_widens_it() -> None:
    same = [50.0, 50.0, 50.0, 50.0]
    assert judge_anomaly(50.0, same, "mad", 3, min_history=4).status == "passed"
    off = judge_anomaly(51.0, same, "mad", 3, min_history=4)
    assert off.status == "failed" and off.score == math.inf and off.low == off.high == 50.0
    floored = judge_anomaly(51.0, same, "mad", 3, min_history=4, min_width=0.05)
    assert floored.status == "passed" and (floored.low, floored.high) == (47.5, 52.5)
    assert floored.score == pytest.approx(1 / (2.5 / 3))  # in units of the widened spread


def test_direction_bounds_one_side_only() -> None:
    spike, drop = 140.0, 60.0
    above = [
        judge_anomaly(v, BASELINE, "relative", 0.15, min_history=4, direction="above") for v in (spike, drop)
    ]
    below = [
        judge_anomaly(v, BASELINE, "relative", 0.15, min_history=4, direction="below") for v in (spike, drop)
    ]
    assert [v.status for v in above] == ["failed", "passed"] and above[0].low is None
    assert [v.status for v in below] == ["passed", "failed"] and below[0].high is None


values = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(values, min_size=1, max_size=12),
    values,
    st.sampled_from(["relative", "stddevs", "mad"]),
    st.floats(0, 10),
    st.randoms(use_true_random=False),
)
def test_verdicts_ignore_the_baselines_order_and_a_wider_band_never_fails_more(
    baseline: list[float], observed: float, band: Any, width: float, rng: Any
) -> None:
    verdict = judge_anomaly(observed, baseline, band, width, min_history=1)
    shuffled = list(baseline)
    rng.shuffle(shuffled)
    assert judge_anomaly(observed, shuffled, band, width, min_history=1) == verdict
    assert judge_anomaly(verdict.expected, baseline, band, width, min_history=1).status == "passed"
    if verdict.status == "passed":
        assert judge_anomaly(observed, baseline, band, width * 2 + 1, min_history=1).status == "passed"
    assert verdict.low is not None and verdict.high is not None and verdict.low <= verdict.high


def days(first: date, n: int, value: float = 1.0) -> list[HistoryPoint]:
    return [
        HistoryPoint(datetime(first.year, first.month, first.day, tzinfo=UTC) + timedelta(days=i), value + i)
        for i in range(n)
    ]


def test_seasons_pick_the_same_weekday_or_hour_and_skip_profiled_windows() -> None:
    history = days(date(2025, 3, 3), 28)  # Mon 3 March .. Sun 30 March: value = 1 + day index
    thursday = datetime(2025, 3, 27, tzinfo=UTC)
    picked = pick_baseline(
        history, thursday, windows=3, season="weekly", timezone="UTC", lookback=timedelta(days=90)
    )
    assert picked == [18.0, 11.0, 4.0]  # Thursdays 20, 13 and 6 March; never the day itself or a later one
    assert pick_baseline(
        history, thursday, windows=3, season="none", timezone="UTC", lookback=timedelta(days=90)
    ) == [24.0, 23.0, 22.0]
    assert pick_baseline(
        history, thursday, windows=3, season="weekly", timezone="UTC", lookback=timedelta(days=14)
    ) == [18.0, 11.0]
    marked = [HistoryPoint(p.start, p.value, profiled=p.start.day == 20) for p in history]
    assert pick_baseline(
        marked, thursday, windows=3, season="weekly", timezone="UTC", lookback=timedelta(days=90)
    ) == [11.0, 4.0]

    berlin = ZoneInfo("Europe/Berlin")  # 14:00 local on both sides of the switch to summer time (30 March)
    hours = [
        HistoryPoint(datetime(2025, 3, d, h, tzinfo=berlin).astimezone(UTC), float(d * 100 + h))
        for d in range(27, 31)
        for h in range(24)
    ]
    at_two = datetime(2025, 3, 31, 14, tzinfo=berlin).astimezone(UTC)
    assert pick_baseline(
        hours, at_two, windows=4, season="daily", timezone="Europe/Berlin", lookback=timedelta(days=30)
    ) == [3014.0, 2914.0, 2814.0, 2714.0]


def test_a_generated_year_flags_exactly_the_planted_days_once_the_holidays_are_excused() -> None:
    year = generate_year(1)
    excused = run_year(year, anomaly_check("relative", 0.2), profiles=holiday_profile())
    flagged = {d for d, w in excused.items() if w.status == "failed"}
    assert flagged == year.planted and len(flagged) == 12
    assert all(excused[d].status == "skipped" for d in year.holidays)
    first_weeks = [
        w for d, w in excused.items() if d < year.start + timedelta(days=28) and d not in year.holidays
    ]
    assert first_weeks and all(w.reason and w.reason.startswith("not enough history") for w in first_weeks)

    plain = run_year(year, anomaly_check("relative", 0.2))
    flagged_plain = {d for d, w in plain.items() if w.status == "failed"}
    assert (
        year.planted <= flagged_plain and len(flagged_plain & year.holidays) >= 8
    )  # holidays look anomalous
    assert score(year, plain)["precision"] < 1.0 == score(year, excused)["precision"]


def test_the_verdicts_are_the_same_whatever_the_batch_size() -> None:
    year = generate_year(2, days=120)
    check = anomaly_check("mad", 3.5, min_width=0.1)
    by_week = run_year(year, check, profiles=holiday_profile(), days_per_batch=7)
    assert run_year(year, check, profiles=holiday_profile(), days_per_batch=1) == by_week
    assert run_year(year, check, profiles=holiday_profile(), days_per_batch=30) == by_week


def test_a_restart_mid_year_rebuilds_the_history_from_the_metrics_rows_and_changes_no_verdict() -> None:
    year = generate_year(3, days=150)
    profiles = holiday_profile()
    check = anomaly_check("stddevs", 3, min_width=0.1)
    reference = run_year(year, check, profiles=profiles)

    log: list[dict[str, Any]] = []
    verdicts = {}
    acc = WindowAccumulator("bench", [check], profiles=profiles, timezone="UTC")
    for batch_id, times in enumerate(batches(year, 7)):
        if batch_id == 11:  # a new process: everything it knows comes from the metrics rows
            acc = WindowAccumulator("bench", [check], profiles=profiles, timezone="UTC")
            acc.restore(log)
            assert len(acc.history[CHECK_ID]) >= 28
        table = pa.table({EVENT_TIME_COLUMN: pa.array(times, UTC_MICROS)})
        states = batch_window_states([check], table, timezone="UTC")
        update = acc.update(batch_id, states, max_event_time(table.column(EVENT_TIME_COLUMN)))
        verdicts.update({w.window_start.date(): w for w in update.closed})
        log += batch_records(gate="bench", app_id="bench-q", batch_id=batch_id, update=update).to_pylist()
    assert verdicts == reference
    restarted_on = year.start + timedelta(days=7 * 11)
    assert any(w.status == "failed" for d, w in verdicts.items() if d >= restarted_on)  # judged after it too


def test_a_profiled_window_is_scaled_judged_and_left_out_of_later_baselines_unless_its_rule_keeps_it() -> (
    None
):
    year = generate_year(4, days=70)
    fridays = sorted(d for d in year.counts if d.weekday() == 4)
    friday = fridays[-2]  # one Friday after it to see the baseline it leaves behind
    count = year.counts[friday]

    def on_friday(rule: Rule) -> dict[date, Any]:
        return run_year(
            year, anomaly_check("relative", 0.2), profiles=[HolidayProfile("Promo", friday, friday, [rule])]
        )

    doubled = on_friday(check_id(CHECK_ID).set(metric_multiplier=2.0))
    promo, after = doubled[friday], doubled[fridays[-1]]
    assert (promo.adjusted_value, promo.raw_value, promo.status) == (2 * count, count, "failed")
    assert promo.in_baseline is False and promo.profiles == ("Promo",)
    earlier = [float(year.counts[d]) for d in fridays[-6:-2]]
    assert after.expected_value == statistics.median(earlier)  # the promotion is not in the next baseline

    kept = on_friday(Rule(CheckIdSelector(CHECK_ID), metric_multiplier=2.0, keep_in_baseline=True))
    assert kept[friday].in_baseline is True
    assert kept[fridays[-1]].expected_value == statistics.median([*earlier[1:], 2.0 * count])

    warned = on_friday(check_id(CHECK_ID).set(metric_multiplier=2.0, severity="warning"))[friday]
    assert (warned.status, warned.severity) == ("failed", "warning")


def test_the_config_names_the_field_and_close_matches() -> None:
    def load(**fields: Any) -> Any:
        base = {"check": "anomaly-check", "check-id": "a", "scope": {"window": "1 day"}}
        return next(iter(CheckSet.from_dicts([{**base, **fields}])))

    check = load(
        metric={"check": "row-count-min-check"}, baseline={"windows": 6, "season": "weekly"}, band={"mad": 3}
    )
    assert isinstance(check, AnomalyCheck) and (check.metric, check.windows, check.band) == (
        "row-count",
        6,
        "mad",
    )
    assert load(metric={"check": "mean-check", "column": "amount"}).metric == "mean"
    with pytest.raises(ConfigError, match=r"unknown metric 'mena'; did you mean 'mean'"):
        load(metric={"check": "mena", "column": "amount"})
    with pytest.raises(ConfigError, match="needs a column"):
        load(metric={"check": "mean"})
    with pytest.raises(ConfigError, match=r"baseline\.season.*shorter than a day"):
        load(metric={"check": "row-count"}, baseline={"season": "daily"})
    with pytest.raises(ConfigError, match="exactly one band"):
        load(metric={"check": "row-count"}, band={"mad": 3, "relative": 0.1})
    with pytest.raises(ConfigError, match="min-history"):
        load(metric={"check": "row-count"}, **{"min-history": 9})
    with pytest.raises(ConfigError, match=r"windows \(scope: \{window: 1 day\}\) or batches"):
        CheckSet.from_dicts([{"check": "anomaly-check", "check-id": "a", "metric": {"check": "row-count"}}])
    with pytest.raises(ConfigError, match="lookback"):
        AnomalyCheck(
            "a", "row-count", scope=WindowScope(window="1 day"), windows=4, lookback=timedelta(days=2)
        )


def test_a_batch_scoped_check_judges_a_batch_against_the_committed_batches_before_it(tmp_path: Any) -> None:
    from streaming_dq.core.history import using_history
    from streaming_dq.sink.batch_history import BatchHistory
    from streaming_dq.states import CountState
    from streaming_dq.tables import DeltaRsWriter, DeltaTarget

    check = next(iter(CheckSet.from_dicts(
            [{"check": "anomaly-check", "check-id": "per-batch", "metric": {"check": "row-count"},
              "baseline": {"batches": 3}, "band": {"relative": 0.25}}]
        )))  # fmt: skip
    assert isinstance(check, AnomalyCheck) and check.batches == 3 and check.scope is None
    history = BatchHistory("g", [check], DeltaTarget(str(tmp_path / "results")))
    writer = DeltaRsWriter()
    verdicts = []
    for batch_id, rows in enumerate([20, 21, 19, 20, 60, 20]):
        values = history.values_before(writer, "g:q", batch_id)
        with using_history(values):
            result = check.wrap(check.evaluate_states({"rows": CountState(rows)}))
        verdicts.append((result.status, result.metrics["expected"]))
        outcome = _aggregate_outcome(result)
        history.record("g:q", batch_id, [outcome])
        if batch_id == 4:  # a replay of the spike batch is judged by the batches before it, and recorded once
            assert history.values_before(writer, "g:q", 4) == {"per-batch": [21.0, 19.0, 20.0]}
            history.record("g:q", 4, [outcome])
    assert verdicts == [
        ("skipped", None), ("skipped", None), ("skipped", None), ("passed", 20.0), ("failed", 20.0), ("passed", 20.0)
    ]  # fmt: skip
    assert values == {"per-batch": [19.0, 20.0, 60.0]}  # what batch 5 was judged by: the spike is in it
    # the history is the run's input, never state of the check: outside the run the check has none
    assert check.wrap(check.evaluate_states({"rows": CountState(20)})).status == "skipped"
    with pytest.raises(ConfigError, match="needs a results table"):
        BatchHistory("g", [check], None)
    with pytest.raises(ConfigError, match="not both"):
        CheckSet.from_dicts(
            [{"check": "anomaly-check", "check-id": "x", "metric": {"check": "row-count"},
              "baseline": {"batches": 3, "windows": 4}}]
        )  # fmt: skip


def _aggregate_outcome(result: Any) -> Any:
    from streaming_dq.sink.records import _aggregate_outcome as outcome_of

    return outcome_of(result)
