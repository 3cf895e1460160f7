"""End to end: a real gate stream exports its metrics, and a real Prometheus server scrapes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from test_prometheus_server import running_prometheus, wait_for

from streaming_dq import CheckSet, QualityGate
from streaming_dq.exporter import CheckLabels, GateMetrics, serve_metrics
from streaming_dq.sink import with_corrupt_record_column

pytestmark = pytest.mark.integration

CHECKS = [
    {"check": "null-check", "check-id": "id-present", "columns": ["id"]},
    {"check": "row-count-min-check", "check-id": "volume", "min-count": 1, "severity": "warning"},
]


def test_a_real_gate_streams_and_prometheus_scrapes_its_counts(spark: Any, tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    rows = [{"id": i if i % 4 else None, "ts": f"2025-12-0{1 + i % 3}T10:00:00Z"} for i in range(12)]
    (landing / "a.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n")
    check_set = CheckSet.from_dicts(CHECKS)
    registry = CollectorRegistry()
    labels = [CheckLabels(c.check_id, c.check_type, c.severity.value) for c in check_set]
    metrics = GateMetrics("e2e", registry=registry, checks=labels)
    server = serve_metrics(registry, port=0)
    gate = QualityGate(
        "e2e",
        check_set,
        pass_table=str(tmp_path / "pass"),
        quarantine_table=str(tmp_path / "quarantine"),
        event_time="ts",
        metrics=metrics,
    )
    schema = with_corrupt_record_column("id BIGINT, ts TIMESTAMP")
    stream = spark.readStream.format("json").schema(schema).load(str(landing))
    query = gate.start(stream, checkpoint_location=str(tmp_path / "chk"), trigger={"availableNow": True})
    query.awaitTermination(300)
    assert query.exception() is None

    directory = tmp_path / "prometheus"
    directory.mkdir()
    try:
        with running_prometheus(directory, server.port) as api:
            log = directory / "prometheus.log"

            def rows_by_outcome() -> dict[str, float] | None:
                found = api.vector('streaming_dq_rows_total{gate="e2e"}')
                by = {dict(k)["outcome"]: v for k, v in found.items()}
                return by if by.get("quarantined") else None

            by_outcome = wait_for(rows_by_outcome, "the gate's row counters in Prometheus", log)
            # 12 records + 1 malformed line: ids 0, 4, 8 are NULL, the broken line is malformed.
            assert by_outcome == {"passed": 9.0, "quarantined": 4.0, "warned": 0.0}
            malformed = api.vector('streaming_dq_malformed_rows_total{gate="e2e"}')
            assert list(malformed.values()) == [1.0]
            committed = api.vector('streaming_dq_batches_total{gate="e2e",result="committed"}')
            assert list(committed.values()) == [1.0]
            up = api.vector('up{job="streaming_dq"}')
            assert list(up.values()) == [1.0]
    finally:
        server.close()
