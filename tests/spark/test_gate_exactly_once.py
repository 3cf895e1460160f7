"""Exactly once: replays write nothing new, a crash between two commits heals on replay, failures never count."""

from __future__ import annotations

import shutil
from collections import Counter

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from pyspark.errors import StreamingQueryException
from test_gate_support import SCHEMA, Recorder, ids, land, make_gate, row, run, stream, table

from streaming_dq.exceptions import GateFailedError, TargetWriteError
from streaming_dq.sink import AppTransaction, DeltaRsWriter, DeltaTarget

pytestmark = pytest.mark.spark

ROWS = [row(1), row(2, amount=None), row(3, note=None), row(4)]


class CrashingWriter(DeltaRsWriter):
    """Dies once when it reaches the quarantine table: the pass table is committed, the rest is not."""

    def __init__(self, crash_on: str, batches: set[int]) -> None:
        super().__init__()
        self.crash_on = crash_on
        self.batches = set(batches)

    def append(
        self, target: DeltaTarget, data: pa.Table, txn: AppTransaction, *, merge_schema: bool = False
    ) -> None:
        if target.uri.endswith(self.crash_on) and txn.version in self.batches:
            self.batches.discard(txn.version)
            raise OSError("injected crash before the quarantine commit")
        super().append(target, data, txn, merge_schema=merge_schema)


def commits(path) -> int:
    return DeltaTable(str(path)).version()


def test_replaying_a_batch_writes_nothing_and_reports_skipped_replay(spark, tmp_path):
    seen = []
    gate = make_gate(tmp_path, on_batch=seen.append)
    df = spark.createDataFrame([(r["id"], r["amount"], None, r["note"]) for r in ROWS], SCHEMA)

    gate(df, 0)
    versions = {name: commits(tmp_path / name) for name in ("pass", "quarantine", "results")}
    gate(df, 0)

    assert [o.status for o in seen] == ["committed", "skipped_replay"]
    assert (seen[1].rows_in, seen[1].rows_passed) == (0, 0)
    assert {name: commits(tmp_path / name) for name in versions} == versions
    assert Counter(ids(tmp_path / "pass")) == Counter([1, 3, 4])
    recorder = gate.metrics
    assert isinstance(recorder, Recorder)
    assert recorder.total("rows_in") == 4  # the replay is not counted again
    assert gate.app_id(spark) == "orders"  # direct calls outside a stream: the gate name


def test_a_checkpoint_killed_while_planning_batch_0_starts_again(spark, tmp_path):
    """A kill during Spark's first offset write leaves only its temporary file; Spark alone refuses to start."""
    land(tmp_path / "landing", "a.json", ROWS)
    offsets = tmp_path / "chk" / "offsets"
    offsets.mkdir(parents=True)
    leftovers = [
        ".0.0b9a6c1e-4f7d-4a55-9d0e-3f1c2b7a8e90.tmp",
        "..0.0b9a6c1e-4f7d-4a55-9d0e-3f1c2b7a8e90.tmp.crc",
    ]
    for name in leftovers:
        (offsets / name).write_text("v1\n{")  # cut off mid-write

    run(make_gate(tmp_path), stream(spark, tmp_path / "landing"), tmp_path / "chk")

    assert Counter(ids(tmp_path / "pass")) + Counter(ids(tmp_path / "quarantine")) == Counter([1, 2, 3, 4])
    assert sorted(p.name for p in offsets.iterdir() if not p.name.startswith(".")) == ["0"]


def test_crash_between_pass_and_quarantine_commits_then_replay_gives_exact_counts(spark, tmp_path):
    landing = tmp_path / "landing"
    land(landing, "a", ROWS)
    land(landing, "b", [row(5), row(6, amount=None)])
    land(landing, "c", [row(7), row(8, amount=None)])
    crashing = make_gate(tmp_path, writer=CrashingWriter("quarantine", {1}))

    with pytest.raises(Exception, match="injected crash"):
        run(crashing, stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")
    first = crashing.metrics
    assert isinstance(first, Recorder)
    assert [o.batch_id for o in first.batches] == [0]  # batch 1 was never counted
    assert [b for b, _ in first.failures] == [1]
    assert isinstance(first.failures[0][1], TargetWriteError)
    assert Counter(ids(tmp_path / "pass")) == Counter([1, 3, 4, 5])  # batch 1's pass rows are committed
    assert Counter(ids(tmp_path / "quarantine")) == Counter([2])

    restarted = make_gate(tmp_path)
    run(restarted, stream(spark, landing, maxFilesPerTrigger="1"), tmp_path / "chk")

    assert Counter(ids(tmp_path / "pass")) == Counter([1, 3, 4, 5, 7])
    assert Counter(ids(tmp_path / "quarantine")) == Counter([2, 6, 8])
    second = restarted.metrics
    assert isinstance(second, Recorder)
    assert [(o.batch_id, o.status, o.rows_in) for o in second.batches] == [
        (1, "committed", 2),
        (2, "committed", 2),
    ]
    assert first.total("rows_in") + second.total("rows_in") == 8
    results = table(tmp_path / "results").to_pylist()
    assert Counter(r["batch_id"] for r in results if r["check_id"] == "id-present") == {0: 1, 1: 1, 2: 1}


def test_unwritable_table_fails_the_stream_and_counts_nothing(spark, tmp_path):
    landing = tmp_path / "landing"
    land(landing, "a", ROWS)
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the quarantine table's parent directory should be")
    gate = make_gate(tmp_path, quarantine_table=str(blocker / "quarantine"))
    sdf = stream(spark, landing)
    query = sdf.writeStream.foreachBatch(gate).option("checkpointLocation", str(tmp_path / "chk")).start()
    with pytest.raises(StreamingQueryException, match="TargetWriteError: writing batch 0 to"):
        query.awaitTermination(120)

    recorder = gate.metrics
    assert isinstance(recorder, Recorder)
    assert (recorder.batches, [b for b, _ in recorder.failures]) == ([], [0])
    assert str(blocker / "quarantine") in str(recorder.failures[0][1])

    blocker.unlink()  # the operator fixes the path; the restarted query replays batch 0
    fixed = make_gate(tmp_path, quarantine_table=str(blocker / "quarantine"))
    run(fixed, stream(spark, landing), tmp_path / "chk")
    assert Counter(ids(tmp_path / "pass")) == Counter([1, 3, 4])
    assert Counter(ids(blocker / "quarantine")) == Counter([2])


def test_aggregate_failure_stop_raises_before_writing(spark, tmp_path):
    checks = [
        {"check": "null-check", "check-id": "id-present", "columns": ["id"]},
        {"check": "row-count-min-check", "check-id": "volume", "min-count": 100},
    ]
    gate = make_gate(tmp_path, checks, on_aggregate_failure="stop")
    df = spark.createDataFrame([(1, 1.0, None, "x")], SCHEMA)

    with pytest.raises(GateFailedError, match=r"volume") as info:
        gate(df, 0)

    failed = [c for c in info.value.result if c.status == "failed"]
    assert [(c.check_id, c.kind, c.raw_value) for c in failed] == [("volume", "aggregate", 1.0)]
    for name in ("pass", "quarantine", "results"):
        assert DeltaTable(str(tmp_path / name)).transaction_version("orders") is None
    recorder = gate.metrics
    assert isinstance(recorder, Recorder)
    assert (recorder.batches, len(recorder.failures)) == ([], 1)


def test_aggregate_failure_quarantines_the_batch_by_default(spark, tmp_path):
    checks = [{"check": "row-count-min-check", "check-id": "volume", "min-count": 100}]
    gate = make_gate(tmp_path, checks)
    gate(spark.createDataFrame([(1, 1.0, None, "x"), (2, 2.0, None, "y")], SCHEMA), 0)

    q = table(tmp_path / "quarantine").to_pylist()
    assert sorted(r["id"] for r in q) == [1, 2]
    assert {tuple(e["check-id"] for e in r["_dq_errors"]) for r in q} == {("volume",)}
    assert table(tmp_path / "pass").num_rows == 0


def test_every_listener_of_the_gate_hears_its_batches_and_failures_in_order(spark, tmp_path):
    from streaming_dq.core.listeners import OutcomeListener

    heard: list[tuple[str, str, int]] = []

    class Listener(OutcomeListener):
        def __init__(self, name: str) -> None:
            self.name = name

        def record_batch(self, outcome):
            heard.append((self.name, outcome.status, outcome.batch_id))

        def record_failure(self, batch_id, error):
            heard.append((self.name, "failed", batch_id))

    gate = make_gate(
        tmp_path,
        metrics=Listener("metrics"),
        listeners=[Listener("a"), Listener("b")],
        on_batch=lambda o: heard.append(("on_batch", o.status, o.batch_id)),
    )
    batch = spark.createDataFrame([(1, 1.0, None, "x")], SCHEMA)
    gate(batch, 0)
    gate(batch, 0)  # a replay
    shutil.rmtree(tmp_path / "pass")  # deleted under the running stream: the next batch fails before writing
    with pytest.raises(TargetWriteError, match="writing batch 1"):
        gate(batch, 1)
    order = ["metrics", "a", "b"]
    assert heard[:8] == [
        *[(n, "committed", 0) for n in order], ("on_batch", "committed", 0),
        *[(n, "skipped_replay", 0) for n in order], ("on_batch", "skipped_replay", 0),
    ]  # fmt: skip
    assert heard[8:] == [(n, "failed", 1) for n in order]  # on_batch hears batches only


def test_a_failing_callback_never_fails_a_committed_batch(spark, tmp_path, caplog):
    def broken(outcome):
        raise RuntimeError("console is gone")

    gate = make_gate(tmp_path, on_batch=broken)
    gate(spark.createDataFrame([(1, 1.0, None, "x")], SCHEMA), 0)

    recorder = gate.metrics
    assert isinstance(recorder, Recorder)
    assert [o.status for o in recorder.batches] == ["committed"]
    assert "outcome callback failed for batch 0" in caplog.text
    assert ids(tmp_path / "pass") == [1]
