"""Contract tests every writer back-end must pass (the Spark writer's run only where the Delta JARs are)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from streaming_dq.config.check_set import CheckSet
from streaming_dq.sink import (
    AppTransaction,
    DeltaRsWriter,
    DeltaTarget,
    QualityGate,
    SparkDeltaWriter,
    TableWriter,
    has_delta_extension,
    with_corrupt_record_column,
)
from streaming_dq.tables import read_table
from tests.spark_lines import SPARK_WRITER, writers

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("ts", pa.timestamp("us", tz="UTC"))])


@pytest.fixture(params=writers("delta-rs", "spark", "spark+delta-rs"))
def writer(request: Any, spark: Any) -> TableWriter:
    """Each back-end; ``spark+delta-rs`` is Spark's writer committing small appends with delta-rs (the
    default), ``spark`` commits every append through Spark."""
    if request.param.startswith("spark"):
        assert has_delta_extension(spark), "the test session loads delta-spark (tests/conftest.py)"
        return SparkDeltaWriter(spark, driver_commit_rows=0 if request.param == "spark" else 1000)
    return DeltaRsWriter()


def rows(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "ts": pa.nulls(len(ids), pa.timestamp("us", tz="UTC"))})


def count(writer: TableWriter, target: DeltaTarget) -> int:
    return read_table(target.uri).num_rows


def test_a_missing_table_has_no_schema_and_no_committed_version(writer, tmp_path):
    target = DeltaTarget(str(tmp_path / "t"))
    assert writer.table_schema(target) is None
    assert writer.committed_version(target, "app") is None


def test_ensure_table_creates_a_nullable_utc_table_once(writer, tmp_path):
    target = DeltaTarget(str(tmp_path / "t"))
    created = writer.ensure_table(target, SCHEMA)
    assert created == SCHEMA
    assert all(f.nullable for f in created)
    other = pa.schema([pa.field("x", pa.string())])
    assert writer.ensure_table(target, other) == SCHEMA  # an existing table is never altered


@pytest.mark.compat
def test_write_once_skips_a_replayed_or_older_batch_per_app_id(writer, tmp_path):
    target = DeltaTarget(str(tmp_path / "t"))
    writer.ensure_table(target, SCHEMA)

    assert writer.write_once(target, rows(1, 2), AppTransaction("app", 0))
    assert not writer.write_once(target, rows(1, 2), AppTransaction("app", 0))
    assert writer.write_once(target, rows(3), AppTransaction("app", 2))
    assert not writer.write_once(target, rows(4), AppTransaction("app", 1))
    assert writer.write_once(target, rows(5), AppTransaction("other-app", 0))

    assert count(writer, target) == 4
    assert writer.committed_version(target, "app") == 2
    assert writer.committed_version(target, "other-app") == 0


def test_an_empty_append_records_the_transaction(writer, tmp_path):
    target = DeltaTarget(str(tmp_path / "t"))
    writer.ensure_table(target, SCHEMA)
    writer.append(target, SCHEMA.empty_table(), AppTransaction("app", 7))
    assert writer.committed_version(target, "app") == 7
    assert count(writer, target) == 0


def test_merge_schema_adds_a_nullable_column(writer, tmp_path):
    target = DeltaTarget(str(tmp_path / "t"))
    writer.ensure_table(target, SCHEMA)
    wider = rows(1).append_column("coupon", pa.array(["c1"], pa.string()))
    writer.append(target, wider, AppTransaction("app", 0), merge_schema=True)
    schema = writer.table_schema(target)
    assert schema is not None
    assert schema.names == ["id", "ts", "coupon"]


def test_auto_picks_the_spark_writer_when_the_session_loads_delta(spark, tmp_path):
    gate = QualityGate("g", CheckSet(), pass_table=str(tmp_path / "p"), quarantine_table=str(tmp_path / "q"))
    assert gate.writer_for(spark).name == "spark"


class _Conf:
    def __init__(self, extensions: str) -> None:
        self.extensions = extensions

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.extensions if key == "spark.sql.extensions" else default


class _SessionConf:
    """Only the part of a session ``has_delta_extension`` reads: its ``spark.sql.extensions``."""

    def __init__(self, extensions: str) -> None:
        self.conf = _Conf(extensions)


@pytest.mark.parametrize(
    ("extensions", "expected"),
    [
        ("", False),
        ("com.example.Other", False),
        ("com.example.Other,io.delta.sql.DeltaSparkSessionExtension", True),
    ],
)
def test_has_delta_extension_reads_the_sessions_extensions(extensions, expected):
    assert has_delta_extension(_SessionConf(extensions)) is expected


@(pytest.mark.compat if SPARK_WRITER else lambda test: test)  # both writers: not on a Spark without Delta
@pytest.mark.parametrize(("written_by", "read_by"), [("spark", "delta-rs"), ("delta-rs", "spark")])
def test_a_table_written_by_one_writer_is_read_and_deduplicated_by_the_other(
    spark, tmp_path, written_by, read_by
):
    writers = {"spark": SparkDeltaWriter(spark), "delta-rs": DeltaRsWriter()}
    first, second = writers[written_by], writers[read_by]
    target = DeltaTarget(str(tmp_path / "t"))
    first.ensure_table(target, SCHEMA)
    assert first.write_once(target, rows(1, 2, 3), AppTransaction("app", 4))

    assert second.table_schema(target) == SCHEMA
    assert second.committed_version(target, "app") == 4
    assert not second.write_once(target, rows(9), AppTransaction("app", 4))  # a replay, seen across writers
    assert second.write_once(target, rows(4), AppTransaction("app", 5))

    by_delta_rs = sorted(read_table(target.uri).column("id").to_pylist())
    by_spark = sorted(r.id for r in spark.read.format("delta").load(target.uri).collect())
    assert by_delta_rs == by_spark == [1, 2, 3, 4]


def test_with_corrupt_record_column_appends_it_once(spark):
    schema = with_corrupt_record_column("id BIGINT, ts TIMESTAMP")
    assert schema.simpleString() == "struct<id:bigint,ts:timestamp,_corrupt_record:string>"
    assert with_corrupt_record_column(schema) == schema


# -- maintenance: the same contract on both back-ends ------------------------------------------------------


def test_compaction_keeps_the_rows_and_the_transactions_a_replay_is_skipped_by(writer, tmp_path):
    target = DeltaTarget(str(tmp_path / "t"))
    writer.ensure_table(target, SCHEMA)
    for b in range(8):
        writer.append(target, rows(b), AppTransaction("g:q", b))
    assert writer.file_count(target) == 8
    done = writer.compact(target)
    assert (done.files_removed, done.files_added, writer.file_count(target)) == (8, 1, 1)
    assert writer.committed_version(target, "g:q") == 7
    assert not writer.write_once(target, rows(7), AppTransaction("g:q", 7))
    assert sorted(read_table(target.uri).column("id").to_pylist()) == list(range(8))
    writer.checkpoint(target)  # delta-rs writes one; Spark's writer keeps its own schedule
    assert writer.committed_version(target, "g:q") == 7


def test_vacuum_lists_nothing_young_and_refuses_an_unsafe_retention(writer, tmp_path):
    from datetime import timedelta

    from streaming_dq.exceptions import ConfigError
    from streaming_dq.maintenance import check_retention

    target = DeltaTarget(str(tmp_path / "t"))
    writer.ensure_table(target, SCHEMA)
    for b in range(3):
        writer.append(target, rows(b), AppTransaction("g:q", b))
    writer.compact(target)
    assert writer.vacuum(target, timedelta(days=7), dry_run=True) == []  # the compacted files are minutes old
    on_disk = len(list((tmp_path / "t").glob("*.parquet")))
    assert writer.file_count(target) == 1 and on_disk >= 4  # nothing deleted (Spark also wrote an empty file)
    with pytest.raises(ConfigError, match="shorter than 7 days"):
        check_retention(writer, target, timedelta(hours=12))


def test_replace_rows_swaps_the_matching_rows_in_one_commit(writer, tmp_path):
    from datetime import UTC, datetime

    from deltalake import DeltaTable

    schema = pa.schema([pa.field("gate", pa.string()), pa.field("written_at", pa.timestamp("us", tz="UTC")),
                        pa.field("n", pa.int64())])  # fmt: skip
    day = lambda d: datetime(2026, 1, d, tzinfo=UTC)  # noqa: E731
    target = DeltaTarget(str(tmp_path / "m"))
    writer.ensure_table(target, schema)
    old = [("g", day(1), 1), ("g", day(2), 2), ("h", day(1), 5), ("g", day(9), 3)]
    data = pa.table({k: [r[i] for r in old] for i, k in enumerate(schema.names)}, schema=schema)
    writer.append(target, data, AppTransaction("g:q", 0))
    version = DeltaTable(target.uri).version()
    folded = pa.table({"gate": ["g"], "written_at": [day(2)], "n": [3]}, schema=schema)
    writer.replace_rows(target, folded, "gate = 'g' AND written_at < '2026-01-05T00:00:00.000000Z'")
    got = sorted((r["gate"], r["written_at"].day, r["n"]) for r in read_table(target.uri).to_pylist())
    assert got == [("g", 2, 3), ("g", 9, 3), ("h", 1, 5)]
    assert DeltaTable(target.uri).version() == version + 1
    assert writer.committed_version(target, "g:q") == 0
