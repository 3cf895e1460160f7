"""The outcome feed (#43): every event reaches every listener in order; a failing listener is logged and keeps
nothing from the others; a plain ``on_batch`` function and a job's totals are listeners like the metrics."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import pytest

from streaming_dq.core.listeners import BatchCallback, OutcomeFeed, OutcomeListener
from streaming_dq.core.outcome import BatchOutcome, CheckOutcome, MaintenanceReport, WindowOutcome
from streaming_dq.runtime.totals import JobTotals, TotalsListener


class Journal(OutcomeListener):
    def __init__(self, name: str, log: list[tuple[str, str, Any]]) -> None:
        self.name, self.log = name, log

    def record_batch(self, outcome: BatchOutcome) -> None:
        self.log.append((self.name, "batch", outcome.batch_id))

    def record_failure(self, batch_id: int, error: BaseException) -> None:
        self.log.append((self.name, "failure", batch_id))

    def record_windows(self, windows: Any) -> None:
        self.log.append((self.name, "windows", len(windows)))

    def record_maintenance(self, report: MaintenanceReport) -> None:
        self.log.append((self.name, "maintenance", report.seconds))

    def record_quarantine(self, kind: str, counts: Any) -> None:
        self.log.append((self.name, kind, dict(counts)))

    def record_progress(self, progress: Any) -> None:
        self.log.append((self.name, "progress", progress["batchId"]))


class Broken(OutcomeListener):
    def record_batch(self, outcome: BatchOutcome) -> None:
        raise RuntimeError("console is gone")


def _outcome(batch_id: int, **kw: Any) -> BatchOutcome:
    return BatchOutcome(gate="orders", batch_id=batch_id, status="committed", rows_in=3, rows_passed=2,
                        rows_quarantined=1, **kw)  # fmt: skip


def _window(status: str) -> WindowOutcome:
    start = datetime(2025, 12, 19, tzinfo=UTC)
    return WindowOutcome("daily-volume", "row-count", "1 day", start, start, "critical", status, 1.0, 1.0)


def test_every_event_reaches_every_listener_in_order() -> None:
    log: list[tuple[str, str, Any]] = []
    inner = OutcomeFeed([Journal("b", log)], gate="orders")  # a job's feed inside the gate's: nested feeds
    feed = OutcomeFeed([Journal("a", log), None, inner], gate="orders")
    feed.record_batch(_outcome(4))
    feed.record_failure(5, RuntimeError("x"))
    feed.record_windows([_window("failed")])
    report = MaintenanceReport(started_at=datetime(2025, 12, 19, tzinfo=UTC), seconds=1.5, tables=())
    feed.record_maintenance(report)
    feed.record_quarantine("release", {None: 7, "customer-known": 7})
    feed.record_progress({"batchId": 6})
    assert log == [
        ("a", "batch", 4), ("b", "batch", 4), ("a", "failure", 5), ("b", "failure", 5),
        ("a", "windows", 1), ("b", "windows", 1), ("a", "maintenance", 1.5), ("b", "maintenance", 1.5),
        ("a", "release", {None: 7, "customer-known": 7}), ("b", "release", {None: 7, "customer-known": 7}),
        ("a", "progress", 6), ("b", "progress", 6),
    ]  # fmt: skip


def test_a_failing_listener_is_logged_and_the_next_ones_still_hear(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[int] = []
    feed = OutcomeFeed([Broken(), BatchCallback(lambda o: seen.append(o.batch_id))], gate="orders")
    with caplog.at_level(logging.ERROR, logger="streaming_dq.gate"):
        feed.record_batch(_outcome(9))
    assert seen == [9]
    assert "outcome callback failed for batch 9 (Broken.record_batch)" in caplog.text
    OutcomeListener().record_batch(_outcome(1))  # the base listener ignores every event


def test_a_job_s_totals_count_batches_and_closed_windows_from_the_feed() -> None:
    totals = JobTotals()
    feed = OutcomeFeed([TotalsListener(totals)])
    failed = CheckOutcome("amount-positive", "min-check", "row", "critical", "failed", violations=1)
    feed.record_batch(_outcome(0, checks=(failed,)))
    feed.record_batch(BatchOutcome(gate="orders", batch_id=0, status="skipped_replay"))
    feed.record_windows([_window("failed"), _window("passed")])
    assert (totals.batches, totals.replayed, totals.rows_in, totals.rows_quarantined) == (1, 1, 3, 1)
    assert totals.windows_closed == 2
    assert totals.failures_at(frozenset({"critical"})) == ["amount-positive", "daily-volume"]
