"""A gate that maintains its own tables while the stream runs: compaction between batches keeps every row
exactly once, bounds the files, survives a restart on the same checkpoint, and shows in Prometheus."""

from __future__ import annotations

from collections import Counter

from deltalake import DeltaTable
from prometheus_client import CollectorRegistry
from test_gate_support import BASE_CHECKS, ids, land, make_gate, row, run, stream

from streaming_dq.exporter import GateMetrics
from streaming_dq.maintenance import MaintenancePolicy

WINDOWED = [
    *BASE_CHECKS,
    {
        "check": "row-count-min-check",
        "check-id": "rows-per-hour",
        "min-count": 1,
        "scope": {"window": "1 hour"},
    },
]


def files(path) -> int:
    return len(DeltaTable(str(path)).file_uris())


def test_compaction_every_two_batches_keeps_rows_exactly_once_across_a_restart(spark, tmp_path):
    landing = tmp_path / "landing"
    for f in range(5):
        land(landing, f"f{f}", [row(f * 10 + i, amount=None if i == 0 else 1.0) for i in range(10)])
    registry = CollectorRegistry()
    seen = []

    def gate():
        return make_gate(
            tmp_path, WINDOWED, event_time="ts", metrics_table=str(tmp_path / "metrics"), on_batch=seen.append,
            metrics=GateMetrics("orders", registry=registry) if not seen else None,
            maintenance=MaintenancePolicy(every_batches=2),
        )  # fmt: skip

    run(gate(), stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")
    assert [o.maintenance is not None for o in seen] == [False, True, False, True, False]
    report = seen[3].maintenance
    assert report is not None and {t.role for t in report.tables} == {
        "pass",
        "quarantine",
        "results",
        "metrics",
    }
    assert all(t.error is None for t in report.tables)
    assert [t.files_after for t in report.tables if t.role == "pass"] == [1]
    for role in ("pass", "quarantine", "results", "metrics"):
        assert files(tmp_path / role) <= 2, role  # one compacted file + the batch after the last run
        assert DeltaTable(str(tmp_path / role)).history(2)[1]["operation"] == "OPTIMIZE"
    sample = lambda name, **labels: registry.get_sample_value(name, {"gate": "orders", **labels})  # noqa: E731
    assert sample("streaming_dq_table_files", table="pass") == 1.0
    assert sample("streaming_dq_last_maintenance_timestamp_seconds") > 0

    # A restart on the same checkpoint (new gate object, its batch count from zero) with two more files.
    for f in range(5, 7):
        land(landing, f"f{f}", [row(f * 10 + i, amount=None if i == 0 else 1.0) for i in range(10)])
    run(gate(), stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")
    assert [o.batch_id for o in seen] == list(range(7))
    assert Counter(ids(tmp_path / "pass")) == Counter(i for i in range(70) if i % 10)
    assert Counter(ids(tmp_path / "quarantine")) == Counter(range(0, 70, 10))
    assert seen[6].maintenance is not None and files(tmp_path / "pass") == 1
