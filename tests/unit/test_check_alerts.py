"""A row check's alerting threshold (#58): read from the config (on the check, or the gate's default for row
checks), refused where it means nothing, and exported as the series the shipped rule compares with (the rule
itself is tested by promtool: deploy/prometheus/alerts_test.yml, and by a real Prometheus:
tests/integration/test_prometheus_server.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from streaming_dq.config.loader import load_gate_config
from streaming_dq.core.alerting import AlertThreshold, share
from streaming_dq.exceptions import ConfigError
from streaming_dq.runtime.gate_run import GateRun

CONFIG = """
gate:
  name: orders
{gate_alert}
source: {{format: json, path: landing, schema: "id BIGINT, product STRING, amount DOUBLE"}}
checkpoint: state
targets: {{pass: t/pass, quarantine: t/quarantine}}
checks:
  - {{check: null-check, check-id: fk-ok, columns: [product], alert: {{max-share: 1%}}}}
  - {{check: null-check, check-id: id-present, columns: [id]}}
  - {{check: row-count-min-check, check-id: enough, min-count: 1}}
"""


def _thresholds(tmp_path: Path, gate_alert: str = "") -> dict[str, float]:
    path = tmp_path / "gate.yaml"
    path.write_text(CONFIG.format(gate_alert=gate_alert), encoding="utf-8")
    registry = CollectorRegistry()
    GateRun(load_gate_config(path)).gate_metrics(registry, None)
    return {
        s.labels["check"]: s.value
        for family in registry.collect()
        for s in family.samples
        if s.name == "streaming_dq_check_alert_max_share"
    }


def test_a_check_exports_its_own_threshold_and_the_others_none(tmp_path: Path) -> None:
    assert _thresholds(tmp_path) == {"fk-ok": 0.01}


def test_the_gate_default_applies_to_row_checks_without_their_own(tmp_path: Path) -> None:
    # unknown-fields: the row check a JSON source adds for fields its schema does not declare
    assert _thresholds(tmp_path, "  alert: {max-share: 0.05}") == {
        "fk-ok": 0.01,
        "id-present": 0.05,
        "unknown-fields": 0.05,
    }


@pytest.mark.parametrize(
    ("value", "expected"), [("1%", 0.01), ("2.5 %", 0.025), (0.2, 0.2), ("0.5", 0.5), (1, 1.0)]
)
def test_a_share_is_a_percentage_or_a_fraction(value: object, expected: float) -> None:
    assert share(value) == pytest.approx(expected)
    assert AlertThreshold.model_validate({"max-share": value}).max_share == pytest.approx(expected)


@pytest.mark.parametrize("value", ["0%", "150%", -0.1, 0, "many", True, None])
def test_a_share_out_of_range_or_not_a_number_names_the_field(value: object) -> None:
    with pytest.raises(ConfigError, match="max-share"):
        share(value)


def test_an_aggregate_check_refuses_an_alert_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    text = CONFIG.format(gate_alert="").replace("min-count: 1}", "min-count: 1, alert: {max-share: 1%}}")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="alert"):
        load_gate_config(path)
