"""The Spark and Arrow forms of the row verdicts agree: which rows fail, which warn, their ``_dq_errors``, and
the counts (the grouped aggregation against the collected bitmask), on random rows across regimes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streaming_dq.compat.spark import to_arrow
from streaming_dq.config.check_set import CheckSet
from streaming_dq.engine.plan import ValidationPlan
from streaming_dq.engine.rules import ErrorEntry
from streaming_dq.profiles import HolidayProfile, RecurringProfile, check_id, tag

pytestmark = [pytest.mark.spark, pytest.mark.compat]  # compat: every Spark tier runs it too (#56)

CHECKS = [
    {"check": "null-check", "check-id": "a-present", "columns": ["a"]},
    {"check": "null-check", "check-id": "b-present", "columns": ["b"], "severity": "warning"},
    {"check": "numeric-min-check", "check-id": "a-min", "columns": ["a"], "min-value": 0, "tags": ["t"]},
    {"check": "numeric-max-check", "check-id": "b-max", "columns": ["b"], "max-value": 5, "tags": ["t"]},
    {"check": "row-count-min-check", "check-id": "volume", "min-count": 1},
]
PROFILES = [
    HolidayProfile("Holiday", date(2025, 12, 24), date(2025, 12, 26), rules=[tag("t").disable()]),
    RecurringProfile(
        "Weekend", weekdays=["sat", "sun"], rules=[check_id("a-present").set(severity="warning")]
    ),
]
START = datetime(2025, 12, 22, tzinfo=UTC)
rows = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(-3, 8)),
        st.one_of(st.none(), st.integers(-3, 8)),
        st.one_of(st.none(), st.integers(0, 24 * 8)),
        st.booleans(),
    ),
    max_size=40,
)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=rows, breached=st.sets(st.integers(0, 7), max_size=2), warned=st.sets(st.integers(0, 7), max_size=2)
)
def test_spark_and_arrow_forms_agree(spark: Any, data, breached, warned) -> None:
    plan = ValidationPlan(
        CheckSet.from_dicts(CHECKS), profiles=PROFILES, event_time="ts", malformed_column="_corrupt_record"
    )
    ordinals = set(plan.regimes.ordinals)
    breached = frozenset(breached & ordinals)
    agg_errors = {r: (ErrorEntry("row-count-min-check", "volume", "warning"),) for r in warned & ordinals}
    records = [
        (i, a, b, None if h is None else START + timedelta(hours=h), "{bad" if bad else None)
        for i, (a, b, h, bad) in enumerate(data)
    ]
    df = spark.createDataFrame(records, "i INT, a INT, b INT, ts TIMESTAMP, _corrupt_record STRING")
    annotated = plan.annotate(df)
    rules = plan.rules

    spark_rows = annotated.select(
        "i",
        rules.failed_column(breached).alias("failed"),
        rules.any_column("warn").alias("warn"),
        rules.errors_column(agg_errors).alias("errors"),
    ).collect()
    by_spark = {r.i: (r.failed, r.warn, [e.asDict() for e in r.errors]) for r in spark_rows}

    collected = rules.pack(to_arrow(annotated.select("i", *plan.collected_columns([]))))
    failed = rules.failed_mask(collected, breached)
    warn = rules.any_mask(collected, "warn")
    ids = collected.column("i").to_pylist()
    errors = rules.errors_array(collected, agg_errors).to_pylist()
    by_arrow = {
        i: (f, w, e) for i, f, w, e in zip(ids, failed.to_pylist(), warn.to_pylist(), errors, strict=True)
    }
    # the errors of passed rows are the warnings they carry: the same in both forms
    assert by_spark == by_arrow

    grouped = annotated.groupBy(*plan.layout.group_keys(windows=False)).agg(
        *plan.layout.grouped_columns(windows=False)
    )
    assert plan.layout.read_grouped(grouped.collect()).counts == rules.count(collected)
    assert int(pc.sum(pc.invert(failed)).as_py() or 0) == sum(1 for f, _, _ in by_spark.values() if not f)


def test_a_disabled_flag_never_fires_and_its_regime_has_no_entry(spark: Any) -> None:
    plan = ValidationPlan(CheckSet.from_dicts(CHECKS), profiles=PROFILES, event_time="ts")
    df = spark.createDataFrame(
        [(1, -1, 9, datetime(2025, 12, 24, 12, tzinfo=UTC))], "i INT, a INT, b INT, ts TIMESTAMP"
    )
    annotated = plan.annotate(df)
    [row] = annotated.select(
        plan.rules.errors_column().alias("e"), plan.rules.failed_column().alias("f")
    ).collect()
    assert (row.f, row.e) == (False, [])  # both tagged checks are off on the holiday
    table = plan.rules.pack(to_arrow(annotated.select(*plan.collected_columns([]))))
    assert table.column_names[-2:] == ["__dq_regime", "__dq_bits0"]
    assert pa.compute.sum(table.column("__dq_bits0")).as_py() == 0


@pytest.mark.parametrize("n_checks", [40, 70])
def test_many_flags_across_bitmask_words_agree(spark: Any, n_checks: int) -> None:
    """40 flags take one bitmask word, 70 take two (``_dq_errors`` by a per-row lookup then): every form still
    names the same fired checks, across regimes."""
    checks = [
        {"check": "numeric-min-check", "check-id": f"a-at-least-{k}", "columns": ["a"], "min-value": k,
         "tags": ["t"] if k % 3 == 0 else [], "severity": "warning" if k % 4 == 0 else "critical"}
        for k in range(n_checks)
    ]  # fmt: skip
    plan = ValidationPlan(CheckSet.from_dicts(checks), profiles=PROFILES, event_time="ts")
    records = [
        (i, a, START + timedelta(hours=h)) for i, (a, h) in enumerate([(a, 7 * a) for a in range(-1, 60)])
    ]
    annotated = plan.annotate(spark.createDataFrame(records, "i INT, a INT, ts TIMESTAMP"))
    rules = plan.rules
    assert rules.n_words == -(-n_checks // 62)
    spark_rows = annotated.select(
        "i", rules.failed_column().alias("failed"), rules.errors_column().alias("errors")
    ).collect()
    by_spark = {r.i: (r.failed, [e.asDict() for e in r.errors]) for r in spark_rows}
    raw = to_arrow(annotated.select("i", *plan.collected_columns([])))
    # the flags leave Spark as one list on the rows where one fired, and as NULL on every other row
    fired = dict(zip(raw.column("i").to_pylist(), raw.column("__dq_fired").to_pylist(), strict=True))
    clean = {i for i, (_, errors) in by_spark.items() if not errors}
    assert {i for i, flags in fired.items() if flags is None} == clean
    assert all(len(flags) == n_checks for flags in fired.values() if flags is not None)
    collected = rules.pack(raw)
    failed = rules.failed_mask(collected).to_pylist()
    errors = rules.errors_array(collected).to_pylist()
    by_arrow = dict(zip(collected.column("i").to_pylist(), zip(failed, errors, strict=True), strict=True))
    assert {i: (f, e) for i, (f, e) in by_arrow.items()} == by_spark
    assert max(len(e) for _, e in by_spark.values()) == n_checks  # a = -1 fires every check
    grouped = annotated.groupBy(*plan.layout.group_keys(windows=False)).agg(
        *plan.layout.grouped_columns(windows=False)
    )
    assert plan.layout.read_grouped(grouped.collect()).counts == rules.count(collected)
