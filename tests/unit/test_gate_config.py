"""Gate config files: models, ${ENV} expansion, relative paths, and errors that name the file and field path."""

from __future__ import annotations

import json
import textwrap
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from streaming_dq.config.errors import ConfigErrors
from streaming_dq.config.fields import Trigger, ddl_columns
from streaming_dq.config.gate_config import gate_config_json_schema
from streaming_dq.config.loader import (
    expand_env,
    inspect_gate_config,
    load_check_file,
    load_gate_config,
    resolve_path,
)
from streaming_dq.config.registry import CheckConfigRegistry
from streaming_dq.core.severity import Severity
from streaming_dq.exceptions import ConfigError, InvalidSeverityLevelError, UnknownCheckTypeError

REPO = Path(__file__).resolve().parents[2]
ORDERS = REPO / "jobs" / "orders" / "orders.yaml"
SENSORS = REPO / "jobs" / "sensors" / "sensors.yaml"

MINIMAL = """\
gate: {name: orders, event-time: order_ts}
source:
  format: json
  path: landing
  schema: "order_id STRING, order_ts TIMESTAMP, customer_id STRING, amount DOUBLE"
checkpoint: state
targets: {pass: tables/pass, quarantine: tables/quarantine}
checks:
  - {check: null-check, check-id: order-id-present, columns: [order_id]}
"""


def write(tmp_path: Path, text: str, name: str = "gate.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems_of(path: Path) -> list[tuple[str | None, str | None, str]]:
    config, problems = inspect_gate_config(path)
    assert config is None
    return [(p.source, p.field_path, p.reason) for p in problems]


def only_problem(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_gate_config(path)
    assert not isinstance(info.value, ConfigErrors), str(info.value)
    assert info.value.source == str(path)
    return info.value


# --- happy paths -------------------------------------------------------------------------------------------------


def test_orders_job_config_loads_with_resolved_paths_checks_and_profiles() -> None:
    config = load_gate_config(ORDERS)
    base = ORDERS.parent
    assert config.gate.name == "orders"
    assert config.gate.event_time == "order_ts"
    assert config.gate.timezone == "Europe/Berlin"
    assert config.source_file == str(ORDERS)
    assert config.source.path == str(base / "data" / "landing" / "orders")
    assert config.checkpoint == str(base / "data" / "state" / "orders")
    assert config.targets.paths() == {
        "pass": str(base / "data" / "tables" / "orders_pass"),
        "quarantine": str(base / "data" / "tables" / "orders_quarantine"),
        "results": str(base / "data" / "tables" / "orders_results"),
        "metrics": str(base / "data" / "tables" / "orders_metrics"),
    }
    assert config.source.trigger == Trigger()
    assert config.source.trigger.to_spark() == {"availableNow": True}
    assert config.source.max_files_per_trigger == 1
    customers = config.reference_datasets["customers"]
    assert customers.path == str(base / "data" / "reference" / "customers.csv")
    assert customers.options == {"header": "true"}  # YAML true becomes Spark's "true"
    assert config.fail_levels == [Severity.CRITICAL]
    assert [p.name for p in config.profile_objects()] == ["Christmas 2025", "Weekends"]
    check_set = config.check_set()
    assert [c.check_id for c in check_set][:3] == ["order-id-present", "order-ts-present", "customer-present"]
    assert len(check_set) == len(config.checks) + 1  # and the built-in unknown-fields check
    assert config.metrics.prometheus is not None and config.metrics.prometheus.port == 9108
    assert config.spark.conf == {"spark.sql.shuffle.partitions": "2"}


def test_sensors_job_config_loads() -> None:
    config = load_gate_config(SENSORS)
    assert config.gate.name == "sensors"
    assert {c.check_type for c in config.check_set()} >= {
        "numeric-between-check",
        "unique-key-check",
        "completeness-ratio-check",
        "freshness-check",
    }


KAFKA = """\
gate: {name: payments, event-time: EVENT_TIME}
source:
  format: kafka
  bootstrap-servers: 127.0.0.1:9092
  subscribe: payments
  value: {format: json, schema: "payment_id STRING, amount DOUBLE"}
  key: {format: avro, avro-schema-file: schemas/key.avsc}
checkpoint: state
targets: {pass: tables/pass, quarantine: tables/quarantine}
checks:
  - {check: null-check, check-id: id-present, columns: [payment_id]}
  - {check: numeric-max-check, check-id: partitions-known, columns: [kafka_partition], max-value: 11}
"""


def test_a_kafka_source_offers_the_message_coordinates_to_checks_and_event_time(tmp_path: Path) -> None:
    config = load_gate_config(write(tmp_path, KAFKA.replace("EVENT_TIME", "kafka_timestamp")))
    assert config.source.columns() is not None and config.source.columns()["kafka_timestamp"] == "timestamp"
    assert config.source.key is not None and config.source.key.avro_schema_file == str(
        tmp_path / "schemas" / "key.avsc"
    )  # resolved against the config folder, like every path
    assert config.source.path is None
    error = only_problem(write(tmp_path, KAFKA.replace("EVENT_TIME", "kafka_offset"), "offset.yaml"))
    assert (error.field_path, error.reason) == (
        "gate.event-time",
        "column 'kafka_offset' is bigint, not a timestamp",
    )


def test_defaults_of_a_minimal_config(tmp_path: Path) -> None:
    config = load_gate_config(write(tmp_path, MINIMAL))
    assert config.on_aggregate_failure == "quarantine-batch"
    assert config.schema_drift is None
    assert config.targets.writer == "auto"
    assert config.targets.results is None
    assert config.spark.master == "local[2]"
    assert config.metrics.prometheus is None
    assert config.source.malformed_column == "_corrupt_record"
    assert config.gate.timezone == "UTC"
    assert (config.gate.late_data, config.gate.horizon) == ("count", timedelta(days=7))


def test_paths_resolve_against_the_config_folder_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, MINIMAL.replace("pass: tables/pass", "pass: s3a://bucket/pass"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_gate_config(Path("..") / "gate.yaml")
    assert config.source.path == str(tmp_path / "landing")
    assert config.targets.quarantine == str(tmp_path / "tables" / "quarantine")
    assert config.targets.pass_table == "s3a://bucket/pass"


def test_a_hive_catalog_s_warehouse_and_metastore_sit_beside_the_config_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#42: the embedded metastore followed the current folder, so the same config run from another folder
    found an empty catalog."""
    hive = MINIMAL + "spark:\n  conf: {spark.sql.catalogImplementation: hive}\n"
    write(tmp_path, hive)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    conf = load_gate_config(Path("..") / "gate.yaml").spark.conf
    assert conf["spark.sql.warehouse.dir"] == str(tmp_path / "spark-warehouse")
    assert conf["spark.hadoop.javax.jdo.option.ConnectionURL"] == (
        f"jdbc:derby:;databaseName={tmp_path / 'metastore_db'};create=true"
    )
    # given places are kept (a relative warehouse resolved like every path); no catalog, nothing added
    given = hive.replace(
        "hive}", 'hive, spark.sql.warehouse.dir: wh, spark.hadoop.javax.jdo.option.ConnectionURL: "jdbc:x"}'
    )
    conf = load_gate_config(write(tmp_path, given, "given.yaml")).spark.conf
    assert (conf["spark.sql.warehouse.dir"], conf["spark.hadoop.javax.jdo.option.ConnectionURL"]) == (
        str(tmp_path / "wh"), "jdbc:x",
    )  # fmt: skip
    assert load_gate_config(write(tmp_path, MINIMAL, "plain.yaml")).spark.conf == {}


def test_resolve_path_keeps_absolute_paths_and_uris_and_expands_home() -> None:
    base = Path("/jobs/orders")
    assert resolve_path("/data/x", base) == "/data/x"
    assert resolve_path("../shared/x", base) == "/jobs/shared/x"
    assert resolve_path("file:/tmp/x", base) == "file:/tmp/x"
    assert resolve_path("~/x", base) == str(Path.home() / "x")


def test_env_variables_defaults_escapes_and_config_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DQ_LANDING", "/mnt/landing")
    monkeypatch.delenv("DQ_UNSET", raising=False)
    text = (
        MINIMAL.replace("path: landing", "path: ${DQ_LANDING}/orders")
        .replace("checkpoint: state", "checkpoint: ${DQ_UNSET:-state}/cp")
        .replace("pass: tables/pass", "pass: '${CONFIG_DIR}/out/pass'")
        .replace("name: orders", "name: 'orders-$${NOT_EXPANDED}x'")
    )
    config, problems = inspect_gate_config(write(tmp_path, text))
    # the escaped ${...} is kept literally, which the gate name pattern then refuses
    assert [(p.field_path, p.reason[:31]) for p in problems] == [
        ("gate.name", "String should match pattern '^[")
    ]
    config = load_gate_config(write(tmp_path, text.replace("'orders-$${NOT_EXPANDED}x'", "orders")))
    assert config.source.path == "/mnt/landing/orders"
    assert config.checkpoint == str(tmp_path / "state" / "cp")
    assert config.targets.pass_table == str(tmp_path / "out" / "pass")
    assert expand_env({"a": ["x$${Y}"]}, variables={}) == ({"a": ["x${Y}"]}, [])


def test_an_unset_variable_without_default_names_its_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DQ_NOT_SET", raising=False)
    error = only_problem(
        write(tmp_path, MINIMAL.replace("checkpoint: state", "checkpoint: ${DQ_NOT_SET}/cp"))
    )
    assert error.field_path == "checkpoint"
    assert (
        error.reason
        == "environment variable 'DQ_NOT_SET' is not set (write ${DQ_NOT_SET:-default} to give a default)"
    )


def test_an_unset_secret_is_never_offered_a_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#42: the hint suggested writing a default secret into the file."""
    monkeypatch.delenv("DQ_NO_SECRET", raising=False)
    monkeypatch.delenv("DQ_NO_REGION", raising=False)
    text = (
        MINIMAL
        + "storage-options:\n  AWS_SECRET_ACCESS_KEY: ${DQ_NO_SECRET}\n  AWS_REGION: ${DQ_NO_REGION}\n"
    )
    problems = {field: reason for _, field, reason in problems_of(write(tmp_path, text))}
    assert problems["storage-options.AWS_SECRET_ACCESS_KEY"] == (
        "environment variable 'DQ_NO_SECRET' is not set: it holds a secret, so set DQ_NO_SECRET in the job's "
        "environment (never a default in the file)"
    )
    assert problems["storage-options.AWS_REGION"].endswith(
        "(write ${DQ_NO_REGION:-default} to give a default)"
    )


def test_processing_time_trigger(tmp_path: Path) -> None:
    text = MINIMAL.replace("path: landing", "path: landing\n  trigger: {processing-time: 10 seconds}")
    config = load_gate_config(write(tmp_path, text))
    assert config.source.trigger == Trigger("10 seconds")
    assert config.source.trigger.to_spark() == {"processingTime": "10 seconds"}
    assert config.with_trigger(Trigger()).source.trigger.available_now
    assert config.with_trigger(Trigger()).source_file == config.source_file


def test_ddl_columns_reads_names_and_types_without_a_jvm() -> None:
    assert ddl_columns("a STRING, `b c` DECIMAL(10, 2), m MAP<STRING, INT>, s STRUCT<x: INT, y: STRING>") == [
        ("a", "string"),
        ("b c", "decimal"),
        ("m", "map"),
        ("s", "struct"),
    ]
    with pytest.raises(ValueError, match="'DOUBEL' is not a Spark SQL type"):
        ddl_columns("a DOUBEL")


# --- every kind of error names the file and the field path ------------------------------------------------------


def test_unknown_key_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL.replace("path: landing", "path: landing\n  max-file-per-trigger: 1"))
    error = only_problem(path)
    assert error.field_path == "source.max-file-per-trigger"
    assert error.reason == "unknown key 'max-file-per-trigger' (did you mean 'max-files-per-trigger'?)"
    assert str(error) == f"{path}: source.max-file-per-trigger: {error.reason}"


def test_unknown_top_level_key(tmp_path: Path) -> None:
    error = only_problem(write(tmp_path, MINIMAL + "fail-level: [critical]\n"))
    assert (error.field_path, error.reason) == (
        "fail-level",
        "unknown key 'fail-level' (did you mean 'fail-levels'?)",
    )


def test_bad_check_parameter_names_the_check_and_parameter(tmp_path: Path) -> None:
    text = MINIMAL + "  - {check: row-count-min-check, check-id: volume, min-count: -1}\n"
    error = only_problem(write(tmp_path, text))
    assert error.field_path == "checks[1].min-count"
    assert "greater than or equal to 0" in error.reason


def test_unknown_check_parameter(tmp_path: Path) -> None:
    text = MINIMAL + "  - {check: null-check, check-id: x, column: [order_id]}\n"
    problems = problems_of(write(tmp_path, text))
    assert ("checks[1].column", "unknown key 'column' (did you mean 'columns'?)") in [
        (f, r) for _, f, r in problems
    ]


def test_bad_check_severity(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL.replace("columns: [order_id]}", "columns: [order_id], severity: fatal}"))
    error = only_problem(path)
    assert isinstance(error, InvalidSeverityLevelError)
    assert error.field_path == "checks[0].severity"


def test_bad_fail_level(tmp_path: Path) -> None:
    error = only_problem(write(tmp_path, MINIMAL + "fail-levels: [critical, fatal]\n"))
    assert error.field_path == "fail-levels[1]"
    assert "invalid severity 'fatal'" in error.reason


def test_unknown_check_type_with_suggestion(tmp_path: Path) -> None:
    error = only_problem(write(tmp_path, MINIMAL.replace("check: null-check", "check: null-chek")))
    assert isinstance(error, UnknownCheckTypeError)
    assert (error.field_path, error.reason) == (
        "checks[0].check",
        "unknown check 'null-chek' (did you mean 'null-check'?)",
    )


def test_duplicate_check_id(tmp_path: Path) -> None:
    text = MINIMAL + "  - {check: null-check, check-id: order-id-present, columns: [amount]}\n"
    error = only_problem(write(tmp_path, text))
    assert error.field_path == "checks[1].check-id"
    assert "duplicate check-id 'order-id-present' (also checks[0])" in error.reason


def test_bad_profile_date(tmp_path: Path) -> None:
    text = MINIMAL + textwrap.dedent(
        """\
        profiles:
          - type: holiday
            name: Xmas
            start-date: 2025-12-20
            end-date: 2025-13-05
            rules: [{select: {check-id: order-id-present}, severity: warning}]
        """
    )
    error = only_problem(write(tmp_path, text))
    assert error.field_path == "profiles[0].end-date"
    assert "2025-13-05" in error.reason


def test_bad_profile_rule(tmp_path: Path) -> None:
    text = MINIMAL + "profiles: [{type: holiday, name: X, start-date: 2025-12-20, end-date: 2025-12-21,"
    text += " rules: [{select: {tag: a}, metric-multiplier: 0}]}]\n"
    error = only_problem(write(tmp_path, text))
    assert error.field_path == "profiles[0].rules[0].metric-multiplier"


def test_bad_trigger(tmp_path: Path) -> None:
    error = only_problem(write(tmp_path, MINIMAL.replace("path: landing", "path: landing\n  trigger: once")))
    assert error.field_path == "source.trigger"
    assert error.reason.startswith("trigger must be 'available-now' or {processing-time: '10 seconds'}")
    error = only_problem(
        write(tmp_path, MINIMAL.replace("path: landing", "path: landing\n  trigger: {processing-time: soon}"))
    )
    assert (error.field_path, "'soon'" in error.reason) == ("source.trigger", True)


@pytest.mark.parametrize(
    ("replace", "by", "field", "reason"),
    [
        (
            "format: json",
            "format: jsonl",
            "source.format",
            "expected 'json', 'csv', 'parquet', 'orc', 'text', 'delta' or 'kafka'",
        ),
        (
            "amount DOUBLE",
            "amount DOUBEL",
            "source.schema",
            "column amount: 'DOUBEL' is not a Spark SQL type",
        ),
        (
            "event-time: order_ts",
            "event-time: order_ts, timezone: Mars/Base",
            "gate.timezone",
            "unknown time zone",
        ),
        (
            "event-time: order_ts",
            "event-time: order_ts, late-data: reopen, reopen-horizon: a fortnight",
            "gate.reopen-horizon",
            "invalid duration 'a fortnight'",
        ),
        ("targets: {pass: tables/pass, ", "targets: {", "targets.pass", "missing required key"),
        ("name: orders", "name: 'my gate'", "gate.name", "String should match pattern"),
        (
            "path: landing\n",
            "path: landing\n  max-files-per-trigger: 0\n",
            "source.max-files-per-trigger",
            "expected",
        ),
    ],
)
def test_section_errors_name_the_field(
    tmp_path: Path, replace: str, by: str, field: str, reason: str
) -> None:
    assert replace in MINIMAL
    error = only_problem(write(tmp_path, MINIMAL.replace(replace, by)))
    assert error.field_path == field
    assert error.reason.startswith(reason) or reason in error.reason


@pytest.mark.parametrize(
    ("extra", "field", "reason"),
    [
        (
            "  - {check: null-check, check-id: x, columns: [amout]}\n",
            "checks[1].columns[0]",
            "column 'amout' is not in source.schema",
        ),
        (
            "  - {check: foreign-key-row-check, check-id: fk, column: customer_id, reference-dataset: customers,"
            " reference-column: id}\n",
            "checks[1].reference-dataset",
            "reference dataset 'customers' is not in reference-datasets (none configured)",
        ),
        (
            "profiles: [{type: recurring, name: W, weekdays: [sat], rules: [{select: {tag: nope}, disable: true}]}]\n",
            "profiles[0].rules[0].select",
            "selects no configured check",
        ),
    ],
)
def test_cross_section_errors(tmp_path: Path, extra: str, field: str, reason: str) -> None:
    error = only_problem(write(tmp_path, MINIMAL + extra))
    assert (error.field_path, error.reason) == (field, reason)


def test_event_time_must_be_a_timestamp_column_of_the_schema(tmp_path: Path) -> None:
    error = only_problem(write(tmp_path, MINIMAL.replace("event-time: order_ts", "event-time: order_id")))
    assert (error.field_path, error.reason) == (
        "gate.event-time",
        "column 'order_id' is string, not a timestamp",
    )
    error = only_problem(write(tmp_path, MINIMAL.replace("event-time: order_ts", "event-time: ts")))
    assert (error.field_path, error.reason) == ("gate.event-time", "column 'ts' is not in source.schema")


def test_profiles_need_an_event_time(tmp_path: Path) -> None:
    text = MINIMAL.replace("{name: orders, event-time: order_ts}", "{name: orders}")
    text += "profiles: [{type: recurring, name: W, weekdays: [sat], rules: [{select: {tag: a}}]}]\n"
    text = text.replace("columns: [order_id]}", "columns: [order_id], tags: [a]}")
    error = only_problem(write(tmp_path, text))
    assert error.field_path == "profiles"


def test_a_window_scoped_check_needs_an_event_time(tmp_path: Path) -> None:
    text = MINIMAL.replace("{name: orders, event-time: order_ts}", "{name: orders}")
    text += "  - {check: row-count-min-check, check-id: daily, min-count: 800, scope: {window: 1 day}}\n"
    error = only_problem(write(tmp_path, text))
    assert (error.field_path, error.reason) == (
        "checks[1].scope",
        "a window-scoped check needs gate.event-time",
    )
    config = load_gate_config(
        write(tmp_path, text.replace("{name: orders}", "{name: orders, event-time: order_ts}"))
    )
    assert [c.check_id for c in config.check_set()] == ["order-id-present", "daily", "unknown-fields"]


def test_a_json_source_needs_a_schema_and_targets_must_differ(tmp_path: Path) -> None:
    text = MINIMAL.replace(
        '  schema: "order_id STRING, order_ts TIMESTAMP, customer_id STRING, amount DOUBLE"\n', ""
    )
    text = text.replace("event-time: order_ts", "event-time: null").replace(
        "quarantine: tables/quarantine", "quarantine: tables/pass"
    )
    fields = [f for _, f, _ in problems_of(write(tmp_path, text))]
    assert fields == ["source.schema", "targets.quarantine"]


def test_every_problem_is_reported_not_only_the_first(tmp_path: Path) -> None:
    text = (
        MINIMAL.replace("format: json", "format: jsonl")
        .replace("check: null-check", "check: nul-check")
        .replace("checkpoint: state", "checkpoint: state\nfail-levels: [fatal]")
    )
    text += "  - {check: null-check, check-id: b, columns: [x], severity: high}\n"
    path = write(tmp_path, text)
    with pytest.raises(ConfigErrors) as info:
        load_gate_config(path)
    assert [(e.source, e.field_path) for e in info.value.errors] == [
        (str(path), "source.format"),
        (str(path), "fail-levels[0]"),
        (str(path), "checks[0].check"),
        (str(path), "checks[1].severity"),
    ]


def test_yaml_syntax_errors_and_duplicate_keys_name_the_line(tmp_path: Path) -> None:
    error = only_problem(write(tmp_path, MINIMAL + "checks: []\n"))
    assert error.field_path == "line 10, column 1"
    assert "duplicate key 'checks'" in error.reason
    # #42: an unclosed `{` was reported on the next line only, with no column: both places are named
    error = only_problem(write(tmp_path, "gate: {name: orders\nsource: [\n"))
    assert error.field_path == "line 2, column 7"
    assert error.reason == (
        "invalid YAML: expected ',' or '}', but got ':' (while parsing a flow mapping that starts at line 1, "
        "column 7)"
    )


def test_missing_file_and_non_mapping(tmp_path: Path) -> None:
    assert only_problem(tmp_path / "absent.yaml").reason == "no such file"
    assert "must be a mapping" in only_problem(write(tmp_path, "- a\n- b\n")).reason


# --- checks files (streaming-dq check) -----------------------------------------------------------------------------


def test_check_file_accepts_a_list_sparkdq_form_or_a_gate_config(tmp_path: Path) -> None:
    listed = load_check_file(write(tmp_path, "- {check: null-check, check-id: a, columns: [x]}\n", "l.yaml"))
    assert [c.check_id for c in listed.check_set] == ["a"] and listed.config is None
    sparkdq = load_check_file(
        write(tmp_path, "checks:\n  - {check: null-check, check-id: a, columns: [x]}\n", "s.yaml")
    )
    assert len(sparkdq.check_set) == 1
    gate = load_check_file(ORDERS)
    assert gate.config is not None and len(gate.check_set) == len(gate.config.checks) + 1  # + unknown-fields
    with pytest.raises(ConfigError) as info:
        load_check_file(write(tmp_path, "checks: []\nextra: 1\n", "e.yaml"))
    assert info.value.field_path == "extra"


# --- JSON Schema ---------------------------------------------------------------------------------------------------


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref"] + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_json_schema_covers_the_sections_and_every_registered_check() -> None:
    schema = json.loads(json.dumps(gate_config_json_schema()))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert set(schema["required"]) == {"gate", "source", "checkpoint", "targets"}
    assert schema["anyOf"] == [{"required": ["checks"]}, {"required": ["contract"]}]
    assert set(load_gate_config(ORDERS).model_dump(by_alias=True)) == set(schema["properties"])
    for ref in _refs(schema):
        assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in schema["$defs"], ref
    variants = schema["properties"]["checks"]["items"]["oneOf"]
    names = [
        schema["$defs"][v["$ref"].removeprefix("#/$defs/")]["properties"]["check"]["const"] for v in variants
    ]
    assert names == CheckConfigRegistry.names()
    null_check = schema["$defs"]["check-null-check"]
    assert set(null_check["required"]) == {"check", "check-id", "columns"}
    assert null_check["additionalProperties"] is False
    trigger = schema["$defs"]["SourceSection"]["properties"]["trigger"]
    assert trigger["oneOf"][0] == {
        "const": "available-now",
        "description": "Drain what the source holds, then stop.",
    }


# --- undeclared fields (#12 item 2) -------------------------------------------------------------------------------


def test_a_json_source_gets_the_built_in_unknown_fields_check_by_default(tmp_path: Path) -> None:
    config = load_gate_config(write(tmp_path, MINIMAL))
    assert config.source.unknown_fields == "warn"
    check = {c.check_id: c for c in config.check_set()}["unknown-fields"]
    assert check.severity == Severity.WARNING and check.columns == ["_unknown_fields"]  # type: ignore[attr-defined]
    quarantining = MINIMAL.replace("  path: landing\n", "  path: landing\n  unknown-fields: quarantine\n")
    check = {c.check_id: c for c in load_gate_config(write(tmp_path, quarantining)).check_set()}[
        "unknown-fields"
    ]
    assert check.severity == Severity.CRITICAL
    ignoring = MINIMAL.replace("  path: landing\n", "  path: landing\n  unknown-fields: ignore\n")
    assert "unknown-fields" not in {
        c.check_id for c in load_gate_config(write(tmp_path, ignoring)).check_set()
    }


def test_unknown_fields_where_they_cannot_be_detected_is_an_error_when_asked_for(tmp_path: Path) -> None:
    multiline = MINIMAL.replace(
        "  path: landing\n", "  path: landing\n  options: {multiLine: true}\n  unknown-fields: quarantine\n"
    )
    problem = only_problem(write(tmp_path, multiline))
    assert problem.field_path == "source.unknown-fields"
    assert "multiLine" in problem.reason and "ignore" in problem.reason
    # left at its default, a multiLine source just runs without the check
    default = load_gate_config(write(tmp_path, multiline.replace("  unknown-fields: quarantine\n", "")))
    assert "unknown-fields" not in {c.check_id for c in default.check_set()}


def test_the_unknown_fields_column_and_check_id_are_reserved(tmp_path: Path) -> None:
    in_schema = MINIMAL.replace("amount DOUBLE", "amount DOUBLE, _unknown_fields STRING")
    problem = only_problem(write(tmp_path, in_schema))
    assert problem.field_path == "source.unknown-fields-column"
    taken = MINIMAL + "  - {check: null-check, check-id: unknown-fields, columns: [amount]}\n"
    problem = only_problem(write(tmp_path, taken))
    assert problem.field_path == "checks[1].check-id" and "built-in" in problem.reason
    # a check may read the column
    reading = MINIMAL + "  - {check: null-check, check-id: no-extras, columns: [_unknown_fields]}\n"
    assert load_gate_config(write(tmp_path, reading)).source.unknown_fields == "warn"


# --- #12 item 9 ----------------------------------------------------------------------------------------------------


def test_a_duplicate_check_id_is_the_documented_duplicate_check_id_error(tmp_path: Path) -> None:
    from streaming_dq.exceptions import DuplicateCheckIdError

    text = MINIMAL + "  - {check: null-check, check-id: order-id-present, columns: [customer_id]}\n"
    problem = only_problem(write(tmp_path, text))
    assert isinstance(problem, DuplicateCheckIdError) and problem.check_id == "order-id-present"
    assert problem.field_path == "checks[1].check-id"


def test_a_value_no_member_of_a_union_accepts_is_one_problem_naming_the_real_field(tmp_path: Path) -> None:
    text = MINIMAL + "  - {check: numeric-min-check, check-id: a, columns: [amount], min-value: abc}\n"
    problem = only_problem(write(tmp_path, text))
    assert problem.field_path == "checks[1].min-value"
    assert (
        problem.reason.startswith("expected a valid integer or a valid number")
        and "got 'abc'" in problem.reason
    )


def _editor_yaml(path: Path) -> Any:
    """The YAML as an editor's language server sees it (dates stay strings), ``${VAR:-default}`` filled in."""
    import re

    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.yaml_implicit_resolvers = {
        key: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
        for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    text = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", path.read_text(encoding="utf-8"))
    return yaml.load(text, Loader=Loader)


@pytest.mark.parametrize("config", [ORDERS, SENSORS, REPO / "streaming_dq" / "cli" / "demo" / "demo.yaml"])
def test_the_json_schema_accepts_the_shipped_configs(config: Path) -> None:
    import jsonschema

    validator = jsonschema.Draft202012Validator(gate_config_json_schema())
    errors = [f"{list(e.path)}: {e.message[:200]}" for e in validator.iter_errors(_editor_yaml(config))]
    assert errors == []
    # and it still rejects what the loader rejects
    bad = _editor_yaml(config)
    bad["source"]["options"] = {"header": [1, 2]}
    assert not validator.is_valid(bad)
