"""A schema registry that goes down mid-stream, and a job SIGKILLed after it comes back (#46): nothing lost,
nothing judged wrongly.

A registry of its own (Apicurio with an H2 file, so it comes back on the same port with the schemas it held),
a real broker, ``streaming-dq run`` on one checkpoint throughout:

1. flights under schema v1 and some garbage are read while the registry is up;
2. the registry stops; flights under a NEW schema v2 arrive (its id registered before the stop). The batch
   that meets the unknown-to-the-job id cannot ask the registry: under the default ``unavailable: retry`` it
   fails before anything is written and the job exits 1, saying so;
3. the registry is back; a job in its own process reads on and is SIGKILLed at a random moment after a batch
   commits; more v1 flights arrive; a last run drains the topic.

Every message is then in the pass or the quarantine table exactly once (by partition and offset), every
flight of either schema passed with its fields, the garbage is quarantined with its reasons, and no message
was judged by the outage (no ``registry unreachable`` or ``unknown schema id``).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from streaming_dq.core.outcome_rows import decode_outcomes
from streaming_dq.devtools.local_kafka import free_port
from streaming_dq.devtools.local_registry import local_registry
from streaming_dq.sources.registry import (
    CORRUPT_PAYLOAD,
    NO_MAGIC_BYTE,
    REGISTRY_UNREACHABLE,
    TOMBSTONE,
    UNKNOWN_SCHEMA_ID,
)
from streaming_dq.tables import read_table

pytestmark = pytest.mark.integration

V1 = {"type": "record", "name": "Flight", "namespace": "air", "fields": [
    {"name": "flight", "type": "string"}, {"name": "seats", "type": "int"}]}  # fmt: skip
V2 = {**V1, "fields": [*V1["fields"], {"name": "delay_min", "type": ["null", "int"], "default": None}]}
PROGRESS_WAIT_SECONDS = 180  # a JVM start plus one committed batch


def serializer(url: str, subject: str, schema: dict[str, Any]) -> Any:
    """confluent-kafka's Avro serializer under ``subject`` (it registers the schema on first use, then keeps
    the id: it frames messages while the registry is down)."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient({"url": url})
    serialize = AvroSerializer(client, json.dumps(schema), conf={"subject.name.strategy": lambda *_: subject})
    return lambda record: serialize(record, SerializationContext(subject, MessageField.VALUE))


def test_a_registry_outage_mid_stream_and_a_sigkill_after_it_change_no_verdict(
    tmp_path: Path, kafka_bootstrap: str, request: pytest.FixtureRequest
) -> None:
    from confluent_kafka import Producer
    from typer.testing import CliRunner

    from streaming_dq.cli.main import app

    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    topic, port, storage = f"flights-outage-{seed}", free_port(), tmp_path / "registry-db"
    url = f"http://127.0.0.1:{port}/apis/ccompat/v7"
    reader = tmp_path / "flight.avsc"
    reader.write_text(json.dumps(V2))  # the rows' schema: v2 (a v1 flight reads delay_min as NULL)
    config = tmp_path / "flights.yaml"
    config.write_text(yaml.safe_dump({
        "gate": {"name": "flights", "event-time": "kafka_timestamp"},
        "source": {"format": "kafka", "bootstrap-servers": kafka_bootstrap, "subscribe": topic,
                   "starting-offsets": "earliest", "max-offsets-per-trigger": 12,
                   "value": {"format": "avro-registry", "avro-schema-file": str(reader),
                             "registry": {"url": url, "retries": 1, "timeout": 2}},
                   "trigger": {"processing-time": "1 second"}},
        "checkpoint": str(tmp_path / "state"),
        "targets": {"pass": str(tmp_path / "pass"), "quarantine": str(tmp_path / "quarantine"),
                    "results": str(tmp_path / "results"), "writer": "delta-rs"},
        "checks": [{"check": "numeric-min-check", "check-id": "seats-positive", "columns": ["seats"], "min-value": 1}],
        "spark": {"master": "local[2]", "conf": {"spark.sql.shuffle.partitions": "2"}},
    }, sort_keys=False))  # fmt: skip
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    produced: list[bytes | None] = []
    results_log = tmp_path / "results" / "_delta_log"

    def produce(values: list[bytes | None]) -> None:
        for value in values:
            producer.produce(topic, key=f"F{len(produced)}".encode(), value=value)
            produced.append(value)
        assert producer.flush(30) == 0

    def commits() -> int:  # batches committed (version 0 of the results table creates it)
        return max(len(list(results_log.glob("*.json"))) - 1, 0)

    def start_job(log: Path) -> subprocess.Popen[bytes]:
        """``streaming-dq run`` in a process of its own, once it has committed a batch."""
        before = commits()
        with log.open("ab") as sink:
            job = subprocess.Popen(
                [str(Path(sys.executable).with_name("streaming-dq")), "run", str(config)],
                stdout=sink, stderr=subprocess.STDOUT, env=dict(os.environ), start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + PROGRESS_WAIT_SECONDS
        while commits() == before and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert commits() > before, log.read_text(errors="replace")[-3000:]
        return job

    def rows_written() -> int:
        return len(read_table(str(tmp_path / "pass"))) + len(read_table(str(tmp_path / "quarantine")))

    def drain() -> Any:  # in this process and the tests' session (its Kafka JARs): no JVM start
        return CliRunner().invoke(app, ["run", str(config), "--available-now", "--fail-on", "never"])

    request.getfixturevalue("spark")
    context = f"seed {seed}"
    first_log = tmp_path / "first.log"
    registry = local_registry(tmp_path / "registry-1", port=port, storage=storage)
    assert registry.__enter__() == url
    try:
        v1, v2 = serializer(url, f"{topic}-value", V1), serializer(url, f"{topic}-value", V2)
        good = [v1({"flight": f"LH{i}", "seats": 100 + i}) for i in range(20)]
        garbage = [b"not avro", b"\x00\x00\x00\x00", good[0][:6], None]
        produce([*good[:10], *garbage, *good[10:]])
        first = start_job(first_log)
        v2({"flight": "warm-up", "seats": 1, "delay_min": None})  # registers v2: its id is new to the job
    finally:
        registry.__exit__(None, None, None)
    try:  # the registry is down, the job runs on: flights of the new schema arrive
        written = rows_written()
        assert written > 0  # mid-stream: batches were committed before the outage
        produce([v2({"flight": f"AF{i}", "seats": 200 + i, "delay_min": i or None}) for i in range(20)])
        assert first.wait(timeout=PROGRESS_WAIT_SECONDS) == 1, first_log.read_text(errors="replace")[-3000:]
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=30)
    said = first_log.read_text(errors="replace")
    assert "the stream failed" in said and "did not answer" in said, said[-3000:]
    assert rows_written() >= written  # its batches before the outage; none of the new id's
    during = drain()  # a restart while it is still down: fails the same way, writes nothing
    assert during.exit_code == 1 and "did not answer" in during.stdout + during.stderr, during.stdout
    after_outage = rows_written()

    with local_registry(tmp_path / "registry-2", port=port, storage=storage) as back:  # with what it held
        assert back == url
        produce([v1({"flight": f"BA{i}", "seats": 50 + i}) for i in range(15)])
        log = tmp_path / "job.log"
        job = start_job(log)
        try:
            time.sleep(rng.uniform(0.0, 1.5))
        finally:
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
            job.wait(timeout=30)
        context += f"; killed job's log:\n{log.read_text(errors='replace')[-3000:]}"
        assert rows_written() > after_outage, context
        produce([v1({"flight": f"LX{i}", "seats": 30 + i}) for i in range(10)])
        last = drain()
        assert last.exit_code == 0, last.stdout + last.stderr[-3000:] + context

    passed = read_table(str(tmp_path / "pass")).to_pylist()
    quarantined = read_table(str(tmp_path / "quarantine")).to_pylist()
    coordinates = Counter((r["kafka_partition"], r["kafka_offset"]) for r in passed + quarantined)
    assert sum(coordinates.values()) == len(produced) == len(coordinates), context  # each message once
    flights = sorted(r["flight"] for r in passed)
    expected = [f"{p}{i}" for p, n in (("LH", 20), ("AF", 20), ("BA", 15), ("LX", 10)) for i in range(n)]
    assert flights == sorted(expected), context  # both schemas' flights passed, none judged by the outage
    assert {r["flight"]: r["delay_min"] for r in passed if r["flight"].startswith("AF")}["AF7"] == 7
    v1_id = int.from_bytes(good[0][1:5], "big")
    reasons = sorted(r["kafka_decode_error"] for r in quarantined)
    assert reasons == sorted(
        [NO_MAGIC_BYTE, NO_MAGIC_BYTE, f"{CORRUPT_PAYLOAD} (schema id {v1_id})", TOMBSTONE]
    )
    verdicts = {
        m.verdict
        for o in decode_outcomes(read_table(str(tmp_path / "results")).to_pylist())
        for m in o.schemas
    }
    assert verdicts <= {"readable", "unframed", "tombstone"}, (verdicts, context)
    assert not any(
        (r["kafka_decode_error"] or "").startswith((REGISTRY_UNREACHABLE, UNKNOWN_SCHEMA_ID))
        for r in quarantined
    )
