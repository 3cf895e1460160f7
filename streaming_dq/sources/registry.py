"""Kafka messages framed by a schema registry (Confluent's wire format, which Apicurio's ccompat API speaks):
a magic byte 0, the writer schema's id as 4 big-endian bytes, then the payload: Avro (``avro-registry``) or
JSON (``json-registry``).

A :class:`RegistryDecoder` decodes each micro-batch of raw messages (the gate's source decoder), with the
writer schemas of :class:`~streaming_dq.sources.registry_client.RegistryClient`:

1. the frame is split on the executors (magic byte, schema id, payload);
2. the batch's messages are counted per topic and schema id (one small Spark job; a few rows to the driver),
   and each id not seen before is fetched and judged: Avro's writer schema must resolve to the reader schema
   under Avro's rules (a record generated from it is read back: fields added with defaults, removed fields);
   a JSON payload's id must name a JSON Schema (the rows are read with the config's ``schema:``, as for
   plain JSON; the writer's JSON Schema is not compared with it);
3. every message is decoded on the executors: Avro by Spark's ``from_avro`` with its writer schema and the
   reader schema (``avroSchema``), so rows written under different schemas land in the same columns; JSON by
   ``from_json`` exactly as an unframed JSON payload (undeclared keys kept in the unknown-fields column).

A message that cannot be decoded is never dropped: its malformed column holds the raw bytes (base64 for a
framed message; the text of an unframed one that is valid UTF-8, as for other Kafka payloads), its
``kafka_decode_error`` says why, and ``kafka_schema_id`` which schema it named; the ``malformed-record`` check
quarantines it with its Kafka coordinates. The reasons: :data:`NO_MAGIC_BYTE`, :data:`UNKNOWN_SCHEMA_ID`,
:data:`REGISTRY_UNREACHABLE` (only with ``registry.unavailable: quarantine``; by default the batch fails and
Spark replays it, so a registry outage changes no verdict), :data:`INCOMPATIBLE_SCHEMA`, :data:`WRONG_TYPE`,
:data:`CORRUPT_PAYLOAD`, and :data:`TOMBSTONE` (a NULL value).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streaming_dq.compat.spark import is_valid_utf8
from streaming_dq.config.source_model import KAFKA_COLUMNS, REGISTRY_COLUMNS
from streaming_dq.core.outcome import SchemaMessages, SchemaVerdict
from streaming_dq.exceptions import ConfigError, StreamingDQError
from streaming_dq.sources.registry_client import (
    RegistryClient,
    RegistryUnavailableError,
    WriterSchema,
    resolves,
)

if TYPE_CHECKING:
    from streaming_dq.config.source_model import PayloadSection, SourceSection

__all__ = [
    "CORRUPT_PAYLOAD",
    "DECODE_ERROR_COLUMN",
    "INCOMPATIBLE_SCHEMA",
    "NO_MAGIC_BYTE",
    "REGISTRY_UNREACHABLE",
    "SCHEMA_ID_COLUMN",
    "TOMBSTONE",
    "UNKNOWN_SCHEMA_ID",
    "WRONG_TYPE",
    "RegistryAvroDecoder",
    "RegistryClient",
    "RegistryDecoder",
    "RegistryJsonDecoder",
    "RegistryProtobufDecoder",
    "RegistryUnavailableError",
    "registry_decoder",
    "resolves",
]

logger = logging.getLogger("streaming_dq.sources")

#: The columns a registry-framed source adds beside the coordinates (:data:`REGISTRY_COLUMNS`).
SCHEMA_ID_COLUMN, DECODE_ERROR_COLUMN = REGISTRY_COLUMNS

NO_MAGIC_BYTE = "no magic byte: not a schema-registry framed message"
UNKNOWN_SCHEMA_ID = "unknown schema id"
REGISTRY_UNREACHABLE = "registry unreachable"
INCOMPATIBLE_SCHEMA = "writer schema incompatible with the reader schema"
WRONG_TYPE = "wrong schema type"
CORRUPT_PAYLOAD = "corrupt payload"
TOMBSTONE = "no value (a tombstone)"

#: The columns of Spark's Kafka reader, as an empty batch has them (to derive the rows' schema).
KAFKA_READER_SCHEMA = "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP, timestampType INT"


def _frame(value: Column) -> tuple[Column, Column, Column, Column]:
    """(tombstone, framed, schema id, payload): the one rule a message's reason and count are read from. A NULL
    value is a tombstone (zero bytes are not: unframed); framed is at least 5 bytes starting with byte 0."""
    tombstone = value.isNull()
    framed = ~tombstone & (F.length(value) >= 5) & (F.substring(value, 1, 1) == F.unhex(F.lit("00")))
    schema_id = F.when(framed, F.conv(F.hex(F.substring(value, 2, 4)), 16, 10).cast("int"))
    payload = F.expr("substring(value, 6)")
    return tombstone, framed, schema_id, payload


def _verdict_word(schema_id: int | None, tombstone: bool, verdicts: dict[int, str | None]) -> SchemaVerdict:
    """A schema id's verdict as the one word of :data:`~streaming_dq.core.outcome.SchemaVerdict`."""
    if schema_id is None:
        return "tombstone" if tombstone else "unframed"
    why = verdicts[schema_id]
    if why is None:
        return "readable"
    for prefix, word in ((UNKNOWN_SCHEMA_ID, "unknown"), (REGISTRY_UNREACHABLE, "unreachable"),
                         (INCOMPATIBLE_SCHEMA, "incompatible")):  # fmt: skip
        if why.startswith(prefix):
            return word  # type: ignore[return-value]
    return "wrong-type"


#: What a payload kind's decoding gives: the rows (the split frame's columns and the decoded ones), the output
#: columns by name, the names of extra output columns (the unknown-fields column), and per readable schema id the
#: condition that its payload could not be decoded.
Decoded = tuple[DataFrame, dict[str, Column], list[str], Callable[[int], Column]]


class RegistryDecoder:
    """The source decoder of a registry-framed payload (see the module); a subclass decodes its kind."""

    #: The registry's name of the schema type this payload reads (``schemaType``).
    schema_type = ""

    def __init__(self, source: SourceSection, client: RegistryClient | None = None) -> None:
        assert source.value is not None and source.value.registry is not None
        self.source = source
        self.payload: PayloadSection = source.value
        self.settings = source.value.registry
        self.client = client or RegistryClient(self.settings)
        self.malformed = source.malformed_column
        self._schema: StructType | None = None
        #: schema id -> why its messages cannot be read (None: they can)
        self._verdicts: dict[int, str | None] = {}
        self._counted: tuple[SchemaMessages, ...] = ()

    def counted(self) -> tuple[SchemaMessages, ...]:
        """The messages of the batch decoded last, per topic and schema id, with what became of them."""
        return self._counted

    def schema(self) -> StructType:
        """The rows' schema: the payload's fields, the Kafka coordinates, ``kafka_schema_id``,
        ``kafka_decode_error`` and the malformed column (what this decoder gives an empty batch)."""
        if self._schema is None:
            from pyspark.sql import SparkSession

            session = SparkSession.getActiveSession()
            if session is None:
                raise StreamingDQError("no active SparkSession to derive a registry source's rows' schema")
            self._schema = self(session.createDataFrame([], KAFKA_READER_SCHEMA)).schema
        return self._schema

    def _judge_writer(self, writer: WriterSchema) -> str | None:
        """Why messages written with ``writer`` cannot be read (None: they can), its type being right."""
        return None

    def _judge(self, ids: list[int]) -> dict[int, str | None]:
        """Each id's verdict: None (decodable), or the reason its messages are quarantined.

        Raises:
            RegistryUnavailableError: the registry is down and ``unavailable`` is ``retry``.
        """
        out: dict[int, str | None] = {}
        for schema_id in ids:
            if schema_id not in self._verdicts:
                try:
                    writer = self.client.writer_schema(schema_id)
                except RegistryUnavailableError:
                    if self.settings.unavailable == "retry":
                        raise  # the batch fails before it commits: Spark replays it once the registry answers
                    logger.warning("schema id %d: the registry is unreachable; its messages are quarantined",
                                   schema_id)  # fmt: skip
                    out[schema_id] = f"{REGISTRY_UNREACHABLE} (schema id {schema_id})"
                    continue  # not remembered: a later batch asks again
                if writer is None:
                    self._verdicts[schema_id] = f"{UNKNOWN_SCHEMA_ID} {schema_id}"
                elif writer.schema_type.upper() != self.schema_type:
                    self._verdicts[schema_id] = (
                        f"{WRONG_TYPE}: schema id {schema_id} is {writer.schema_type}, not {self.schema_type}"
                    )
                else:
                    self._verdicts[schema_id] = self._judge_writer(writer)
            out[schema_id] = self._verdicts[schema_id]
        return out

    def _decode(self, split: DataFrame, readable: list[int]) -> Decoded:
        raise NotImplementedError

    def __call__(self, batch: DataFrame) -> DataFrame:
        """The batch's rows (see the module); one small Spark job counts its messages per schema id."""
        from streaming_dq.sources.kafka import BASE64_PREFIX, coordinates, raw_text, unchunked_base64

        value = F.col("value")
        tombstone, framed, schema_id, payload = _frame(value)
        # a framed message is binary: its raw value is base64 even when its bytes happen to be valid UTF-8
        raw = F.when(framed, F.concat(F.lit(BASE64_PREFIX), unchunked_base64(value))).otherwise(
            raw_text(value)
        )
        split = batch.select(
            *coordinates(self.source),
            raw.alias("_dq_raw_value"),
            framed.alias("_dq_framed"),
            schema_id.alias(SCHEMA_ID_COLUMN),
            payload.alias("_dq_payload"),
            F.col("topic").alias("_dq_topic"),
            tombstone.alias("_dq_tombstone"),
        )
        groups = split.groupBy("_dq_topic", SCHEMA_ID_COLUMN, "_dq_tombstone").count().collect()
        ids = sorted({g[SCHEMA_ID_COLUMN] for g in groups if g[SCHEMA_ID_COLUMN] is not None})
        verdicts = self._judge(ids)
        counted = [
            SchemaMessages(topic, i, _verdict_word(i, tombstone, verdicts), int(n))
            for topic, i, tombstone, n in groups
        ]
        self._counted = tuple(sorted(counted, key=lambda c: (c.topic, c.schema_id is None, c.schema_id or 0)))
        rows, fields, extra, corrupt = self._decode(split, [i for i in ids if verdicts[i] is None])
        sid = F.col(SCHEMA_ID_COLUMN)
        tomb, framed_ = F.col("_dq_tombstone"), F.col("_dq_framed")  # what the counts above are grouped by
        reason = F.when(tomb, F.lit(TOMBSTONE)).when(~framed_, F.lit(NO_MAGIC_BYTE))
        for i in ids:
            verdict = verdicts[i]
            if verdict is None:
                reason = reason.when((sid == i) & corrupt(i), F.lit(f"{CORRUPT_PAYLOAD} (schema id {i})"))
            else:
                reason = reason.when(sid == i, F.lit(verdict))
        rows = rows.select("*", reason.alias(DECODE_ERROR_COLUMN))
        bad = F.col(DECODE_ERROR_COLUMN).isNotNull()
        return rows.select(
            *[F.when(~bad, column).alias(name) for name, column in fields.items()],
            *[F.col(c) for c in KAFKA_COLUMNS],
            F.col(SCHEMA_ID_COLUMN),
            F.col(DECODE_ERROR_COLUMN),
            F.when(bad, F.col("_dq_raw_value")).alias(self.malformed),
            *[F.when(~bad, F.col(f"`{name}`")).alias(name) for name in extra],
        )


class RegistryAvroDecoder(RegistryDecoder):
    """``avro-registry``: Avro read as ``avro-schema-file`` or the registry's subject version."""

    schema_type = "AVRO"

    def __init__(self, source: SourceSection, client: RegistryClient | None = None) -> None:
        super().__init__(source, client)
        self._reader: str | None = None
        self._writers: dict[int, str] = {}

    def reader_schema(self) -> str:
        """The schema rows are read as: ``avro-schema-file``, else the registry's subject version."""
        if self._reader is None:
            if self.payload.avro_schema_file is not None:
                from streaming_dq.sources.kafka import avro_schema_text

                self._reader = avro_schema_text(self.payload)
            else:
                topic = (self.source.subscribe or "").split(",")[0]
                subject = self.settings.subject or f"{topic}-value"
                self._reader = self.client.subject_schema(subject, self.settings.version).text
        return self._reader

    def _judge_writer(self, writer: WriterSchema) -> str | None:
        why = resolves(writer.text, self.reader_schema())
        if why is not None:
            return f"{INCOMPATIBLE_SCHEMA} (schema id {writer.schema_id}): {why}"
        self._writers[writer.schema_id] = writer.text
        return None

    def _decode(self, split: DataFrame, readable: list[int]) -> Decoded:
        from pyspark.sql.avro.functions import from_avro

        from streaming_dq.sources.kafka import avro_undecoded

        reader = self.reader_schema()
        options = {
            **{k: str(v) for k, v in self.payload.options.items()},
            "mode": "PERMISSIVE",
            "avroSchema": reader,
        }
        sid, body = F.col(SCHEMA_ID_COLUMN), F.col("_dq_payload")
        empty = from_avro(F.lit(None).cast("binary"), reader, options)
        decoded = reduce(
            lambda acc, i: acc.when(sid == i, from_avro(body, self._writers[i], options)),
            readable,
            F.when(F.lit(False), empty),
        ).otherwise(empty)
        rows = split.select("*", decoded.alias("_dq_row"))
        names = rows.select("_dq_row.*").columns
        fields = {n: F.col(f"_dq_row.`{n}`") for n in names}
        return rows, fields, [], lambda i: avro_undecoded(self._writers[i], body, names)


class RegistryJsonDecoder(RegistryDecoder):
    """``json-registry``: JSON read with the config's ``schema:``, as an unframed JSON payload is."""

    schema_type = "JSON"

    def _decode(self, split: DataFrame, readable: list[int]) -> Decoded:
        from streaming_dq.sources.json import is_blank, json_records
        from streaming_dq.sources.kafka import payload_struct

        declared = payload_struct(self.payload)
        unknown = self.source.unknown_fields_column if self.source.detects_unknown_fields else None
        options = {k: str(v) for k, v in self.payload.options.items()}
        text = F.col("_dq_payload").cast("string")
        valid = is_valid_utf8(text)
        lines = split.select(F.when(valid, text).alias("value"), valid.alias("_dq_utf8"), "*")
        rows = json_records(lines, declared, options, "_dq_unparsed", unknown)
        fields = {n: F.col(f"`{n}`") for n in declared.fieldNames() if n != self.malformed}
        extra = [unknown] if unknown else []
        undecoded = (
            ~F.col("_dq_utf8") | F.col("_dq_unparsed").isNotNull() | is_blank(F.coalesce(text, F.lit("")))
        )
        return rows, fields, extra, lambda i: undecoded


class RegistryProtobufDecoder(RegistryDecoder):
    """``protobuf-registry``: Protobuf read as ``proto-file`` or the registry's subject version, as its
    ``message`` (:mod:`~streaming_dq.sources.protobuf`: decoded by Python's protobuf runtime on the executors)."""

    schema_type = "PROTOBUF"

    def __init__(self, source: SourceSection, client: RegistryClient | None = None) -> None:
        super().__init__(source, client)
        self._reader: tuple[bytes, str] | None = None
        #: schema id -> the message-index bytes before its payload
        self._prefixes: dict[int, bytes] = {}

    def reader(self) -> tuple[bytes, str]:
        """The reader's descriptors and message: ``proto-file``, else the registry's subject version; the
        message ``message`` names, else the first of that schema."""
        from streaming_dq.sources.protobuf import ProtobufSchemaError, descriptor_set, message_names

        if self._reader is None:
            if self.payload.proto_file is not None:
                where, text = "source.value.proto-file", _read(self.payload.proto_file)
            else:
                topic = (self.source.subscribe or "").split(",")[0]
                subject = self.settings.subject or f"{topic}-value"
                where, text = (
                    "source.value.registry.subject",
                    self.client.subject_schema(subject, self.settings.version).text,
                )
            try:
                descriptors = descriptor_set(text)
            except ProtobufSchemaError as exc:
                raise ConfigError(f"the reader's Protobuf schema: {exc}", field_path=where) from None
            names = message_names(descriptors)
            message = self.payload.message or (names[0] if names else "")
            if message not in names:
                raise ConfigError(f"the reader's Protobuf schema has no top-level message {message!r} "
                                  f"(it has: {', '.join(names) or 'none'})", field_path="source.value.message")  # fmt: skip
            self._reader = (descriptors, message)
        return self._reader

    def _judge_writer(self, writer: WriterSchema) -> str | None:
        from streaming_dq.sources.protobuf import (
            ProtobufSchemaError,
            descriptor_set,
            field_conflict,
            index_prefix,
        )

        descriptors, message = self.reader()
        try:
            written = descriptor_set(writer.text)
            why = field_conflict(written, descriptors, message)
        except ProtobufSchemaError as exc:
            why = str(exc)
        prefix = None if why is not None else index_prefix(written, message)
        if why is not None or prefix is None:
            return f"{INCOMPATIBLE_SCHEMA} (schema id {writer.schema_id}): {why}"
        self._prefixes[writer.schema_id] = prefix
        return None

    def _decode(self, split: DataFrame, readable: list[int]) -> Decoded:
        from streaming_dq.sources.protobuf import PARSED, message_decoder

        descriptors, message = self.reader()
        decode, fields = message_decoder(descriptors, message)
        sid, payload = F.col(SCHEMA_ID_COLUMN), F.col("_dq_payload")

        def indexed(i: int) -> Column:  # the payload starts with this id's index bytes for the message
            prefix = self._prefixes[i]
            return F.substring(payload, 1, len(prefix)) == F.lit(prefix)

        body = reduce(
            lambda acc, i: acc.when(
                (sid == i) & indexed(i), F.expr(f"substring(_dq_payload, {len(self._prefixes[i]) + 1})")
            ),
            readable,
            F.when(F.lit(False), F.lit(None).cast("binary")),
        )
        rows = split.select("*", decode(body).alias("_dq_row"))
        names = {n: F.col(f"_dq_row.`{n}`") for n in fields.fieldNames()}
        parsed = F.coalesce(F.col(f"_dq_row.{PARSED}"), F.lit(False))
        return rows, names, [], lambda i: ~indexed(i) | ~parsed


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read {path}: {exc.strerror or exc}", field_path="source.value.proto-file"
        ) from None


def registry_decoder(source: SourceSection) -> RegistryDecoder:
    """The decoder of a registry-framed source, by ``source.value.format``."""
    assert source.value is not None
    if source.value.format == "avro-registry":
        return RegistryAvroDecoder(source)
    if source.value.format == "json-registry":
        return RegistryJsonDecoder(source)
    if source.value.format == "protobuf-registry":
        return RegistryProtobufDecoder(source)
    raise ConfigError(
        f"not a registry-framed payload: {source.value.format}", field_path="source.value.format"
    )
