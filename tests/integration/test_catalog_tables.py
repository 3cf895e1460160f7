"""Catalog table names: a gate job whose source, reference dataset and five tables are named in Spark's
session catalog (Spark's embedded metastore, Derby, under a temporary warehouse; Delta's catalog on top).

Spark's writer creates the missing tables by name and appends through the catalog; the tables are read back
by name by another Spark process and by location by delta-rs. A second gate on the same catalog with delta-rs
finds the tables by name and writes them by location. Names the catalog lacks end the job before its first
batch, exit 2, one line per field. Each Spark process is a process of its own: Derby admits one at a time.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jobs_support import CLI

from streaming_dq.tables.reading import read_table

pytestmark = pytest.mark.integration

HELPER = Path(__file__).with_name("catalog_job.py")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HELPER.parent))
from catalog_job import ROWS  # noqa: E402

CONFIG = """\
gate: {{name: {gate}, event-time: ts}}
source: {{format: delta, table: {source}, trigger: available-now}}
checkpoint: {checkpoint}
targets:
  writer: {writer}
  driver-commit-rows: 0        # every write of Spark's writer through Spark: by name
  pass: {{table: {schema}.orders_pass}}
  quarantine: {{table: {schema}.orders_quarantine}}
  results: {{table: {schema}.orders_results}}
  metrics: {{table: {schema}.orders_metrics}}
  keys: {{table: {schema}.orders_keys}}
reference-datasets:
  customers: {{format: delta, table: {customers}}}
checks:
  - {{check: null-check, check-id: amount-present, columns: [amount]}}
  - check: foreign-key-row-check
    check-id: customer-known
    column: customer_id
    reference-dataset: customers
    reference-column: customer_id
  - {{check: row-count-min-check, check-id: some-rows, min-count: 1}}
  - {{check: unique-key-check, check-id: id-once, columns: [id], horizon: 1 day}}
spark:
  master: "local[2]"
  conf:
    spark.sql.catalogImplementation: hive
    spark.sql.warehouse.dir: {warehouse}
    spark.hadoop.javax.jdo.option.ConnectionURL: "jdbc:derby:;databaseName={metastore};create=true"
    spark.sql.shuffle.partitions: "2"
"""
FAILING = {i for i, customer, amount in ROWS if amount is None or customer == "c9"}


def write_config(tmp_path: Path, name: str, **fields: str) -> Path:
    values = {
        "gate": "orders",
        "source": "sales.orders_raw",
        "checkpoint": str(tmp_path / "state" / name),
        "writer": "spark",
        "schema": "sales",
        "customers": "sales.customers",
        "warehouse": str(tmp_path / "warehouse"),
        "metastore": str(tmp_path / "metastore_db"),
        **fields,
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(CONFIG.format(**values), encoding="utf-8")
    return path


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(HELPER.parent)])}
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def test_a_stream_into_catalog_named_tables_is_read_back_by_name_and_by_location(tmp_path):
    spark_config = write_config(tmp_path, "spark")
    setup = run(sys.executable, str(HELPER), "setup", str(spark_config), cwd=tmp_path)
    assert setup.returncode == 0, setup.stderr[-3000:]

    first = run(str(CLI), "run", str(spark_config), "--fail-on", "never", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "from sales.orders_raw (catalog)" in first.stdout, first.stdout
    assert "Failed to get database" not in first.stderr, first.stderr[-3000:]  # the metastore's notices (#42)
    assert "pass table: sales.orders_pass (catalog)" in first.stdout, first.stdout
    # a second gate on the same catalog, with delta-rs: the tables exist, it finds them by name
    rs_config = write_config(tmp_path, "delta-rs", gate="orders_rs", writer="delta-rs")
    second = run(str(CLI), "run", str(rs_config), "--fail-on", "never", cwd=tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]

    # #42: `metrics` said "the metrics table table:sales.orders_metrics does not exist yet" after this run
    shown_metrics = run(str(CLI), "metrics", str(spark_config), "--json", cwd=tmp_path)
    assert shown_metrics.returncode == 0, shown_metrics.stderr[-3000:]
    lines = json.loads(shown_metrics.stdout)["metrics"]
    assert {line["check"] for line in lines} >= {"some-rows"}, lines
    assert "starting Spark (local[2]) for metrics" in shown_metrics.stderr  # a long step says so
    read = run(sys.executable, str(HELPER), "read", str(spark_config), cwd=tmp_path)
    assert read.returncode == 0, read.stderr[-3000:]
    tables = json.loads(read.stdout)
    wanted = {
        "orders_raw",
        "customers",
        "orders_pass",
        "orders_quarantine",
        "orders_results",
        "orders_metrics",
        "orders_keys",
    }
    assert set(tables) == wanted, tables.keys()  # every table the gate wrote is in the catalog
    ids = {i for i, _, _ in ROWS}
    passed, quarantined = tables["orders_pass"]["ids"], tables["orders_quarantine"]["ids"]
    assert passed == sorted(2 * sorted(ids - FAILING)), passed  # each gate wrote each passing row once
    assert quarantined == sorted(2 * sorted(FAILING)), quarantined
    # each gate remembers each id once, in the one keys table (#44): the second gate's ids are not duplicates
    # of the first's, a gate judges its own keys
    assert tables["orders_keys"]["rows"] == 2 * len(ids), tables["orders_keys"]
    for name in ("orders_pass", "orders_quarantine", "orders_results", "orders_metrics", "orders_keys"):
        location = tables[name]["location"]
        assert location.startswith(f"file:{tmp_path}/warehouse/sales.db/"), location  # managed tables
        by_location = read_table(location.removeprefix("file:"))
        assert by_location.num_rows == tables[name]["rows"], name  # delta-rs reads what Spark reads by name

    # who committed what: Spark's writer through the catalog, with the gate's app transaction (exactly once),
    # and delta-rs by location
    log = Path(tables["orders_pass"]["location"].removeprefix("file:")) / "_delta_log"
    commits = [[json.loads(line) for line in f.read_text().splitlines()] for f in sorted(log.glob("*.json"))]
    engines = {}
    for actions in commits:
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        txns = [a["txn"]["appId"] for a in actions if "txn" in a]
        if any(a.get("add", {}).get("dataChange") for a in actions):
            engines[info.get("engineInfo", "").split("/")[0].split(":")[0]] = txns
    assert set(engines) == {"Apache-Spark", "delta-rs"}, engines
    assert engines["Apache-Spark"] and engines["Apache-Spark"][0].startswith("orders:"), engines
    assert engines["delta-rs"] and engines["delta-rs"][0].startswith("orders_rs:"), engines


def test_names_the_catalog_lacks_end_the_job_before_its_first_batch_with_one_line_each(tmp_path):
    # an empty metastore: no source, no reference, no target tables, and no schema sales
    rs_config = write_config(tmp_path, "missing", writer="delta-rs")
    result = run(str(CLI), "run", str(rs_config), cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if str(rs_config) in line]
    by_field = {field: [line for line in lines if f": {field}: " in line] for field in (
        "source.table", "reference-datasets.customers.table", "targets.pass", "targets.quarantine",
        "targets.results", "targets.metrics", "targets.keys")}  # fmt: skip
    assert all(len(found) == 1 for found in by_field.values()), (by_field, result.stderr[-3000:])
    assert "table sales.orders_raw is not in the catalog" in by_field["source.table"][0]
    assert "delta-rs writes by location" in by_field["targets.pass"][0]
    assert not re.search(r"^batch +\d", result.stdout, re.M), result.stdout  # nothing ran

    # Spark's writer creates missing tables, not missing schemas (an administrator's decision in a catalog)
    spark_config = write_config(tmp_path, "no-schema", schema="nowhere")
    result = run(str(CLI), "run", str(spark_config), cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if str(spark_config) in line]
    assert any(
        "targets.pass: schema nowhere of table nowhere.orders_pass is not in the catalog" in line
        for line in lines
    ), result.stderr[-3000:]
    assert not re.search(r"^batch +\d", result.stdout, re.M), result.stdout


def test_the_sql_command_creates_a_schema_in_the_metastore_beside_the_config_from_any_folder(tmp_path):
    """#42: no documented way to run CREATE SCHEMA against the gate's own metastore, and the embedded
    metastore followed the current folder. `streaming-dq sql` runs a statement in the gate's session."""
    job, first_cwd, second_cwd = tmp_path / "job", tmp_path / "a", tmp_path / "b"
    for folder in (job, first_cwd, second_cwd):
        folder.mkdir()
    config = job / "gate.yaml"
    config.write_text(
        "gate: {name: orders}\n"
        "source: {format: json, path: landing, schema: 'order_id STRING'}\n"
        "checkpoint: state\n"
        "targets: {writer: spark, pass: {table: sales.orders_pass}, quarantine: {table: sales.orders_q}}\n"
        "checks: [{check: null-check, check-id: id-present, columns: [order_id]}]\n"
        "spark: {conf: {spark.sql.catalogImplementation: hive, spark.sql.shuffle.partitions: '2'}}\n",
        encoding="utf-8",
    )
    created = run(str(CLI), "sql", str(config), "CREATE SCHEMA sales", cwd=first_cwd)
    assert created.returncode == 0, created.stderr[-3000:]
    listed = run(str(CLI), "sql", str(config), "SHOW SCHEMAS", "--json", "--quiet", cwd=second_cwd)
    assert listed.returncode == 0, listed.stderr[-3000:]
    schemas = {next(iter(row.values())) for row in json.loads(listed.stdout)["rows"]}
    assert schemas == {"default", "sales"}, listed.stdout
    assert "starting Spark" not in listed.stderr  # --quiet
    assert (job / "metastore_db").is_dir() and (job / "spark-warehouse" / "sales.db").is_dir()
    assert not (first_cwd / "metastore_db").exists() and not (second_cwd / "metastore_db").exists()
    refused = run(str(CLI), "sql", str(config), "SELECT * FROM {results}", cwd=second_cwd)
    assert refused.returncode == 2 and "the gate has no results table" in refused.stderr, refused.stderr
