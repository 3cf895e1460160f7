"""Maintenance on real Delta tables (delta-rs, read back from disk): compaction keeps the application
transactions a replay is skipped by, vacuum refuses an unsafe retention, the metrics roll-up changes nothing a
reader or a restart computes, and the policy's schedule and config."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from hypothesis import given, settings
from hypothesis import strategies as st

from streaming_dq.config.sections import MaintenanceSection
from streaming_dq.exceptions import ConfigError
from streaming_dq.maintenance import Maintainer, MaintenancePolicy, check_retention, maintain
from streaming_dq.metrics.accumulator import WindowAccumulator
from streaming_dq.metrics.rollup import ROLLUP_SCOPE, roll_up_records
from streaming_dq.metrics.store import MetricsStore, batch_records
from streaming_dq.states import CountState, MomentsState
from streaming_dq.tables import AppTransaction, DeltaRsWriter, DeltaTarget, read_table
from tests.unit.test_accumulator_store import T0, feed, orders

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("batch", pa.int64())])


def appended(
    path: Path, batches: int, *, app: str = "g:q1", configuration: dict | None = None
) -> DeltaTarget:
    writer, target = DeltaRsWriter(), DeltaTarget(str(path), configuration=configuration or {})
    writer.ensure_table(target, SCHEMA)
    for b in range(batches):
        rows = pa.table({"id": [b * 10 + i for i in range(10)], "batch": [b] * 10}, schema=SCHEMA)
        assert writer.write_once(target, rows, AppTransaction(app, b))
    return target


def test_compaction_bounds_the_files_and_keeps_the_transactions_a_replay_is_skipped_by(
    tmp_path: Path,
) -> None:
    writer, target = DeltaRsWriter(), appended(tmp_path / "pass", 40)
    assert writer.file_count(target) == 40
    report = maintain(writer, {"pass": target}, MaintenancePolicy())
    (table,) = report.tables
    assert (table.files_before, table.files_after, table.compacted, table.checkpointed) == (
        40,
        1,
        (40, 1),
        True,
    )
    assert table.error is None and "compacted 40 into 1" in table.line()
    dt = DeltaTable(target.uri)
    assert dt.history(1)[0]["operation"] == "OPTIMIZE"
    assert dt.transaction_version("g:q1") == 39
    # A replay of the last batch writes nothing; the next batch is written; nothing lost or doubled.
    again = pa.table({"id": [390], "batch": [39]}, schema=SCHEMA)
    assert not writer.write_once(target, again, AppTransaction("g:q1", 39))
    assert writer.write_once(target, again.set_column(1, "batch", pa.array([40])), AppTransaction("g:q1", 40))
    ids = sorted(read_table(target.uri).column("id").to_pylist())
    assert ids == sorted([*range(400), 390])
    assert (tmp_path / "pass" / "_delta_log" / "_last_checkpoint").exists()
    # Nothing to compact: no commit.
    version = DeltaTable(target.uri).version()
    maintain(writer, {"pass": target}, MaintenancePolicy(checkpoint=False))
    assert (
        DeltaTable(target.uri).version() == version + 1
    )  # the one compaction of the 2 files (1 old + 1 new)
    maintain(writer, {"pass": target}, MaintenancePolicy(checkpoint=False))
    assert DeltaTable(target.uri).version() == version + 1


def test_vacuum_refuses_a_retention_below_the_tables_safe_minimum(tmp_path: Path) -> None:
    writer, target = DeltaRsWriter(), appended(tmp_path / "pass", 3)
    assert writer.safe_retention(target) == timedelta(days=7)  # Delta's default
    with pytest.raises(ConfigError, match=r"1 day is shorter than 7 days.*pass") as info:
        maintain(writer, {"pass": target}, MaintenancePolicy(vacuum_retention=timedelta(days=1)))
    assert info.value.field_path == "maintenance.vacuum.retention"
    assert check_retention(writer, target, timedelta(days=7)) == timedelta(days=7)
    with pytest.raises(ConfigError, match="whole hours"):
        MaintenancePolicy(vacuum_retention=timedelta(minutes=90))


def test_vacuum_deletes_only_what_the_table_allows_and_a_dry_run_deletes_nothing(tmp_path: Path) -> None:
    # A table whose owner allows a zero retention: the compacted-away files may go at once.
    config = {"delta.deletedFileRetentionDuration": "interval 0 hours"}
    writer, target = DeltaRsWriter(), appended(tmp_path / "pass", 6, configuration=config)
    assert writer.safe_retention(target) == timedelta(0)
    parquet = lambda: sorted(p.name for p in (tmp_path / "pass").glob("*.parquet"))  # noqa: E731
    dry = MaintenancePolicy(vacuum_retention=timedelta(0), vacuum_dry_run=True)
    (table,) = maintain(writer, {"pass": target}, dry).tables
    assert (table.compacted, table.vacuumed, table.dry_run) == ((6, 1), 6, True)
    assert len(parquet()) == 7 and "would delete 6 files" in table.line()
    (table,) = maintain(writer, {"pass": target}, replace(dry, vacuum_dry_run=False)).tables
    assert table.vacuumed == 6 and len(parquet()) == 1
    assert read_table(target.uri).num_rows == 60
    assert not writer.write_once(
        target, pa.table({"id": [0], "batch": [0]}, schema=SCHEMA), AppTransaction("g:q1", 5)
    )


def test_a_log_retention_bounds_the_log_and_keeps_the_transactions_and_the_rows(tmp_path: Path) -> None:
    import time

    # The table's owner allows a 1-second horizon (delta.deletedFileRetentionDuration), so the log may
    # keep 1 second of commits that a checkpoint made unnecessary.
    config = {"delta.deletedFileRetentionDuration": "interval 1 seconds"}
    writer, target = DeltaRsWriter(), appended(tmp_path / "pass", 30, configuration=config)
    log = tmp_path / "pass" / "_delta_log"
    commits = lambda: sorted(p.name for p in log.glob("*.json"))  # noqa: E731
    assert len(commits()) == 31  # the create + 30 appends
    policy = MaintenancePolicy(log_retention=timedelta(seconds=1))
    (table,) = maintain(writer, {"pass": target}, policy).tables
    assert table.error is None and table.log_retention == timedelta(seconds=1)
    assert "log retention set to 1 second" in table.line()
    assert (
        DeltaTable(target.uri).metadata().configuration["delta.logRetentionDuration"] == "interval 1 seconds"
    )
    first_checkpoint = DeltaTable(target.uri).version()
    assert len(commits()) == 33  # + the property and the compaction: nothing is older than 1 second yet
    # A second run after the retention: the log before the newest checkpoint older than the retention
    # (the first run's) goes; the table still reads whole and its transactions, carried by the checkpoint,
    # still decide: a replay of batch 29 is skipped, batch 32 is written.
    time.sleep(1.5)
    for b in (30, 31):
        assert writer.write_once(
            target, pa.table({"id": [b * 10], "batch": [b]}, schema=SCHEMA), AppTransaction("g:q1", b)
        )
    (table,) = maintain(writer, {"pass": target}, policy).tables
    assert table.error is None and table.log_retention is None  # set once, left alone after
    assert [int(name.split(".")[0]) for name in commits()] == list(
        range(first_checkpoint, first_checkpoint + 4)
    )
    fresh = DeltaRsWriter()
    assert fresh.committed_version(target, "g:q1") == 31
    assert not fresh.write_once(
        target, pa.table({"id": [0], "batch": [29]}, schema=SCHEMA), AppTransaction("g:q1", 29)
    )
    assert fresh.write_once(
        target, pa.table({"id": [320], "batch": [32]}, schema=SCHEMA), AppTransaction("g:q1", 32)
    )
    assert sorted(read_table(target.uri).column("id").to_pylist()) == [*range(300), 300, 310, 320]


def test_a_log_retention_below_the_tables_file_retention_is_refused_before_anything_changes(
    tmp_path: Path,
) -> None:
    writer, target = DeltaRsWriter(), appended(tmp_path / "pass", 3)
    version = DeltaTable(target.uri).version()
    with pytest.raises(
        ConfigError, match=r"1 day is shorter than 7 days.*deletedFileRetentionDuration.*pass"
    ) as info:
        maintain(writer, {"pass": target}, MaintenancePolicy(log_retention=timedelta(days=1)))
    assert info.value.field_path == "maintenance.log-retention"
    assert DeltaTable(target.uri).version() == version
    with pytest.raises(ConfigError, match="positive number of seconds"):
        MaintenancePolicy(log_retention=timedelta(milliseconds=1500))
    assert MaintenanceSection(log_retention="7 days").policy().log_retention == timedelta(days=7)


def test_the_writer_keeps_its_tables_up_to_date_with_commits_made_by_others(tmp_path: Path) -> None:
    # The delta-rs writer keeps each table open between batches; what another writer (a maintain by hand, a
    # second gate process after a failover) committed meanwhile is what its next replay decision reads.
    gate, target = DeltaRsWriter(), appended(tmp_path / "pass", 3)
    assert gate.committed_version(target, "g:q1") == 2
    other = DeltaRsWriter()
    row = lambda b: pa.table({"id": [100 + b], "batch": [b]}, schema=SCHEMA)  # noqa: E731
    assert other.write_once(target, row(3), AppTransaction("g:q1", 3))
    maintain(other, {"pass": target}, MaintenancePolicy())
    assert gate.committed_version(target, "g:q1") == 3
    assert not gate.write_once(target, row(3), AppTransaction("g:q1", 3))
    assert gate.write_once(target, row(4), AppTransaction("g:q1", 4))
    assert read_table(target.uri).num_rows == 32 and other.committed_version(target, "g:q1") == 4


def test_a_writer_with_kept_tables_pickles_as_the_gate_does_under_spark_connect(tmp_path: Path) -> None:
    import pickle

    writer, target = DeltaRsWriter(), appended(tmp_path / "pass", 2)
    assert writer.committed_version(target, "g:q1") == 1  # a table kept open
    copy = pickle.loads(pickle.dumps(writer))
    assert copy.committed_version(target, "g:q1") == 1
    assert copy.write_once(
        target, pa.table({"id": [99], "batch": [2]}, schema=SCHEMA), AppTransaction("g:q1", 2)
    )
    assert writer.committed_version(target, "g:q1") == 2


def test_a_kept_table_is_loaded_anew_every_reload_every_commits(tmp_path: Path) -> None:
    from streaming_dq.tables.deltars import RELOAD_EVERY

    writer, target = DeltaRsWriter(), appended(tmp_path / "pass", 2)
    rows = lambda b: pa.table({"id": [b], "batch": [b]}, schema=SCHEMA)  # noqa: E731
    loads = []
    for b in range(2, RELOAD_EVERY + 12):
        assert writer.write_once(target, rows(b), AppTransaction("g:q1", b))
        loads.append(writer._tables[target.uri][1])  # the version the kept table was loaded at
    assert len(set(loads)) == 2 and max(loads) >= RELOAD_EVERY  # loaded once more, not per append
    assert writer.committed_version(target, "g:q1") == RELOAD_EVERY + 11
    assert read_table(target.uri).num_rows == 20 + RELOAD_EVERY + 10


def test_a_failing_table_is_reported_and_the_others_are_still_maintained(tmp_path: Path) -> None:
    writer, good = DeltaRsWriter(), appended(tmp_path / "pass", 5)
    report = maintain(
        writer, {"results": DeltaTarget(str(tmp_path / "gone")), "pass": good}, MaintenancePolicy()
    )
    failed, ok = report.tables
    assert failed.role == "results" and "no Delta table" in (failed.error or "") and "FAILED" in failed.line()
    assert ok.files_after == 1 and report.failed == (failed,)


def test_the_schedule_counts_committed_batches_and_time() -> None:
    now = [0.0]
    by_batches = Maintainer(MaintenancePolicy(every_batches=3), clock=lambda: now[0])
    assert [by_batches.committed() for _ in range(3)] == [False, False, True]
    by_time = Maintainer(MaintenancePolicy(every=timedelta(hours=1)), clock=lambda: now[0])
    assert not by_time.committed()
    now[0] = 3600.0
    assert by_time.committed()
    assert not MaintenancePolicy().scheduled


def test_the_config_section_names_the_field_of_a_bad_value() -> None:
    section = MaintenanceSection.model_validate(
        {"every": "500 batches", "target-file-size": "128 MiB", "vacuum": {"retention": "7 days"},
         "roll-up-after": "2 days", "z-order-by": ["event_ts"]}
    )  # fmt: skip
    policy = section.policy()
    assert (policy.every_batches, policy.every, policy.target_file_size) == (500, None, 128 * 1024**2)
    assert (policy.vacuum_retention, policy.roll_up_after, policy.z_order) == (
        timedelta(days=7), timedelta(days=2), ("event_ts",)
    )  # fmt: skip
    assert MaintenanceSection.model_validate({"every": "1 hour"}).policy().every == timedelta(hours=1)
    with pytest.raises(ValueError, match="'500 batches' or '1 hour'"):
        MaintenanceSection.model_validate({"every": "often"})
    with pytest.raises(ValueError, match="size such as"):
        MaintenanceSection.model_validate({"target-file-size": "big"})


# -- the metrics roll-up ------------------------------------------------------------------------------


def written(
    store: MetricsStore, acc: WindowAccumulator, batches: list[list[int | None]], start: int = 0
) -> None:
    for b, hours in enumerate(batches, start):
        update = feed(acc, b, hours)
        states = {
            ("rows", 0): {"rows": CountState(len(hours))},
            ("mean", 0): {"x": MomentsState(2, b + 0.5, 0.5)},
        }
        types = {"rows": "row-count-min-check", "mean": "mean-check"}
        at = T0 + timedelta(minutes=b)
        rows = batch_records(gate="g", app_id="g:q1", batch_id=b, states=states, check_types=types, update=update,
                             written_at=at)  # fmt: skip
        assert store.write(rows, "g:q1", b)


def restored(path: Path) -> WindowAccumulator:
    acc = WindowAccumulator("g", [orders()])
    acc.restore(MetricsStore(path).read("g"))
    return acc


def test_the_roll_up_keeps_every_lifetime_window_verdict_and_restart_equal(tmp_path: Path) -> None:
    # Three days of hourly-ish batches: day windows close, a late row, rows without event time.
    batches: list[list[int | None]] = [[h, h + 1] for h in range(0, 70, 3)]
    batches[10] += [None, 2]  # hour 2 arrives in batch 10: late under `count`
    store, unrolled = MetricsStore(tmp_path / "m"), MetricsStore(tmp_path / "ref")
    written(store, WindowAccumulator("g", [orders()]), batches)
    written(unrolled, WindowAccumulator("g", [orders()]), batches)

    cut = T0 + timedelta(minutes=15)  # batches 0-14 rolled up, 15-23 kept as they are
    before, after = store.roll_up("g", before=cut)
    assert before == read_table(str(tmp_path / "ref"), predicate="batch_id < 15").num_rows
    assert after < before / 4
    assert store.roll_up("g", before=cut) == (after, after)  # a second run folds nothing more

    life, ref = store.lifetime("g"), unrolled.lifetime("g")
    assert life["rows"] == ref["rows"] == {"rows": CountState(sum(len(b) for b in batches))}
    assert life["orders-per-day"] == ref["orders-per-day"]
    assert life["mean"]["x"].n == ref["mean"]["x"].n
    assert life["mean"]["x"].mean == pytest.approx(ref["mean"]["x"].mean, rel=1e-12)
    assert life["mean"]["x"].m2 == pytest.approx(ref["mean"]["x"].m2, rel=1e-12)

    def verdicts(s: MetricsStore) -> list[tuple]:
        return [
            (r["check_id"], r["window_start"], r["status"], r["raw_value"])
            for r in s.windows("g").to_pylist()
        ]

    assert verdicts(store) == verdicts(unrolled) and len(verdicts(store)) == 3
    assert [r["batch_id"] for r in store.batches("g", check="rows").to_pylist()] == list(range(15, 24))
    assert {r["scope"] for r in store.read("g")} >= {ROLLUP_SCOPE, "window", "window-result", "watermark"}

    a, b = restored(tmp_path / "m"), restored(tmp_path / "ref")
    assert (a.windows, a.next_start, a.max_event_time) == (b.windows, b.next_start, b.max_event_time)
    assert (
        (a.late_rows_total, a.null_event_time_rows_total)
        == (b.late_rows_total, b.null_event_time_rows_total)
        == (1, 1)
    )
    assert a.lifetime == b.lifetime
    # And the stream goes on from the rolled-up table exactly as from the full one.
    next_batch = [75, 80, 1]
    ua, ub = feed(a, 24, next_batch), feed(b, 24, next_batch)
    assert [(w.window_start, w.status, w.raw_value) for w in ua.outcomes] == [
        (w.window_start, w.status, w.raw_value) for w in ub.outcomes
    ]
    assert DeltaTable(str(tmp_path / "m")).transaction_version("g:q1") == 23


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 50)), min_size=1, max_size=30),
    cut=st.integers(0, 30),
)
def test_folding_any_prefix_of_the_batches_keeps_each_checks_total(
    counts: list[tuple[str, int]], cut: int
) -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [
        {"gate": "g", "app_id": "g:q", "batch_id": b, "seq": 0, "written_at": at + timedelta(seconds=b),
         "scope": "batch", "check_id": cid, "check_type": "row-count-min-check", "override_group": 0,
         "state_name": "rows", "kind": "count", "n": n}
        for b, (cid, n) in enumerate(counts)
    ]  # fmt: skip
    folded = roll_up_records(rows[:cut]) + rows[cut:]
    total = lambda rs, c: sum(r["n"] for r in rs if r["check_id"] == c)  # noqa: E731
    assert all(total(folded, c) == total(rows, c) for c in ("a", "b"))
    assert len([r for r in folded if r["scope"] == ROLLUP_SCOPE]) == len({c for c, _ in counts[:cut]})


def test_z_order_rewrites_the_table_by_the_columns_and_keeps_the_transactions(tmp_path: Path) -> None:
    from streaming_dq.maintenance import z_order_columns

    writer, target = DeltaRsWriter(), appended(tmp_path / "pass", 6)
    (table,) = maintain(writer, {"pass": target}, MaintenancePolicy(z_order=("batch", "id"))).tables
    assert table.compacted == (6, 1) and table.error is None
    assert DeltaTable(target.uri).history(1)[0]["operation"] == "OPTIMIZE"
    assert DeltaTable(target.uri).transaction_version("g:q1") == 5
    assert sorted(read_table(target.uri).column("id").to_pylist()) == list(range(60))
    (results,) = maintain(
        writer, {"results": appended(tmp_path / "r", 2)}, MaintenancePolicy(z_order=("x",))
    ).tables
    assert results.error is None  # Z-order applies to pass and quarantine only
    with pytest.raises(ConfigError, match=r"Z-order column\(s\) order_ts not in the pass table") as info:
        z_order_columns(["order_ts"], ["id", "batch"])
    assert info.value.field_path == "maintenance.z-order-by"


def test_a_table_of_one_file_is_not_compacted_at_all(tmp_path: Path) -> None:
    """#42 item 8: with Spark's writer every OPTIMIZE runs Spark jobs (the first ~9 s of Delta's log replay in a
    new JVM, then 1-3 s a table), even when there is nothing to bin-pack: a table of one file is left alone."""

    class Counting(DeltaRsWriter):
        compactions = 0

        def compact(self, target, **kw):  # type: ignore[no-untyped-def]
            Counting.compactions += 1
            return super().compact(target, **kw)

    writer, target = Counting(), DeltaTarget(str(tmp_path / "pass"))
    writer.write_once(target, pa.table({"id": [1], "batch": [0]}, schema=SCHEMA), AppTransaction("g:q", 0))
    (one,) = maintain(writer, {"pass": target}, MaintenancePolicy(checkpoint=False)).tables
    assert (one.files_before, one.compacted, Counting.compactions) == (1, None, 0)
    writer.write_once(target, pa.table({"id": [2], "batch": [1]}, schema=SCHEMA), AppTransaction("g:q", 1))
    (two,) = maintain(writer, {"pass": target}, MaintenancePolicy(checkpoint=False)).tables
    assert (two.files_before, two.compacted, Counting.compactions) == (2, (2, 1), 1)
