"""Kafka messages framed by a schema registry (Confluent's wire format, which Apicurio's ccompat API speaks):
a magic byte 0, the writer schema's id as 4 big-endian bytes, then the payload.

:class:`RegistryClient` fetches a writer schema once per id on the driver (cached, bounded, with a timeout,
retries and backing off; basic auth or a bearer token; TLS), and :class:`RegistryAvroDecoder` decodes each
micro-batch of raw messages (the gate's source decoder):

1. the frame is split on the executors (magic byte, schema id, payload);
2. the batch's distinct schema ids come to the driver (one small Spark job; a few integers), and each id not
   seen before is fetched and checked against the reader schema (a record generated from the writer schema
   must resolve to the reader schema under Avro's rules: fields added with defaults, removed fields);
3. every message is decoded on the executors by Spark's ``from_avro`` with its writer schema and the reader
   schema (``avroSchema``), so rows written under different schemas land in the same columns.

A message that cannot be decoded is never dropped: its malformed column holds the raw bytes (base64 for a
framed message; the text of an unframed one that is valid UTF-8, as for other Kafka payloads), its
``kafka_decode_error`` says why, and ``kafka_schema_id`` which schema it named; the ``malformed-record`` check
quarantines it with its Kafka coordinates. The reasons: :data:`NO_MAGIC_BYTE`, :data:`UNKNOWN_SCHEMA_ID`,
:data:`REGISTRY_UNREACHABLE` (only with ``registry.unavailable: quarantine``; by default the batch fails and
Spark replays it, so a registry outage changes no verdict), :data:`INCOMPATIBLE_SCHEMA`,
:data:`CORRUPT_PAYLOAD`, and :data:`TOMBSTONE` (a NULL value).
"""

from __future__ import annotations

import base64
import io
import json
import logging
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import OrderedDict
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streaming_dq.config.source_model import KAFKA_COLUMNS
from streaming_dq.core.outcome import SchemaMessages, SchemaVerdict
from streaming_dq.exceptions import ConfigError, StreamingDQError

if TYPE_CHECKING:
    from streaming_dq.config.source_model import PayloadSection, RegistrySection, SourceSection

__all__ = [
    "CORRUPT_PAYLOAD",
    "DECODE_ERROR_COLUMN",
    "INCOMPATIBLE_SCHEMA",
    "NO_MAGIC_BYTE",
    "REGISTRY_UNREACHABLE",
    "SCHEMA_ID_COLUMN",
    "TOMBSTONE",
    "UNKNOWN_SCHEMA_ID",
    "RegistryAvroDecoder",
    "RegistryClient",
    "RegistryUnavailable",
]

logger = logging.getLogger("streaming_dq.sources")

#: The columns a registry-framed source adds beside the coordinates: the schema id the message named (NULL
#: when it has no frame) and why it could not be decoded (NULL when it was).
SCHEMA_ID_COLUMN = "kafka_schema_id"
DECODE_ERROR_COLUMN = "kafka_decode_error"

NO_MAGIC_BYTE = "no magic byte: not a schema-registry framed message"
UNKNOWN_SCHEMA_ID = "unknown schema id"
REGISTRY_UNREACHABLE = "registry unreachable"
INCOMPATIBLE_SCHEMA = "writer schema incompatible with the reader schema"
CORRUPT_PAYLOAD = "corrupt payload"
TOMBSTONE = "no value (a tombstone)"


class RegistryUnavailable(StreamingDQError, RuntimeError):
    """The registry could not be reached or answered with a server error, after the retries."""


@dataclass(frozen=True)
class WriterSchema:
    """A writer schema the registry gave for an id."""

    schema_id: int
    text: str
    schema_type: str


class RegistryClient:
    """The registry's Confluent-compatible API, on the driver (see the module).

    Attributes:
        requests: HTTP requests made so far (a batch whose ids are all cached makes none).
    """

    def __init__(self, settings: RegistrySection) -> None:
        self.settings = settings
        self.base = settings.url.rstrip("/")
        self.requests = 0
        self._cache: OrderedDict[int, WriterSchema | None] = OrderedDict()
        self._headers = {"Accept": "application/vnd.schemaregistry.v1+json, application/json"}
        if settings.basic_auth is not None:
            pair = f"{settings.basic_auth.user}:{settings.basic_auth.password}".encode()
            self._headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        elif settings.bearer_token is not None:
            self._headers["Authorization"] = f"Bearer {settings.bearer_token}"
        self._context: ssl.SSLContext | None = None
        if settings.ca_file or settings.cert_file:
            self._context = ssl.create_default_context(cafile=settings.ca_file)
            if settings.cert_file:
                self._context.load_cert_chain(settings.cert_file, settings.key_file)

    def _get(self, path: str) -> Any | None:
        """The JSON at ``path``; None for a 404 (an unknown id or subject).

        Raises:
            RegistryUnavailable: no answer, or a 5xx, after ``retries`` retries (the message names the URL
                and the status, never the credentials).
        """
        url = f"{self.base}{path}"
        last = ""
        for attempt in range(self.settings.retries + 1):
            if attempt:
                time.sleep(min(0.5 * 2 ** (attempt - 1), 10.0))
            self.requests += 1
            request = urllib.request.Request(url, headers=self._headers)
            try:
                with urllib.request.urlopen(
                    request, timeout=self.settings.timeout, context=self._context
                ) as answer:
                    return json.loads(answer.read())
            except urllib.error.HTTPError as exc:
                if exc.code == 404:
                    return None
                if exc.code in (401, 403):
                    raise ConfigError(f"the schema registry refused the credentials ({exc.code}) for {url}",
                                      field_path="source.value.registry") from None  # fmt: skip
                last = f"HTTP {exc.code}"
                if exc.code < 500:
                    break
            except (urllib.error.URLError, OSError, TimeoutError) as exc:
                last = str(getattr(exc, "reason", exc))
        raise RegistryUnavailable(f"the schema registry at {url} did not answer: {last}")

    def writer_schema(self, schema_id: int) -> WriterSchema | None:
        """The schema registered under ``schema_id`` (None: the registry does not know it); cached."""
        if schema_id in self._cache:
            self._cache.move_to_end(schema_id)
            return self._cache[schema_id]
        found = self._get(f"/schemas/ids/{schema_id}")
        schema = None
        if found is not None:
            schema = WriterSchema(schema_id, found["schema"], found.get("schemaType", "AVRO"))
        self._cache[schema_id] = schema
        while len(self._cache) > self.settings.cache_size:
            self._cache.popitem(last=False)
        return schema

    def subject_schema(self, subject: str, version: int | str) -> WriterSchema:
        """A subject's version (``latest`` or a number).

        Raises:
            ConfigError: the registry has no such subject or version.
        """
        found = self._get(f"/subjects/{urllib.parse.quote(subject, safe='')}/versions/{version}")
        if found is None:
            raise ConfigError(f"the schema registry has no subject {subject!r} version {version}",
                              field_path="source.value.registry.subject")  # fmt: skip
        return WriterSchema(int(found["id"]), found["schema"], found.get("schemaType", "AVRO"))


def resolves(writer: str, reader: str) -> str | None:
    """Why data written with ``writer`` cannot be read as ``reader`` (None: it can), by Avro's resolution of
    a record generated from the writer schema."""
    import fastavro
    from fastavro.utils import generate_one

    try:
        parsed_writer = fastavro.parse_schema(json.loads(writer))
        parsed_reader = fastavro.parse_schema(json.loads(reader))
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed_writer, generate_one(parsed_writer))
        buffer.seek(0)
        fastavro.schemaless_reader(buffer, parsed_writer, parsed_reader)
    except Exception as exc:  # fastavro's SchemaResolutionError, or a schema it cannot parse
        return f"{type(exc).__name__}: {exc}"[:300]
    return None


def _frame(value: Column) -> tuple[Column, Column, Column]:
    """(framed, schema id, payload) of a message's bytes: framed when it is at least 5 bytes and starts
    with the magic byte 0."""
    framed = value.isNotNull() & (F.length(value) >= 5) & (F.substring(value, 1, 1) == F.unhex(F.lit("00")))
    schema_id = F.when(framed, F.conv(F.hex(F.substring(value, 2, 4)), 16, 10).cast("int"))
    payload = F.expr("substring(value, 6)")
    return framed, schema_id, payload


def _verdict_word(schema_id: int | None, tombstone: bool, verdicts: dict[int, str | None]) -> SchemaVerdict:
    """A schema id's verdict as the one word of :data:`~streaming_dq.core.outcome.SchemaVerdict`."""
    if schema_id is None:
        return "tombstone" if tombstone else "unframed"
    why = verdicts[schema_id]
    if why is None:
        return "readable"
    if why.startswith(UNKNOWN_SCHEMA_ID):
        return "unknown"
    if why.startswith(REGISTRY_UNREACHABLE):
        return "unreachable"
    return "incompatible" if why.startswith(INCOMPATIBLE_SCHEMA) else "not-avro"


#: The columns of Spark's Kafka reader, as an empty batch has them (to derive the rows' schema).
KAFKA_READER_SCHEMA = "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP, timestampType INT"


class RegistryAvroDecoder:
    """The source decoder of an ``avro-registry`` payload (see the module)."""

    def __init__(self, source: SourceSection, client: RegistryClient | None = None) -> None:
        assert source.value is not None and source.value.registry is not None
        self.source = source
        self.payload: PayloadSection = source.value
        self.settings = source.value.registry
        self.client = client or RegistryClient(self.settings)
        self.malformed = source.malformed_column
        self._reader: str | None = None
        self._schema: StructType | None = None
        #: schema id -> why its messages cannot be read (None: they can), and its writer schema
        self._verdicts: dict[int, str | None] = {}
        self._writers: dict[int, str] = {}
        self._counted: tuple[SchemaMessages, ...] = ()

    def counted(self) -> tuple[SchemaMessages, ...]:
        """The messages of the batch decoded last, per topic and schema id, with what became of them."""
        return self._counted

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

    def schema(self) -> StructType:
        """The rows' schema: the reader schema's fields, the Kafka coordinates, ``kafka_schema_id``,
        ``kafka_decode_error`` and the malformed column (what this decoder gives an empty batch)."""
        if self._schema is None:
            from pyspark.sql import SparkSession

            session = SparkSession.getActiveSession()
            if session is None:
                raise StreamingDQError("no active SparkSession to derive the avro-registry rows' schema")
            self._schema = self(session.createDataFrame([], KAFKA_READER_SCHEMA)).schema
        return self._schema

    def _judge(self, ids: list[int]) -> dict[int, str | None]:
        """Each id's verdict: None (decodable), or the reason its messages are quarantined.

        Raises:
            RegistryUnavailable: the registry is down and ``unavailable`` is ``retry``.
        """
        out: dict[int, str | None] = {}
        for schema_id in ids:
            if schema_id not in self._verdicts:
                try:
                    writer = self.client.writer_schema(schema_id)
                except RegistryUnavailable:
                    if self.settings.unavailable == "retry":
                        raise  # the batch fails before it commits: Spark replays it once the registry answers
                    logger.warning("schema id %d: the registry is unreachable; its messages are quarantined",
                                   schema_id)  # fmt: skip
                    out[schema_id] = f"{REGISTRY_UNREACHABLE} (schema id {schema_id})"
                    continue  # not remembered: a later batch asks again
                if writer is None:
                    self._verdicts[schema_id] = f"{UNKNOWN_SCHEMA_ID} {schema_id}"
                elif writer.schema_type.upper() != "AVRO":
                    self._verdicts[schema_id] = f"schema id {schema_id} is {writer.schema_type}, not Avro"
                else:
                    why = resolves(writer.text, self.reader_schema())
                    self._verdicts[schema_id] = (
                        None if why is None else f"{INCOMPATIBLE_SCHEMA} (schema id {schema_id}): {why}"
                    )
                    self._writers[schema_id] = writer.text
            out[schema_id] = self._verdicts[schema_id]
        return out

    def __call__(self, batch: DataFrame) -> DataFrame:
        """The batch's rows (see the module); one small Spark job collects its schema ids."""
        from pyspark.sql.avro.functions import from_avro

        from streaming_dq.sources.kafka import (
            BASE64_PREFIX,
            avro_undecoded,
            coordinates,
            raw_text,
            unchunked_base64,
        )

        value = F.col("value")
        framed, schema_id, payload = _frame(value)
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
            value.isNull().alias("_dq_tombstone"),
        )
        groups = split.groupBy("_dq_topic", SCHEMA_ID_COLUMN, "_dq_tombstone").count().collect()
        ids = sorted({g[SCHEMA_ID_COLUMN] for g in groups if g[SCHEMA_ID_COLUMN] is not None})
        verdicts = self._judge(ids)
        counted = [
            SchemaMessages(topic, i, _verdict_word(i, tombstone, verdicts), int(n))
            for topic, i, tombstone, n in groups
        ]
        self._counted = tuple(sorted(counted, key=lambda c: (c.topic, c.schema_id is None, c.schema_id or 0)))
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
            [i for i in ids if verdicts[i] is None],
            F.when(F.lit(False), empty),
        ).otherwise(empty)
        rows = split.select("*", decoded.alias("_dq_row"))
        names = rows.select("_dq_row.*").columns
        reason = F.when(F.col("_dq_raw_value") == F.lit(""), F.lit(TOMBSTONE)).when(
            ~F.col("_dq_framed"), F.lit(NO_MAGIC_BYTE)
        )
        for i in ids:
            verdict = verdicts[i]
            if verdict is None:
                corrupt = avro_undecoded(self._writers[i], body, names)
                reason = reason.when((sid == i) & corrupt, F.lit(f"{CORRUPT_PAYLOAD} (schema id {i})"))
            else:
                reason = reason.when(sid == i, F.lit(verdict))
        rows = rows.select("*", reason.alias(DECODE_ERROR_COLUMN))
        bad = F.col(DECODE_ERROR_COLUMN).isNotNull()
        return rows.select(
            *[F.when(~bad, F.col(f"_dq_row.`{n}`")).alias(n) for n in names],
            *[F.col(c) for c in KAFKA_COLUMNS],
            F.col(SCHEMA_ID_COLUMN),
            F.col(DECODE_ERROR_COLUMN),
            F.when(bad, F.col("_dq_raw_value")).alias(self.malformed),
        )
