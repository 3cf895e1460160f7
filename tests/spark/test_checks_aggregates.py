"""Every aggregate check against a plain-Python oracle on generated DataFrames with NULLs.

One hypothesis example is a whole DataFrame plus drawn thresholds; all aggregate checks run in one engine
run (the observable ones in its single aggregation pass), and each metric and verdict is compared with the
oracle's.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from streaming_dq import BatchDQEngine, CheckSet
from streaming_dq.config.factory import CheckFactory
from streaming_dq.config.registry import CheckConfigRegistry
from streaming_dq.core.base_check import BaseAggregateCheck

pytestmark = [pytest.mark.spark, pytest.mark.compat]  # compat: every Spark tier runs it too (#56)

SCHEMA = "id int, a int, b double, g string, ts timestamp, fk int"
NAMES = ["id", "a", "b", "g", "ts", "fk"]
NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)


def nullable(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


ROW = st.tuples(
    nullable(st.integers(0, 6)),
    nullable(st.integers(-100, 100).map(lambda v: v / 4)),
    nullable(st.sampled_from(["x", "y", "z", "w", "v"])),
    nullable(st.integers(0, 10 * 86400).map(lambda s: NOW - timedelta(seconds=s))),
    nullable(st.integers(0, 6)),
)
PARAMS = st.fixed_dictionaries(
    {
        "ratio": st.sampled_from([0.1, 0.5, 0.75, 0.9]),
        "count": st.tuples(st.integers(0, 40), st.integers(0, 40)).map(sorted),
        "hours": st.integers(1, 240),
        "threshold": st.integers(-20, 20),
        "ref_keys": st.lists(st.integers(0, 6), max_size=8),
    }
)


def metric_cases(
    p: dict[str, Any], rows: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], Any, Callable[[Any], bool]]]:
    """(check config, oracle metric value, oracle acceptance of that value) for every aggregate check."""
    n = len(rows)
    a = [r["a"] for r in rows if r["a"] is not None]
    b = [r["b"] for r in rows if r["b"] is not None]
    g = [r["g"] for r in rows if r["g"] is not None]
    ts = [r["ts"] for r in rows if r["ts"] is not None]
    ratio, (lo, hi), thr = p["ratio"], p["count"], float(p["threshold"])
    refs = set(p["ref_keys"])
    dup_a = Counter(r["a"] for r in rows)
    completeness = (n - sum(r["a"] is None for r in rows)) / n if n else 1.0
    age = (NOW - max(ts)).total_seconds() if ts else None
    limit = p["hours"] * 3600.0

    def ge(bound: float) -> Callable[[Any], bool]:
        return lambda v: v is not None and v >= bound

    return [
        ({"check": "row-count-between-check", "min-count": lo, "max-count": hi}, n, lambda v: lo <= v <= hi),
        ({"check": "row-count-min-check", "min-count": lo}, n, ge(lo)),
        ({"check": "row-count-max-check", "max-count": hi}, n, lambda v: v <= hi),
        ({"check": "row-count-exact-check", "expected-count": lo}, n, lambda v: v == lo),
        ({"check": "completeness-ratio-check", "column": "a", "min-ratio": ratio}, completeness, ge(ratio)),
        (
            {"check": "columns-are-complete-check", "columns": ["a", "g"]},
            sum(r["a"] is None for r in rows) + sum(r["g"] is None for r in rows),
            lambda v: v == 0,
        ),
        (
            {
                "check": "freshness-check",
                "column": "ts",
                "interval": p["hours"],
                "period": "hour",
                "reference-time": NOW.isoformat(),
            },
            age,
            lambda v: v is not None and v <= limit,
        ),
        (
            {"check": "distinct-ratio-check", "column": "a", "min-ratio": ratio},
            len(set(a)) / len(a) if a else 0.0,
            ge(ratio),
        ),
        (
            {"check": "unique-ratio-check", "column": "a", "min-ratio": ratio},
            len(set(a)) / n if n else 0.0,
            ge(ratio),
        ),
        (
            {"check": "unique-rows-check", "subset-columns": ["a"]},
            sum(c for c in dup_a.values() if c > 1),
            lambda v: v == 0,
        ),
        (
            {
                "check": "foreign-key-check",
                "column": "fk",
                "reference-dataset": "ref",
                "reference-column": "k",
            },
            sum(r["fk"] is not None and r["fk"] not in refs for r in rows),
            lambda v: v == 0,
        ),
        ({"check": "mean-check", "column": "b", "ge": thr}, statistics.fmean(b) if b else None, ge(thr)),
        ({"check": "sum-check", "column": "b", "le": thr}, float(sum(b)), lambda v: v <= thr),
        (
            {"check": "min-check", "column": "b", "gt": thr},
            min(b) if b else None,
            lambda v: v is not None and v > thr,
        ),
        (
            {"check": "max-check", "column": "b", "lt": thr},
            max(b) if b else None,
            lambda v: v is not None and v < thr,
        ),
        (
            {"check": "stddev-check", "column": "b", "between": [0, abs(thr)]},
            statistics.stdev(b) if len(b) > 1 else None,
            lambda v: v is not None and 0 <= v <= abs(thr),
        ),
        (
            {"check": "null-count-check", "column": "a", "eq": p["count"][0]},
            sum(r["a"] is None for r in rows),
            lambda v: v == p["count"][0],
        ),
        ({"check": "distinct-count-check", "column": "g", "ge": 3}, len(set(g)), ge(3)),
        (  # a share of the rows (NULL a counts: the predicate says so), outside a band
            {
                "check": "rows-where-check",
                "where": "a IS NULL OR a > 3",
                "unit": "percent",
                "not-between": [lo * 2.5, hi * 2.5],
            },
            100 * sum(r["a"] is None or r["a"] > 3 for r in rows) / n if n else 0.0,
            lambda v: not lo * 2.5 <= v <= hi * 2.5,
        ),
        ({"check": "rows-where-check", "ne": lo}, float(n), lambda v: v != lo),
        (
            {"check": "sql-metric-check", "query": "SELECT count(DISTINCT g) FROM {{ input_view }}", "ne": 3},
            float(len(set(g))),
            lambda v: v != 3,
        ),
    ]


def close(got: Any, want: Any) -> bool:
    if got is None or want is None:
        return got is want
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-6)


AGGREGATE_NAMES_COVERED_HERE = {
    "row-count-between-check",
    "row-count-min-check",
    "row-count-max-check",
    "row-count-exact-check",
    "completeness-ratio-check",
    "columns-are-complete-check",
    "freshness-check",
    "distinct-ratio-check",
    "unique-ratio-check",
    "unique-rows-check",
    "foreign-key-check",
    "mean-check",
    "sum-check",
    "min-check",
    "max-check",
    "stddev-check",
    "null-count-check",
    "distinct-count-check",
    "rows-where-check",
    "sql-metric-check",
}


def test_every_aggregate_check_is_covered_by_an_oracle() -> None:
    aggregates = {n for n, c in CheckConfigRegistry.items() if issubclass(c.check_class, BaseAggregateCheck)}
    # anomaly-check: its metrics are those of the checks above (the same classes); its decision has its own
    # hand-computed and property tests in tests/unit/test_anomaly.py; aggregate-check has its own oracle test
    # over every curated function (tests/spark/test_checks_aggregate_functions.py)
    from tests.spark.test_checks_statistics import STATISTICS_CHECK_NAMES

    statistics = {n for n in STATISTICS_CHECK_NAMES if n in aggregates}  # test_checks_statistics.py
    assert len(statistics) == 7
    assert aggregates == AGGREGATE_NAMES_COVERED_HERE | statistics | {
        "schema-check",
        "column-presence-check",
        "anomaly-check",
        "aggregate-check",
    }


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(raw_rows=st.lists(ROW, min_size=1, max_size=40), params=PARAMS)
@example(raw_rows=[], params={"ratio": 0.5, "count": [0, 0], "hours": 1, "threshold": 0, "ref_keys": []})
def test_aggregate_checks_match_the_oracle(spark, raw_rows, params) -> None:  # type: ignore[no-untyped-def]
    data = [(i, *r) for i, r in enumerate(raw_rows)]
    rows = [dict(zip(NAMES, r, strict=True)) for r in data]
    cases = metric_cases(params, rows)
    checks = [CheckFactory.from_dict({**cfg, "check-id": f"c{i}"}) for i, (cfg, _, _) in enumerate(cases)]
    assert {c.check_type for c in checks} == AGGREGATE_NAMES_COVERED_HERE
    df = spark.createDataFrame(data, SCHEMA)
    refs = {"ref": spark.createDataFrame([(k,) for k in params["ref_keys"]], "k int")}

    result = BatchDQEngine(CheckSet(checks)).run_batch(df, refs)
    by_id = {r.check_id: r for r in result.aggregate_results}
    wrong = {}
    for check, (cfg, want, accepts) in zip(checks, cases, strict=True):
        got = by_id[check.check_id]
        value = got.metrics["value"]
        if check.check_type == "distinct-count-check":  # approximate (HLL), exact at this size in practice
            ok = abs(value - want) <= max(1.0, 0.05 * want)
        else:
            ok = close(value, want)
        if not ok or got.passed != accepts(want):
            wrong[cfg["check"]] = (value, want, got.passed)
    assert not wrong, wrong


def test_the_multiplier_scales_a_classic_check_metric(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame([(1,), (1,), (2,), (3,)], "a int")
    check = CheckFactory.from_dict(
        {"check": "distinct-ratio-check", "check-id": "d", "column": "a", "min-ratio": 0.7}
    )
    plain = check.evaluate(df)
    halved = check.evaluate(df, multiplier=0.5)
    assert (plain.passed, plain.metrics["value"]) == (True, 0.75)
    assert (halved.passed, halved.metrics["adjusted"]) == (False, 0.375)
    assert check.details(halved) == "Distinct ratio of 'a' is 0.75 (x0.5 = 0.375); expected >= 0.7"


def test_schema_checks_see_the_data_columns_only_and_run_no_job(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(
        [(1, Decimal("2.50"), "x", [1])], "id bigint, amount decimal(10,2), note string, tags array<int>"
    )
    checks = CheckSet.from_dicts(
        [
            {"check": "null-check", "check-id": "id-present", "columns": ["id"]},
            {
                "check": "schema-check",
                "check-id": "exact",
                "expected-schema": {
                    "id": "long",
                    "amount": "decimal(10, 2)",
                    "note": "string",
                    "tags": "array",
                },
            },
            {
                "check": "schema-check",
                "check-id": "typed",
                "expected-schema": {"id": "int", "gone": "string"},
            },
            {
                "check": "schema-check",
                "check-id": "loose",
                "expected-schema": {"id": "bigint"},
                "strict": False,
            },
            {"check": "column-presence-check", "check-id": "present", "required-columns": ["id", "note"]},
            {"check": "column-presence-check", "check-id": "absent", "required-columns": ["id", "missing"]},
        ]
    )
    result = BatchDQEngine(checks, fail_levels=[]).run_batch(df)
    status = {r.check_id: r.status for r in result.aggregate_results}
    assert status == {
        "exact": "passed",
        "typed": "failed",
        "loose": "passed",
        "present": "passed",
        "absent": "failed",
    }
    typed = next(r for r in result.aggregate_results if r.check_id == "typed")
    assert typed.metrics == {
        "missing_columns": ["gone"],
        "type_mismatches": {"id": {"expected": "int", "actual": "bigint"}},
        "unexpected_columns": ["amount", "note", "tags"],
    }
    report = str(result.report())
    assert "Schema differs: missing column(s) gone; wrong type(s): id is bigint (expected int)" in report
    assert "Missing column(s): missing" in report


def test_unique_rows_over_all_columns_ignores_the_engine_columns(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame([(1, "a"), (1, "a"), (2, "b")], "id int, v string")
    checks = CheckSet.from_dicts(
        [
            {
                "check": "numeric-min-check",
                "check-id": "pos",
                "columns": ["id"],
                "min-value": 1,
                "inclusive": True,
            },
            {"check": "unique-rows-check", "check-id": "dups"},
        ]
    )
    result = BatchDQEngine(checks).run_batch(df)
    (dups,) = result.aggregate_results
    assert (dups.status, dups.metrics["value"], dups.metrics["columns"]) == ("failed", 2, ["id", "v"])
    assert "Columns 'id, v' have 2 duplicate rows in 1 group" in str(result.report())
