"""Two gates in a chain (#13, the Delta source): the orders job's pass table is the Delta source of the silver job.

Run in the shared session (which has delta-spark): bronze with delta-rs, silver read by Spark's Delta source and
written by Spark's Delta writer (``writer: auto`` in a session with Delta). Every bronze pass row lands once in
silver's pass or quarantine table; a second run reads nothing new and writes nothing twice; bronze rows that
arrive later are picked up from where the silver checkpoint stopped.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from jobs_support import REPO, in_order, make_orders_job

from streaming_dq.config.loader import load_gate_config
from streaming_dq.runtime.job import GateJob
from streaming_dq.tables import read_table

pytestmark = pytest.mark.spark


def _silver_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "orders_silver"
    folder.mkdir()
    config = folder / "silver.yaml"
    shutil.copy(REPO / "jobs" / "orders_silver" / "silver.yaml", config)
    return config


def _run(config: Path, spark: object) -> int:
    totals = GateJob(load_gate_config(config), session=spark).run(timeout=600)  # type: ignore[arg-type]
    assert not totals.failed, totals.error
    return totals.rows_in


def test_the_silver_gate_accounts_for_every_bronze_pass_row_once(spark: object, tmp_path: Path) -> None:
    bronze_dir = tmp_path / "orders"
    bronze_dir.mkdir()
    bronze, summary = make_orders_job(bronze_dir, batches=2, rows=40)
    in_order(summary["files"])
    _run(bronze, spark)
    bronze_pass = bronze_dir / "data" / "tables" / "orders_pass"
    silver = _silver_copy(tmp_path)
    assert load_gate_config(silver).source.path == str(bronze_pass)  # the shipped relative path, as is

    first = _run(silver, spark)
    tables = tmp_path / "orders_silver" / "data" / "tables"
    passed = read_table(str(tables / "orders_silver"))
    quarantined = read_table(str(tables / "orders_silver_quarantine"))
    bronze_rows = read_table(str(bronze_pass)).num_rows
    assert first == bronze_rows == passed.num_rows + quarantined.num_rows
    assert quarantined.num_rows > 0  # the generator's cancelled orders and big amounts
    ids = passed.column("order_id").to_pylist() + quarantined.column("order_id").to_pylist()
    assert sorted(ids) == sorted(read_table(str(bronze_pass)).column("order_id").to_pylist())

    assert _run(silver, spark) == 0  # nothing new: nothing read, nothing written twice
    assert read_table(str(tables / "orders_silver")).num_rows == passed.num_rows

    more = make_orders_job(bronze_dir, batches=1, rows=30, seed=8)[1]  # a later landing file
    in_order(more["files"])
    _run(bronze, spark)
    grown = read_table(str(bronze_pass)).num_rows
    assert _run(silver, spark) == grown - bronze_rows
    total = read_table(str(tables / "orders_silver")).num_rows
    total += read_table(str(tables / "orders_silver_quarantine")).num_rows
    assert total == grown
