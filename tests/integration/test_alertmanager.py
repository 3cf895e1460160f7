"""Alert delivery end to end: two real gates export their metrics; a real Prometheus evaluates
``deploy/prometheus/alerts.yml`` (its ``for:`` durations shortened) and sends what fires to a real Alertmanager
(Debian's ``prometheus-alertmanager``) running ``deploy/prometheus/alertmanager.yml`` as shipped, but for its
receivers' URLs and its waits; the Alertmanager delivers to a webhook receiver on 127.0.0.1.

Gate ``orders`` fails a critical aggregate check on events a year old: its critical alerts arrive at the
critical receiver with the gate and check labels and the runbook link, and its event-time lag warning is held
back (inhibited by the same gate's critical alert). Gate ``payments`` passes on the same old events: its lag
warning arrives at the warning receiver, and once a batch of current events commits, a resolved notification
follows. ``amtool`` checks the shipped config with its commented receivers switched on, and its routes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry
from test_prometheus_server import (
    PrometheusApi,
    fast_rules,
    free_port,
    prometheus_binary,
    running,
    wait_for,
)

from streaming_dq import CheckSet, QualityGate
from streaming_dq.exporter import CheckLabels, GateMetrics, serve_metrics

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ALERTMANAGER = ROOT / "deploy/prometheus/alertmanager.yml"
OLD = datetime(2025, 3, 1, 10, tzinfo=UTC)


def binary(name: str) -> str:
    """A binary of Debian's prometheus-alertmanager package (`make test` installs it); missing fails under
    $CI and skips elsewhere, as the Prometheus tests do."""
    found = shutil.which(name) or f"/usr/bin/{name}"
    if Path(found).is_file() and os.access(found, os.X_OK):
        return found
    reason = f"no {name} at {found} (Debian package `prometheus-alertmanager`; `make test` installs it)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


class Webhook:
    """An HTTP receiver on 127.0.0.1 keeping every notification POSTed to it, with its path."""

    def __init__(self) -> None:
        received: list[tuple[str, dict[str, Any]]] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append((self.path, json.loads(body)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def alerts(self, path: str, status: str | None = None) -> list[dict[str, Any]]:
        """The alerts of the notifications to ``path`` (with ``status``: firing or resolved)."""
        return [
            alert
            for at, note in list(self.received)
            if at == path
            for alert in note["alerts"]
            if status is None or alert["status"] == status
        ]

    def close(self) -> None:
        self.server.shutdown()


def alertmanager_config(directory: Path, webhook: int) -> Path:
    """The shipped config with its receivers on the test's webhook and its waits in seconds."""
    spec = yaml.safe_load(ALERTMANAGER.read_text(encoding="utf-8"))
    for receiver in spec["receivers"]:
        for hook in receiver["webhook_configs"]:
            hook["url"] = re.sub(r"http://127\.0\.0\.1:\d+", f"http://127.0.0.1:{webhook}", hook["url"])
    for route in [spec["route"], *spec["route"]["routes"]]:
        route.update({"group_wait": "1s", "group_interval": "2s"})
    path = directory / "alertmanager.yml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def am_alerts(port: int) -> list[dict[str, Any]]:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/alerts", timeout=5) as response:
        return list(json.load(response))


def test_the_shipped_config_checks_with_its_commented_receivers_and_routes_by_severity(tmp_path: Path):
    amtool = binary("amtool")
    checked = subprocess.run([amtool, "check-config", str(ALERTMANAGER)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # the commented Slack and e-mail examples, switched on, are valid too (their secret files given)
    text = ALERTMANAGER.read_text(encoding="utf-8")
    enabled = re.sub(r"^(\s+)# (slack_configs|email_configs|  )", r"\1\2", text, flags=re.M)
    enabled = re.sub(r"^  # (smtp_\w+:)", r"  \1", enabled, flags=re.M)
    assert enabled.count("slack_configs:") == 1 and enabled.count("email_configs:") == 2, enabled
    for name in ("slack-webhook-url", "smtp-password"):
        (tmp_path / name).write_text("https://hooks.example.org/x\n", encoding="utf-8")
    enabled = enabled.replace("/etc/alertmanager/", f"{tmp_path}/")
    (tmp_path / "all.yml").write_text(enabled, encoding="utf-8")
    checked = subprocess.run(
        [amtool, "check-config", str(tmp_path / "all.yml")], capture_output=True, text=True
    )
    assert checked.returncode == 0 and "SUCCESS" in checked.stdout, enabled + checked.stdout + checked.stderr
    for severity, receiver in (("critical", "streaming-dq-critical"), ("warning", "streaming-dq-warning")):
        routed = subprocess.run(
            [amtool, "config", "routes", "test", f"--config.file={ALERTMANAGER}", f"severity={severity}",
             "gate=orders", "alertname=StreamingDQAggregateCheckFailed"],
            capture_output=True, text=True,
        )  # fmt: skip
        assert routed.returncode == 0 and routed.stdout.split() == [receiver], routed.stdout + routed.stderr


def test_alerts_of_a_failing_gate_reach_a_webhook_through_alertmanager_and_resolve(
    spark: Any, tmp_path: Path
) -> None:
    alertmanager, prometheus = binary("prometheus-alertmanager"), prometheus_binary()
    registry = CollectorRegistry()
    checks: dict[str, list[dict[str, Any]]] = {
        "orders": [
            {"check": "null-check", "check-id": "amount-present", "columns": ["amount"]},
            {"check": "row-count-min-check", "check-id": "enough-orders", "min-count": 100},
        ],
        "payments": [{"check": "null-check", "check-id": "amount-present", "columns": ["amount"]}],
    }
    gates, metrics = {}, None
    for name, dicts in checks.items():
        check_set = CheckSet.from_dicts(dicts)
        labels = [CheckLabels(c.check_id, c.check_type, c.severity.value) for c in check_set]
        metrics = GateMetrics(name, registry=registry, checks=labels, alongside=metrics)
        gates[name] = QualityGate(
            name,
            check_set,
            pass_table=str(tmp_path / name / "pass"),
            quarantine_table=str(tmp_path / name / "quarantine"),
            event_time="ts",
            metrics=metrics,
        )
    server = serve_metrics(registry, port=0)
    webhook = Webhook()
    am_port, prom_port = free_port(), free_port()
    (tmp_path / "am").mkdir()
    prom_config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "900ms", "evaluation_interval": "1s"},
        "rule_files": [str(fast_rules(tmp_path / "alerts.yml"))],
        "alerting": {"alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{am_port}"]}]}]},
        "scrape_configs": [
            {"job_name": "streaming_dq", "static_configs": [{"targets": [f"127.0.0.1:{server.port}"]}]}
        ],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(prom_config), encoding="utf-8")
    am_log, prom_log = tmp_path / "alertmanager.log", tmp_path / "prometheus.log"
    am_command = [
        alertmanager,
        f"--config.file={alertmanager_config(tmp_path, webhook.port)}",
        f"--web.listen-address=127.0.0.1:{am_port}",
        "--cluster.listen-address=",  # no gossip port on all interfaces
        f"--storage.path={tmp_path / 'am'}",
    ]
    prom_command = [
        prometheus,
        f"--config.file={tmp_path / 'prometheus.yml'}",
        f"--storage.tsdb.path={tmp_path / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{prom_port}",
        "--log.level=warn",
    ]
    frame = lambda ts, n: spark.createDataFrame(  # noqa: E731
        [(i, float(i), ts) for i in range(n)], "id BIGINT, amount DOUBLE, ts TIMESTAMP"
    )
    try:
        with running(am_command, am_log) as am, running(prom_command, prom_log) as prom:
            api = PrometheusApi(f"http://127.0.0.1:{prom_port}", prom_log)
            wait_for(
                lambda: am.poll() is None and prom.poll() is None and api.ready(), "both servers", prom_log
            )
            # the counters' zeros are scraped first, so that the failures below are an increase
            wait_for(lambda: api.vector('streaming_dq_rows_total{gate="orders"}'), "a first scrape", prom_log)
            gates["orders"](frame(OLD, 5), 0)  # 5 orders: fewer than 100, a year old
            gates["payments"](frame(OLD, 5), 0)  # passes, a year old

            def critical() -> list[dict[str, Any]] | None:
                names = {a["labels"]["alertname"] for a in webhook.alerts("/alerts/critical", "firing")}
                wanted = {"StreamingDQAggregateCheckFailed", "StreamingDQQuarantineRatioHigh"}
                return webhook.alerts("/alerts/critical", "firing") if wanted <= names else None

            def payments_warning() -> list[dict[str, Any]] | None:
                found = [
                    a
                    for a in webhook.alerts("/alerts/warning", "firing")
                    if a["labels"]["gate"] == "payments"
                ]
                return found or None

            delivered = wait_for(critical, "the critical alerts of gate orders at the webhook", am_log)
            failed = next(
                a for a in delivered if a["labels"]["alertname"] == "StreamingDQAggregateCheckFailed"
            )
            assert failed["labels"]["gate"] == "orders" and failed["labels"]["check"] == "enough-orders", (
                failed
            )
            assert failed["labels"]["severity"] == "critical"
            assert failed["annotations"]["runbook_url"] == "docs/runbook.md#streamingdqaggregatecheckfailed"
            assert "enough-orders" in failed["annotations"]["summary"]
            assert {a["labels"]["gate"] for a in delivered} == {"orders"}

            lag = wait_for(payments_warning, "gate payments' event-time lag warning at the webhook", am_log)
            assert {a["labels"]["alertname"] for a in lag} == {"StreamingDQEventTimeLagHigh"}
            assert lag[0]["annotations"]["runbook_url"] == "docs/runbook.md#streamingdqeventtimelaghigh"
            # orders lags as much, but its warning is held back by its critical alerts (same gate)
            held = [
                a for a in am_alerts(am_port)
                if a["labels"]["alertname"] == "StreamingDQEventTimeLagHigh" and a["labels"]["gate"] == "orders"
            ]  # fmt: skip
            assert held and held[0]["status"]["state"] == "suppressed", held
            assert held[0]["status"]["inhibitedBy"], held
            warned = {a["labels"]["gate"] for a in webhook.alerts("/alerts/warning")}
            assert warned == {"payments"}, webhook.received

            gates["payments"](frame(datetime.now(UTC), 5), 1)  # payments catches up: its lag is gone
            resolved = wait_for(
                lambda: [
                    a
                    for a in webhook.alerts("/alerts/warning", "resolved")
                    if a["labels"]["gate"] == "payments"
                ],
                "the resolved notification of gate payments' lag warning",
                am_log,
            )
            assert resolved[0]["labels"]["alertname"] == "StreamingDQEventTimeLagHigh"
            assert resolved[0]["endsAt"] > resolved[0]["startsAt"]
            assert not webhook.alerts("/alerts/critical", "resolved")  # orders still fails
    finally:
        webhook.close()
        server.close()
