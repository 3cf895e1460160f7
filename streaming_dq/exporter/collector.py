"""The gate's Prometheus instruments and the collector that exposes them on one registry.

Every instrument is created with ``registry=None`` and exposed through one :class:`InstrumentCollector`
registered on the caller's :class:`~prometheus_client.CollectorRegistry`. That keeps the global registry
untouched and lets the collector drop client_python's ``*_created`` samples for this registry only
(``prometheus_client.disable_created_metrics()`` would switch them off process-wide). Prometheus 2.x ingests
``*_created`` as extra gauge series from the text format; they would double the counters' series for nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.metrics_core import Metric

#: Micro-batch durations from 0.1 s to 2 min.
BATCH_DURATION_BUCKETS: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)

_CREATED_SUFFIX = "_created"


def _counter(name: str, doc: str, *labels: str) -> Counter:
    return Counter(name, doc, ("gate", *labels), registry=None)


def _gauge(name: str, doc: str, *labels: str) -> Gauge:
    return Gauge(name, doc, ("gate", *labels), registry=None)


@dataclass(frozen=True)
class GateInstruments:
    """One gate's metric objects; docs/metrics.md documents each of them."""

    rows: Counter
    rows_in: Counter
    malformed_rows: Counter
    late_rows: Counter
    null_event_time_rows: Counter
    check_info: Gauge
    check_alert_max_share: Gauge
    check_violations: Counter
    check_failed: Gauge
    checks_skipped: Counter
    aggregate_value: Gauge
    aggregate_failures: Counter
    window_check_failed: Gauge
    window_value: Gauge
    window_results: Counter
    anomaly_observed: Gauge
    anomaly_expected: Gauge
    anomaly_band: Gauge
    anomaly_score: Gauge
    anomalies: Counter
    batches: Counter
    batch_duration: Histogram
    last_committed_batch_id: Gauge
    last_commit_timestamp: Gauge
    start_time: Gauge
    max_event_time: Gauge
    event_time_lag: Gauge
    profile_active: Gauge
    input_rows_per_second: Gauge
    processed_rows_per_second: Gauge
    trigger_duration: Gauge
    state_rows: Gauge
    state_memory: Gauge
    kafka_lag: Gauge
    source_messages: Counter
    table_files: Gauge
    keys: Gauge
    keys_oldest: Gauge
    keys_horizon: Gauge
    keys_late_rows: Counter
    maintenance_timestamp: Gauge
    maintenance_duration: Gauge
    maintenance_failures: Counter
    released_rows: Counter
    released_check_rows: Counter
    discarded_rows: Counter
    discarded_check_rows: Counter

    def all(self) -> tuple[MetricWrapperBase, ...]:
        """Return every instrument, in declaration order."""
        return tuple(getattr(self, f.name) for f in fields(self))


def build_instruments() -> GateInstruments:
    """Create a fresh, unregistered set of the gate's instruments."""
    return GateInstruments(
        rows=_counter(
            "streaming_dq_rows_total",
            "Rows written by the gate, by outcome (warned rows are also passed).",
            "outcome",
        ),
        rows_in=_counter("streaming_dq_rows_in_total", "Rows read by the gate in committed batches."),
        malformed_rows=_counter("streaming_dq_malformed_rows_total", "Malformed records sent to quarantine."),
        late_rows=_counter("streaming_dq_late_rows_total", "Rows older than the gate's watermark."),
        null_event_time_rows=_counter("streaming_dq_null_event_time_rows_total", "Rows without event time."),
        check_info=_gauge(
            "streaming_dq_check_info", "Configured checks (always 1).", "check", "check_type", "severity"
        ),
        check_alert_max_share=_gauge(
            "streaming_dq_check_alert_max_share",
            "The share of rows a row check may flag before the shipped alert rule pages (its alert.max-share).",
            "check",
        ),
        check_violations=_counter(
            "streaming_dq_check_violations_total", "Rows that violated a row check.", "check", "severity"
        ),
        check_failed=_gauge(
            "streaming_dq_check_failed", "1 if the check failed in the last committed batch.", "check", "kind"
        ),
        checks_skipped=_counter(
            "streaming_dq_checks_skipped_total", "Batches in which a profile disabled the check.", "check"
        ),
        aggregate_value=_gauge(
            "streaming_dq_aggregate_value", "Last metric value of an aggregate check.", "check", "value"
        ),
        aggregate_failures=_counter(
            "streaming_dq_aggregate_failures_total",
            "Batches whose aggregate check failed.",
            "check",
            "severity",
        ),
        window_check_failed=_gauge(
            "streaming_dq_window_check_failed", "1 if the last closed window failed.", "check", "window"
        ),
        window_value=_gauge(
            "streaming_dq_window_value", "Metric value of the last closed window.", "check", "window", "value"
        ),
        window_results=_counter(
            "streaming_dq_window_results_total", "Closed windows evaluated, by verdict.", "check", "status"
        ),
        anomaly_observed=_gauge(
            "streaming_dq_anomaly_observed",
            "Last judged window's value (after the profile multiplier).",
            "check",
        ),
        anomaly_expected=_gauge(
            "streaming_dq_anomaly_expected",
            "Last judged window's expected value (its baseline's centre).",
            "check",
        ),
        anomaly_band=_gauge(
            "streaming_dq_anomaly_band",
            "Last judged window's band (edge: low|high; absent: unbounded).",
            "check",
            "edge",
        ),
        anomaly_score=_gauge(
            "streaming_dq_anomaly_score",
            "How far off the last judged window was, in the band's unit.",
            "check",
        ),
        anomalies=_counter(
            "streaming_dq_anomalies_total", "Closed windows an anomaly check flagged.", "check", "severity"
        ),
        batches=_counter("streaming_dq_batches_total", "Micro-batches handled, by result.", "result"),
        batch_duration=Histogram(
            "streaming_dq_batch_duration_seconds",
            "Wall time the gate spent on a committed micro-batch.",
            ("gate",),
            buckets=BATCH_DURATION_BUCKETS,
            registry=None,
        ),
        last_committed_batch_id=_gauge("streaming_dq_last_committed_batch_id", "Last committed batch id."),
        last_commit_timestamp=_gauge(
            "streaming_dq_last_commit_timestamp_seconds", "Unix time of the last committed batch."
        ),
        start_time=_gauge("streaming_dq_start_time_seconds", "Unix time the gate's exporter started."),
        max_event_time=_gauge(
            "streaming_dq_max_event_time_seconds", "Largest event time committed, as Unix time."
        ),
        event_time_lag=_gauge(
            "streaming_dq_event_time_lag_seconds", "Now minus the largest event time committed."
        ),
        profile_active=_gauge(
            "streaming_dq_profile_active",
            "1 if the profile was active in the last committed batch.",
            "profile",
        ),
        input_rows_per_second=_gauge(
            "streaming_dq_input_rows_per_second", "Streaming query input rate (last progress)."
        ),
        processed_rows_per_second=_gauge(
            "streaming_dq_processed_rows_per_second", "Streaming query processing rate (last progress)."
        ),
        trigger_duration=_gauge(
            "streaming_dq_trigger_duration_seconds", "Streaming query trigger execution time (last progress)."
        ),
        state_rows=_gauge(
            "streaming_dq_state_rows", "Rows held in the query's state stores (last progress)."
        ),
        state_memory=_gauge(
            "streaming_dq_state_memory_bytes", "Memory used by the query's state stores (last progress)."
        ),
        kafka_lag=_gauge(
            "streaming_dq_kafka_consumer_lag_messages",
            "Messages of a Kafka topic not yet processed: latest offsets minus the last batch's (last progress).",
            "topic",
        ),
        table_files=_gauge(
            "streaming_dq_table_files",
            "Data files in one of the gate's tables after its last maintenance run (pass, quarantine, results, "
            "metrics).",
            "table",
        ),
        keys=_gauge(
            "streaming_dq_keys",
            "Rows of the gate's keys table (unique-key checks across batches) after its last batch.",
        ),
        keys_oldest=_gauge(
            "streaming_dq_keys_oldest_event_time_seconds",
            "Unix time of the oldest event date the keys table still holds.",
        ),
        source_messages=_counter(
            "streaming_dq_source_messages_total",
            "Messages of a registry-framed Kafka source per topic and schema id, and what became of them.",
            "topic",
            "schema_id",
            "verdict",
        ),
        keys_late_rows=_counter(
            "streaming_dq_keys_late_rows_total",
            "Rows too late to judge for duplicates across batches (quarantined or passed, as the check's late says).",
            "check",
        ),
        keys_horizon=_gauge(
            "streaming_dq_keys_horizon_seconds",
            "The longest horizon of the gate's unique-key checks across batches.",
        ),
        maintenance_timestamp=_gauge(
            "streaming_dq_last_maintenance_timestamp_seconds",
            "Unix time of the gate's last maintenance run (compaction, checkpoint, vacuum, roll-up).",
        ),
        maintenance_duration=_gauge(
            "streaming_dq_last_maintenance_duration_seconds", "How long the gate's last maintenance run took."
        ),
        maintenance_failures=_counter(
            "streaming_dq_maintenance_failures_total",
            "Maintenance runs that failed on a table (logged with the reason; the next run retries).",
            "table",
        ),
        released_rows=_counter(
            "streaming_dq_released_rows_total",
            "Quarantined rows a finished release appended to the pass table (from the results table).",
        ),
        released_check_rows=_counter(
            "streaming_dq_released_check_rows_total",
            "Released rows by a check they were quarantined for (a row may count for several).",
            "check",
        ),
        discarded_rows=_counter(
            "streaming_dq_discarded_rows_total",
            "Quarantined rows a finished discard deleted (from the results table).",
        ),
        discarded_check_rows=_counter(
            "streaming_dq_discarded_check_rows_total",
            "Discarded rows by a check they were quarantined for (a row may count for several).",
            "check",
        ),
    )


class InstrumentCollector:
    """Expose a fixed set of instruments on a registry, without their ``*_created`` samples.

    Args:
        instruments: The metric objects to expose; they must not be registered anywhere else.

    Example:
        >>> from prometheus_client import CollectorRegistry
        >>> registry = CollectorRegistry()
        >>> registry.register(InstrumentCollector(build_instruments().all()))
    """

    def __init__(self, instruments: Sequence[MetricWrapperBase]) -> None:
        self._instruments = tuple(instruments)

    def collect(self) -> Iterator[Metric]:
        """Yield each instrument's family with the ``*_created`` samples removed."""
        for instrument in self._instruments:
            for family in instrument.collect():
                family.samples = [s for s in family.samples if not s.name.endswith(_CREATED_SUFFIX)]
                yield family

    def describe(self) -> Iterator[Metric]:
        """Yield the families' names and types so the registry can refuse duplicates."""
        for instrument in self._instruments:
            yield from instrument.describe()
