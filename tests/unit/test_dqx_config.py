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
    (tmp_path / "landing").mkdir()  # validate checks the source folder, as run does
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


GATE_WITH_SCHEMA = (
    "gate: {name: orders}\n"
    "source: {format: json, path: ./landing, schema: 'order_id string, amount double'}\n"
    "targets: {pass: ./pass, quarantine: ./quarantine}\n"
    "checkpoint: ./cp\n"
)


def test_count_of_star_and_count_if_predicates_load_against_a_declared_schema(tmp_path: Path) -> None:
    """DQX's count examples use ``column: '*'``, and so does docs/checks.md: neither is a column of the
    schema, and neither is a count-if predicate (#27); a misspelt real column is still refused."""
    (tmp_path / "landing").mkdir()  # validate checks the source folder, as run does
    config = tmp_path / "gate.yaml"
    config.write_text(
        GATE_WITH_SCHEMA + "checks:\n"
        "  - {check: group-aggregate-check, check-id: one-per-id, function: count, column: '*',"
        " group-by: [order_id], le: 1}\n"
        "  - {check: aggregate-check, check-id: some-positive, function: count-if, column: 'amount > 0', ge: 1}\n"
        "  - {check: aggregate-check, check-id: volume, function: count, column: '*', ge: 1}\n"
    )
    result = CliRunner().invoke(app, ["validate", str(config)])
    assert result.exit_code == 0, result.output
    dqx = tmp_path / "dqx.yaml"
    dqx.write_text(
        GATE_WITH_SCHEMA + "checks:\n"
        "  - criticality: error\n"
        "    check: {function: is_aggr_not_less_than, arguments: {column: '*', aggr_type: count, limit: 1}}\n"
    )
    result = CliRunner().invoke(app, ["validate", str(dqx)])
    assert result.exit_code == 0, result.output
    config.write_text(config.read_text().replace("group-by: [order_id]", "group-by: [order_idd]"))
    failed = CliRunner().invoke(app, ["validate", str(config)])
    assert failed.exit_code == 2 and "checks[0].group-by[0]: column 'order_idd' is not in source.schema" in (
        failed.output
    )


def test_sql_query_and_sql_expression_take_dqx_s_msg_as_the_report_s_wording() -> None:
    from streaming_dq.config.factory import CheckFactory

    query = one(
        {
            "name": "no_dupes",
            "check": {
                "function": "sql_query",
                "arguments": {
                    "query": "SELECT order_id, count(*) > 1 AS condition FROM {{ input_view }} GROUP BY order_id",
                    "merge_columns": ["order_id"],
                    "condition_column": "condition",
                    "msg": "order id is duplicated",
                },
            },
        }
    )
    assert query["message"] == "order id is duplicated"
    check = CheckFactory.from_dict(query)
    assert check.violation_details(3, 12) == "order id is duplicated: 3 rows the query marks (25.00%)"
    assert "order id is duplicated" not in check.violation_details(0, 12)
    expression = one(
        {
            "check": {
                "function": "sql_expression",
                "arguments": {"expression": "a > 0", "msg": "a must be positive"},
            }
        }
    )
    assert CheckFactory.from_dict(expression).violation_details(1, 4) == "a must be positive: 1 row (25.00%)"


def test_every_dqx_rule_that_cannot_be_translated_is_named_on_a_line_of_its_own(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yml"
    rules.write_text(
        "- criticality: error\n  check: {function: is_not_nul, arguments: {column: a}}\n"
        "- criticality: error\n  check: {function: is_not_null, arguments: {column: a}}\n"
        "- criticality: eror\n  check: {function: is_not_null, arguments: {column: b}}\n"
        "- criticality: error\n  check: {function: is_in_range, arguments: {column: c}}\n"
    )
    failed = CliRunner().invoke(app, ["validate", str(rules)])
    assert failed.exit_code == 2
    lines = [line for line in failed.output.splitlines() if line.startswith(f"{rules}:")]
    assert [line.split(": ", 2)[1] for line in lines] == [
        "checks[0].check.function",
        "checks[2].criticality",
        "checks[3].check.arguments.min_limit",
    ], failed.output


def test_a_job_s_dqx_rules_are_translated_once_and_its_checks_built_once(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Loading validates by building every check; the job's check set reuses those checks (a spy counts the
    real translator and the real factory, which still do the work)."""
    from streaming_dq.config.factory import CheckFactory
    from streaming_dq.config.loader import load_gate_config

    calls = {"translate": 0, "build": 0}
    real_translate, real_build = translate, CheckFactory.config_from_dict

    def counted_translate(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["translate"] += 1
        return real_translate(*args, **kwargs)

    def counted_build(raw):  # type: ignore[no-untyped-def]
        calls["build"] += 1
        return real_build(raw)

    monkeypatch.setattr("streaming_dq.config.dqx.translate", counted_translate)
    monkeypatch.setattr(CheckFactory, "config_from_dict", staticmethod(counted_build))
    config = tmp_path / "gate.yaml"
    config.write_text(
        "gate: {name: orders}\n"
        "source: {format: json, path: ./landing, schema: 'id int, amount double'}\n"
        "targets: {pass: ./pass, quarantine: ./quarantine}\n"
        "checkpoint: ./cp\n"
        "checks:\n"
        "  - {criticality: error, check: {function: is_not_null, arguments: {column: id}}}\n"
        "  - {criticality: warn, check: {function: is_not_less_than, arguments: {column: amount, limit: 0}}}\n"
    )
    loaded = load_gate_config(config)
    first, second = loaded.check_set(), loaded.check_set()
    assert (
        [c.check_id for c in first]
        == [c.check_id for c in second]
        == [
            "is_not_null_id",
            "is_not_less_than_amount",
            "unknown-fields",
        ]
    )
    assert calls == {"translate": 1, "build": 2}
