"""The gate on a real Spark standalone cluster on 127.0.0.1 (master + worker from pyspark's spark-class).

The driver is a process of its own and the executors are JVMs of the worker: what the Spark router writes
never passes through the driver. The documented ``deploy/spark/submit.sh`` submits a job config onto the
cluster as a user would, with a first batch several times ``spark.driver.maxResultSize``: it passes there
(Spark's writer, the Spark router), while a batch over that limit fails through the driver router (that run
on local[2]: the limit is the driver's, whatever the master).
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streaming_dq.tables import read_table

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
JOB = Path(__file__).with_name("gate_crash_job.py")
ROWS = 200_000  # about 5 MB of Arrow rows: five times the driver's result limit below


def land_big_batch(landing: Path) -> int:
    """One Parquet file of ROWS rows (every 7th amount NULL): one micro-batch."""
    landing.mkdir(parents=True)
    ids = pa.array(range(ROWS), pa.int64())
    amounts = pa.array([None if i % 7 == 0 else float(i) for i in range(ROWS)], pa.float64())
    start = datetime(2025, 3, 1, tzinfo=UTC)
    stamps = pa.array([start + timedelta(seconds=i) for i in range(ROWS)], pa.timestamp("us", tz="UTC"))
    pq.write_table(pa.table({"id": ids, "amount": amounts, "ts": stamps}), landing / "part-0.parquet")
    return sum(1 for i in range(ROWS) if i % 7 == 0)


def run_job(cluster: str, landing: Path, out: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable}
    return subprocess.run(
        [sys.executable, str(JOB), str(landing), str(out), "--trigger", "available-now", "--master", cluster,
         "--format", "parquet", "--conf", "spark.driver.maxResultSize=1m", *options],
        capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip


def test_a_batch_five_times_the_drivers_result_limit_fails_through_the_driver_router(tmp_path):
    """The driver router collects the batch whatever the master (local[2] here: the limit is the driver's):
    a clear error, nothing half-written. The Spark router passes a batch over the same limit on the cluster in
    the next test."""
    land_big_batch(tmp_path / "landing")
    driver_router = run_job(
        "local[2]", tmp_path / "landing", tmp_path / "driver", "--writer", "delta-rs", "--routing", "driver"
    )
    assert driver_router.returncode != 0
    assert "bigger than spark.driver.maxResultSize" in driver_router.stdout + driver_router.stderr
    assert read_table(str(tmp_path / "driver" / "pass")).num_rows == 0  # nothing half-written


def test_the_documented_spark_submit_runs_a_job_config_on_the_cluster(cluster_url, tmp_path):
    from jobs_support import make_orders_job
    from servers import SPARK_HOME, free_port

    # 25,000 orders in one file: a batch several times the driver's result limit below, which the Spark router
    # keeps on the executors (one batch: each costs the cluster ~9 jobs and 4 idempotent Delta appends)
    config, summary = make_orders_job(tmp_path, batches=1, rows=25_000)
    assert os.path.getsize(summary["files"][0]) > 4 * 2**20
    text = config.read_text(encoding="utf-8").replace("writer: delta-rs", "writer: spark")
    text = text.replace("port: 0", 'port: "${STREAMING_DQ_METRICS_PORT:-9108}"')
    config.write_text(text, encoding="utf-8")
    env = {
        **os.environ,
        "SPARK_SUBMIT": str(SPARK_HOME / "bin" / "spark-submit"),
        "PYTHON": sys.executable,
        "PYSPARK_PYTHON": sys.executable,
        "COLUMNS": "200",
    }
    done = subprocess.run(
        ["bash", str(REPO / "deploy" / "spark" / "submit.sh"), "--master", cluster_url, "--fetched-jars",
         "--metrics-port", str(free_port()), "--available-now", "--fail-on", "never", str(config),
         "--", "--conf", "spark.cores.max=2", "--conf", "spark.executor.memory=1g",
         "--conf", "spark.driver.maxResultSize=1m",
         "--conf", "spark.sql.shuffle.partitions=2", "--conf", "spark.databricks.delta.snapshotPartitions=2"],
        capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert len([line for line in done.stdout.splitlines() if line.startswith("batch ")]) == 1, done.stdout
    tables = tmp_path / "data" / "tables"
    rows = (
        read_table(str(tables / "orders_pass")).num_rows
        + read_table(str(tables / "orders_quarantine")).num_rows
    )
    assert rows == summary["records"]
    # the 25,000 rows by the executors; the metrics table's few rows by delta-rs from the driver
    assert engines(tables / "orders_pass") == {"Apache-Spark"}
    assert engines(tables / "orders_metrics") == {"delta-rs"}


def engines(table: Path) -> set[str]:
    """Who wrote the table's appends (the Delta commit info's engine), e.g. ``{"Apache-Spark"}``; the creation
    (a write in mode ``Ignore``) is not an append."""
    from deltalake import DeltaTable

    return {
        c["engineInfo"].split("/")[0].split(":")[0]
        for c in DeltaTable(str(table)).history()
        if c["operation"] == "WRITE" and (c.get("operationParameters") or {}).get("mode") == "Append"
    }
