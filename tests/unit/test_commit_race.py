"""Two writers of one ``(app id, version)`` on one table (#41): exactly one commit lands, the other finds out.

Each writer is its own ``DeltaRsWriter`` (its own kept table views, as in two processes), on a real delta-rs
table on local disk and on an S3 server process. Every path that commits with an app transaction is raced:
appends (the routers' pass and quarantine rows, the results, Spark's writer's small writes), ``write_once``
(the metrics table, the release ledger and discards) and ``replace_rows`` (a release's marks, a discard).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from streaming_dq.exceptions import TransactionTakenError
from streaming_dq.tables import AppTransaction, DeltaTarget, deltars
from streaming_dq.tables.deltars import DeltaRsWriter

APP = "orders:query-1"
SCHEMA = pa.schema([pa.field("order_id", pa.int64()), pa.field("who", pa.string())])


def rows(who: str, version: int, n: int = 3) -> pa.Table:
    return pa.table({"order_id": [version * 10 + i for i in range(n)], "who": [who] * n}, schema=SCHEMA)


def txn_counts(target: DeltaTarget) -> Counter[tuple[str, int]]:
    """How often each ``(app id, version)`` appears in the table's log (every commit file read)."""
    table = DeltaTable(target.uri, storage_options=deltars.delta_rs_options(target.storage_options))
    found: Counter[tuple[str, int]] = Counter()
    for version in range(table.version() + 1):
        for line in LOG_READERS[target.uri](f"_delta_log/{version:020d}.json").splitlines():
            action = json.loads(line) if line.strip() else {}
            if "txn" in action:
                found[(action["txn"]["appId"], int(action["txn"]["version"]))] += 1
    return found


#: How to read a file of each test's table: from the disk, or from the S3 server.
LOG_READERS: dict[str, Callable[[str], str]] = {}


@pytest.fixture(params=["local", "s3"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DeltaTarget]:
    if request.param == "local":
        found = DeltaTarget(str(tmp_path / "pass"))
        LOG_READERS[found.uri] = lambda name: (tmp_path / "pass" / name).read_text()
    else:
        s3 = request.getfixturevalue("s3")
        key = f"race-{tmp_path.name}/pass"
        found = DeltaTarget(f"s3://lake/{key}", storage_options=s3.storage_options())
        client = s3.client()
        LOG_READERS[found.uri] = lambda name: (
            client.get_object(Bucket="lake", Key=f"{key}/{name}")["Body"].read().decode()
        )
    yield found
    LOG_READERS.pop(found.uri, None)


def test_a_check_read_before_the_winner_commits_does_not_land_beside_it(
    target: DeltaTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The found defect, step by step: B looks (not committed), A commits the batch, B appends. Before #41 B's
    append brought its view up to date and landed beside A's (the batch twice); now B finds out."""
    monkeypatch.setattr(deltars, "FRESH_SECONDS", 0.0)  # B's view is read anew before its commit
    a, b = DeltaRsWriter(), DeltaRsWriter()
    a.create_table(target, SCHEMA)
    txn = AppTransaction(APP, 3)
    assert not b.is_committed(target, txn)
    assert a.write_once(target, rows("a", 3), txn)
    with pytest.raises(TransactionTakenError, match=r"another writer committed version 3") as caught:
        b.append(target, rows("b", 3), txn)
    assert (caught.value.app_id, caught.value.version, caught.value.committed) == (APP, 3, 3)
    assert txn_counts(target) == Counter({(APP, 3): 1})
    table = DeltaTable(target.uri, storage_options=deltars.delta_rs_options(target.storage_options))
    assert table.to_pyarrow_table().column("who").to_pylist() == ["a"] * 3


def test_a_stale_view_commits_after_reading_the_table_again(target: DeltaTarget, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """B's kept view is older than the table (A committed other batches meanwhile): B's own batch still lands,
    once, on the version after A's (a lost attempt is made anew, not rebased)."""
    a, b = DeltaRsWriter(), DeltaRsWriter()
    a.create_table(target, SCHEMA)
    assert not b.is_committed(target, AppTransaction(APP, 0))  # B keeps a view at version 0
    assert a.write_once(target, rows("a", 0), AppTransaction("other-app", 0))
    assert b.write_once(target, rows("b", 1), AppTransaction(APP, 1))
    assert txn_counts(target) == Counter({("other-app", 0): 1, (APP, 1): 1})


def _race(
    target: DeltaTarget, versions: int, commit: Callable[[DeltaRsWriter, str, AppTransaction], bool]
) -> list[tuple[int, str]]:
    """Two writers commit every version at once (a barrier per version); the outcome of each."""
    writers = {"a": DeltaRsWriter(), "b": DeltaRsWriter()}
    writers["a"].create_table(target, SCHEMA)
    outcomes: list[tuple[int, str]] = []
    lock = threading.Lock()
    for version in range(versions):
        barrier = threading.Barrier(2)
        txn = AppTransaction(APP, version)

        def one(who: str, txn: AppTransaction = txn, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                result = "committed" if commit(writers[who], who, txn) else "skipped"
            except TransactionTakenError:
                result = "taken"
            with lock:
                outcomes.append((txn.version, result))

        threads = [threading.Thread(target=one, args=(who,)) for who in writers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return outcomes


def _assert_each_version_once(target: DeltaTarget, outcomes: list[tuple[int, str]], versions: int) -> None:
    by_version: dict[int, list[str]] = {}
    for version, result in outcomes:
        by_version.setdefault(version, []).append(result)
    for version in range(versions):
        assert sorted(by_version[version])[0] == "committed", by_version[version]
        assert by_version[version].count("committed") == 1, (version, by_version[version])
    assert txn_counts(target) == Counter({(APP, v): 1 for v in range(versions)})


@pytest.mark.parametrize("path", ["append", "write_once"])
def test_two_writers_racing_on_every_version_commit_each_once(
    target: DeltaTarget, path: str, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    versions = 12 if target.storage_options else 25

    def commit(writer: DeltaRsWriter, who: str, txn: AppTransaction) -> bool:
        data = rows(who, txn.version)
        if path == "append":
            writer.append(target, data, txn)
            return True
        return writer.write_once(target, data, txn)

    outcomes = _race(target, versions, commit)
    _assert_each_version_once(target, outcomes, versions)
    table = DeltaTable(target.uri, storage_options=deltars.delta_rs_options(target.storage_options))
    assert table.to_pyarrow_table().num_rows == versions * 3  # every batch's rows once, from one writer


def test_two_writers_racing_on_replace_rows_commit_each_once(target: DeltaTarget, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A release's marks and a discard: a rewrite of some rows recording the chunk's version."""
    versions = 8 if target.storage_options else 15
    seed = DeltaRsWriter()
    seed.create_table(target, SCHEMA)
    seed.append(
        target, pa.concat_tables([rows("seed", v) for v in range(versions)]), AppTransaction("gate", 0)
    )

    def commit(writer: DeltaRsWriter, who: str, txn: AppTransaction) -> bool:
        low, high = txn.version * 10, txn.version * 10 + 9
        writer.replace_rows(target, rows(who, txn.version), f"order_id >= {low} AND order_id <= {high}", txn)
        return True

    outcomes = _race(target, versions, commit)  # the table exists: its create is a no-op
    counts = txn_counts(target)
    del counts[("gate", 0)]
    assert counts == Counter({(APP, v): 1 for v in range(versions)})
    assert sorted(r for _, r in outcomes) == ["committed"] * versions + ["taken"] * versions
    data = DeltaTable(target.uri, storage_options=deltars.delta_rs_options(target.storage_options))
    table = data.to_pyarrow_table()
    assert table.num_rows == versions * 3
    assert "seed" not in table.column("who").to_pylist()
