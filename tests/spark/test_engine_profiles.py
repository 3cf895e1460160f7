"""Profiles in the engine: each row judged under the profiles of its own event date, in one pass."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from streaming_dq import BatchDQEngine, CheckSet
from streaming_dq.engine.validate import validate_to_arrow
from streaming_dq.profiles import HolidayProfile, check_id, tag

BEFORE = datetime(2025, 12, 19, 22, 0, tzinfo=UTC)  # Dec 19 in UTC, Dec 19 23:00 in Berlin
DURING = datetime(2025, 12, 20, 1, 0, tzinfo=UTC)
CHRISTMAS = HolidayProfile(
    "Christmas",
    date(2025, 12, 20),
    date(2026, 1, 5),
    rules=[
        tag("xmas").set(metric_multiplier=2.0),
        tag("non-critical").set(severity="warning"),
        check_id("cap").disable(),
    ],
)
CHECKS = [
    {"check": "null-check", "check-id": "name", "columns": ["name"], "tags": ["non-critical"]},
    {"check": "row-count-min-check", "check-id": "volume", "min-count": 5, "tags": ["xmas"]},
    {"check": "row-count-max-check", "check-id": "cap", "max-count": 100},
]


@pytest.fixture(scope="module")
def straddling(spark):  # type: ignore[no-untyped-def]
    """6 rows on Dec 19 and 4 on Dec 20 (a holiday), every third name NULL, and one row without event time."""
    rows = [(i, None if i % 3 == 0 else "x", BEFORE if i < 6 else DURING) for i in range(10)]
    rows.append((99, None, None))
    return spark.createDataFrame(rows, "id int, name string, ts timestamp")


def test_a_batch_crossing_a_profile_boundary_gets_per_row_severity(straddling) -> None:  # type: ignore[no-untyped-def]
    result = BatchDQEngine(CheckSet.from_dicts(CHECKS), profiles=[CHRISTMAS], event_time="ts").run_batch(
        straddling
    )
    verdicts = {
        r["id"]: (r["_dq_passed"], [e["severity"] for e in r["_dq_errors"]]) for r in result.df.collect()
    }
    # Dec 19: a NULL name is critical; Dec 20: downgraded to a warning; NULL event time: no profile applies.
    assert verdicts[0] == (False, ["critical"]) and verdicts[3] == (False, ["critical"])
    assert verdicts[6] == (True, ["warning"]) and verdicts[9] == (True, ["warning"])
    assert verdicts[99] == (False, ["critical"])
    assert verdicts[1] == (True, [])
    s = result.summary()
    assert (s.total_records, s.passed_records, s.failed_records, s.warning_records) == (11, 8, 3, 2)


def test_aggregates_are_evaluated_per_regime_with_multiplier_and_disable(straddling) -> None:  # type: ignore[no-untyped-def]
    result = BatchDQEngine(CheckSet.from_dicts(CHECKS), profiles=[CHRISTMAS], event_time="ts").run_batch(
        straddling
    )
    got = [
        (a.check_id, a.status, a.metrics.get("value"), a.metrics.get("adjusted"), a.regime)
        for a in result.aggregate_results
    ]
    assert got == [
        ("volume", "passed", 7.0, 7.0, ()),
        ("volume", "passed", 4.0, 8.0, ("Christmas",)),  # 4 rows x 2.0 = 8 >= 5
        ("cap", "passed", 7.0, 7.0, ()),
        ("cap", "skipped", None, None, ("Christmas",)),
    ]
    rows = {
        (r.check.check_id, r.regime): (r.severity.value, r.violations) for r in result.outcome.row_results
    }
    assert rows == {("name", ()): ("critical", 3), ("name", ("Christmas",)): ("warning", 2)}


def test_without_multiplier_the_holiday_volume_would_fail(straddling) -> None:  # type: ignore[no-untyped-def]
    plain = HolidayProfile("Christmas", date(2025, 12, 20), date(2026, 1, 5), rules=[])
    result = BatchDQEngine(CheckSet.from_dicts(CHECKS[1:2]), profiles=[plain], event_time="ts").run_batch(
        straddling
    )
    assert [(a.status, a.metrics["value"]) for a in result.aggregate_results] == [
        ("passed", 7.0),
        ("failed", 4.0),
    ]
    failing = {r["id"] for r in result.fail_df().collect()}
    assert failing == {6, 7, 8, 9}  # only the holiday regime's rows carry the breach


def test_the_profile_date_is_read_in_the_configured_time_zone(spark) -> None:  # type: ignore[no-untyped-def]
    late_evening = datetime(2025, 12, 19, 23, 30, tzinfo=UTC)  # Dec 19 in UTC, 00:30 on Dec 20 in Berlin
    df = spark.createDataFrame([(1, None, late_evening)], "id int, name string, ts timestamp")
    checks = CheckSet.from_dicts(CHECKS[:1])
    in_utc = BatchDQEngine(checks, profiles=[CHRISTMAS], event_time="ts").run_batch(df)
    in_berlin = BatchDQEngine(
        checks, profiles=[CHRISTMAS], event_time="ts", timezone="Europe/Berlin"
    ).run_batch(df)
    assert in_utc.summary().failed_records == 1  # critical on Dec 19
    assert in_berlin.summary().failed_records == 0  # a warning on Dec 20
    assert in_berlin.summary().warning_records == 1


def test_the_arrow_fast_path_routes_like_the_batch_engine(straddling) -> None:  # type: ignore[no-untyped-def]
    engine = BatchDQEngine(CheckSet.from_dicts(CHECKS), profiles=[CHRISTMAS], event_time="ts")
    validated = validate_to_arrow(engine.plan(), straddling)
    assert sorted(validated.quarantined.column("id").to_pylist()) == [0, 3, 99]
    assert validated.passed.num_rows == 8 and validated.warned == 2
    errors = dict(
        zip(
            validated.quarantined.column("id").to_pylist(),
            validated.quarantined.column("_dq_errors").to_pylist(),
            strict=True,
        )
    )
    assert errors[0] == [{"check": "null-check", "check-id": "name", "severity": "critical"}]
    assert validated.passed.schema.names == ["id", "name", "ts"]


def test_no_active_profile_means_normal_behaviour(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame([(1, None, BEFORE), (2, "x", BEFORE)], "id int, name string, ts timestamp")
    with_profile = BatchDQEngine(
        CheckSet.from_dicts(CHECKS), profiles=[CHRISTMAS], event_time="ts"
    ).run_batch(df)
    without = BatchDQEngine(CheckSet.from_dicts(CHECKS)).run_batch(df)
    assert (
        with_profile.summary().failed_records == without.summary().failed_records == 2
    )  # volume < 5 fails all
    assert [a.status for a in with_profile.aggregate_results] == [a.status for a in without.aggregate_results]


def test_rows_without_event_time_join_the_largest_regime_for_aggregates(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [(i, "x", DURING) for i in range(10)] + [(98, "x", None), (99, None, None)]
    df = spark.createDataFrame(rows, "id int, name string, ts timestamp")
    result = BatchDQEngine(CheckSet.from_dicts(CHECKS), profiles=[CHRISTMAS], event_time="ts").run_batch(df)
    volume = [
        (a.status, a.metrics["value"], a.metrics["adjusted"], a.regime)
        for a in result.aggregate_results
        if a.check_id == "volume"
    ]
    # 10 holiday rows + 2 rows without a date, judged together under the holiday: 12 x 2.0 = 24 >= 5.
    assert volume == [("passed", 12.0, 24.0, ("Christmas",))]
    # Row by row, a row without event time is still judged under no profile: its NULL name is critical.
    assert [r["id"] for r in result.fail_df().collect()] == [99]

    only_undated = spark.createDataFrame([(1, "x", None)], "id int, name string, ts timestamp")
    alone = BatchDQEngine(CheckSet.from_dicts(CHECKS[1:2]), profiles=[CHRISTMAS], event_time="ts").run_batch(
        only_undated
    )
    assert [(a.status, a.metrics["value"], a.regime) for a in alone.aggregate_results] == [
        ("failed", 1.0, ())
    ]


def test_labels_name_only_the_profiles_active_for_the_rows_they_describe(spark) -> None:  # type: ignore[no-untyped-def]
    """Thursday and Friday orders, none on the holiday: no check's label may name Christmas or Weekends.

    A row check that behaves alike under every regime has one override group covering them all; its label
    used to list every profile of the group, whatever the batch held.
    """
    from streaming_dq.profiles import RecurringProfile

    weekends = RecurringProfile("Weekends", weekdays=["sat", "sun"], rules=[check_id("cap").disable()])
    thursday, friday = datetime(2025, 12, 18, 12, tzinfo=UTC), datetime(2025, 12, 19, 12, tzinfo=UTC)
    df = spark.createDataFrame([(1, None, thursday), (2, "x", friday)], "id int, name string, ts timestamp")
    result = BatchDQEngine(
        CheckSet.from_dicts(CHECKS), profiles=[CHRISTMAS, weekends], event_time="ts"
    ).run_batch(df)
    assert {(r.check.check_id, r.regime, r.profiles) for r in result.outcome.row_results} == {
        ("name", (), ())
    }
    assert all(a.regime == () for a in result.aggregate_results)
    assert "[profiles:" not in str(result.report())
