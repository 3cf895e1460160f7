"""Event-time windows aligned to local midnight: DST days, alignment, sub-day and multi-day sizes, and the
vectorised form agreeing with the scalar one."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streaming_dq.exceptions import ConfigError
from streaming_dq.metrics.calendar import (
    UTC_MICROS,
    max_event_time,
    window_bounds,
    window_date,
    window_starts,
)

DAY = timedelta(days=1)
HOUR = timedelta(hours=1)
BERLIN = "Europe/Berlin"


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_day_window_is_the_local_calendar_day() -> None:
    # 2025-06-15 00:30 Berlin (CEST, +2) is 2025-06-14 22:30 UTC.
    assert window_bounds(utc(2025, 6, 14, 22, 30), DAY, BERLIN) == (
        utc(2025, 6, 14, 22),
        utc(2025, 6, 15, 22),
    )
    assert window_bounds(utc(2025, 6, 14, 21, 59), DAY, BERLIN) == (
        utc(2025, 6, 13, 22),
        utc(2025, 6, 14, 22),
    )
    assert window_date(utc(2025, 6, 14, 22), BERLIN) == date(2025, 6, 15)


def test_spring_forward_day_has_23_hours_and_autumn_day_25() -> None:
    spring = window_bounds(utc(2025, 3, 30, 12), DAY, BERLIN)
    autumn = window_bounds(utc(2025, 10, 26, 12), DAY, BERLIN)
    assert spring == (utc(2025, 3, 29, 23), utc(2025, 3, 30, 22))
    assert autumn == (utc(2025, 10, 25, 22), utc(2025, 10, 26, 23))
    assert (spring[1] - spring[0], autumn[1] - autumn[0]) == (timedelta(hours=23), timedelta(hours=25))
    assert window_date(spring[0], BERLIN) == date(2025, 3, 30)
    assert window_date(autumn[0], BERLIN) == date(2025, 10, 26)


def _hour_windows_of_day(day_start: datetime, day_end: datetime) -> list[tuple[datetime, datetime]]:
    out = []
    t = day_start
    while t < day_end:
        out.append(window_bounds(t, HOUR, BERLIN))
        t = out[-1][1]
    return out


def test_hour_windows_tile_dst_days_without_gaps_or_overlaps() -> None:
    for probe, expected in ((utc(2025, 3, 30, 12), 23), (utc(2025, 10, 26, 12), 25), (utc(2025, 7, 1), 24)):
        start, end = window_bounds(probe, DAY, BERLIN)
        hours = _hour_windows_of_day(start, end)
        assert len(hours) == expected
        assert hours[0][0] == start and hours[-1][1] == end
        assert all(b - a == HOUR for a, b in hours)


def test_repeated_autumn_hour_is_two_windows() -> None:
    # 02:00-03:00 local happens twice on 2025-10-26: 00:00-01:00 UTC (CEST) and 01:00-02:00 UTC (CET).
    first = window_bounds(utc(2025, 10, 26, 0, 30), HOUR, BERLIN)
    second = window_bounds(utc(2025, 10, 26, 1, 30), HOUR, BERLIN)
    assert first == (utc(2025, 10, 26, 0), utc(2025, 10, 26, 1))
    assert second == (utc(2025, 10, 26, 1), utc(2025, 10, 26, 2))


def test_sub_day_windows_are_aligned_to_local_midnight_and_cut_there() -> None:
    # Kolkata is +05:30: 6-hour windows start at 00:00, 06:00, 12:00, 18:00 local.
    assert window_bounds(utc(2025, 1, 1, 1), timedelta(hours=6), "Asia/Kolkata") == (
        utc(2025, 1, 1, 0, 30),
        utc(2025, 1, 1, 6, 30),
    )
    # The 25-hour day with 6-hour windows ends with a 1-hour window cut at the next local midnight.
    assert window_bounds(utc(2025, 10, 26, 22, 30), timedelta(hours=6), BERLIN) == (
        utc(2025, 10, 26, 22),
        utc(2025, 10, 26, 23),
    )
    assert window_bounds(utc(2025, 1, 1, 10, 7), timedelta(minutes=15), "UTC") == (
        utc(2025, 1, 1, 10, 0),
        utc(2025, 1, 1, 10, 15),
    )


def test_multi_day_windows_count_days_from_the_epoch() -> None:
    start, end = window_bounds(utc(2025, 10, 26, 12), timedelta(days=7), BERLIN)
    assert (start, end) == (utc(2025, 10, 22, 22), utc(2025, 10, 29, 23))  # Thu 23 Oct .. Thu 30 Oct local
    assert (date(2025, 10, 23) - date(1970, 1, 1)).days % 7 == 0
    assert window_date(start, BERLIN) == date(2025, 10, 23)


def test_naive_instants_are_utc_and_bad_inputs_are_refused() -> None:
    assert window_bounds(datetime(2025, 1, 1, 5), DAY, "UTC") == (utc(2025, 1, 1), utc(2025, 1, 2))
    with pytest.raises(ValueError, match="divide a day"):
        window_bounds(utc(2025, 1, 1), timedelta(hours=7), "UTC")
    with pytest.raises(ConfigError, match="unknown time zone"):
        window_bounds(utc(2025, 1, 1), DAY, "Mars/Olympus")


ZONES = st.sampled_from(["UTC", BERLIN, "Asia/Kolkata", "America/Sao_Paulo", "Australia/Lord_Howe"])
SIZES = st.sampled_from([DAY, HOUR, timedelta(hours=6), timedelta(minutes=15), timedelta(days=7)])
INSTANTS = st.datetimes(min_value=datetime(1965, 1, 1), max_value=datetime(2040, 1, 1)).map(
    lambda d: d.replace(tzinfo=UTC, microsecond=0)
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), INSTANTS), max_size=40), SIZES, ZONES)
def test_vectorised_starts_equal_the_scalar_ones(instants: list, size: timedelta, zone: str) -> None:
    got = window_starts(pa.array(instants, UTC_MICROS), size, zone).to_pylist()
    assert got == [None if t is None else window_bounds(t, size, zone)[0] for t in instants]


@settings(max_examples=60, deadline=None)
@given(INSTANTS, SIZES, ZONES)
def test_an_instant_lies_in_its_window_and_windows_tile(ts: datetime, size: timedelta, zone: str) -> None:
    start, end = window_bounds(ts, size, zone)
    assert start <= ts < end
    assert window_bounds(end, size, zone)[0] == end
    assert window_bounds(start - timedelta(microseconds=1), size, zone)[1] == start


def test_window_starts_accepts_other_units_chunks_and_naive_timestamps() -> None:
    naive = pa.chunked_array(
        [pa.array([datetime(2025, 3, 30, 1, 30)], pa.timestamp("s")), pa.array([None], pa.timestamp("s"))]
    )
    assert window_starts(naive, DAY, BERLIN).to_pylist() == [utc(2025, 3, 29, 23), None]
    assert window_starts(pa.array([None, None], UTC_MICROS), DAY, BERLIN).null_count == 2
    with pytest.raises(TypeError, match="timestamp"):
        window_starts(pa.array([1, 2]), DAY, "UTC")


def test_max_event_time() -> None:
    arr = pa.array([utc(2025, 1, 2), None, utc(2025, 1, 1)], UTC_MICROS)
    assert max_event_time(arr) == utc(2025, 1, 2)
    assert max_event_time(pa.array([], UTC_MICROS)) is None
