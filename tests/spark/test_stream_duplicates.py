"""Duplicates across micro-batches (#44): a key seen in an earlier batch is quarantined once, with a pointer to
its first occurrence, whatever the batches, replays and restarts; both routers write the same tables."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_gate_support import make_gate

from streaming_dq.exceptions import ConfigError, TargetWriteError
from streaming_dq.maintenance import doctor
from streaming_dq.maintenance.doctor import read_log
from streaming_dq.sink import AppTransaction, DeltaRsWriter, DeltaTarget
from streaming_dq.tables import read_table

pytestmark = pytest.mark.spark

SCHEMA = "order_id BIGINT, ts TIMESTAMP, offset BIGINT"
DAY0 = datetime(2026, 3, 1, tzinfo=UTC)
HORIZON_DAYS = 3


def once(horizon: str = f"{HORIZON_DAYS} days", **kw: Any) -> list[dict[str, Any]]:
    return [
        {
            "check": "unique-key-check",
            "check-id": "order-once",
            "columns": ["order_id"],
            "horizon": horizon,
            "order-by": ["offset"],
            **kw,
        }
    ]


def gate_at(tmp: Path, **kw: Any):  # type: ignore[no-untyped-def]
    kw.setdefault("keys_table", str(tmp / "keys"))
    kw.setdefault("event_time", "ts")
    kw.setdefault("routing", "driver")
    return make_gate(tmp, kw.pop("checks", once()), **kw)


def frame(spark: Any, rows: Sequence[tuple[int, datetime, int]]) -> Any:
    return spark.createDataFrame(list(rows), SCHEMA)


def offsets(path: Path) -> list[int]:
    return sorted(read_table(str(path)).column("offset").to_pylist())


def model(rows: Sequence[tuple[int, datetime, int]], horizon: timedelta) -> set[int]:
    """One pass over the sequence: a row is a duplicate when an earlier row of its key has an event time no
    more than ``horizon`` before its own."""
    seen: dict[int, list[datetime]] = {}
    dups = set()
    for key, ts, offset in rows:
        if any(e >= ts - horizon for e in seen.get(key, [])):
            dups.add(offset)
        seen.setdefault(key, []).append(ts)
    return dups


@st.composite
def keyed_sequences(draw: st.DrawFn) -> list[tuple[int, datetime, int]]:
    """New rows at a clock that only moves forward, and re-sent copies of rows still within the horizon (a
    producer's retries carry their original's event time), so no row is ever too late to judge."""
    rows: list[tuple[int, datetime, int]] = []
    now = DAY0
    for _ in range(draw(st.integers(1, 14))):
        recent = [r for r in rows if r[1] > now - timedelta(days=HORIZON_DAYS) + timedelta(hours=1)]
        if recent and draw(st.booleans()):
            key, ts, _ = draw(st.sampled_from(recent))
        else:
            now += timedelta(hours=draw(st.sampled_from([0, 7, 30, 80])))
            key, ts = draw(st.integers(0, 4)), now
        rows.append((key, ts, len(rows)))
    return rows


class CrashOnce(DeltaRsWriter):
    """Fails the results commit of one batch once: the rows and the keys are committed, the batch is not."""

    def __init__(self, batch: int) -> None:
        super().__init__()
        self.batch: int | None = batch

    def append(
        self, target: DeltaTarget, data: pa.Table, txn: AppTransaction, *, merge_schema: bool = False
    ) -> None:
        if target.uri.endswith("results") and txn.version == self.batch:
            self.batch = None
            raise OSError("injected crash after the keys commit")
        super().append(target, data, txn, merge_schema=merge_schema)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=keyed_sequences(), data=st.data())
def test_any_cut_replay_and_restart_quarantines_what_one_pass_would(spark, tmp_path, rows, data):
    tmp = tmp_path / uuid.uuid4().hex
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(len(rows) - 1, 1)), max_size=3))))
    batches = [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)], strict=True) if rows[a:b]]
    crash = data.draw(st.sampled_from([None, *range(len(batches))]))
    restart = data.draw(st.sampled_from([None, *range(len(batches))]))
    writer = CrashOnce(crash) if crash is not None else "delta-rs"
    gate = gate_at(tmp, writer=writer)
    for i, batch in enumerate(batches):
        if i == restart:  # a new process: every state read back from the tables
            gate = gate_at(tmp, writer=writer)
        df = frame(spark, batch)
        if i == crash:
            with pytest.raises(TargetWriteError):
                gate(df, i)
        gate(df, i)  # the replay after the crash (else once)
        gate(df, i)  # a replay of a committed batch: skipped
    expected = model(rows, timedelta(days=HORIZON_DAYS))
    assert offsets(tmp / "quarantine") == sorted(expected)
    assert offsets(tmp / "pass") == sorted({r[2] for r in rows} - expected)
    for r in read_table(str(tmp / "quarantine")).to_pylist():
        [pointer] = r["_dq_first_seen"]
        assert pointer["check_id"] == "order-once" and not pointer["late"]
        assert pointer["key"] == f'["{r["order_id"]}"]'
        assert pointer["batch_id"] <= r["_dq_batch_id"]
        assert (pointer["event_time"], pointer["origin"]) != (r["ts"], f"offset={r['offset']}")  # not itself


def test_a_duplicate_points_at_its_first_occurrence_and_a_late_row_is_quarantined(spark, tmp_path):
    outcomes: list[Any] = []
    gate = gate_at(tmp_path, on_batch=outcomes.append)
    day = lambda d: DAY0 + timedelta(days=d)  # noqa: E731
    gate(frame(spark, [(1, day(0), 10), (2, day(0), 11), (1, day(0), 12)]), 0)
    gate(frame(spark, [(2, day(0), 13), (3, day(9), 14)]), 1)
    gate(frame(spark, [(4, day(1), 15), (5, day(9), 16)]), 2)  # day 1 is more than 3 days behind day 9

    rows = {r["offset"]: r for r in read_table(str(tmp_path / "quarantine")).to_pylist()}
    assert sorted(rows) == [12, 13, 15]
    p12, p13, p15 = (rows[o]["_dq_first_seen"][0] for o in (12, 13, 15))
    assert (p12["batch_id"], p12["origin"], p12["event_time"]) == (0, "offset=10", day(0))
    assert (p13["batch_id"], p13["app_id"], p13["origin"]) == (0, "orders", "offset=11")
    assert p15["late"] and p15["batch_id"] is None
    assert [e["check-id"] for e in rows[13]["_dq_errors"]] == ["order-once"]
    keys = read_table(str(tmp_path / "keys"))
    assert sorted(zip(keys.column("key").to_pylist(), keys.column("batch_id").to_pylist(), strict=True)) == [
        ('["1"]', 0),
        ('["2"]', 0),
        ('["2"]', 1),
        ('["3"]', 1),
        ('["5"]', 2),
    ]
    assert set(keys.column("event_date").to_pylist()) == {day(0).date(), day(9).date()}
    state = outcomes[-1].keys  # what the exporter shows: streaming_dq_keys and the oldest day
    assert state.late == {"order-once": 1}
    assert (state.keys, state.oldest, state.horizon) == (5, day(0).date(), timedelta(days=HORIZON_DAYS))
    results = read_table(str(tmp_path / "results"), predicate="check_id = 'order-once'").to_pylist()
    assert sorted((r["batch_id"], r["violations"]) for r in results) == [(0, 1), (1, 1), (2, 1)]


def test_more_remembered_keys_than_the_driver_may_hold_end_the_batch_naming_the_field(spark, tmp_path):
    gate = gate_at(tmp_path, keys_in_memory=3)
    day = DAY0
    gate(frame(spark, [(k, day, k) for k in range(5)]), 0)  # the index is empty before it: judged, recorded
    with pytest.raises(ConfigError, match=r"targets\.keys-in-memory") as raised:
        gate(frame(spark, [(9, day, 9)]), 1)
    assert "5 records" in str(raised.value) and "routing: distributed" in str(raised.value)
    assert offsets(tmp_path / "pass") == [0, 1, 2, 3, 4]  # nothing of batch 1 was written
    assert read_table(str(tmp_path / "keys")).num_rows == 5


@pytest.mark.parametrize("routing", ["driver", "distributed"])
def test_late_rows_pass_unjudged_under_late_pass_and_are_counted(spark, tmp_path, routing, caplog):
    outcomes: list[Any] = []
    writer = "delta-rs" if routing == "driver" else "spark"
    gate = gate_at(
        tmp_path, checks=once(late="pass"), on_batch=outcomes.append, routing=routing, writer=writer
    )
    gate(frame(spark, [(1, DAY0 + timedelta(days=9), 0)]), 0)
    gate(frame(spark, [(1, DAY0, 1), (2, DAY0, 2), (3, DAY0 + timedelta(days=9), 3)]), 1)
    assert offsets(tmp_path / "pass") == [0, 1, 2, 3]
    assert read_table(str(tmp_path / "keys")).num_rows == 2  # late rows are not remembered
    assert outcomes[-1].keys.late == {"order-once": 2}
    assert "2 row(s) more than 3 days behind check 'order-once'" in caplog.text
    assert "passed unjudged (late: pass)" in caplog.text


def test_both_routers_write_the_same_tables(spark, tmp_path):
    day = lambda d: DAY0 + timedelta(days=d)  # noqa: E731
    batches = [
        [(1, day(0), 0), (1, day(0), 1), (2, day(1), 2), (3, day(1), 3)],
        [(2, day(1), 4), (4, day(2), 5), (4, day(2), 6), (1, day(5), 7)],
    ]
    seen = {}
    for routing in ("driver", "distributed"):
        tmp = tmp_path / routing
        writer = "delta-rs" if routing == "driver" else "spark"
        gate = gate_at(tmp, routing=routing, writer=writer, driver_commit_rows=0)
        for i, batch in enumerate(batches):
            gate(frame(spark, batch), i)
        # a batch whose columns drifted is quarantined whole, unjudged: it records no key, yet its empty keys
        # commit keeps the tables' commit order whole for the doctor
        drifted = spark.createDataFrame([(9, day(6), "x")], "order_id BIGINT, ts TIMESTAMP, offset STRING")
        gate(drifted, len(batches))
        tables = {role: DeltaTarget(str(tmp / role)) for role in ("pass", "quarantine", "keys", "results")}
        assert doctor.examine(tables) == []
        last = read_log(tables["keys"])[-1]  # type: ignore[index]
        assert last.txns == (("orders", len(batches)),) and last.added == ()
        quarantine = [r for r in read_table(str(tmp / "quarantine")).to_pylist() if r["_dq_raw"] is None]
        keys = read_table(str(tmp / "keys")).drop_columns([]).to_pylist()
        seen[routing] = (
            offsets(tmp / "pass"),
            sorted((r["offset"], str(r["_dq_first_seen"])) for r in quarantine),
            sorted(tuple(sorted(r.items())) for r in keys),
        )
    assert seen["driver"] == seen["distributed"]
    assert seen["driver"][0] == [0, 2, 3, 5, 7]  # 7: key 1's last sighting is 5 days back, beyond 3


def test_a_horizon_needs_a_keys_table_and_an_event_time(tmp_path):
    with pytest.raises(ConfigError) as no_keys:
        gate_at(tmp_path, keys_table=None)
    assert no_keys.value.field_path == "targets.keys"
    with pytest.raises(ConfigError) as no_time:
        gate_at(tmp_path, event_time=None)
    assert no_time.value.field_path == "gate.event-time"
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_release_frees_the_first_occurrence_and_keeps_its_duplicate(spark, tmp_path):
    """The key of a row quarantined for another reason counts as seen: its re-sent copy is a duplicate. A
    release judges the duplicate again from its pointer: it stays quarantined, while the original is cured."""
    from streaming_dq.release import Fix, ReleaseRequest, release

    checks = [
        *once(),
        {
            "check": "numeric-min-check",
            "check-id": "offset-ok",
            "columns": ["offset"],
            "min-value": 0,
            "inclusive": True,
        },
    ]
    gate = gate_at(tmp_path, checks=checks)
    gate(frame(spark, [(1, DAY0, -1), (2, DAY0, 1)]), 0)  # order 1 fails offset-ok
    gate(frame(spark, [(1, DAY0, 2)]), 1)  # order 1 re-sent: a duplicate of the quarantined row
    before = {r["offset"]: r for r in read_table(str(tmp_path / "quarantine")).to_pylist()}
    assert {o: [e["check-id"] for e in r["_dq_errors"]] for o, r in before.items()} == {
        -1: ["offset-ok"],
        2: ["order-once"],
    }
    report = release(gate, spark, ReleaseRequest(fixes=(Fix.parse("offset = 0"),)))
    assert (report.released, report.still_quarantined) == (1, 1)
    assert offsets(tmp_path / "pass") == [0, 1]
    after = {
        r["offset"]: r["_dq_release"]["state"] for r in read_table(str(tmp_path / "quarantine")).to_pylist()
    }
    assert after == {-1: "released", 2: "quarantined"}
    assert read_table(str(tmp_path / "keys")).num_rows == 3  # a release writes no keys: 1 and 2, then 1 again


@pytest.mark.parametrize("writer", ["delta-rs", "spark"])
def test_maintenance_forgets_the_keys_no_batch_can_need(spark, tmp_path, writer):
    from streaming_dq.maintenance import MaintenancePolicy

    day = lambda d: DAY0 + timedelta(days=d)  # noqa: E731
    routing = "driver" if writer == "delta-rs" else "distributed"
    gate = gate_at(tmp_path, writer=writer, routing=routing)
    gate(frame(spark, [(1, day(0), 0), (2, day(3), 1)]), 0)
    gate(frame(spark, [(3, day(10), 2)]), 1)  # the watermark is day 10: a horizon of 3 days needs day 4 on

    report = gate.maintain(spark, MaintenancePolicy(compact=False, checkpoint=False))
    [keys] = [t for t in report.tables if t.role == "keys"]
    assert keys.forgotten == 2 and "forgot 2 keys" in keys.line()
    assert read_table(str(tmp_path / "keys")).column("key").to_pylist() == ['["3"]']
    gate(frame(spark, [(3, day(9), 3), (1, day(9), 4)]), 2)  # 3 is still remembered; 1 was forgotten at day 0
    assert offsets(tmp_path / "quarantine") == [3]


def test_a_producer_that_re_sends_a_slice_gets_each_copy_quarantined_once_with_a_pointer(
    spark, kafka_bootstrap, tmp_path, monkeypatch
):
    """The payments job on a real broker with ``payment-once`` across batches: a producer re-sends 40 of its
    messages (same key, same value) after the job has drained the topic; each copy is quarantined once,
    pointing at the partition and offset of its original, and the originals stay in the pass table."""
    import sys

    from confluent_kafka import Consumer, Producer

    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.runtime.job import GateJob

    repo = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(repo / "jobs" / "payments_kafka"))
    from generate import produce  # type: ignore[import-not-found]

    topic = "payments-resent"
    first = produce(kafka_bootstrap, topic, 400, seed=11)
    folder = tmp_path / "payments"
    folder.mkdir()
    text = (repo / "jobs" / "payments_kafka" / "payments.yaml").read_text(encoding="utf-8")
    metrics = "  metrics: data/tables/payments_metrics\n"
    assert metrics in text and "checks:\n" in text
    text = text.replace(metrics, metrics + "  keys: data/tables/payments_keys\n")
    once = (
        "  - {check: unique-key-check, check-id: payment-once, columns: [payment_id], horizon: 7 days,\n"
        "     order-by: [kafka_partition, kafka_offset]}\n"
    )
    config = folder / "payments.yaml"
    config.write_text(text.replace("checks:\n", "checks:\n" + once, 1), encoding="utf-8")
    monkeypatch.setenv("KAFKA_BOOTSTRAP", kafka_bootstrap)
    monkeypatch.setenv("KAFKA_TOPIC", topic)

    def run() -> Any:
        totals = GateJob(load_gate_config(config), session=spark).run(timeout=600)
        assert not totals.failed, totals.error
        return totals

    assert run().rows_in == first.messages
    tables = folder / "data" / "tables"
    passed = read_table(str(tables / "payments_pass")).to_pylist()
    originals = {
        r["payment_id"]: (r["kafka_partition"], r["kafka_offset"])
        for r in passed
        if r["payment_id"] is not None
    }

    # read the first 40 messages that passed back from the broker, and send them again as they were
    consumer = Consumer(
        {"bootstrap.servers": kafka_bootstrap, "group.id": "resend", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    wanted = {coordinates for coordinates in list(originals.values())[:40]}
    resent: list[tuple[bytes | None, bytes | None]] = []
    deadline = datetime.now(UTC) + timedelta(seconds=60)
    while len(resent) < len(wanted) and datetime.now(UTC) < deadline:
        message = consumer.poll(1.0)
        if (
            message is not None
            and message.error() is None
            and (message.partition(), message.offset()) in wanted
        ):
            resent.append((message.key(), message.value()))
    consumer.close()
    assert len(resent) == 40
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for key, value in resent:
        producer.produce(topic, key=key, value=value)
    assert producer.flush(30) == 0

    assert run().rows_in == 40
    quarantine = read_table(str(tables / "payments_quarantine")).to_pylist()
    copies = [r for r in quarantine if any(e["check-id"] == "payment-once" for e in r["_dq_errors"])]
    assert len(copies) == 40 and len({(r["kafka_partition"], r["kafka_offset"]) for r in copies}) == 40
    for r in copies:
        [pointer] = r["_dq_first_seen"]
        partition, offset = originals[r["payment_id"]]
        assert pointer["origin"] == f"kafka_partition={partition}, kafka_offset={offset}"
        assert pointer["batch_id"] == 0 and (r["kafka_partition"], r["kafka_offset"]) != (partition, offset)
    assert len(read_table(str(tables / "payments_pass")).to_pylist()) == len(passed)  # nothing new passed
