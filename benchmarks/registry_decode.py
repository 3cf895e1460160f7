"""``python -m benchmarks.registry_decode [--messages 1000000] [--batch 100000]``: what decoding Kafka values
framed by a schema registry costs per message (#46), against plain JSON values of the same records, through
the gate, per router; and how many registry requests each batch makes.

One session with delta-spark and spark-avro, and a schema registry on 127.0.0.1 (Apicurio, ``make registry``).
The same flights (flight, seats, a nullable delay) are encoded three ways as the rows of Spark's Kafka reader
(``key``, ``value``, ``topic``, ``partition``, ``offset``, ``timestamp``), held in memory so the source costs
nothing:

* ``json``: plain JSON values, decoded by the gate's Kafka JSON path (``from_json``);
* ``avro-registry``: Avro under two writer schemas registered in the registry (v1 and v2: a field added with
  a default), framed as Confluent's serializers frame them, decoded per batch by ``RegistryAvroDecoder``;
* ``json-registry``: the JSON values framed with a JSON Schema's id, decoded by ``RegistryJsonDecoder``;
* ``protobuf-registry``: Protobuf framed with its schema's id (registered as Confluent's serializers register
  it), decoded by ``RegistryProtobufDecoder`` (Python's protobuf runtime in an Arrow-batched UDF).

Per router (``driver``: delta-rs, the embedded default; ``distributed``: Spark's writer) the batches run
through a gate with a null check and a range check, the variants interleaved batch by batch, each into its own
tables. Reported: wall and CPU seconds (Python driver + JVM) per variant over all batches, microseconds per
message, the ratios to ``json``, and the registry's HTTP requests per batch. Writes
``benchmarks/results/registry-decode-latest.json``: the last ``--keep`` runs (3) and the median ratios over them.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.distributed import build_spark, cpu_seconds
from benchmarks.harness import save_result
from streaming_dq.compat.spark import from_arrow

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work" / "registry-decode"
RESULTS = ROOT / "benchmarks" / "results" / "registry-decode-latest.json"
T0 = datetime(2026, 11, 8, tzinfo=UTC)
V1 = {"type": "record", "name": "Flight", "namespace": "air", "fields": [
    {"name": "flight", "type": "string"}, {"name": "seats", "type": "int"}]}  # fmt: skip
V2 = {**V1, "fields": [*V1["fields"], {"name": "delay_min", "type": ["null", "int"], "default": None}]}
JSON_SCHEMA = {"type": "object", "properties": {"flight": {"type": "string"}, "seats": {"type": "integer"},
                                                "delay_min": {"type": ["integer", "null"]}}}  # fmt: skip
VARIANTS = ("json", "avro-registry", "json-registry", "protobuf-registry")
PROTO = """syntax = "proto3";
package air;
message Flight { string flight = 1; int32 seats = 2; optional int32 delay_min = 3; }
"""


def register(url: str, subject: str, schema: dict[str, Any] | str, kind: str = "AVRO") -> int:
    import urllib.request

    text = schema if isinstance(schema, str) else json.dumps(schema)
    body = {"schema": text, **({"schemaType": kind} if kind != "AVRO" else {})}
    request = urllib.request.Request(
        f"{url}/subjects/{subject}/versions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return int(json.loads(answer.read())["id"])


def register_proto(url: str) -> int:
    """The Flight message's schema as confluent-kafka's serializer registers it: a base64 FileDescriptorProto."""
    import base64

    from google.protobuf import descriptor_pb2

    from streaming_dq.sources.protobuf import descriptor_set

    main = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set(PROTO)).file[-1]
    text = base64.b64encode(main.SerializeToString()).decode()
    return register(url, "flights-pb-value", text, "PROTOBUF")


def records(n: int) -> list[dict[str, Any]]:
    return [{"flight": f"LH{i}", "seats": i % 400, "delay_min": (i % 90) or None} for i in range(n)]


def values(flights: list[dict[str, Any]], ids: dict[str, int]) -> dict[str, list[bytes]]:
    """Each variant's message values for the same records (half of the Avro ones under v1, half under v2)."""
    import fastavro

    from streaming_dq.sources.protobuf import _message_class, descriptor_set

    v1, v2 = fastavro.parse_schema(V1), fastavro.parse_schema(V2)
    flight = _message_class(descriptor_set(PROTO), "air.Flight")
    out: dict[str, list[bytes]] = {v: [] for v in VARIANTS}
    for i, record in enumerate(flights):
        message = flight(flight=record["flight"], seats=record["seats"], delay_min=record["delay_min"])
        out["protobuf-registry"].append(
            b"\x00" + ids["protobuf"].to_bytes(4, "big") + b"\x00" + message.SerializeToString()
        )
        text = json.dumps(record, separators=(",", ":")).encode()
        out["json"].append(text)
        out["json-registry"].append(b"\x00" + ids["json"].to_bytes(4, "big") + text)
        buffer = io.BytesIO()
        if i % 2:
            fastavro.schemaless_writer(buffer, v2, record)
            out["avro-registry"].append(b"\x00" + ids["v2"].to_bytes(4, "big") + buffer.getvalue())
        else:
            fastavro.schemaless_writer(buffer, v1, {"flight": record["flight"], "seats": record["seats"]})
            out["avro-registry"].append(b"\x00" + ids["v1"].to_bytes(4, "big") + buffer.getvalue())
    return out


def raw_batches(spark: Any, messages: list[bytes], batch: int) -> list[Any]:
    """The messages as in-memory batches of Spark's Kafka reader rows."""
    import pyarrow as pa

    frames = []
    for start in range(0, len(messages), batch):
        chunk = messages[start : start + batch]
        table = pa.table({
            "key": pa.array([f"k{start + i}".encode() for i in range(len(chunk))], pa.binary()),
            "value": pa.array(chunk, pa.binary()),
            "topic": pa.array(["flights"] * len(chunk)),
            "partition": pa.array([0] * len(chunk), pa.int32()),
            "offset": pa.array(range(start, start + len(chunk)), pa.int64()),
            "timestamp": pa.array([T0 + timedelta(seconds=start + i) for i in range(len(chunk))],
                                  pa.timestamp("us", tz="UTC")),
            "timestampType": pa.array([0] * len(chunk), pa.int32()),
        })  # fmt: skip
        frame = from_arrow(spark, table)
        frame.persist()
        frame.count()
        frames.append(frame)
    return frames


def source(variant: str, url: str) -> Any:
    from streaming_dq.config.source_model import SourceSection

    registry = {"url": url, "timeout": 10}
    value: dict[str, Any] = {
        "json": {"format": "json", "schema": "flight STRING, seats INT, delay_min INT"},
        "json-registry": {"format": "json-registry", "schema": "flight STRING, seats INT, delay_min INT",
                          "registry": registry},
        "avro-registry": {"format": "avro-registry", "registry": {**registry, "subject": "flights-value"}},
        "protobuf-registry": {"format": "protobuf-registry", "registry": {**registry, "subject": "flights-pb-value"}},
    }[variant]  # fmt: skip
    return SourceSection.model_validate(
        {"format": "kafka", "bootstrap-servers": "127.0.0.1:1", "subscribe": "flights", "value": value}
    )


def gate(variant: str, router: str, work: Path, decoder: Any) -> Any:
    from streaming_dq import CheckSet, QualityGate

    checks = [
        {"check": "null-check", "check-id": "flight-present", "columns": ["flight"]},
        {"check": "numeric-between-check", "check-id": "seats-range", "columns": ["seats"],
         "min-value": 1, "max-value": 399},
    ]  # fmt: skip
    return QualityGate(
        f"flights_{variant.replace('-', '_')}",
        CheckSet.from_dicts(checks),
        pass_table=str(work / "pass"),
        quarantine_table=str(work / "quarantine"),
        event_time="kafka_timestamp",
        writer="delta-rs" if router == "driver" else "spark",
        routing=router,
        driver_commit_rows=0,
        source_decoder=decoder,
    )


def measure(spark: Any, url: str, ids: dict[str, int], messages: int, batch: int) -> dict[str, Any]:
    from streaming_dq.sources.kafka import decode_kafka
    from streaming_dq.sources.registry import registry_decoder

    flights = records(messages)
    encoded = values(flights, ids)
    batches = {v: raw_batches(spark, encoded[v], batch) for v in VARIANTS}
    jvm = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    pids = [os.getpid(), jvm]
    out: dict[str, Any] = {"messages": messages, "batch": batch}
    for router in ("driver", "distributed"):
        decoders = {v: None if v == "json" else registry_decoder(source(v, url)) for v in VARIANTS}
        gates = {v: gate(v, router, WORK / router / v, decoders[v]) for v in VARIANTS}
        totals = {v: [0.0, 0.0] for v in VARIANTS}
        requests: dict[str, list[int]] = {v: [] for v in VARIANTS if v != "json"}
        # batch 0 of each variant warms the session, the plans and the tables up and is not counted
        for i in range(len(batches["json"]) + 1):
            for v in VARIANTS:
                raw = batches[v][max(i - 1, 0)]
                frame = decode_kafka(raw, source(v, url)) if v == "json" else raw
                before = decoders[v].client.requests if decoders[v] is not None else 0
                cpu, wall = cpu_seconds(pids), time.perf_counter()
                gates[v](frame, i)
                if i:
                    totals[v][0] += time.perf_counter() - wall
                    totals[v][1] += cpu_seconds(pids) - cpu
                if decoders[v] is not None:
                    requests[v].append(decoders[v].client.requests - before)
        out[router] = {
            "wall_seconds": {v: round(t[0], 2) for v, t in totals.items()},
            "cpu_seconds": {v: round(t[1], 2) for v, t in totals.items()},
            "microseconds_per_message": {v: round(t[0] / messages * 1e6, 2) for v, t in totals.items()},
            "over_json": {v: round(totals[v][0] / totals["json"][0], 2) for v in VARIANTS},
            "cpu_over_json": {v: round(totals[v][1] / totals["json"][1], 2) for v in VARIANTS},
            "registry_requests_per_batch": requests,
        }
        print(router, json.dumps(out[router]), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=100_000)
    parser.add_argument(
        "--keep", type=int, default=3, help="Runs kept in the results file (medians over them)."
    )
    args = parser.parse_args()
    from streaming_dq.devtools.local_registry import local_registry
    from streaming_dq.runtime.jvm import spark_conf

    shutil.rmtree(WORK, ignore_errors=True)
    spark = build_spark(spark_conf(["delta", "avro"]))
    with local_registry(WORK / "registry") as url:
        ids = {
            "v1": register(url, "flights-value", V1),
            "v2": register(url, "flights-value", V2),
            "json": register(url, "flights-json-value", JSON_SCHEMA, "JSON"),
            "protobuf": register_proto(url),
        }
        result = measure(spark, url, ids, args.messages, args.batch)
    result["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    save_result(RESULTS, with_run(RESULTS, result, keep=args.keep))
    shutil.rmtree(WORK, ignore_errors=True)


def with_run(path: Path, result: dict[str, Any], *, keep: int) -> dict[str, Any]:
    """The results file with this run added to its last ``keep - 1`` runs of the same size, and the median
    ratios to plain JSON over them (this machine swings: one run is not a ratio)."""
    before = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    same = [
        r
        for r in before.get("runs", [])
        if (r["messages"], r["batch"]) == (result["messages"], result["batch"])
    ]
    runs = [*same[-(keep - 1) :], result] if keep > 1 else [result]
    medians = {
        f"median_over_json_{router}": {
            v: statistics.median(r[router]["over_json"][v] for r in runs) for v in result[router]["over_json"]
        }
        for router in ("driver", "distributed")
    }
    note = "totals over the batches after a warm-up batch, per run; medians over the runs kept"
    return {"benchmark": "registry-decode", "messages": result["messages"], "batch": result["batch"],
            "note": note, **medians, "runs": runs}  # fmt: skip


if __name__ == "__main__":
    main()
