"""``aggregate-check`` and ``group-aggregate-check``: every curated function against a plain-Python oracle.

One hypothesis example is a batch of (group, value, flag) rows with NULLs; every function's value as the
check reports it equals the Python computation (``statistics``, hand-written moments and percentiles), with
and without a row filter; a per-group check fails exactly the rows of the groups Python says fail.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streaming_dq import BatchDQEngine, CheckSet
from streaming_dq.checks.aggregate import FUNCTIONS
from streaming_dq.config.factory import CheckFactory
from streaming_dq.exceptions import ConfigError

pytestmark = pytest.mark.spark

SCHEMA = "id int, g string, x double, flag boolean"
ROW = st.tuples(
    st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
    st.one_of(st.none(), st.integers(-20, 20).map(float)),
    st.one_of(st.none(), st.booleans()),
)


def moments(xs: list[float]) -> tuple[float, float, float]:
    n = len(xs)
    mean = sum(xs) / n
    m2 = sum((x - mean) ** 2 for x in xs) / n
    m3 = sum((x - mean) ** 3 for x in xs) / n
    m4 = sum((x - mean) ** 4 for x in xs) / n
    return m2, m3, m4


def percentile(xs: list[float], p: float) -> float:
    s = sorted(xs)
    pos = p * (len(s) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def oracle(function: str, rows: list[dict[str, Any]], p: float) -> Any:
    """The function over ``rows`` (None: undefined); ``mode`` returns the set of most frequent values."""
    xs = [r["x"] for r in rows if r["x"] is not None]
    if function == "count":
        return float(len(xs))
    if function == "count-if":
        return float(sum(1 for r in rows if r["flag"] is True))
    if function in ("count-distinct", "approx-count-distinct"):
        return float(len(set(xs)))
    if function == "sum":
        return float(sum(xs)) if xs else None
    if not xs:
        return None
    n = len(xs)
    m2, m3, m4 = moments(xs)
    sample = {"stddev": 0.5, "stddev-samp": 0.5, "variance": 1.0, "var-samp": 1.0}
    if function in sample:
        if n < 2:
            return None
        var = m2 * n / (n - 1)
        return var ** sample[function]
    out: dict[str, Any] = {
        "avg": sum(xs) / n,
        "min": min(xs),
        "max": max(xs),
        "stddev-pop": math.sqrt(m2),
        "var-pop": m2,
        "median": statistics.median(xs),
        "skewness": m3 / m2**1.5 if m2 else None,
        "kurtosis": m4 / m2**2 - 3 if m2 else None,
        "percentile": percentile(xs, p),
        # the smallest value with at least p of the values at or below it
        "approx-percentile": sorted(xs)[max(math.ceil(p * n) - 1, 0)],
    }
    if function == "mode":
        counts = Counter(xs)
        top = max(counts.values())
        return {v for v, c in counts.items() if c == top}
    return out[function]


def same(got: Any, want: Any) -> bool:
    if isinstance(want, set):
        return got in want
    if want is None or got is None:
        return want is None and (got is None or (isinstance(got, float) and math.isnan(got)))
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)


@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raw=st.lists(ROW, max_size=40), p=st.sampled_from([0.1, 0.5, 0.9]), limit=st.integers(0, 6))
def test_every_function_matches_python_with_and_without_a_row_filter(spark, raw, p, limit) -> None:  # type: ignore[no-untyped-def]
    rows = [{"id": i, "g": g, "x": x, "flag": f} for i, (g, x, f) in enumerate(raw)]
    df = spark.createDataFrame([(r["id"], r["g"], r["x"], r["flag"]) for r in rows], SCHEMA)
    configs = []
    for function in FUNCTIONS:
        column = "flag" if function == "count-if" else "x"
        params = {"percentile": p} if "percentile" in function else None
        for filtered in (False, True):
            configs.append(
                {
                    "check": "aggregate-check",
                    "check-id": f"{function}{'-f' if filtered else ''}",
                    "function": function,
                    "column": column,
                    "ge": -1e18,  # the verdict is not the point here: the value is
                    **({"params": params} if params else {}),
                    **({"row-filter": "g = 'a'"} if filtered else {}),
                }
            )
    group = {
        "check": "group-aggregate-check",
        "check-id": "per-group",
        "function": "count",
        "column": "*",
        "group-by": ["g"],
        "le": limit,
    }
    checks = CheckSet.from_dicts([*configs, group])
    # every function in ONE job (the engine runs one job per aggregate-check; 40 per example is too slow
    # here): the very expression the check aggregates, and the check's own reading of its value
    aggregates = [c for c in checks if c.check_id != "per-group"]
    row = df.agg(*[c.aggregate(c.row_filter).alias(c.check_id) for c in aggregates]).first()
    values = {c.check_id: row[c.check_id] for c in aggregates}
    wrong = {}
    for function in FUNCTIONS:
        for filtered, subset in ((False, rows), (True, [r for r in rows if r["g"] == "a"])):
            check_id = f"{function}{'-f' if filtered else ''}"
            want = oracle(function, subset, p)
            if function == "approx-count-distinct":  # HLL: hash collisions even among a few values
                if abs(values[check_id] - want) > max(2.0, 0.15 * want):
                    wrong[check_id] = (values[check_id], want)
                continue
            if not same(values[check_id], want):
                wrong[check_id] = (values[check_id], want)
    assert not wrong

    mad = CheckFactory.from_dict({"check": "mad-outlier-check", "check-id": "mad", "column": "x", "k": 1.5})
    engine_checks = [c for c in checks if c.check_id in ("per-group", "count", "avg-f")] + [mad]
    result = BatchDQEngine(CheckSet(engine_checks)).run_batch(df)
    got = {a.check_id: a.metrics["value"] for a in result.outcome.aggregate_results}
    assert got == {"count": values["count"], "avg-f": values["avg-f"]}
    sizes = Counter(r["g"] for r in rows)  # NULL group keys form a group of their own
    flagged = {
        r["id"] for r in result.df.collect() if any(e["check-id"] == "per-group" for e in r["_dq_errors"])
    }
    assert flagged == {r["id"] for r in rows if sizes[r["g"]] > limit}

    xs = [r["x"] for r in rows if r["x"] is not None]
    outliers = set()
    if xs:
        m = statistics.median(xs)
        spread = statistics.median([abs(x - m) for x in xs])
        outliers = {r["id"] for r in rows if r["x"] is not None and abs(r["x"] - m) > 1.5 * spread}
    collected = result.df.collect()
    assert {r["id"] for r in collected if any(e["check-id"] == "mad" for e in r["_dq_errors"])} == outliers


def test_an_undefined_metric_fails_the_batch_and_a_tolerance_widens_eq(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame([(1, "a", None, True), (2, "a", 10.0, False), (3, "b", 10.5, None)], SCHEMA)
    checks = CheckSet.from_dicts(
        [
            {
                "check": "aggregate-check",
                "check-id": "avg-a",
                "function": "avg",
                "column": "x",
                "row-filter": "id = 1",
                "ge": 0,
            },
            {
                "check": "aggregate-check",
                "check-id": "eq-abs",
                "function": "avg",
                "column": "x",
                "eq": 10,
                "abs-tolerance": 0.25,
            },
            {
                "check": "aggregate-check",
                "check-id": "eq-rel",
                "function": "max",
                "column": "x",
                "eq": 10,
                "rel-tolerance": 0.01,
            },
            {"check": "aggregate-check", "check-id": "ne", "function": "count", "column": "*", "ne": 3},
            {
                "check": "aggregate-check",
                "check-id": "p50",
                "function": "approx_percentile",
                "column": "x",
                "params": {"percentile": 0.5},
                "between": [10, 10],
            },
        ]
    )
    result = BatchDQEngine(checks).run_batch(df)
    status = {a.check_id: a.status for a in result.outcome.aggregate_results}
    assert status == {
        "avg-a": "failed",
        "eq-abs": "passed",
        "eq-rel": "failed",
        "ne": "failed",
        "p50": "passed",
    }
    line = next(x for x in result.report().lines if x.check_id == "eq-abs")
    assert "Avg of 'x' is 10.25; expected = 10 (tolerance abs 0.25, rel 0)" in line.details


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"function": "avrg", "column": "x", "ge": 0}, "did you mean 'avg'"),
        ({"function": "avg", "column": "x"}, "exactly one comparator"),
        ({"function": "avg", "column": "*", "ge": 0}, "'*' is for function count only"),
        ({"function": "percentile", "column": "x", "ge": 0}, "params.percentile"),
        ({"function": "avg", "column": "x", "ge": 0, "params": {"percentile": 0.5}}, "takes no parameter"),
        ({"function": "avg", "column": "x", "ge": 0, "abs-tolerance": 1}, "are for eq and ne"),
    ],
)
def test_aggregate_config_errors(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        CheckSet.from_dicts([{"check": "aggregate-check", "check-id": "x", **raw}])


def test_window_gaps_check_flags_the_rows_before_each_empty_window(spark) -> None:  # type: ignore[no-untyped-def]
    """Per group, on a 1-hour grid: the rows of the last hour before an hour without rows fail."""
    import random
    from datetime import datetime, timedelta

    rng = random.Random(3)
    t0 = datetime(2025, 1, 1)
    rows = []
    for i in range(120):
        hour = rng.choice([0, 1, 2, 4, 5, 9, 10])  # gaps after 2 and after 5 (3, 6-8 empty)
        g = rng.choice(["a", "b", None])
        ts = None if i % 17 == 0 else t0 + timedelta(hours=hour, minutes=rng.randrange(60))
        rows.append((i, g, ts))
    df = spark.createDataFrame(rows, "id int, g string, ts timestamp")
    checks = CheckSet.from_dicts(
        [
            {
                "check": "window-gaps-check",
                "check-id": "gaps",
                "column": "ts",
                "window": "1 hour",
                "group-by": ["g"],
            },
            {
                "check": "window-gaps-check",
                "check-id": "all",
                "column": "ts",
                "window": "1 hour",
                "trailing": True,
            },
        ]
    )
    result = BatchDQEngine(checks).run_batch(df)
    got = {r["id"]: {e["check-id"] for e in r["_dq_errors"]} for r in result.df.collect()}
    assert len(got) == len(rows)

    def hour(ts: datetime) -> int:
        return int((ts - datetime(1970, 1, 1)).total_seconds() // 3600)

    per_group: dict[Any, set[int]] = {}
    for _, g, ts in rows:
        if ts is not None:
            per_group.setdefault(g, set()).add(hour(ts))
    every = set().union(*per_group.values())
    for i, g, ts in rows:
        hours = per_group.get(g, set())
        want_group = ts is not None and hour(ts) + 1 not in hours and hour(ts) < max(hours)
        # trailing: the last hour (2025) is long before now, so it is reported too
        want_all = ts is not None and (hour(ts) + 1 not in every)
        assert ("gaps" in got[i]) == want_group, (i, g, ts)
        assert ("all" in got[i]) == want_all, (i, g, ts)
