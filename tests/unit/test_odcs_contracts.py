"""ODCS contracts as checks, without Spark: reading and validating a contract, what each rule maps to, and a gate
config that runs one (#59)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from streaming_dq.cli.main import app
from streaming_dq.config.errors import ConfigErrors
from streaming_dq.config.loader import inspect_gate_config
from streaming_dq.config.odcs import ContractOptions, contract_checks, map_contract, read_contract
from streaming_dq.exceptions import ConfigError

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "tests" / "data" / "odcs-examples").glob("*.odcs.yaml"))
ORDERS_CONTRACT = REPO / "jobs" / "orders" / "orders.odcs.yaml"

#: A property's keys that are constraints of their own (each must become a check or be listed as not executable).
_PROPERTY_RULES = ("required", "enum")


def _expected_places(raw: dict[str, Any], index: int) -> set[str]:
    """Every place in schema object ``index`` that states a rule, read from the raw document by hand."""
    obj = raw["schema"][index]
    where = f"schema[{index}]"
    places = {f"{where}.quality[{q}]" for q in range(len(obj.get("quality") or []))}
    places |= {f"{where}.relationships[{r}]" for r in range(len(obj.get("relationships") or []))}
    properties = obj.get("properties") or []
    keys = sorted(
        (p.get("primaryKeyPosition") or 0, i) for i, p in enumerate(properties) if p.get("primaryKey")
    )
    for i, prop in enumerate(properties):
        at = f"{where}.properties[{i}]"
        places |= {f"{at}.{key}" for key in _PROPERTY_RULES if prop.get(key)}
        # the primary key is one rule, stated at its first column; a key column that may be NULL one more
        if prop.get("primaryKey") and (keys[0][1] == i or not prop.get("required")):
            places.add(f"{at}.primaryKey")
        if prop.get("unique") and keys != [(keys and keys[0][0], i)]:  # a one-column key is its own unique
            places.add(f"{at}.unique")
        places |= {f"{at}.quality[{q}]" for q in range(len(prop.get("quality") or []))}
        places |= {f"{at}.relationships[{r}]" for r in range(len(prop.get("relationships") or []))}
        for key, value in (prop.get("logicalTypeOptions") or {}).items():
            folded = isinstance(value, bool) and key.startswith(
                "exclusive"
            )  # ODCS 3.0: a flag of minimum/maximum
            if not folded and not (key == "uniqueItems" and value is False):
                places.add(f"{at}.logicalTypeOptions.{key}")
    return places


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_rule_of_every_official_example_runs_or_is_listed(path: Path) -> None:
    contract = read_contract(path)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    for index, obj in enumerate(contract.schema_objects()):
        mapping = map_contract(contract, ContractOptions(schema_object=obj["name"]))
        places = {r.where for r in mapping.rules}
        missing = _expected_places(raw, index) - places
        assert not missing, f"{path.name} {obj['name']}: rules dropped in silence: {sorted(missing)}"
        for rule in mapping.rules:
            assert (rule.check is None) != (rule.reason is None), rule
            assert rule.level in (("row", "batch") if rule.check else (None,)), rule
        assert len({r.rule_id for r in mapping.rules}) == len(mapping.rules)
        # every check a rule became is a valid check of the catalog
        _, built, problems = contract_checks(contract, ContractOptions(schema_object=obj["name"]), {})
        assert not problems, [str(p) for p in problems]
        assert [b.check.check_id for b in built] == [r.rule_id for r in mapping.rules if r.check]


def test_the_examples_that_use_3_1_fields_under_3_0_2_are_read_as_3_1_with_a_note() -> None:
    contract = read_contract(REPO / "tests/data/odcs-examples/quality--column-completeness.odcs.yaml")
    assert (contract.api_version, contract.validated_as) == ("v3.0.2", "v3.1.0")
    assert contract.notes == (
        "declares apiVersion v3.0.2 but holds only under the v3.1.0 schema (schema[0].properties[0].quality[0]): "
        "read as v3.1.0",
    )
    assert read_contract(ORDERS_CONTRACT).notes == ()


def _write(tmp_path: Path, doc: dict[str, Any], name: str = "c.odcs.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _contract(
    properties: list[dict[str, Any]], quality: list[dict[str, Any]] | None = None, **top: Any
) -> dict:
    obj: dict[str, Any] = {"name": "orders", "properties": properties}
    if quality:
        obj["quality"] = quality
    return {"apiVersion": "v3.1.0", "kind": "DataContract", "id": "c1", "version": "2.0.0", "status": "active",
            "schema": [obj], **top}  # fmt: skip


def test_a_contract_that_breaks_its_schema_names_the_file_and_each_field(tmp_path: Path) -> None:
    doc = _contract(
        [
            {"name": "id", "logicalType": "text"},
            {"name": "n", "quality": [{"metric": "nullValues", "mustBe": 0, "mustBeLessThan": 2}]},
            {"name": "m", "colour": "red"},
        ]
    )
    doc["kind"] = "Contract"
    path = _write(tmp_path, doc)
    with pytest.raises(ConfigErrors) as info:
        read_contract(path)
    lines = [str(e) for e in info.value.errors]
    assert lines[0] == f"{path}: kind: 'Contract' is not one of ['DataContract']"
    assert lines[1].startswith(f"{path}: schema[0].properties[0].logicalType: 'text' is not one of ['string'")
    assert lines[2] == (
        f"{path}: schema[0].properties[1].quality[0]: a rule takes one operator, not 2 (mustBe, mustBeLessThan)"
    )
    assert lines[3] == f"{path}: schema[0].properties[2]: unknown properties 'colour' (not in the standard)"
    assert len(lines) == 4, lines


def test_an_odcs_2_contract_and_a_missing_api_version_are_refused_in_one_line(tmp_path: Path) -> None:
    for version, hint in (("v2.2.2", "ODCS 2.x is a different format"), (None, "apiVersion None")):
        doc = _contract([{"name": "id"}])
        doc["apiVersion"] = version
        with pytest.raises(ConfigError, match=hint) as info:
            read_contract(_write(tmp_path, doc))
        assert info.value.field_path == "apiVersion"


def _map(tmp_path: Path, doc: dict[str, Any], **options: Any) -> dict[str, Any]:
    mapping = map_contract(read_contract(_write(tmp_path, doc)), ContractOptions(**options))
    return {r.rule_id: r for r in mapping.rules}


def test_library_metrics_become_counts_of_rows_with_the_rules_operator_and_unit(tmp_path: Path) -> None:
    rules = _map(tmp_path, _contract([{"name": "s", "quality": [
        {"id": "nulls", "metric": "nullValues", "mustBeLessThan": 5, "unit": "percent"},
        {"id": "missing", "metric": "missingValues", "mustBe": 0, "arguments": {"missingValues": [None, "", "n/a"]}},
        {"id": "missing-default", "metric": "missingValues", "mustNotBe": 3},
        {"id": "valid", "metric": "invalidValues", "mustBeLessOrEqualTo": 2, "arguments": {"validValues": ["a", "b'c"]}},
        {"id": "pattern", "metric": "invalidValues", "mustNotBeBetween": [1, 4], "arguments": {"pattern": "^[a-z]$"}},
        {"id": "no-args", "metric": "invalidValues", "mustBe": 0},
        {"id": "dups", "metric": "duplicateValues", "mustBeGreaterThan": 1, "unit": "percent"},
    ]}], quality=[
        {"id": "volume", "metric": "rowCount", "mustBeBetween": [10, 20]},
        {"id": "volume-share", "metric": "rowCount", "mustBe": 100, "unit": "percent"},
        {"id": "keys", "metric": "duplicateValues", "mustBe": 0, "arguments": {"properties": ["s", "t"]}},
    ]))  # fmt: skip
    assert rules["nulls"].check["where"] == "`s` IS NULL" and rules["nulls"].check["lt"] == 5
    assert rules["nulls"].check["unit"] == "percent" and rules["nulls"].level == "batch"
    assert rules["missing"].check["where"] == "`s` IS NULL OR `s` IN ('', 'n/a')"
    assert rules["missing-default"].check == {
        **rules["missing-default"].check,
        "where": "`s` IS NULL OR `s` IN ('')",
        "ne": 3,
    }
    assert rules["valid"].check["where"] == "`s` IS NOT NULL AND NOT (`s` IN ('a', 'b\\'c'))"
    assert rules["pattern"].check["where"] == "`s` IS NOT NULL AND NOT (`s` RLIKE '^[a-z]$')"
    assert rules["pattern"].check["not-between"] == [1, 4]
    assert rules["no-args"].reason == "invalidValues needs arguments.validValues or arguments.pattern"
    assert rules["dups"].check["check"] == "sql-metric-check" and rules["dups"].check["gt"] == 1
    assert "count(DISTINCT `s`)" in rules["dups"].check["query"] and "100D *" in rules["dups"].check["query"]
    assert rules["volume"].check == {
        **rules["volume"].check,
        "check": "rows-where-check",
        "between": [10, 20],
    }
    assert "where" not in rules["volume"].check
    assert rules["volume-share"].reason == "unit 'percent' is not one this metric is counted in"
    assert "count(DISTINCT `s`, `t`)" in rules["keys"].check["query"]


def test_sql_rules_read_the_batch_for_object_and_the_column_for_property(tmp_path: Path) -> None:
    rules = _map(tmp_path, _contract([{"name": "amount", "quality": [
        {"id": "q31", "type": "sql", "query": "SELECT count(*) FROM {object} WHERE {property} < 0", "mustBe": 0},
        {"id": "q30", "type": "sql", "query": "SELECT max(${property}) FROM ${object}", "mustBeLessThan": 9},
        {"id": "named", "type": "sql", "query": "select count(*) from orders where amount > 5", "mustBe": 0},
        {"id": "elsewhere", "type": "sql", "query": "SELECT count(*) FROM other", "mustBe": 0},
    ]}], quality=[
        {"id": "object-property", "type": "sql", "query": "SELECT count({property}) FROM {object}", "mustBe": 1},
    ]))  # fmt: skip
    assert rules["q31"].check == {**rules["q31"].check, "check": "sql-metric-check", "eq": 0.0,
        "query": "SELECT count(*) FROM {{ input_view }} WHERE `amount` < 0"}  # fmt: skip
    assert rules["q30"].check["query"] == "SELECT max(`amount`) FROM {{ input_view }}"
    assert "from {{ input_view }} where amount > 5" in rules["named"].check["query"]
    assert (
        rules["elsewhere"].reason
        == "the query reads no {object} (nor FROM orders): it would not judge the batch"
    )
    assert rules["object-property"].reason == "{property} in a rule of the object, not of a property"


def test_properties_become_row_checks_and_one_schema_rule(tmp_path: Path) -> None:
    doc = _contract([
        {"name": "id", "logicalType": "string", "primaryKey": True, "primaryKeyPosition": 1},
        {"name": "line", "logicalType": "integer", "primaryKey": True, "primaryKeyPosition": 2, "required": True},
        {"name": "email", "logicalType": "string", "unique": True,
         "logicalTypeOptions": {"format": "email", "maxLength": 80, "minLength": 3}},
        {"name": "ref", "logicalType": "string", "unique": True,
         "customProperties": [{"property": "streaming-dq.unique-horizon", "value": "7 days"}]},
        {"name": "amount", "logicalType": "number", "logicalTypeOptions": {"exclusiveMinimum": 0, "maximum": 10}},
        {"name": "day", "logicalType": "date", "logicalTypeOptions": {"minimum": "2024-01-01"}},
        {"name": "tags", "logicalType": "array", "logicalTypeOptions": {"maxItems": 3, "uniqueItems": True},
         "items": {"logicalType": "string"}},
        {"name": "at", "logicalType": "time"},
        {"name": "note", "logicalType": "string"},
        {"name": "free"},
    ])  # fmt: skip
    doc["apiVersion"] = "v3.1.0"
    doc["schema"][0]["properties"][8]["quality"] = [{"id": "note-known", "metric": "invalidValues",
        "arguments": {"validValues": ["x", "y"]}, "mustBe": 0}]  # fmt: skip
    rules = _map(tmp_path, doc, unique_horizon=None, extra_columns="allow", severity="warning")
    assert rules["id.not-null"].check["check"] == "null-check"
    assert rules["line.required"].check["columns"] == ["line"]
    assert rules["orders.primaryKey"].check == {**rules["orders.primaryKey"].check, "check": "unique-key-check",
                                                "columns": ["id", "line"]}  # fmt: skip
    assert rules["orders.primaryKey"].where == "schema[0].properties[0].primaryKey"
    assert rules["email.unique"].check["columns"] == ["email"] and rules["email.unique"].level == "row"
    assert "horizon" not in rules["email.unique"].check and rules["ref.unique"].check["horizon"] == "7 days"
    assert rules["email.format"].check["check"] == "email-format-check"
    assert rules["email.maxLength"].check["max-length"] == 80
    assert (rules["amount.exclusiveMinimum"].check["inclusive"], rules["amount.maximum"].check["inclusive"]) == (
        False, True)  # fmt: skip
    assert rules["day.minimum"].check["check"] == "date-min-check"
    assert rules["tags.maxItems"].check["expression"] == "size(`tags`) <= 3"
    assert rules["tags.nested"].reason is not None
    assert rules["at.logicalType"].reason == "Spark has no time-of-day type to check it as"
    assert rules["note-known"].check["where"] == "`note` IS NOT NULL AND NOT (`note` IN ('x', 'y'))"
    schema = rules["orders.schema"].check
    assert schema["expected-schema"] == {"id": "string", "line": "any-integer", "email": "string",
        "ref": "string", "amount": "any-number", "day": "date", "tags": "array", "at": "any", "note": "string",
        "free": "any"}  # fmt: skip
    assert schema["strict"] is False and schema["severity"] == "warning"
    assert all("contract=c1" in r.check["tags"] and "contract-version=2.0.0" in r.check["tags"]
               for r in rules.values() if r.check)  # fmt: skip


def test_custom_rules_of_this_gate_run_other_engines_and_text_are_listed_and_severity_carries(
    tmp_path: Path,
) -> None:
    rules = _map(tmp_path, _contract([{"name": "amount"}], quality=[
        {"id": "mean", "type": "custom", "engine": "streaming-dq", "severity": "warning", "dimension": "accuracy",
         "tags": ["finance"], "implementation": "check: mean-check\ncolumn: amount\nbetween: [1, 9]\n"},
        {"id": "soda", "type": "custom", "engine": "soda", "implementation": "type: row_count"},
        {"name": "Amounts include VAT", "type": "text", "description": "VAT included"},
        {"id": "odd", "metric": "rowCount", "mustBeGreaterThan": 0, "severity": "catastrophic"},
    ]))  # fmt: skip
    mean = rules["mean"].check
    assert (mean["check"], mean["check-id"], mean["severity"], rules["mean"].level) == (
        "mean-check",
        "mean",
        "warning",
        "batch",
    )
    assert mean["tags"] == [
        "contract=c1",
        "contract-version=2.0.0",
        "contract-rule=mean",
        "dimension=accuracy",
        "finance",
    ]
    assert rules["soda"].reason == "engine 'soda' is another tool's: not executable here"
    assert rules["Amounts-include-VAT"].reason == "a text rule is for people: not executable"
    assert rules["odd"].check["severity"] == "critical"


def _gate_config(tmp_path: Path, contract: Path, extra: str = "", checks: str = "") -> Path:
    (tmp_path / "landing").mkdir(exist_ok=True)
    text = f"""
gate: {{name: g}}
source: {{format: json, path: landing, schema: "order_id STRING, amount DOUBLE"}}
checkpoint: state
targets: {{pass: t/pass, quarantine: t/quarantine}}
contract: {{path: {contract.name}{extra}}}
{checks}
"""
    path = tmp_path / "gate.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_gate_config_runs_its_contract_beside_its_checks_and_validate_names_the_contract(
    tmp_path: Path,
) -> None:
    contract = _write(tmp_path, _contract([{"name": "order_id", "required": True},
        {"name": "amount", "quality": [{"type": "text"}]}]))  # fmt: skip
    config = _gate_config(
        tmp_path, contract, checks="checks: [{check: null-check, check-id: mine, columns: [amount]}]"
    )
    loaded, problems = inspect_gate_config(config)
    assert not problems and loaded is not None
    ids = [c.check_id for c in loaded.check_set()]
    assert ids[:3] == ["mine", "order_id.required", "orders.schema"]
    assert ids[3:] == ["unknown-fields"]  # the JSON source's own
    done = CliRunner().invoke(app, ["validate", str(config)])
    assert done.exit_code == 0, done.output
    assert (
        "contract 'c1' v2.0.0, schema 'orders': 2 of 3 rules run as checks, 1 not executable" in done.output
    )
    as_json = json.loads(CliRunner().invoke(app, ["validate", str(config), "--json"]).output)
    assert (as_json["contract"]["id"], as_json["contract"]["version"], as_json["contract"]["executable"]) == (
        "c1",
        "2.0.0",
        2,
    )
    listed = json.loads(CliRunner().invoke(app, ["contract", str(config), "--json"]).output)["contract"][
        "mapping"
    ]
    assert [m["rule"] for m in listed] == ["order_id.required", "orders.schema", "amount.text"]
    assert listed[2] == {"rule": "amount.text", "where": "schema[0].properties[1].quality[0]", "kind": "text",
                         "executable": False, "reason": "a text rule is for people: not executable"}  # fmt: skip
    text = CliRunner().invoke(app, ["contract", str(config)], env={"COLUMNS": "200"}).output
    assert "order_id.required" in text and "not executable: a text rule is for people" in text


def test_contract_problems_name_the_contract_file_and_the_rule(tmp_path: Path) -> None:
    contract = _write(tmp_path, _contract([{"name": "order_id", "required": True}], quality=[
        {"id": "mine", "type": "custom", "engine": "streaming-dq", "implementation": {"check": "mean-chek"}},
    ]))  # fmt: skip
    config = _gate_config(
        tmp_path, contract, checks="checks: [{check: null-check, check-id: mine, columns: [amount]}]"
    )
    _, problems = inspect_gate_config(config)
    assert [(p.source, p.field_path) for p in problems] == [(str(contract), "schema[0].quality[0].check")]
    assert "did you mean 'mean-check'" in problems[0].reason
    two = _gate_config(tmp_path, _write(tmp_path, _contract([{"name": "x"}, {"name": "y"}]) | {
        "schema": [{"name": "a"}, {"name": "b"}]}, "two.yaml"), ", schema: c")  # fmt: skip
    _, problems = inspect_gate_config(two)
    assert [p.reason for p in problems] == ["the contract has no schema object 'c'"]
    bare = tmp_path / "bare.yaml"
    bare.write_text(
        _gate_config(tmp_path, contract).read_text().replace(f"contract: {{path: {contract.name}}}", "")
    )
    _, problems = inspect_gate_config(bare)
    assert [(p.field_path, p.reason) for p in problems] == [
        ("checks", "give at least one check, or a contract: whose rules are the checks")]  # fmt: skip
