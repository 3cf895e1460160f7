"""The sections of a gate config but ``source:``: the gate, its targets, maintenance, reference datasets,
metrics endpoints and the Spark session."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from pydantic import (
    BeforeValidator,
    Field,
    StringConstraints,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from streaming_dq.checks.stream_keys import KEYS_IN_MEMORY
from streaming_dq.config.fields import (
    BATCHES,
    DdlSchema,
    NonEmpty,
    OptionValue,
    Section,
    TableRef,
    every_text,
    named_table,
    size_bytes,
)
from streaming_dq.config.odcs.rules import ContractOptions
from streaming_dq.core.alerting import AlertThreshold
from streaming_dq.core.modes import (
    CloseWindows,
    ExtraColumns,
    FileFormat,
    LateDataPolicy,
    Routing,
    WriterName,
)
from streaming_dq.core.scope import parse_duration
from streaming_dq.core.severity import Severity, normalize_severity
from streaming_dq.exceptions import ConfigError
from streaming_dq.maintenance import MaintenancePolicy
from streaming_dq.profiles.event_time import time_zone
from streaming_dq.tables.spark import DRIVER_COMMIT_ROWS

# --- sections ------------------------------------------------------------------------------------------------


class GateSection(Section):
    """``gate:``: the gate's name, its event-time column and the time zone its calendar dates are read in."""

    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")] = Field(
        description="The gate's name: the `gate` label of its metrics and part of its Delta app id."
    )
    event_time: NonEmpty | None = Field(
        default=None, description="The event-time (timestamp) column; profiles are chosen from it."
    )
    timezone: NonEmpty = Field(
        default="UTC", description="IANA time zone of profile dates, e.g. Europe/Berlin."
    )

    allowed_lateness: NonEmpty = Field(
        default="0 seconds",
        description="How far behind the largest event time seen a row may arrive before its window closes, "
        "e.g. '2 hours'.",
    )
    late_data: LateDataPolicy = Field(
        default="count",
        description="Rows of an already closed window: 'count' them as late (not merged), or 'reopen' the window.",
    )
    reopen_horizon: NonEmpty = Field(
        default="7 days",
        description="With late-data 'reopen': how long after the watermark passed a window's end its late rows "
        "still reopen it; older windows leave memory and their late rows are counted, e.g. '30 days'.",
    )
    close_windows: CloseWindows = Field(
        default="never",
        description="'at-end': when an available-now run has drained its input, judge the event-time windows "
        "still open (a finite input's last window otherwise stays provisional); 'never' waits for later data.",
    )

    alert: AlertThreshold | None = Field(
        default=None,
        description="The alerting threshold of every row check without its own alert, e.g. {max-share: 1%}: "
        "exported as streaming_dq_check_alert_max_share for the shipped rule StreamingDQCheckViolationShareHigh.",
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        time_zone(value)
        return value

    @field_validator("allowed_lateness", "reopen_horizon")
    @classmethod
    def _duration(cls, value: str) -> str:
        parse_duration(value)
        return value

    @property
    def lateness(self) -> timedelta:
        return parse_duration(self.allowed_lateness)

    @property
    def horizon(self) -> timedelta:
        return parse_duration(self.reopen_horizon)


class TargetsSection(Section):
    """``targets:``: the Delta tables the gate writes, and which writer writes them."""

    pass_table: TableRef = Field(alias="pass", description="Delta table of the rows that passed.")
    quarantine: TableRef = Field(description="Delta table of the failed rows, with their reasons.")
    results: TableRef | None = Field(default=None, description="Delta table: one row per check per batch.")
    metrics: TableRef | None = Field(default=None, description="Delta table of mergeable metric states.")
    keys: TableRef | None = Field(
        default=None,
        description="Delta table of the keys seen by unique-key-checks with a horizon (needed by them).",
    )
    writer: WriterName = Field(
        default="auto", description="auto: Spark's Delta writer when the session has it, else delta-rs."
    )
    routing: Routing = Field(
        default="auto",
        description="driver: collect each batch to the driver and split it in Arrow (one Spark job); "
        "distributed: keep the rows on the executors (needs writer spark); auto: distributed when the "
        "writer is Spark's or the master is not local.",
    )
    driver_commit_rows: int = Field(
        default=DRIVER_COMMIT_ROWS,
        ge=0,
        description="With Spark's writer: writes of at most this many rows (a small batch's pass and "
        "quarantine rows, the results and metrics rows) are committed by delta-rs from the driver, where "
        "delta-rs may write the table (local paths, protocols it fully supports); 0: every write through Spark.",
    )

    keys_in_memory: int = Field(
        default=KEYS_IN_MEMORY,
        ge=1,
        description="The driver router keeps the keys table's records its horizon reaches in memory, 44 bytes "
        "each: at most this many (more ends the batch with an error naming this field, never an out-of-memory).",
    )

    storage_options: dict[str, OptionValue] = Field(
        default_factory=dict,
        description="Object-store options of the gate's tables (over the gate-wide storage-options), in "
        "delta-rs's spelling: AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, "
        "aws_conditional_put ...; write secrets as ${ENV}.",
    )

    def paths(self) -> dict[str, str]:
        """The configured tables by their config key (``pass``, ``quarantine`` ...)."""
        named = {"pass": self.pass_table, "quarantine": self.quarantine}
        optional = (("results", self.results), ("metrics", self.metrics), ("keys", self.keys))
        named.update({k: v for k, v in optional if v})
        return named


class VacuumSection(Section):
    """``maintenance.vacuum:``: deleting files no recent version references (off unless given)."""

    retention: NonEmpty = Field(
        description="Keep files unreferenced for less than this, e.g. '7 days'; never shorter than the table's "
        "delta.deletedFileRetentionDuration (7 days by default)."
    )
    dry_run: bool = Field(default=False, description="Only list what would be deleted.")

    @field_validator("retention")
    @classmethod
    def _duration(cls, value: str) -> str:
        parse_duration(value)
        return value


class MaintenanceSection(Section):
    """``maintenance:``: what the gate does to its tables between batches (compaction, checkpoints, vacuum,
    metrics roll-up), and how often; ``streaming-dq maintain`` does the same by hand."""

    every: Annotated[str, BeforeValidator(every_text)] | None = Field(
        default=None,
        description="Run after this many committed batches ('500 batches') or this much time ('1 hour'); "
        "without it the gate never runs maintenance itself.",
    )
    compact: bool = Field(default=True, description="Rewrite small files into files of target-file-size.")
    target_file_size: (
        Annotated[
            int,
            BeforeValidator(size_bytes),
            WithJsonSchema({"type": ["integer", "string"], "examples": ["128 MiB"]}),
        ]
        | None
    ) = Field(
        default=None, description="e.g. '128 MiB'; default: the writer's (100 MiB delta-rs, 1 GiB Spark)."
    )
    z_order_by: list[NonEmpty] = Field(
        default_factory=list, description="Z-order the pass and quarantine tables by these columns."
    )
    checkpoint: bool = Field(default=True, description="Write a Delta log checkpoint after compacting.")
    vacuum: VacuumSection | None = None
    roll_up_after: NonEmpty | None = Field(
        default=None,
        description="Fold metrics-table rows older than this ('7 days') into one row per key (exact).",
    )
    log_retention: NonEmpty | None = Field(
        default=None,
        description="Set the tables' delta.logRetentionDuration ('7 days'): how long the Delta log keeps "
        "commits a checkpoint made unnecessary; never shorter than delta.deletedFileRetentionDuration.",
    )

    @field_validator("roll_up_after", "log_retention")
    @classmethod
    def _roll_up(cls, value: str | None) -> str | None:
        if value is not None:
            parse_duration(value)
        return value

    def policy(self) -> MaintenancePolicy:
        """The :class:`~streaming_dq.maintenance.MaintenancePolicy` this section describes."""
        every_batches, every = None, None
        if self.every is not None:
            m = BATCHES.match(self.every)
            every_batches, every = (int(m.group(1)), None) if m else (None, parse_duration(self.every))
        return MaintenancePolicy(
            every_batches=every_batches,
            every=every,
            compact=self.compact,
            target_file_size=self.target_file_size,
            z_order=tuple(self.z_order_by),
            checkpoint=self.checkpoint,
            vacuum_retention=parse_duration(self.vacuum.retention) if self.vacuum else None,
            vacuum_dry_run=self.vacuum.dry_run if self.vacuum else False,
            roll_up_after=parse_duration(self.roll_up_after) if self.roll_up_after else None,
            log_retention=parse_duration(self.log_retention) if self.log_retention else None,
        )


class ReferenceDatasetConfig(Section):
    """One entry of ``reference-datasets:``: a table or file integrity checks compare against (``path``, or
    ``table: schema.table`` for a table in the session's catalog)."""

    format: FileFormat
    path: NonEmpty = Field(description="Path or URI; a catalog table is written table: schema.table instead.")

    @model_validator(mode="before")
    @classmethod
    def _table(cls, data: object) -> object:
        return named_table(data)

    schema_: DdlSchema | None = Field(default=None, alias="schema", description="Spark DDL schema.")
    options: dict[str, OptionValue] = Field(default_factory=dict)
    refresh_seconds: float = Field(
        default=0.0, ge=0, description="Re-read after this many seconds; 0 re-reads it every batch."
    )
    storage_options: dict[str, OptionValue] = Field(
        default_factory=dict, description="Object-store options (over the gate-wide storage-options)."
    )


class ContractSection(Section):
    """``contract:``: an ODCS v3 data contract whose schema object the gate runs as checks (docs/contracts.md)."""

    path: NonEmpty = Field(description="The contract file (YAML or JSON); relative to the config file.")
    schema_object: NonEmpty | None = Field(
        default=None,
        alias="schema",
        description="The schema object judged (its name); the only one if omitted.",
    )
    unique_horizon: timedelta | None = Field(
        default=None, description="Judge unique and primary-key properties across batches for this long."
    )
    references: dict[str, NonEmpty] = Field(
        default_factory=dict, description="ODCS object -> the reference-datasets entry holding its rows."
    )
    extra_columns: ExtraColumns = Field(
        default="fail", description="Whether a column the contract does not describe breaks its schema rule."
    )
    severity: Severity = Field(
        default=Severity.CRITICAL, description="Of property rules, and of quality rules that give none."
    )
    storage_options: dict[str, OptionValue] = Field(
        default_factory=dict,
        description="Object-store options of the contract's URL (over the gate-wide storage-options).",
    )

    @field_validator("unique_horizon", mode="before")
    @classmethod
    def _horizon(cls, value: object) -> object:
        return parse_duration(value) if isinstance(value, str) else value

    @field_validator("severity", mode="before")
    @classmethod
    def _severity(cls, value: object) -> object:
        return normalize_severity(value) if isinstance(value, str) else value

    def options(self) -> ContractOptions:
        return ContractOptions(
            schema_object=self.schema_object,
            unique_horizon=self.unique_horizon,
            references=dict(self.references),
            extra_columns=self.extra_columns,
            severity=self.severity,
        )


class PrometheusSection(Section):
    """``metrics.prometheus:``: where the driver serves ``/metrics``."""

    host: NonEmpty = "127.0.0.1"
    port: int = Field(default=9108, ge=0, le=65535, description="0 lets the OS choose a free port.")


class PushgatewaySection(Section):
    """``metrics.pushgateway:``: push the metrics once when an available-now run ends."""

    url: NonEmpty = Field(description="Pushgateway address, e.g. http://pushgateway:9091.")
    job: NonEmpty = "streaming_dq"


class MetricsSection(Section):
    """``metrics:``: the Prometheus endpoint and the optional Pushgateway."""

    prometheus: PrometheusSection | None = None
    pushgateway: PushgatewaySection | None = None


class LineageTransportSection(Section):
    """``lineage.transport:``: where OpenLineage events go, with ``openlineage-python``'s own transports."""

    type: Literal["file", "http", "kafka", "console"] = Field(
        description="file: one JSON event per line appended to `path`; http: POSTed to `url` + `endpoint`; "
        "kafka: produced to `topic`; console: logged."
    )
    path: NonEmpty | None = Field(default=None, description="file: the events file (relative to the config).")
    url: NonEmpty | None = Field(default=None, description="http: the receiver, e.g. http://marquez:5000.")
    endpoint: NonEmpty = Field(default="api/v1/lineage", description="http: the path under `url`.")
    api_key: NonEmpty | None = Field(
        default=None, description="http: sent as a bearer token; write it as ${ENV}, never in the file."
    )
    timeout: float = Field(default=5.0, gt=0, le=300, description="http: seconds per request.")
    retries: int = Field(
        default=5, ge=0, le=20, description="http: retries of a failed request (backing off)."
    )
    topic: NonEmpty | None = Field(default=None, description="kafka: the topic.")
    config: dict[str, OptionValue] = Field(
        default_factory=dict, description="kafka: producer settings (bootstrap.servers, ...)."
    )

    @model_validator(mode="after")
    def _needs(self) -> LineageTransportSection:
        needed = {"file": "path", "http": "url", "kafka": "topic"}.get(self.type)
        if needed is not None and getattr(self, needed) is None:
            raise ConfigError(f"the {self.type} transport needs `{needed}`", field_path=needed)
        if self.type == "kafka" and "bootstrap.servers" not in self.config:
            raise ConfigError(
                "the kafka transport needs `config: {bootstrap.servers: ...}`", field_path="config"
            )
        return self


class LineageSection(Section):
    """``lineage:``: OpenLineage run events per micro-batch and per closed window (off without the section)."""

    namespace: NonEmpty = Field(default="streaming-dq", description="The jobs' OpenLineage namespace.")
    transport: LineageTransportSection
    windows: bool = Field(default=True, description="Also an event per final window verdict.")


class SparkSection(Section):
    """``spark:``: the session the job builds (ignored where a session already exists)."""

    master: NonEmpty = "local[2]"
    remote: NonEmpty | None = Field(
        default=None,
        description="A Spark Connect server (sc://host:15002): the job connects to it instead of starting "
        "Spark; master and the JARs are then the server's.",
    )
    app_name: NonEmpty | None = Field(default=None, description="Defaults to streaming-dq-<gate name>.")
    log_level: Literal["ALL", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"] = "WARN"
    conf: dict[str, OptionValue] = Field(default_factory=dict, description="Extra Spark conf entries.")
