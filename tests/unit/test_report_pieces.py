"""The report's pieces without Spark (#45): the configuration's secrets masked, a batch's outcomes per regime
merged into one point, the latest verdict of a window kept, profile spans, and one chart mark per datum in
the HTML, which fetches nothing and has no script."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import yaml

from streaming_dq.core.outcome import BatchOutcome, CheckOutcome, WindowOutcome
from streaming_dq.report import render
from streaming_dq.report.data import DayRows, GateReport
from streaming_dq.report.reading import (
    _batch_point,
    check_series,
    profile_spans,
    window_series,
)
from streaming_dq.report.redact import redacted_config

T0 = datetime(2026, 3, 1, 10, tzinfo=UTC)


def check(check_id: str, status: str, violations: int | None, kind: str = "row") -> CheckOutcome:
    return CheckOutcome(check_id=check_id, check_type="null-check", kind=kind, severity="critical", status=status,
                        violations=violations, raw_value=None, adjusted_value=None)  # fmt: skip


def window(day: int, status: str, value: float, expected: float | None = None) -> WindowOutcome:
    start = datetime(2026, 3, day, tzinfo=UTC)
    return WindowOutcome(check_id="per-day", check_type="row-count-anomaly-check", window="1 day",
                         window_start=start, window_end=start + timedelta(days=1), severity="warning",
                         status=status, raw_value=value, adjusted_value=value, expected_value=expected,
                         band_low=None if expected is None else expected - 10,
                         band_high=None if expected is None else expected + 10, score=1.0)  # type: ignore[arg-type]  # fmt: skip


def batch(batch_id: int, hours: float, *, checks=(), windows=(), profiles=()) -> BatchOutcome:  # type: ignore[no-untyped-def]
    at = T0 + timedelta(hours=hours)
    return BatchOutcome(gate="orders", batch_id=batch_id, status="committed", rows_in=10, rows_passed=8,
                        rows_quarantined=2, committed_at=at.timestamp() + 1, duration_seconds=1.0,
                        min_event_time=at - timedelta(hours=1), max_event_time=at, active_profiles=tuple(profiles),
                        checks=tuple(checks), windows=tuple(windows))  # fmt: skip


OUTCOMES = [
    batch(0, 0, checks=[check("id-present", "failed", 2)], profiles=["sale"]),
    # one batch across two regimes: two outcomes of the same check, one point
    batch(1, 5, checks=[check("id-present", "passed", 0), check("id-present", "failed", 1)], profiles=["sale"]),
    batch(2, 30, checks=[check("id-present", "passed", 0)], windows=[window(1, "provisional", 18)]),
    batch(3, 31, checks=[check("id-present", "skipped", None)], windows=[window(1, "failed", 20, 40), window(2, "passed", 5)], profiles=["sale"]),
]  # fmt: skip


def test_outcomes_of_one_batch_merge_and_days_tally_violations_over_rows() -> None:
    points = [_batch_point(o, __import__("zoneinfo").ZoneInfo("UTC")) for o in OUTCOMES]
    (series,) = check_series(OUTCOMES, points)
    assert series.batch_ids == [0, 1, 2, 3]
    assert series.statuses == ["failed", "failed", "passed", "skipped"]
    assert series.violations == [2, 1, 0, None]
    assert [(str(d.day), d.batches, d.failed, d.violations, d.rows) for d in series.days] == [
        ("2026-03-01", 2, 2, 3, 20),
        ("2026-03-02", 1, 0, 0, 10),  # the skipped batch counts nowhere
    ]
    assert series.days[0].pass_rate == 1 - 3 / 20


def test_a_window_keeps_its_latest_verdict_and_profiles_make_spans() -> None:
    (w,) = window_series(OUTCOMES)
    assert [(v.start.day, v.status, v.value, v.expected) for v in w.verdicts] == [
        (1, "failed", 20, 40),
        (2, "passed", 5, None),
    ]
    spans = profile_spans(OUTCOMES)
    assert [(s.profile, s.batches, s.start, s.end) for s in spans] == [
        ("sale", 2, T0 - timedelta(hours=1), T0 + timedelta(hours=5)),
        ("sale", 1, T0 + timedelta(hours=30), T0 + timedelta(hours=31)),
    ]


def report() -> GateReport:
    from zoneinfo import ZoneInfo

    points = [_batch_point(o, ZoneInfo("UTC")) for o in OUTCOMES]
    return GateReport(gate="orders", timezone="UTC", generated_at=T0, since=None, tables={"results": "/t/r"},
                      batches=points, checks=check_series(OUTCOMES, points), windows=window_series(OUTCOMES),
                      profiles=profile_spans(OUTCOMES), quarantine=None, releases=[], maintenance=[],
                      config_text="gate: {name: orders}\n",
                      rows_by_day=[DayRows(T0.date(), 3, 1), DayRows(T0.date() + timedelta(days=1), 2, 0),
                                   DayRows(None, 1, 0)])  # fmt: skip


def test_the_html_has_a_mark_per_datum_no_script_and_nothing_to_fetch() -> None:
    html = render([report()])
    marks = re.findall(r'data-mark="([\w-]+)"', html)
    assert {m: marks.count(m) for m in set(marks)} == {
        "day": 2, "check-day": 2, "failed-batch": 2, "window": 2, "profile-span": 2,
    }  # fmt: skip
    assert "<script" not in html and not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html)
    assert html.count('role="img"') == html.count("<title id=") == html.count("<desc id=")
    assert "\u2717 failed" in html and "\u2713 passed" in html  # a word and a glyph, not colour alone
    assert "2 days of the rows&#x27; own event time" in html and "1 rows without an event time" in html


def test_secrets_in_the_configuration_are_masked_and_references_kept() -> None:
    text = """
gate: {name: orders}
source:
  format: kafka
  options:
    kafka.bootstrap.servers: 127.0.0.1:9092
    kafka.sasl.jaas.config: org.apache.kafka...password="hunter2";
targets:
  pass: s3://lake/pass
  storage-options:
    AWS_REGION: eu-west-1
    AWS_ACCESS_KEY_ID: AKIAEXAMPLE
    AWS_SECRET_ACCESS_KEY: ${S3_SECRET}
    AWS_SESSION_TOKEN: plain-token
prometheus: {password: s3cr3t, port: 9108}
"""
    shown = redacted_config(text)
    for secret in ("hunter2", "AKIAEXAMPLE", "plain-token", "s3cr3t"):
        assert secret not in shown
    data = yaml.safe_load(shown)
    assert data["targets"]["storage-options"]["AWS_REGION"] == "eu-west-1"
    assert (
        data["targets"]["storage-options"]["AWS_SECRET_ACCESS_KEY"] == "${S3_SECRET}"
    )  # a name, not a value
    assert data["prometheus"] == {"password": "***", "port": 9108}
    assert data["targets"]["pass"] == "s3://lake/pass"
