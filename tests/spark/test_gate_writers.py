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

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("ts", pa.timestamp("us", tz="UTC"))])


@pytest.fixture(params=["delta-rs", "spark"])
def writer(request: Any, spark: Any) -> TableWriter:
    if request.param == "spark":
        assert has_delta_extension(spark), "the test session loads delta-spark (tests/conftest.py)"
        return SparkDeltaWriter(spark)
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
