"""The results codec (#28): what the sink writes to the results table, the exporter's follower reads back
whole. Under Spark Connect the follower is how the client's /metrics learn of a batch; it used to drop the
anomaly fields of a batch-scoped check, so those Prometheus series never appeared there."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from streaming_dq.core.outcome import (
    BatchOutcome,
    CheckOutcome,
    MaintenanceReport,
    SchemaMessages,
    TableReport,
    WindowOutcome,
)
from streaming_dq.core.outcome_rows import decode_outcomes, encode_outcome, results_table
from streaming_dq.exporter.follower import outcomes_from_results

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
_names = st.text("abcxyz-", min_size=1, max_size=6)
_floats = st.none() | st.floats(-1e6, 1e6, allow_nan=False)
_instants = st.integers(0, 10**6).map(lambda s: T0 + timedelta(seconds=s))


@st.composite
def _verdicts(draw: st.DrawFn) -> dict[str, object]:
    if not draw(st.booleans()):
        return {}
    return {
        "expected_value": draw(_floats), "band_low": draw(_floats), "band_high": draw(_floats),
        "score": draw(_floats), "history": draw(st.none() | st.integers(0, 50)), "reason": draw(st.none() | _names),
    }  # fmt: skip


@st.composite
def _checks(draw: st.DrawFn) -> CheckOutcome:
    kind = draw(st.sampled_from(["row", "aggregate"]))
    return CheckOutcome(
        draw(_names), draw(_names), kind, draw(st.sampled_from(["critical", "warning"])),
        draw(st.sampled_from(["passed", "failed", "skipped"])),
        violations=draw(st.integers(0, 99)) if kind == "row" else None,
        raw_value=draw(_floats), adjusted_value=draw(_floats), multiplier=draw(st.sampled_from([1.0, 0.5, 2.0])),
        profiles=tuple(draw(st.lists(_names, max_size=2))), regime=tuple(draw(st.lists(_names, max_size=2))),
        **draw(_verdicts()),  # type: ignore[arg-type]
    )  # fmt: skip


@st.composite
def _windows(draw: st.DrawFn) -> WindowOutcome:
    start = draw(_instants)
    return WindowOutcome(
        draw(_names), draw(_names), "1 day", start, start + timedelta(days=1),
        draw(st.sampled_from(["critical", "warning"])), draw(st.sampled_from(["passed", "failed", "provisional"])),
        draw(_floats), draw(_floats), profiles=tuple(draw(st.lists(_names, max_size=2))),
        **draw(_verdicts()),  # type: ignore[arg-type]
    )  # fmt: skip


@st.composite
def _maintenance(draw: st.DrawFn) -> MaintenanceReport | None:
    if not draw(st.booleans()):
        return None
    tables = tuple(
        TableReport(role, "", files_after=draw(st.integers(0, 9)), seconds=draw(st.sampled_from([0.0, 0.25, 1.5])),
                    error=draw(st.none() | _names))
        for role in draw(st.lists(st.sampled_from(["pass", "quarantine", "results"]), min_size=1, unique=True))
    )  # fmt: skip
    return MaintenanceReport(draw(_instants), tables, draw(st.sampled_from([0.0, 0.5, 3.25])))


@st.composite
def _outcomes(draw: st.DrawFn) -> tuple[BatchOutcome, datetime]:
    validated = draw(_instants)
    duration = draw(st.sampled_from([0.0, 0.125, 2.5]))  # exact in binary: committed_at round-trips
    low = draw(st.none() | _instants)
    outcome = BatchOutcome(
        draw(_names), draw(st.integers(0, 10**6)), "committed",
        *draw(st.tuples(*[st.integers(0, 1000)] * 7)),
        duration_seconds=duration, committed_at=(validated + timedelta(seconds=duration)).timestamp(),
        min_event_time=low, max_event_time=None if low is None else low + timedelta(hours=1),
        active_profiles=tuple(draw(st.lists(_names, max_size=2))),
        checks=tuple(draw(st.lists(_checks(), max_size=4))), windows=tuple(draw(st.lists(_windows(), max_size=3))),
        maintenance=draw(_maintenance()), schemas=tuple(draw(st.lists(_schemas(), max_size=4))),
    )  # fmt: skip
    return outcome, validated


@st.composite
def _schemas(draw: st.DrawFn) -> SchemaMessages:
    verdict = draw(st.sampled_from(["readable", "unknown", "incompatible", "wrong-type", "unreachable"]))
    return SchemaMessages(draw(_names), draw(st.integers(0, 2**31 - 1)), verdict, draw(st.integers(0, 10**6)))


@settings(max_examples=200, deadline=None)
@given(_outcomes())
def test_every_outcome_survives_the_results_table(case: tuple[BatchOutcome, datetime]) -> None:
    outcome, validated = case
    rows = encode_outcome(
        outcome, app_id="orders:q1", validation_ts=validated, maintenance=outcome.maintenance
    )
    table = results_table(rows)  # through Arrow, as the table stores them
    assert decode_outcomes(table.to_pylist()) == [outcome]


def test_the_follower_rebuilds_a_batch_scoped_anomaly_verdict_from_the_sinks_rows() -> None:
    """Rows as the sink has written them since batch-scoped anomaly checks came: the verdict's fields are in
    the check's row, and the follower must hand them to the exporter."""
    summary = {"gate": "orders", "batch_id": 7, "app_id": "orders:q1", "kind": "batch", "rows": 10,
               "validation_ts": T0, "duration_seconds": 0.5}  # fmt: skip
    check = {"gate": "orders", "batch_id": 7, "app_id": "orders:q1", "check_id": "volume-anomaly",
             "check_type": "anomaly-check", "kind": "aggregate", "severity": "critical", "status": "failed",
             "raw_value": 10.0, "adjusted_value": 10.0, "multiplier": 1.0, "validation_ts": T0,
             "expected_value": 100.0, "band_low": 70.0, "band_high": 130.0, "score": 3.0, "history": 20,
             "reason": None}  # fmt: skip
    (outcome,) = outcomes_from_results(results_table([summary, check]).to_pylist())  # every column, as read
    (verdict,) = outcome.checks
    assert (verdict.expected_value, verdict.band_low, verdict.band_high, verdict.score, verdict.history) == (
        100.0, 70.0, 130.0, 3.0, 20,
    )  # fmt: skip
