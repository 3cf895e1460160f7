"""Run a gate job from its config: Spark session, source stream, gate, Prometheus endpoint, until done.

:class:`GateJob` wires the pieces a :class:`~streaming_dq.config.gate_config.GateConfig` names: it starts the
``/metrics`` endpoint first (a taken port fails before a JVM is started), builds the SparkSession, reads the
source with ``readStream`` (malformed json/csv lines kept in the malformed column), starts the
:class:`~streaming_dq.sink.QualityGate` as the ``foreachBatch`` sink, and waits: an ``available-now`` job ends
when the source is drained, a ``processing-time`` job when it is stopped (``stop_event``, a timeout).

Example:
    >>> from streaming_dq.config.loader import load_gate_config
    >>> job = GateJob(load_gate_config("jobs/orders/orders.yaml"), on_batch=print)  # doctest: +SKIP
    >>> job.run().failed  # doctest: +SKIP
    False
"""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

from streaming_dq.config.gate_config import GateConfig
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.outcome import BatchOutcome, CheckKind, WindowOutcome
from streaming_dq.runtime.session import build_spark_session, read_stream, source_bundles

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from streaming_dq.exporter import GateMetrics, MetricsServer, ResultsFollower
    from streaming_dq.sink import QualityGate

__all__ = ["GateJob", "JobTotals"]


@dataclass
class JobTotals:
    """What a run did, summed over its committed batches (replayed batches are not counted)."""

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
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

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


class GateJob:
    """One gate job, built from its config.

    Args:
        config: The loaded config (paths already resolved, see :func:`~streaming_dq.config.loader.load_gate_config`).
        on_batch: Called with every batch outcome, on the driver, after the batch's commits.
        on_started: Called once the query runs, with the metrics URL (None without an endpoint).
        stop_event: When set, the job stops the query and returns (a processing-time job runs until then).
        session: The SparkSession to use; by default the active one, else one built from ``spark:`` (and
            stopped at the end).
        handle_signals: Stop the query gracefully on SIGINT/SIGTERM (``totals.interrupted`` names the signal);
            for a process that runs one job on its main thread, such as the CLI.
        close_windows: Judge the event-time windows still open once an available-now run has drained its
            input (:meth:`~streaming_dq.sink.QualityGate.close_windows`); None: ``gate.close-windows``.
        on_windows_closed: Called with the window verdicts that closing gave (none when nothing was open).
    """

    def __init__(
        self,
        config: GateConfig,
        *,
        on_batch: Callable[[BatchOutcome], None] | None = None,
        on_started: Callable[[str | None], None] | None = None,
        stop_event: threading.Event | None = None,
        session: SparkSession | None = None,
        handle_signals: bool = False,
        close_windows: bool | None = None,
        on_windows_closed: Callable[[Sequence[WindowOutcome]], None] | None = None,
    ) -> None:
        self.config = config
        self._close_windows = (
            config.gate.close_windows == "at-end" if close_windows is None else close_windows
        )
        self._on_windows_closed = on_windows_closed
        self._handle_signals = handle_signals
        self.check_set = config.check_set()
        self.profiles = config.profile_objects()
        self.totals = JobTotals()
        self._on_batch = on_batch
        self._on_started = on_started
        self._stop = stop_event or threading.Event()
        self._session = session
        self.query: StreamingQuery | None = None
        #: The job's Prometheus registry once :meth:`run` started (None without ``metrics:`` exporters).
        self.registry: CollectorRegistry | None = None
        self._follower: ResultsFollower | None = None

    def run(self, *, timeout: float | None = None) -> JobTotals:
        """Run until the source is drained (available-now), the stop event is set, or ``timeout`` seconds.

        Returns:
            The totals; ``failed`` and ``error`` tell whether the stream failed.

        Raises:
            ConfigError: a local path cannot be read or written (checked before Spark starts; not under
                ``spark.remote``, whose paths are the server's), or the stream's columns do not fit the checks.
            CheckEvaluationError: a check's column is missing from the stream or of a type it cannot judge.
            ExporterError: the metrics endpoint cannot be started (e.g. its port is taken).
        """
        self.check_paths()
        registry, metrics, server = self._start_metrics()
        self.registry = registry
        if self._session is not None:
            session, own_session = self._session, False
        else:
            app_name = f"streaming-dq-{self.config.gate.name}"
            session, own_session = build_spark_session(
                self.config.spark,
                app_name=app_name,
                writer=self.config.targets.writer,
                delta=self._reads_delta(),
                bundles=source_bundles(self.config.source),
            )
        previous = self._install_signal_handlers() if self._handle_signals else {}
        try:
            self._run_query(session, metrics, server, timeout)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if server is not None:
                server.close()
            self._push(registry)
            if own_session:
                session.stop()
        return self.totals

    def _install_signal_handlers(self) -> dict[int, Any]:
        """SIGINT and SIGTERM stop the query between batches; a second one interrupts at once.

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
            self._stop.set()

        return {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}

    def _reads_delta(self) -> bool:
        """Whether the job reads a Delta table with Spark (a Delta source or reference dataset)."""
        formats = [self.config.source.format, *(r.format for r in self.config.reference_datasets.values())]
        return "delta" in formats

    def check_paths(self) -> None:
        """Raise the ConfigError of every local path the job could not read or write (before Spark starts)."""
        if self.config.spark.remote is not None:
            return
        from streaming_dq.config.errors import ConfigErrors
        from streaming_dq.config.paths import path_problems

        problems = path_problems(self.config)
        if len(problems) == 1:
            raise problems[0]
        if problems:
            raise ConfigErrors(problems, source=self.config.source_file)

    def _start_metrics(self) -> tuple[CollectorRegistry | None, GateMetrics | None, MetricsServer | None]:
        section = self.config.metrics
        if section.prometheus is None and section.pushgateway is None:
            return None, None, None
        from prometheus_client import CollectorRegistry

        from streaming_dq.exporter import CheckLabels, GateMetrics, serve_metrics

        registry = CollectorRegistry()
        checks = [
            CheckLabels(
                c.check_id,
                c.check_type,
                c.severity.value,
                _kind(c),
            )
            for c in self.check_set
        ]
        metrics = GateMetrics(
            self.config.gate.name, registry=registry, checks=checks, profiles=[p.name for p in self.profiles]
        )
        server = None
        if section.prometheus is not None:
            server = serve_metrics(registry, host=section.prometheus.host, port=section.prometheus.port)
        return registry, metrics, server

    def _push(self, registry: CollectorRegistry | None) -> None:
        gateway = self.config.metrics.pushgateway
        if registry is None or gateway is None:
            return
        from streaming_dq.exporter import push_metrics

        push_metrics(registry, gateway.url, gateway.job, {"gate": self.config.gate.name})

    def _record(self, outcome: BatchOutcome) -> None:
        self.totals.add(outcome)
        if self._on_batch is not None:
            self._on_batch(outcome)

    def _build_gate(self, metrics: GateMetrics | None) -> QualityGate:
        from streaming_dq.sink import QualityGate

        return QualityGate.from_config(
            self.config,
            check_set=self.check_set,
            profiles=self.profiles,
            on_batch=self._record,
            metrics=metrics,
        )

    def _run_query(
        self,
        session: SparkSession,
        metrics: GateMetrics | None,
        server: MetricsServer | None,
        timeout: float | None,
    ) -> None:
        gate = self._build_gate(metrics)
        stream = read_stream(session, self.config.source)
        follow = self._follower_start(session, metrics) if _is_remote() else None
        query = gate.start(
            stream,
            checkpoint_location=self.config.checkpoint,
            trigger=self.config.source.trigger.to_spark(),
            query_name=self.config.gate.name,
        )
        self.query = query
        if follow is not None:
            self._follower = self._follower_for(query, follow)
        bridge = None
        if metrics is not None:
            from streaming_dq.exporter import ProgressBridge

            bridge = ProgressBridge(metrics, query.id)
            session.streams.addListener(bridge)
        if self._on_started is not None:
            self._on_started(server.url if server is not None else None)
        try:
            drained = self._wait(query, timeout, metrics)
            if drained and self._close_windows:
                self._close(gate, session)
        finally:
            self._follow(metrics)
            if bridge is not None:
                session.streams.removeListener(bridge)
                last = query.lastProgress  # the listener bus may not have delivered the last one yet
                if last:
                    metrics.record_progress(last)  # type: ignore[union-attr]
            if self.totals.failed and metrics is not None and self._follower is not None:
                metrics.record_failure(-1, RuntimeError(self.totals.error))  # on the server: count it here

    def _follower_start(self, session: SparkSession, metrics: GateMetrics | None) -> int | None:
        """Under Spark Connect: after which batch id the results table is new to this run.

        The batches run in a worker on the server, so this process learns about them from the results table
        (:class:`~streaming_dq.exporter.ResultsFollower`). On a checkpoint that already ran, the query keeps
        its id and batches already in the table are history; a fresh checkpoint's query has none yet.

        Raises:
            ConfigError: metrics or per-batch output are wanted and there is no results table to follow.
        """
        from streaming_dq.config.paths import local_path
        from streaming_dq.exceptions import ConfigError
        from streaming_dq.exporter import ResultsFollower
        from streaming_dq.sink.checkpoint import read_query_id

        c = self.config
        if c.targets.results is None:
            if metrics is not None or self._on_batch is not None:
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
        last = ResultsFollower(c.targets.results, c.gate.name, app_id).last
        return -1 if last is None else last

    def _follower_for(self, query: StreamingQuery, after: int) -> ResultsFollower:
        from streaming_dq.exporter import ResultsFollower

        c = self.config
        return ResultsFollower(c.targets.results or "", c.gate.name, f"{c.gate.name}:{query.id}", after=after)

    def _follow(self, metrics: GateMetrics | None) -> None:
        """Report the batches the server committed since the last look (Spark Connect only)."""
        if self._follower is None:
            return
        for outcome in self._follower.poll():
            if metrics is not None:
                metrics.record_batch(outcome)
            self._record(outcome)

    def _wait(self, query: StreamingQuery, timeout: float | None, metrics: GateMetrics | None = None) -> bool:
        """Wait for the query; True when it ended by itself without an error (an available-now run drained
        its input), False when it failed or was stopped (a signal, the stop event, the timeout)."""
        from pyspark.errors import StreamingQueryException

        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while query.isActive:
                if self._stop.is_set() or (deadline is not None and time.monotonic() >= deadline):
                    _stop_between_batches(query)
                    return False
                query.awaitTermination(1)
                self._follow(metrics)
        except StreamingQueryException as exc:
            self.totals.failed, self.totals.error = True, _first_line(exc)
            return False
        except KeyboardInterrupt:
            query.stop()
            return False
        error = query.exception()
        if error is not None:
            self.totals.failed, self.totals.error = True, _first_line(error)
            return False
        return self.totals.interrupted is None and self.config.source.trigger.available_now

    def _close(self, gate: QualityGate, session: SparkSession) -> None:
        """The end of the input: judge the windows still open, once (a failure fails the run)."""
        try:
            update = gate.close_windows(session)
        except Exception as exc:
            self.totals.failed, self.totals.error = True, f"closing the open windows: {_first_line(exc)}"
            return
        closed = update.closed if update is not None else ()
        self.totals.windows_closed = len(closed)
        if self._on_windows_closed is not None:
            self._on_windows_closed(closed)


#: How long a stop waits for the running batch to finish before it interrupts it.
STOP_PATIENCE_SECONDS = 120.0


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
