"""A Kafka source: Spark's Kafka reader, each message decoded on the executors, nothing dropped.

The rows a Kafka source gives the gate are the decoded value's fields, then the message's coordinates:
``kafka_key``, ``kafka_topic``, ``kafka_partition``, ``kafka_offset`` and ``kafka_timestamp`` (checks may use
them; ``gate.event-time: kafka_timestamp`` takes the broker's timestamp as the event time). The value is
decoded by ``source.value.format``:

* ``json`` (a schema): ``from_json`` in PERMISSIVE mode, as a json file source; keys the schema does not
  declare are kept in the unknown-fields column and counted by the ``unknown-fields`` check, as for files;
* ``csv`` (a schema): ``from_csv`` in PERMISSIVE mode (too few or too many fields make the message malformed);
* ``avro`` (``avro-schema-file``): Spark's ``from_avro`` in PERMISSIVE mode, the reader's schema from the file;
* ``text``: the value as a UTF-8 string column ``value``;
* ``avro-registry`` / ``json-registry``: Avro or JSON framed by a schema registry, decoded per micro-batch by
  :class:`streaming_dq.sources.registry.RegistryDecoder` (the stream gives the raw messages).

A message that cannot be decoded is never dropped: its malformed column holds the raw value (the text when
it is valid UTF-8, else ``base64:`` and its base64), the gate's ``malformed-record`` check quarantines it, and
its quarantine row keeps the key, topic, partition, offset and timestamp to find and replay it. Undecodable
means: not valid UTF-8 (json, csv, text), unparsable, empty, or a NULL value (a tombstone; raw value ``""``).
A malformed message is not counted against any other check (the engine guards every check with it).
"""

from __future__ import annotations

import json
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streaming_dq.compat.spark import is_valid_utf8, parse_ddl
from streaming_dq.config.source_model import KAFKA_COLUMNS
from streaming_dq.exceptions import ConfigError
from streaming_dq.sources.json import is_blank, json_records

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streaming_dq.config.source_model import PayloadSection, SourceSection

__all__ = [
    "avro_schema_text",
    "avro_undecoded",
    "coordinates",
    "decode_kafka",
    "kafka_options",
    "kafka_raw",
    "payload_struct",
    "raw_text",
    "read_kafka",
]

#: Prefix of a raw value that is not valid UTF-8, shown as base64.
BASE64_PREFIX = "base64:"


def kafka_options(source: SourceSection, *, stream: bool) -> dict[str, str]:
    """The options of Spark's Kafka reader for ``source`` (``source.options`` last: they win)."""
    options = {
        "kafka.bootstrap.servers": str(source.bootstrap_servers),
        "startingOffsets": source.starting_offsets,
    }
    for key, value in (("subscribe", source.subscribe), ("subscribePattern", source.subscribe_pattern),
                       ("assign", source.assign)):  # fmt: skip
        if value is not None:
            options[key] = value
    if stream and source.max_offsets_per_trigger is not None:
        options["maxOffsetsPerTrigger"] = str(source.max_offsets_per_trigger)
    if not stream:
        options.setdefault("endingOffsets", "latest")
    return {**options, **{k: str(v) for k, v in source.options.items()}}


def read_kafka(session: SparkSession, source: SourceSection, *, stream: bool) -> DataFrame:
    """The decoded Kafka source: streaming (``readStream``) or the topics' current messages once (``read``)."""
    return decode_kafka(kafka_raw(session, source, stream=stream), source)


def kafka_raw(session: SparkSession, source: SourceSection, *, stream: bool) -> DataFrame:
    """Spark's Kafka reader over ``source``: the messages' bytes and coordinates, undecoded."""
    reader: Any = session.readStream if stream else session.read
    return reader.format("kafka").options(**kafka_options(source, stream=stream)).load()


def raw_text(binary: Column) -> Column:
    """A message's bytes as text: the string when valid UTF-8, else ``base64:<base64>``; ``""`` for NULL."""
    text = binary.cast("string")
    return (
        F.when(binary.isNull(), F.lit(""))
        .when(is_valid_utf8(text), text)
        .otherwise(F.concat(F.lit(BASE64_PREFIX), unchunked_base64(binary)))
    )


def unchunked_base64(binary: Column) -> Column:
    """Standard base64 on one line: Spark's ``base64()`` breaks its output with CRLF every 76 characters
    (MIME style, ``spark.sql.chunkBase64String.enabled``), which strict decoders refuse."""
    return F.regexp_replace(F.base64(binary), "\r\n", "")


def avro_schema_text(payload: PayloadSection) -> str:
    """The Avro schema file of a payload, as text."""
    path = Path(str(payload.avro_schema_file))
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read the Avro schema {path}: {exc.strerror or exc}", field_path="source.value"
        ) from exc


def payload_struct(payload: PayloadSection) -> StructType:
    """The declared schema of a json or csv payload (``schema:``), as a struct."""
    return _struct(str(payload.schema_))


def _struct(ddl: str) -> StructType:
    schema = parse_ddl(ddl)
    if not isinstance(schema, StructType):
        raise ConfigError(
            f"expected a struct schema, got {schema.simpleString()}", field_path="source.value.schema"
        )
    return schema


def avro_undecoded(schema_json: str, binary: Column, names: list[str]) -> Column:
    """True for a message ``from_avro`` could not decode (PERMISSIVE mode gives a record of NULLs then).

    A record with a field that cannot be NULL is undecoded when every field is NULL; a record whose fields are
    all nullable unions is undecoded when every field is NULL and the bytes are not the all-NULL record's
    (one union-branch index per field).
    """
    fields = json.loads(schema_json).get("fields", [])
    all_null = reduce(lambda a, b: a & b, [F.col(f"_dq_row.`{n}`").isNull() for n in names], F.lit(True))
    null_branches: list[int] = []
    for f in fields:
        kind = f.get("type")
        branches = kind if isinstance(kind, list) else [kind]
        if "null" not in branches:
            return all_null | binary.isNull()
        null_branches.append(branches.index("null"))
    encoding = bytes(2 * i for i in null_branches)  # zig-zag varints of small union indices: one byte each
    return binary.isNull() | (all_null & (binary != F.lit(encoding)))


def _key_column(source: SourceSection) -> Column:
    """``kafka_key``: the key decoded by ``source.key`` (text by default; invalid UTF-8 as base64)."""
    key = F.col("key")
    payload = source.key
    if payload is None or payload.format == "text":
        return F.when(key.isNotNull(), raw_text(key))
    options = {k: str(v) for k, v in payload.options.items()}
    if payload.format == "json":
        return F.from_json(key.cast("string"), str(payload.schema_), options)
    if payload.format == "csv":
        return F.from_csv(key.cast("string"), str(payload.schema_), options)
    from pyspark.sql.avro.functions import from_avro

    return from_avro(key, avro_schema_text(payload), {**options, "mode": "PERMISSIVE"})


def coordinates(source: SourceSection) -> list[Column]:
    """The message's coordinates, as :data:`KAFKA_COLUMNS` names them (the key decoded by ``source.key``)."""
    columns = {
        "kafka_key": _key_column(source),
        "kafka_topic": F.col("topic"),
        "kafka_partition": F.col("partition"),
        "kafka_offset": F.col("offset"),
        "kafka_timestamp": F.col("timestamp"),
    }
    return [columns[name].alias(name) for name in KAFKA_COLUMNS]


def decode_kafka(raw: DataFrame, source: SourceSection) -> DataFrame:
    """Decode the rows of Spark's Kafka reader (``key``, ``value`` binary, ``topic`` ...) as the gate reads them.

    Args:
        raw: A DataFrame with the Kafka reader's columns (streaming or not).
        source: The ``source:`` section (``format: kafka``).
    """

    assert source.value is not None
    value, malformed = source.value, source.malformed_column
    options = {k: str(v) for k, v in value.options.items()}
    binary = F.col("value")
    text = binary.cast("string")
    valid = binary.isNotNull() & is_valid_utf8(text)
    carried = [*coordinates(source), raw_text(binary).alias("_dq_raw_value"), valid.alias("_dq_valid")]
    not_decodable = F.when(~F.col("_dq_valid"), F.col("_dq_raw_value"))

    def unparsed(corrupt: Column) -> Column:
        """The raw value of a json / csv value that is malformed: not decodable, unparsable (the parser set
        its corrupt-record column) or blank (the parsers leave that column NULL for an empty value, and give
        an empty text for a line break); NULL when it parsed."""
        raw = F.col("_dq_raw_value")
        return not_decodable.when(corrupt.isNotNull() | is_blank(raw), raw)

    if value.format == "json":
        schema = _struct(str(value.schema_))
        unknown = source.unknown_fields_column if source.detects_unknown_fields else None
        lines = raw.select(text.alias("value"), *carried)
        decoded = json_records(lines, schema, options, malformed, unknown)
        reason = unparsed(F.col(f"`{malformed}`"))
        declared = [F.col(f"`{n}`") for n in schema.fieldNames() if n != malformed]
        return decoded.select(
            *declared,
            *[F.col(c) for c in KAFKA_COLUMNS],
            reason.alias(malformed),
            *([F.col(f"`{unknown}`")] if unknown else []),
        )
    if value.format == "csv":
        declared_names = _struct(str(value.schema_)).fieldNames()
        ddl = str(value.schema_)
        if malformed not in declared_names:
            ddl += f", `{malformed}` STRING"
        csv_options = {**options, "mode": "PERMISSIVE", "columnNameOfCorruptRecord": malformed}
        parsed = raw.select(F.from_csv(text, ddl, csv_options).alias("_dq_row"), *carried)
        reason = unparsed(F.col(f"_dq_row.`{malformed}`"))
        return parsed.select(
            *[F.col(f"_dq_row.`{n}`").alias(n) for n in declared_names if n != malformed],
            *[F.col(c) for c in KAFKA_COLUMNS],
            reason.alias(malformed),
        )
    if value.format == "avro":
        from pyspark.sql.avro.functions import from_avro

        schema_json = avro_schema_text(value)
        decoded_value = from_avro(binary, schema_json, {**options, "mode": "PERMISSIVE"})
        parsed = raw.select(decoded_value.alias("_dq_row"), *carried, binary.alias("_dq_bytes"))
        record = isinstance(parsed.schema["_dq_row"].dataType, StructType)
        names = parsed.select("_dq_row.*").columns if record else []
        bytes_ = F.col("_dq_bytes")
        undecoded = avro_undecoded(schema_json, bytes_, names) if record else F.col("_dq_row").isNull()
        fields = (
            [F.col(f"_dq_row.`{n}`").alias(n) for n in names] if record else [F.col("_dq_row").alias("value")]
        )
        return parsed.select(
            *fields,
            *[F.col(c) for c in KAFKA_COLUMNS],
            F.when(undecoded, F.col("_dq_raw_value")).alias(malformed),
        )
    parsed = raw.select(F.when(valid, text).alias("value"), *carried)  # text
    return parsed.select("value", *[F.col(c) for c in KAFKA_COLUMNS], not_decodable.alias(malformed))
