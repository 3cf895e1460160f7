"""A real Prometheus server scrapes a real ``serve_metrics`` endpoint fed with gate outcomes.

It proves the exposition path end to end: the series arrive with the expected values, every expression of
``deploy/prometheus/alerts.yml`` and of the Grafana dashboard evaluates on the server, and the alerts fire for
a stream whose critical checks fail (with a copy of the rules whose ``for:`` durations are shortened).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from prometheus_client import CollectorRegistry
from servers import running

from streaming_dq.core.outcome import BatchOutcome, CheckOutcome, SchemaMessages, WindowOutcome
from streaming_dq.exporter import CheckLabels, GateMetrics, MetricsServer, serve_metrics

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "deploy/prometheus/alerts.yml"
DASHBOARD = ROOT / "deploy/grafana/dashboard.json"
GATE = "orders"
TIMEOUT_SECONDS = 60.0
BATCHES = 3
EXPECTED_FIRING = {
    "StreamingDQQuarantineRatioHigh",
    "StreamingDQAggregateCheckFailed",
    "StreamingDQWindowCheckFailed",
    "StreamingDQEventTimeLagHigh",
    "StreamingDQBatchesFailing",
    "StreamingDQUnknownSchemaId",
    "StreamingDQCheckViolationShareHigh",
}
EXPECTED_SILENT = {"StreamingDQStreamStalled", "StreamingDQExporterDown"}
DASHBOARD_VARIABLES = {"gate": GATE, "__rate_interval": "1m", "__interval": "15s", "__range": "5m"}

T = TypeVar("T")


def prometheus_binary() -> str:
    """The server binary ($PROMETHEUS_BIN, else on PATH, else Debian's path).

    Missing is a failure when $CI is set (CI must not skip this proof) and a skip elsewhere.
    """
    candidate = os.environ.get("PROMETHEUS_BIN") or shutil.which("prometheus") or "/usr/bin/prometheus"
    if Path(candidate).is_file() and os.access(candidate, os.X_OK):
        return candidate
    reason = (
        f"no prometheus server binary at {candidate} (Debian package `prometheus`; `make test` installs it)"
    )
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def eventually(probe: Callable[[], T], timeout: float = TIMEOUT_SECONDS) -> T:
    """Poll ``probe`` until it returns something truthy or ``timeout`` seconds pass; return its last result."""
    deadline = time.monotonic() + timeout
    result = probe()
    while not result and time.monotonic() < deadline:
        time.sleep(0.25)
        result = probe()
    return result


def wait_for(probe: Callable[[], T | None], what: str, log: Path | None = None) -> T:
    """Like :func:`eventually`, but a timeout fails with ``what`` and the tail of the server log."""
    result = eventually(probe)
    if result:
        return result
    tail = log.read_text()[-3000:] if log and log.exists() else ""
    raise AssertionError(f"timed out after {TIMEOUT_SECONDS:.0f}s waiting for {what}\n{tail}")


@dataclass
class PrometheusApi:
    """The HTTP API of the Prometheus under test."""

    base: str
    log: Path

    def get(self, path: str, **params: str) -> dict[str, Any]:
        url = f"{self.base}{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return dict(json.load(response))
        except urllib.error.HTTPError as error:  # 4xx carries the API's JSON error
            return dict(json.load(error))

    def query(self, expr: str) -> dict[str, Any]:
        return self.get("/api/v1/query", query=expr)

    def vector(self, expr: str) -> dict[tuple[tuple[str, str], ...], float]:
        answer = self.query(expr)
        assert answer["status"] == "success", (expr, answer)
        return {
            tuple(sorted((k, v) for k, v in r["metric"].items() if k not in {"job", "instance"})): float(
                r["value"][1]
            )
            for r in answer["data"]["result"]
        }

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/-/ready", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def firing(self) -> set[str]:
        alerts = self.get("/api/v1/alerts")["data"]["alerts"]
        return {a["labels"]["alertname"] for a in alerts if a["state"] == "firing"}


def fast_rules(target: Path) -> Path:
    """A copy of alerts.yml whose ``for:`` durations are 0s, so alerts fire within a few evaluations."""
    spec = yaml.safe_load(ALERTS.read_text())
    for group in spec["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = "0s"
    target.write_text(yaml.safe_dump(spec, sort_keys=False))
    return target


def write_config(directory: Path, metrics_port: int) -> Path:
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "900ms", "evaluation_interval": "1s"},
        "rule_files": [str(fast_rules(directory / "alerts.yml"))],
        "scrape_configs": [
            {"job_name": "streaming_dq", "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"]}]}
        ],
    }
    path = directory / "prometheus.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def gate_metrics() -> Iterator[tuple[GateMetrics, MetricsServer]]:
    registry = CollectorRegistry()
    checks = [
        CheckLabels("id_not_null", "null-check", "critical", "row", 0.01),  # alert: {max-share: 1%}
        CheckLabels("order_total", "sum-between-check", "critical", "aggregate"),
        CheckLabels("daily_orders", "count-min-check", "critical", "window"),
    ]
    metrics = GateMetrics(GATE, registry=registry, checks=checks, profiles=["christmas", "black-friday"])
    server = serve_metrics(registry, port=0)
    yield metrics, server
    server.close()


@contextlib.contextmanager
def running_prometheus(directory: Path, metrics_port: int) -> Iterator[PrometheusApi]:
    """A real Prometheus server on a free 127.0.0.1 port scraping ``metrics_port``; stopped on exit."""
    port = free_port()
    log = directory / "prometheus.log"
    command = [
        prometheus_binary(),
        f"--config.file={write_config(directory, metrics_port)}",
        f"--storage.tsdb.path={directory / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]
    with running(command, log) as process:
        api = PrometheusApi(f"http://127.0.0.1:{port}", log)
        wait_for(lambda: process.poll() is None and api.ready(), "Prometheus to become ready", log)
        yield api


@pytest.fixture(scope="module")
def prometheus(
    tmp_path_factory: pytest.TempPathFactory, gate_metrics: tuple[GateMetrics, MetricsServer]
) -> Iterator[PrometheusApi]:
    with running_prometheus(tmp_path_factory.mktemp("prometheus"), gate_metrics[1].port) as api:
        yield api


def failing_batch(batch_id: int, now: datetime) -> BatchOutcome:
    """A committed batch of a stream whose critical checks fail, with events two hours old."""
    window_start = (now - timedelta(days=2)).replace(hour=0, minute=0, second=0, microsecond=0)
    return BatchOutcome(
        gate=GATE,
        batch_id=batch_id,
        status="committed",
        rows_in=40,
        rows_passed=30,
        rows_quarantined=10,
        rows_warned=5,
        rows_late=2,
        duration_seconds=0.75,
        committed_at=now.timestamp(),
        max_event_time=now - timedelta(hours=2),
        active_profiles=("christmas",),
        checks=(
            CheckOutcome("id_not_null", "null-check", "row", "critical", "failed", violations=10),
            CheckOutcome(
                "order_total", "sum-between-check", "aggregate", "critical", "failed",
                raw_value=100.0, adjusted_value=150.0, multiplier=1.5, profiles=("christmas",),
            ),
        ),
        windows=(
            WindowOutcome(
                "daily_orders", "count-min-check", "1 day", window_start, window_start + timedelta(days=1),
                "critical", "failed", raw_value=250.0, adjusted_value=500.0, multiplier=2.0,
            ),
        ),
        # a registry-framed topic: most messages readable, some naming a schema id the registry lacks
        schemas=(SchemaMessages("orders", 1, "readable", 36), SchemaMessages("orders", 99, "unknown", 4)),
    )  # fmt: skip


@pytest.fixture(scope="module")
def scraped(prometheus: PrometheusApi, gate_metrics: tuple[GateMetrics, MetricsServer]) -> PrometheusApi:
    """Feed the gate after Prometheus has seen its zeroes, then wait until it has scraped the new values."""
    metrics, _ = gate_metrics
    wait_for(lambda: prometheus.vector(f'streaming_dq_batches_total{{gate="{GATE}"}}'), "a first scrape")
    for batch_id in range(BATCHES):
        metrics.record_batch(failing_batch(batch_id, datetime.now(UTC)))
        time.sleep(1.1)  # one scrape interval, so rate() sees the counters grow
    metrics.record_batch(BatchOutcome(gate=GATE, batch_id=BATCHES - 1, status="skipped_replay"))
    metrics.record_failure(BATCHES, RuntimeError("writing batch 3 to the pass table failed"))
    metrics.record_progress(
        {"inputRowsPerSecond": 12.5, "processedRowsPerSecond": 40.0, "durationMs": {"triggerExecution": 750}}
        | {"stateOperators": []}
    )
    wait_for(
        lambda: prometheus.vector(f'streaming_dq_batches_total{{gate="{GATE}",result="failed"}} == 1'),
        "the fed values to be scraped",
        prometheus.log,
    )
    return prometheus


def test_gate_series_arrive_with_the_expected_values(scraped: PrometheusApi) -> None:
    g = f'gate="{GATE}"'

    assert scraped.vector(f"streaming_dq_rows_total{{{g}}}") == {
        (("__name__", "streaming_dq_rows_total"), ("gate", GATE), ("outcome", o)): v
        for o, v in (("passed", 90.0), ("quarantined", 30.0), ("warned", 15.0))
    }
    assert scraped.vector(f"sum by (result) (streaming_dq_batches_total{{{g}}})") == {
        (("result", "committed"),): 3.0,
        (("result", "skipped_replay"),): 1.0,
        (("result", "failed"),): 1.0,
    }
    assert scraped.vector(f"sum by (check, severity) (streaming_dq_aggregate_failures_total{{{g}}})") == {
        (("check", "order_total"), ("severity", "critical")): 3.0,
        (("check", "order_total"), ("severity", "warning")): 0.0,
    }
    assert scraped.vector(f"sum by (value) (streaming_dq_aggregate_value{{{g}}})") == {
        (("value", "raw"),): 100.0,
        (("value", "adjusted"),): 150.0,
    }
    assert scraped.vector(f"sum by (window) (streaming_dq_window_check_failed{{{g}}})") == {
        (("window", "1 day"),): 1.0
    }
    assert scraped.vector(f"sum by (profile) (streaming_dq_profile_active{{{g}}})") == {
        (("profile", "christmas"),): 1.0,
        (("profile", "black-friday"),): 0.0,
    }
    assert scraped.vector(f"sum(streaming_dq_last_committed_batch_id{{{g}}})") == {(): 2.0}
    assert scraped.vector(f"sum(streaming_dq_batch_duration_seconds_count{{{g}}})") == {(): 3.0}
    assert scraped.vector(f"sum(streaming_dq_input_rows_per_second{{{g}}})") == {(): 12.5}
    [lag] = scraped.vector(f"streaming_dq_event_time_lag_seconds{{{g}}}").values()
    assert 7200 <= lag < 7200 + TIMEOUT_SECONDS + 30
    assert scraped.vector('count({__name__=~"streaming_dq_.*_created"})') == {}


def test_every_rule_is_healthy_on_the_server(scraped: PrometheusApi) -> None:
    def evaluated() -> list[dict[str, Any]] | None:
        groups = scraped.get("/api/v1/rules")["data"]["groups"]
        found = [rule for group in groups for rule in group["rules"]]
        return found if found and all(r["health"] != "unknown" for r in found) else None

    loaded = wait_for(evaluated, "every rule to be evaluated", scraped.log)
    shipped = [rule for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]

    assert [(r["name"], r["health"], r.get("lastError", "")) for r in loaded] == [
        (rule.get("alert") or rule["record"], "ok", "") for rule in shipped
    ]
    for rule in shipped:
        answer = scraped.query(rule["expr"])
        assert answer["status"] == "success", (rule["expr"], answer)


def test_the_quarantine_ratio_is_recorded(scraped: PrometheusApi) -> None:
    ratio = wait_for(
        lambda: scraped.vector(f'streaming_dq:quarantine_ratio:rate5m{{gate="{GATE}"}}'),
        "the recording rule",
        scraped.log,
    )

    assert list(ratio.values()) == [pytest.approx(0.25)]


def dashboard_queries() -> list[str]:
    def panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for item in items:
            yield item
            yield from panels(item.get("panels", []))

    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in panels(dashboard["panels"]) for t in p.get("targets", [])]
    return [re.sub(r"\$\{?(\w+)\}?", lambda m: DASHBOARD_VARIABLES[m[1]], expr) for expr in exprs]


def test_every_dashboard_expression_evaluates_to_series(scraped: PrometheusApi) -> None:
    queries = dashboard_queries()
    for query in queries:
        answer = scraped.query(query)
        assert answer["status"] == "success", (query, answer)

    def empty() -> list[str]:
        return [query for query in queries if not scraped.query(query)["data"]["result"]]

    eventually(lambda: not empty())
    assert empty() == [], "dashboard queries without series"


def test_alerts_fire_for_a_stream_whose_critical_checks_fail(scraped: PrometheusApi) -> None:
    def all_expected_firing() -> set[str] | None:
        now = scraped.firing()
        return now if now >= EXPECTED_FIRING else None

    firing = wait_for(
        all_expected_firing,
        f"alerts {sorted(EXPECTED_FIRING)} to fire",
        scraped.log,
    )

    assert firing & EXPECTED_SILENT == set()
    alerts = scraped.get("/api/v1/alerts")["data"]["alerts"]
    [quarantine] = [a for a in alerts if a["labels"]["alertname"] == "StreamingDQQuarantineRatioHigh"]
    assert quarantine["labels"] == {
        "alertname": "StreamingDQQuarantineRatioHigh",
        "gate": GATE,
        "job": "streaming_dq",
        "severity": "critical",
    }
    assert quarantine["annotations"]["summary"] == f"Gate {GATE} quarantines 25% of its rows"


@pytest.mark.spark
def test_progress_bridge_exports_a_real_query_progress(spark: Any) -> None:
    """The listener bridge on a real streaming query (the gate's end-to-end test covers a real gate)."""
    from streaming_dq.exporter import ProgressBridge

    registry = CollectorRegistry()
    stream = spark.readStream.format("rate").option("rowsPerSecond", 50).load()
    query = stream.writeStream.format("noop").trigger(processingTime="200 milliseconds").start()
    bridge = ProgressBridge(GateMetrics(GATE, registry=registry), query.id)
    spark.streams.addListener(bridge)
    try:
        trigger = eventually(  # a loaded CI machine can take a minute for the first micro-batch
            lambda: registry.get_sample_value("streaming_dq_trigger_duration_seconds", {"gate": GATE}), 180.0
        )
    finally:
        query.stop()
        spark.streams.removeListener(bridge)

    assert trigger is not None and trigger > 0
    assert registry.get_sample_value("streaming_dq_processed_rows_per_second", {"gate": GATE}) is not None
    assert registry.get_sample_value("streaming_dq_state_rows", {"gate": GATE}) == 0.0
