"""QualityGate: the ``foreachBatch`` sink that validates each micro-batch and routes every row exactly once.

The gate conducts; each part has a room of its own:

- :mod:`~streaming_dq.sink.options`: the options, validated once (from keywords or a gate config);
- :mod:`~streaming_dq.sink.setup`: the tables, created before any batch;
- :mod:`~streaming_dq.sink.flow`: the walk of one batch (replay check, drift, validation with ONE aggregation
  pass, the rows written by the router of :mod:`~streaming_dq.sink.routers`);
- :mod:`~streaming_dq.sink.commit`: the commit order (rows, then results, then the metrics table last), every
  commit recording ``(app id, batch id)`` so that a replay is recognised table by table;
- :mod:`~streaming_dq.sink.backend`: the writer, the router and the tables, made ready once;
- :mod:`~streaming_dq.sink.upkeep`: maintenance of every table, between batches or on demand;
- the gate itself: the app id, the checkpoint's lease and stop, and the
  :class:`~streaming_dq.core.outcome.BatchOutcome` reported only after the commits, to the outcome feed's
  listeners (:mod:`~streaming_dq.core.listeners`: ``metrics``, ``listeners``, ``on_batch``).

A batch whose writes fail raises :class:`~streaming_dq.exceptions.TargetWriteError`: the query stops without
committing its checkpoint, and Spark replays the batch with the same id on restart.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Unpack

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from streaming_dq.config.paths import absolute_location
from streaming_dq.core.column_types import check_input
from streaming_dq.core.listeners import BatchCallback, OutcomeFeed, OutcomeListener
from streaming_dq.core.modes import TargetRole
from streaming_dq.core.outcome import BatchOutcome, MaintenanceReport
from streaming_dq.exceptions import GateFailedError
from streaming_dq.maintenance import MaintenancePolicy
from streaming_dq.metrics.window_update import WindowUpdate
from streaming_dq.profiles import Profile
from streaming_dq.sink.backend import Backend
from streaming_dq.sink.batch_history import BatchHistory
from streaming_dq.sink.checkpoint import QueryIdentity
from streaming_dq.sink.commit import BatchCommitter
from streaming_dq.sink.flow import BatchFlow, batch_context
from streaming_dq.sink.lease import CheckpointLease
from streaming_dq.sink.options import GateKeywords, GateOptions, with_catalog_tables
from streaming_dq.sink.ports import MessageCounter, SourceDecoder
from streaming_dq.sink.query import hold_for_query, start_query
from streaming_dq.sink.references import ReferenceResolver, ReferenceSpec, reference_specs
from streaming_dq.sink.routers.base import Router
from streaming_dq.sink.seen_keys import SeenKeys
from streaming_dq.sink.stopping import StopSignal
from streaming_dq.sink.upkeep import Upkeep
from streaming_dq.tables import DeltaTarget, TableWriter

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.config.gate_config import GateConfig

logger = logging.getLogger("streaming_dq.gate")


class QualityGate:
    """A data-quality gate for ``writeStream.foreachBatch``: every row to pass or quarantine, exactly once.

    Args:
        name: The gate's name; with the streaming query id it forms the idempotency app id.
        check_set: The checks.
        reference_datasets: Named reference data for integrity checks: static DataFrames, or
            :class:`ReferenceSpec` re-read every ``refresh_seconds`` (0: every batch).
        on_batch: Called with each batch's outcome after its commits (a listener of the outcome feed).
        metrics: A listener of the outcome feed (:class:`~streaming_dq.core.listeners.OutcomeListener`, such as
            the exporter's ``GateMetrics``): ``record_batch(outcome)`` after the commits, ``record_failure``
            when a batch fails, ``record_windows`` when the end of the input closes windows.
        listeners: More listeners of the outcome feed, told every event after ``metrics`` and before
            ``on_batch``.
        source_decoder: Turns each micro-batch of the stream into its rows before anything else (a csv
            source read by its files' headers: :class:`~streaming_dq.sources.CsvHeaderDecoder`); ``start``
            checks the checks against its ``schema()`` instead of the stream's.
        pass_table, quarantine_table, ...: Every other keyword is one of the gate's options, each described
            once, on :meth:`GateOptions.of <streaming_dq.sink.options.GateOptions.of>` (the tables, the fail
            levels, event time and profiles, writer and routing, the policies, windows and maintenance).

    Raises:
        ConfigError: An option has an unknown value.

    Example:
        >>> gate = QualityGate(  # doctest: +SKIP
        ...     "orders",
        ...     CheckSet.from_yaml("checks.yaml"),
        ...     pass_table="/data/orders",
        ...     quarantine_table="/data/orders_quarantine",
        ...     results_table="/data/orders_dq_results",
        ...     event_time="order_ts",
        ... )
        >>> stream = spark.readStream.format("json").schema(schema).load("/landing/orders")  # doctest: +SKIP
        >>> query = gate.start(stream, checkpoint_location="/chk/orders", trigger={"availableNow": True})
        ... # doctest: +SKIP
        >>> query.awaitTermination()  # doctest: +SKIP
    """

    def __init__(
        self,
        name: str,
        check_set: CheckSet,
        *,
        reference_datasets: Mapping[str, DataFrame | ReferenceSpec] | None = None,
        on_batch: Callable[[BatchOutcome], None] | None = None,
        metrics: OutcomeListener | None = None,
        listeners: Sequence[OutcomeListener] = (),
        source_decoder: SourceDecoder | None = None,
        **option_keywords: Unpack[GateKeywords],
    ) -> None:
        options = GateOptions.of(name, **option_keywords)
        self._conduct(options, check_set, reference_datasets, (metrics, listeners, on_batch), source_decoder)

    @classmethod
    def from_config(
        cls,
        config: GateConfig,
        *,
        check_set: CheckSet | None = None,
        profiles: Sequence[Profile] | None = None,
        on_batch: Callable[[BatchOutcome], None] | None = None,
        metrics: OutcomeListener | None = None,
        listeners: Sequence[OutcomeListener] = (),
        maintenance_phase: float = 0.0,
    ) -> QualityGate:
        """The gate a gate config file describes (``streaming-dq run`` builds its gate here).

        Args:
            config: The loaded config.
            check_set: Its checks, when the caller has built them already (built here otherwise).
            profiles: Its profiles, likewise.
            on_batch: Called with each batch's outcome after its commits.
            metrics: A listener of the outcome feed (e.g. the exporter's ``GateMetrics``).
            listeners: More listeners of the outcome feed.
            maintenance_phase: Where its maintenance schedule starts in its period (``MaintenancePolicy.phase``;
                gates sharing a driver spread theirs).
        """
        from streaming_dq.sources import source_decoder

        config = with_catalog_tables(config)
        gate = cls.__new__(cls)
        options = GateOptions.from_config(config, profiles=profiles)
        if options.maintenance is not None and maintenance_phase:
            options = replace(options, maintenance=replace(options.maintenance, phase=maintenance_phase))
        gate._conduct(
            options,
            check_set if check_set is not None else config.check_set(),
            reference_specs(config),
            (metrics, listeners, on_batch),
            source_decoder(config.source),
        )
        return gate

    def _conduct(
        self,
        options: GateOptions,
        check_set: CheckSet,
        reference_datasets: Mapping[str, DataFrame | ReferenceSpec] | None,
        listening: tuple[
            OutcomeListener | None, Sequence[OutcomeListener], Callable[[BatchOutcome], None] | None
        ],
        source_decoder: SourceDecoder | None,
    ) -> None:
        """Assemble the gate's parts from validated options (both constructors end here); ``listening`` is
        ``(metrics, listeners, on_batch)``, fed in that order."""
        metrics, listeners, on_batch = listening
        self.options = options
        self.name = options.name
        self.check_set = check_set
        self.targets: dict[TargetRole, DeltaTarget] = dict(options.targets)
        #: Every event of the gate goes to its listeners through this feed (:mod:`~streaming_dq.core.listeners`).
        self.feed = OutcomeFeed(
            [metrics, *listeners, BatchCallback(on_batch) if on_batch else None], gate=options.name
        )
        self.metrics = metrics  # one of the feed's listeners, kept for the caller to read back
        self.source_decoder = source_decoder
        self._identity = QueryIdentity(options.name, options.checkpoint_location)
        self._lease: CheckpointLease | None = None
        self._stop = StopSignal()
        if options.profiles and not options.event_time:
            logger.warning("gate %r: profiles are ignored without an event-time column", options.name)
        self._committer = BatchCommitter.for_gate(options, check_set)
        #: The committer's participants: the batch-scoped anomaly checks' history, the keys seen across batches
        #: (unique-key checks with a horizon) and the window tracker (None without a metrics table).
        self.batch_history = self._committer.participant(BatchHistory)
        self.seen_keys = self._committer.participant(SeenKeys)
        self.tracker = self._committer.tracker
        self._backend = Backend(options, self.tracker, self.seen_keys)
        self._flow = BatchFlow(
            options, check_set, self._committer, ReferenceResolver(reference_datasets), self.seen_keys
        )
        self._upkeep = Upkeep(options, self.tracker, self.seen_keys)

    # the options a caller reads back
    event_time = property(lambda self: self.options.event_time)
    timezone = property(lambda self: self.options.timezone)
    profiles = property(lambda self: self.options.profiles)
    fail_levels = property(lambda self: self.options.fail_levels)
    maintenance = property(lambda self: self.options.maintenance)
    metrics_target = property(lambda self: self.options.metrics_table)

    @property
    def references(self) -> ReferenceResolver:
        """The gate's reference datasets (resolved for every batch; a release resolves them once)."""
        return self._flow.references

    @property
    def checkpoint_location(self) -> str | None:
        return self._identity.checkpoint_location

    # -- public ------------------------------------------------------------------------------------------

    def __call__(self, batch_df: DataFrame, batch_id: int) -> None:
        """Process one micro-batch (the ``foreachBatch`` function).

        Raises:
            TargetWriteError: A write failed; nothing was counted and Spark replays the batch.
            GateFailedError: ``on_aggregate_failure`` or ``schema_drift`` is ``stop`` and the batch tripped it.
            MissingReferenceDatasetError: An integrity check's reference data is missing.
        """
        started = time.monotonic()
        batch_id = int(batch_id)
        self._stop.refuse_new_batch(self.name, batch_id)
        try:
            if self._lease is not None:
                self._lease.check()  # taken over by another job: write nothing
            outcome = self._process(batch_df, batch_id, started)
        except Exception as exc:
            self._committer.invalidate()  # in-memory state (windows, history) may hold the failed batch
            stopped = self._stop.interrupted(self.name, batch_id, exc)
            if stopped is not None:  # interrupted by the stop, not failed: nothing committed, replayed later
                raise stopped from exc
            if not isinstance(exc, GateFailedError):  # a stop is logged where it is decided
                logger.error("gate %r: batch %d failed: %s", self.name, batch_id, exc)
            self.feed.record_failure(batch_id, exc)
            raise
        if outcome.status == "committed":
            report = self._upkeep.after_batch(self._backend.chosen_writer, batch_id)
            if report is not None:
                outcome = replace(outcome, maintenance=report)
                if "results" in self.targets:
                    self._flow.unreported_maintenance = report
        self.feed.record_batch(outcome)  # after the commits; a failing listener is logged, un-commits nothing

    def close_windows(self, spark: SparkSession) -> WindowUpdate | None:
        """Judge the event-time windows still open, now: the input has ended (a backfill, an ``available-now``
        run), and only a later event time closes a window. Call it after the query has stopped (``run
        --close-windows`` and ``gate: close-windows: at-end`` do). The verdicts are committed once, by the
        committer (:meth:`~streaming_dq.sink.commit.BatchCommitter.close_windows`: results, metrics last, under
        ``(<app id>/end-of-input, last batch id)``); rows of a closed window that arrive later are late.

        Returns:
            The update whose ``closed`` verdicts were committed; None without window-scoped checks, before
            the query's first batch, or when this end of input was already closed.

        Raises:
            TargetWriteError: A write failed (nothing is reported; call it again).

        Example:
            >>> query = gate.start(stream, checkpoint_location=cp, trigger={"availableNow": True})  # doctest: +SKIP
            >>> query.awaitTermination(); gate.close_windows(spark)  # doctest: +SKIP
        """
        update = self._committer.close_windows(self.writer_for(spark), self.name, self.app_id(spark))
        if update is not None:
            self.feed.record_windows(update.closed)
        return update

    def tables(self) -> dict[str, DeltaTarget]:
        """Every table the gate writes, by role (``pass``, ``quarantine``, ``results``, ``metrics``, ``keys``)."""
        return self._upkeep.tables()

    def maintain(self, spark: SparkSession, policy: MaintenancePolicy | None = None) -> MaintenanceReport:
        """Run maintenance on every table now (``streaming-dq maintain``), under ``policy`` or the gate's own.

        Raises:
            ConfigError: No policy, or a vacuum retention below a table's safe minimum.
        """
        return self._upkeep.now(self.writer_for(spark), policy)

    def start(
        self,
        stream_df: DataFrame,
        *,
        checkpoint_location: str,
        trigger: Mapping[str, Any] | None = None,
        query_name: str | None = None,
        scheduler_pool: str | None = None,
    ) -> StreamingQuery:
        """Create the tables if missing and start ``stream_df`` with this gate as its ``foreachBatch`` sink.

        Args:
            stream_df: A streaming DataFrame.
            checkpoint_location: The query's checkpoint; keep it to keep exactly-once across restarts.
                A local checkpoint whose first offset write was interrupted by a crash is made startable
                again (:mod:`~streaming_dq.sink.checkpoint`).
            trigger: ``{"availableNow": True}``, ``{"processingTime": "10 seconds"}`` or ``{"once": True}``
                (kebab- and snake-case keys are accepted); None is Spark's default (as fast as possible).
            query_name: Optional name of the query.
            scheduler_pool: Run the query's jobs in this fair-scheduler pool (the session needs
                ``spark.scheduler.mode=FAIR``): several gates on one driver then share the executors instead
                of queueing behind each other. Classic Spark only (Spark Connect has no pools).

        Returns:
            The running query.

        Raises:
            ConfigError: the event-time column is missing or not a timestamp.
            CheckEvaluationError: a check's column is missing from the stream or of a type it cannot judge, or
                its ``filter`` does not evaluate on the stream's columns as a predicate.
        """
        rows = stream_df
        if self.source_decoder is not None:  # the batches' rows are decoded per batch: check their schema
            rows = stream_df.sparkSession.createDataFrame([], self.source_decoder.schema())
        check_input(self.check_set, self.event_time, rows)
        self.ensure_tables(rows.schema, stream_df.sparkSession)
        checkpoint_location = absolute_location(checkpoint_location)
        pass_target = self.targets.get("pass")
        self._lease = hold_for_query(checkpoint_location, pass_target.storage_options if pass_target else {})
        return start_query(
            self,
            stream_df,
            checkpoint_location=checkpoint_location,
            identity=self._identity,
            lease=self._lease,
            trigger=trigger,
            query_name=query_name,
            scheduler_pool=scheduler_pool,
        )

    def ensure_tables(self, schema: StructType, spark: SparkSession, batch_id: int | None = None) -> None:
        """Create the missing tables with explicit, all-nullable schemas derived from ``schema``.

        Raises:
            TargetWriteError: A table cannot be created (or read).
            ConfigError: Maintenance settings a table cannot take safely.
        """
        self._backend.ensure_tables(spark, schema, batch_id)

    def app_id(self, spark: SparkSession) -> str:
        """``"<gate>:<streaming query id>"`` (see :class:`~streaming_dq.sink.checkpoint.QueryIdentity`).

        Raises:
            ConfigError: Under Spark Connect without a known checkpoint.
        """
        return self._identity.app_id(spark)

    def __getstate__(self) -> dict[str, Any]:
        """What crosses to a Spark Connect server's batch worker: the configuration, not the client's session.

        The writer and router chosen from names, the plans and the window accumulator's state are rebuilt
        there; the outcome feed's listeners (``metrics``, ``on_batch``) stay in the client (they would count
        into a copy nobody reads): the job feeds them from the results table instead
        (:class:`~streaming_dq.exporter.ResultsFollower`).
        """
        return {
            **self.__dict__,
            "metrics": None,
            "feed": OutcomeFeed(gate=self.name),
            "_lease": None,  # held and renewed by the client; the tables fence the server's commits
        }

    def stopping(self) -> None:
        """The gate's query is about to be stopped: a batch the stop interrupts, and one that begins from now on,
        raise :class:`~streaming_dq.exceptions.GateStoppedError` (no failure recorded; nothing of them was
        committed, the next run replays them)."""
        self._stop.begin()

    def stopped(self) -> None:
        """The query has stopped: a batch held back by :meth:`stopping` is let go (as not run)."""
        self._stop.done()

    def writer_for(self, spark: SparkSession) -> TableWriter:
        """The writer, chosen on first use (:class:`~streaming_dq.sink.backend.Backend`)."""
        return self._backend.writer(spark)

    def router_for(self, spark: SparkSession) -> Router:
        """The router, chosen on first use (:class:`~streaming_dq.sink.backend.Backend`)."""
        return self._backend.router(spark)

    # -- one batch ---------------------------------------------------------------------------------------

    def _process(self, df: DataFrame, batch_id: int, started: float) -> BatchOutcome:
        """Decode the batch, make sure the tables exist, then walk it (:class:`~streaming_dq.sink.flow.BatchFlow`)."""
        spark = df.sparkSession
        app_id = self.app_id(spark)
        if self.source_decoder is not None:
            df = self.source_decoder(df)
        writer, router = self._backend.ready(spark, df.schema, batch_id)
        counted = self.source_decoder.counted() if isinstance(self.source_decoder, MessageCounter) else ()
        ctx = batch_context(self.name, batch_id, app_id, counted)
        return self._flow.process(df, ctx, writer, router, started)

    def __repr__(self) -> str:
        return f"QualityGate({self.name!r}, pass={self.targets['pass']}, quarantine={self.targets['quarantine']})"
