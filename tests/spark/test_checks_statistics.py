"""The fourteen checks of the statistics, distribution, query, sequence, conversion and checksum families
against plain-Python oracles, NULLs (and NaN) included.

One hypothesis example is one batch of rows run once through the batch engine with every one of these checks
(and a reference dataset): each row check's failing rows and each aggregate check's value must equal what
Python computes from the same rows.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streaming_dq import BatchDQEngine, CheckSet
from streaming_dq.exceptions import CheckEvaluationError, ConfigError

pytestmark = pytest.mark.spark

SCHEMA = "id int, g string, t int, x double, y double, s string, card string, txt string"
#: Text whose int-ness Spark and the oracle agree on without doubt.
TEXTS = ["12", " 7 ", "-5", "0012", "x", "1e3", "2147483648", "", "3 4"]
CARDS = ["4111 1111 1111 1111", "4111-1111-1111-1112", "79927398713", "79927398710", "0", "12ab", "00"]
ROW = st.fixed_dictionaries(
    {
        "g": st.one_of(st.none(), st.sampled_from(["a", "b"])),
        "t": st.one_of(st.none(), st.integers(0, 6)),
        "x": st.one_of(st.none(), st.just(math.nan), st.integers(-30, 30).map(float)),
        "y": st.one_of(st.none(), st.integers(-10, 40).map(float)),
        "s": st.one_of(st.none(), st.sampled_from(["c0", "c1", "c2", "c3"])),
        "card": st.one_of(
            st.none(),
            st.sampled_from(CARDS),
            st.text("0123456789 -", min_size=1, max_size=21),
        ),
        "txt": st.one_of(st.none(), st.sampled_from(TEXTS)),
    }
)
REFERENCE = [("a", 10.0), ("a", 5.0), ("b", 3.0), (None, 1.0)]
EXPECTED = {"c0": 0.4, "c1": 0.3, "c2": 0.2, "c3": 0.1}

CHECKS: list[dict[str, Any]] = [
    {"check": "zscore-outlier-check", "check-id": "z", "column": "x", "k": 1.2},
    {"check": "regex-not-match-check", "check-id": "deny", "column": "s", "pattern": "^c[01]$"},
    {"check": "castable-check", "check-id": "int", "columns": ["txt"], "data-type": "int"},
    {"check": "luhn-check", "check-id": "luhn", "columns": ["card"]},
    {"check": "monotonic-check", "check-id": "mono", "column": "y", "order-by": "t", "group-by": ["g"]},
    {
        "check": "monotonic-check",
        "check-id": "down",
        "column": "y",
        "order-by": "t",
        "direction": "decreasing",
        "strict": True,
    },
    {
        "check": "sql-query-check",
        "check-id": "above-avg",
        "query": "SELECT id, y > avg(y) OVER () AS condition FROM {{ input_view }}",
        "merge-columns": ["id"],
    },
    {
        "check": "sql-query-check",
        "check-id": "many",
        "query": "SELECT count(*) > 6 AS condition FROM {{input_view}}",
    },
    {
        "check": "reference-aggregate-check",
        "check-id": "ref-sum",
        "function": "sum",
        "column": "y",
        "reference-dataset": "ref",
        "group-by": ["g"],
        "abs-tolerance": 0.5,
    },
    {"check": "variance-check", "check-id": "var", "column": "y", "ge": -1},
    {"check": "correlation-check", "check-id": "corr", "columns": ["x", "y"], "ge": -2},
    {"check": "quantile-check", "check-id": "p90", "column": "y", "quantile": 0.9, "ge": -1e9},
    {"check": "compliance-ratio-check", "check-id": "comp", "predicate": "s <> 'c0'", "min-ratio": 0.5},
    {
        "check": "in-distribution-check",
        "check-id": "dist",
        "column": "s",
        "expected": EXPECTED,
        "max-distance": 0.3,
    },
    {"check": "entropy-check", "check-id": "entropy", "column": "s", "ge": 1.0},
    {"check": "distinct-values-check", "check-id": "known", "column": "s", "subset-of": ["c0", "c1", "c2"]},
]

#: Every check this file's oracle covers (the coverage tests of test_checks_rows.py and
#: test_checks_aggregates.py count these in).
STATISTICS_CHECK_NAMES = {c["check"] for c in CHECKS}


def luhn_ok(value: str) -> bool:
    digits = re.sub("[ -]", "", value)
    if not re.fullmatch(r"[0-9]{2,19}", digits):
        return False
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def int_ok(text: str) -> bool:
    return bool(re.fullmatch(r"\s*[+-]?[0-9]+\s*", text)) and -(2**31) <= int(text) < 2**31


def row_oracles(rows: list[dict[str, Any]]) -> dict[str, set[int]]:
    """check id -> the ids that must fail."""
    out: dict[str, set[int]] = {}
    xs = [r["x"] for r in rows if r["x"] is not None and not math.isnan(r["x"])]
    if len(xs) > 1:
        m = sum(xs) / len(xs)
        sd = math.sqrt(sum((v - m) ** 2 for v in xs) / (len(xs) - 1))
    else:
        m, sd = 0.0, math.inf
    out["z"] = {
        r["id"] for r in rows if r["x"] is not None and (math.isnan(r["x"]) or abs(r["x"] - m) > 1.2 * sd)
    }
    out["deny"] = {r["id"] for r in rows if r["s"] in ("c0", "c1")}
    out["int"] = {r["id"] for r in rows if r["txt"] is not None and not int_ok(r["txt"])}
    out["luhn"] = {r["id"] for r in rows if r["card"] is not None and not luhn_ok(r["card"])}

    def against(r: dict[str, Any], group: bool, up: bool, strict: bool) -> bool:
        if r["y"] is None or r["t"] is None:
            return False
        before = [
            o["y"]
            for o in rows
            if o["t"] is not None
            and o["t"] < r["t"]
            and o["y"] is not None
            and (not group or o["g"] == r["g"])
        ]
        if not before:
            return False
        bar = max(before) if up else min(before)
        if up:
            return r["y"] <= bar if strict else r["y"] < bar
        return r["y"] >= bar if strict else r["y"] > bar

    out["mono"] = {r["id"] for r in rows if against(r, True, True, False)}
    out["down"] = {r["id"] for r in rows if against(r, False, False, True)}
    ys = [r["y"] for r in rows if r["y"] is not None]
    mean_y = sum(ys) / len(ys) if ys else None
    out["above-avg"] = {
        r["id"] for r in rows if r["y"] is not None and mean_y is not None and r["y"] > mean_y
    }
    out["many"] = {r["id"] for r in rows} if len(rows) > 6 else set()
    ref: dict[Any, float] = {}
    for g, y in REFERENCE:
        ref[g] = ref.get(g, 0.0) + y
    bad_groups = set()
    for g in {r["g"] for r in rows}:
        values = [r["y"] for r in rows if r["g"] == g and r["y"] is not None]
        ours = sum(values) if values else None
        if g not in ref or ours is None or abs(ours - ref[g]) > 0.5:
            bad_groups.add(g)
    out["ref-sum"] = {r["id"] for r in rows if r["g"] in bad_groups}
    return out


def aggregate_oracles(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """check id -> the value the check must report (None: undefined)."""
    ys = [r["y"] for r in rows if r["y"] is not None]
    n = len(ys)
    mean = sum(ys) / n if n else 0.0
    variance = sum((v - mean) ** 2 for v in ys) / (n - 1) if n > 1 else None
    pairs = [
        (r["x"], r["y"]) for r in rows if r["x"] is not None and not math.isnan(r["x"]) and r["y"] is not None
    ]
    corr = None
    if len(pairs) > 1:
        mx = sum(p[0] for p in pairs) / len(pairs)
        my = sum(p[1] for p in pairs) / len(pairs)
        sxx = sum((p[0] - mx) ** 2 for p in pairs)
        syy = sum((p[1] - my) ** 2 for p in pairs)
        sxy = sum((p[0] - mx) * (p[1] - my) for p in pairs)
        corr = sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None
    p90 = sorted(ys)[max(math.ceil(0.9 * n) - 1, 0)] if ys else None
    comp = sum(1 for r in rows if r["s"] is not None and r["s"] != "c0") / len(rows) if rows else 1.0
    counts = Counter(r["s"] for r in rows if r["s"] is not None)
    total = sum(counts.values())
    dist = None
    entropy = None
    if total:
        shares = {v: c / total for v, c in counts.items()}
        dist = 0.5 * sum(abs(shares.get(v, 0.0) - EXPECTED.get(v, 0.0)) for v in {*shares, *EXPECTED})
        entropy = -sum(p * math.log(p) for p in shares.values())
    known = float(len(set(counts) - {"c0", "c1", "c2"}))
    return {
        "var": variance,
        "corr": corr,
        "p90": p90,
        "comp": comp,
        "dist": dist,
        "entropy": entropy,
        "known": known,
    }


def close(got: Any, want: Any) -> bool:
    if want is None:
        return got is None or (isinstance(got, float) and math.isnan(got))
    return got is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)


@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raw=st.lists(ROW, min_size=0, max_size=30))
def test_every_new_check_matches_python(spark: Any, raw: list[dict[str, Any]]) -> None:
    rows = [{"id": i, **r} for i, r in enumerate(raw)]
    df = spark.createDataFrame(
        [(r["id"], r["g"], r["t"], r["x"], r["y"], r["s"], r["card"], r["txt"]) for r in rows], SCHEMA
    )
    ref = spark.createDataFrame(REFERENCE, "g string, y double")
    checks = CheckSet.from_dicts(CHECKS)
    result = BatchDQEngine(checks).run_batch(df, reference_datasets={"ref": ref})
    collected = result.df.select("id", "_dq_errors").collect()
    assert len(collected) == len(rows)
    fired: dict[str, set[int]] = {}
    for r in collected:
        for e in r["_dq_errors"]:
            fired.setdefault(e["check-id"], set()).add(r["id"])
    row_want = row_oracles(rows)
    wrong = {
        cid: (fired.get(cid, set()), ids) for cid, ids in row_want.items() if fired.get(cid, set()) != ids
    }
    assert not wrong

    values = {a.check_id: a.metrics.get("value") for a in result.outcome.aggregate_results}
    agg_want = aggregate_oracles(rows)
    wrong_values = {cid: (values.get(cid), v) for cid, v in agg_want.items() if not close(values.get(cid), v)}
    assert not wrong_values


def test_the_examples_and_the_errors_users_meet(spark: Any) -> None:
    rows = [(1, "a", 1, 1.0, 1.0, "c0", "4111111111111111", "1"), (2, "a", 2, 2.0, 5.0, "c9", None, "1.5x")]
    df = spark.createDataFrame(rows, SCHEMA)
    result = BatchDQEngine(
        CheckSet.from_dicts(
            [
                {"check": "distinct-values-check", "check-id": "dv", "column": "s", "equal-to": ["c0", "c1"]},
                {
                    "check": "in-distribution-check",
                    "check-id": "d",
                    "column": "s",
                    "expected": {"c0": 1.0},
                    "max-distance": 0.1,
                },
                {
                    "check": "sql-query-check",
                    "check-id": "neg",
                    "query": "SELECT id, y > 2 AS ok FROM {{ input_view }}",
                    "merge-columns": ["id"],
                    "condition-column": "ok",
                    "negate": True,
                },
            ]
        )
    ).run_batch(df)
    by_id = {a.check_id: a for a in result.outcome.aggregate_results}
    checks = CheckSet.from_dicts(
        [{"check": "distinct-values-check", "check-id": "dv", "column": "s", "equal-to": ["c0", "c1"]}]
    )
    text = next(iter(checks)).details(by_id["dv"])
    assert by_id["dv"].status == "failed" and "unexpected 'c9'" in text and "missing 'c1'" in text
    assert by_id["d"].status == "failed" and by_id["d"].metrics["value"] == pytest.approx(0.5)
    negated = {r["id"] for r in result.df.collect() if any(e["check-id"] == "neg" for e in r["_dq_errors"])}
    assert negated == {1}  # negate: y > 2 must hold

    with pytest.raises(ConfigError, match="add up to 1"):
        CheckSet.from_dicts(
            [
                {
                    "check": "in-distribution-check",
                    "check-id": "d",
                    "column": "s",
                    "expected": {"c0": 0.5},
                    "max-distance": 0.1,
                }
            ]
        )
    with pytest.raises(ConfigError, match="not a Spark SQL type"):
        CheckSet.from_dicts(
            [{"check": "castable-check", "check-id": "c", "columns": ["txt"], "data-type": "integr"}]
        )
    with pytest.raises(ConfigError, match="exactly one of subset-of"):
        CheckSet.from_dicts([{"check": "distinct-values-check", "check-id": "k", "column": "s"}])
    bad_query = CheckSet.from_dicts(
        [{"check": "sql-query-check", "check-id": "q", "query": "SELECT id FROM {{ input_view }}"}]
    )
    with pytest.raises(CheckEvaluationError, match="no column 'condition'"):
        BatchDQEngine(bad_query).run_batch(df)
    wide = CheckSet.from_dicts(
        [
            {
                "check": "distinct-values-check",
                "check-id": "k",
                "column": "id",
                "subset-of": [1],
                "max-values": 1,
            }
        ]
    )
    with pytest.raises(CheckEvaluationError, match="more than 1 distinct values"):
        BatchDQEngine(wide).run_batch(df)
