"""A gate that maintains its own tables while the stream runs: compaction between batches keeps every row
exactly once, bounds the files, survives a restart on the same checkpoint, and shows in Prometheus."""

from __future__ import annotations

from collections import Counter

from deltalake import DeltaTable
from prometheus_client import CollectorRegistry
from test_gate_support import BASE_CHECKS, ids, land, make_gate, row, run, stream

from streaming_dq.exporter import GateMetrics
from streaming_dq.exporter.follower import outcomes_from_results
from streaming_dq.maintenance import MaintenancePolicy
from streaming_dq.tables import read_table

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
    # A reader of the results table (the exporter under Spark Connect) gets each run with the next batch.
    rebuilt = {
        o.batch_id: o.maintenance
        for o in outcomes_from_results(read_table(str(tmp_path / "results")).to_pylist())
    }
    assert [b for b, m in sorted(rebuilt.items()) if m is not None] == [2, 4]
    for ran_after, carried_by in ((1, 2), (3, 4)):
        ran, got = seen[ran_after].maintenance, rebuilt[carried_by]
        assert ran is not None and got is not None
        assert (got.started_at, got.seconds) == (ran.started_at, ran.seconds)
        assert sorted((t.role, t.files_after, t.error) for t in got.tables) == sorted(
            (t.role, t.files_after, t.error) for t in ran.tables
        )

    # A restart on the same checkpoint (new gate object, its batch count from zero) with two more files.
    for f in range(5, 7):
        land(landing, f"f{f}", [row(f * 10 + i, amount=None if i == 0 else 1.0) for i in range(10)])
    run(gate(), stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")
    assert [o.batch_id for o in seen] == list(range(7))
    assert Counter(ids(tmp_path / "pass")) == Counter(i for i in range(70) if i % 10)
    assert Counter(ids(tmp_path / "quarantine")) == Counter(range(0, 70, 10))
    assert seen[6].maintenance is not None and files(tmp_path / "pass") == 1


def test_an_unsafe_vacuum_or_an_unknown_z_order_column_stops_the_gate_before_its_first_batch(spark, tmp_path):
    from datetime import timedelta

    import pytest

    from streaming_dq.exceptions import ConfigError

    landing = tmp_path / "landing"
    land(landing, "f0", [row(1)])
    for policy, field in [
        (
            MaintenancePolicy(every_batches=10, vacuum_retention=timedelta(days=1)),
            "maintenance.vacuum.retention",
        ),
        (MaintenancePolicy(every_batches=10, z_order=("order_ts",)), "maintenance.z-order-by"),
    ]:
        gate = make_gate(tmp_path, maintenance=policy)
        with pytest.raises(ConfigError) as info:
            gate.start(stream(spark, landing), checkpoint_location=str(tmp_path / "chk"))
        assert info.value.field_path == field
    assert not (tmp_path / "chk").exists()  # no query was started


def test_maintain_on_the_spark_writer_compacts_with_optimize_and_vacuums_dry(spark, tmp_path):
    import re

    import pyarrow as pa
    from typer.testing import CliRunner

    from streaming_dq.cli.main import app
    from streaming_dq.tables import AppTransaction, DeltaTarget, SparkDeltaWriter

    writer, target = SparkDeltaWriter(spark), DeltaTarget(str(tmp_path / "pass"))
    for b in range(2):
        writer.append(target, pa.table({"id": [b, b + 10]}), AppTransaction("orders:q", b))
    config = tmp_path / "gate.yaml"
    config.write_text(
        "gate: {name: orders}\nsource: {format: json, path: landing, schema: 'id BIGINT'}\ncheckpoint: chk\n"
        "targets: {pass: pass, quarantine: quarantine, writer: spark}\n"
        "checks: [{check: null-check, check-id: id, columns: [id]}]\n",
        encoding="utf-8",
    )
    version = DeltaTable(target.uri).version()
    dry = CliRunner().invoke(
        app, ["maintain", str(config), "--vacuum", "7 days", "--dry-run", "--log-retention", "7 days"]
    )
    assert dry.exit_code == 0, dry.output
    assert re.search(r"^pass .*: (\d+) -> \1 files, would delete 0 files", dry.stdout, re.M), dry.stdout
    assert DeltaTable(target.uri).version() == version  # a dry run writes nothing (#42)
    result = CliRunner().invoke(app, ["maintain", str(config), "--log-retention", "7 days"])
    assert result.exit_code == 0, result.output
    assert re.search(
        r"^pass .*: \d+ -> 1 files, compacted \d+ into 1, log retention set to 7 days",
        result.stdout,
        re.M,
    )
    props = DeltaTable(target.uri).metadata().configuration
    assert props["delta.logRetentionDuration"] == "interval 604800 seconds"
    assert "quarantine" in result.stdout and "no table yet" in result.stdout
    assert "with spark" in result.stdout
    assert [c["operation"] for c in DeltaTable(target.uri).history(2)] == ["SET TBLPROPERTIES", "OPTIMIZE"]
    assert writer.committed_version(target, "orders:q") == 1
    assert spark.range(1).count() == 1  # the shared session is still up
