"""Per-check ``filter`` and ``tolerance`` on row checks, through BatchDQEngine and (once) a real stream.

The verdicts are compared with what the rule says in plain Python over the same rows; the gate test reads
the pass, quarantine and results tables back from disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from streaming_dq import BatchDQEngine, CheckSet
from streaming_dq.config.building import build_checks
from streaming_dq.config.factory import CheckFactory
from streaming_dq.core.tolerance import Tolerance
from streaming_dq.exceptions import CheckEvaluationError, ConfigError

pytestmark = pytest.mark.spark

SCHEMA = "id int, country string, amount int, k int"
# ids 0..9: DE rows 0-4 (amount NULL on 1 and 3), FR rows 5-9 (amount NULL on 6), country NULL on row 9
ROWS = [
    (0, "DE", 5, 1),
    (1, "DE", None, 1),
    (2, "DE", -1, 2),
    (3, "DE", None, 3),
    (4, "DE", 7, 4),
    (5, "FR", -2, 4),
    (6, "FR", None, 5),
    (7, "FR", 3, 6),
    (8, "FR", -4, 6),
    (9, None, None, 7),
]


def run(spark: Any, *configs: dict[str, Any]) -> Any:  # type: ignore[no-untyped-def]
    checks = [CheckFactory.from_dict({"check-id": f"c{i}", **c}) for i, c in enumerate(configs)]
    return BatchDQEngine(CheckSet(checks)).run_batch(spark.createDataFrame(ROWS, SCHEMA))


def verdicts(result: Any) -> dict[int, set[str]]:
    return {r["id"]: {e["check-id"] for e in r["_dq_errors"]} for r in result.df.collect()}


def test_a_filter_judges_only_the_rows_it_holds_for_and_a_null_filter_judges_nothing(spark) -> None:  # type: ignore[no-untyped-def]
    result = run(
        spark,
        {"check": "null-check", "columns": ["amount"], "filter": "country = 'DE'"},
        {"check": "numeric-min-check", "columns": ["amount"], "min-value": 0, "filter": "country <> 'DE'"},
        {"check": "unique-key-check", "columns": ["k"], "filter": "country = 'FR'"},  # a windowed check
        {"check": "null-check", "columns": ["amount"]},
    )
    got = verdicts(result)
    de_null = {i for i, c, a, _ in ROWS if c == "DE" and a is None}
    not_de_negative = {i for i, c, a, _ in ROWS if c is not None and c != "DE" and a is not None and a < 0}
    fr = [(i, k) for i, c, _, k in ROWS if c == "FR"]
    fr_dupes = {i for i, k in fr if sum(1 for _, k2 in fr if k2 == k) > 1}
    assert {i for i, e in got.items() if "c0" in e} == de_null == {1, 3}
    assert {i for i, e in got.items() if "c1" in e} == not_de_negative == {5, 8}  # row 9: filter NULL
    assert {i for i, e in got.items() if "c2" in e} == fr_dupes == {7, 8}  # k=4 repeats across countries only
    assert {i for i, e in got.items() if "c3" in e} == {1, 3, 6, 9}
    assert {r.check.check_id: r.violations for r in result.outcome.row_results} == {
        "c0": 2,
        "c1": 2,
        "c2": 2,
        "c3": 4,
    }
    assert result.pass_df().count() + result.fail_df().count() == len(ROWS)
    assert CheckFactory.from_dict(
        {"check": "null-check", "check-id": "x", "columns": ["a"], "filter": "b > 1"}
    ).description()["filter"] == ("b > 1")


def test_within_the_tolerance_rows_are_still_quarantined_and_the_check_passes(spark) -> None:  # type: ignore[no-untyped-def]
    # 4 NULL amounts of 10 rows
    result = run(
        spark,
        {"check": "null-check", "columns": ["amount"], "tolerance": {"max-fail-count": 4}},
        {"check": "null-check", "columns": ["amount"], "tolerance": {"max-fail-rate": 0.4}},
    )
    assert [(r.status, r.violations) for r in result.outcome.row_results] == [("passed", 4), ("passed", 4)]
    assert not result.outcome.breached
    assert {i for i, e in verdicts(result).items() if e} == {1, 3, 6, 9}
    assert result.fail_df().count() == 4
    line = next(x for x in result.report().lines if x.check_id == "c0")
    assert line.status == "passed" and "within the tolerance of at most 4 rows" in line.details


def test_above_the_tolerance_the_batch_fails_at_the_tolerance_severity(spark) -> None:  # type: ignore[no-untyped-def]
    critical = run(spark, {"check": "null-check", "columns": ["amount"], "tolerance": {"max-fail-rate": 0.3}})
    assert [r.status for r in critical.outcome.row_results] == ["failed"]
    assert critical.outcome.breached  # a fail level: every row of the batch goes to quarantine ...
    assert critical.pass_df().count() == 0 and critical.fail_df().count() == len(ROWS)
    assert all(e == {"c0"} for e in verdicts(critical).values())  # ... with the check as its reason
    line = next(x for x in critical.report().lines if x.check_id == "c0")
    assert "exceeded the tolerance of at most 30% of the rows" in line.details

    warned = run(
        spark,
        {
            "check": "null-check",
            "columns": ["amount"],
            "tolerance": {"max-fail-count": 3, "severity": "warning"},
        },
    )
    assert [r.status for r in warned.outcome.row_results] == ["failed"]
    assert not warned.outcome.breached  # only a warning on the batch: the NULL rows alone are quarantined
    assert warned.fail_df().count() == 4 and warned.pass_df().count() == 6
    assert warned.outcome.warning_records == 6  # every passing row carries the exceeded tolerance


def test_filter_and_tolerance_together_and_their_config_errors(spark) -> None:  # type: ignore[no-untyped-def]
    result = run(
        spark,
        {
            "check": "numeric-min-check",
            "columns": ["amount"],
            "min-value": 0,
            "filter": "country = 'FR'",
            "tolerance": {"max-fail-count": 1},
        },
    )
    assert [(r.status, r.violations) for r in result.outcome.row_results] == [("failed", 2)]
    assert result.fail_df().count() == len(ROWS)

    def error(**extra: Any) -> ConfigError:
        built, problems = build_checks([{"check-id": "x", **extra}], source="checks.yaml")
        assert not built and len(problems) == 1
        return problems[0]

    on_aggregate = error(check="row-count-min-check", **{"min-count": 1, "filter": "a > 1"})
    assert "checks.yaml: checks[0]" in str(on_aggregate) and "only row checks take a filter" in str(
        on_aggregate
    )
    assert "max-fail-rate or max-fail-count" in str(error(check="null-check", columns=["a"], tolerance={}))
    bad_rate = error(check="null-check", columns=["a"], tolerance={"max-fail-rate": 2})
    assert "checks[0].tolerance.max-fail-rate" in str(bad_rate)
    bad_sql = error(check="null-check", columns=["a"], filter="a >")
    assert bad_sql.field_path == "checks[0].filter" and "invalid Spark SQL expression" in str(bad_sql)
    assert Tolerance(max_fail_rate=0.5, max_fail_count=2).exceeded(3, 10)  # either bound
    assert not Tolerance(max_fail_rate=0.5, max_fail_count=2).exceeded(2, 10)

    with pytest.raises(CheckEvaluationError, match=r"'c0'.*filter 'region = 1'.*cannot be evaluated"):
        run(spark, {"check": "null-check", "columns": ["amount"], "filter": "region = 1"})
    with pytest.raises(CheckEvaluationError, match="filter 'amount \\+ 1' is int, not a predicate"):
        run(spark, {"check": "null-check", "columns": ["amount"], "filter": "amount + 1"})


def test_a_stream_through_the_gate_refuses_a_bad_filter_at_start_and_routes_by_filter_and_tolerance(
    spark, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from streaming_dq import QualityGate

    landing = tmp_path / "landing"
    landing.mkdir()
    spark.createDataFrame(ROWS, SCHEMA).coalesce(1).write.json(str(landing / "b0"))
    stream = spark.readStream.schema(SCHEMA).json(str(landing / "*"))

    def gate(*configs: dict[str, Any]) -> QualityGate:
        checks = [CheckFactory.from_dict({"check-id": f"c{i}", **c}) for i, c in enumerate(configs)]
        return QualityGate(
            "orders",
            CheckSet(checks),
            pass_table=str(tmp_path / "pass"),
            quarantine_table=str(tmp_path / "quarantine"),
            results_table=str(tmp_path / "results"),
        )

    bad = gate({"check": "null-check", "columns": ["amount"], "filter": "region = 'EU'"})
    with pytest.raises(
        CheckEvaluationError, match=r"'c0'.*filter .region = 'EU'. cannot be evaluated.*region"
    ):
        bad.start(stream, checkpoint_location=str(tmp_path / "cp-bad"))
    assert not (tmp_path / "pass").exists()  # refused before creating anything

    good = gate(
        {"check": "null-check", "columns": ["amount"], "filter": "country = 'DE'"},
        {
            "check": "numeric-min-check",
            "columns": ["amount"],
            "min-value": 0,
            "tolerance": {"max-fail-count": 3},
        },
    )
    query = good.start(stream, checkpoint_location=str(tmp_path / "cp"), trigger={"availableNow": True})
    query.awaitTermination()
    passed = DeltaTable(str(tmp_path / "pass")).to_pyarrow_table().to_pylist()
    quarantined = DeltaTable(str(tmp_path / "quarantine")).to_pyarrow_table().to_pylist()
    negative = {i for i, _, a, _ in ROWS if a is not None and a < 0}
    assert {r["id"] for r in quarantined} == {1, 3} | negative  # DE NULLs; the 3 negatives, within tolerance
    assert {r["id"] for r in passed} == set(range(10)) - {1, 3} - negative
    results = DeltaTable(str(tmp_path / "results")).to_pyarrow_table().to_pylist()
    status = {r["check_id"]: (r["status"], r["violations"]) for r in results}
    assert status["c0"] == ("failed", 2) and status["c1"] == ("passed", 3)
