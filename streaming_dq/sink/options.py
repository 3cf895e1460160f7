"""A gate's options, validated once: from a Python caller's keywords or from a gate config file.

:class:`GateOptions` is what :class:`~streaming_dq.sink.gate.QualityGate` runs on. Every mode is checked
against :mod:`streaming_dq.core.modes` (a Python caller skips pydantic), every table name becomes a
:class:`~streaming_dq.tables.DeltaTarget`, every duration a ``timedelta``. :meth:`GateOptions.from_config`
is the one mapping of a :class:`~streaming_dq.config.gate_config.GateConfig` onto them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypedDict

from streaming_dq.checks.stream_keys import KEYS_IN_MEMORY
from streaming_dq.config.paths import absolute_location
from streaming_dq.core.modes import (
    AggregateFailurePolicy,
    DriftPolicy,
    LateDataPolicy,
    Routing,
    TargetRole,
    WriterName,
    choice,
)
from streaming_dq.core.severity import Severity, normalize_severity
from streaming_dq.exceptions import ConfigError
from streaming_dq.metrics.accumulator import DEFAULT_REOPEN_HORIZON
from streaming_dq.profiles.event_time import time_zone
from streaming_dq.profiles.public_holidays import expand_profiles
from streaming_dq.sources import DEFAULT_MALFORMED_COLUMN
from streaming_dq.tables import DeltaTarget, TableWriter
from streaming_dq.tables.spark import DRIVER_COMMIT_ROWS

if TYPE_CHECKING:
    from streaming_dq.config.gate_config import GateConfig
    from streaming_dq.maintenance import MaintenancePolicy
    from streaming_dq.profiles import Profile

__all__ = ["GateKeywords", "GateOptions", "trigger_kwargs", "with_catalog_tables"]


class _GateTables(TypedDict):
    pass_table: str | DeltaTarget
    quarantine_table: str | DeltaTarget


class GateKeywords(_GateTables, total=False):
    """The option keywords of ``QualityGate(name, check_set, **options)``: those of :meth:`GateOptions.of`
    but its name, where each is described (``tests/unit/test_gate_options.py`` holds the two lists equal)."""

    results_table: str | DeltaTarget | None
    fail_levels: Sequence[Severity | str]
    event_time: str | None
    timezone: str
    profiles: Sequence[Profile]
    writer: WriterName | TableWriter
    routing: Routing
    driver_commit_rows: int
    keys_in_memory: int
    on_aggregate_failure: AggregateFailurePolicy
    schema_drift: DriftPolicy | None
    malformed_column: str
    metrics_table: str | DeltaTarget | None
    keys_table: str | DeltaTarget | None
    allowed_lateness: timedelta
    late_data: LateDataPolicy
    reopen_horizon: timedelta
    checkpoint_location: str | None
    maintenance: MaintenancePolicy | None


@dataclass(frozen=True)
class GateOptions:
    """Everything a gate is configured with but its checks, callbacks and reference data (see ``QualityGate``).

    Build it with :meth:`of` (keywords, validated) or :meth:`from_config`.
    """

    name: str
    targets: Mapping[TargetRole, DeltaTarget]
    fail_levels: tuple[Severity, ...]
    event_time: str | None
    timezone: str
    profiles: tuple[Profile, ...]
    writer: WriterName | TableWriter
    routing: Routing
    driver_commit_rows: int
    keys_in_memory: int
    on_aggregate_failure: AggregateFailurePolicy
    schema_drift: DriftPolicy | None
    malformed_column: str
    metrics_table: DeltaTarget | None
    keys_table: DeltaTarget | None
    allowed_lateness: timedelta
    late_data: LateDataPolicy
    reopen_horizon: timedelta
    checkpoint_location: str | None
    maintenance: MaintenancePolicy | None

    @classmethod
    def of(
        cls,
        name: str,
        *,
        pass_table: str | DeltaTarget,
        quarantine_table: str | DeltaTarget,
        results_table: str | DeltaTarget | None = None,
        fail_levels: Sequence[Severity | str] = (Severity.CRITICAL,),
        event_time: str | None = None,
        timezone: str = "UTC",
        profiles: Sequence[Profile] = (),
        writer: WriterName | TableWriter = "auto",
        routing: Routing = "auto",
        driver_commit_rows: int = DRIVER_COMMIT_ROWS,
        keys_in_memory: int = KEYS_IN_MEMORY,
        on_aggregate_failure: AggregateFailurePolicy = "quarantine-batch",
        schema_drift: DriftPolicy | None = None,
        malformed_column: str = DEFAULT_MALFORMED_COLUMN,
        metrics_table: str | DeltaTarget | None = None,
        keys_table: str | DeltaTarget | None = None,
        allowed_lateness: timedelta = timedelta(0),
        late_data: LateDataPolicy = "count",
        reopen_horizon: timedelta = DEFAULT_REOPEN_HORIZON,
        checkpoint_location: str | None = None,
        maintenance: MaintenancePolicy | None = None,
    ) -> GateOptions:
        """Validated options (the keywords are ``QualityGate``'s; each is described here, once).

        Args:
            name: The gate's name; with the streaming query id it forms the idempotency app id.
            pass_table: Where passing (and warning-only) rows go: the input columns, malformed column dropped.
            quarantine_table: Where failed rows go, with ``_dq_errors``, ``_dq_validation_ts``, ``_dq_batch_id``,
                ``_dq_gate`` and ``_dq_raw`` (the raw text of a malformed record, or the JSON of a drifted row).
            results_table: Optional table of one row per check per batch.
            fail_levels: Severities that fail a row.
            event_time: The event-time column; profiles are chosen per row from its date.
            timezone: The zone of the dates profiles are defined in.
            profiles: Rule profiles (need ``event_time``); a row with a NULL event time runs under no profile.
            writer: ``delta-rs``, ``spark`` (Delta's Spark writer), ``auto`` (spark when the session loads the
                Delta extension), or a :class:`TableWriter` instance.
            routing: ``driver`` (collect each batch to the driver, split it in Arrow: one Spark job),
                ``distributed`` (keep the rows on the executors; needs Spark's Delta writer) or ``auto``
                (distributed when the writer is Spark's or the master is not local).
            driver_commit_rows: With Spark's writer, writes of at most this many rows (a small batch's rows, the
                results and metrics rows) are committed by delta-rs from the driver where it can write the table
                (see :mod:`streaming_dq.tables.spark`); 0: every write through Spark.
            keys_in_memory: The driver router holds the keys table's records its horizon reaches in memory
                (:mod:`~streaming_dq.sink.key_index`, 44 bytes each): at most this many; more ends the batch
                with a ConfigError naming ``targets.keys-in-memory`` before anything is written.
            on_aggregate_failure: ``quarantine-batch`` (the batch's rows go to quarantine with the failed
                aggregate in ``_dq_errors``) or ``stop`` (raise :class:`GateFailedError` before writing).
            schema_drift: ``merge``, ``quarantine`` or ``stop``; None applies the default policy (merge added
                nullable columns, quarantine the batch on a missing column or a changed type).
            malformed_column: The source's corrupt-record column; a non-NULL value quarantines the row as
                ``malformed-record``.
            metrics_table: The Delta table of mergeable metric states and window verdicts (needed by window-scoped
                checks); the accumulators are rebuilt from it on a restart.
            keys_table: The Delta table of the keys seen by ``unique-key-check`` with a ``horizon`` (needed by
                them): each key's first occurrence, partitioned by event date (:mod:`~streaming_dq.sink.seen_keys`).
            allowed_lateness: How far behind the largest event time seen a window may still receive rows.
            late_data: Rows of a closed window: ``count`` (counted late, the verdict stands) or ``reopen`` (merged,
                the window judged again).
            reopen_horizon: Under ``reopen``, how long after the watermark passed a window's end its late rows
                still reopen it; older windows leave memory and their late rows are counted as under ``count``.
            checkpoint_location: The stream's checkpoint, when the gate is attached with ``foreachBatch`` by hand
                under Spark Connect (:meth:`start` sets it): the query id, and so the app id, is read from it.
            maintenance: Compaction, log checkpoints, vacuum and the metrics roll-up, run between batches when
                due (:class:`~streaming_dq.maintenance.MaintenancePolicy`); None: never by the gate.

        Raises:
            ConfigError: An empty name, or a mode with an unknown value (naming its config field).
        """
        if not name or not isinstance(name, str):
            raise ConfigError("the gate needs a non-empty name", field_path="gate.name")
        if (
            isinstance(driver_commit_rows, bool)
            or not isinstance(driver_commit_rows, int)
            or driver_commit_rows < 0
        ):
            raise ConfigError(
                f"driver-commit-rows must be a whole number >= 0, not {driver_commit_rows!r}",
                field_path="targets.driver-commit-rows",
            )
        if isinstance(keys_in_memory, bool) or not isinstance(keys_in_memory, int) or keys_in_memory < 1:
            raise ConfigError(
                f"keys-in-memory must be a whole number >= 1, not {keys_in_memory!r}",
                field_path="targets.keys-in-memory",
            )
        targets: dict[TargetRole, DeltaTarget] = {
            "pass": DeltaTarget.of(pass_table),
            "quarantine": DeltaTarget.of(quarantine_table),
        }
        if results_table is not None:
            targets["results"] = DeltaTarget.of(results_table)
        return cls(
            name=name,
            targets=targets,
            fail_levels=tuple(normalize_severity(s) for s in fail_levels),
            event_time=event_time,
            timezone=time_zone(timezone).key,
            # a public-holiday calendar: one profile per holiday
            profiles=tuple(expand_profiles(profiles)),
            writer=writer
            if isinstance(writer, TableWriter)
            else choice(writer, WriterName, "targets.writer"),
            routing=choice(routing, Routing, "targets.routing"),
            driver_commit_rows=driver_commit_rows,
            keys_in_memory=keys_in_memory,
            on_aggregate_failure=choice(on_aggregate_failure, AggregateFailurePolicy, "on-aggregate-failure"),
            schema_drift=None if schema_drift is None else choice(schema_drift, DriftPolicy, "schema-drift"),
            malformed_column=malformed_column,
            metrics_table=DeltaTarget.of(metrics_table) if metrics_table is not None else None,
            keys_table=DeltaTarget.of(keys_table) if keys_table is not None else None,
            allowed_lateness=allowed_lateness,
            late_data=choice(late_data, LateDataPolicy, "gate.late-data"),
            reopen_horizon=reopen_horizon,
            checkpoint_location=absolute_location(checkpoint_location) if checkpoint_location else None,
            maintenance=maintenance,
        )

    @classmethod
    def from_config(cls, config: GateConfig, *, profiles: Sequence[Profile] | None = None) -> GateOptions:
        """The options a gate config file describes (``profiles``: already built from it, else built here)."""
        c = config
        return cls.of(
            c.gate.name,
            pass_table=c.table("pass"),
            quarantine_table=c.table("quarantine"),
            results_table=c.table("results") if c.targets.results else None,
            fail_levels=c.fail_levels,
            event_time=c.gate.event_time,
            timezone=c.gate.timezone,
            profiles=c.profile_objects() if profiles is None else profiles,
            writer=c.targets.writer,
            routing=c.targets.routing,
            driver_commit_rows=c.targets.driver_commit_rows,
            keys_in_memory=c.targets.keys_in_memory,
            on_aggregate_failure=c.on_aggregate_failure,
            schema_drift=c.schema_drift,
            malformed_column=c.source.malformed_column,
            metrics_table=c.table("metrics") if c.targets.metrics else None,
            keys_table=c.table("keys") if c.targets.keys else None,
            allowed_lateness=c.gate.lateness,
            late_data=c.gate.late_data,
            reopen_horizon=c.gate.horizon,
            checkpoint_location=c.checkpoint,
            maintenance=c.maintenance.policy() if c.maintenance is not None else None,
        )

    @property
    def fail_values(self) -> frozenset[str]:
        return frozenset(s.value for s in self.fail_levels)


_TRIGGER_KEYS = {"availablenow": "availableNow", "processingtime": "processingTime", "once": "once"}


def trigger_kwargs(trigger: Mapping[str, Any]) -> dict[str, Any]:
    """``DataStreamWriter.trigger`` keywords from Spark's, kebab- or snake-case keys.

    Raises:
        ConfigError: An unknown trigger.
    """
    out = {}
    for key, value in trigger.items():
        norm = _TRIGGER_KEYS.get(key.replace("-", "").replace("_", "").lower())
        if norm is None:
            raise ConfigError(
                f"unknown trigger {key!r}: expected availableNow, processingTime or once",
                field_path="trigger",
            )
        out[norm] = value
    return out


def with_catalog_tables(config: GateConfig) -> GateConfig:
    """``config`` with its catalog table names resolved in the active session's catalog (once; unchanged
    without any).

    Raises:
        ConfigError: catalog names and no active Spark session.
    """
    if not config.catalog_pending:
        return config
    from pyspark.sql import SparkSession

    from streaming_dq.config.catalog import resolve_catalog_tables

    session = SparkSession.getActiveSession()
    if session is None:
        raise ConfigError(
            "catalog table names are looked up in a Spark session's catalog: create the session before the gate",
            source=config.source_file,
        )
    return resolve_catalog_tables(config, session)
