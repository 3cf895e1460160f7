"""``streaming-dq doctor`` (#41): finds a batch committed twice (the effect of the old delta-rs rebase, built
here by committing one ``(app id, version)`` twice), repairs exactly the duplicate commit's rows, writes
nothing on ``--dry-run``, and finds nothing on healthy tables. Real delta-rs tables on local disk and on the
S3 server; no Spark.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
from typer.testing import CliRunner

from streaming_dq.cli.main import app
from streaming_dq.maintenance import doctor
from streaming_dq.tables import DeltaTarget
from streaming_dq.tables.storage import delta_rs_options

REPO = Path(__file__).resolve().parents[2]
APP = "orders:3f1c-query"


def batch(version: int, n: int = 4) -> pa.Table:
    return pa.table(
        {"order_id": [f"o-{version}-{i}" for i in range(n)], "amount": [1.0 * i for i in range(n)]}
    )


def commit(target: DeltaTarget, version: int, app_id: str = APP, data: pa.Table | None = None) -> None:
    """One commit recording ``(app_id, version)``, as the gate makes it, with no check before (so a second
    call commits the batch again: what a second writer did before #41)."""
    write_deltalake(
        target.uri,
        batch(version) if data is None else data,
        mode="append",
        storage_options=delta_rs_options(target.storage_options),
        commit_properties=CommitProperties(app_transactions=[Transaction(app_id, version)]),
    )


def rows(target: DeltaTarget) -> list[str]:
    table = DeltaTable(target.uri, storage_options=delta_rs_options(target.storage_options))
    return sorted(table.to_pyarrow_table().column("order_id").to_pylist())


def version(target: DeltaTarget) -> int:
    return DeltaTable(target.uri, storage_options=delta_rs_options(target.storage_options)).version()


@pytest.fixture(params=["local", "s3"])
def tables(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, DeltaTarget]:
    if request.param == "local":
        return {
            role: DeltaTarget(str(tmp_path / role)) for role in ("pass", "quarantine", "results", "metrics")
        }
    s3 = request.getfixturevalue("s3")
    return {
        role: DeltaTarget(f"s3://lake/doctor-{tmp_path.name}/{role}", storage_options=s3.storage_options())
        for role in ("pass", "quarantine", "results", "metrics")
    }


def healthy(tables: dict[str, DeltaTarget], batches: int = 3) -> None:
    for v in range(batches):
        for target in tables.values():
            commit(target, v)


def test_healthy_tables_have_no_finding(tables: dict[str, DeltaTarget]) -> None:
    healthy(tables)
    assert doctor.examine(tables) == []


def test_a_batch_committed_twice_is_found_and_exactly_its_second_commit_removed(
    tables: dict[str, DeltaTarget],
) -> None:
    healthy(tables, batches=3)
    target = tables["pass"]
    once = rows(target)
    commit(target, 1)  # the second writer's copy of batch 1
    assert len(rows(target)) == len(once) + 4
    findings = doctor.examine(tables)
    assert [(f.kind, f.role, f.app_id, f.version, f.log_versions, f.repairable) for f in findings] == [
        ("duplicate-commit", "pass", APP, 1, (1, 3), True)
    ]
    assert (
        "committed 2 times (log versions 1, 3): --repair removes the 1 file(s) (4 rows)" in findings[0].line
    )

    before = version(target)
    dry = doctor.repair(tables, findings, dry_run=True)
    assert [f.repaired for f in dry] == [False]
    assert version(target) == before  # a dry run writes nothing

    done = doctor.repair(tables, findings, dry_run=False)
    assert [f.repaired for f in done] == [True]
    assert version(target) == before + 1  # one commit
    assert rows(target) == once  # exactly the duplicate's rows went
    assert (
        doctor.examine(tables) == []
    )  # the log still records it twice; the repair's commit says it was mended


def test_a_duplicate_rewritten_by_a_compaction_is_reported_not_repairable(tmp_path: Path) -> None:
    target = DeltaTarget(str(tmp_path / "pass"))
    commit(target, 0)
    commit(target, 0)
    DeltaTable(target.uri).optimize.compact()
    (found,) = doctor.examine({"pass": target})
    assert not found.repairable and "not repairable by file: a compaction rewrote its files" in found.line
    assert doctor.repair({"pass": target}, [found], dry_run=False) == [found]


def test_a_batch_missing_from_a_table_committed_before_another_is_found(tmp_path: Path) -> None:
    tables = {role: DeltaTarget(str(tmp_path / role)) for role in ("pass", "quarantine", "results")}
    healthy(tables, batches=2)
    commit(tables["results"], 2)  # the results table has batch 2; pass and quarantine do not
    found = doctor.examine(tables)
    assert sorted((f.kind, f.role, f.version) for f in found) == [
        ("commit-order", "pass", 2),
        ("commit-order", "quarantine", 2),
    ]
    assert "app 'orders:3f1c-query' has batches up to 1 while the results table" in found[0].line


def test_the_keys_table_sits_between_quarantine_and_results_in_the_commit_order(tmp_path: Path) -> None:
    tables = {role: DeltaTarget(str(tmp_path / role)) for role in ("pass", "quarantine", "keys", "results")}
    healthy(tables, batches=2)
    for role in ("pass", "quarantine", "results"):
        commit(tables[role], 2)  # the keys of batch 2 are missing while its results are committed
    found = doctor.examine(tables)
    assert [(f.kind, f.role, f.version) for f in found] == [("commit-order", "keys", 2)], found
    commit(tables["keys"], 2)
    assert doctor.examine(tables) == []


def test_the_doctor_command_finds_repairs_and_dry_runs(tmp_path: Path) -> None:
    job = tmp_path / "orders"
    shutil.copytree(REPO / "jobs" / "orders", job)
    config = job / "orders.yaml"
    config.write_text(config.read_text().replace("writer: auto ", "writer: delta-rs"))
    tables = {
        role: DeltaTarget(str(job / "data" / "tables" / f"orders_{role}"))
        for role in ("pass", "quarantine", "results", "metrics")
    }
    healthy(tables, batches=2)
    runner = CliRunner()
    clean = runner.invoke(app, ["doctor", str(config)])
    assert clean.exit_code == 0, clean.output
    assert "4 table(s) examined, nothing broken" in clean.output

    commit(tables["quarantine"], 0)
    before = version(tables["quarantine"])
    dry = runner.invoke(app, ["doctor", str(config), "--repair", "--dry-run"])
    assert dry.exit_code == 1, dry.output
    assert "would repair: quarantine table" in dry.output and "dry run: nothing written" in dry.output
    assert version(tables["quarantine"]) == before

    fixed = runner.invoke(app, ["doctor", str(config), "--repair", "--json"])
    assert fixed.exit_code == 0, fixed.output
    report = json.loads(fixed.output)
    assert [(f["table"], f["version"], f["repaired"]) for f in report["findings"]] == [
        ("quarantine", 0, True)
    ]
    assert len(rows(tables["quarantine"])) == 8
