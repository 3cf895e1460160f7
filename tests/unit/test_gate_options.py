"""The gate's options are described once (#43): ``QualityGate``'s option keywords are ``GateOptions.of``'s, each
described in its docstring, and the gate's own docstring names only what is not an option."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from streaming_dq.exceptions import ConfigError
from streaming_dq.sink import GateOptions, QualityGate
from streaming_dq.sink.options import GateKeywords


def _keywords_of_of() -> list[str]:
    params = inspect.signature(GateOptions.of).parameters
    return [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]


def _documented(doc: str) -> list[str]:
    args = doc.split("Args:", 1)[1].split("Raises:", 1)[0]
    return re.findall(r"^\s{4}(\w+): ", args, re.M)


def test_the_gate_s_option_keywords_are_those_of_gate_options_of() -> None:
    assert list(GateKeywords.__annotations__) == _keywords_of_of()
    assert GateKeywords.__required_keys__ == frozenset({"pass_table", "quarantine_table"})
    gate_params = inspect.signature(QualityGate.__init__).parameters
    assert gate_params["option_keywords"].kind is inspect.Parameter.VAR_KEYWORD
    assert not set(gate_params) & set(_keywords_of_of())  # no option is spelled again on the gate


def test_every_option_is_described_once_on_gate_options_of() -> None:
    documented = _documented(inspect.getdoc(GateOptions.of) or "")
    assert documented == ["name", *_keywords_of_of()]
    gate_doc = QualityGate.__doc__ or ""
    for option in _keywords_of_of():
        assert not re.search(rf"^\s+{option}: ", gate_doc, re.M), option


def test_a_misspelt_option_keyword_is_refused_before_anything_runs(tmp_path) -> None:
    from streaming_dq.config.check_set import CheckSet

    checks = CheckSet.from_dicts([{"check": "null-check", "check-id": "id-present", "columns": ["id"]}])
    with pytest.raises(TypeError, match="evnt_time"):
        QualityGate("g", checks, pass_table=str(tmp_path / "p"), quarantine_table=str(tmp_path / "q"),
                    evnt_time="ts")  # type: ignore[call-arg]  # fmt: skip
    with pytest.raises(ConfigError, match="routing"):
        QualityGate("g", checks, pass_table=str(tmp_path / "p"), quarantine_table=str(tmp_path / "q"),
                    routing="sideways")  # type: ignore[typeddict-item]  # fmt: skip


def _documented_table() -> list[tuple[str, str, str]]:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "streaming.md").read_text(encoding="utf-8")
    block = doc.split("<!-- gate options: keyword, config field -->", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in block.splitlines() if line.startswith("| `")]
    return [tuple(cell.strip().strip("`") for cell in row.split("|")[1:4]) for row in rows]  # type: ignore[misc]


def _config_field(path: str) -> dict[str, Any]:
    """The JSON Schema of a gate config field, by its dotted YAML path."""
    from streaming_dq.config.gate_config import GateConfig

    schema = GateConfig.model_json_schema(by_alias=True)
    node: dict[str, Any] = schema
    for part in path.split("."):
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
        for option in node.get("anyOf", ()):  # an optional section: its object form
            if "$ref" in option:
                node = schema["$defs"][option["$ref"].rsplit("/", 1)[1]]
        node = node["properties"][part]
    return node


def test_the_docs_option_table_is_the_code_s() -> None:
    table = _documented_table()
    assert [keyword for keyword, _, _ in table] == _keywords_of_of()
    for keyword, field, _ in table:
        assert _config_field(field) is not None, (
            keyword,
            field,
        )  # raises KeyError for a field the config lacks
    defaults = {k: p.default for k, p in inspect.signature(GateOptions.of).parameters.items()}
    documented = {keyword: default for keyword, _, default in table}
    assert documented["timezone"] == defaults["timezone"] == "UTC"
    assert documented["malformed_column"] == defaults["malformed_column"]
    assert documented["driver_commit_rows"] == f"{defaults['driver_commit_rows']:,}"
    assert documented["reopen_horizon"] == f"{defaults['reopen_horizon'].days} days"
    assert documented["on_aggregate_failure"] == defaults["on_aggregate_failure"]
    assert documented["writer"] == defaults["writer"] and documented["routing"] == defaults["routing"]
    assert documented["late_data"] == defaults["late_data"]
