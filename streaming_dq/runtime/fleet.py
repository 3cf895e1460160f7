"""Gate jobs from their configs, one or many in one application: one SparkSession, one ``/metrics``.

:class:`GateFleet` runs N gate configs on one driver: each gate reads its source as a streaming query of its
own, in a fair-scheduler pool named after the gate (so a gate with a large batch does not hold the executors
while the others wait), with one Prometheus endpoint whose series carry the ``gate`` label, and with the
gates' maintenance schedules spread over their period. A gate whose stream fails (its policy said stop, a
write failed after Spark's retries) ends alone; the others go on unless ``stop_all_on_failure``. Each gate
has its own checkpoint, tables and application id, so a restart resumes each exactly where it stopped.

For each gate it wires what its :class:`~streaming_dq.config.gate_config.GateConfig` names: the source
(``readStream``, malformed json/csv lines kept in the malformed column), the
:class:`~streaming_dq.sink.QualityGate` as the ``foreachBatch`` sink, the metrics, and under Spark Connect the
follower of its results table. An ``available-now`` gate ends when its source is drained, a
``processing-time`` one when the fleet is stopped (``stop_event``, a signal, a timeout).

Example:
    >>> from streaming_dq.config.loader import load_gate_config
    >>> fleet = GateFleet([load_gate_config("jobs/orders/orders.yaml"), load_gate_config("b.yaml")])  # doctest: +SKIP
    >>> fleet.run().failed  # doctest: +SKIP
    []
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from streaming_dq.config.gate_config import GateConfig
from streaming_dq.config.paths import local_path
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.outcome import BatchOutcome, CheckKind, CheckOutcome, WindowOutcome
from streaming_dq.exceptions import ConfigError
from streaming_dq.runtime.session import (
    build_spark_session,
    read_stream,
    source_bundles,
    storage_conf,
    trace_file,
)
from streaming_dq.sink.lease import holding

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from streaming_dq.config.sections import SparkSection
    from streaming_dq.exporter import (
        GateMetrics,
        MetricsServer,
        ProgressBridge,
        QuarantineFollower,
        ResultsFollower,
    )
    from streaming_dq.sink import QualityGate

__all__ = ["FleetTotals", "GateFleet", "GateRun", "JobTotals", "check_fleet"]

#: How often the fleet looks at its queries while it waits (seconds).
POLL_SECONDS = 0.5
#: How long a stop waits for the batch running now to finish before it interrupts it.
STOP_PATIENCE_SECONDS = 120.0


@dataclass
class JobTotals:
    """What a gate's run did, summed over its committed batches (replayed batches are not counted)."""

    batches: int = 0
    replayed: int = 0
    rows_in: int = 0
    rows_passed: int = 0
    rows_quarantined: int = 0
    rows_warned: int = 0
    rows_malformed: int = 0
    failed: bool = False
    error: str | None = None
    interrupted: int | None = None
    #: Window verdicts given when the input ended (``close_windows``), none before or without it.
    windows_closed: int = 0
    #: The checks that failed in a batch or a window verdict, by id, with their (effective) severities.
    failed_checks: dict[str, set[str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def failures_at(self, severities: frozenset[str]) -> list[str]:
        """The ids of the checks that failed at one of ``severities`` (``--fail-on``), in first-failed order."""
        return [check for check, seen in self.failed_checks.items() if seen & severities]

    def count_failures(self, verdicts: Sequence[CheckOutcome | WindowOutcome]) -> None:
        """Note the failed verdicts among ``verdicts``."""
        with self._lock:
            for verdict in verdicts:
                if verdict.status == "failed":
                    self.failed_checks.setdefault(verdict.check_id, set()).add(verdict.severity)

    def add(self, outcome: BatchOutcome) -> None:
        """Count one batch outcome."""
        with self._lock:
            if outcome.status == "skipped_replay":
                self.replayed += 1
                return
            self.batches += 1
            self.rows_in += outcome.rows_in
            self.rows_passed += outcome.rows_passed
            self.rows_quarantined += outcome.rows_quarantined
            self.rows_warned += outcome.rows_warned
            self.rows_malformed += outcome.rows_malformed
        self.count_failures([*outcome.checks, *outcome.windows])


@dataclass
class FleetTotals:
    """Each gate's totals, in the order of the configs, and the signal that stopped the run (if any)."""

    gates: dict[str, JobTotals]
    interrupted: int | None = None

    @property
    def failed(self) -> list[str]:
        """The gates whose stream failed."""
        return [name for name, totals in self.gates.items() if totals.failed]


def check_fleet(configs: Sequence[GateConfig]) -> None:
    """Refuse configs that cannot share one application.

    Raises:
        ConfigError: No config; two gates with one name, one checkpoint or one table; Spark settings that
            differ (master, remote, a ``spark.conf`` key set to two values); two Prometheus endpoints. The
            error names the second config's file and field.
    """
    if not configs:
        raise ConfigError("no gate config to run")
    first = configs[0]
    seen: dict[tuple[str, str], GateConfig] = {}
    for config in configs:
        claims = [("gate.name", config.gate.name), ("checkpoint", config.checkpoint)]
        claims += [(f"targets.{k}", v) for k, v in config.targets.paths().items()]
        for where, value in claims:
            kind = "name" if where == "gate.name" else "checkpoint" if where == "checkpoint" else "table"
            other = seen.get((kind, value))
            if other is not None and other is not config:
                raise ConfigError(
                    f"{value!r} is also the {kind} of gate {other.gate.name!r} ({other.source_file}): every "
                    "gate of one run needs its own name, checkpoint and tables",
                    source=config.source_file,
                    field_path=where,
                )
            seen[(kind, value)] = config
        for key in ("master", "remote"):
            if getattr(config.spark, key) != getattr(first.spark, key):
                raise ConfigError(
                    f"{getattr(config.spark, key)!r} differs from {getattr(first.spark, key)!r} in "
                    f"{first.source_file}: the gates of one run share one Spark session",
                    source=config.source_file,
                    field_path=f"spark.{key}",
                )
    _merged_spark_conf(configs)
    _metrics_endpoint(configs)


def _merged_spark_conf(configs: Sequence[GateConfig]) -> dict[str, str]:
    merged: dict[str, tuple[str, GateConfig]] = {}
    for config in configs:
        for key, value in config.spark.conf.items():
            known = merged.get(key)
            if known is not None and known[0] != value:
                raise ConfigError(
                    f"{value!r} differs from {known[0]!r} in {known[1].source_file}: the gates of one run "
                    "share one Spark session",
                    source=config.source_file,
                    field_path=f"spark.conf.{key}",
                )
            merged[key] = (value, config)
    return {k: v for k, (v, _) in merged.items()}


def _metrics_endpoint(configs: Sequence[GateConfig]) -> tuple[str, int] | None:
    """The one ``/metrics`` endpoint the configs name (None: none does)."""
    found: tuple[str, int, GateConfig] | None = None
    for config in configs:
        prometheus = config.metrics.prometheus
        if prometheus is None:
            continue
        if found is not None and (prometheus.host, prometheus.port) != found[:2]:
            raise ConfigError(
                f"{prometheus.host}:{prometheus.port} differs from {found[0]}:{found[1]} in "
                f"{found[2].source_file}: the gates of one run share one /metrics endpoint",
                source=config.source_file,
                field_path="metrics.prometheus.port",
            )
        found = found or (prometheus.host, prometheus.port, config)
    return None if found is None else found[:2]


class GateRun:
    """One gate of a run: its checks, metrics, gate, query and totals.

    Args:
        config: The gate's config.
        on_batch: Called with every batch outcome of this gate, after the batch's commits.
        close_windows: Judge the windows still open once an available-now run has drained its input; None:
            ``gate.close-windows``.
        on_windows_closed: Called with the verdicts that closing gave.
    """

    def __init__(
        self,
        config: GateConfig,
        *,
        on_batch: Callable[[BatchOutcome], None] | None = None,
        close_windows: bool | None = None,
        on_windows_closed: Callable[[Sequence[WindowOutcome]], None] | None = None,
    ) -> None:
        self.config = config
        self.name = config.gate.name
        self.check_set = config.check_set()
        self.profiles = config.profile_objects()
        self.totals = JobTotals()
        self.close_windows = config.gate.close_windows == "at-end" if close_windows is None else close_windows
        self._on_batch = on_batch
        self._on_windows_closed = on_windows_closed
        self.metrics: GateMetrics | None = None
        self.gate: QualityGate | None = None
        self.query: StreamingQuery | None = None
        self.ended = False
        self._follower: ResultsFollower | None = None
        self._quarantine: QuarantineFollower | None = None
        self._bridge: ProgressBridge | None = None
        self._progress_seen: str | None = None

    def reads_delta(self) -> bool:
        """Whether the gate reads a Delta table with Spark (a Delta source or reference dataset)."""
        formats = [self.config.source.format, *(r.format for r in self.config.reference_datasets.values())]
        return "delta" in formats

    def check_paths(self) -> None:
        """Raise the ConfigError of every local path the gate could not read or write (before Spark starts)."""
        if self.config.spark.remote is not None:
            return
        from streaming_dq.config.errors import ConfigErrors
        from streaming_dq.config.paths import path_problems

        problems = path_problems(self.config)
        if len(problems) == 1:
            raise problems[0]
        if problems:
            raise ConfigErrors(problems, source=self.config.source_file)

    def gate_metrics(self, registry: CollectorRegistry, alongside: GateMetrics | None) -> GateMetrics:
        """This gate's series on ``registry`` (beside another gate's, when given)."""
        from streaming_dq.exporter import CheckLabels, GateMetrics

        checks = [CheckLabels(c.check_id, c.check_type, c.severity.value, _kind(c)) for c in self.check_set]
        self.metrics = GateMetrics(
            self.name,
            registry=registry,
            checks=checks,
            profiles=[p.name for p in self.profiles],
            alongside=alongside,
        )
        return self.metrics

    def record(self, outcome: BatchOutcome) -> None:
        self.totals.add(outcome)
        if self._on_batch is not None:
            self._on_batch(outcome)

    def build_gate(self, maintenance_phase: float = 0.0) -> QualityGate:
        from streaming_dq.sink import QualityGate

        self.gate = QualityGate.from_config(
            self.config,
            check_set=self.check_set,
            profiles=self.profiles,
            on_batch=self.record,
            metrics=self.metrics,
            maintenance_phase=maintenance_phase,
        )
        return self.gate

    def start(self, session: SparkSession, *, pool: str | None, maintenance_phase: float = 0.0) -> None:
        """Build the gate and start its query (in ``pool``, classic Spark only)."""
        from streaming_dq.config.catalog import resolve_catalog_tables

        self.config = resolve_catalog_tables(self.config, session)  # table names: asked once, here
        gate = self.build_gate(maintenance_phase)
        # every reference read once before the first batch: one that cannot be read ends the job here with why,
        # not in the first batch (#42); a reference read lazily costs a listing, not a scan
        gate.references.resolve(session)
        stream = read_stream(session, self.config.source)
        follow = self._follower_start(session) if _is_remote() else None
        self.query = gate.start(
            stream,
            checkpoint_location=self.config.checkpoint,
            trigger=self.config.source.trigger.to_spark(),
            query_name=self.name,
            scheduler_pool=pool,
        )
        if follow is not None:
            from streaming_dq.exporter import ResultsFollower

            c = self.config
            results = c.table("results")
            self._follower = ResultsFollower(
                results.uri,
                c.gate.name,
                f"{c.gate.name}:{self.query.id}",
                after=follow,
                storage_options=results.storage_options,
            )
        if self.metrics is not None:
            from streaming_dq.exporter import ProgressBridge, QuarantineFollower

            if not _is_remote():  # under Connect, follow() reads the progress: see _follow_progress
                self._bridge = ProgressBridge(self.metrics, self.query.id)
                session.streams.addListener(self._bridge)
            if self.config.targets.results:  # releases and discards record themselves there
                results = self.config.table("results")
                self._quarantine = QuarantineFollower(
                    results.uri, self.config.gate.name, storage_options=results.storage_options
                )

    def _follower_start(self, session: SparkSession) -> int | None:
        """Under Spark Connect: after which batch id the results table is new to this run.

        The batches run in a worker on the server, so this process learns about them from the results table
        (:class:`~streaming_dq.exporter.ResultsFollower`). On a checkpoint that already ran, the query keeps
        its id and batches already in the table are history; a fresh checkpoint's query has none yet.

        Raises:
            ConfigError: metrics or per-batch output are wanted and there is no results table to follow.
        """
        from streaming_dq.config.paths import local_path
        from streaming_dq.exporter import ResultsFollower
        from streaming_dq.sink.checkpoint import read_query_id

        c = self.config
        if c.targets.results is None:
            if self.metrics is not None or self._on_batch is not None:
                raise ConfigError(
                    "under Spark Connect the batches run on the server, and the job follows them in the results "
                    "table: set targets.results",
                    source=c.source_file,
                    field_path="targets.results",
                )
            return None
        local = local_path(c.checkpoint)
        if local is not None and not (local / "metadata").is_file():
            return -1
        try:
            app_id = f"{c.gate.name}:{read_query_id(session, c.checkpoint)}"
        except ConfigError:  # no query ran on this checkpoint yet
            return -1
        results = c.table("results")
        last = ResultsFollower(results.uri, c.gate.name, app_id, storage_options=results.storage_options).last
        return -1 if last is None else last

    def follow(self) -> None:
        """Report the batches the server committed since the last look (Spark Connect only), and the releases
        and discards of the gate's quarantine that finished (every 10 s)."""
        if self._quarantine is not None and self.metrics is not None:
            for kind, counts in self._quarantine.poll():
                self.metrics.record_quarantine(kind, counts)
        if self._follower is None:
            return
        self._follow_progress()
        for outcome in self._follower.poll():
            if self.metrics is not None:
                self.metrics.record_batch(outcome)
            self.record(outcome)

    def _follow_progress(self) -> None:
        """Under Spark Connect: export the query's last progress when it is new.

        A client-side listener is not used there: removing the last one (at the end of a run) joins the thread
        that reads the server's event stream while holding the lock that thread needs to deliver a pending
        event, so a stop that met a progress event hung for good (SPARK-59623; a SIGTERM'd job did not exit).
        The gauges only keep the last progress, so reading it once per look loses nothing they show.
        """
        if self.metrics is None or self.query is None:
            return
        last = self.query.lastProgress
        if last and last.get("timestamp") != self._progress_seen:
            self._progress_seen = last.get("timestamp")
            self.metrics.record_progress(last)

    def poll(self) -> bool | None:
        """None while the query runs; once it has ended: True when it drained its input without an error (an
        available-now run), False when it failed (``totals.error`` says why)."""
        from pyspark.errors import StreamingQueryException

        assert self.query is not None
        try:
            if self.query.isActive:
                return None
            error = self.query.exception()
        except StreamingQueryException as exc:
            error = exc
        self.ended = True
        if error is not None:
            self.totals.failed, self.totals.error = True, _first_line(error)
            return False
        return self.config.source.trigger.available_now

    def stop(self, *, at_once: bool = False) -> None:
        """Stop the query (after the batch running now, unless ``at_once``). The gate is told first, so a
        batch the stop interrupts, or one that begins meanwhile, is not counted as failed (#42)."""
        if self.query is not None and not self.ended:
            if self.gate is not None:
                self.gate.stopping()
            try:
                if at_once:
                    self.query.stop()
                else:
                    _stop_between_batches(self.query)
            finally:
                if self.gate is not None:
                    self.gate.stopped()
            self.ended = True

    def close(self, session: SparkSession) -> None:
        """The end of the input: judge the windows still open, once (a failure fails the gate's run)."""
        assert self.gate is not None
        try:
            update = self.gate.close_windows(session)
        except Exception as exc:
            self.totals.failed, self.totals.error = True, f"closing the open windows: {_first_line(exc)}"
            return
        closed = update.closed if update is not None else ()
        self.totals.windows_closed = len(closed)
        self.totals.count_failures(closed)
        if self._on_windows_closed is not None:
            self._on_windows_closed(closed)

    def finish(self, session: SparkSession) -> None:
        """After the query: the last batches followed, the progress listener removed, a failure counted."""
        self.follow()
        if self._bridge is not None and self.metrics is not None and self.query is not None:
            session.streams.removeListener(self._bridge)
            last = self.query.lastProgress  # the listener bus may not have delivered the last one yet
            if last:
                self.metrics.record_progress(last)
        if self.totals.failed and self.metrics is not None and self._follower is not None:
            self.metrics.record_failure(-1, RuntimeError(self.totals.error))  # on the server: count it here


class GateFleet:
    """Gate jobs from their configs, run together on one driver (see the module).

    Args:
        configs: The loaded configs (paths resolved, see :func:`~streaming_dq.config.loader.load_gate_config`).
        on_batch: Called with every batch outcome of every gate (``outcome.gate`` names it), on the driver.
        on_started: Called once every query runs, with the metrics URL (None without an endpoint).
        stop_event: When set, the fleet stops every query and returns.
        session: The SparkSession to use; by default the active one, else one built from the configs'
            ``spark:`` (and stopped at the end).
        handle_signals: Stop gracefully on SIGINT/SIGTERM (``interrupted`` names the signal); for a process
            that runs the fleet on its main thread, such as the CLI.
        close_windows: Judge each gate's windows still open once its available-now run has drained its
            input; None: each gate's ``gate.close-windows``.
        on_windows_closed: Called with a gate's name and the verdicts closing gave.
        stop_all_on_failure: A failed gate stops the others (by default they go on).

    Raises:
        ConfigError: The configs cannot share one application (:func:`check_fleet`).
    """

    def __init__(
        self,
        configs: Sequence[GateConfig],
        *,
        on_batch: Callable[[BatchOutcome], None] | None = None,
        on_started: Callable[[str | None], None] | None = None,
        stop_event: threading.Event | None = None,
        session: SparkSession | None = None,
        handle_signals: bool = False,
        close_windows: bool | None = None,
        on_windows_closed: Callable[[str, Sequence[WindowOutcome]], None] | None = None,
        stop_all_on_failure: bool = False,
    ) -> None:
        check_fleet(configs)
        self.configs = list(configs)

        def closed_of(name: str) -> Callable[[Sequence[WindowOutcome]], None] | None:
            if on_windows_closed is None:
                return None
            return lambda windows: on_windows_closed(name, windows)

        self.runs = [
            GateRun(
                c,
                on_batch=on_batch,
                close_windows=close_windows,
                on_windows_closed=closed_of(c.gate.name),
            )
            for c in self.configs
        ]
        self.totals = FleetTotals({r.name: r.totals for r in self.runs})
        self._on_started = on_started
        self._stop = stop_event or threading.Event()
        self._session = session
        self._handle_signals = handle_signals
        self._stop_all_on_failure = stop_all_on_failure
        #: The shared Prometheus registry once :meth:`run` started (None without ``metrics:`` exporters).
        self.registry: CollectorRegistry | None = None

    def check_paths(self) -> None:
        """Raise the ConfigError of the first gate with a local path it could not read or write."""
        for run in self.runs:
            run.check_paths()

    def run(self, *, timeout: float | None = None) -> FleetTotals:
        """Run until every gate has ended (drained, failed), the stop event is set, or ``timeout`` seconds.

        Raises:
            ConfigError: a local path cannot be read or written (checked before Spark starts; not under
                ``spark.remote``, whose paths are the server's), or a stream's columns do not fit its checks.
            CheckEvaluationError: a check's column is missing from its stream or of a type it cannot judge.
            ExporterError: the metrics endpoint cannot be started (e.g. its port is taken).
            CheckpointInUseError: another job holds a gate's checkpoint (before Spark starts, nothing
                written).
        """
        self.check_paths()
        with self.holding_checkpoints():  # before the metrics port: a second job is told what it is
            server = self._start_metrics()
            session, own_session = self._session_for_run()
            previous = self._install_signal_handlers() if self._handle_signals else {}
            try:
                self._run_queries(session, server, timeout)
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
                if server is not None:
                    server.close()
                self._push()
                if own_session:
                    session.stop()
        return self.totals

    def holding_checkpoints(self) -> contextlib.AbstractContextManager[object]:
        """Hold every gate's checkpoint lease while the block runs (:mod:`~streaming_dq.sink.lease`; :meth:`run`
        holds them too, once more).

        Raises:
            CheckpointInUseError: another job holds one (none is held then).
        """
        return holding(self._checkpoints())

    def _checkpoints(self) -> dict[str, dict[str, str]]:
        """The checkpoints whose leases the run holds, with their storage options (under ``spark.remote`` a
        local checkpoint is the server's: the gate's own start takes no lease on it either)."""
        remote = (self._session is not None and _is_remote()) or self.configs[0].spark.remote is not None
        return {
            c.checkpoint: dict(c.storage_options)
            for c in self.configs
            if not (remote and local_path(c.checkpoint) is not None)
        }

    @property
    def app_name(self) -> str:
        """The Spark application's name (``spark.app-name``, else ``streaming-dq-<gate>`` or
        ``streaming-dq-<n>-gates``); it also names the trace file of a failed stream
        (:func:`~streaming_dq.runtime.session.trace_file`)."""
        names = [c.gate.name for c in self.configs]
        default = f"streaming-dq-{names[0]}" if len(names) == 1 else f"streaming-dq-{len(names)}-gates"
        return self.configs[0].spark.app_name or default

    def _session_for_run(self) -> tuple[SparkSession, bool]:
        if self._session is not None:
            return self._session, False
        writers = {c.targets.writer for c in self.configs}
        writer = "spark" if "spark" in writers else "auto" if "auto" in writers else "delta-rs"
        stores = [storage_conf(c) for c in self.configs]
        bundles = sorted(
            {b for c in self.configs for b in source_bundles(c.source)} | {b for s, _ in stores for b in s}
        )
        hadoop = {k: v for _, settings in stores for k, v in settings.items()}
        return build_spark_session(
            self._spark_section(),
            app_name=self.app_name,
            writer=writer,
            delta=any(r.reads_delta() for r in self.runs),
            bundles=bundles,
            hadoop=hadoop,
        )

    def _spark_section(self) -> SparkSection:
        """The first config's ``spark:`` with every config's ``spark.conf``; fair scheduling for N > 1."""
        section = self.configs[0].spark
        conf = _merged_spark_conf(self.configs)
        if len(self.configs) > 1 and section.remote is None:
            conf.setdefault("spark.scheduler.mode", "FAIR")
            if "spark.scheduler.allocation.file" not in conf:  # each gate's pool declared (#42: Spark warned)
                conf["spark.scheduler.allocation.file"] = str(self._write_pools())
        return section.model_copy(update={"conf": conf})

    def _write_pools(self) -> Path:
        """A fair-scheduler allocation file that declares one pool per gate, of equal weight: Spark warned
        "pool X, which has not been configured" for every gate's pool and made it with these defaults."""
        from xml.sax.saxutils import quoteattr

        pools = "".join(
            f"  <pool name={quoteattr(c.gate.name)}><schedulingMode>FAIR</schedulingMode><weight>1</weight>"
            "<minShare>0</minShare></pool>\n"
            for c in self.configs
        )
        path = trace_file(self.app_name).with_name(f"{self.app_name}-pools-{os.getpid()}.xml")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'<?xml version="1.0"?>\n<allocations>\n{pools}</allocations>\n', encoding="utf-8")
        return path

    def _install_signal_handlers(self) -> dict[int, Any]:
        """SIGINT and SIGTERM stop the queries between batches; a second one interrupts at once.

        Installed once the session exists: pyspark's SparkContext installs its own SIGINT handler (cancel
        every job, raise KeyboardInterrupt into whatever py4j call is running), which is what printed ~50
        lines of py4j tracebacks on Ctrl-C.
        """
        if threading.current_thread() is not threading.main_thread():
            return {}

        def handle(signum: int, frame: FrameType | None) -> None:
            if self.totals.interrupted is not None:
                raise KeyboardInterrupt
            self.totals.interrupted = signum
            for run in self.runs:
                run.totals.interrupted = signum
            self._stop.set()

        return {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}

    def _start_metrics(self) -> MetricsServer | None:
        wanted = [r for r in self.runs if r.config.metrics.prometheus or r.config.metrics.pushgateway]
        if not wanted:
            return None
        from prometheus_client import CollectorRegistry

        from streaming_dq.exporter import serve_metrics

        self.registry = registry = CollectorRegistry()
        first: GateMetrics | None = None
        for run in wanted:
            metrics = run.gate_metrics(registry, alongside=first)
            first = first or metrics
        endpoint = _metrics_endpoint(self.configs)
        return None if endpoint is None else serve_metrics(registry, host=endpoint[0], port=endpoint[1])

    def _push(self) -> None:
        """Push the registry to each distinct Pushgateway the configs name (grouped by the gates pushed)."""
        if self.registry is None:
            return
        from streaming_dq.exporter import push_metrics

        gateways = {(g.url, g.job) for c in self.configs if (g := c.metrics.pushgateway) is not None}
        names = [c.gate.name for c in self.configs]
        grouping = {"gate": names[0]} if len(names) == 1 else {"gates": ",".join(names)}
        for url, job in sorted(gateways):
            push_metrics(self.registry, url, job, grouping)

    def _run_queries(
        self, session: SparkSession, server: MetricsServer | None, timeout: float | None
    ) -> None:
        pools = len(self.runs) > 1 and not _is_remote()
        try:
            for i, run in enumerate(self.runs):
                run.start(session, pool=run.name if pools else None, maintenance_phase=i / len(self.runs))
            if self._on_started is not None:
                self._on_started(server.url if server is not None else None)
            self._wait(session, timeout)
        finally:
            for run in self.runs:
                if run.query is not None and not run.ended:
                    run.stop(at_once=True)  # an error while starting the others, or while waiting
                run.finish(session)

    def _wait(self, session: SparkSession, timeout: float | None) -> None:
        """Wait for every query; a drained gate closes its windows, a failed one may stop the others."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while any(not r.ended for r in self.runs):
                if self._stop.is_set() or (deadline is not None and time.monotonic() >= deadline):
                    for run in self.runs:
                        run.stop()
                    return
                for run in self.runs:
                    if run.ended:
                        continue
                    run.follow()
                    drained = run.poll()
                    if drained is None:
                        continue
                    if drained and run.close_windows and self.totals.interrupted is None:
                        run.close(session)
                    if run.totals.failed and self._stop_all_on_failure:
                        self._stop.set()
                self._pause()
        except KeyboardInterrupt:
            for run in self.runs:
                run.stop(at_once=True)

    def _pause(self) -> None:
        """Sleep until the next look, returning early when a single gate's query ends."""
        from pyspark.errors import StreamingQueryException

        active = [r.query for r in self.runs if not r.ended and r.query is not None]
        if len(active) == 1:
            # a failure is not lost here: poll() reads the query's exception
            with contextlib.suppress(StreamingQueryException):
                active[0].awaitTermination(1)
            return
        time.sleep(POLL_SECONDS)


def _stop_between_batches(query: StreamingQuery) -> None:
    """Stop the query after the batch running now, if any, has finished.

    ``query.stop()`` interrupts a running batch: Spark replays it (the gate writes nothing twice), but the
    interrupted py4j call reaches the log as an error. So the stop waits until the batch that was running
    when it was asked for has reported its progress, then stops: a batch that follows at once is interrupted
    while Spark plans it, before the gate runs. A second signal (``KeyboardInterrupt`` from the handler) or
    :data:`STOP_PATIENCE_SECONDS` stops at once.
    """
    deadline = time.monotonic() + STOP_PATIENCE_SECONDS

    def last_batch() -> int:
        progress = query.lastProgress
        return int(progress["batchId"]) if progress else -1

    try:
        if query.isActive and query.status.get("isTriggerActive"):
            running_after = last_batch()
            while (
                query.isActive
                and query.status.get("isTriggerActive")
                and last_batch() == running_after
                and time.monotonic() < deadline
            ):
                time.sleep(0.05)
    finally:
        query.stop()


def _is_remote() -> bool:
    from pyspark.sql.utils import is_remote

    return bool(is_remote())


def _kind(check: BaseCheck) -> CheckKind:
    """How the exporter labels a check: ``row``, ``window`` (a window-scoped aggregate) or ``aggregate``."""
    if isinstance(check, BaseRowCheck):
        return "row"
    return "window" if getattr(check, "scope", None) is not None else "aggregate"


_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*(?:Error|Exception): .+)$")


def _first_line(exc: BaseException) -> str:
    """The line that says why a stream failed.

    A failed ``foreachBatch`` surfaces as a JVM ``StreamingQueryException`` whose text embeds the Python
    traceback: the gate's own error (``GateFailedError: gate 'orders' stopped at batch 3: ...``) is preferred,
    then the last Python exception line, then the first line.
    """
    text = getattr(exc, "desc", None) or str(exc)
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    found = [(line, m.group(1)) for line in lines if (m := _EXCEPTION_LINE.match(line))]
    ours = [short for line, short in found if line.startswith("streaming_dq.")]
    if ours:
        return ours[-1]
    if found:
        return found[-1][1]
    return lines[0] if lines else type(exc).__name__
