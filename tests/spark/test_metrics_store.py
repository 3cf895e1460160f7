"""Window state inputs riding on the batch's single Spark job (``validate_to_arrow(extra_columns=...)``), their
window states, and the per-batch states of the plan's observable checks written to the Delta metrics store."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from streaming_dq.checks.count import RowCountMinCheck
from streaming_dq.core.base_check import ObservableAggregateCheck
from streaming_dq.core.scope import WindowScope
from streaming_dq.engine.plan import ValidationPlan
from streaming_dq.engine.validate import validate_to_arrow
from streaming_dq.metrics.accumulator import WindowAccumulator
from streaming_dq.metrics.calendar import max_event_time, window_bounds
from streaming_dq.metrics.store import MetricsStore
from streaming_dq.metrics.window_states import EVENT_TIME_COLUMN, batch_window_states, window_state_columns
from streaming_dq.states import CountState
from streaming_dq.states.keyed import ROWS_STATE
from streaming_dq.states.spec import StateSpec

pytestmark = pytest.mark.spark

BERLIN = "Europe/Berlin"
DAY = WindowScope(window="1 day")


class _Metric(ObservableAggregateCheck):
    def accepts(self, value: float | None) -> bool:
        return value is not None


class MeanAmount(_Metric):
    check_type = "mean-check"

    def state_specs(self) -> dict[str, StateSpec]:
        return {
            "amount": StateSpec("moments", F.col("amount")),
            "present": StateSpec("count", F.col("amount").isNotNull()),
        }

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        return states["amount"].value


class DistinctUsers(_Metric):
    check_type = "distinct-check"

    def state_specs(self) -> dict[str, StateSpec]:
        return {"users": StateSpec("hll", F.col("user"))}

    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        return states["users"].value


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


ROWS = [
    (utc(2025, 3, 29, 22, 30), 10.0, "a"),  # 23:30 local, March 29th
    (utc(2025, 3, 29, 23, 30), 20.0, "a"),  # 00:30 local, March 30th (a 23-hour day)
    (utc(2025, 3, 30, 12, 0), None, "b"),
    (utc(2025, 3, 30, 21, 59), 40.0, "c"),  # 23:59 CEST, still March 30th
    (utc(2025, 3, 30, 22, 0), 50.0, None),  # 00:00 local, March 31st
    (None, 60.0, "d"),
]


def test_window_state_columns_ride_on_the_one_job_and_group_by_local_day(spark: Any, tmp_path: Path) -> None:
    df = spark.createDataFrame(ROWS, "ts timestamp, amount double, user string")
    window_checks = [
        RowCountMinCheck("orders-per-day", min_count=2, scope=DAY),
        MeanAmount("basket-mean", scope=DAY),
        DistinctUsers("users-per-day", scope=DAY),
    ]
    batch_checks = [RowCountMinCheck("rows", min_count=1), DistinctUsers("users")]
    plan = ValidationPlan([*window_checks, *batch_checks], event_time="ts", timezone=BERLIN)
    assert plan.window_checks == window_checks

    validation = validate_to_arrow(plan, df, extra_columns=window_state_columns(plan.window_checks, "ts"))
    extra = validation.extra_columns
    assert extra.num_rows == len(ROWS) and EVENT_TIME_COLUMN in extra.column_names
    states = batch_window_states(plan.window_checks, extra, timezone=BERLIN)

    day = lambda y, m, d: window_bounds(utc(y, m, d, 12), timedelta(days=1), BERLIN)[0]  # noqa: E731
    mar29, mar30, mar31 = day(2025, 3, 29), day(2025, 3, 30), day(2025, 3, 31)
    counts = {(cid, start): s[ROWS_STATE].n for (cid, start), s in states.items() if cid == "orders-per-day"}
    assert counts == {("orders-per-day", mar29): 1, ("orders-per-day", mar30): 3, ("orders-per-day", mar31): 1,
                      ("orders-per-day", None): 1}  # fmt: skip
    mean30 = states[("basket-mean", mar30)]
    assert (mean30["amount"].n, mean30["amount"].mean, mean30["present"]) == (2, 30.0, CountState(2))
    assert mean30["amount"].m2 == pytest.approx(200.0)
    assert states[("users-per-day", mar30)]["users"].value == 3.0
    assert states[("users-per-day", mar31)]["users"].value == 0.0

    acc = WindowAccumulator("g", plan.window_checks, timezone=BERLIN)
    update = acc.update(0, states, max_event_time(extra.column(EVENT_TIME_COLUMN)))
    assert [(w.check_id, w.window_start, w.raw_value) for w in update.closed] == [
        ("basket-mean", mar29, 10.0), ("orders-per-day", mar29, 1.0), ("users-per-day", mar29, 1.0),
        ("basket-mean", mar30, 30.0), ("orders-per-day", mar30, 3.0), ("users-per-day", mar30, 3.0),
    ]  # fmt: skip

    store = MetricsStore(tmp_path / "metrics")
    rows = store.records_for_batch(
        gate="g", app_id="g-q", batch_id=0, states=validation.decision.states,
        check_types={c.check_id: c.check_type for c in plan.observable_checks}, update=update,
    )  # fmt: skip
    assert store.write(rows, "g-q", 0)
    assert not store.write(rows, "g-q", 0)
    lifetime = MetricsStore(tmp_path / "metrics").lifetime("g")
    assert lifetime["rows"] == {"rows": CountState(6)}
    assert lifetime["users"]["users"].value == 4.0  # a Spark hll_sketch_agg sketch, read back from Delta
    assert lifetime["orders-per-day"][ROWS_STATE] == CountState(6)
    assert lifetime["basket-mean"]["amount"].n == 5
