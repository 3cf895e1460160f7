"""The YAML config of a whole gate job: pydantic models of its sections, and the JSON Schema for editors.

A gate config names the source stream, the gate, its targets, its checks and profiles, the Prometheus
endpoint and the Spark session:

```yaml
gate: {name: orders, event-time: order_ts, timezone: UTC}
source:
  format: json
  path: data/landing/orders
  schema: "order_id STRING, order_ts TIMESTAMP, customer_id STRING, amount DOUBLE"
  max-files-per-trigger: 1
  trigger: available-now            # or {processing-time: "10 seconds"}
checkpoint: data/state/orders
targets: {pass: data/tables/orders_pass, quarantine: data/tables/orders_quarantine}
checks:
  - {check: null-check, check-id: order-id-present, columns: [order_id]}
```

Keys are kebab-case (the snake_case field names are accepted too) and unknown keys are errors, so a typo
never silently changes what runs. The ``checks:`` items are validated by the check factory (see
:func:`streaming_dq.config.loader.load_gate_config`), the ``profiles:`` items by
:mod:`streaming_dq.profiles.config`. Load files with :func:`~streaming_dq.config.loader.load_gate_config`,
which also expands ``${ENV}`` variables and resolves relative paths against the config file's folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    PrivateAttr,
    StringConstraints,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from streaming_dq.config.check_set import CheckSet
from streaming_dq.core.base_config import kebab
from streaming_dq.core.modes import (
    AggregateFailurePolicy,
    CloseWindows,
    Dialect,
    DriftPolicy,
    FileFormat,
    LateDataPolicy,
    Routing,
    SourceFormat,
    UnknownFields,
    WriterName,
    choices,
)
from streaming_dq.core.scope import parse_duration
from streaming_dq.core.severity import Severity, normalize_severity
from streaming_dq.exceptions import ConfigError
from streaming_dq.maintenance import MaintenancePolicy
from streaming_dq.profiles.config import ProfileList
from streaming_dq.profiles.event_time import time_zone
from streaming_dq.profiles.profiles import Profile

__all__ = [
    "FILE_FORMATS",
    "KAFKA_COLUMNS",
    "GateConfig",
    "GateSection",
    "MetricsSection",
    "PayloadSection",
    "PrometheusSection",
    "PushgatewaySection",
    "ReferenceDatasetConfig",
    "SourceSection",
    "SparkSection",
    "TargetsSection",
    "Trigger",
    "ddl_column_names",
    "ddl_columns",
    "gate_config_json_schema",
    "parse_trigger",
]

FILE_FORMATS: tuple[str, ...] = choices(FileFormat)
"""Source and reference formats a gate config accepts (``delta`` needs the delta-spark JARs to stream)."""

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


def _checked_ddl(value: str) -> str:
    ddl_column_names(value)  # raises the ConfigError naming the bad item
    return value


#: A Spark DDL schema (``"id STRING, ts TIMESTAMP"``), checked item by item when the config is read.
DdlSchema = Annotated[NonEmpty, AfterValidator(_checked_ddl)]


def _option_value(value: object) -> str:
    """Spark reader options are strings: ``true`` -> ``"true"``, ``1`` -> ``"1"``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise ConfigError(f"an option value must be a string, number or boolean, got {type(value).__name__}")


#: In the JSON Schema a string, number or boolean: what the validator accepts, not the string it makes of it.
OptionValue = Annotated[
    str,
    BeforeValidator(_option_value),
    WithJsonSchema({"type": ["string", "number", "integer", "boolean"]}),
]


class _Section(BaseModel):
    model_config = ConfigDict(
        alias_generator=kebab, populate_by_name=True, extra="forbid", frozen=True, validate_default=True
    )


# --- trigger ---------------------------------------------------------------------------------------------

_INTERVAL = re.compile(
    r"^\s*\d+(\.\d+)?\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?|d|days?)\s*$", re.I
)


@dataclass(frozen=True)
class Trigger:
    """When micro-batches run: drain what is there and stop, or one batch every interval, forever.

    Attributes:
        processing_time: The interval (``"10 seconds"``) of a processing-time trigger; None for available-now.
    """

    processing_time: str | None = None

    @property
    def available_now(self) -> bool:
        """True when the job drains the source and stops."""
        return self.processing_time is None

    def to_spark(self) -> dict[str, Any]:
        """The keyword arguments of ``DataStreamWriter.trigger``.

        Example:
            >>> Trigger("10 seconds").to_spark()
            {'processingTime': '10 seconds'}
        """
        if self.processing_time is None:
            return {"availableNow": True}
        return {"processingTime": self.processing_time}

    def to_config(self) -> str | dict[str, str]:
        """The YAML form: ``available-now`` or ``{processing-time: INTERVAL}``."""
        return "available-now" if self.processing_time is None else {"processing-time": self.processing_time}


def parse_trigger(value: object) -> Trigger:
    """Read ``available-now`` or ``{processing-time: "10 seconds"}``.

    Raises:
        ValueError: anything else, with the accepted forms in the message.
    """
    if isinstance(value, Trigger):
        return value
    if value == "available-now":
        return Trigger()
    if isinstance(value, dict) and set(value) == {"processing-time"}:
        interval = value["processing-time"]
        if isinstance(interval, str) and _INTERVAL.match(interval):
            return Trigger(interval.strip())
        raise ConfigError(
            f"processing-time must be an interval such as '10 seconds' or '1 minute', got {interval!r}"
        )
    raise ConfigError(f"trigger must be 'available-now' or {{processing-time: '10 seconds'}}, got {value!r}")


TriggerField = Annotated[
    Trigger,
    PlainValidator(parse_trigger),
    PlainSerializer(lambda t: t.to_config()),
    WithJsonSchema(
        {
            "oneOf": [
                {"const": "available-now", "description": "Drain what the source holds, then stop."},
                {
                    "type": "object",
                    "properties": {"processing-time": {"type": "string", "examples": ["10 seconds"]}},
                    "required": ["processing-time"],
                    "additionalProperties": False,
                    "description": "One micro-batch every interval, until stopped.",
                },
            ]
        }
    ),
]


# --- Spark DDL ---------------------------------------------------------------------------------------------

_SIMPLE_TYPES = frozenset(
    {
        *("string", "varchar", "char", "binary", "boolean", "tinyint", "byte", "smallint", "short", "int"),
        *("integer", "bigint", "long", "float", "real", "double", "decimal", "dec", "numeric", "date"),
        *("timestamp", "timestamp_ntz", "timestamp_ltz", "variant", "void", "interval"),
    }
)
_COMPLEX_TYPES = frozenset({"array", "map", "struct"})


def _split_top_level(ddl: str) -> list[str]:
    """Split ``ddl`` on the commas that are not inside ``<>``, ``()`` or backticks."""
    parts: list[str] = []
    current: list[str] = []
    depth, quoted = 0, False
    for char in ddl:
        if char == "`":
            quoted = not quoted
        elif not quoted and char in "<(":
            depth += 1
        elif not quoted and char in ">)":
            depth -= 1
        elif not quoted and depth == 0 and char == ",":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts]


_COLUMN = re.compile(r"^(`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*)\s*:?\s+([A-Za-z_]+)")
TIME_TYPES = frozenset({"timestamp", "timestamp_ntz", "timestamp_ltz", "date"})


def ddl_columns(ddl: str) -> list[tuple[str, str]]:
    """The top-level ``(column name, lower-case type keyword)`` pairs of a Spark DDL schema, without a JVM.

    Only the shape is checked (``name TYPE`` items, a known type keyword): Spark parses the full types.

    Raises:
        ValueError: an item is not ``name TYPE`` or its type is not a Spark SQL type.

    Example:
        >>> ddl_columns("id STRING, `amount eur` DECIMAL(10,2), tags ARRAY<STRING>")
        [('id', 'string'), ('amount eur', 'decimal'), ('tags', 'array')]
    """
    columns = []
    for item in _split_top_level(ddl):
        match = _COLUMN.match(item)
        if match is None:
            raise ConfigError(f"expected 'name TYPE' items separated by commas, got {item!r}")
        name, type_name = match.group(1), match.group(2).lower()
        if type_name not in _SIMPLE_TYPES | _COMPLEX_TYPES:
            raise ConfigError(f"column {name}: {match.group(2)!r} is not a Spark SQL type")
        columns.append((name[1:-1].replace("``", "`") if name.startswith("`") else name, type_name))
    return columns


def ddl_column_names(ddl: str) -> list[str]:
    """The top-level column names of a Spark DDL schema string (see :func:`ddl_columns`).

    Example:
        >>> ddl_column_names("id STRING, ts TIMESTAMP")
        ['id', 'ts']
    """
    return [name for name, _ in ddl_columns(ddl)]


# --- sections ------------------------------------------------------------------------------------------------


class GateSection(_Section):
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


#: Columns a Kafka source adds beside the decoded value's fields (the message's coordinates).
KAFKA_COLUMNS: dict[str, str] = {
    "kafka_key": "string",
    "kafka_topic": "string",
    "kafka_partition": "int",
    "kafka_offset": "bigint",
    "kafka_timestamp": "timestamp",
}


class PayloadSection(_Section):
    """``source.value:`` / ``source.key:`` of a Kafka source: how the message bytes are decoded."""

    format: Literal["json", "csv", "avro", "text"] = Field(
        description="json / csv: with a schema; avro: with avro-schema-file (Spark's from_avro); text: UTF-8."
    )
    schema_: DdlSchema | None = Field(
        default=None, alias="schema", description="Spark DDL schema of a json or csv payload."
    )
    avro_schema_file: NonEmpty | None = Field(
        default=None, description="Avro schema (.avsc JSON) of an avro payload; relative to the config file."
    )
    options: dict[str, OptionValue] = Field(
        default_factory=dict, description="Options of from_json / from_csv / from_avro."
    )

    @model_validator(mode="after")
    def _decodable(self) -> PayloadSection:
        if self.format in ("json", "csv") and self.schema_ is None:
            raise ConfigError(f"a {self.format} payload needs a schema (Spark DDL)")
        if self.format == "avro" and self.avro_schema_file is None:
            raise ConfigError("an avro payload needs avro-schema-file")
        if self.format in ("text", "avro") and self.schema_ is not None:
            raise ConfigError(f"a {self.format} payload takes no schema")
        return self


class SourceSection(_Section):
    """``source:``: the stream read with ``spark.readStream``: files, a Delta table, or Kafka topics."""

    format: SourceFormat = Field(description="Spark source format.")
    path: NonEmpty | None = Field(
        default=None,
        description="Folder (or table) to stream from; relative to the config file. Not for kafka.",
    )
    bootstrap_servers: NonEmpty | None = Field(default=None, description="kafka: host:port[,host:port...].")
    subscribe: NonEmpty | None = Field(default=None, description="kafka: topic[,topic...] to read.")
    subscribe_pattern: NonEmpty | None = Field(default=None, description="kafka: a Java regex of topics.")
    assign: NonEmpty | None = Field(default=None, description='kafka: JSON {"topic": [partitions]}.')
    starting_offsets: NonEmpty = Field(
        default="earliest",
        description="kafka: earliest | latest | JSON per partition; only for a new checkpoint.",
    )
    max_offsets_per_trigger: int | None = Field(
        default=None, gt=0, description="kafka: messages per micro-batch at most (over all partitions)."
    )
    value: PayloadSection | None = Field(default=None, description="kafka: how message values are decoded.")
    key: PayloadSection | None = Field(
        default=None, description="kafka: how keys are decoded (default: text, into kafka_key)."
    )
    schema_: DdlSchema | None = Field(
        default=None,
        alias="schema",
        description="Spark DDL schema, e.g. 'id STRING, ts TIMESTAMP'. Required for json and csv sources.",
    )
    options: dict[str, OptionValue] = Field(default_factory=dict, description="Spark reader options.")
    max_files_per_trigger: int | None = Field(default=None, gt=0, description="Files per micro-batch.")
    malformed_column: NonEmpty = Field(
        default="_corrupt_record",
        description="Column that holds the raw text of malformed json/csv records (PERMISSIVE mode).",
    )
    unknown_fields: UnknownFields = Field(
        default="warn",
        description="JSON keys the schema does not declare: kept as JSON in unknown-fields-column and counted "
        "by the built-in unknown-fields check (warn: the row passes, warned; quarantine: the row is "
        "quarantined), or dropped as Spark does (ignore).",
    )
    unknown_fields_column: NonEmpty = Field(
        default="_unknown_fields", description="Column that keeps undeclared JSON keys and their values."
    )
    trigger: TriggerField = Field(default_factory=Trigger)

    @model_validator(mode="after")
    def _complete(self) -> SourceSection:
        kafka_only = {
            "bootstrap-servers": self.bootstrap_servers,
            "subscribe": self.subscribe,
            "subscribe-pattern": self.subscribe_pattern,
            "assign": self.assign,
            "max-offsets-per-trigger": self.max_offsets_per_trigger,
            "value": self.value,
            "key": self.key,
        }
        if self.format != "kafka":
            if self.path is None:
                raise ConfigError(f"a {self.format} source needs a path")
            named = [k for k, v in kafka_only.items() if v is not None]
            if named:
                raise ConfigError(f"{', '.join(named)}: only for a kafka source")
            return self
        if self.path is not None:
            raise ConfigError("a kafka source has no path: name bootstrap-servers and subscribe")
        if self.schema_ is not None:
            raise ConfigError("a kafka source declares its schema in value.schema")
        if self.bootstrap_servers is None:
            raise ConfigError("a kafka source needs bootstrap-servers")
        chosen = [k for k in ("subscribe", "subscribe-pattern", "assign") if kafka_only[k] is not None]
        if len(chosen) != 1:
            raise ConfigError("a kafka source needs exactly one of subscribe, subscribe-pattern, assign")
        if self.value is None:
            raise ConfigError("a kafka source needs value: {format: json | csv | avro | text, ...}")
        if self.max_files_per_trigger is not None:
            raise ConfigError("max-files-per-trigger is for file sources: use max-offsets-per-trigger")
        return self

    def columns(self) -> dict[str, str] | None:
        """The declared ``{column: type keyword}``, or None when the source brings its schema (parquet).

        A Kafka source: the value's fields (``value`` for a text payload; None for avro, whose schema file
        is read when the stream starts), then :data:`KAFKA_COLUMNS`.
        """
        if self.format == "kafka":
            assert self.value is not None
            if self.value.format == "avro":
                return None
            fields = dict(ddl_columns(self.value.schema_)) if self.value.schema_ else {"value": "string"}
            key = {"kafka_key": "struct"} if self.key is not None and self.key.format != "text" else {}
            return {**fields, **KAFKA_COLUMNS, **key}
        return dict(ddl_columns(self.schema_)) if self.schema_ else None

    @property
    def permissive(self) -> bool:
        """Spark's ``PERMISSIVE`` mode (its default): malformed records are kept, not dropped or fatal."""
        return str(self.options.get("mode", "PERMISSIVE")).upper() == "PERMISSIVE"

    @property
    def multiline(self) -> bool:
        """A ``multiLine`` json or csv source: records span lines, so it cannot be read line by line."""
        return str(self.options.get("multiLine", self.options.get("multiline", "false"))).lower() == "true"

    @property
    def has_header(self) -> bool:
        """A csv source whose files start with a header line (``header: true``)."""
        return str(self.options.get("header", "false")).lower() == "true"

    def unknown_fields_detection(self) -> str | None:
        """Why undeclared fields cannot be detected on this source (None when they can, or are ignored)."""
        if self.unknown_fields == "ignore":
            return None
        if self.format == "kafka":
            assert self.value is not None
            return None if self.value.format == "json" else f"a {self.value.format} payload is not json"
        if self.format not in ("json", "csv"):
            return f"a {self.format} source brings its own schema"
        if self.schema_ is None:
            return "the source has no schema"
        if self.format == "csv" and not self.has_header:
            return (
                "a csv source without header: true has no column names (a line with more fields is malformed)"
            )
        if self.multiline:
            return f"a multiLine {self.format} source is not read line by line"
        if not self.permissive:
            return f"mode {self.options.get('mode')} is not PERMISSIVE"
        return None

    @property
    def detects_unknown_fields(self) -> bool:
        """True when the source is read with the unknown-fields column (``unknown-fields`` not ``ignore``)."""
        json_value = self.format == "kafka" and self.value is not None and self.value.format == "json"
        return (
            (self.format in ("json", "csv") or json_value)
            and self.unknown_fields != "ignore"
            and self.unknown_fields_detection() is None
        )


class TargetsSection(_Section):
    """``targets:``: the Delta tables the gate writes, and which writer writes them."""

    pass_table: NonEmpty = Field(alias="pass", description="Delta table of the rows that passed.")
    quarantine: NonEmpty = Field(description="Delta table of the failed rows, with their reasons.")
    results: NonEmpty | None = Field(default=None, description="Delta table: one row per check per batch.")
    metrics: NonEmpty | None = Field(default=None, description="Delta table of mergeable metric states.")
    writer: WriterName = Field(
        default="auto", description="auto: Spark's Delta writer when the session has it, else delta-rs."
    )
    routing: Routing = Field(
        default="auto",
        description="driver: collect each batch to the driver and split it in Arrow (one Spark job); "
        "distributed: keep the rows on the executors (needs writer spark); auto: distributed when the "
        "writer is Spark's or the master is not local.",
    )

    def paths(self) -> dict[str, str]:
        """The configured tables by their config key (``pass``, ``quarantine`` ...)."""
        named = {"pass": self.pass_table, "quarantine": self.quarantine}
        named.update({k: v for k, v in (("results", self.results), ("metrics", self.metrics)) if v})
        return named


_BATCHES = re.compile(r"^\s*(\d+)\s*batch(es)?\s*$", re.I)
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(b|kib|kb|mib|mb|gib|gb)?\s*$", re.I)
_SIZE_UNIT = {"b": 1, "kib": 1024, "kb": 1000, "mib": 1024**2, "mb": 1000**2, "gib": 1024**3, "gb": 1000**3}


def _every(value: object) -> str:
    text = str(value).strip()
    if not _BATCHES.match(text):
        try:
            parse_duration(text)
        except ConfigError:
            raise ConfigError(f"expected e.g. '500 batches' or '1 hour', got {text!r}") from None
    return text


def _size(value: object) -> int:
    m = _SIZE.match(str(value))
    if isinstance(value, bool) or not m:
        raise ConfigError(f"expected a size such as '128 MiB' or a number of bytes, got {value!r}")
    return int(float(m.group(1)) * _SIZE_UNIT[(m.group(2) or "b").lower()])


class VacuumSection(_Section):
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


class MaintenanceSection(_Section):
    """``maintenance:``: what the gate does to its tables between batches (compaction, checkpoints, vacuum,
    metrics roll-up), and how often; ``streaming-dq maintain`` does the same by hand."""

    every: Annotated[str, BeforeValidator(_every)] | None = Field(
        default=None,
        description="Run after this many committed batches ('500 batches') or this much time ('1 hour'); "
        "without it the gate never runs maintenance itself.",
    )
    compact: bool = Field(default=True, description="Rewrite small files into files of target-file-size.")
    target_file_size: (
        Annotated[
            int,
            BeforeValidator(_size),
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
            m = _BATCHES.match(self.every)
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


class ReferenceDatasetConfig(_Section):
    """One entry of ``reference-datasets:``: a table or file integrity checks compare against."""

    format: FileFormat
    path: NonEmpty
    schema_: DdlSchema | None = Field(default=None, alias="schema", description="Spark DDL schema.")
    options: dict[str, OptionValue] = Field(default_factory=dict)
    refresh_seconds: float = Field(
        default=0.0, ge=0, description="Re-read after this many seconds; 0 re-reads it every batch."
    )


class PrometheusSection(_Section):
    """``metrics.prometheus:``: where the driver serves ``/metrics``."""

    host: NonEmpty = "127.0.0.1"
    port: int = Field(default=9108, ge=0, le=65535, description="0 lets the OS choose a free port.")


class PushgatewaySection(_Section):
    """``metrics.pushgateway:``: push the metrics once when an available-now run ends."""

    url: NonEmpty = Field(description="Pushgateway address, e.g. http://pushgateway:9091.")
    job: NonEmpty = "streaming_dq"


class MetricsSection(_Section):
    """``metrics:``: the Prometheus endpoint and the optional Pushgateway."""

    prometheus: PrometheusSection | None = None
    pushgateway: PushgatewaySection | None = None


class SparkSection(_Section):
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


def _fail_level(value: object) -> Severity:
    try:
        return normalize_severity(value)  # type: ignore[arg-type]
    except ConfigError as exc:
        raise ConfigError(exc.reason) from None


class GateConfig(_Section):
    """A whole gate job, as written in its YAML file.

    Paths are the ones written in the file until :func:`~streaming_dq.config.loader.load_gate_config`
    resolves them; ``source_file`` names the file the config came from (None when built in code).

    Example:
        >>> config = GateConfig.model_validate({
        ...     "gate": {"name": "orders"},
        ...     "source": {"format": "parquet", "path": "landing"},
        ...     "checkpoint": "state",
        ...     "targets": {"pass": "pass", "quarantine": "quarantine"},
        ...     "checks": [{"check": "null-check", "check-id": "id", "columns": ["id"]}],
        ... })
        >>> config.source.trigger.available_now
        True
    """

    gate: GateSection
    source: SourceSection
    checkpoint: NonEmpty = Field(
        description="Folder of the streaming checkpoint; relative to the config file."
    )
    targets: TargetsSection
    fail_levels: Annotated[list[Annotated[Severity, BeforeValidator(_fail_level)]], Field(min_length=1)] = (
        Field(
            default_factory=lambda: [Severity.CRITICAL],
            description="Severities whose failures quarantine a row.",
        )
    )
    on_aggregate_failure: AggregateFailurePolicy = "quarantine-batch"
    schema_drift: DriftPolicy | None = Field(
        default=None, description="null: merge added nullable columns, quarantine incompatible changes."
    )
    reference_datasets: dict[str, ReferenceDatasetConfig] = Field(default_factory=dict)
    profiles: ProfileList = Field(default_factory=list)
    metrics: MetricsSection = Field(default_factory=MetricsSection)
    maintenance: MaintenanceSection | None = None
    spark: SparkSection = Field(default_factory=SparkSection)
    checks: list[dict[str, Any]] = Field(
        min_length=1,
        description="Check definitions: {check: <name>, check-id: ..., <parameters>}, or DQX rules.",
    )
    dialect: Dialect = Field(
        default="auto",
        description="The format of checks: detected (auto), ours (native) or DQX's rules (dqx).",
    )

    _source_file: str | None = PrivateAttr(default=None)

    @property
    def source_file(self) -> str | None:
        """The YAML file this config was loaded from, named in errors."""
        return self._source_file

    def with_source_file(self, source_file: str | None) -> GateConfig:
        """Return a copy of this config marked as loaded from ``source_file``."""
        marked = self.model_copy()
        marked._source_file = source_file
        return marked

    def check_set(self) -> CheckSet:
        """Build the :class:`~streaming_dq.config.check_set.CheckSet` of ``checks:`` (and the built-in
        ``unknown-fields`` check when the source detects undeclared fields).

        Raises:
            ConfigError: a check is invalid (the field path names it, e.g. ``checks[2].min-value``).
        """
        from streaming_dq.checks.unknown_fields import unknown_fields_check

        checks = CheckSet().add_checks_from_dicts(self.checks, source=self.source_file, dialect=self.dialect)
        if not self.source.detects_unknown_fields:
            return checks
        column, policy = self.source.unknown_fields_column, self.source.unknown_fields
        return checks.add_check(unknown_fields_check(column, policy, list(self.fail_levels)))

    def profile_objects(self) -> list[Profile]:
        """The profile objects of ``profiles:``, in config order (a public-holiday calendar as one per holiday)."""
        from streaming_dq.profiles.public_holidays import expand_profiles

        return expand_profiles([p.to_profile() for p in self.profiles])  # type: ignore[return-value]

    def with_trigger(self, trigger: Trigger) -> GateConfig:
        """Return a copy whose source uses ``trigger`` (the CLI's ``--available-now``)."""
        source = self.source.model_copy(update={"trigger": trigger})
        return self.model_copy(update={"source": source}).with_source_file(self.source_file)


def gate_config_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a gate config file, with one schema per registered check.

    Editors use it for completion and inline errors (e.g. ``# yaml-language-server: $schema=...``).
    ``checks:`` items are a ``oneOf`` over the registered checks, told apart by their ``check`` name.

    Example:
        >>> schema = gate_config_json_schema()
        >>> schema["properties"]["gate"]["$ref"]
        '#/$defs/GateSection'
    """
    from streaming_dq.config.registry import CheckConfigRegistry

    schema = GateConfig.model_json_schema(by_alias=True)
    defs = schema.setdefault("$defs", {})
    variants = []
    for name, config_class in CheckConfigRegistry.items():
        check_schema = config_class.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
        defs.update(check_schema.pop("$defs", {}))
        check_schema["properties"] = {"check": {"const": name}, **check_schema.get("properties", {})}
        check_schema["required"] = ["check", *check_schema.get("required", [])]
        check_schema["title"] = name
        key = f"check-{name}"
        defs[key] = check_schema
        variants.append({"$ref": f"#/$defs/{key}"})
    schema["properties"]["checks"]["items"] = {"oneOf": variants}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": "streaming-dq gate config",
    }
