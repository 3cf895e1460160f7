"""engine/decision.decide is a pure function of the plan and one pass's values: tested here with no JVM.

The plan is built from real checks (building one creates no SparkContext); the aggregates are the typed values
a pass yields (engine/values.py), written by hand as the routers would read them from Spark or Arrow.
"""

from __future__ import annotations

import pytest
from pyspark import SparkContext

from streaming_dq.config.check_set import CheckSet
from streaming_dq.core.severity import Severity
from streaming_dq.engine.decision import decide
from streaming_dq.engine.plan import ValidationPlan
from streaming_dq.engine.values import BatchAggregates, RowCounts
from streaming_dq.exceptions import InternalError
from streaming_dq.states import CountState


def _plan(min_count: int, severity: str = "critical") -> ValidationPlan:
    checks = CheckSet.from_dicts(
        [
            {"check": "null-check", "check-id": "id-present", "columns": ["id"]},
            {
                "check": "row-count-min-check",
                "check-id": "enough",
                "min-count": min_count,
                "severity": severity,
            },
            {"check": "null-check", "check-id": "note-present", "columns": ["note"], "severity": "warning"},
        ]
    )
    return ValidationPlan(checks)


def _five_rows(rows: int = 5) -> BatchAggregates:
    """5 rows: flag 0 (id-present, critical) fired on 1, flag 1 (note-present, warning) on 2 others."""
    counts = RowCounts.of(rows={0: rows}, failed={0: 1}, warned={0: 2}, fired={(0, 0): 1, (1, 0): 2})
    return BatchAggregates(counts=counts, states={("enough", 0): {"rows": CountState(rows)}})


def test_row_verdicts_come_from_the_counts_alone() -> None:
    before = (
        SparkContext._active_spark_context
    )  # None in `make test-fast`; the shared session's in `make test`
    decision = decide(_plan(min_count=3), _five_rows())
    assert (decision.total, decision.failed_records, decision.passed_records, decision.warning_records) == (
        5,
        1,
        4,
        2,
    )
    by_id = {r.check.check_id: (r.status, r.violations, r.total) for r in decision.row_results}
    assert by_id == {"id-present": ("failed", 1, 5), "note-present": ("failed", 2, 5)}
    (aggregate,) = decision.aggregate_results
    assert (aggregate.check_id, aggregate.status) == ("enough", "passed")
    assert decision.breached == frozenset()
    assert SparkContext._active_spark_context is before  # nothing above started a JVM


def test_a_failed_fail_level_aggregate_fails_every_row_of_its_regime() -> None:
    decision = decide(_plan(min_count=10), _five_rows())
    (aggregate,) = decision.aggregate_results
    assert aggregate.status == "failed"
    assert decision.breached == frozenset({0})
    assert (decision.failed_records, decision.passed_records, decision.warning_records) == (5, 0, 0)
    assert [(e.check_id, e.severity) for e in decision.agg_errors[0]] == [("enough", "critical")]


def test_a_failed_warning_aggregate_warns_every_passing_row() -> None:
    decision = decide(_plan(min_count=10, severity="warning"), _five_rows())
    assert decision.aggregate_results[0].severity == Severity.WARNING
    assert decision.breached == frozenset()
    assert decision.warned_regimes == frozenset({0})
    assert (decision.failed_records, decision.passed_records, decision.warning_records) == (1, 4, 4)
    # the gate's warned rows are the row warnings' (#42: one batch warning showed every passed row as warned)
    assert decision.row_warning_records == 2
    assert decide(_plan(min_count=10), _five_rows()).row_warning_records == 0  # breached: no row passed


def test_an_empty_batch_judges_the_aggregates_on_empty_states() -> None:
    empty = BatchAggregates(counts=RowCounts.of(rows={}, failed={}, warned={}, fired={}))
    decision = decide(_plan(min_count=1), empty)
    assert decision.total == 0
    assert decision.aggregate_results[0].status == "failed"  # no row is fewer than one
    assert [r.status for r in decision.row_results] == ["passed", "passed"]


def test_a_classic_check_without_its_results_is_refused() -> None:
    plan = ValidationPlan(CheckSet.from_dicts([{"check": "unique-rows-check", "check-id": "unique"}]))
    assert [c.check_id for c in plan.classic_checks] == ["unique"]
    with pytest.raises(InternalError, match="classic"):
        decide(plan, _five_rows())
