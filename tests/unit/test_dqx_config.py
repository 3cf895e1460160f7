"""DQX's rule format without a JVM: translation details, `streaming-dq validate` on DQX files, the docs table."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from streaming_dq.cli.main import app
from streaming_dq.config.dqx import FUNCTIONS, UNSUPPORTED, sql_of, translate
from streaming_dq.config.loader import load_check_file

DOC = Path(__file__).resolve().parents[2] / "docs" / "migrating-from-dqx.md"
RULES = Path(__file__).resolve().parents[1] / "data" / "dqx" / "all_core_functions.yaml"


def one(rule: dict) -> dict:
    (_, check), *rest = translate([rule]).checks
    assert not rest
    return check


def test_criticality_name_filter_metadata_and_for_each_column_translate() -> None:
    rules = [
        {"check": {"function": "is_not_null", "for_each_column": ["a", "b"]}, "name": "present"},
        {
            "criticality": "warn",
            "filter": "x > 1",
            "user_metadata": {"team": "ops"},
            "check": {"function": "is_not_null", "arguments": {"column": "a"}},
        },
        {"criticality": "error", "check": {"function": "is_not_null", "arguments": {"column": "a"}}},
    ]
    out = translate(rules).checks
    assert [(i, c["check-id"], c["severity"]) for i, c in out] == [
        (0, "present_a", "critical"),
        (0, "present_b", "critical"),
        (1, "is_not_null_a", "warning"),
        (2, "is_not_null_a_2", "critical"),
    ]
    assert out[2][1]["filter"] == "x > 1" and out[2][1]["tags"] == ["team=ops"]


def test_limits_and_values_are_read_as_dqx_reads_them() -> None:
    assert sql_of("col_b * 2") == "col_b * 2" and sql_of("12") == "12" and sql_of(3.5) == "3.5"
    assert (
        sql_of("2024-01-05") == "DATE'2024-01-05'"
        and sql_of("2024-01-05 10:00:00") == "TIMESTAMP'2024-01-05 10:00:00'"
    )
    assert (
        one({"check": {"function": "is_equal_to", "arguments": {"column": "s", "value": "'paid'"}}})["value"]
        == "paid"
    )
    assert (
        one({"check": {"function": "is_equal_to", "arguments": {"column": "s", "value": "other"}}})[
            "expression"
        ]
        == "other"
    )
    older = one({"check": {"function": "is_older_than_n_days", "arguments": {"column": "d", "days": 3}}})
    assert older["check"] == "older-than-check" and older["days"] == 4  # DQX: strictly more than 3 days
    grouped = one(
        {
            "check": {
                "function": "is_aggr_not_greater_than",
                "arguments": {"column": "*", "limit": 1, "group_by": ["k"]},
            }
        }
    )
    assert grouped == {
        "check": "group-aggregate-check",
        "function": "count",
        "column": "*",
        "le": 1,
        "group-by": ["k"],
        "severity": "critical",
        "check-id": "is_aggr_not_greater_than",
    }


def test_validate_reports_a_dqx_checks_file_and_its_notes(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["validate", str(RULES)])
    assert result.exit_code == 0, result.output
    assert (
        "(DQX rules)" in result.output
        and "note: checks[31] (is_valid_email -> email-format-check)" in result.output
    )
    as_json = CliRunner().invoke(app, ["validate", "--json", str(RULES)])
    assert '"dialect": "dqx"' in as_json.output
    loaded = load_check_file(RULES)
    assert loaded.dialect == "dqx" and len(loaded.check_set) == len(
        translate(yaml.safe_load(RULES.read_text())).checks
    )

    bad = tmp_path / "bad.yml"
    bad.write_text("- criticality: error\n  check: {function: is_not_nul, arguments: {column: a}}\n")
    failed = CliRunner().invoke(app, ["validate", str(bad)])
    assert failed.exit_code == 2
    assert (
        "bad.yml: checks[0].check.function: unknown DQX function 'is_not_nul'; did you mean 'is_not_null'"
        in failed.output
    )


def test_a_gate_config_takes_dqx_rules_with_dialect_dqx(tmp_path: Path) -> None:
    config = tmp_path / "gate.yaml"
    config.write_text(
        "gate: {name: orders}\n"
        "source: {format: json, path: ./landing, schema: 'id int, amount double'}\n"
        "targets: {pass: ./pass, quarantine: ./quarantine}\n"
        "checkpoint: ./cp\n"
        "dialect: dqx\n"
        "checks:\n"
        "  - {criticality: error, check: {function: is_not_null, arguments: {column: id}}}\n"
        "  - {criticality: warn, check: {function: is_not_less_than, arguments: {column: amount, limit: 0}}}\n"
    )
    result = CliRunner().invoke(app, ["validate", str(config)])
    assert result.exit_code == 0, result.output
    assert "2 checks (2 row, 0 aggregate)" in result.output and "(DQX rules)" in result.output
    misspelt = config.read_text().replace("column: amount", "column: amont")
    config.write_text(misspelt)
    failed = CliRunner().invoke(app, ["validate", str(config)])
    assert failed.exit_code == 2 and "checks[1]" in failed.output and "amont" in failed.output


def test_the_migration_page_lists_every_dqx_function() -> None:
    text = DOC.read_text(encoding="utf-8")
    listed = {line.split("`")[1] for line in text.splitlines() if line.startswith("| `")}
    assert listed == set(FUNCTIONS) | set(UNSUPPORTED)


def test_window_rules_become_window_scoped_checks() -> None:
    loaded = load_check_file(RULES.parent / "window_functions.yaml")
    anomaly, fresh = list(loaded.check_set)
    assert anomaly.check_type == "anomaly-check" and anomaly.scope is not None
    assert anomaly.scope.size.total_seconds() == 86400 and anomaly.windows == 14 and anomaly.min_history == 7
    assert anomaly.band == "stddevs" and anomaly.width == 3.0 and anomaly.severity.value == "warning"
    assert fresh.check_type == "row-count-min-check" and fresh.scope.size.total_seconds() == 3600
    assert fresh.min_count == 5 and fresh.severity.value == "critical"
    assert len(loaded.notes) == 2 and all("event-time" in n for n in loaded.notes)
