"""The batch engine's contracts, on a real SparkSession."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streaming_dq import BatchDQEngine, CheckSet, Severity
from streaming_dq.exceptions import CheckEvaluationError, CriticalCheckFailedError

SCHEMA = "id int, name string, amount double"
ROWS = [(1, "a", 10.0), (2, None, 5.0), (None, "c", None), (4, "d", 3.0)]


def checks(*extra: dict) -> CheckSet:  # type: ignore[type-arg]
    return CheckSet.from_dicts(
        [
            {"check": "null-check", "check-id": "id_present", "columns": ["id"]},
            {"check": "null-check", "check-id": "name_present", "columns": ["name"], "severity": "warning"},
            *extra,
        ]
    )


def errors_by_id(result) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return {
        r["id"]: sorted((e["check-id"], e["severity"]) for e in r["_dq_errors"]) for r in result.df.collect()
    }


def test_fail_levels_decide_which_rows_fail(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(ROWS, SCHEMA)
    result = BatchDQEngine(checks()).run_batch(df)
    assert sorted(r["id"] for r in result.pass_df().collect()) == [1, 2, 4]
    assert [r["id"] for r in result.fail_df().collect()] == [None]
    assert [r["id"] for r in result.warn_df().collect()] == [2]
    assert errors_by_id(result) == {
        1: [],
        2: [("name_present", "warning")],
        None: [("id_present", "critical")],
        4: [],
    }
    strict = BatchDQEngine(checks(), fail_levels=[Severity.CRITICAL, Severity.WARNING]).run_batch(df)
    assert sorted(r["id"] for r in strict.pass_df().collect()) == [1, 4]
    assert strict.summary().failed_records == 2


def test_views_have_the_documented_schemas(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(ROWS, SCHEMA)
    result = BatchDQEngine(checks()).run_batch(df)
    assert result.pass_df().schema == df.schema
    assert result.fail_df().columns == [
        "id",
        "name",
        "amount",
        "_dq_errors",
        "_dq_passed",
        "_dq_validation_ts",
    ]
    assert result.warn_df().columns == ["id", "name", "amount", "_dq_errors", "_dq_validation_ts"]
    ts = {r["_dq_validation_ts"] for r in result.df.collect()}
    assert len(ts) == 1
    assert result.timestamp.tzinfo is not None


def test_failed_fail_level_aggregate_fails_every_row(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(ROWS, SCHEMA)
    cs = checks({"check": "row-count-min-check", "check-id": "volume", "min-count": 10})
    result = BatchDQEngine(cs).run_batch(df)
    assert result.pass_df().count() == 0
    assert all(("volume", "critical") in errs for errs in errors_by_id(result).values())
    s = result.summary()
    assert (s.total_records, s.passed_records, s.failed_records, s.warning_records) == (4, 0, 4, 0)
    assert [a.status for a in result.aggregate_results] == ["failed"]


def test_failed_warning_aggregate_warns_every_passed_row(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(ROWS, SCHEMA)
    cs = checks({"check": "row-count-max-check", "check-id": "cap", "max-count": 3, "severity": "warning"})
    result = BatchDQEngine(cs).run_batch(df)
    s = result.summary()
    assert (s.passed_records, s.failed_records, s.warning_records) == (3, 1, 3)
    assert result.warn_df().count() == 3


def test_summary_rounds_pass_rate_but_all_passed_uses_counts(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.range(1000).selectExpr("CASE WHEN id = 7 THEN NULL ELSE id END AS id")
    cs = CheckSet.from_dicts([{"check": "null-check", "check-id": "id", "columns": ["id"]}])
    s = BatchDQEngine(cs).run_batch(df).summary()
    assert (s.passed_records, s.failed_records, s.pass_rate) == (999, 1, 1.0)
    assert s.all_passed is False


def test_empty_input_has_zero_pass_rate(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame([], SCHEMA)
    s = BatchDQEngine(checks()).run_batch(df).summary()
    assert (s.total_records, s.passed_records, s.pass_rate) == (0, 0, 0.0)


def test_check_id_equal_to_a_data_column_leaves_the_column_intact(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(ROWS, SCHEMA)
    cs = CheckSet.from_dicts([{"check": "null-check", "check-id": "name", "columns": ["id"]}])
    result = BatchDQEngine(cs).run_batch(df)
    assert sorted(r["name"] for r in result.df.collect() if r["name"]) == ["a", "c", "d"]
    assert sorted((r["id"], r["name"]) for r in result.pass_df().collect()) == [(1, "a"), (2, None), (4, "d")]


def test_report_reads_in_plain_words(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(ROWS, SCHEMA)
    cs = checks({"check": "row-count-min-check", "check-id": "volume", "min-count": 2})
    text = str(BatchDQEngine(cs).run_batch(df).report())
    lines = text.splitlines()
    assert lines[0] == "Validation Report: 1 passed, 2 failed"
    assert lines[1] == "-" * 50
    assert "PASSED:" in lines and "FAILED:" in lines
    assert "✓ volume" in lines
    assert "✗ id_present (critical)" in lines
    assert any(line.startswith("  Details: ") and "'id'" in line for line in lines)


def test_raise_on_critical_attaches_the_report(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(ROWS, SCHEMA)
    with pytest.raises(CriticalCheckFailedError, match="id_present") as info:
        BatchDQEngine(checks()).run_batch(df, raise_on_critical=True)
    assert info.value.report.failed[0].check_id == "id_present"
    clean = spark.createDataFrame([(1, None, 1.0)], SCHEMA)
    BatchDQEngine(checks()).run_batch(clean, raise_on_critical=True)  # only a warning: no raise


def test_a_missing_column_is_a_clear_error(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(ROWS, SCHEMA)
    cs = CheckSet.from_dicts([{"check": "null-check", "check-id": "ghost", "columns": ["nope"]}])
    with pytest.raises(CheckEvaluationError, match=r"'ghost'.*nope"):
        BatchDQEngine(cs).run_batch(df)


def test_the_engine_holds_its_checks_against_each_new_schema_once_as_the_gate_does(
    spark, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """One input check for every caller (core.column_types.check_input), once per input schema: a missing
    column or a filter that does not resolve is refused by the engine as by the gate; a column of a kind its
    check cannot judge is refused by a gate's plan (``strict_types``) with gate.start's line, while the engine
    lets Spark cast it."""
    import streaming_dq.engine.plan as plan_module
    from streaming_dq.engine.plan import ValidationPlan

    calls: list[tuple[str, ...]] = []
    real = plan_module.check_input

    def counted(checks, event_time, df, **kw):  # type: ignore[no-untyped-def]
        calls.append(tuple(df.columns))
        real(checks, event_time, df, **kw)

    monkeypatch.setattr(plan_module, "check_input", counted)
    bound = {
        "check": "numeric-min-check",
        "check-id": "amount-positive",
        "columns": ["amount"],
        "min-value": 0,
    }
    text = spark.createDataFrame([(1, "12"), (2, "-1")], "id int, amount string")
    with pytest.raises(CheckEvaluationError) as info:
        ValidationPlan(CheckSet.from_dicts([bound]), strict_types=True).prepare(text)
    assert str(info.value) == (
        "check 'amount-positive': column 'amount' is string; numeric-min-check needs a numeric column"
    )
    cast = BatchDQEngine(CheckSet.from_dicts([bound])).run_batch(text)
    assert sorted(r["id"] for r in cast.fail_df().collect()) == [2]
    filtered = {"check": "null-check", "check-id": "id-present", "columns": ["id"], "filter": "nope > 1"}
    with pytest.raises(CheckEvaluationError, match=r"'id-present'.*filter 'nope > 1'"):
        BatchDQEngine(CheckSet.from_dicts([filtered])).run_batch(spark.createDataFrame(ROWS, SCHEMA))
    calls.clear()
    engine = BatchDQEngine(checks())
    for _ in range(3):
        engine.run_batch(spark.createDataFrame(ROWS, SCHEMA))
    assert calls == [("id", "name", "amount")]  # prepared once for the schema, then reused
    engine.run_batch(spark.createDataFrame([(1, "a", 1.0, True)], SCHEMA + ", flag boolean"))
    assert calls == [("id", "name", "amount"), ("id", "name", "amount", "flag")]  # a new schema: again


def _jobs_in_group(spark, group: str) -> int:  # type: ignore[no-untyped-def]
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


def test_n_aggregates_and_m_row_checks_cost_one_aggregation_job(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.range(2000).selectExpr("id", "CASE WHEN id % 7 = 0 THEN NULL ELSE id END AS v")
    raws = [{"check": "null-check", "check-id": f"row{i}", "columns": ["v"]} for i in range(8)]
    raws += [{"check": "row-count-min-check", "check-id": f"agg{i}", "min-count": i} for i in range(12)]
    cs = CheckSet.from_dicts(raws)
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        sc = spark.sparkContext
        sc.setJobGroup("engine-single-pass", "one aggregation job")
        result = BatchDQEngine(cs).run_batch(df)
        jobs = _jobs_in_group(spark, "engine-single-pass")
        summary = result.summary()
        report = result.report()
        assert _jobs_in_group(spark, "engine-single-pass") == jobs  # summary and report run no job
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        spark.conf.set("spark.sql.adaptive.enabled", "true")
    assert jobs == 1
    assert summary.failed_records == 286
    assert len(report.lines) == 20
    assert result.outcome.violations == dict.fromkeys(range(8), 286)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.one_of(st.none(), st.integers(-5, 5)), st.one_of(st.none(), st.text("ab", max_size=3))),
        max_size=40,
    )
)
def test_every_row_lands_in_exactly_one_view(spark, rows) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(rows, "id int, name string")
    cs = CheckSet.from_dicts(
        [
            {"check": "null-check", "check-id": "id", "columns": ["id"]},
            {"check": "null-check", "check-id": "name", "columns": ["name"], "severity": "warning"},
            {"check": "row-count-max-check", "check-id": "cap", "max-count": 30},
        ]
    )
    result = BatchDQEngine(cs).run_batch(df)
    result.df.cache()
    try:
        passed, failed = result.pass_df().count(), result.fail_df().count()
        s = result.summary()
    finally:
        result.df.unpersist()
    assert passed + failed == len(rows)
    assert (s.passed_records, s.failed_records) == (passed, failed)
    expected_failed = len(rows) if len(rows) > 30 else sum(1 for r in rows if r[0] is None)
    assert failed == expected_failed


def test_checks_asking_for_the_same_state_share_one_aggregate(spark) -> None:  # type: ignore[no-untyped-def]
    """Five volume checks need one row count; three checks on ``amount`` need one set of moments."""
    from streaming_dq.engine.plan import ValidationPlan

    raws = [
        {"check": "row-count-min-check", "check-id": f"at-least-{n}", "min-count": n} for n in (1, 3, 4, 5, 9)
    ]
    raws += [
        {"check": "mean-check", "check-id": f"mean-{t}", "column": "amount", "ge": t} for t in (1, 6, 100)
    ]
    raws += [
        {"check": "stddev-check", "check-id": "spread", "column": "amount", "le": 3.0},
        {
            "check": "completeness-ratio-check",
            "check-id": "amount-complete",
            "column": "amount",
            "min-ratio": 0.8,
        },
        {"check": "null-count-check", "check-id": "amount-nulls", "column": "amount", "le": 0},
    ]
    plan = ValidationPlan(CheckSet.from_dicts(raws))
    # four states: rows (count, shared by the volume checks and the completeness check: no per-row input),
    # moments of amount (shared by the mean and stddev checks), amount not NULL (count), amount NULL (count)
    assert len({slot.alias for slot in plan.layout.observed_slots}) == 4
    assert sorted(plan.layout.collected_inputs()) == ["__dq_state1", "__dq_state2", "__dq_state3"]

    df = spark.createDataFrame(ROWS, SCHEMA)
    together = BatchDQEngine(CheckSet.from_dicts(raws)).run_batch(df).aggregate_results
    alone = [BatchDQEngine(CheckSet.from_dicts([raw])).run_batch(df).aggregate_results[0] for raw in raws]
    assert [(r.check_id, r.status, r.result) for r in together] == [
        (r.check_id, r.status, r.result) for r in alone
    ]
    assert {r.check_id for r in together if r.status == "failed"} == {
        "at-least-5",
        "at-least-9",  # 4 rows
        "mean-100",  # mean 6.0 (NULL left out): mean-1 and mean-6 pass
        "spread",  # sample standard deviation of 10, 5, 3: 3.6
        "amount-complete",
        "amount-nulls",
    }


def test_an_engine_builds_its_checks_columns_once_per_input_schema(spark) -> None:  # type: ignore[no-untyped-def]
    cs = checks()
    calls: list[str] = []
    for check in cs:
        original = check.failure_condition  # type: ignore[attr-defined]

        def counted(df, _original=original, _id=check.check_id):  # type: ignore[no-untyped-def]
            calls.append(_id)
            return _original(df)

        check.failure_condition = counted  # type: ignore[attr-defined]
    engine = BatchDQEngine(cs)
    df = spark.createDataFrame(ROWS, SCHEMA)

    first = engine.run_batch(df).summary()
    again = engine.run_batch(spark.createDataFrame(ROWS, SCHEMA)).summary()
    assert sorted(calls) == ["id_present", "name_present"]
    assert (
        (again.failed_records, again.warning_records)
        == (first.failed_records, first.warning_records)
        == (1, 1)
    )

    engine.run_batch(df.withColumn("extra", df["id"]))  # another schema: built again
    assert sorted(calls) == ["id_present", "id_present", "name_present", "name_present"]
