"""One gate of a job's run: its config, its metrics and outcome feed, its gate, query and totals.

:class:`GateRun` builds what a :class:`~streaming_dq.config.gate_config.GateConfig` names for one gate of a
:class:`~streaming_dq.runtime.fleet.GateFleet`: the :class:`~streaming_dq.sink.QualityGate` as the
``foreachBatch`` sink of the source's stream, its Prometheus series, and one outcome feed
(:mod:`~streaming_dq.core.listeners`) that the metrics, the totals and ``on_batch`` listen to. Under Spark
Connect the batches run on the server and the same feed is fed from the results table
(:class:`~streaming_dq.exporter.ResultsFollower`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from streaming_dq.compat.spark import is_remote
from streaming_dq.config.gate_config import GateConfig
from streaming_dq.core.base_check import BaseCheck, BaseRowCheck
from streaming_dq.core.listeners import BatchCallback, OutcomeFeed
from streaming_dq.core.outcome import BatchOutcome, CheckKind, WindowOutcome
from streaming_dq.exceptions import ConfigError
from streaming_dq.runtime.session import read_stream
from streaming_dq.runtime.totals import JobTotals, TotalsListener

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from streaming_dq.exporter import GateMetrics, ProgressBridge, QuarantineFollower, ResultsFollower
    from streaming_dq.sink import QualityGate

__all__ = ["GateRun", "first_line"]

#: How long a stop waits for the batch running now to finish before it interrupts it.
STOP_PATIENCE_SECONDS = 120.0


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
        #: Every event of this gate, from its own batches or followed on a Spark Connect server: the metrics
        #: (once :meth:`gate_metrics` made them), the totals, then ``on_batch``.
        self.feed = OutcomeFeed(
            [TotalsListener(self.totals), BatchCallback(on_batch) if on_batch else None], gate=self.name
        )
        if config.lineage is not None:  # OpenLineage events, after the gate's own listeners
            from streaming_dq.lineage import LineageListener

            self.feed.add(LineageListener(config))
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

        default = self.config.gate.alert

        def threshold(c: BaseCheck) -> float | None:
            alert = c.alert or (default if isinstance(c, BaseRowCheck) else None)
            return alert.max_share if alert is not None else None

        checks = [
            CheckLabels(c.check_id, c.check_type, c.severity.value, _kind(c), threshold(c))
            for c in self.check_set
        ]
        self.metrics = GateMetrics(
            self.name,
            registry=registry,
            checks=checks,
            profiles=[p.name for p in self.profiles],
            alongside=alongside,
        )
        self.feed.listeners.insert(0, self.metrics)
        return self.metrics

    def build_gate(self, maintenance_phase: float = 0.0) -> QualityGate:
        from streaming_dq.sink import QualityGate

        self.gate = QualityGate.from_config(
            self.config,
            check_set=self.check_set,
            profiles=self.profiles,
            listeners=[self.feed],
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
        follow = self._follower_start(session) if is_remote() else None
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

            if not is_remote():  # under Connect, follow() reads the progress: see _follow_progress
                self._bridge = ProgressBridge(self.feed, self.query.id)
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
        if self._quarantine is not None:
            for kind, counts in self._quarantine.poll():
                self.feed.record_quarantine(kind, counts)
        if self._follower is None:
            return
        self._follow_progress()
        outcomes = self._follower.poll()
        if (
            outcomes and self.gate is not None
        ):  # the keys table after the last of them (checks across batches)
            state = self.gate.seen_keys.read_state()
            if state is not None:
                outcomes[-1] = replace(outcomes[-1], keys=state)
        for outcome in outcomes:
            self.feed.record_batch(outcome)  # the listeners as if the batch had run here

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
            self.feed.record_progress(last)

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
            self.totals.failed, self.totals.error = True, first_line(error)
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
            self.totals.failed, self.totals.error = True, f"closing the open windows: {first_line(exc)}"
            return
        closed = update.closed if update is not None else ()  # the feed (metrics, totals) has them already
        if self._on_windows_closed is not None:
            self._on_windows_closed(closed)

    def finish(self, session: SparkSession) -> None:
        """After the query: the last batches followed, the progress listener removed, a failure counted."""
        self.follow()
        if self._bridge is not None and self.metrics is not None and self.query is not None:
            session.streams.removeListener(self._bridge)
            last = self.query.lastProgress  # the listener bus may not have delivered the last one yet
            if last:
                self.feed.record_progress(last)
        if self.totals.failed and self._follower is not None:
            self.feed.record_failure(-1, RuntimeError(self.totals.error))  # on the server: count it here


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


def _kind(check: BaseCheck) -> CheckKind:
    """How the exporter labels a check: ``row``, ``window`` (a window-scoped aggregate) or ``aggregate``."""
    if isinstance(check, BaseRowCheck):
        return "row"
    return "window" if getattr(check, "scope", None) is not None else "aggregate"


_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*(?:Error|Exception): .+)$")
#: One of this package's exceptions, whatever its name ends with.
_OUR_EXCEPTION_LINE = re.compile(r"^streaming_dq(?:\.\w+)*\.([A-Z]\w*: .+)$")


def first_line(exc: BaseException) -> str:
    """The line that says why a stream failed.

    A failed ``foreachBatch`` surfaces as a JVM ``StreamingQueryException`` whose text embeds the Python
    traceback: the gate's own error (``GateFailedError: gate 'orders' stopped at batch 3: ...``) is preferred,
    then the last Python exception line, then the first line.
    """
    text = getattr(exc, "desc", None) or str(exc)
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    found = [(line, m.group(1)) for line in lines if (m := _EXCEPTION_LINE.match(line))]
    ours = [m.group(1) for line in lines if (m := _OUR_EXCEPTION_LINE.match(line))]
    if ours:
        return ours[-1]
    if found:
        return found[-1][1]
    return lines[0] if lines else type(exc).__name__
