"""The window accumulator: daily roll-ups over many batches, closing by watermark under the window date's
profiles, empty windows, late data under both policies, and restore after a restart (JVM-free)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pyarrow as pa
import pytest

from streaming_dq.checks.count import RowCountMinCheck
from streaming_dq.core.base_check import ObservableAggregateCheck
from streaming_dq.core.outcome import WindowOutcome
from streaming_dq.core.scope import WindowScope
from streaming_dq.metrics.accumulator import WindowAccumulator
from streaming_dq.metrics.calendar import UTC_MICROS, max_event_time, window_bounds
from streaming_dq.metrics.store import batch_records
from streaming_dq.metrics.window_states import EVENT_TIME_COLUMN, batch_window_states, state_column_name
from streaming_dq.metrics.window_update import WindowUpdate
from streaming_dq.profiles import HolidayProfile, check_id, tag
from streaming_dq.states import CountState
from streaming_dq.states.keyed import ROWS_STATE
from streaming_dq.states.spec import StateSpec

BERLIN = "Europe/Berlin"
DAY = WindowScope(window="1 day")


class MeanBetween(ObservableAggregateCheck):
    check_type = "mean-between-check"

    def __init__(self, check_id: str, low: float, high: float, **kw: Any) -> None:
        super().__init__(check_id, **kw)
        self.low, self.high = low, high

    def state_specs(self) -> dict[str, StateSpec]:
        return {"amount": StateSpec("moments")}

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        return states["amount"].value

    def accepts(self, value: float | None) -> bool:
        return value is not None and self.low <= value <= self.high


def orders_check(min_count: int = 100) -> RowCountMinCheck:
    return RowCountMinCheck("orders-per-day", min_count=min_count, tags=["volume"], scope=DAY)


def berlin(y: int, m: int, d: int, h: int = 12, minute: int = 0) -> datetime:
    """A Berlin wall-clock time as a UTC instant."""
    from zoneinfo import ZoneInfo

    return datetime(y, m, d, h, minute, tzinfo=ZoneInfo(BERLIN)).astimezone(UTC)


def table(rows: list[tuple[datetime | None, float | None]]) -> pa.Table:
    return pa.table(
        {
            EVENT_TIME_COLUMN: pa.array([r[0] for r in rows], UTC_MICROS),
            state_column_name("basket-mean", "amount"): pa.array([r[1] for r in rows], pa.float64()),
        }
    )


def feed(
    acc: WindowAccumulator, batch_id: int, rows: list[tuple[datetime | None, float | None]]
) -> WindowUpdate:
    t = table(rows)
    states = batch_window_states(list(acc.checks.values()), t, timezone=acc.timezone)
    return acc.update(batch_id, states, max_event_time(t.column(EVENT_TIME_COLUMN)))


def finals(updates: list[WindowUpdate]) -> dict[tuple[str, datetime], WindowOutcome]:
    """The last final verdict per (check, window)."""
    return {(w.check_id, w.window_start): w for u in updates for w in u.closed}


def test_daily_counts_and_means_over_many_batches_equal_those_of_the_raw_rows() -> None:
    rng = random.Random(7)
    start = berlin(2025, 10, 25, 0)  # three local days, the middle one 25 hours long
    span = (berlin(2025, 10, 28, 0) - start).total_seconds()
    rows = sorted(
        (start + timedelta(seconds=rng.uniform(0, span)), round(rng.uniform(1, 99), 2)) for _ in range(900)
    )
    acc = WindowAccumulator(
        "g", [orders_check(), MeanBetween("basket-mean", 20, 60, scope=DAY)], timezone=BERLIN
    )
    updates = [feed(acc, i, rows[i * 100 : (i + 1) * 100]) for i in range(9)]
    updates.append(feed(acc, 9, [(berlin(2025, 10, 28, 0, 5), 10.0)]))
    closed = [w for u in updates for w in u.closed]
    assert len(closed) == len(set((w.check_id, w.window_start) for w in closed)) == 6  # each judged once
    for day in (25, 26, 27):
        ws, we = window_bounds(berlin(2025, 10, day), timedelta(days=1), BERLIN)
        amounts = [a for t, a in rows if ws <= t < we]
        got = finals(updates)
        assert got[("orders-per-day", ws)].raw_value == len(amounts)
        assert got[("basket-mean", ws)].raw_value == pytest.approx(sum(amounts) / len(amounts), rel=1e-9)
        assert got[("orders-per-day", ws)].window_end == we
    assert acc.lifetime["orders-per-day"][ROWS_STATE] == CountState(901)


def test_windows_close_only_when_the_watermark_passes_their_end_and_are_provisional_before() -> None:
    acc = WindowAccumulator("g", [orders_check(2)], timezone=BERLIN, allowed_lateness=timedelta(hours=1))
    first = feed(acc, 0, [(berlin(2025, 6, 1, 10), None), (berlin(2025, 6, 1, 23, 30), None)])
    assert first.closed == ()
    assert [(w.status, w.raw_value) for w in first.provisional] == [("provisional", 2.0)]
    assert feed(acc, 1, [(berlin(2025, 6, 2, 0, 30), None)]).closed == ()  # watermark 23:30: still open
    closing = feed(acc, 2, [(berlin(2025, 6, 2, 1, 0), None)])  # watermark reaches midnight
    assert [(w.window_start, w.status, w.raw_value) for w in closing.closed] == [
        (berlin(2025, 6, 1, 0), "passed", 2.0)
    ]
    assert [(w.window_start, w.status, w.raw_value) for w in closing.provisional] == [
        (berlin(2025, 6, 2, 0), "provisional", 2.0)
    ]
    assert closing.watermark == berlin(2025, 6, 2, 0) and closing.max_event_time == berlin(2025, 6, 2, 1)


CHRISTMAS = HolidayProfile(
    "Christmas", date(2025, 12, 20), date(2026, 1, 5), rules=[tag("volume").set(metric_multiplier=2.0)]
)


@pytest.mark.parametrize(
    ("day", "status", "adjusted", "multiplier", "profiles"),
    [((2025, 12, 24), "passed", 120.0, 2.0, ("Christmas",)), ((2025, 12, 10), "failed", 60.0, 1.0, ())],
)
def test_a_closed_day_is_judged_under_the_profiles_of_its_date(
    day: tuple[int, int, int], status: str, adjusted: float, multiplier: float, profiles: tuple[str, ...]
) -> None:
    acc = WindowAccumulator("g", [orders_check(100)], profiles=[CHRISTMAS], timezone=BERLIN)
    feed(acc, 0, [(berlin(*day, 0, m), None) for m in range(30)])
    feed(acc, 1, [(berlin(*day, 23, m), None) for m in range(30)])
    closing = feed(acc, 2, [(berlin(*day, 0, 0) + timedelta(days=1), None)])
    assert closing.closed == (
        WindowOutcome(
            check_id="orders-per-day",
            check_type="row-count-min-check",
            window="1 day",
            window_start=berlin(*day, 0),
            window_end=berlin(*day, 0) + timedelta(days=1),
            severity="critical",
            status=status,  # type: ignore[arg-type]
            raw_value=60.0,
            adjusted_value=adjusted,
            multiplier=multiplier,
            profiles=profiles,
        ),
    )


def test_profiles_can_disable_a_window_check_or_change_its_severity() -> None:
    quiet = HolidayProfile(
        "Quiet", date(2025, 12, 24), date(2025, 12, 24), rules=[check_id("orders-per-day").disable()]
    )
    soft = HolidayProfile(
        "Soft",
        date(2025, 12, 25),
        date(2025, 12, 25),
        rules=[check_id("orders-per-day").set(severity="warning")],
    )
    acc = WindowAccumulator("g", [orders_check(100)], profiles=[quiet, soft], timezone=BERLIN)
    first = feed(acc, 0, [(berlin(2025, 12, 24), None), (berlin(2025, 12, 25), None)])  # closes the 24th
    closing = feed(acc, 1, [(berlin(2025, 12, 26, 0), None)])
    assert [(w.status, w.severity, w.raw_value, w.profiles) for w in first.closed + closing.closed] == [
        ("skipped", "critical", 1.0, ("Quiet",)),
        ("failed", "warning", 1.0, ("Soft",)),
    ]


def test_an_open_disabled_day_stays_open_across_a_restart() -> None:
    """Its running verdict is provisional, not ``skipped``: a restart once took a stored ``skipped`` for a
    final verdict, closed the day early and counted its later rows as late."""
    quiet = HolidayProfile(
        "Quiet", date(2025, 12, 24), date(2025, 12, 24), rules=[check_id("orders-per-day").disable()]
    )
    log: list[dict[str, Any]] = []
    acc = WindowAccumulator("g", [orders_check(1)], profiles=[quiet], timezone=BERLIN)
    first = feed(acc, 0, [(berlin(2025, 12, 24, 9), None)])
    assert [w.status for w in first.provisional] == ["provisional"]  # before: "skipped"
    log += batch_records(gate="g", app_id="g-q", batch_id=0, update=first).to_pylist()
    restarted = WindowAccumulator("g", [orders_check(1)], profiles=[quiet], timezone=BERLIN)
    restarted.restore(log)
    later = feed(restarted, 1, [(berlin(2025, 12, 24, 18), None), (berlin(2025, 12, 25, 1), None)])
    assert later.late_rows == 0
    assert [(w.status, w.raw_value) for w in later.closed] == [("skipped", 2.0)]


def test_a_day_without_rows_is_judged_with_empty_states() -> None:
    acc = WindowAccumulator("g", [orders_check(1)], timezone="UTC")
    feed(acc, 0, [(datetime(2025, 1, 1, 5, tzinfo=UTC), None)])
    closing = feed(acc, 1, [(datetime(2025, 1, 4, 5, tzinfo=UTC), None)])
    assert [(w.window_start.day, w.status, w.raw_value) for w in closing.closed] == [
        (1, "passed", 1.0),
        (2, "failed", 0.0),
        (3, "failed", 0.0),
    ]


def test_a_jump_far_ahead_reports_only_windows_with_rows() -> None:
    hourly = RowCountMinCheck("per-hour", min_count=1, scope=WindowScope(window="1 hour"))
    acc = WindowAccumulator("g", [hourly], timezone="UTC")
    feed(acc, 0, [(datetime(2025, 1, 1, tzinfo=UTC), None)])
    closing = feed(acc, 1, [(datetime(2030, 1, 1, tzinfo=UTC), None)])
    assert [w.window_start for w in closing.closed] == [datetime(2025, 1, 1, tzinfo=UTC)]
    assert acc.next_start["per-hour"] == datetime(2030, 1, 1, tzinfo=UTC)


def _late_scenario(policy: str) -> tuple[WindowAccumulator, WindowUpdate]:
    acc = WindowAccumulator("g", [orders_check(3)], timezone=BERLIN, late_data=policy)  # type: ignore[arg-type]
    feed(acc, 0, [(berlin(2025, 3, 30, h), None) for h in (1, 5, 9)])
    assert feed(acc, 1, [(berlin(2025, 3, 31, 8), None)]).closed[0].status == "passed"
    return acc, feed(acc, 2, [(berlin(2025, 3, 30, 20), None), (berlin(2025, 3, 30, 21), None), (None, None)])


def test_late_rows_are_counted_and_leave_the_closed_verdict_alone_under_count() -> None:
    acc, late = _late_scenario("count")
    assert (late.late_rows, late.null_event_time_rows, late.closed) == (2, 1, ())
    assert [d.scope for d in late.deltas] == ["late", "no-event-time"]
    assert (berlin(2025, 3, 30, 0) - timedelta(hours=1), "orders-per-day") not in acc.windows
    assert acc.lifetime["orders-per-day"][ROWS_STATE] == CountState(7)  # late rows still count over the life
    assert (acc.late_rows_total, acc.null_event_time_rows_total) == (2, 1)


def test_late_rows_reopen_and_rejudge_the_window_under_reopen() -> None:
    _acc, late = _late_scenario("reopen")
    assert late.late_rows == 2
    assert [(w.window_start, w.status, w.raw_value) for w in late.closed] == [
        (berlin(2025, 3, 30, 0), "passed", 5.0)
    ]
    assert [d.scope for d in late.deltas] == ["window", "no-event-time"]


def _reopen_for_a_month(horizon: timedelta) -> tuple[WindowAccumulator, list[WindowUpdate]]:
    """A month of daily batches under ``reopen``; every fifth day a row arrives ten days late."""
    acc = WindowAccumulator(
        "g", [orders_check(1)], timezone="UTC", late_data="reopen", reopen_horizon=horizon
    )
    day0 = datetime(2025, 1, 1, 12, tzinfo=UTC)
    updates = []
    for i in range(31):
        rows: list[tuple[datetime | None, float | None]] = [(day0 + timedelta(days=i), None)]
        if i >= 10 and i % 5 == 0:
            rows.append((day0 + timedelta(days=i - 10), None))
        updates.append(feed(acc, i, rows))
    return acc, updates


def test_reopen_keeps_closed_windows_only_within_its_horizon() -> None:
    acc, updates = _reopen_for_a_month(timedelta(days=3))
    # The watermark is Jan 31 noon: the closed days that ended after Jan 28 noon stay, older ones left memory.
    held = sorted(start.day for _cid, start in acc.windows)
    assert held == [28, 29, 30, 31]  # 28-30 closed within the horizon, 31 open
    late = [u for u in updates if u.late_rows]
    assert [u.batch_id for u in late] == [10, 15, 20, 25, 30]
    # Ten days late is past a 3-day horizon: counted late, the closed verdict stands (no re-judged window).
    assert all(u.closed == () or all(w.window_start.day == u.batch_id for w in u.closed) for u in late)
    assert [(d.scope, d.start.day) for u in late for d in u.deltas if d.start and d.start.day < u.batch_id] == [
        ("late", 1), ("late", 6), ("late", 11), ("late", 16), ("late", 21)
    ]  # fmt: skip
    assert acc.lifetime["orders-per-day"][ROWS_STATE] == CountState(36)


def test_a_wide_reopen_horizon_rejudges_ten_days_late_and_then_forgets() -> None:
    acc, updates = _reopen_for_a_month(timedelta(days=12))
    late = [u for u in updates if u.late_rows]
    rejudged = [(u.batch_id, w.window_start.day, w.raw_value) for u in late for w in u.closed]
    # Each late row reopens its day (2.0 rows now) beside the day the batch itself closed.
    assert [(b, d, v) for b, d, v in rejudged if v == 2.0] == [(10, 1, 2.0), (15, 6, 2.0), (20, 11, 2.0),
                                                               (25, 16, 2.0), (30, 21, 2.0)]  # fmt: skip
    assert min(start for _cid, start in acc.windows) == datetime(2025, 1, 19, tzinfo=UTC)
    assert len(acc.windows) <= 13


def test_reopen_horizon_decisions_survive_a_restart() -> None:
    """A restart rebuilds the same windows and makes the same late/reopen decisions as an unbroken run."""
    reference, expected = _reopen_for_a_month(timedelta(days=3))
    log: list[dict[str, Any]] = []
    acc = WindowAccumulator("g", [orders_check(1)], timezone="UTC", late_data="reopen",
                            reopen_horizon=timedelta(days=3))  # fmt: skip
    day0 = datetime(2025, 1, 1, 12, tzinfo=UTC)
    got = []
    for i in range(31):
        if i == 17:
            acc = WindowAccumulator("g", [orders_check(1)], timezone="UTC", late_data="reopen",
                                    reopen_horizon=timedelta(days=3))  # fmt: skip
            acc.restore(log)
        rows: list[tuple[datetime | None, float | None]] = [(day0 + timedelta(days=i), None)]
        if i >= 10 and i % 5 == 0:
            rows.append((day0 + timedelta(days=i - 10), None))
        update = feed(acc, i, rows)
        log += batch_records(gate="g", app_id="g-q1", batch_id=i, update=update).to_pylist()
        got.append(update)
    assert finals(got) == finals(expected)
    assert [d.scope for u in got for d in u.deltas] == [d.scope for u in expected for d in u.deltas]
    assert acc.windows == reference.windows and acc.lifetime == reference.lifetime


def test_unknown_checks_and_bad_options_are_refused() -> None:
    acc = WindowAccumulator("g", [orders_check()])
    with pytest.raises(ValueError, match="unknown window-scoped check"):
        acc.update(0, {("nope", None): {}}, None)
    with pytest.raises(ValueError, match="late-data"):
        WindowAccumulator("g", [], late_data="drop")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reopen_horizon"):
        WindowAccumulator("g", [], late_data="reopen", reopen_horizon=timedelta(days=-1))
    with pytest.raises(ValueError, match="no window scope"):
        WindowAccumulator("g", [RowCountMinCheck("c", min_count=1)])


# -- restart -------------------------------------------------------------------------------------------------

BATCHES = [
    [(berlin(2025, 12, 23, h), float(h)) for h in range(0, 24, 3)],
    [(berlin(2025, 12, 24, h), 10.0 + h) for h in range(0, 12)],
    [(berlin(2025, 12, 24, h), 30.5) for h in range(12, 20)] + [(None, 5.0)],
    [(berlin(2025, 12, 24, 21), 7.0), (berlin(2025, 12, 23, 22), 1.0)],  # one late row
    [(berlin(2025, 12, 25, h), 40.0) for h in range(0, 6)],
    [(berlin(2025, 12, 26, 1), 1.0)],
]


def _checks() -> list[ObservableAggregateCheck]:
    return [orders_check(10), MeanBetween("basket-mean", 20, 60, scope=DAY)]


def _accumulator(policy: str) -> WindowAccumulator:
    return WindowAccumulator(
        "g",
        _checks(),
        profiles=[CHRISTMAS],
        timezone=BERLIN,
        late_data=policy,  # type: ignore[arg-type]
    )


def _run(acc: WindowAccumulator, batch_id: int, log: list[dict[str, Any]]) -> WindowUpdate:
    update = feed(acc, batch_id, BATCHES[batch_id])
    log += batch_records(gate="g", app_id="g-q1", batch_id=batch_id, update=update).to_pylist()
    return update


@pytest.mark.parametrize("policy", ["count", "reopen"])
@pytest.mark.parametrize("crash_after", [1, 2, 3])
def test_a_restart_mid_day_neither_loses_nor_double_counts(policy: str, crash_after: int) -> None:
    reference_log: list[dict[str, Any]] = []
    reference = _accumulator(policy)
    expected = [_run(reference, b, reference_log) for b in range(len(BATCHES))]

    log: list[dict[str, Any]] = []
    first = _accumulator(policy)
    got = [_run(first, b, log) for b in range(crash_after + 1)]
    feed(first, crash_after + 1, BATCHES[crash_after + 1])  # merged in memory, then killed before its write
    restarted = _accumulator(policy)
    restarted.restore(log)
    got += [_run(restarted, b, log) for b in range(crash_after + 1, len(BATCHES))]

    assert finals(got) == finals(expected)
    assert got[-1].provisional == expected[-1].provisional
    assert restarted.lifetime == reference.lifetime
    assert restarted.windows == reference.windows
    assert (restarted.max_event_time, restarted.late_rows_total) == (
        reference.max_event_time,
        reference.late_rows_total,
    )
    assert sum(u.late_rows for u in got) == sum(u.late_rows for u in expected) == 1


def test_restore_ignores_other_gates_and_checks_whose_window_size_changed() -> None:
    log: list[dict[str, Any]] = []
    acc = _accumulator("count")
    for b in range(3):
        _run(acc, b, log)
    other_gate = WindowAccumulator("other", _checks(), timezone=BERLIN)
    other_gate.restore(log)
    assert (other_gate.windows, other_gate.lifetime, other_gate.max_event_time) == ({}, {}, None)
    hourly = WindowAccumulator(
        "g", [RowCountMinCheck("orders-per-day", 1, scope=WindowScope(window="1 hour"))]
    )
    hourly.restore(log)
    assert (hourly.windows, hourly.next_start, hourly.max_event_time) == ({}, {}, acc.max_event_time)
    same = WindowAccumulator(
        "g", [RowCountMinCheck("orders-per-day", 10, scope=WindowScope(window="24 hours"))], timezone=BERLIN
    )
    same.restore(log)
    assert same.windows == {k: v for k, v in acc.windows.items() if k[0] == "orders-per-day"}
    assert same.next_start == {"orders-per-day": acc.next_start["orders-per-day"]}
