"""deploy/ and docs/ stay in step with what the exporter exposes (no JVM, no server)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from streaming_dq.core.outcome import BatchOutcome, CheckOutcome, KeysState, SchemaMessages, WindowOutcome
from streaming_dq.exporter import CheckLabels, GateMetrics

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "deploy/prometheus/alerts.yml"
ALERTS_TEST = ROOT / "deploy/prometheus/alerts_test.yml"
SCRAPE_CONFIG = ROOT / "deploy/prometheus/prometheus.yml"
DASHBOARD = ROOT / "deploy/grafana/dashboard.json"
METRICS_DOC = ROOT / "docs/metrics.md"
RUNBOOK = ROOT / "docs/runbook.md"

REQUIRED_ALERTS = {
    "StreamingDQQuarantineRatioHigh",
    "StreamingDQAggregateCheckFailed",
    "StreamingDQWindowCheckFailed",
    "StreamingDQStreamStalled",
    "StreamingDQEventTimeLagHigh",
    "StreamingDQBatchesFailing",
    "StreamingDQExporterDown",
    "StreamingDQMaintenanceFailing",
    "StreamingDQKafkaLagHigh",
    "StreamingDQAnomalyDetected",
    "StreamingDQKeysNotForgotten",
    "StreamingDQUnknownSchemaId",
    "StreamingDQCheckViolationShareHigh",
}
PROMQL_KEYWORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "and",
    "or",
    "unless",
    "bool",
}
DOC_ROW = re.compile(r"^\|\s*`(?P<name>streaming_dq_\w+)`\s*\|\s*(?P<type>\w+)\s*\|\s*(?P<labels>[^|]*)\|")


def exposed_registry() -> CollectorRegistry:
    """A registry on which every series of the exporter exists."""
    registry = CollectorRegistry()
    metrics = GateMetrics(
        "orders",
        registry=registry,
        checks=[
            CheckLabels("a", "null-check", "critical", alert_max_share=0.01),
            CheckLabels("s", "sum-check", "critical"),
        ],
        profiles=["christmas"],
    )
    moment = datetime(2024, 12, 24, tzinfo=UTC)
    metrics.record_batch(
        BatchOutcome(
            gate="orders",
            batch_id=0,
            status="committed",
            rows_in=3,
            rows_passed=2,
            rows_quarantined=1,
            max_event_time=moment,
            active_profiles=("christmas",),
            checks=(
                CheckOutcome("a", "null-check", "row", "critical", "failed", violations=1),
                CheckOutcome(
                    "s", "sum-check", "aggregate", "critical", "passed", raw_value=1.0, adjusted_value=1.0
                ),
            ),
            windows=(
                WindowOutcome("w", "count-check", "1 day", moment, moment, "critical", "passed", 1.0, 1.0),
                WindowOutcome(
                    "n",
                    "anomaly-check",
                    "1 day",
                    moment,
                    moment,
                    "warning",
                    "failed",
                    9.0,
                    9.0,
                    expected_value=5.0,
                    band_low=4.0,
                    band_high=6.0,
                    score=4.0,
                    history=4,
                ),
            ),
            keys=KeysState(12, moment.date(), timedelta(days=7), {"o": 2}),
            schemas=(SchemaMessages("orders", 3, "unknown", 2),),
        )
    )
    metrics.record_progress(
        {"inputRowsPerSecond": 1.0, "processedRowsPerSecond": 1.0, "durationMs": {"triggerExecution": 1}}
        | {"stateOperators": []}
        | {"sources": [{"endOffset": '{"orders": {"0": 1}}', "latestOffset": '{"orders": {"0": 3}}'}]}
    )
    from streaming_dq.core.outcome import MaintenanceReport, TableReport

    tables = (TableReport("pass", "/t/p", 9, 1), TableReport("results", "/t/r", error="DeltaError: conflict"))
    metrics.record_maintenance(MaintenanceReport(moment, tables, 0.5))
    metrics.record_quarantine("release", {None: 2, "customer-known": 2})
    metrics.record_quarantine("discard", {None: 1, "amount-positive": 1})
    return registry


def exposed_families() -> dict[str, tuple[str, frozenset[str]]]:
    """Exposed metric name (with ``_total`` on counters) -> (type, label names)."""
    families = {}
    for family in exposed_registry().collect():
        name = f"{family.name}_total" if family.type == "counter" else family.name
        labels = frozenset(k for sample in family.samples for k in sample.labels if k != "le")
        families[name] = (family.type, labels)
    return families


def documented_families() -> dict[str, tuple[str, frozenset[str]]]:
    documented = {}
    for line in METRICS_DOC.read_text().splitlines():
        row = DOC_ROW.match(line)
        if row:
            labels = frozenset(re.findall(r"`(\w+)`", row["labels"]))
            documented[row["name"]] = (row["type"], labels)
    return documented


def exposed_sample_names() -> set[str]:
    return {sample.name for family in exposed_registry().collect() for sample in family.samples}


def rules() -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]


def alert_rules() -> dict[str, dict[str, Any]]:
    return {rule["alert"]: rule for rule in rules() if "alert" in rule}


def dashboard_panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from dashboard_panels(panel.get("panels", []))


def dashboard_exprs() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [t["expr"] for p in dashboard_panels(dashboard["panels"]) for t in p.get("targets", [])]


def metric_names(expr: str) -> set[str]:
    """Metric names an expression selects (identifiers before ``{``, ``[``, ``)`` or an operator)."""
    without_strings = re.sub(r'"[^"]*"', '""', expr)
    without_labels = re.sub(r"\{[^}]*\}", "{}", without_strings)
    without_by = re.sub(r"\b(?:by|without|on|ignoring)\s*\([^)]*\)", "", without_labels)
    candidates = re.findall(r"\b([a-zA-Z_:][\w:]*)\b(?!\s*\()", without_by)
    return {c for c in candidates if c.startswith(("streaming_dq", "up")) and c not in PROMQL_KEYWORDS}


def test_every_exposed_metric_is_documented_with_its_type_and_labels() -> None:
    exposed, documented = exposed_families(), documented_families()

    assert sorted(exposed.keys() - documented.keys()) == [], "exposed but missing from docs/metrics.md"
    assert sorted(documented.keys() - exposed.keys()) == [], "documented but not exposed"
    assert {n: documented[n] for n in exposed} == exposed


def test_the_doc_table_parser_sees_the_whole_table() -> None:
    rows = [line for line in METRICS_DOC.read_text().splitlines() if line.startswith("| `streaming_dq_")]

    assert len(rows) == len(documented_families()) > 20


def test_rule_and_dashboard_expressions_only_use_exposed_metrics() -> None:
    recorded = {rule["record"] for rule in rules() if "record" in rule}
    known = exposed_sample_names() | recorded | {"up"}
    exprs = [rule["expr"] for rule in rules()] + dashboard_exprs()

    used = set().union(*(metric_names(expr) for expr in exprs))

    assert sorted(used - known) == []
    assert "streaming_dq_batch_duration_seconds_bucket" in used


def test_every_required_alert_has_annotations_and_a_runbook_section() -> None:
    alerts = alert_rules()
    anchors = {
        re.sub(r"[^\w-]", "", heading.strip().lower().replace(" ", "-"))
        for heading in re.findall(r"^## (.+)$", RUNBOOK.read_text(), flags=re.MULTILINE)
    }

    assert alerts.keys() == REQUIRED_ALERTS
    for name, rule in alerts.items():
        annotations = rule["annotations"]
        assert {"summary", "description", "runbook_url"} <= annotations.keys(), name
        if "labels" in rule:
            assert rule["labels"]["severity"] in {"critical", "warning"}, name
        else:  # the check's own severity (critical or warning), joined from its info series
            assert "group_left (severity)" in rule["expr"] and "streaming_dq_check_info" in rule["expr"], name
        page, _, anchor = annotations["runbook_url"].partition("#")
        assert (page, anchor) == ("docs/runbook.md", name.lower())
        assert anchor in anchors, f"docs/runbook.md has no section for {name}"
    # Sections for alerts are named after them; others (procedures) are not, and no alert section is orphaned.
    alert_sections = {anchor for anchor in anchors if anchor.startswith("streamingdq")}
    assert alert_sections == {name.lower() for name in REQUIRED_ALERTS}


def test_every_alert_is_unit_tested_firing_and_not_firing() -> None:
    spec = yaml.safe_load(ALERTS_TEST.read_text())
    cases = [case for test in spec["tests"] for case in test.get("alert_rule_test", [])]

    firing = {case["alertname"] for case in cases if case.get("exp_alerts")}
    silent = {case["alertname"] for case in cases if not case.get("exp_alerts")}

    assert spec["rule_files"] == ["alerts.yml"]
    assert firing == silent == REQUIRED_ALERTS


def test_scrape_config_targets_the_default_endpoint() -> None:
    config = yaml.safe_load(SCRAPE_CONFIG.read_text())

    [job] = config["scrape_configs"]
    assert config["rule_files"] == ["alerts.yml"]
    assert (job["job_name"], job["static_configs"]) == ("streaming_dq", [{"targets": ["127.0.0.1:9108"]}])
    assert 'up{job="streaming_dq"}' in alert_rules()["StreamingDQExporterDown"]["expr"]


def test_dashboard_is_an_importable_grafana_dashboard() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    panels = list(dashboard_panels(dashboard["panels"]))
    data_panels = [p for p in panels if p["type"] != "row"]

    assert 36 <= dashboard["schemaVersion"] <= 41
    assert [i["name"] for i in dashboard["__inputs"]] == ["DS_PROMETHEUS"]
    [gate] = dashboard["templating"]["list"]
    assert (gate["name"], gate["datasource"]["uid"]) == ("gate", "${DS_PROMETHEUS}")
    assert len({p["id"] for p in panels}) == len(panels)
    for panel in data_panels:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}, panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert 'gate="$gate"' in target["expr"], panel["title"]


@pytest.mark.parametrize(
    ("topic", "pattern"),
    [
        ("rows and quarantine ratio", r'outcome="quarantined"'),
        ("per-check violations", r"streaming_dq_check_violations_total"),
        ("aggregate results", r"streaming_dq_aggregate_value"),
        ("window results", r"streaming_dq_window_check_failed"),
        ("batch duration", r"histogram_quantile\(0\.95, .*streaming_dq_batch_duration_seconds_bucket"),
        ("lag", r"streaming_dq_event_time_lag_seconds"),
        ("active profiles", r"streaming_dq_profile_active"),
        ("messages per schema id", r"by \(topic, schema_id, verdict\).*streaming_dq_source_messages_total"),
    ],
)
def test_dashboard_covers(topic: str, pattern: str) -> None:
    assert any(re.search(pattern, expr) for expr in dashboard_exprs()), topic
