"""Every row check against a plain-Python oracle on generated DataFrames with NULLs.

One hypothesis example is a whole DataFrame plus drawn check parameters; every row check of the catalog is
applied to it at once, its flags collected in one action and compared row by row with the oracle. The same
checks then run through BatchDQEngine: every row lands in exactly one of pass_df / fail_df, and the engine's
violation counts equal the oracle's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streaming_dq import BatchDQEngine, CheckSet
from streaming_dq.config.factory import CheckFactory
from streaming_dq.core.base_check import BaseRowCheck
from streaming_dq.exceptions import CheckEvaluationError, ConfigError

pytestmark = [pytest.mark.spark, pytest.mark.compat]  # compat: every Spark tier runs it too (#56)

SCHEMA = "id int, a int, b double, s string, d date, ds string, ts timestamp, k1 int, k2 int, fk int"
BASE = datetime(2024, 1, 1, tzinfo=UTC)
DAY0 = date(2024, 1, 1)
PATTERNS = ["^a", "X", "^[abc]*$", "b.c", "a{2}"]
WORDS = ["a", "ab", "", "X", "cab"]

Row = dict[str, Any]
Oracle = Callable[[Row], bool]


def nullable(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


ROW = st.tuples(
    nullable(st.integers(-5, 5)),
    nullable(st.integers(-100, 100).map(lambda v: v / 10)),
    nullable(st.text(alphabet="abcXY", max_size=6)),
    nullable(st.integers(0, 30).map(lambda n: DAY0 + timedelta(days=n))),
    nullable(
        st.one_of(
            st.integers(0, 30).map(lambda n: (DAY0 + timedelta(days=n)).isoformat()),
            st.sampled_from(["soon", "2024-02-30", "", "2024-13-01"]),
        )
    ),
    nullable(st.integers(0, 30 * 86400).map(lambda s: BASE + timedelta(seconds=s))),
    nullable(st.integers(0, 3)),
    nullable(st.integers(0, 3)),
    nullable(st.integers(0, 8)),
)

PARAMS = st.fixed_dictionaries(
    {
        "a_min": st.integers(-5, 5),
        "b_max": st.integers(-10, 10).map(float),
        "between": st.tuples(st.integers(-6, 6), st.integers(-6, 6)).map(sorted),
        "incl": st.booleans(),
        "incl2": st.tuples(st.booleans(), st.booleans()),
        "treat": st.booleans(),
        "days": st.tuples(st.integers(0, 30), st.integers(0, 30)).map(sorted),
        "secs": st.tuples(st.integers(0, 30 * 86400), st.integers(0, 30 * 86400)).map(sorted),
        "lengths": st.tuples(st.integers(0, 6), st.integers(0, 6)).map(sorted),
        "pattern": st.sampled_from(PATTERNS),
        "allowed_a": st.sets(st.integers(-5, 5), min_size=1),
        "allowed_s": st.sets(st.sampled_from(WORDS), min_size=1),
        "ref_keys": st.lists(nullable(st.integers(0, 8)), max_size=12),
    }
)


def guard(value: Any, treat: bool, fails: Callable[[Any], bool]) -> bool:
    """The comparison checks' NULL rule: NULL is not applicable unless treated as a failure."""
    return treat if value is None else bool(fails(value))


def below(v: Any, bound: Any, inclusive: bool) -> bool:
    return v < bound if inclusive else v <= bound


def above(v: Any, bound: Any, inclusive: bool) -> bool:
    return v > bound if inclusive else v >= bound


def outside(v: Any, lo: Any, hi: Any, inclusive: tuple[bool, bool]) -> bool:
    return below(v, lo, inclusive[0]) or above(v, hi, inclusive[1])


def parse_date(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def cases(p: dict[str, Any], rows: list[Row]) -> list[tuple[dict[str, Any], Oracle]]:
    """(check config, oracle) for every row check of the catalog, with the drawn parameters."""
    t, incl, incl2 = p["treat"], p["incl"], tuple(p["incl2"])
    lo, hi = p["between"]
    d_lo, d_hi = (DAY0 + timedelta(days=n) for n in p["days"])
    t_lo, t_hi = (BASE + timedelta(seconds=n) for n in p["secs"])
    ts_text = [x.replace(tzinfo=None).isoformat(sep=" ") for x in (t_lo, t_hi)]
    n_lo, n_hi = p["lengths"]
    keys = Counter((r["k1"], r["k2"]) for r in rows if r["k1"] is not None and r["k2"] is not None)
    refs = {k for k in p["ref_keys"] if k is not None}
    flags = re.IGNORECASE if incl else 0
    allowed_a, allowed_s = sorted(p["allowed_a"]), sorted(p["allowed_s"])

    def ds_fails(bound: date, inclusive: bool) -> Oracle:
        def fails(r: Row) -> bool:
            return guard(r["ds"], t, lambda v: (x := parse_date(v)) is None or below(x, bound, inclusive))

        return fails

    def key_fails(r: Row) -> bool:
        return r["k1"] is not None and r["k2"] is not None and keys[(r["k1"], r["k2"])] > 1

    def between_ab(r: Row) -> bool:
        return any(guard(r[c], t, lambda v: outside(v, lo, hi, incl2)) for c in ("a", "b"))

    def less_than(r: Row) -> bool:
        if r["a"] is None or r["b"] is None:
            return t
        return not (r["a"] <= r["b"] if incl else r["a"] < r["b"])

    def greater_than(r: Row) -> bool:
        if r["a"] is None or r["b"] is None:
            return t
        return not (r["b"] >= r["a"] * 2 if incl else r["b"] > r["a"] * 2)

    def expression(r: Row) -> bool:
        return t if r["a"] is None or r["b"] is None else not (r["a"] + 1 > r["b"])

    def contained(r: Row) -> bool:
        return guard(r["a"], t, lambda v: v not in allowed_a) or guard(
            r["s"], t, lambda v: v not in allowed_s
        )

    return [
        ({"check": "null-check", "columns": ["a"]}, lambda r: r["a"] is None),
        ({"check": "null-check", "columns": ["a", "s"]}, lambda r: r["a"] is None or r["s"] is None),
        ({"check": "not-null-check", "columns": ["s"]}, lambda r: r["s"] is not None),
        (
            {"check": "exactly-one-not-null-check", "columns": ["a", "b"]},
            lambda r: (r["a"] is not None) + (r["b"] is not None) != 1,
        ),
        (
            {"check": "numeric-min-check", "columns": ["a"], "min-value": p["a_min"], "inclusive": incl},
            lambda r: guard(r["a"], False, lambda v: below(v, p["a_min"], incl)),
        ),
        (
            {
                "check": "numeric-max-check",
                "columns": ["b"],
                "max-value": p["b_max"],
                "treat-null-as-failure": t,
            },
            lambda r: guard(r["b"], t, lambda v: above(v, p["b_max"], False)),
        ),
        (
            {
                "check": "numeric-between-check",
                "columns": ["a", "b"],
                "min-value": lo,
                "max-value": hi,
                "inclusive": list(incl2),
                "treat-null-as-failure": t,
            },
            between_ab,
        ),
        (
            {"check": "date-min-check", "columns": ["d"], "min-value": d_lo.isoformat(), "inclusive": incl},
            lambda r: guard(r["d"], False, lambda v: below(v, d_lo, incl)),
        ),
        (
            {"check": "date-min-check", "columns": ["ds"], "min-value": d_lo, "treat-null-as-failure": t},
            ds_fails(d_lo, False),
        ),
        (
            {"check": "date-max-check", "columns": ["d"], "max-value": d_hi.isoformat(), "inclusive": incl},
            lambda r: guard(r["d"], False, lambda v: above(v, d_hi, incl)),
        ),
        (
            {
                "check": "date-between-check",
                "columns": ["d"],
                "min-value": d_lo.isoformat(),
                "max-value": d_hi.isoformat(),
                "inclusive": list(incl2),
                "treat-null-as-failure": t,
            },
            lambda r: guard(r["d"], t, lambda v: outside(v, d_lo, d_hi, incl2)),
        ),
        (
            {"check": "timestamp-min-check", "columns": ["ts"], "min-value": ts_text[0], "inclusive": incl},
            lambda r: guard(r["ts"], False, lambda v: below(v, t_lo, incl)),
        ),
        (
            {
                "check": "timestamp-max-check",
                "columns": ["ts"],
                "max-value": ts_text[1],
                "treat-null-as-failure": t,
            },
            lambda r: guard(r["ts"], t, lambda v: above(v, t_hi, False)),
        ),
        (
            {
                "check": "timestamp-between-check",
                "columns": ["ts"],
                "min-value": ts_text[0],
                "max-value": ts_text[1],
                "inclusive": list(incl2),
            },
            lambda r: guard(r["ts"], False, lambda v: outside(v, t_lo, t_hi, incl2)),
        ),
        (
            {"check": "string-min-length-check", "column": "s", "min-length": n_lo, "inclusive": incl},
            lambda r: guard(r["s"], False, lambda v: below(len(v), n_lo, incl)),
        ),
        (
            {
                "check": "string-max-length-check",
                "column": "s",
                "max-length": n_hi,
                "treat-null-as-failure": t,
            },
            lambda r: guard(r["s"], t, lambda v: above(len(v), n_hi, True)),
        ),
        (
            {
                "check": "string-length-between-check",
                "column": "s",
                "min-length": n_lo,
                "max-length": n_hi,
                "inclusive": list(incl2),
            },
            lambda r: guard(r["s"], False, lambda v: outside(len(v), n_lo, n_hi, incl2)),
        ),
        (
            {
                "check": "regex-match-check",
                "column": "s",
                "pattern": p["pattern"],
                "ignore-case": incl,
                "treat-null-as-failure": t,
            },
            lambda r: guard(r["s"], t, lambda v: re.search(p["pattern"], v, flags) is None),
        ),
        (
            {
                "check": "is-contained-in-check",
                "allowed-values": {"a": allowed_a, "s": allowed_s},
                "treat-null-as-failure": t,
            },
            contained,
        ),
        (
            {"check": "is-not-contained-in-check", "forbidden-values": {"a": allowed_a}},
            lambda r: guard(r["a"], False, lambda v: v in allowed_a),
        ),
        (
            {
                "check": "column-less-than-check",
                "column": "a",
                "limit": "b",
                "inclusive": incl,
                "treat-null-as-failure": t,
            },
            less_than,
        ),
        (
            {
                "check": "column-greater-than-check",
                "column": "b",
                "limit": "a * 2",
                "inclusive": incl,
                "treat-null-as-failure": t,
            },
            greater_than,
        ),
        ({"check": "expression-check", "expression": "a + 1 > b", "treat-null-as-failure": t}, expression),
        ({"check": "unique-key-check", "columns": ["k1", "k2"]}, key_fails),
        (
            {
                "check": "foreign-key-row-check",
                "column": "fk",
                "reference-dataset": "ref",
                "reference-column": "ref_id",
            },
            lambda r: r["fk"] is not None and r["fk"] not in refs,
        ),
    ]


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(raw_rows=st.lists(ROW, min_size=20, max_size=60), params=PARAMS)
def test_row_checks_match_the_oracle_and_every_row_gets_one_verdict(spark, raw_rows, params) -> None:  # type: ignore[no-untyped-def]
    data = [(i, *r) for i, r in enumerate(raw_rows)]
    names = [f.strip().split()[0] for f in SCHEMA.split(",")]
    rows = [dict(zip(names, r, strict=True)) for r in data]
    pairs = cases(params, rows)
    checks = [
        CheckFactory.from_dict({**cfg, "check-id": f"c{i}-{cfg['check']}"})
        for i, (cfg, _) in enumerate(pairs)
    ]
    assert {c.check_type for c in checks} == ROW_CHECK_NAMES
    df = spark.createDataFrame(data, SCHEMA)
    refs = {"ref": spark.createDataFrame([(k,) for k in params["ref_keys"]], "ref_id bigint")}

    result = BatchDQEngine(CheckSet(checks)).run_batch(df, refs)
    result.df.persist()  # the views below then read the verdicts instead of recomputing them
    try:
        assert_verdicts(result, checks, pairs, rows)
    finally:
        result.df.unpersist()


def assert_verdicts(
    result: Any, checks: list[Any], pairs: list[tuple[dict[str, Any], Oracle]], rows: list[Row]
) -> None:
    # One action for every check's verdict on every row: all checks are critical, so each one that fired is
    # listed in the row's _dq_errors.
    collected = result.df.select("id", "_dq_passed", "_dq_errors").collect()
    assert len(collected) == len(rows)  # the foreign-key join never duplicates a row
    assert all(isinstance(r["_dq_passed"], bool) for r in collected)  # never NULL
    fired = {r["id"]: {e["check-id"] for e in r["_dq_errors"]} for r in collected}
    wrong: dict[str, list[Row]] = {}
    for check, (_, oracle) in zip(checks, pairs, strict=True):
        for row in rows:
            if (check.check_id in fired[row["id"]]) != oracle(row):
                wrong.setdefault(check.check_id, []).append(row)
    assert not wrong, {k: v[:3] for k, v in wrong.items()}

    expected_fail = {row["id"] for row in rows if any(oracle(row) for _, oracle in pairs)}
    assert {r["id"] for r in collected if not r["_dq_passed"]} == expected_fail
    n_pass, n_fail = result.pass_df().count(), result.fail_df().count()
    assert (n_pass + n_fail, n_fail) == (len(rows), len(expected_fail))
    violations = {r.check.check_id: r.violations for r in result.outcome.row_results}
    assert violations == {
        c.check_id: sum(oracle(r) for r in rows) for c, (_, oracle) in zip(checks, pairs, strict=True)
    }


ROW_CHECK_NAMES = {
    "null-check",
    "not-null-check",
    "exactly-one-not-null-check",
    "numeric-min-check",
    "numeric-max-check",
    "numeric-between-check",
    "date-min-check",
    "date-max-check",
    "date-between-check",
    "timestamp-min-check",
    "timestamp-max-check",
    "timestamp-between-check",
    "string-min-length-check",
    "string-max-length-check",
    "string-length-between-check",
    "regex-match-check",
    "is-contained-in-check",
    "is-not-contained-in-check",
    "column-less-than-check",
    "column-greater-than-check",
    "expression-check",
    "unique-key-check",
    "foreign-key-row-check",
}


def test_the_oracle_test_covers_every_registered_row_check() -> None:
    from streaming_dq.config.registry import CheckConfigRegistry
    from tests.spark.test_checks_formats import NEW_ROW_CHECK_NAMES
    from tests.spark.test_checks_statistics import STATISTICS_CHECK_NAMES

    registered = {n for n, cfg in CheckConfigRegistry.items() if issubclass(cfg.check_class, BaseRowCheck)}
    # group-aggregate-check, mad-outlier-check and window-gaps-check: test_checks_aggregate_functions.py;
    # reference-match-check: test_checks_integrity.py
    others = {"group-aggregate-check", "mad-outlier-check", "window-gaps-check", "reference-match-check"}
    statistics = {n for n in STATISTICS_CHECK_NAMES if n in registered}  # test_checks_statistics.py
    assert len(statistics) == 7
    assert registered == ROW_CHECK_NAMES | NEW_ROW_CHECK_NAMES | others | statistics


def flags_of(spark, check: BaseRowCheck, rows: list[tuple[Any, ...]], schema: str) -> list[bool]:  # type: ignore[no-untyped-def]
    out = check.validate(spark.createDataFrame(rows, schema), column="__flag")
    return [r["__flag"] for r in out.orderBy("id").collect()]


def test_is_contained_in_over_several_columns_fails_when_any_column_is_outside(spark) -> None:  # type: ignore[no-untyped-def]
    check = CheckFactory.from_dict(
        {
            "check": "is-contained-in-check",
            "check-id": "known",
            "allowed-values": {"status": ["new", "paid"], "channel": ["web", "shop"]},
        }
    )
    rows = [(1, "new", "web"), (2, "new", "fax"), (3, "lost", "web"), (4, "lost", "fax"), (5, None, "shop")]
    assert flags_of(spark, check, rows, "id int, status string, channel string") == [
        False,
        True,
        True,
        True,
        False,
    ]


def test_unique_key_check_marks_all_copies_and_lets_incomplete_keys_pass(spark) -> None:  # type: ignore[no-untyped-def]
    check = CheckFactory.from_dict(
        {"check": "unique-key-check", "check-id": "uk", "columns": ["station", "ts"]}
    )
    rows = [(1, "s1", 10), (2, "s1", 10), (3, "s1", 11), (4, "s1", None), (5, "s1", None), (6, None, None)]
    assert flags_of(spark, check, rows, "id int, station string, ts int") == [
        True,
        True,
        False,
        False,
        False,
        False,
    ]
    assert check.violation_details(2, 6) == "Columns 'station, ts' have 2 duplicate rows (33.33%)"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"check": "expression-check", "expression": "amount >"}, "expression"),
        ({"check": "column-less-than-check", "column": "a", "limit": "b + * 2"}, "limit"),
        ({"check": "regex-match-check", "column": "s", "pattern": "[a-"}, "pattern"),
    ],
)
def test_invalid_sql_or_regex_is_a_config_error_naming_the_check(
    spark, raw: dict[str, Any], field: str
) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="check 'broken'") as info:
        CheckSet.from_dicts(
            [{"check": "null-check", "check-id": "ok", "columns": ["a"]}, {**raw, "check-id": "broken"}]
        )
    assert info.value.field_path == f"checks[1].{field}"


def test_a_check_id_equal_to_a_data_column_leaves_the_column_intact(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame([(1, 5), (2, -1)], "id int, qty int")
    checks = CheckSet.from_dicts(
        [{"check": "numeric-min-check", "check-id": "qty", "columns": ["qty"], "min-value": 0}]
    )
    result = BatchDQEngine(checks).run_batch(df)
    assert [tuple(r) for r in result.pass_df().collect()] == [(1, 5)]
    assert [(r["id"], r["qty"]) for r in result.fail_df().collect()] == [(2, -1)]


def test_an_expression_on_an_unknown_column_names_the_check_when_the_plan_is_built(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame([(1,)], "id int")
    checks = CheckSet.from_dicts([{"check": "expression-check", "check-id": "typo", "expression": "idd > 0"}])
    with pytest.raises(CheckEvaluationError, match="check 'typo'"):
        BatchDQEngine(checks).run_batch(df)
