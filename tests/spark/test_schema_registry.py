"""Kafka messages framed by a schema registry (#46, first part): Avro written under two evolving schemas and
registered in a real registry (Apicurio, its Confluent-compatible API, started once per test session from
what `make registry` fetched), framed by confluent-kafka's own serializer, decoded per micro-batch by
:class:`~streaming_dq.sources.registry.RegistryAvroDecoder` as the reader schema; every message that cannot be
decoded keeps its coordinates, raw bytes, schema id and reason. Rows are shaped as Spark's Kafka reader gives
them (the broker's part is the Kafka tests')."""

from __future__ import annotations

import base64
import json
import socket
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest

from streaming_dq.config.source_model import SourceSection
from streaming_dq.core.outcome import SchemaMessages
from streaming_dq.core.outcome_rows import decode_outcomes
from streaming_dq.sources.registry import (
    CORRUPT_PAYLOAD,
    INCOMPATIBLE_SCHEMA,
    NO_MAGIC_BYTE,
    REGISTRY_UNREACHABLE,
    TOMBSTONE,
    UNKNOWN_SCHEMA_ID,
    WRONG_TYPE,
    RegistryAvroDecoder,
    RegistryJsonDecoder,
    RegistryUnavailableError,
)

pytestmark = pytest.mark.spark

RAW_SCHEMA = "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP, timestampType INT"
WHEN = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
V1 = {"type": "record", "name": "Flight", "namespace": "air", "fields": [
    {"name": "flight", "type": "string"}, {"name": "seats", "type": "int"}]}  # fmt: skip
V2 = {**V1, "fields": [*V1["fields"], {"name": "delay_min", "type": ["null", "int"], "default": None}]}
BAD = {"type": "record", "name": "Flight", "namespace": "air", "fields": [{"name": "flight", "type": "long"}]}


def serializer(url: str, subject: str, schema: dict[str, Any]) -> Any:
    """confluent-kafka's Avro serializer for ``schema`` under ``subject`` (it registers the schema)."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient({"url": url})
    serialize = AvroSerializer(client, json.dumps(schema), conf={"subject.name.strategy": lambda *_: subject})
    return lambda record: serialize(record, SerializationContext("flights", MessageField.VALUE))


def raw(spark: Any, values: list[bytes | None]) -> Any:
    rows = [(f"k{i}".encode(), v, "flights", 0, i, WHEN, 0) for i, v in enumerate(values)]
    return spark.createDataFrame(rows, RAW_SCHEMA)


def raw_value(value: bytes | None) -> str:
    """What the malformed column keeps of a message: "" for none, the text of unframed JSON, else base64."""
    if value is None:
        return ""
    return value.decode() if value.startswith(b"{") else "base64:" + base64.b64encode(value).decode()


def source(url: str, reader_file: Any = None, **registry: Any) -> SourceSection:
    value: dict[str, Any] = {
        "format": "avro-registry",
        "registry": {"url": url, "retries": 0, "timeout": 2, **registry},
    }
    if reader_file is not None:
        value["avro-schema-file"] = str(reader_file)
    return SourceSection.model_validate(
        {"format": "kafka", "bootstrap-servers": "127.0.0.1:1", "subscribe": "flights", "value": value}
    )


def test_two_writer_schemas_land_in_the_reader_columns_and_every_bad_message_says_why(
    spark: Any, schema_registry: str
) -> None:
    v1, v2 = (
        serializer(schema_registry, "flights-value", V1),
        serializer(schema_registry, "flights-value", V2),
    )
    bad = serializer(schema_registry, "flights-bad-value", BAD)
    good1, good2 = (
        v1({"flight": "LH400", "seats": 300}),
        v2({"flight": "AF11", "seats": 280, "delay_min": 25}),
    )
    assert good1[0] == 0 and good2[0] == 0 and good1[1:5] != good2[1:5]  # framed, two schema ids
    values = [
        good1,
        good2,
        b'{"flight": "BA1", "seats": 10}',  # JSON on the Avro topic
        b"\x00" + (987654).to_bytes(4, "big") + good1[5:],  # an id the registry never gave
        good2[:7],  # truncated
        None,  # a tombstone
        bad({"flight": 42}),  # a writer schema the reader cannot read (string <- long)
    ]
    decoder = RegistryAvroDecoder(source(schema_registry))  # read as the subject's latest version: V2
    rows = [r.asDict() for r in decoder(raw(spark, values)).orderBy("kafka_offset").collect()]
    assert [(r["flight"], r["seats"], r["delay_min"]) for r in rows[:2]] == [
        ("LH400", 300, None),
        ("AF11", 280, 25),
    ]
    assert [r["_corrupt_record"] for r in rows[:2]] == [None, None]
    ids = [int.from_bytes(v[1:5], "big") for v in (good1, good2)]
    assert [r["kafka_schema_id"] for r in rows[:2]] == ids
    reasons = [r["kafka_decode_error"] for r in rows[2:]]
    assert reasons[0] == NO_MAGIC_BYTE and reasons[1] == f"{UNKNOWN_SCHEMA_ID} 987654"
    assert reasons[2] == f"{CORRUPT_PAYLOAD} (schema id {ids[1]})" and reasons[3] == TOMBSTONE
    assert reasons[4].startswith(INCOMPATIBLE_SCHEMA)
    for r, value in zip(rows[2:], values[2:], strict=True):  # nothing dropped: raw bytes, coordinates
        assert r["flight"] is None and r["kafka_topic"] == "flights" and r["kafka_key"] is not None
        assert r["_corrupt_record"] == raw_value(value)
    bad_id = int.from_bytes(values[6][1:5], "big")  # type: ignore[index]
    assert set(decoder.counted()) == {  # the batch's messages per schema id, from the same small job
        SchemaMessages("flights", ids[0], "readable", 1),
        SchemaMessages("flights", ids[1], "readable", 2),  # the truncated one is corrupt, its id readable
        SchemaMessages("flights", bad_id, "incompatible", 1),
        SchemaMessages("flights", 987654, "unknown", 1),
        SchemaMessages("flights", None, "unframed", 1),
        SchemaMessages("flights", None, "tombstone", 1),
    }
    assert [f.name for f in decoder.schema().fields][:3] == ["flight", "seats", "delay_min"]
    # each schema id was fetched once: a second batch with the same ids asks the registry nothing
    asked = decoder.client.requests
    decoder(raw(spark, values)).count()
    assert decoder.client.requests == asked


def test_an_empty_value_is_unframed_and_a_null_one_a_tombstone_in_its_reason_and_in_its_count(
    spark: Any, tmp_path: Any
) -> None:
    # no framed message: nothing is asked of a registry (none runs at this address)
    reader = tmp_path / "flight.avsc"
    reader.write_text(json.dumps(V2), encoding="utf-8")
    values = [None, b"", b"\x00\x01", b"abc", b'{"flight": "BA1"}', None, b""]
    decoder = RegistryAvroDecoder(source("http://127.0.0.1:1", reader_file=reader))
    rows = decoder(raw(spark, values)).orderBy("kafka_offset").collect()
    reasons = [r["kafka_decode_error"] for r in rows]
    # zero bytes are not NULL: under 5 bytes, so no magic byte; only a NULL value is a tombstone
    assert reasons == [TOMBSTONE, NO_MAGIC_BYTE, NO_MAGIC_BYTE, NO_MAGIC_BYTE, NO_MAGIC_BYTE, TOMBSTONE,
                       NO_MAGIC_BYTE]  # fmt: skip
    counted = {c.verdict: c.messages for c in decoder.counted()}
    assert counted == {"tombstone": reasons.count(TOMBSTONE), "unframed": reasons.count(NO_MAGIC_BYTE)}
    # nothing lost: an unframed value's text as it is (NULL and empty both show an empty raw value: the offset
    # and the reason tell them apart)
    assert [r["_corrupt_record"] for r in rows] == ["", "", "\x00\x01", "abc", '{"flight": "BA1"}', "", ""]


def test_json_framed_by_the_registry_reads_as_plain_json_and_every_bad_message_says_why(
    spark: Any, schema_registry: str
) -> None:
    """``json-registry``: the frame's id must name a JSON Schema the registry knows; the payload is then read
    with the config's schema exactly as an unframed JSON payload (undeclared keys kept)."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    flight = {"type": "object", "properties": {"flight": {"type": "string"}, "seats": {"type": "integer"}}}
    serialize = JSONSerializer(json.dumps(flight), SchemaRegistryClient({"url": schema_registry}),
                               conf={"subject.name.strategy": lambda *_: "flights-json-value"})  # fmt: skip
    context = SerializationContext("flights", MessageField.VALUE)
    good = serialize({"flight": "LH400", "seats": 300}, context)
    extra = serialize({"flight": "AF11", "seats": 280, "gate": "B7"}, context)  # an undeclared key
    json_id = int.from_bytes(good[1:5], "big")
    avro_id = int.from_bytes(
        serializer(schema_registry, "flights-value", V1)({"flight": "X", "seats": 1})[1:5], "big"
    )
    values = [
        good,
        extra,
        b'{"flight": "BA1", "seats": 10}',  # not framed
        good[:5] + b'{"flight": "BA2", "seats":',  # cut off
        b"\x00" + avro_id.to_bytes(4, "big") + b'{"flight": "BA3", "seats": 3}',  # an Avro id on a JSON topic
        b"\x00" + (987655).to_bytes(4, "big") + good[5:],
        None,
    ]
    section = SourceSection.model_validate({
        "format": "kafka", "bootstrap-servers": "127.0.0.1:1", "subscribe": "flights", "unknown-fields": "warn",
        "value": {"format": "json-registry", "schema": "flight STRING, seats INT",
                  "registry": {"url": schema_registry, "retries": 0, "timeout": 2}},
    })  # fmt: skip
    decoder = RegistryJsonDecoder(section)
    rows = [r.asDict() for r in decoder(raw(spark, values)).orderBy("kafka_offset").collect()]
    assert [(r["flight"], r["seats"], r["kafka_schema_id"]) for r in rows[:2]] == [
        ("LH400", 300, json_id),
        ("AF11", 280, json_id),
    ]
    assert rows[1]["_unknown_fields"] == '{"gate":"B7"}' and rows[0]["_unknown_fields"] is None
    reasons = [r["kafka_decode_error"] for r in rows]
    assert reasons[:3] == [None, None, NO_MAGIC_BYTE]
    assert reasons[3] == f"{CORRUPT_PAYLOAD} (schema id {json_id})"
    assert reasons[4].startswith(f"{WRONG_TYPE}: schema id {avro_id} is AVRO")
    assert reasons[5:] == [f"{UNKNOWN_SCHEMA_ID} 987655", TOMBSTONE]
    for r, value in zip(rows[2:], values[2:], strict=True):  # nothing dropped: the raw bytes, no fields
        assert r["flight"] is None and r["_unknown_fields"] is None
        assert r["_corrupt_record"] == raw_value(value)
    assert {(m.schema_id, m.verdict): m.messages for m in decoder.counted()} == {
        (json_id, "readable"): 3, (avro_id, "wrong-type"): 1, (987655, "unknown"): 1,
        (None, "unframed"): 1, (None, "tombstone"): 1,
    }  # fmt: skip


FLIGHT_PROTO = """syntax = "proto3";
package air;
message Flight {
  string flight = 1;
  int32 seats = 2;%s
}
message Crew { string name = 1; }
"""


def proto_classes(tmp_path: Any, name: str, extra: str = "") -> Any:
    """``flight.proto`` (with ``extra`` fields) compiled by protoc; its message classes from a descriptor pool
    of their own (two versions of ``air.Flight`` cannot share the default pool)."""
    import subprocess
    import sys

    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    folder = tmp_path / name
    folder.mkdir()
    (folder / "flight.proto").write_text(FLIGHT_PROTO % extra)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{folder}", f"--descriptor_set_out={folder}/d",
                    str(folder / "flight.proto")], check=True)  # fmt: skip
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString((folder / "d").read_bytes()).file:
        pool.Add(file)
    return {
        n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"air.{n}")) for n in ("Flight", "Crew")
    }


def test_protobuf_under_two_schema_versions_reads_as_the_reader_s_message_and_bad_ones_say_why(
    spark: Any, schema_registry: str, tmp_path: Any
) -> None:
    """``protobuf-registry``: messages framed by confluent-kafka's own Protobuf serializer under two versions
    of one schema (a field added) read as the subject's latest message; a message of another type of the
    schema, an unknown id, an Avro id and a cut-off payload are quarantined with their reasons."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from streaming_dq.sources.registry import RegistryProtobufDecoder

    v1 = proto_classes(tmp_path, "v1")
    v2 = proto_classes(tmp_path, "v2", "\n  optional int32 delay_min = 3;")
    client = SchemaRegistryClient({"url": schema_registry})
    context = SerializationContext("flights-pb", MessageField.VALUE)

    def serializer(message: Any) -> Any:
        conf = {"use.deprecated.format": False, "subject.name.strategy": lambda *_: "flights-pb-value"}
        return ProtobufSerializer(message, client, conf)

    one = serializer(v1["Flight"])(v1["Flight"](flight="LH400", seats=300), context)
    two = serializer(v2["Flight"])(v2["Flight"](flight="AF11", seats=280, delay_min=25), context)
    crew = v2["Crew"](name="Ada").SerializeToString()
    ids = [int.from_bytes(v[1:5], "big") for v in (one, two)]
    assert ids[0] != ids[1] and one[5:6] == b"\x00"  # two versions; the first message's index: one zero byte
    avro_id = int.from_bytes(serializer_avro(schema_registry)[1:5], "big")
    values = [
        one,
        two,
        two[:5] + b"\x02\x02" + crew,  # the schema's second message (Crew) under v2's id
        two[:9],  # cut off inside a field
        b"\x00" + (987656).to_bytes(4, "big") + b"\x00\x0a\x01x",
        b"\x00" + avro_id.to_bytes(4, "big") + b"\x00\x0a\x01x",
    ]
    section = SourceSection.model_validate({
        "format": "kafka", "bootstrap-servers": "127.0.0.1:1", "subscribe": "flights-pb",
        "value": {"format": "protobuf-registry", "registry": {"url": schema_registry, "retries": 0}},
    })  # fmt: skip
    decoder = RegistryProtobufDecoder(section)
    rows = [r.asDict() for r in decoder(raw(spark, values)).orderBy("kafka_offset").collect()]
    assert [(r["flight"], r["seats"], r["delay_min"]) for r in rows[:2]] == [
        ("LH400", 300, None),  # written before the field existed: unset
        ("AF11", 280, 25),
    ]
    assert [r["kafka_schema_id"] for r in rows[:2]] == ids
    reasons = [r["kafka_decode_error"] for r in rows]
    assert reasons[:2] == [None, None]
    assert reasons[2:4] == [f"{CORRUPT_PAYLOAD} (schema id {ids[1]})"] * 2
    assert reasons[4] == f"{UNKNOWN_SCHEMA_ID} 987656"
    assert reasons[5].startswith(f"{WRONG_TYPE}: schema id {avro_id} is AVRO")
    for r, value in zip(rows[2:], values[2:], strict=True):  # nothing dropped
        assert r["flight"] is None and r["_corrupt_record"] == raw_value(value)
    assert [f.name for f in decoder.schema().fields][:3] == ["flight", "seats", "delay_min"]


def serializer_avro(url: str) -> bytes:
    return serializer(url, "flights-value", V1)({"flight": "X", "seats": 1})


def test_producers_under_the_record_name_strategies_are_read_as_the_subject_the_config_names(
    spark: Any, schema_registry: str
) -> None:
    """Confluent's serializers name a subject after the topic (the default), the record (``air.Flight``) or
    both (``flights-air.Flight``); the frame carries only the id, so any of them decodes, and the reader
    schema is the subject ``registry.subject`` names."""
    from confluent_kafka.schema_registry import SchemaRegistryClient, record_subject_name_strategy
    from confluent_kafka.schema_registry import topic_record_subject_name_strategy as topic_record
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient({"url": schema_registry})
    context = SerializationContext("flights", MessageField.VALUE)
    by_record = AvroSerializer(
        client, json.dumps(V1), conf={"subject.name.strategy": record_subject_name_strategy}
    )
    by_both = AvroSerializer(client, json.dumps(V2), conf={"subject.name.strategy": topic_record})
    values = [
        by_record({"flight": "LH1", "seats": 1}, context),
        by_both({"flight": "AF2", "seats": 2, "delay_min": 5}, context),
    ]
    subjects = client.get_subjects()
    assert "air.Flight" in subjects and "flights-air.Flight" in subjects
    for subject, delays in (("air.Flight", None), ("flights-air.Flight", [None, 5])):
        decoder = RegistryAvroDecoder(source(schema_registry, subject=subject))
        rows = [r.asDict() for r in decoder(raw(spark, values)).orderBy("kafka_offset").collect()]
        assert [r["kafka_decode_error"] for r in rows] == [None, None]
        assert [(r["flight"], r["seats"]) for r in rows] == [("LH1", 1), ("AF2", 2)]
        # read as that subject's schema: v1 has no delay, v2 reads v1's message with its default
        assert [r.get("delay_min") for r in rows] == (delays or [None, None])
        assert ("delay_min" in rows[0]) is (delays is not None)


def test_a_registry_that_is_down_fails_the_batch_or_quarantines_as_configured(
    spark: Any, tmp_path: Any
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens there once the block ends
    framed = [b"\x00" + (1).to_bytes(4, "big") + b"\x02"]
    reader = tmp_path / "flight.avsc"
    reader.write_text(json.dumps(V2))  # the reader schema from a file: the registry is down
    with pytest.raises(RegistryUnavailableError, match="did not answer"):
        RegistryAvroDecoder(source(closed, reader))(raw(spark, framed)).collect()
    lenient = RegistryAvroDecoder(source(closed, reader, unavailable="quarantine"))
    (row,) = lenient(raw(spark, framed)).collect()
    assert (
        row["kafka_decode_error"] == f"{REGISTRY_UNREACHABLE} (schema id 1)"
        and row["_corrupt_record"] is not None
    )


def test_the_registry_listens_on_the_loopback_only(schema_registry: str) -> None:
    port = int(schema_registry.split(":")[2].split("/")[0])
    others = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1"}
    for address in others:
        with socket.socket() as s:
            s.settimeout(2)
            assert s.connect_ex((address, port)) != 0, f"the registry answers on {address}"


def run_flights_job(
    spark: Any,
    tmp_path: Any,
    kafka_bootstrap: str,
    topic: str,
    gate: str,
    value: dict[str, Any],
    messages: list[bytes | None],
) -> tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]:
    """``messages`` produced to ``topic`` through the real broker (keys F0, F1 ...), then read once by the job
    (`GateJob`, what `streaming-dq run` runs) with ``value`` as its payload; every message in one table.
    Returns the config's path, the pass rows and the quarantined rows."""
    import yaml
    from confluent_kafka import Producer

    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.runtime.job import GateJob
    from streaming_dq.tables import read_table

    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for i, message in enumerate(messages):
        producer.produce(topic, key=f"F{i}".encode(), value=message)
    assert producer.flush(30) == 0
    config = tmp_path / "flights.yaml"
    config.write_text(yaml.safe_dump({
        "gate": {"name": gate, "event-time": "kafka_timestamp"},
        "source": {"format": "kafka", "bootstrap-servers": kafka_bootstrap, "subscribe": topic,
                   "value": value, "trigger": "available-now"},
        "checkpoint": "state",
        "targets": {"pass": "pass", "quarantine": "quarantine", "results": "results"},
        "checks": [{"check": "numeric-min-check", "check-id": "seats-positive", "columns": ["seats"], "min-value": 1}],
    }, sort_keys=False))  # fmt: skip
    totals = GateJob(load_gate_config(config), session=spark).run(timeout=600)
    assert not totals.failed, totals.error
    passed = read_table(str(tmp_path / "pass")).to_pylist()
    quarantined = read_table(str(tmp_path / "quarantine")).to_pylist()
    assert totals.rows_in == len(messages) == len(passed) + len(quarantined)
    return config, passed, quarantined


def test_a_job_reads_a_registry_framed_topic_through_the_broker_and_quarantines_what_it_cannot_decode(
    spark: Any, schema_registry: str, kafka_bootstrap: str, tmp_path: Any
) -> None:
    """Flights produced under two schemas and some garbage, through the real broker: every message in exactly
    one table, each bad one with its coordinates, schema id and reason; a rerun reads nothing twice."""

    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.runtime.job import GateJob
    from streaming_dq.tables import read_table

    topic = "flights-job"
    v1, v2 = (
        serializer(schema_registry, f"{topic}-value", V1),
        serializer(schema_registry, f"{topic}-value", V2),
    )
    values: list[bytes | None] = [v1({"flight": f"LH{i}", "seats": 100 + i}) for i in range(30)]
    values += [v2({"flight": f"AF{i}", "seats": 200 + i, "delay_min": i or None}) for i in range(30)]
    garbage = [b"not avro", b"\x00\x00\x00\x00", values[0][:6], None]
    value = {"format": "avro-registry", "registry": {"url": schema_registry}}
    config, passed, quarantined = run_flights_job(
        spark, tmp_path, kafka_bootstrap, topic, "flights", value, values + garbage
    )
    assert sorted(r["flight"] for r in passed) == sorted(
        [f"LH{i}" for i in range(30)] + [f"AF{i}" for i in range(30)]
    )
    assert sum(r["delay_min"] is not None for r in passed) == 29  # v2's field; NULL in v1's rows
    assert len({r["kafka_schema_id"] for r in passed}) == 2
    v1_id = int.from_bytes(values[0][1:5], "big")  # type: ignore[index]
    expected = [NO_MAGIC_BYTE, NO_MAGIC_BYTE, f"{CORRUPT_PAYLOAD} (schema id {v1_id})", TOMBSTONE]
    assert sorted(r["kafka_decode_error"] for r in quarantined) == sorted(expected)
    for r in quarantined:
        assert [e["check-id"] for e in r["_dq_errors"]] == ["malformed-record"]
        assert r["kafka_topic"] == topic and r["kafka_offset"] is not None and r["kafka_key"].startswith("F")
    # the messages per schema id reach the results table's batch rows (what the exporter counts, locally and
    # under Spark Connect)
    v2_id = int.from_bytes(values[30][1:5], "big")  # type: ignore[index]
    counted: Counter[tuple[int | None, str]] = Counter()
    for outcome in decode_outcomes(read_table(str(tmp_path / "results")).to_pylist()):
        for m in outcome.schemas:
            assert m.topic == topic
            counted[(m.schema_id, m.verdict)] += m.messages
    assert counted == {(v1_id, "readable"): 31, (v2_id, "readable"): 30, (None, "unframed"): 2,
                       (None, "tombstone"): 1}  # fmt: skip
    assert GateJob(load_gate_config(config), session=spark).run(timeout=600).rows_in == 0  # nothing twice
    # `check` reads the topic once, decoded the same way: the same rows, the same malformed ones
    from typer.testing import CliRunner

    from streaming_dq.cli.main import app

    checked = CliRunner().invoke(app, ["check", str(config), "--format", "kafka", "--data", topic, "--json",
                                       "--fail-on", "never"])  # fmt: skip
    assert checked.exit_code == 0, checked.stdout + checked.stderr[-3000:]
    summary = json.loads(checked.stdout)["summary"]
    assert (summary["total_records"], summary["failed_records"]) == (len(values) + len(garbage), len(garbage))


def test_protobuf_through_the_broker_with_registry_credentials_that_reach_no_output(
    spark: Any, schema_registry: str, kafka_bootstrap: str, tmp_path: Any, monkeypatch: Any, caplog: Any
) -> None:
    """Protobuf under two schema versions and garbage, produced through the real broker and read by the job
    (`GateJob`, what `streaming-dq run` runs) with basic-auth credentials from the environment: every message
    in one table once, the bad ones with their reasons; the password in no table, log line or Delta log."""
    import logging

    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from streaming_dq.tables import read_table

    secret = "pw-7Hq2-never-printed"
    monkeypatch.setenv("REGISTRY_PASSWORD", secret)
    caplog.set_level(logging.DEBUG)
    topic = "flights-pb-job"
    v1, v2 = proto_classes(tmp_path, "v1"), proto_classes(tmp_path, "v2", "\n  optional int32 delay_min = 3;")
    client = SchemaRegistryClient({"url": schema_registry})
    context = SerializationContext(topic, MessageField.VALUE)
    conf = {"use.deprecated.format": False}
    first, second = (
        ProtobufSerializer(v1["Flight"], client, conf),
        ProtobufSerializer(v2["Flight"], client, conf),
    )
    values: list[bytes | None] = [
        first(v1["Flight"](flight=f"LH{i}", seats=10 + i), context) for i in range(20)
    ]
    values += [second(v2["Flight"](flight=f"AF{i}", seats=50 + i, delay_min=i), context) for i in range(20)]
    garbage = [b"junk", values[-1][:8], None]  # type: ignore[index]
    registry = {"url": schema_registry, "basic-auth": {"user": "gate", "password": "${REGISTRY_PASSWORD}"}}
    value = {"format": "protobuf-registry", "message": "air.Flight", "registry": registry}
    _config, passed, quarantined = run_flights_job(
        spark, tmp_path, kafka_bootstrap, topic, "flights_pb", value, values + garbage
    )
    assert sorted((r["flight"], r["delay_min"]) for r in passed) == sorted(
        [(f"LH{i}", None) for i in range(20)] + [(f"AF{i}", i) for i in range(20)]
    )
    last_id = int.from_bytes(values[-1][1:5], "big")  # type: ignore[index]
    assert sorted(r["kafka_decode_error"] for r in quarantined) == sorted(
        [NO_MAGIC_BYTE, f"{CORRUPT_PAYLOAD} (schema id {last_id})", TOMBSTONE]
    )
    # the password: in no row of any table, no log line, no file the job wrote
    tables = [read_table(str(tmp_path / t)).to_pylist() for t in ("pass", "quarantine", "results")]
    assert secret not in repr(tables) and secret not in caplog.text
    for file in tmp_path.rglob("*"):
        if file.is_file():  # the config names the variable, not the password
            assert secret.encode() not in file.read_bytes(), file
