"""One commit sequencer (#43): ``commit_in_order`` runs a transaction's writes in the order it is given, skips a
table that already records the transaction when asked to, and names each write's Spark jobs; a batch, a
release chunk and a discard all commit through it, and the doctor checks the batch's order from the same
constant the committer runs.

Real delta-rs tables on local disk; the writes are the writer's own appends.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from streaming_dq.core.modes import BATCH_COMMIT_ORDER, RELEASE_COMMIT_ORDER, TableRole
from streaming_dq.exceptions import TargetWriteError
from streaming_dq.sink.commit import Write, commit_in_order
from streaming_dq.tables import AppTransaction, DeltaTarget
from streaming_dq.tables.deltars import DeltaRsWriter
from streaming_dq.tables.targets import writing

SCHEMA = pa.schema([pa.field("n", pa.int64())])
TXN = AppTransaction("orders:query-1", 4)


def tables(tmp_path: Path, roles: tuple[TableRole, ...]) -> dict[TableRole, DeltaTarget]:
    writer = DeltaRsWriter()
    made = {role: DeltaTarget(str(tmp_path / role)) for role in roles}
    for target in made.values():
        writer.ensure_table(target, SCHEMA)
    return made


def appending(writer: DeltaRsWriter, target: DeltaTarget, log: list[str], role: str) -> Write:
    def run() -> None:
        log.append(role)
        with writing(target, TXN.version):
            writer.append(target, pa.table({"n": [TXN.version]}, schema=SCHEMA), TXN)

    return Write(target, run)


def test_the_writes_run_in_the_order_given_whatever_order_they_were_handed_in(tmp_path: Path) -> None:
    writer = DeltaRsWriter()
    targets = tables(tmp_path, BATCH_COMMIT_ORDER)
    log: list[str] = []
    handed: dict[TableRole, Write] = {
        role: appending(writer, targets[role], log, role) for role in reversed(BATCH_COMMIT_ORDER)
    }

    done = commit_in_order(BATCH_COMMIT_ORDER, handed, TXN)

    assert log == list(BATCH_COMMIT_ORDER) == done
    assert all(writer.is_committed(t, TXN) for t in targets.values())
    assert list(BATCH_COMMIT_ORDER) == ["pass", "quarantine", "keys", "results", "metrics"]
    assert list(RELEASE_COMMIT_ORDER) == ["quarantine", "pass", "results"]


def test_with_a_writer_a_table_that_has_the_transaction_is_not_written_again(tmp_path: Path) -> None:
    """A rerun after a crash between two commits writes only what is missing."""
    writer = DeltaRsWriter()
    targets = tables(tmp_path, RELEASE_COMMIT_ORDER)
    first: list[str] = []
    crash = appending(writer, targets["pass"], first, "pass")

    def crashing() -> None:
        crash.run()
        raise KeyboardInterrupt  # the process dies after the pass commit, before the results one

    writes: dict[TableRole, Write] = {
        "quarantine": appending(writer, targets["quarantine"], first, "quarantine"),
        "pass": Write(targets["pass"], crashing),
        "results": appending(writer, targets["results"], first, "results"),
    }
    with pytest.raises(KeyboardInterrupt):
        commit_in_order(RELEASE_COMMIT_ORDER, writes, TXN, writer=writer)
    assert first == ["quarantine", "pass"]

    again: list[str] = []
    writes = {role: appending(writer, targets[role], again, role) for role in RELEASE_COMMIT_ORDER}
    assert commit_in_order(RELEASE_COMMIT_ORDER, writes, TXN, writer=writer) == ["results"]
    assert again == ["results"]
    for target in targets.values():  # each table holds the transaction's rows once
        assert writer.read(target).num_rows == 1


def test_without_a_writer_every_write_handed_in_runs_and_a_failed_one_stops_the_rest(tmp_path: Path) -> None:
    """The batch's committer asks the tables itself (its replay check) and hands in only what is pending; a
    write that fails stops the transaction there, so a later table never holds what an earlier one lacks."""
    writer = DeltaRsWriter()
    targets = tables(tmp_path, ("pass", "results"))
    log: list[str] = []
    missing = DeltaTarget(str(tmp_path / "gone" / "quarantine"))

    def fails() -> None:
        log.append("quarantine")
        with writing(missing, TXN.version):
            raise OSError("the disk went away")

    writes: dict[TableRole, Write] = {
        "pass": appending(writer, targets["pass"], log, "pass"),
        "quarantine": Write(missing, fails),
        "results": appending(writer, targets["results"], log, "results"),
    }
    with pytest.raises(TargetWriteError, match="the disk went away"):
        commit_in_order(BATCH_COMMIT_ORDER, writes, TXN)
    assert log == ["pass", "quarantine"]
    assert not writer.is_committed(targets["results"], TXN)


def test_the_doctor_checks_the_order_the_committer_runs() -> None:
    from streaming_dq.maintenance import doctor
    from streaming_dq.sink import commit

    assert doctor.BATCH_COMMIT_ORDER is commit.BATCH_COMMIT_ORDER
