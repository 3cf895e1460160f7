"""Kafka sources (#13): decoding on the executors, undecodable messages quarantined with their coordinates, a
real broker (Apache Kafka in KRaft mode, started once per test session from the JARs `make jars` fetched).

The decoding tests feed :func:`streaming_dq.sources.kafka.decode_kafka` rows shaped as Spark's Kafka reader gives them
(no broker needed); the job tests produce to the broker with confluent-kafka and run the shipped
``jobs/payments_kafka`` config with ``trigger: available-now``.
"""

from __future__ import annotations

import base64
import io
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streaming_dq.compat.versions import has, spark_minor
from streaming_dq.config.loader import load_gate_config
from streaming_dq.config.source_model import SourceSection
from streaming_dq.runtime.job import GateJob
from streaming_dq.sources.kafka import decode_kafka
from streaming_dq.tables import read_table

pytestmark = [pytest.mark.spark, pytest.mark.compat]  # compat: every Spark tier runs it too (#56)

REPO = Path(__file__).resolve().parents[2]
RAW_SCHEMA = "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP"
WHEN = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
AVRO_SCHEMA = {
    "type": "record",
    "name": "Payment",
    "fields": [{"name": "payment_id", "type": "string"}, {"name": "amount", "type": "double"}],
}


def _raw(spark: Any, values: list[bytes | None]) -> Any:
    rows = [(f"k{i}".encode(), v, "payments", i % 2, 100 + i, WHEN) for i, v in enumerate(values)]
    return spark.createDataFrame(rows, RAW_SCHEMA)


def _source(value: dict[str, Any], **extra: Any) -> SourceSection:
    return SourceSection.model_validate(
        {
            "format": "kafka",
            "bootstrap-servers": "127.0.0.1:1",
            "subscribe": "payments",
            "value": value,
            **extra,
        }
    )


def _rows(df: Any) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in df.orderBy("kafka_offset").collect()]


def test_json_values_decode_and_undecodable_ones_keep_their_raw_value_and_coordinates(spark: Any) -> None:
    values = [
        b'{"payment_id": "P1", "amount": 12.5}',
        b'{"payment_id": "P2", "amount": 3, "risk": 0.9}',  # an undeclared key
        b'{"payment_id": "P3", "amount": ',  # cut off
        b"\xff\xfe\x00\x81",  # not UTF-8
        b"",
        None,  # a tombstone
        '{"payment_id": "Zoë", "amount": 1}'.encode(),
    ]
    source = _source({"format": "json", "schema": "payment_id STRING, amount DOUBLE"})
    decoded = decode_kafka(_raw(spark, values), source)
    assert decoded.columns == [
        "payment_id", "amount", "kafka_key", "kafka_topic", "kafka_partition", "kafka_offset",
        "kafka_timestamp", "_corrupt_record", "_unknown_fields",
    ]  # fmt: skip
    rows = _rows(decoded)
    assert [r["payment_id"] for r in rows] == ["P1", "P2", None, None, None, None, "Zoë"]
    assert [r["_corrupt_record"] for r in rows] == [
        None,
        None,
        '{"payment_id": "P3", "amount": ',
        "base64:" + base64.b64encode(b"\xff\xfe\x00\x81").decode(),
        "",
        "",
        None,
    ]
    # before the VARIANT type (Spark 3.5) an undeclared value is kept as its JSON text (docs/streaming.md)
    assert json.loads(rows[1]["_unknown_fields"]) == ({"risk": 0.9} if has("variant") else {"risk": "0.9"})
    assert [
        (r["kafka_key"], r["kafka_topic"], r["kafka_partition"], r["kafka_offset"]) for r in rows[2:4]
    ] == [
        ("k2", "payments", 0, 102),
        ("k3", "payments", 1, 103),
    ]
    assert rows[3]["kafka_timestamp"] == WHEN.replace(tzinfo=None)  # the session's zone is UTC


def test_whitespace_values_and_text_after_the_object_are_undecodable_with_their_raw_value(spark: Any) -> None:
    """A blank line of a file sent as a message, or a message with text or a second record after its object,
    must not pass as a row: each is malformed with its raw value, its fields NULL (#27)."""
    values = [
        b"\n",
        b"\t",
        b"\r\n",
        b'{"payment_id": "P1", "amount": 1} trailing',
        b'{"payment_id": "P2", "amount": 2}\n{"payment_id": "P3", "amount": 3}',
        b'{"payment_id": "P4", "amount": 4}{"payment_id": "P5", "amount": 5}',
        b'{"payment_id": "P6", "amount": 6}] ',
        b'{"payment_id": "P7", "amount": 7}},',
        b'{"payment_id": "P8", "amount": 8, "risk": 1}\r\n',  # whitespace after the object is fine
        b'{"payment_id": "}]", "amount": 9}',  # brackets inside a string are not structure
    ]
    source = _source({"format": "json", "schema": "payment_id STRING, amount DOUBLE"})
    rows = _rows(decode_kafka(_raw(spark, values), source))
    assert [(r["payment_id"], r["amount"], r["_corrupt_record"]) for r in rows] == [
        *[(None, None, v.decode()) for v in values[:8]],
        ("P8", 8.0, None),
        ("}]", 9.0, None),
    ]
    kept = '{"risk":1}' if has("variant") else '{"risk":"1"}'  # Spark 3.5: the value's JSON text
    assert [r["_unknown_fields"] for r in rows] == [None] * 8 + [kept, None]

    csv = decode_kafka(
        _raw(spark, [b"\t", b"\r\n", b"P1,2.5"]),
        _source({"format": "csv", "schema": "payment_id STRING, amount DOUBLE"}),
    )
    assert [r["_corrupt_record"] for r in _rows(csv)] == ["\t", "\r\n", None]


def test_a_raw_value_that_is_not_utf8_is_base64_on_one_line(spark: Any) -> None:
    """Spark's base64() breaks lines every 76 characters; `_dq_raw` is standard base64 a strict decoder takes."""
    value = bytes(range(256)) * 2  # 512 bytes, not UTF-8: 684 base64 characters
    source = _source({"format": "json", "schema": "payment_id STRING, amount DOUBLE"})
    (row,) = _rows(decode_kafka(_raw(spark, [value]), source))
    raw = row["_corrupt_record"]
    assert raw.startswith("base64:") and "\r" not in raw and "\n" not in raw
    assert base64.b64decode(raw.removeprefix("base64:"), validate=True) == value


def test_csv_text_and_avro_values_decode_and_mark_what_they_cannot(spark: Any) -> None:
    csv = decode_kafka(
        _raw(spark, [b"P1,12.5", b"P2", b"P3,1,extra", b"P4,abc"]),
        _source({"format": "csv", "schema": "payment_id STRING, amount DOUBLE"}),
    )
    assert [(r["payment_id"], r["amount"], r["_corrupt_record"]) for r in _rows(csv)] == [
        ("P1", 12.5, None),
        ("P2", None, "P2"),
        ("P3", 1.0, "P3,1,extra"),
        ("P4", None, "P4,abc"),
    ]

    text = decode_kafka(_raw(spark, [b"hello", b"\xc3\x28", None]), _source({"format": "text"}))
    assert [(r["value"], r["_corrupt_record"]) for r in _rows(text)] == [
        ("hello", None),
        (None, "base64:" + base64.b64encode(b"\xc3\x28").decode()),
        (None, ""),
    ]


def test_keys_decode_as_declared_and_as_text_by_default(spark: Any) -> None:
    rows = [(b'{"tenant": "t1", "shard": 3}', b"v"), (b"\xff", b"v"), (None, b"v")]
    raw = spark.createDataFrame([(k, v, "t", 0, i, WHEN) for i, (k, v) in enumerate(rows)], RAW_SCHEMA)
    by_default = _rows(decode_kafka(raw, _source({"format": "text"})))
    assert [r["kafka_key"] for r in by_default] == ['{"tenant": "t1", "shard": 3}', "base64:/w==", None]
    declared = decode_kafka(
        raw, _source({"format": "text"}, key={"format": "json", "schema": "tenant STRING, shard INT"})
    )
    keys = [r["kafka_key"] for r in _rows(declared)]
    assert (keys[0], keys[2]) == ({"tenant": "t1", "shard": 3}, None)


def test_avro_values_decode_with_the_schema_file(spark: Any, tmp_path: Path) -> None:
    import fastavro

    schema_file = tmp_path / "payment.avsc"
    schema_file.write_text(json.dumps(AVRO_SCHEMA), encoding="utf-8")
    parsed = fastavro.parse_schema(AVRO_SCHEMA)

    def encoded(record: dict[str, Any]) -> bytes:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, record)
        return out.getvalue()

    good = encoded({"payment_id": "P1", "amount": 7.25})
    avro = decode_kafka(
        _raw(spark, [good, b"\x07", None]),
        _source({"format": "avro", "avro-schema-file": str(schema_file)}),
    )
    rows = _rows(avro)
    assert avro.columns[:2] == ["payment_id", "amount"]
    assert (rows[0]["payment_id"], rows[0]["amount"], rows[0]["_corrupt_record"]) == ("P1", 7.25, None)
    assert rows[1]["payment_id"] is None and rows[1]["_corrupt_record"] is not None
    assert rows[2]["_corrupt_record"] == ""


def test_a_kafka_source_config_names_what_is_missing() -> None:
    from pydantic import ValidationError

    cases = {
        "a kafka source needs bootstrap-servers": {"format": "kafka", "subscribe": "t", "value": {"format": "text"}},
        "exactly one of subscribe, subscribe-pattern, assign": {
            "format": "kafka", "bootstrap-servers": "h:1", "subscribe": "t", "subscribe-pattern": "t.*",
            "value": {"format": "text"},
        },
        "a kafka source has no path": {
            "format": "kafka", "path": "x", "bootstrap-servers": "h:1", "subscribe": "t", "value": {"format": "text"}
        },
        "a json payload needs a schema": {
            "format": "kafka", "bootstrap-servers": "h:1", "subscribe": "t", "value": {"format": "json"}
        },
        "an avro payload needs avro-schema-file": {
            "format": "kafka", "bootstrap-servers": "h:1", "subscribe": "t", "value": {"format": "avro"}
        },
        "bootstrap-servers, subscribe: only for a kafka source": {
            "format": "json", "path": "x", "schema": "a INT", "bootstrap-servers": "h:1", "subscribe": "t"
        },
    }  # fmt: skip
    for expected, data in cases.items():
        with pytest.raises(ValidationError, match=expected):
            SourceSection.model_validate(data)


# --- through a real broker -------------------------------------------------------------------------------------


def _job(tmp_path: Path, bootstrap: str, topic: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "payments_kafka"
    folder.mkdir(exist_ok=True)
    config = folder / "payments.yaml"
    shutil.copy(REPO / "jobs" / "payments_kafka" / "payments.yaml", config)
    monkeypatch.setenv("KAFKA_BOOTSTRAP", bootstrap)
    monkeypatch.setenv("KAFKA_TOPIC", topic)
    return config


def _run(config: Path, spark: Any, lag: dict[str, float] | None = None) -> Any:
    job = GateJob(load_gate_config(config), session=spark)
    totals = job.run(timeout=600)
    assert not totals.failed, totals.error
    if lag is not None and job.registry is not None:
        for family in job.registry.collect():
            for sample in family.samples:
                if sample.name == "streaming_dq_kafka_consumer_lag_messages":
                    lag[sample.labels["topic"]] = sample.value
    return totals


def test_the_payments_job_routes_every_message_once_and_resumes_from_its_offsets(
    spark: Any, kafka_bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    sys.path.insert(0, str(REPO / "jobs" / "payments_kafka"))
    from generate import produce  # type: ignore[import-not-found]

    topic = "payments-once"
    first = produce(kafka_bootstrap, topic, 1000, seed=3)
    config = _job(tmp_path, kafka_bootstrap, topic, monkeypatch)
    lag: dict[str, float] = {}
    totals = _run(config, spark, lag)
    # drained (available-now): from the source offsets of the last progress. Spark 4.0.0's Kafka reader (the
    # 4.0 build Maven Central serves here whole) leaves latestOffset out of that progress in some runs and not
    # in others (both seen here), so on 4.0 the series may be absent; where present it is 0 (docs/deploy.md)
    assert lag == {topic: 0.0} or (spark_minor() == "4.0" and lag == {})
    tables = config.parent / "data" / "tables"
    passed = read_table(str(tables / "payments_pass"))
    quarantined = read_table(str(tables / "payments_quarantine"))
    assert totals.rows_in == first.messages == passed.num_rows + quarantined.num_rows
    assert totals.batches == 1  # 1,000 messages < max-offsets-per-trigger

    q = quarantined.to_pylist()
    malformed = [r for r in q if any(e["check-id"] == "malformed-record" for e in r["_dq_errors"])]
    assert len(malformed) == first.undecodable == 8
    assert sorted(r["_dq_raw"] for r in malformed)[:2] == ["", ""]  # the empty value and the tombstone
    for r in malformed:  # everything needed to find and replay the message
        assert (
            r["kafka_topic"] == topic and r["kafka_offset"] is not None and r["kafka_partition"] is not None
        )
        assert r["kafka_key"].startswith("P-3-") and r["kafka_timestamp"] is not None
        assert [e["check-id"] for e in r["_dq_errors"]] == ["malformed-record"]  # and nothing else
    failed = {e["check-id"] for r in q for e in r["_dq_errors"]}
    assert {"payment-id-present", "merchant-present", "amount-positive", "currency-known"} <= failed
    warned = [r for r in passed.to_pylist() if r["_unknown_fields"] is not None]
    assert len(warned) == first.faults["undeclared-field"]
    assert all(set(json.loads(r["_unknown_fields"])) == {"risk_score"} for r in warned)

    coordinates = [(r["kafka_partition"], r["kafka_offset"]) for r in passed.to_pylist() + q]
    assert len(set(coordinates)) == len(coordinates) == first.messages

    assert _run(config, spark).rows_in == 0  # nothing new: nothing read twice
    more = produce(kafka_bootstrap, topic, 300, seed=4)
    assert _run(config, spark).rows_in == more.messages
    total = (
        read_table(str(tables / "payments_pass")).num_rows
        + read_table(str(tables / "payments_quarantine")).num_rows
    )
    assert total == first.messages + more.messages


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text('ab{}[],:" \\', max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text("xy}{", max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
_OBJECTS = st.dictionaries(st.text("kz", max_size=2), _JSON_VALUES, max_size=4)
_SUFFIXES = st.sampled_from(
    ["", " ", "\n", "\t\r\n", " x", "}", "]", ",", ", {}", "{}", '\n{"k": 1}', "] }", "}}", "]]"]
)


@settings(max_examples=3, deadline=None)
@given(st.lists(st.tuples(_OBJECTS, _SUFFIXES), min_size=20, max_size=60))
def test_trailing_content_agrees_with_python_s_json_decoder(
    spark: Any, lines: list[tuple[dict, str]]
) -> None:
    """has_trailing_content against a plain-Python oracle (``raw_decode`` of the first value, then anything
    but JSON whitespace): objects with nested values and braces in strings, and every kind of suffix."""
    from pyspark.sql import functions as F

    from streaming_dq.sources import has_trailing_content

    texts = [json.dumps(obj) + suffix for obj, suffix in lines]
    expected = []
    for text in texts:
        _, end = json.JSONDecoder().raw_decode(text)
        expected.append(text[end:].strip(" \t\n\r") != "")
    df = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "i INT, value STRING")
    got = [
        r["t"] for r in df.select("i", has_trailing_content(F.col("value")).alias("t")).orderBy("i").collect()
    ]
    assert got == expected, [(t, g) for t, g, e in zip(texts, got, expected, strict=True) if g != e]
