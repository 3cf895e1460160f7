"""Catalog table names in a config, without a JVM: how they are written, kept, refused and shown (the catalog
lookups themselves run in tests/integration/test_catalog_tables.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from streaming_dq.config.gate_config import gate_config_json_schema
from streaming_dq.config.loader import load_gate_config
from streaming_dq.config.paths import path_problems
from streaming_dq.exceptions import ConfigError, InternalError
from streaming_dq.tables import DeltaRsWriter
from streaming_dq.tables.catalog import catalog_name, shown


def write_config(tmp_path: Path, **changes: object) -> Path:
    data: dict[str, object] = {
        "gate": {"name": "orders"},
        "source": {"format": "delta", "table": "sales.orders_raw"},
        "checkpoint": "state",
        "targets": {"pass": {"table": "sales.orders_pass"}, "quarantine": "tables/quarantine"},
        "reference-datasets": {"customers": {"format": "delta", "table": "main.sales.customers"}},
        "checks": [{"check": "null-check", "check-id": "id", "columns": ["id"]}],
    }
    data.update(changes)
    path = tmp_path / "gate.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_names_are_kept_as_names_and_paths_are_resolved_beside_them(tmp_path):
    config = load_gate_config(write_config(tmp_path))
    assert catalog_name(config.source.path) == "sales.orders_raw"
    assert catalog_name(config.targets.pass_table) == "sales.orders_pass"
    assert config.targets.quarantine == str(tmp_path / "tables" / "quarantine")  # a path stays a path
    assert catalog_name(config.reference_datasets["customers"].path) == "main.sales.customers"
    assert config.catalog_pending
    pass_target = config.table("pass")
    assert pass_target.name == "sales.orders_pass" and config.table("quarantine").name is None
    # the same spelling works anywhere a table path goes
    config = load_gate_config(write_config(tmp_path, source={"format": "delta", "path": "table:sales.raw"}))
    assert catalog_name(config.source.path) == "sales.raw"


def test_once_looked_up_a_name_stands_for_its_location(tmp_path):
    config = load_gate_config(write_config(tmp_path))
    located = config.with_catalog_locations({"sales.orders_pass": "/warehouse/sales.db/orders_pass"})
    assert not located.catalog_pending
    target = located.table("pass")
    assert (target.uri, target.name) == ("/warehouse/sales.db/orders_pass", "sales.orders_pass")
    assert located.source_file == config.source_file


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        (
            {"targets": {"pass": {"table": "sales/orders"}, "quarantine": "q"}},
            "targets.pass",
            "not a table name",
        ),
        ({"targets": {"pass": {"name": "x"}, "quarantine": "q"}}, "targets.pass", "{table: schema.table}"),
        ({"targets": {"pass": "table:a.b.c.d", "quarantine": "q"}}, "targets.pass", "not a table name"),
        ({"source": {"format": "json", "table": "sales.raw"}}, "source.table", "needs format delta"),
        ({"source": {"format": "delta", "table": "a.b", "path": "x"}}, "source.table", "path or table"),
        (
            {"reference-datasets": {"c": {"format": "delta", "table": ""}}},
            "reference-datasets.c.table",
            "give the table's name",
        ),
    ],
)
def test_a_bad_name_is_refused_naming_the_file_and_the_field(tmp_path, changes, field, words):
    path = write_config(tmp_path, **changes)
    with pytest.raises(ConfigError) as caught:
        load_gate_config(path)
    text = str(caught.value)
    assert str(path) in text and field in text and words in text, text


def test_paths_are_checked_before_spark_starts_and_names_are_not(tmp_path):
    config = load_gate_config(write_config(tmp_path))
    fields = {p.field_path for p in path_problems(config)}
    assert not {"source.path", "targets.pass", "reference-datasets.customers.path"} & fields, fields


def test_delta_rs_refuses_a_name_nobody_looked_up(tmp_path):
    target = load_gate_config(write_config(tmp_path)).table("pass")
    with pytest.raises(InternalError, match=r"sales\.orders_pass was not looked up"):
        DeltaRsWriter().table_schema(target)


def test_the_json_schema_offers_the_table_form_and_people_read_names_as_names():
    schema = gate_config_json_schema()
    targets = schema["$defs"]["TargetsSection"]["properties"]
    assert any(option.get("type") == "object" for option in targets["pass"]["anyOf"]), targets["pass"]
    assert shown("table:sales.orders_pass") == "sales.orders_pass (catalog)"
