"""The ``source:`` section of a gate config: files, Delta tables and Kafka, with their payload decoding and
the detection of undeclared JSON fields."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    model_validator,
)

from streaming_dq.config.fields import (
    DdlSchema,
    NonEmpty,
    OptionValue,
    Section,
    Trigger,
    TriggerField,
    ddl_columns,
    named_table,
)
from streaming_dq.core.modes import (
    SourceFormat,
    UnknownFields,
)
from streaming_dq.exceptions import ConfigError
from streaming_dq.tables.catalog import catalog_name

#: Columns a Kafka source adds beside the decoded value's fields (the message's coordinates).
KAFKA_COLUMNS: dict[str, str] = {
    "kafka_key": "string",
    "kafka_topic": "string",
    "kafka_partition": "int",
    "kafka_offset": "bigint",
    "kafka_timestamp": "timestamp",
}


class BasicAuthSection(Section):
    """``registry.basic-auth:``: a user and a password (write the password as ${ENV})."""

    user: NonEmpty
    password: NonEmpty


class RegistrySection(Section):
    """``source.value.registry:``: the schema registry (Confluent's API: Confluent, Apicurio's ccompat) that
    framed messages name their writer schema in."""

    url: NonEmpty = Field(description="e.g. http://registry:8081 or http://apicurio:8080/apis/ccompat/v7.")
    basic_auth: BasicAuthSection | None = Field(default=None, description="HTTP basic auth.")
    bearer_token: NonEmpty | None = Field(default=None, description="A bearer token; write it as ${ENV}.")
    ca_file: NonEmpty | None = Field(default=None, description="TLS: the CA bundle that signed the registry.")
    cert_file: NonEmpty | None = Field(default=None, description="TLS: a client certificate (PEM).")
    key_file: NonEmpty | None = Field(default=None, description="TLS: the client certificate's key (PEM).")
    timeout: float = Field(default=10.0, gt=0, le=300, description="Seconds per request.")
    retries: int = Field(default=3, ge=0, le=20, description="Retries of a failed request (backing off).")
    cache_size: int = Field(default=1000, ge=1, description="Writer schemas kept on the driver.")
    subject: NonEmpty | None = Field(
        default=None, description="The subject whose schema the rows are read as (default: <topic>-value)."
    )
    version: int | Literal["latest"] = Field(default="latest", description="That subject's version.")
    unavailable: Literal["retry", "quarantine"] = Field(
        default="retry",
        description="A registry that cannot be reached: retry (the batch fails and Spark replays it) or "
        "quarantine the messages whose schema it could not fetch, with that reason.",
    )

    @model_validator(mode="after")
    def _auth(self) -> RegistrySection:
        if self.basic_auth is not None and self.bearer_token is not None:
            raise ConfigError("basic-auth or bearer-token, not both", field_path="bearer-token")
        if (self.cert_file is None) != (self.key_file is None):
            raise ConfigError("a client certificate needs cert-file and key-file", field_path="cert-file")
        return self


#: Payload formats framed by a schema registry (a magic byte 0, a 4-byte schema id, then the payload).
REGISTRY_FORMATS = ("avro-registry", "json-registry", "protobuf-registry")
#: The columns a registry-framed source adds beside :data:`KAFKA_COLUMNS`: the schema id its frame named (NULL
#: when it has none) and why it could not be decoded (NULL when it was).
REGISTRY_COLUMNS = {"kafka_schema_id": "int", "kafka_decode_error": "string"}


class PayloadSection(Section):
    """``source.value:`` / ``source.key:`` of a Kafka source: how the message bytes are decoded."""

    format: Literal["json", "csv", "avro", "text", "avro-registry", "json-registry", "protobuf-registry"] = (
        Field(
            description="json / csv: with a schema; avro: with avro-schema-file (Spark's from_avro); text: UTF-8; "
            "avro-registry: Avro framed by a schema registry (registry:), read as avro-schema-file or the "
            "registry's subject version; json-registry: JSON framed by a schema registry, read with a schema; "
            "protobuf-registry: Protobuf framed by a schema registry, read as proto-file or the subject version."
        )
    )
    registry: RegistrySection | None = Field(
        default=None, description="avro-registry / json-registry: the schema registry."
    )
    schema_: DdlSchema | None = Field(
        default=None, alias="schema", description="Spark DDL schema of a json or csv payload."
    )
    avro_schema_file: NonEmpty | None = Field(
        default=None, description="Avro schema (.avsc JSON) of an avro payload; relative to the config file."
    )
    proto_file: NonEmpty | None = Field(
        default=None,
        description="protobuf-registry: the .proto the rows are read as; relative to the config file.",
    )
    message: NonEmpty | None = Field(
        default=None,
        description="protobuf-registry: the message the rows are (its full name, e.g. air.Flight; default: the "
        "first message of the reader's .proto).",
    )
    options: dict[str, OptionValue] = Field(
        default_factory=dict, description="Options of from_json / from_csv / from_avro / from_protobuf."
    )

    @property
    def is_json(self) -> bool:
        """Whether the payload is JSON text (plain, or framed by a registry): read with ``from_json`` and the
        declared schema, undeclared keys detectable."""
        return self.format in ("json", "json-registry")

    @property
    def is_avro(self) -> bool:
        """Whether the payload is Avro (plain, or framed by a registry): decoded by Spark's ``from_avro``, so
        the session needs spark-avro, and its columns are known only when the stream starts."""
        return self.format in ("avro", "avro-registry")

    @model_validator(mode="after")
    def _decodable(self) -> PayloadSection:
        if self.format in ("json", "csv", "json-registry") and self.schema_ is None:
            raise ConfigError(f"a {self.format} payload needs a schema (Spark DDL)", field_path="schema")
        if self.format == "avro" and self.avro_schema_file is None:
            raise ConfigError("an avro payload needs avro-schema-file", field_path="avro-schema-file")
        if self.format in REGISTRY_FORMATS and self.registry is None:
            raise ConfigError(f"an {self.format} payload needs registry: {{url: ...}}", field_path="registry")
        if self.format not in REGISTRY_FORMATS and self.registry is not None:
            raise ConfigError(
                "registry: is for avro-registry and json-registry payloads", field_path="registry"
            )
        if self.format == "json-registry" and self.avro_schema_file is not None:
            raise ConfigError("a json-registry payload is read with schema:, not avro-schema-file",
                              field_path="avro-schema-file")  # fmt: skip
        if self.format != "protobuf-registry" and (self.proto_file or self.message):
            raise ConfigError("proto-file and message are for protobuf-registry payloads",
                              field_path="proto-file" if self.proto_file else "message")  # fmt: skip
        if self.format == "protobuf-registry" and self.avro_schema_file is not None:
            raise ConfigError("a protobuf-registry payload is read as proto-file, not avro-schema-file",
                              field_path="avro-schema-file")  # fmt: skip
        if self.format in ("text", "avro", "avro-registry", "protobuf-registry") and self.schema_ is not None:
            raise ConfigError(f"a {self.format} payload takes no schema", field_path="schema")
        return self


class SourceSection(Section):
    """``source:``: the stream read with ``spark.readStream``: files, a Delta table, or Kafka topics."""

    format: SourceFormat = Field(description="Spark source format.")
    path: NonEmpty | None = Field(
        default=None,
        description="Folder (or table) to stream from; relative to the config file. Not for kafka. A Delta "
        "table in the session's catalog is written table: schema.table instead.",
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
    storage_options: dict[str, OptionValue] = Field(
        default_factory=dict,
        description="Object-store options of the source's location (over the gate-wide storage-options), in "
        "delta-rs's spelling; Spark reads the source, so they reach it as S3A settings. Write secrets as ${ENV}.",
    )

    @model_validator(mode="before")
    @classmethod
    def _table(cls, data: object) -> object:
        return named_table(data)

    @model_validator(mode="after")
    def _complete(self) -> SourceSection:
        if catalog_name(self.path) is not None and self.format != "delta":
            raise ConfigError(
                f"a catalog table is a Delta table: a table source needs format delta, not {self.format}",
                field_path="table",
            )
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
                raise ConfigError(f"a {self.format} source needs a path", field_path="path")
            named = [k for k, v in kafka_only.items() if v is not None]
            if named:
                raise ConfigError(f"{', '.join(named)}: only for a kafka source", field_path=named[0])
            return self
        if self.path is not None:
            raise ConfigError(
                "a kafka source has no path: name bootstrap-servers and subscribe", field_path="path"
            )
        if self.schema_ is not None:
            raise ConfigError("a kafka source declares its schema in value.schema", field_path="schema")
        if self.bootstrap_servers is None:
            raise ConfigError("a kafka source needs bootstrap-servers", field_path="bootstrap-servers")
        chosen = [k for k in ("subscribe", "subscribe-pattern", "assign") if kafka_only[k] is not None]
        if len(chosen) != 1:
            raise ConfigError(
                "a kafka source needs exactly one of subscribe, subscribe-pattern, assign",
                field_path=chosen[1] if len(chosen) > 1 else "subscribe",
            )
        if self.value is None:
            raise ConfigError(
                "a kafka source needs value: {format: json | csv | avro | text | avro-registry | json-registry"
                " | protobuf-registry, ...}",
                field_path="value",
            )
        if self.key is not None and self.key.format in REGISTRY_FORMATS:
            raise ConfigError("registry-framed keys are not read yet: key.format text, json, csv or avro",
                              field_path="key.format")  # fmt: skip
        if self.max_files_per_trigger is not None:
            raise ConfigError(
                "max-files-per-trigger is for file sources: use max-offsets-per-trigger",
                field_path="max-files-per-trigger",
            )
        return self

    def columns(self) -> dict[str, str] | None:
        """The declared ``{column: type keyword}``, or None when the source brings its schema (parquet).

        A Kafka source: the value's fields (``value`` for a text payload; None for avro, whose schema file
        is read when the stream starts), then :data:`KAFKA_COLUMNS`.
        """
        if self.format == "kafka":
            assert self.value is not None
            if self.value.is_avro or self.value.format == "protobuf-registry":
                return None
            fields = dict(ddl_columns(self.value.schema_)) if self.value.schema_ else {"value": "string"}
            key = {"kafka_key": "struct"} if self.key is not None and self.key.format != "text" else {}
            framed = REGISTRY_COLUMNS if self.value.format in REGISTRY_FORMATS else {}
            return {**fields, **KAFKA_COLUMNS, **key, **framed}
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
            return None if self.value.is_json else f"a {self.value.format} payload is not json"
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
        json_value = self.format == "kafka" and self.value is not None and self.value.is_json
        return (
            (self.format in ("json", "csv") or json_value)
            and self.unknown_fields != "ignore"
            and self.unknown_fields_detection() is None
        )
