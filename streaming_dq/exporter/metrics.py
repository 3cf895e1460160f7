"""Turn what the gate decided (:class:`BatchOutcome`) into Prometheus series for one gate.

Counters move only for committed batches: a ``skipped_replay`` outcome (a batch Spark replayed after every
target had already committed it) only counts itself in
``streaming_dq_batches_total{result="skipped_replay"}``, so a replayed batch is never counted twice.
Labels are bounded by the gate's configuration (gate, check ids, severities, window sizes, profile names):
no batch id, window start or data value ever becomes a label.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from prometheus_client import CollectorRegistry

from streaming_dq.core.listeners import OutcomeListener
from streaming_dq.core.outcome import BatchOutcome, CheckKind, CheckOutcome, SchemaMessages, WindowOutcome
from streaming_dq.exceptions import ConfigError
from streaming_dq.exporter.collector import InstrumentCollector, build_instruments

if TYPE_CHECKING:
    from streaming_dq.core.outcome import KeysState, MaintenanceReport

ROW_OUTCOMES = ("passed", "quarantined", "warned")
BATCH_RESULTS = ("committed", "skipped_replay", "failed")
SEVERITIES = ("critical", "warning")
WINDOW_STATUSES = ("passed", "failed", "skipped")
VALUE_KINDS = ("raw", "adjusted")
#: Schema ids a gate labels ``streaming_dq_source_messages_total`` with; later new ids count as ``other``.
MAX_SCHEMA_ID_LABELS = 100


class CheckLabels(NamedTuple):
    """A configured check, as the exporter labels it.

    A plain ``(check_id, check_type, severity)`` tuple is accepted wherever a ``CheckLabels`` is. Without a
    ``kind`` the exporter pre-creates the series of every kind for the check; with it, only that kind's.
    """

    check_id: str
    check_type: str
    severity: str
    kind: CheckKind | None = None
    alert_max_share: float | None = None  #: ``alert.max-share`` (or the gate's), for the shipped alert rule


def _epoch_seconds(moment: datetime) -> float:
    """Unix time of ``moment``; a naive datetime is taken as UTC (the gate's session time zone)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _finite(value: Any) -> float | None:
    """``value`` as a float when it is a finite number, else None (missing or NaN progress fields)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


class GateMetrics(OutcomeListener):
    """The Prometheus series of one quality gate, on a registry the caller owns: a listener of the gate's
    outcome feed (:mod:`~streaming_dq.core.listeners`).

    Args:
        gate: The gate's name (the ``gate`` label of every series).
        registry: Where the series are registered; never the global registry in library code.
        checks: The configured checks, ``(check_id, check_type, severity)`` or :class:`CheckLabels`; their
            counters are created at 0 so ``rate()`` and ``increase()`` see the first failure.
        profiles: The configured profile names; ``streaming_dq_profile_active`` starts at 0 for each.
        clock: Returns the current Unix time; used for the event-time lag, the start time and commits
            whose outcome carries no ``committed_at``.
        alongside: The ``GateMetrics`` of another gate already on ``registry``: this gate's series join its
            metric families (several gates, one ``/metrics``, told apart by the ``gate`` label).

    Raises:
        ValueError: ``registry`` already carries the gate metrics and ``alongside`` is not given.
        ConfigError: ``alongside`` is on another registry, or is of a gate with the same name.

    Example:
        >>> from prometheus_client import CollectorRegistry
        >>> registry = CollectorRegistry()
        >>> checks = [("id_not_null", "null-check", "critical")]
        >>> metrics = GateMetrics("orders", registry=registry, checks=checks)
        >>> metrics.record_batch(BatchOutcome(gate="orders", batch_id=0, status="committed", rows_in=10,
        ...                                   rows_passed=9, rows_quarantined=1))
        >>> registry.get_sample_value("streaming_dq_rows_total", {"gate": "orders", "outcome": "quarantined"})
        1.0
    """

    def __init__(
        self,
        gate: str,
        *,
        registry: CollectorRegistry,
        checks: Sequence[CheckLabels | tuple[str, str, str]] = (),
        profiles: Sequence[str] = (),
        clock: Callable[[], float] = time.time,
        alongside: GateMetrics | None = None,
    ) -> None:
        self.gate = gate
        self.registry = registry
        self._clock = clock
        self._lock = threading.Lock()
        self._max_event_time: float | None = None
        self._profiles: set[str] = set()
        if alongside is None:
            self._i = build_instruments()
            registry.register(InstrumentCollector(self._i.all()))
        elif alongside.registry is not registry:
            raise ConfigError(f"the metrics of gate {gate!r} and of {alongside.gate!r} are on two registries")
        elif alongside.gate == gate:
            raise ConfigError(f"two gates named {gate!r} on one metrics registry")
        else:
            self._i = alongside._i
        self._schema_labels: set[str] = set()
        self._create_gate_series()
        for check in checks:
            self._create_check_series(CheckLabels(*check))
        self._set_profiles(profiles, active=())

    def record_batch(self, outcome: BatchOutcome) -> None:
        """Count one micro-batch the gate finished; call it after the batch's commits.

        Args:
            outcome: What the gate did; a ``skipped_replay`` outcome only counts the replay.

        Raises:
            ValueError: The outcome belongs to another gate.
        """
        if outcome.gate != self.gate:
            raise ConfigError(
                f"outcome of gate {outcome.gate!r} recorded on the metrics of gate {self.gate!r}"
            )
        if outcome.status == "skipped_replay":
            self._i.batches.labels(self.gate, "skipped_replay").inc()
            return
        self._record_rows(outcome)
        for check in outcome.checks:
            self._record_check(check)
        self._record_windows(outcome.windows)
        self._set_profiles(outcome.active_profiles, active=outcome.active_profiles)
        self._record_commit(outcome)
        if outcome.maintenance is not None:
            self.record_maintenance(outcome.maintenance)
        if outcome.keys is not None:
            self._record_keys(outcome.keys)
        for messages in outcome.schemas:
            self._record_schema(messages)

    def _record_schema(self, m: SchemaMessages) -> None:
        """Messages per schema id. The ids a gate labels are bounded (:data:`MAX_SCHEMA_ID_LABELS`): garbage
        that happens to start with the magic byte names random ids, and each would be a series for good."""
        if m.schema_id is None:
            label = "none"
        elif str(m.schema_id) in self._schema_labels or len(self._schema_labels) < MAX_SCHEMA_ID_LABELS:
            label = str(m.schema_id)
            self._schema_labels.add(label)
        else:
            label = "other"
        self._i.source_messages.labels(self.gate, m.topic, label, m.verdict).inc(m.messages)

    def _record_keys(self, state: KeysState) -> None:
        i, gate = self._i, self.gate
        i.keys.labels(gate).set(state.keys)
        i.keys_horizon.labels(gate).set(state.horizon.total_seconds())
        for check, rows in state.late.items():
            i.keys_late_rows.labels(gate, check).inc(rows)
        if state.oldest is not None:
            oldest = datetime.combine(state.oldest, datetime.min.time(), UTC)
            i.keys_oldest.labels(gate).set(oldest.timestamp())

    def record_windows(self, windows: Iterable[WindowOutcome]) -> None:
        """Export window verdicts given outside a batch (``QualityGate.close_windows`` at the end of input)."""
        self._record_windows(windows)

    def record_maintenance(self, report: MaintenanceReport) -> None:
        """Export a maintenance run: files per table, when it ran, how long it took, failed tables."""
        i, gate = self._i, self.gate
        for table in report.tables:
            if table.error is not None:
                i.maintenance_failures.labels(gate, table.role).inc()
            else:
                i.table_files.labels(gate, table.role).set(table.files_after)
        i.maintenance_timestamp.labels(gate).set(report.started_at.timestamp())
        i.maintenance_duration.labels(gate).set(report.seconds)

    def record_quarantine(self, kind: str, counts: Mapping[str | None, int]) -> None:
        """Count a finished release (``kind = "release"``: rows released) or discard (``"discard"``: rows
        deleted): ``counts`` by check id the rows were quarantined for, None for the rows themselves."""
        i, gate = self._i, self.gate
        total, by_check = (
            (i.released_rows, i.released_check_rows)
            if kind == "release"
            else (i.discarded_rows, i.discarded_check_rows)
        )
        for check, n in counts.items():
            if check is None:
                total.labels(gate).inc(n)
            else:
                by_check.labels(gate, check).inc(n)

    def record_failure(self, batch_id: int, error: BaseException) -> None:
        """Count a micro-batch that raised before it committed (Spark will replay it).

        Args:
            batch_id: The failed batch (not used as a label; kept for the caller's symmetry and logs).
            error: Why it failed.
        """
        del batch_id, error  # bounded labels only: the failure is a count, the details belong in logs
        self._i.batches.labels(self.gate, "failed").inc()

    def record_progress(self, progress: Mapping[str, Any]) -> None:
        """Export a streaming query's progress (a ``StreamingQueryProgress`` or its JSON as a dict).

        Missing or non-finite fields leave the previous value in place.

        Args:
            progress: Reads ``inputRowsPerSecond``, ``processedRowsPerSecond``,
                ``durationMs.triggerExecution`` and the ``stateOperators``' ``numRowsTotal`` and
                ``memoryUsedBytes``.
        """
        i, gate = self._i, self.gate
        updates = (
            (i.input_rows_per_second, _finite(progress.get("inputRowsPerSecond"))),
            (i.processed_rows_per_second, _finite(progress.get("processedRowsPerSecond"))),
            (
                i.trigger_duration,
                _milliseconds_to_seconds((progress.get("durationMs") or {}).get("triggerExecution")),
            ),
        )
        for gauge, value in updates:
            if value is not None:
                gauge.labels(gate).set(value)
        operators = progress.get("stateOperators")
        if operators is not None:
            i.state_rows.labels(gate).set(_sum_field(operators, "numRowsTotal"))
            i.state_memory.labels(gate).set(_sum_field(operators, "memoryUsedBytes"))
        for topic, lag in kafka_lag(progress).items():
            i.kafka_lag.labels(gate, topic).set(lag)

    # -- series creation -------------------------------------------------------------------------------

    def _create_gate_series(self) -> None:
        i, gate = self._i, self.gate
        for outcome in ROW_OUTCOMES:
            i.rows.labels(gate, outcome)
        for metric in (i.rows_in, i.malformed_rows, i.late_rows, i.null_event_time_rows, i.batch_duration):
            metric.labels(gate)
        for result in BATCH_RESULTS:
            i.batches.labels(gate, result)
        i.start_time.labels(gate).set(self._clock())

    def _create_check_series(self, check: CheckLabels) -> None:
        i, gate, cid, kind = self._i, self.gate, check.check_id, check.kind
        i.check_info.labels(gate, cid, check.check_type, check.severity).set(1)
        if check.alert_max_share is not None:
            i.check_alert_max_share.labels(gate, cid).set(check.alert_max_share)
        i.checks_skipped.labels(gate, cid)
        if kind is not None:
            i.check_failed.labels(gate, cid, kind).set(0)
        for severity in SEVERITIES:
            if kind in (None, "row"):
                i.check_violations.labels(gate, cid, severity)
            if kind in (None, "aggregate"):
                i.aggregate_failures.labels(gate, cid, severity)
        if kind in (None, "window"):
            for status in WINDOW_STATUSES:
                i.window_results.labels(gate, cid, status)
        if check.check_type == "anomaly-check":
            for severity in SEVERITIES:
                i.anomalies.labels(gate, cid, severity)

    # -- recording -------------------------------------------------------------------------------------

    def _record_rows(self, outcome: BatchOutcome) -> None:
        i, gate = self._i, self.gate
        i.rows.labels(gate, "passed").inc(outcome.rows_passed)
        i.rows.labels(gate, "quarantined").inc(outcome.rows_quarantined)
        i.rows.labels(gate, "warned").inc(outcome.rows_warned)
        i.rows_in.labels(gate).inc(outcome.rows_in)
        i.malformed_rows.labels(gate).inc(outcome.rows_malformed)
        i.late_rows.labels(gate).inc(outcome.rows_late)
        i.null_event_time_rows.labels(gate).inc(outcome.rows_null_event_time)

    def _record_check(self, check: CheckOutcome) -> None:
        i, gate, cid = self._i, self.gate, check.check_id
        if check.status == "skipped":
            i.checks_skipped.labels(gate, cid).inc()
            i.check_failed.labels(gate, cid, check.kind).set(0)
            return
        if check.status == "provisional":
            return
        i.check_failed.labels(gate, cid, check.kind).set(1 if check.status == "failed" else 0)
        if check.violations:
            i.check_violations.labels(gate, cid, check.severity).inc(check.violations)
        if check.kind == "aggregate":
            self._set_values(i.aggregate_value.labels, (gate, cid), check.raw_value, check.adjusted_value)
            if check.status == "failed":
                i.aggregate_failures.labels(gate, cid, check.severity).inc()
            if check.expected_value is not None:
                self._record_anomaly(check)

    def _record_windows(self, windows: Iterable[WindowOutcome]) -> None:
        i, gate = self._i, self.gate
        closed = (w for w in windows if w.status != "provisional")
        for window in sorted(closed, key=lambda w: w.window_end):
            cid = window.check_id
            i.window_results.labels(gate, cid, window.status).inc()
            i.window_check_failed.labels(gate, cid, window.window).set(1 if window.status == "failed" else 0)
            self._set_values(
                i.window_value.labels, (gate, cid, window.window), window.raw_value, window.adjusted_value
            )
            if window.expected_value is not None:
                self._record_anomaly(window)

    def _record_anomaly(self, window: WindowOutcome | CheckOutcome) -> None:
        """An anomaly verdict's observed, expected, band and score (one series per check: the last window);
        a band edge that is unbounded (``direction``) has no series."""
        i, gate, cid = self._i, self.gate, window.check_id
        assert window.expected_value is not None
        if window.adjusted_value is not None:
            i.anomaly_observed.labels(gate, cid).set(window.adjusted_value)
        i.anomaly_expected.labels(gate, cid).set(window.expected_value)
        for edge, value in (("low", window.band_low), ("high", window.band_high)):
            if value is not None:
                i.anomaly_band.labels(gate, cid, edge).set(value)
        if window.score is not None:
            i.anomaly_score.labels(gate, cid).set(window.score)
        if window.status == "failed":
            i.anomalies.labels(gate, cid, window.severity).inc()

    @staticmethod
    def _set_values(
        labels: Callable[..., Any], prefix: tuple[str, ...], raw: float | None, adjusted: float | None
    ) -> None:
        for kind, value in zip(VALUE_KINDS, (raw, adjusted), strict=True):
            if value is not None:
                labels(*prefix, kind).set(value)

    def _set_profiles(self, profiles: Iterable[str], *, active: Iterable[str]) -> None:
        on = set(active)
        with self._lock:
            self._profiles.update(profiles)
            for profile in self._profiles:
                self._i.profile_active.labels(self.gate, profile).set(1 if profile in on else 0)

    def _record_commit(self, outcome: BatchOutcome) -> None:
        i, gate = self._i, self.gate
        i.batches.labels(gate, "committed").inc()
        i.batch_duration.labels(gate).observe(outcome.duration_seconds)
        i.last_committed_batch_id.labels(gate).set(outcome.batch_id)
        i.last_commit_timestamp.labels(gate).set(outcome.committed_at or self._clock())
        if outcome.max_event_time is not None:
            self._advance_event_time(_epoch_seconds(outcome.max_event_time))

    def _advance_event_time(self, seconds: float) -> None:
        with self._lock:
            first = self._max_event_time is None
            latest = seconds if self._max_event_time is None else max(self._max_event_time, seconds)
            self._max_event_time = latest
            self._i.max_event_time.labels(self.gate).set(latest)
        if first:
            self._i.event_time_lag.labels(self.gate).set_function(self._event_time_lag)

    def _event_time_lag(self) -> float:
        latest = self._max_event_time
        return math.nan if latest is None else self._clock() - latest


def _offsets(value: Any) -> dict[str, Any]:
    """A source progress offset (JSON text or already a dict) as a dict; {} when it is neither."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def kafka_lag(progress: Mapping[str, Any]) -> dict[str, float]:
    """Messages not yet processed per Kafka topic, from a query progress: for every partition of a Kafka
    source, its ``latestOffset`` minus the ``endOffset`` of the last batch (Spark reports both per topic and
    partition). Sources of other kinds are skipped.

    Example:
        >>> kafka_lag({"sources": [{"endOffset": '{"t": {"0": 5, "1": 7}}',
        ...                         "latestOffset": '{"t": {"0": 9, "1": 7}}'}]})
        {'t': 4.0}
    """
    lag: dict[str, float] = {}
    for source in progress.get("sources") or ():
        latest, done = _offsets(source.get("latestOffset")), _offsets(source.get("endOffset"))
        for topic, partitions in latest.items():
            if not isinstance(partitions, dict):
                continue
            found = done.get(topic)
            processed: dict[str, Any] = found if isinstance(found, dict) else {}
            behind = 0.0
            for partition, offset in partitions.items():
                previous = processed.get(partition, 0)
                if isinstance(offset, int) and isinstance(previous, int):
                    behind += max(0, offset - previous)
            lag[topic] = lag.get(topic, 0.0) + behind
    return lag


def _milliseconds_to_seconds(value: Any) -> float | None:
    milliseconds = _finite(value)
    return None if milliseconds is None else milliseconds / 1000.0


def _sum_field(operators: Iterable[Mapping[str, Any]], name: str) -> float:
    return sum(_finite(op.get(name)) or 0.0 for op in operators)
