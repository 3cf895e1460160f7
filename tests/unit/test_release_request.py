"""A release's request: ranges and fixes parsed with errors naming the option, the SQL it selects with, its
identity for a rerun, and its record rows in the results table (no JVM here)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from streaming_dq.core.outcome_rows import decode_outcomes, decode_release_rows, results_table
from streaming_dq.core.results_log import ReleaseRecord, decode_record, release_rows
from streaming_dq.exceptions import ConfigError
from streaming_dq.release import Fix, ReleaseRequest, parse_batch_range, parse_time_range
from streaming_dq.release.store import Chunk, marked_predicate, open_predicate, string_literal


@pytest.mark.parametrize(
    ("text", "bounds"),
    [("3..7", (3, 7)), ("3..", (3, None)), ("..7", (None, 7)), ("5", (5, 5)), (" 2 .. 4 ", (2, 4))],
)
def test_batch_ranges(text: str, bounds: tuple[int | None, int | None]) -> None:
    assert parse_batch_range(text) == bounds


@pytest.mark.parametrize("text", ["a..b", "..", "7..3", ""])
def test_bad_batch_ranges_name_the_option(text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_batch_range(text)
    assert caught.value.field_path == "--batches"


def test_time_ranges_are_read_in_the_gate_zone_unless_they_carry_an_offset() -> None:
    lo, hi = parse_time_range("2026-11-01..2026-11-02T06:00+00:00", "Europe/Berlin")
    assert lo == datetime(2026, 10, 31, 23, 0, tzinfo=UTC)  # Berlin midnight, UTC+1 in November
    assert hi == datetime(2026, 11, 2, 6, 0, tzinfo=UTC)
    assert parse_time_range("..2026-11-01", "UTC") == (None, datetime(2026, 11, 1, tzinfo=UTC))
    for bad in ("2026-11-01", "x..y", "2026-11-02..2026-11-01"):
        with pytest.raises(ConfigError) as caught:
            parse_time_range(bad, "UTC")
        assert caught.value.field_path == "--event-time"


def test_fixes_parse_column_and_expression() -> None:
    assert Fix.parse("amount = amount / 100") == Fix("amount", "amount / 100")
    assert Fix.parse("`odd name` = upper(x)") == Fix("odd name", "upper(x)")
    assert Fix.parse("flag = a = b") == Fix("flag", "a = b")  # the first '=' splits
    for bad in ("amount", "= 3", "amount == 3"):
        with pytest.raises(ConfigError) as caught:
            Fix.parse(bad)
        assert caught.value.field_path == "--set"


def test_the_selection_sql_ands_every_filter() -> None:
    request = ReleaseRequest(
        checks=("a", "b"),
        batches=(3, None),
        event_time=(datetime(2026, 11, 1, tzinfo=UTC), None),
        where="amount > 0",
    )
    sql = request.selection_sql("order_ts")
    assert "e.`check-id` IN ('a', 'b')" in sql
    assert "_dq_batch_id >= 3" in sql and "<=" not in sql
    assert "`order_ts` >= TIMESTAMP'2026-11-01 00:00:00.000000Z'" in sql
    assert sql.endswith("AND (amount > 0)")
    assert ReleaseRequest().selection_sql(None) == "true"
    with pytest.raises(ConfigError) as caught:
        ReleaseRequest(event_time=(None, datetime(2026, 1, 1, tzinfo=UTC))).selection_sql(None)
    assert caught.value.field_path == "--event-time"


def test_a_request_round_trips_and_its_key_ignores_the_note() -> None:
    request = ReleaseRequest(
        checks=("b", "a"),
        batches=(1, 2),
        event_time=(datetime(2026, 11, 1, tzinfo=UTC), None),
        fixes=(Fix.parse("amount = 0"),),
        note="CRM-42",
    )
    assert ReleaseRequest.from_dict(request.to_dict()) == request
    assert ReleaseRequest.from_dict(request.to_dict()).note == "CRM-42"
    same = ReleaseRequest(
        checks=("a", "b"), batches=(1, 2), event_time=request.event_time, fixes=request.fixes
    )
    assert same.key() == request.key()
    assert ReleaseRequest(checks=("a",)).key() != request.key()
    assert "--check b --check a --batches 1..2" in request.describe()


def test_chunk_and_mark_predicates_name_only_what_they_must() -> None:
    chunk = Chunk((3, 4), datetime(2026, 11, 1, 10, 0, 0, 123456, tzinfo=UTC), 10)
    assert chunk.predicate("orders") == (
        "_dq_gate = 'orders' AND _dq_batch_id IN (3, 4)"
        " AND _dq_validation_ts <= '2026-11-01T10:00:00.123456Z'"
    )
    assert marked_predicate("r1", 2, "released").endswith("_dq_release.state = 'released'")
    assert "state" not in marked_predicate("r1", 2)
    assert "_dq_release" not in open_predicate("orders", chunk.until, release_column=False)
    with pytest.raises(ConfigError):
        string_literal("it's", "gate name")


def test_release_rows_decode_by_release_and_batch_decoding_skips_them() -> None:
    ts = datetime(2026, 12, 3, tzinfo=UTC)
    head = {"gate": "orders", "app_id": "orders/release/r1", "batch_id": None}
    rows = [
        *release_rows({**head, "app_id": "orders/release/r1"}, "started", ts, reason='{"id": "r1"}'),
        *release_rows({**head, "batch_id": 0}, "chunk", ts, counts={None: (2, 1), "customer-known": (2, 1)}),
        *release_rows({**head, "batch_id": 1}, "chunk", ts, counts={None: (1, 0), "customer-known": (1, 0)}),
        *release_rows(head, "finished", ts, counts={None: (3, 1), "customer-known": (3, 1)}),
    ]
    table = results_table(rows)
    decoded = decode_release_rows(table.to_pylist())
    entry = decoded["orders/release/r1"]
    assert entry.started is not None and entry.started.request == '{"id": "r1"}'
    assert entry.chunks == {
        0: {None: (2, 1), "customer-known": (2, 1)},
        1: {None: (1, 0), "customer-known": (1, 0)},
    }
    assert entry.finished == {None: (3, 1), "customer-known": (3, 1)}
    assert decode_outcomes(table.to_pylist()) == []  # not a batch's rows
    # the one codec: a chunk's number is its own field, kept in the batch_id column; a record reads back whole
    chunk_row = table.to_pylist()[1]
    assert (chunk_row["batch_id"], chunk_row["rows_passed"], chunk_row["rows"]) == (0, 2, 3)
    assert decode_record(chunk_row) == ReleaseRecord(
        "orders", "orders/release/r1", "chunk", ts, chunk=0, released=2, still_failing=1
    )


def test_the_quarantine_follower_reports_each_finished_release_once(tmp_path) -> None:
    from deltalake import write_deltalake

    from streaming_dq.exporter import QuarantineFollower

    ts = datetime(2026, 12, 3, tzinfo=UTC)
    results = str(tmp_path / "results")

    def finish(app_id: str, kind: str, status: str = "finished") -> None:
        head = {"gate": "orders", "app_id": app_id, "batch_id": None}
        if kind == "release":
            rows = release_rows(head, status, ts, counts={None: (2, 1), "customer-known": (2, 1)})
        else:
            from streaming_dq.core.results_log import discard_rows

            rows = discard_rows(head, status, ts, {None: 5, "amount-positive": 5})
        write_deltalake(results, results_table(rows), mode="append")

    clock = [0.0]
    follower = QuarantineFollower(results, "orders", every=30.0, clock=lambda: clock[0])
    assert follower.poll() == []  # no table yet
    finish("orders/release/r1", "release")
    finish("orders/release/r2", "release", status="chunk")  # not finished: not counted
    clock[0] = 31.0
    assert follower.poll() == [("release", {None: 2, "customer-known": 2})]
    finish("orders/discard/d1", "discard")
    clock[0] = 40.0
    assert follower.poll() == []  # not due yet
    clock[0] = 62.0
    assert follower.poll() == [("discard", {None: 5, "amount-positive": 5})]
    clock[0] = 100.0
    assert follower.poll() == []  # each once


def test_a_release_or_discard_without_a_results_table_is_refused_naming_the_field() -> None:
    from streaming_dq.exceptions import ConfigError
    from streaming_dq.release.store import results_target
    from streaming_dq.tables import DeltaTarget

    results = DeltaTarget("/t/results")
    assert results_target({"pass": DeltaTarget("/t/p"), "results": results}, "release") is results
    with pytest.raises(ConfigError) as caught:
        results_target({"pass": DeltaTarget("/t/p")}, "discard")
    assert caught.value.field_path == "targets.results" and "a discard records itself" in str(caught.value)
