"""Profile Spark expressions agree with their Python twins: active_column, regime_column, event_date_column."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from streaming_dq.profiles import (
    HolidayProfile,
    RecurringProfile,
    event_date,
    event_date_column,
    regime_column,
    regime_of,
)

pytestmark = pytest.mark.spark

PROFILES = [
    HolidayProfile("Christmas 2025", date(2025, 12, 20), date(2026, 1, 5)),
    RecurringProfile("Christmas every year", "12-24", "01-01"),
    RecurringProfile("Weekends", weekdays=["sat", "sun"]),
    RecurringProfile("Leap day on", "02-29", "03-02"),
    RecurringProfile("Summer Fridays", "07-01", "08-31", weekdays=["fri"]),
    HolidayProfile("Black Friday", date(2025, 11, 28), date(2025, 11, 28)),
]


def columns_on_every_date(spark: Any, profiles: list[Any], first: date, last: date) -> dict[Any, Any]:
    """Per date from ``first`` to ``last`` (and NULL): each profile's Spark ``active_column`` and the Spark
    regime mask, asserted equal to ``is_active`` and ``regime_of`` in Python."""
    from pyspark.sql import functions as F

    dates: list[date | None] = [first + timedelta(n) for n in range((last - first).days + 1)]
    dates.append(None)
    df = spark.createDataFrame([(d,) for d in dates], "d date")
    columns = [p.active_column(F.col("d")).alias(f"a{i}") for i, p in enumerate(profiles)]
    rows = df.select("d", *columns, regime_column(profiles, F.col("d")).alias("regime")).collect()
    got = {r["d"]: ([r[f"a{i}"] for i in range(len(profiles))], r["regime"]) for r in rows}
    expected = {
        d: ([d is not None and p.is_active(d) for p in profiles], regime_of(profiles, d).mask) for d in dates
    }
    assert got == expected
    return got


def test_active_and_regime_columns_agree_with_python_on_every_date(spark: Any) -> None:
    # Feb 29 2024, two new years, both holiday bounds
    got = columns_on_every_date(spark, PROFILES, date(2023, 12, 1), date(2026, 3, 31))
    assert got[date(2025, 12, 20)] == ([True, False, True, False, False, False], 0b101)
    assert got[None] == ([False] * len(PROFILES), 0)


def test_regime_column_without_profiles_is_zero(spark: Any) -> None:
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(date(2025, 12, 25),), (None,)], "d date")
    assert [r[0] for r in df.select(regime_column([], F.col("d"))).collect()] == [0, 0]


EVENTS = [
    datetime(2025, 12, 19, 23, 30, tzinfo=UTC),  # Dec 20 in Berlin
    datetime(2025, 12, 20, 3, 0, tzinfo=UTC),  # Dec 19 in New York
    datetime(2025, 3, 30, 0, 59, 59, tzinfo=UTC),  # just before Berlin's spring-forward
    datetime(2025, 10, 25, 22, 0, tzinfo=UTC),  # midnight in Berlin before autumn fall-back
    datetime(1969, 12, 31, 23, 30, tzinfo=UTC),  # before the epoch
    None,
]


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"])
def test_event_date_column_agrees_with_event_date(spark: Any, zone: str) -> None:
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(ts,) for ts in EVENTS], "ts timestamp")
    got = [r[0] for r in df.select(event_date_column(F.col("ts"), zone)).collect()]
    assert got == [None if ts is None else event_date(ts, zone) for ts in EVENTS]


def test_event_date_column_does_not_depend_on_the_session_time_zone(spark: Any) -> None:
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(ts,) for ts in EVENTS], "ts timestamp")
    expected = [None if ts is None else event_date(ts, "Europe/Berlin") for ts in EVENTS]
    previous = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
        got = [r[0] for r in df.select(event_date_column(F.col("ts"), "Europe/Berlin")).collect()]
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
    assert got == expected


def test_public_holiday_profiles_agree_with_python_on_every_date(spark: Any) -> None:
    from streaming_dq.profiles import PublicHolidayProfile

    calendar = PublicHolidayProfile("US", country="US", subdivision="NY", days_before=1, days_after=1)
    profiles = calendar.expand()
    got = columns_on_every_date(spark, profiles, date(2024, 11, 1), date(2026, 1, 10))
    names = [p.name for p in profiles]
    on = lambda d: [n for n, a in zip(names, got[d][0], strict=True) if a]  # noqa: E731
    assert (
        on(date(2025, 11, 27)) == on(date(2025, 11, 28)) == on(date(2025, 11, 26)) == ["US: Thanksgiving Day"]
    )
    assert on(date(2025, 12, 26)) == ["US: Christmas Day"] and on(date(2025, 12, 10)) == []
    assert all(sum(flags) <= 1 for flags, _ in got.values())  # a date belongs to one holiday of a calendar


def test_a_public_holiday_calendar_compiles_into_the_batchs_generated_code(spark: Any) -> None:
    """With code generation required (no fallback): a calendar's 130 years of eleven holidays, one ``IN``
    over dates each, once compiled into one large ``switch`` per holiday and the batch's aggregation code failed
    to compile (Spark hid it by running without code generation, logging an ERROR every batch: 27 times and
    40% of the time of a year-long stream in benchmarks/anomaly.py --stream)."""
    from datetime import UTC, datetime

    from streaming_dq import BatchDQEngine, CheckSet
    from streaming_dq.profiles import PublicHolidayProfile, check_id

    checks = CheckSet.from_dicts(
        [
            {"check": "null-check", "check-id": "id-present", "columns": ["id"]},
            {"check": "row-count-min-check", "check-id": "rows", "min-count": 1},
        ]
    )
    calendar = PublicHolidayProfile("US holidays", country="US", rules=[check_id("rows").disable()])
    rows = [(i, datetime(2025, 1, 1 + i % 28, tzinfo=UTC)) for i in range(100)]
    df = spark.createDataFrame(rows, "id BIGINT, ts TIMESTAMP")
    previous = spark.conf.get("spark.sql.codegen.fallback")
    spark.conf.set("spark.sql.codegen.fallback", "false")
    try:
        report = BatchDQEngine(checks, profiles=[calendar], event_time="ts").run_batch(df).report()
    finally:
        spark.conf.set("spark.sql.codegen.fallback", previous)
    verdicts = sorted((line.status, line.details) for line in report.lines if line.check_id == "rows")
    assert [status for status, _ in verdicts] == ["passed", "skipped", "skipped"]  # New Year's Day, MLK Day
    assert "Row count is 93" in verdicts[0][1]  # the other 7 rows fall on the two holidays


def test_a_calendar_mixed_with_other_profiles_agrees_with_python_at_the_table_s_ends(spark: Any) -> None:
    """Date-set profiles are looked up in one table of days (#27); the dates around its first and last day,
    and other profiles in the same list, must agree with ``regime_of`` bit for bit."""
    from streaming_dq.profiles import PublicHolidayProfile

    calendar = PublicHolidayProfile("US", country="US", days_before=1, days_after=1).expand()
    profiles = [PROFILES[2], *calendar, PROFILES[0]]
    first = min(min(p.dates) for p in calendar)
    last = max(max(p.dates) for p in calendar)
    columns_on_every_date(spark, profiles, first - timedelta(days=5), first + timedelta(days=20))
    columns_on_every_date(spark, profiles, last - timedelta(days=20), last + timedelta(days=5))
    columns_on_every_date(spark, profiles, date(2025, 12, 15), date(2026, 1, 10))


def test_the_regime_mask_is_computed_once_per_row_and_the_calendar_is_one_lookup(spark: Any) -> None:
    """A structural fact behind the calendar's cost (#27): the regime ordinal compares the mask once per
    regime, so an inlined mask was evaluated 12 times per row, each time with one text ``IN`` per holiday
    (a US calendar made every batch 3-5x slower; benchmarks/profile_cost.py measures it)."""
    from streaming_dq.engine.regime_table import RegimeTable
    from streaming_dq.profiles import PublicHolidayProfile

    calendar = PublicHolidayProfile("US", country="US", days_after=1).expand()
    table = RegimeTable([], calendar, [])
    assert len(table.regimes) == 13
    df = spark.createDataFrame([(datetime(2025, 11, 27, 15, tzinfo=UTC),)], "ts TIMESTAMP")
    out = table.with_ordinal(df, "ts", "America/New_York")
    plan = out._jdf.queryExecution().optimizedPlan().toString()
    # one byte read from the table: substring (F.substring) or substr (Column.substr, what Spark 3.5 takes)
    assert len(re.findall(r"\bsubstr(?:ing)?\(", plan)) == 1 and "INSET" not in plan.upper()
    assert out.collect()[0]["__dq_regime"] == next(
        r for r, regime in enumerate(table.regimes) if regime and regime.profiles == ("US: Thanksgiving Day",)
    )
