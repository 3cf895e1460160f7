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
import signal
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from streaming_dq.compat.spark import is_remote
from streaming_dq.config.gate_config import GateConfig
from streaming_dq.config.paths import local_path
from streaming_dq.core.outcome import BatchOutcome, WindowOutcome
from streaming_dq.exceptions import ConfigError
from streaming_dq.runtime.gate_run import GateRun
from streaming_dq.runtime.session import (
    build_spark_session,
    source_bundles,
    storage_conf,
    trace_file,
)
from streaming_dq.runtime.totals import FleetTotals, JobTotals
from streaming_dq.sink.lease import holding

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from pyspark.sql import SparkSession

    from streaming_dq.config.sections import SparkSection
    from streaming_dq.exporter import (
        GateMetrics,
        MetricsServer,
    )

__all__ = ["FleetTotals", "GateFleet", "GateRun", "JobTotals", "check_fleet"]

#: How often the fleet looks at its queries while it waits (seconds).
POLL_SECONDS = 0.5


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
        remote = (self._session is not None and is_remote()) or self.configs[0].spark.remote is not None
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
        pools = len(self.runs) > 1 and not is_remote()
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
