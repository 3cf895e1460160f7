"""The Spark and the Arrow form of an event-time window's start agree, across DST changes and odd offsets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streaming_dq.metrics.calendar import window_start_column, window_starts

pytestmark = pytest.mark.spark

# Berlin (DST at 02:00), Santiago (DST at midnight: a skipped and a repeated midnight), Chatham (+12:45/+13:45),
# Kathmandu (+05:45), St John's (-03:30), Lord Howe (a 30-minute DST shift).
ZONES = ["UTC", "Europe/Berlin", "America/Santiago", "Pacific/Chatham", "Asia/Kathmandu", "America/St_Johns",
         "Australia/Lord_Howe"]  # fmt: skip
SIZES = [timedelta(minutes=15), timedelta(hours=1), timedelta(hours=6), timedelta(days=1), timedelta(days=7)]
INSTANTS = st.datetimes(
    min_value=datetime(1969, 12, 1), max_value=datetime(2031, 1, 1), timezones=st.just(UTC)
).map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    instants=st.lists(st.one_of(INSTANTS, st.none()), min_size=1, max_size=60),
    zone=st.sampled_from(ZONES),
    size=st.sampled_from(SIZES),
)
def test_spark_window_starts_equal_the_arrow_ones(
    spark: Any, instants: list[datetime | None], zone: str, size
):
    arrow = window_starts(pa.array(instants, pa.timestamp("us", tz="UTC")), size, zone)
    df = spark.createDataFrame([(i, t) for i, t in enumerate(instants)], "i INT, ts TIMESTAMP")
    from pyspark.sql import functions as F

    rows = df.select("i", window_start_column(F.col("ts"), size, zone).alias("ws")).collect()
    by_spark = {r.i: r.ws for r in rows}
    expected = [None if v is None else int(v.timestamp() * 1_000_000) for v in arrow.to_pylist()]
    assert [by_spark[i] for i in range(len(instants))] == expected


@pytest.mark.parametrize(
    ("zone", "instant", "size"),
    [
        ("America/Santiago", datetime(2024, 9, 8, 4, 30, tzinfo=UTC), timedelta(days=1)),  # skipped midnight
        (
            "America/Santiago",
            datetime(2024, 4, 7, 3, 30, tzinfo=UTC),
            timedelta(hours=1),
        ),  # repeated midnight
        ("Europe/Berlin", datetime(2025, 3, 30, 1, 30, tzinfo=UTC), timedelta(hours=6)),
        ("Europe/Berlin", datetime(2025, 10, 26, 0, 59, tzinfo=UTC), timedelta(hours=1)),
    ],
)
def test_dst_edges(spark: Any, zone: str, instant: datetime, size: timedelta) -> None:
    from pyspark.sql import functions as F

    [expected] = window_starts(pa.array([instant], pa.timestamp("us", tz="UTC")), size, zone).to_pylist()
    df = spark.createDataFrame([(instant,)], "ts TIMESTAMP")
    [row] = df.select(window_start_column(F.col("ts"), size, zone).alias("ws")).collect()
    assert row.ws == int(expected.timestamp() * 1_000_000)
