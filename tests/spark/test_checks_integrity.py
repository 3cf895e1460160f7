"""Referential-integrity checks: broadcast joins that never duplicate rows, and missing references."""

from __future__ import annotations

import pytest

from streaming_dq import BatchDQEngine, CheckSet
from streaming_dq.config.factory import CheckFactory
from streaming_dq.core.references import using_references
from streaming_dq.exceptions import CheckEvaluationError, MissingReferenceDatasetError

pytestmark = pytest.mark.spark

ORDERS = [(1, 10), (2, 11), (3, 12), (4, None), (5, 10)]
CUSTOMERS = [(10,), (10,), (10,), (11,), (None,), (13,)]  # duplicate keys on purpose


def fk(check: str = "foreign-key-row-check", **extra: str) -> dict[str, str]:
    return {
        "check": check,
        "check-id": "known-customer",
        "column": "customer_id",
        "reference-dataset": "customers",
        "reference-column": "id",
        **extra,
    }


def test_foreign_key_row_check_marks_absent_keys_without_duplicating_rows(spark) -> None:  # type: ignore[no-untyped-def]
    orders = spark.createDataFrame(ORDERS, "order_id int, customer_id int")
    customers = spark.createDataFrame(CUSTOMERS, "id string")  # another key type: cast to the key's type
    check = CheckFactory.from_dict(fk())
    with using_references({"customers": customers}):
        out = check.validate(orders, column="__flag")
    assert out.columns == ["order_id", "customer_id", "__flag"]
    assert "BroadcastHashJoin" in out._jdf.queryExecution().executedPlan().toString()
    assert sorted((r["order_id"], r["__flag"]) for r in out.collect()) == [
        (1, False),
        (2, False),
        (3, True),
        (4, False),
        (5, False),
    ]


def test_foreign_key_checks_through_the_engine(spark) -> None:  # type: ignore[no-untyped-def]
    orders = spark.createDataFrame(ORDERS, "order_id int, customer_id int")
    customers = spark.createDataFrame(CUSTOMERS, "id bigint")
    checks = CheckSet.from_dicts(
        [fk(), {**fk("foreign-key-check"), "check-id": "all-known", "severity": "warning"}]
    )
    result = BatchDQEngine(checks).run_batch(orders, {"customers": customers})
    assert [r["order_id"] for r in result.fail_df().collect()] == [3]
    assert result.summary().total_records == 5
    (aggregate,) = result.aggregate_results
    assert aggregate.status == "failed"
    assert (aggregate.metrics["value"], aggregate.metrics["row_count"]) == (1, 5)
    report = str(result.report())
    assert "Column 'customer_id' has 1 value missing from customers.id (20.00%)" in report
    assert "Rows whose 'customer_id' is not in customers.id is 1; expected 0" in report


def test_a_missing_reference_dataset_raises(spark) -> None:  # type: ignore[no-untyped-def]
    orders = spark.createDataFrame(ORDERS, "order_id int, customer_id int")
    row_check = CheckFactory.from_dict(fk())
    with (
        using_references({"other": orders}),
        pytest.raises(MissingReferenceDatasetError, match="'customers' was not supplied"),
    ):
        row_check.validate(orders)
    with pytest.raises(MissingReferenceDatasetError, match="customers"):
        BatchDQEngine(CheckSet.from_dicts([fk("foreign-key-check")])).run_batch(orders)


def test_a_missing_reference_dataset_raises_through_the_engine_for_row_checks(spark) -> None:  # type: ignore[no-untyped-def]
    orders = spark.createDataFrame(ORDERS, "order_id int, customer_id int")
    with pytest.raises(MissingReferenceDatasetError, match="customers"):
        BatchDQEngine(CheckSet.from_dicts([fk()])).run_batch(orders, {"other": orders})


def test_a_missing_reference_column_names_the_check(spark) -> None:  # type: ignore[no-untyped-def]
    orders = spark.createDataFrame(ORDERS, "order_id int, customer_id int")
    customers = spark.createDataFrame(CUSTOMERS, "customer int")
    check = CheckFactory.from_dict(fk("foreign-key-check"))
    with (
        using_references({"customers": customers}),
        pytest.raises(CheckEvaluationError, match=r"'known-customer'.*no column 'id'"),
    ):
        check.evaluate(orders)


def test_reference_match_check_against_a_python_comparison(spark) -> None:  # type: ignore[no-untyped-def]
    """Missing keys, several reference rows, differing values (NULL = NULL), tolerance and NULL keys."""
    batch = [
        (1, "a", 10.0, "x"),  # matches
        (2, "b", 10.0, "x"),  # amount differs beyond the tolerance
        (3, "c", 5.0, None),  # note NULL on both sides: equal
        (4, "d", 5.0, "y"),  # no reference row
        (5, "e", 1.0, "z"),  # two reference rows
        (None, "f", 1.0, "z"),  # NULL key: passes
        (6, "g", 7.04, "w"),  # within abs-tolerance 0.05
    ]
    reference = [(1, 10.0, "x"), (2, 12.0, "x"), (3, 5.0, None), (5, 1.0, "z"), (5, 1.0, "z"), (6, 7.0, "w")]
    df = spark.createDataFrame(batch, "id int, name string, amount double, note string")
    ref = spark.createDataFrame(reference, "ref_id bigint, amount double, note string")
    checks = CheckSet.from_dicts(
        [
            {
                "check": "reference-match-check",
                "check-id": "same-as-ledger",
                "columns": ["id"],
                "reference-dataset": "ledger",
                "reference-columns": ["ref_id"],
                "abs-tolerance": 0.05,
            },
            {
                "check": "reference-match-check",
                "check-id": "notes-only",
                "columns": ["id"],
                "reference-dataset": "ledger",
                "reference-columns": ["ref_id"],
                "compare-columns": ["note"],
                "treat-null-as-failure": True,
            },
        ]
    )
    result = BatchDQEngine(checks).run_batch(df, {"ledger": ref})
    rows = result.df.collect()
    assert len(rows) == len(batch)  # the reference never multiplies rows

    def oracle(row: tuple, compare: list[int], tol: float, null_fails: bool) -> bool:
        key = row[0]
        if key is None:
            return null_fails
        matches = [r for r in reference if r[0] == key]
        if len(matches) != 1:
            return True
        ref_values = {2: matches[0][1], 3: matches[0][2]}
        for i in compare:
            a, b = row[i], ref_values[i]
            if a is None or b is None:
                if (a is None) != (b is None):
                    return True
            elif a != b and not (isinstance(a, float) and abs(a - b) <= tol):
                return True
        return False

    by_name = {r["name"]: {e["check-id"] for e in r["_dq_errors"]} for r in rows}
    for row in batch:
        assert ("same-as-ledger" in by_name[row[1]]) == oracle(row, [2, 3], 0.05, False), row
        assert ("notes-only" in by_name[row[1]]) == oracle(row, [3], 0.0, True), row
    assert {n for n, e in by_name.items() if "same-as-ledger" in e} == {"b", "d", "e"}


def test_a_reference_spark_cannot_read_says_why_in_its_one_line(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """#42: `An error occurred while calling o633.load.` hid `No FileSystem for scheme "s3"`."""
    from streaming_dq.sink.references import (
        ReferenceDatasetUnavailableError,
        ReferenceResolver,
        ReferenceSpec,
    )

    resolver = ReferenceResolver(
        {"customers": ReferenceSpec("csv", "nofs://bucket/customers.csv", schema="customer_id STRING")}
    )
    with pytest.raises(ReferenceDatasetUnavailableError) as info:
        resolver.resolve(spark)
    (line,) = str(info.value).splitlines()
    assert line.startswith("reference dataset 'customers' cannot be read from nofs://bucket/customers.csv: ")
    assert 'No FileSystem for scheme "nofs"' in line, line
    assert "An error occurred while calling" not in line
