"""Run one gate job from its config: Spark session, source stream, gate, Prometheus endpoint, until done.

:class:`GateJob` is the one-gate case of :class:`~streaming_dq.runtime.fleet.GateFleet`: it starts the
``/metrics`` endpoint first (a taken port fails before a JVM is started), builds the SparkSession, reads the
source with ``readStream``, starts the :class:`~streaming_dq.sink.QualityGate` as the ``foreachBatch`` sink,
and waits: an ``available-now`` job ends when the source is drained, a ``processing-time`` job when it is
stopped (``stop_event``, a signal, a timeout).

Example:
    >>> from streaming_dq.config.loader import load_gate_config
    >>> job = GateJob(load_gate_config("jobs/orders/orders.yaml"), on_batch=print)  # doctest: +SKIP
    >>> job.run().failed  # doctest: +SKIP
    False
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from streaming_dq.config.gate_config import GateConfig
from streaming_dq.core.outcome import BatchOutcome, WindowOutcome
from streaming_dq.runtime.fleet import GateFleet, JobTotals

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

__all__ = ["GateJob", "JobTotals"]


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
        self._fleet = GateFleet(
            [config],
            on_batch=on_batch,
            on_started=on_started,
            stop_event=stop_event,
            session=session,
            handle_signals=handle_signals,
            close_windows=close_windows,
            on_windows_closed=None if on_windows_closed is None else lambda _, w: on_windows_closed(w),
        )
        self._gate_run = self._fleet.runs[0]
        self.check_set = self._gate_run.check_set
        self.profiles = self._gate_run.profiles
        self.totals = self._gate_run.totals

    @property
    def query(self) -> StreamingQuery | None:
        """The gate's streaming query once started."""
        return self._gate_run.query

    @property
    def registry(self) -> CollectorRegistry | None:
        """The job's Prometheus registry once :meth:`run` started (None without ``metrics:`` exporters)."""
        return self._fleet.registry

    def check_paths(self) -> None:
        """Raise the ConfigError of every local path the job could not read or write (before Spark starts)."""
        self._gate_run.check_paths()

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
        self._fleet.run(timeout=timeout)
        return self.totals
