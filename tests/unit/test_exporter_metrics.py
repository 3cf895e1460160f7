"""GateMetrics: what each BatchOutcome does to the gate's series (fresh registry per test, no JVM)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client import REGISTRY, CollectorRegistry

from streaming_dq.core.outcome import BatchOutcome, CheckOutcome, WindowOutcome
from streaming_dq.exporter import BATCH_DURATION_BUCKETS, CheckLabels, GateMetrics

GATE = "orders"
CHECKS = (
    CheckLabels("id_not_null", "null-check", "critical", "row"),
    CheckLabels("amount_range", "numeric-between-check", "warning", "row"),
    CheckLabels("order_total", "sum-between-check", "critical", "aggregate"),
    CheckLabels("daily_orders", "count-min-check", "critical", "window"),
)
PROFILES = ("christmas", "black-friday")
T0 = datetime(2024, 12, 24, 12, 0, tzinfo=UTC)

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


class FakeClock:
    """A settable Unix clock, so time-dependent series are tested without sleeping."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0.timestamp() + 60)


@pytest.fixture
def metrics(registry: CollectorRegistry, clock: FakeClock) -> GateMetrics:
    return GateMetrics(GATE, registry=registry, checks=CHECKS, profiles=PROFILES, clock=clock)


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, {"gate": GATE, **labels})


def samples(registry: CollectorRegistry) -> Samples:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in registry.collect()
        for s in family.samples
    }


def window(batch: int, status: str = "passed", raw: float = 900.0) -> WindowOutcome:
    start = T0 + timedelta(days=batch)
    return WindowOutcome(
        check_id="daily_orders",
        check_type="count-min-check",
        window="1 day",
        window_start=start,
        window_end=start + timedelta(days=1),
        severity="critical",
        status=status,  # type: ignore[arg-type]
        raw_value=raw,
        adjusted_value=raw * 2,
        multiplier=2.0,
    )


def committed(batch_id: int = 0, **changes: object) -> BatchOutcome:
    outcome = BatchOutcome(
        gate=GATE,
        batch_id=batch_id,
        status="committed",
        rows_in=100,
        rows_passed=90,
        rows_quarantined=10,
        rows_warned=4,
        rows_malformed=2,
        rows_late=3,
        rows_null_event_time=1,
        duration_seconds=0.7,
        committed_at=T0.timestamp() + batch_id,
        min_event_time=T0 - timedelta(minutes=5),
        max_event_time=T0 + timedelta(seconds=batch_id),
        active_profiles=("christmas",),
        checks=(
            CheckOutcome("id_not_null", "null-check", "row", "critical", "failed", violations=8),
            CheckOutcome("amount_range", "numeric-between-check", "row", "warning", "failed", violations=4),
            CheckOutcome(
                "order_total", "sum-between-check", "aggregate", "critical", "passed",
                raw_value=1000.0, adjusted_value=1500.0, multiplier=1.5, profiles=("christmas",),
            ),
            CheckOutcome("daily_orders", "count-min-check", "window", "critical", "provisional"),
        ),
        windows=(window(batch_id),),
    )  # fmt: skip
    return replace(outcome, **changes)  # type: ignore[arg-type]


def test_committed_batch_moves_rows_and_batch_counters(
    registry: CollectorRegistry, metrics: GateMetrics
) -> None:
    metrics.record_batch(committed(0))
    metrics.record_batch(committed(1))

    assert {
        outcome: value(registry, "streaming_dq_rows_total", outcome=outcome)
        for outcome in ("passed", "quarantined", "warned")
    } == {"passed": 180.0, "quarantined": 20.0, "warned": 8.0}
    assert [
        value(registry, name)
        for name in (
            "streaming_dq_rows_in_total",
            "streaming_dq_malformed_rows_total",
            "streaming_dq_late_rows_total",
            "streaming_dq_null_event_time_rows_total",
        )
    ] == [200.0, 4.0, 6.0, 2.0]
    assert {
        result: value(registry, "streaming_dq_batches_total", result=result)
        for result in ("committed", "skipped_replay", "failed")
    } == {"committed": 2.0, "skipped_replay": 0.0, "failed": 0.0}
    assert value(registry, "streaming_dq_last_committed_batch_id") == 1.0
    assert value(registry, "streaming_dq_last_commit_timestamp_seconds") == T0.timestamp() + 1


def test_skipped_replay_moves_only_the_replay_counter(
    registry: CollectorRegistry, metrics: GateMetrics
) -> None:
    metrics.record_batch(committed(0))
    before = samples(registry)

    metrics.record_batch(committed(0, status="skipped_replay"))

    after = samples(registry)
    replay_key = ("streaming_dq_batches_total", (("gate", GATE), ("result", "skipped_replay")))
    changed = {key: (before.get(key), after.get(key)) for key in before.keys() | after.keys()}
    changed = {key: pair for key, pair in changed.items() if pair[0] != pair[1]}
    assert changed == {replay_key: (0.0, 1.0)}


def test_replayed_batch_is_counted_once(registry: CollectorRegistry, metrics: GateMetrics) -> None:
    metrics.record_batch(committed(7))
    metrics.record_batch(committed(7, status="skipped_replay"))
    metrics.record_batch(committed(7, status="skipped_replay"))

    assert value(registry, "streaming_dq_rows_total", outcome="passed") == 90.0
    assert value(registry, "streaming_dq_batches_total", result="committed") == 1.0
    assert value(registry, "streaming_dq_batches_total", result="skipped_replay") == 2.0
    assert value(registry, "streaming_dq_batch_duration_seconds_count") == 1.0


def test_failure_counts_only_a_failed_batch(registry: CollectorRegistry, metrics: GateMetrics) -> None:
    before = samples(registry)

    metrics.record_failure(3, RuntimeError("delta write failed"))

    after = samples(registry)
    assert {k: v for k, v in after.items() if before.get(k) != v} == {
        ("streaming_dq_batches_total", (("gate", GATE), ("result", "failed"))): 1.0
    }


def test_series_count_does_not_grow_with_batches(registry: CollectorRegistry, metrics: GateMetrics) -> None:
    metrics.record_batch(committed(0))
    series_after_first = set(samples(registry))

    for batch_id in range(1, 50):
        metrics.record_batch(
            committed(batch_id, windows=(window(batch_id, "failed" if batch_id % 2 else "passed"),))
        )

    series = set(samples(registry))
    assert series == series_after_first
    label_values = {v for _, labels in series for _, v in labels}
    assert not label_values & {str(b) for b in range(50)}
    assert not [v for v in label_values if "2024" in v or "2025" in v]


def test_configured_checks_start_at_zero_for_their_kind(registry: CollectorRegistry) -> None:
    GateMetrics(GATE, registry=registry, checks=CHECKS, profiles=PROFILES)

    series = samples(registry)
    by_name: dict[str, set[tuple[tuple[str, str], ...]]] = {}
    for (name, labels), sample in series.items():
        if "check" in dict(labels):
            assert sample in (0.0, 1.0)
            by_name.setdefault(name, set()).add(tuple((k, v) for k, v in labels if k != "gate"))
    assert by_name == {
        "streaming_dq_check_info": {
            (("check", c.check_id), ("check_type", c.check_type), ("severity", c.severity)) for c in CHECKS
        },
        "streaming_dq_check_failed": {(("check", c.check_id), ("kind", c.kind)) for c in CHECKS},
        "streaming_dq_checks_skipped_total": {(("check", c.check_id),) for c in CHECKS},
        "streaming_dq_check_violations_total": {
            (("check", c), ("severity", s))
            for c in ("id_not_null", "amount_range")
            for s in ("critical", "warning")
        },
        "streaming_dq_aggregate_failures_total": {
            (("check", "order_total"), ("severity", s)) for s in ("critical", "warning")
        },
        "streaming_dq_window_results_total": {
            (("check", "daily_orders"), ("status", s)) for s in ("passed", "failed", "skipped")
        },
    }
    assert {p: value(registry, "streaming_dq_profile_active", profile=p) for p in PROFILES} == {
        "christmas": 0.0,
        "black-friday": 0.0,
    }


def test_plain_check_tuples_precreate_every_kind(registry: CollectorRegistry) -> None:
    GateMetrics(GATE, registry=registry, checks=[("c", "null-check", "critical")])

    names = {name for (name, labels) in samples(registry) if ("check", "c") in labels}
    assert names == {
        "streaming_dq_check_info",
        "streaming_dq_checks_skipped_total",
        "streaming_dq_check_violations_total",
        "streaming_dq_aggregate_failures_total",
        "streaming_dq_window_results_total",
    }


def test_checks_are_recorded_by_kind_and_effective_severity(
    registry: CollectorRegistry, metrics: GateMetrics
) -> None:
    failing_aggregate = CheckOutcome(
        "order_total", "sum-between-check", "aggregate", "warning", "failed",
        raw_value=10.0, adjusted_value=5.0, multiplier=0.5,
    )  # fmt: skip
    metrics.record_batch(committed(0))
    metrics.record_batch(committed(1, checks=(failing_aggregate,)))

    assert (
        value(registry, "streaming_dq_check_violations_total", check="id_not_null", severity="critical")
        == 8.0
    )
    assert (
        value(registry, "streaming_dq_check_violations_total", check="amount_range", severity="warning")
        == 4.0
    )
    assert value(registry, "streaming_dq_check_failed", check="id_not_null", kind="row") == 1.0
    assert value(registry, "streaming_dq_check_failed", check="order_total", kind="aggregate") == 1.0
    assert value(registry, "streaming_dq_check_failed", check="daily_orders", kind="window") == 0.0
    assert value(registry, "streaming_dq_aggregate_value", check="order_total", value="raw") == 10.0
    assert value(registry, "streaming_dq_aggregate_value", check="order_total", value="adjusted") == 5.0
    assert (
        value(registry, "streaming_dq_aggregate_failures_total", check="order_total", severity="warning")
        == 1.0
    )
    assert (
        value(registry, "streaming_dq_aggregate_failures_total", check="order_total", severity="critical")
        == 0.0
    )


def test_skipped_check_is_counted_and_not_failed(registry: CollectorRegistry, metrics: GateMetrics) -> None:
    skipped = CheckOutcome("id_not_null", "null-check", "row", "critical", "skipped", profiles=("christmas",))
    metrics.record_batch(committed(0))
    metrics.record_batch(committed(1, checks=(skipped,)))

    assert value(registry, "streaming_dq_checks_skipped_total", check="id_not_null") == 1.0
    assert value(registry, "streaming_dq_check_failed", check="id_not_null", kind="row") == 0.0
    assert (
        value(registry, "streaming_dq_check_violations_total", check="id_not_null", severity="critical")
        == 8.0
    )


def test_windows_export_the_last_closed_window(registry: CollectorRegistry, metrics: GateMetrics) -> None:
    windows = (
        window(2, "passed", raw=900.0),
        window(1, "failed", raw=100.0),
        window(3, "provisional", raw=1.0),
    )

    metrics.record_batch(committed(0, windows=windows))

    assert value(registry, "streaming_dq_window_check_failed", check="daily_orders", window="1 day") == 0.0
    assert (
        value(registry, "streaming_dq_window_value", check="daily_orders", window="1 day", value="raw")
        == 900.0
    )
    assert (
        value(registry, "streaming_dq_window_value", check="daily_orders", window="1 day", value="adjusted")
        == 1800.0
    )
    assert {
        status: value(registry, "streaming_dq_window_results_total", check="daily_orders", status=status)
        for status in ("passed", "failed", "skipped")
    } == {"passed": 1.0, "failed": 1.0, "skipped": 0.0}


def test_profile_flags_follow_the_last_committed_batch(
    registry: CollectorRegistry, metrics: GateMetrics
) -> None:
    def active() -> dict[str, float | None]:
        return {p: value(registry, "streaming_dq_profile_active", profile=p) for p in (*PROFILES, "new-year")}

    metrics.record_batch(committed(0, active_profiles=("christmas", "new-year")))
    assert active() == {"christmas": 1.0, "black-friday": 0.0, "new-year": 1.0}

    metrics.record_batch(committed(1, active_profiles=()))
    metrics.record_batch(committed(1, status="skipped_replay", active_profiles=("black-friday",)))
    assert active() == {"christmas": 0.0, "black-friday": 0.0, "new-year": 0.0}


def test_event_time_lag_grows_while_the_stream_is_stalled(
    registry: CollectorRegistry, metrics: GateMetrics, clock: FakeClock
) -> None:
    assert value(registry, "streaming_dq_event_time_lag_seconds") is None

    metrics.record_batch(committed(0, max_event_time=T0))
    assert value(registry, "streaming_dq_event_time_lag_seconds") == 60.0

    clock.now += 3600
    assert value(registry, "streaming_dq_event_time_lag_seconds") == 3660.0

    metrics.record_batch(committed(1, max_event_time=T0 - timedelta(hours=1)))  # older data never rewinds
    assert value(registry, "streaming_dq_max_event_time_seconds") == T0.timestamp()
    assert value(registry, "streaming_dq_event_time_lag_seconds") == 3660.0


def test_naive_event_time_is_read_as_utc(registry: CollectorRegistry, metrics: GateMetrics) -> None:
    metrics.record_batch(committed(0, max_event_time=T0.replace(tzinfo=None)))

    assert value(registry, "streaming_dq_max_event_time_seconds") == T0.timestamp()


def test_commit_time_falls_back_to_the_clock(
    registry: CollectorRegistry, metrics: GateMetrics, clock: FakeClock
) -> None:
    assert value(registry, "streaming_dq_last_commit_timestamp_seconds") is None
    assert value(registry, "streaming_dq_start_time_seconds") == clock.now

    clock.now += 5
    metrics.record_batch(committed(0, committed_at=0.0))

    assert value(registry, "streaming_dq_last_commit_timestamp_seconds") == clock.now


def test_batch_duration_histogram_covers_micro_batches(
    registry: CollectorRegistry, metrics: GateMetrics
) -> None:
    for batch_id, seconds in enumerate((0.05, 0.7, 45.0, 500.0)):
        metrics.record_batch(committed(batch_id, duration_seconds=seconds))

    assert BATCH_DURATION_BUCKETS[0] == 0.1 and BATCH_DURATION_BUCKETS[-1] == 120.0
    buckets = {
        le: value(registry, "streaming_dq_batch_duration_seconds_bucket", le=le)
        for le in ("0.1", "1.0", "60.0", "120.0", "+Inf")
    }
    assert buckets == {"0.1": 1.0, "1.0": 2.0, "60.0": 3.0, "120.0": 3.0, "+Inf": 4.0}
    assert value(registry, "streaming_dq_batch_duration_seconds_sum") == pytest.approx(545.75)


def test_progress_sets_query_gauges_and_keeps_them_on_missing_fields(
    registry: CollectorRegistry, metrics: GateMetrics
) -> None:
    metrics.record_progress(
        {
            "batchId": 4,
            "numInputRows": 200,
            "inputRowsPerSecond": 100.0,
            "processedRowsPerSecond": 250.5,
            "durationMs": {"triggerExecution": 1500, "addBatch": 1200},
            "stateOperators": [
                {"numRowsTotal": 10, "memoryUsedBytes": 2048},
                {"numRowsTotal": 5, "memoryUsedBytes": 1024},
            ],
        }
    )
    metrics.record_progress({"inputRowsPerSecond": math.nan, "durationMs": {}})

    assert {
        name: value(registry, name)
        for name in (
            "streaming_dq_input_rows_per_second",
            "streaming_dq_processed_rows_per_second",
            "streaming_dq_trigger_duration_seconds",
            "streaming_dq_state_rows",
            "streaming_dq_state_memory_bytes",
        )
    } == {
        "streaming_dq_input_rows_per_second": 100.0,
        "streaming_dq_processed_rows_per_second": 250.5,
        "streaming_dq_trigger_duration_seconds": 1.5,
        "streaming_dq_state_rows": 15.0,
        "streaming_dq_state_memory_bytes": 3072.0,
    }


def test_kafka_lag_per_topic_comes_from_the_source_offsets_of_the_progress(
    registry: CollectorRegistry, metrics: GateMetrics
) -> None:
    metrics.record_progress(
        {
            "sources": [
                {  # a Kafka source: offsets per topic and partition, as JSON text (Spark's form)
                    "endOffset": '{"payments": {"0": 120, "1": 80}, "refunds": {"0": 5}}',
                    "latestOffset": '{"payments": {"0": 150, "1": 80, "2": 10}, "refunds": {"0": 5}}',
                },
                {"endOffset": '{"logOffset": 3}', "latestOffset": '{"logOffset": 9}'},  # a file source
            ]
        }
    )
    lag = {
        s.labels["topic"]: s.value
        for family in registry.collect()
        for s in family.samples
        if s.name == "streaming_dq_kafka_consumer_lag_messages"
    }
    assert lag == {"payments": 40.0, "refunds": 0.0}  # 30 behind on p0, a new partition p2 with 10


def test_outcome_of_another_gate_is_refused(metrics: GateMetrics) -> None:
    with pytest.raises(
        ValueError, match="outcome of gate 'payments' recorded on the metrics of gate 'orders'"
    ):
        metrics.record_batch(committed(0, gate="payments"))


def test_one_gate_metrics_per_registry(registry: CollectorRegistry, metrics: GateMetrics) -> None:
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        GateMetrics("payments", registry=registry)


def test_nothing_global_and_no_created_series(registry: CollectorRegistry) -> None:
    global_names = {family.name for family in REGISTRY.collect()}

    metrics = GateMetrics(GATE, registry=registry, checks=CHECKS)
    metrics.record_batch(committed(0))

    assert {family.name for family in REGISTRY.collect()} == global_names
    assert [name for name, _ in samples(registry) if name.endswith("_created")] == []


@pytest.fixture(autouse=True)
def _no_leak() -> Iterator[None]:
    """Guard: no test may register on the process-wide registry."""
    before = {family.name for family in REGISTRY.collect()}
    yield
    assert {family.name for family in REGISTRY.collect()} == before


def test_released_and_discarded_rows_are_counted_by_gate_and_check() -> None:
    from prometheus_client import CollectorRegistry

    from streaming_dq.exporter import GateMetrics

    registry = CollectorRegistry()
    metrics = GateMetrics("orders", registry=registry)
    metrics.record_quarantine("release", {None: 3, "customer-known": 3, "amount-positive": 1})
    metrics.record_quarantine("release", {None: 1, "customer-known": 1})
    metrics.record_quarantine("discard", {None: 2, "amount-positive": 2})
    value = registry.get_sample_value
    assert value("streaming_dq_released_rows_total", {"gate": "orders"}) == 4
    assert value("streaming_dq_released_check_rows_total", {"gate": "orders", "check": "customer-known"}) == 4
    assert (
        value("streaming_dq_released_check_rows_total", {"gate": "orders", "check": "amount-positive"}) == 1
    )
    assert value("streaming_dq_discarded_rows_total", {"gate": "orders"}) == 2
    assert (
        value("streaming_dq_discarded_check_rows_total", {"gate": "orders", "check": "amount-positive"}) == 2
    )


def test_messages_per_schema_id_are_counted_and_the_ids_a_gate_labels_are_bounded(
    registry: CollectorRegistry, metrics: GateMetrics
) -> None:
    from streaming_dq.core.outcome import SchemaMessages
    from streaming_dq.exporter.metrics import MAX_SCHEMA_ID_LABELS

    name = "streaming_dq_source_messages_total"
    first = (
        SchemaMessages("flights", 7, "readable", 40),
        SchemaMessages("flights", 99, "unknown", 2),
        SchemaMessages("flights", None, "unframed", 1),
    )
    metrics.record_batch(committed(0, schemas=first))
    metrics.record_batch(committed(0, status="skipped_replay", schemas=first))  # a replay counts nothing
    metrics.record_batch(committed(1, schemas=(SchemaMessages("flights", 7, "readable", 5),)))
    assert value(registry, name, topic="flights", schema_id="7", verdict="readable") == 45
    assert value(registry, name, topic="flights", schema_id="99", verdict="unknown") == 2
    assert value(registry, name, topic="flights", schema_id="none", verdict="unframed") == 1
    # garbage naming random ids: past the bound, new ids are "other"; the ids already labelled stay
    garbage = tuple(
        SchemaMessages("flights", 1000 + i, "unknown", 1) for i in range(2 * MAX_SCHEMA_ID_LABELS)
    )
    metrics.record_batch(committed(2, schemas=(*garbage, SchemaMessages("flights", 7, "readable", 1))))
    ids = {labels["schema_id"] for family in registry.collect() for s in family.samples
           if s.name == name for labels in [s.labels]}  # fmt: skip
    assert len(ids - {"none", "other"}) == MAX_SCHEMA_ID_LABELS
    assert value(registry, name, topic="flights", schema_id="7", verdict="readable") == 46
    other = value(registry, name, topic="flights", schema_id="other", verdict="unknown")
    assert other == 2 * MAX_SCHEMA_ID_LABELS - (MAX_SCHEMA_ID_LABELS - 2)  # all but the 98 ids still free
