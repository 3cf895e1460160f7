"""OpenLineage events from real gates (#45): a job run from its config (``GateJob``, what ``streaming-dq run``
runs, on the tests' session) POSTs an event per committed batch and per final window verdict to an HTTP receiver on 127.0.0.1, with its
API key as a bearer token that appears in no output; a gate with the file transport appends one valid event
per line, and the kafka transport one per message; a receiver that is down fails no batch and is counted. Every event is validated against the
published OpenLineage schemas (tests/lineage_schema.py)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from jobs_support import in_order, make_orders_job
from lineage_schema import validate_event
from test_quarantine_show import CHECKS, config_for
from test_stream_duplicates import DAY0, frame, gate_at

from streaming_dq.tables import read_table

pytestmark = pytest.mark.spark

SECRET = "ol-key-5b1f0c3e"


class Receiver(ThreadingHTTPServer):
    """An OpenLineage HTTP receiver on 127.0.0.1: keeps each request's path, headers and JSON body."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, str], Any]] = []
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.received.append((self.path, dict(self.headers), json.loads(body)))
        self.send_response(201)
        self.end_headers()

    def log_message(self, *args: Any) -> None:  # quiet
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_job_posts_a_valid_event_per_batch_and_per_final_window_with_its_key_hidden(
    spark: Any,
    tmp_path: Path,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.runtime.job import GateJob

    config, summary = make_orders_job(tmp_path, batches=3, rows=30)
    in_order(summary["files"])
    spec = yaml.safe_load(config.read_text())
    port = receiver.server_address[1]
    spec["lineage"] = {"namespace": "shop", "transport": {"type": "http", "url": f"http://127.0.0.1:{port}",
                                                          "api-key": "${OL_KEY}"}}  # fmt: skip
    config.write_text(yaml.safe_dump(spec, sort_keys=False))
    monkeypatch.setenv("OL_KEY", SECRET)
    with caplog.at_level(logging.DEBUG):
        totals = GateJob(load_gate_config(config), session=spark).run(timeout=600)  # the job `run` runs
    assert not totals.failed, totals.error
    out = capfd.readouterr()
    assert SECRET not in out.out + out.err + caplog.text
    events = [body for _, _, body in receiver.received]
    assert {path for path, _, _ in receiver.received} == {"/api/v1/lineage"}
    assert {headers["Authorization"] for _, headers, _ in receiver.received} == {f"Bearer {SECRET}"}
    for event in events:
        validate_event(event)
    results = read_table(str(tmp_path / "data" / "tables" / "orders_results")).to_pylist()
    batches = sorted(r["batch_id"] for r in results if r["kind"] == "batch")
    batch_events = [e for e in events if e["job"]["name"] == spec["gate"]["name"]]
    assert sorted(e["run"]["facets"]["streamingDq"]["batchId"] for e in batch_events) == batches
    for event in batch_events:
        verdict = event["run"]["facets"]["streamingDq"]
        row = next(r for r in results if r["kind"] == "batch" and r["batch_id"] == verdict["batchId"])
        assert (verdict["rowsIn"], verdict["rowsPassed"], verdict["rowsQuarantined"]) == (
            row["rows"], row["rows_passed"], row["rows_quarantined"])  # fmt: skip
        outputs = {o["name"]: o["outputFacets"]["outputStatistics"]["rowCount"] for o in event["outputs"]}
        assert outputs == {str(tmp_path / "data" / "tables" / "orders_pass"): row["rows_passed"],
                           str(tmp_path / "data" / "tables" / "orders_quarantine"): row["rows_quarantined"]}  # fmt: skip
        checks = {
            r["check_id"]
            for r in results
            if r["batch_id"] == verdict["batchId"] and r["kind"] in ("row", "aggregate")
        }
        assert {t["name"] for t in event["run"]["facets"]["test"]["tests"]} == checks
    final = sorted((r["check_id"], r["window_start"].isoformat()) for r in results
                   if r["kind"] == "window" and r["status"] != "provisional")  # fmt: skip
    window_events = [e for e in events if e["job"]["name"] == spec["gate"]["name"] + ".windows"]
    assert final, "the job judged no window"
    assert sorted((e["run"]["facets"]["test"]["tests"][0]["name"].split(" (")[0],
                   e["run"]["facets"]["nominalTime"]["nominalStartTime"]) for e in window_events) == final  # fmt: skip
    assert len(events) == len(batch_events) + len(window_events)


def lineage_config(tmp: Path, transport: dict[str, Any]) -> Any:
    from streaming_dq.config.loader import load_gate_config

    tmp.mkdir(parents=True, exist_ok=True)
    path = config_for(tmp)
    spec = yaml.safe_load(path.read_text())
    spec["lineage"] = {"transport": transport}
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return load_gate_config(path)


def test_the_file_transport_appends_a_valid_event_per_line_and_a_down_receiver_fails_no_batch(
    spark: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from streaming_dq.lineage import LineageListener
    from streaming_dq.tables import read_table as read

    events_file = tmp_path / "lineage" / "events.jsonl"
    events_file.parent.mkdir()
    to_file = LineageListener(lineage_config(tmp_path / "a", {"type": "file", "path": str(events_file)}))
    down = LineageListener(lineage_config(tmp_path / "b", {"type": "http", "url": "http://127.0.0.1:9",
                                                            "timeout": 1, "retries": 1}))  # fmt: skip
    gate = gate_at(tmp_path, checks=CHECKS, listeners=[to_file, down])
    with caplog.at_level(logging.ERROR, logger="streaming_dq.gate"):
        gate(frame(spark, [(1, DAY0, -1), (2, DAY0, 1)]), 0)
        gate(frame(spark, [(1, DAY0, 2), (3, DAY0, 5)]), 1)
    lines = events_file.read_text().splitlines()
    assert len(lines) == 2 and to_file.sent == 2
    for line in lines:
        validate_event(json.loads(line))
    assert [json.loads(line)["run"]["facets"]["streamingDq"]["rowsQuarantined"] for line in lines] == [1, 1]
    # the receiver that is down: both batches committed all the same, each event counted as failed and logged
    assert read(str(tmp_path / "pass")).num_rows == 2 and down.failed == 2 and down.sent == 0
    assert sum("outcome callback failed" in r.getMessage() for r in caplog.records) == 2


def test_the_kafka_transport_produces_a_valid_event_per_batch_to_the_topic(
    spark: Any, tmp_path: Path, kafka_bootstrap: str
) -> None:
    from confluent_kafka import Consumer

    from streaming_dq.lineage import LineageListener

    topic = "openlineage-events"
    listener = LineageListener(lineage_config(tmp_path / "cfg", {"type": "kafka", "topic": topic,
                                                                  "config": {"bootstrap.servers": kafka_bootstrap}}))  # fmt: skip
    gate = gate_at(tmp_path, checks=CHECKS, listeners=[listener])
    gate(frame(spark, [(1, DAY0, -1), (2, DAY0, 1)]), 0)
    gate(frame(spark, [(1, DAY0, 2), (3, DAY0, 5), (4, DAY0, 6)]), 1)
    assert (listener.sent, listener.failed) == (2, 0)
    consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": "lineage-test",
                         "auto.offset.reset": "earliest"})  # fmt: skip
    consumer.subscribe([topic])
    events: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    while len(events) < 2 and time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is not None and message.error() is None:
            events.append(json.loads(message.value()))
    consumer.close()
    for event in events:
        validate_event(event)
    assert [e["run"]["facets"]["streamingDq"]["rowsIn"] for e in events] == [2, 3]
