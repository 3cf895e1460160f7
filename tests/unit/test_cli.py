"""The ``streaming-dq`` command without a JVM: validate, schema, help, placeholders, and the job generators."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from streaming_dq.cli.main import app

REPO = Path(__file__).resolve().parents[2]
ORDERS = REPO / "jobs" / "orders" / "orders.yaml"
SENSORS = REPO / "jobs" / "sensors" / "sensors.yaml"


def ready(config: Path, tmp_path: Path) -> Path:
    """A copy of a shipped job's folder whose source folder and reference files exist (`validate` checks the
    paths as `run` does, #42; a fresh clone has no generated data)."""
    import shutil

    from streaming_dq.config.loader import load_gate_config

    job = tmp_path / config.parent.name
    shutil.copytree(config.parent, job)
    copy = job / config.name
    loaded = load_gate_config(copy)
    if loaded.source.path is not None:
        Path(loaded.source.path).mkdir(parents=True, exist_ok=True)
    for reference in loaded.reference_datasets.values():
        Path(reference.path).parent.mkdir(parents=True, exist_ok=True)
        Path(reference.path).touch()
    return copy


CLI = Path(sys.executable).parent / "streaming-dq"

BAD = """\
gate: {name: orders, event-time: order_ts}
source:
  format: json
  path: landing
  schema: "order_id STRING, order_ts TIMESTAMP"
  trigger: sometimes
checkpoint: state
targets: {pass: p, quarantine: q}
checks:
  - {check: null-check, check-id: a, columns: [order_id], severity: fatal}
  - {check: null-check, check-id: b, columns: [order_id], colour: red}
"""


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture()
def bad_config(tmp_path: Path) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD, encoding="utf-8")
    return path


@pytest.fixture()
def no_new_jvm() -> Iterator[None]:
    """Fails the test when it started a JVM (when a Spark test of this session already did, when it
    changed it). The subprocess test below proves the strong form: validate works where no JVM can start."""
    from pyspark import SparkContext

    before = (SparkContext._active_spark_context, SparkContext._gateway)
    yield
    assert (SparkContext._active_spark_context, SparkContext._gateway) == before


def test_validate_prints_a_one_line_summary(runner: CliRunner, no_new_jvm: None, tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(ready(ORDERS, tmp_path))])
    assert result.exit_code == 0, result.output
    assert (
        result.stdout
        == "ok: gate 'orders': 12 checks (8 row, 4 aggregate) + unknown-fields (warn), 2 profiles\n"
    )
    assert result.stderr == ""


def test_validate_json(runner: CliRunner, tmp_path: Path) -> None:
    sensors = ready(SENSORS, tmp_path)
    result = runner.invoke(app, ["validate", "--json", str(sensors)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc == {
        "ok": True,
        "file": str(sensors),
        "gate": "sensors",
        "checks": 10,
        "row_checks": 7,
        "unknown_fields": "warn",  # the built-in check, not counted in "checks"
        "aggregate_checks": 3,
        "profiles": ["Autumn storm 2025"],
        "dialect": "native",
        "notes": [],
    }


def test_validate_prints_every_problem_and_exits_2(
    runner: CliRunner, bad_config: Path, no_new_jvm: None
) -> None:
    result = runner.invoke(app, ["validate", str(bad_config)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{bad_config}: source.trigger: trigger must be 'available-now' or {{processing-time: '10 seconds'}}, "
        "got 'sometimes'",
        f"{bad_config}: checks[0].severity: invalid severity 'fatal': expected one of critical, warning",
        f"{bad_config}: checks[1].colour: unknown key 'colour' (did you mean 'columns'?)",
    ]
    assert "Traceback" not in result.output


def test_validate_json_lists_the_problems(runner: CliRunner, bad_config: Path) -> None:
    result = runner.invoke(app, ["validate", "--json", str(bad_config)])
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["ok"] is False
    assert [(p["file"], p["field"]) for p in doc["problems"]] == [
        (str(bad_config), "source.trigger"),
        (str(bad_config), "checks[0].severity"),
        (str(bad_config), "checks[1].colour"),
    ]


def test_validate_a_missing_file_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(tmp_path / "absent.yaml")])
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path / 'absent.yaml'}: no such file\n"


def test_the_installed_console_script_validates_without_a_jvm(bad_config: Path, tmp_path: Path) -> None:
    # A JVM cannot start with these settings: validate must not need one.
    env = {
        **os.environ,
        "JAVA_HOME": "/nonexistent",
        "SPARK_HOME": "/nonexistent",
        "PATH": os.path.dirname(sys.executable),
    }
    ok = subprocess.run(
        [str(CLI), "validate", str(ready(ORDERS, tmp_path))],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert (ok.returncode, ok.stdout, ok.stderr) == (
        0,
        "ok: gate 'orders': 12 checks (8 row, 4 aggregate) + unknown-fields (warn), 2 profiles\n",
        "",
    )
    bad = subprocess.run(
        [str(CLI), "validate", str(bad_config)], capture_output=True, text=True, env=env, timeout=120
    )
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert len(bad.stderr.splitlines()) == 3
    assert all(line.startswith(f"{bad_config}: ") for line in bad.stderr.splitlines())
    assert "Traceback" not in bad.stderr


def test_schema_prints_the_json_schema(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert {"gate", "source", "targets", "checks", "profiles"} <= set(schema["properties"])
    out = tmp_path / "gate.schema.json"
    assert runner.invoke(app, ["schema", "-o", str(out)]).exit_code == 0
    assert json.loads(out.read_text(encoding="utf-8")) == schema


COMMANDS = [[], ["validate"], ["schema"], ["run"], ["check"], ["suggest"], ["metrics"], ["maintain"], ["doctor"],
            ["sql"], ["release"], ["quarantine"], ["quarantine", "discard"], ["demo"]]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "root")
def test_every_command_has_help_that_reads_as_a_command_line(runner: CliRunner, command: list[str]) -> None:
    """#42: `--dry-run <bool>` and `--help <bool>` suggested a value; `{config}`, `<list[Path]>` and
    `<float range>` leaked type names."""
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "Usage: streaming-dq" in result.stdout
    for leak in ("<bool>", "{config}", "{CONFIG}", "list[", "range>", "<str>", "<path>", "<int", "<float"):
        assert leak not in result.stdout, (leak, result.stdout)
    helps = [line for line in result.stdout.splitlines() if "--help" in line]
    assert helps and all(line.split("--help")[1].split()[0] == "Show" for line in helps), helps


def test_durations_read_one_grammar_on_every_option() -> None:
    """#42: `--timeout 5s` was refused while `--older-than 90d` worked."""
    from datetime import timedelta

    from streaming_dq.cli.common import duration_of
    from streaming_dq.exceptions import ConfigError

    for text, seconds in [("5s", 5), ("300", 300), ("15 min", 900), ("2h", 7200), ("90d", 90 * 86400),
                          ("7 days", 7 * 86400), ("1 second", 1)]:  # fmt: skip
        assert duration_of(text, "--timeout") == timedelta(seconds=seconds), text
    with pytest.raises(ConfigError) as info:
        duration_of("soon", "--timeout")
    assert info.value.field_path == "--timeout" and "invalid duration 'soon'" in info.value.reason


def test_run_refuses_a_bad_timeout_before_spark(runner: CliRunner, tmp_path: Path, no_new_jvm: None) -> None:
    result = runner.invoke(app, ["run", str(ready(ORDERS, tmp_path)), "--timeout", "soon"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("--timeout: invalid duration 'soon'"), result.stderr


def test_run_with_a_bad_config_exits_2_before_spark(
    runner: CliRunner, bad_config: Path, no_new_jvm: None
) -> None:
    result = runner.invoke(app, ["run", str(bad_config)])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 3


def test_usage_errors_exit_2(runner: CliRunner) -> None:
    assert runner.invoke(app, ["check", str(ORDERS)]).exit_code == 2  # --data is required
    assert runner.invoke(app, ["validate"]).exit_code == 2
    assert runner.invoke(app, ["check", str(ORDERS), "--data", "x", "--format", "xml"]).exit_code == 2


@pytest.mark.parametrize("job", ["orders", "sensors"])
def test_generators_land_the_days_in_order(tmp_path: Path, job: str) -> None:
    """Spark's file source takes files oldest first by millisecond mtimes; small files written in the same
    millisecond came in either order, and a day that came after the next one was late (its window lost)."""
    args = ["--out", str(tmp_path), "--batches", "6", "--rows", "3", "--json"]
    generate = [sys.executable, str(REPO / "jobs" / job / "generate.py"), *args]
    summary = json.loads(subprocess.run(generate, check=True, capture_output=True, text=True).stdout)
    mtimes = [Path(f).stat().st_mtime_ns // 1_000_000 for f in summary["files"]]
    assert mtimes == sorted(set(mtimes)), mtimes


@pytest.mark.parametrize("job", ["orders", "sensors"])
def test_generators_are_deterministic_and_count_every_line(tmp_path: Path, job: str) -> None:
    outputs = []
    for out in ("a", "b"):
        args = ["--out", str(tmp_path / out), "--batches", "2", "--rows", "50", "--seed", "4", "--json"]
        done = subprocess.run(
            [sys.executable, str(REPO / "jobs" / job / "generate.py"), *args],
            check=True,
            capture_output=True,
            text=True,
        )
        summary = json.loads(done.stdout)
        files = sorted(p for p in (tmp_path / out).rglob("*") if p.is_file())
        outputs.append([(f.relative_to(tmp_path / out), f.read_bytes()) for f in files])
        lines = [line for f in summary["files"] for line in Path(f).read_text(encoding="utf-8").splitlines()]
        # orders: day 2 is an outage day with 40% of the volume (50 + 20); sensors: 2 x 50
        assert summary["records"] == len(lines) == {"orders": 70, "sensors": 100}[job]
        unparsable = 0
        for line in lines:
            try:
                json.loads(line)
            except json.JSONDecodeError:
                unparsable += 1
        assert summary["malformed"] == 4
        assert unparsable <= 4  # the others hold a unit inside a number: valid JSON, the wrong type
        assert sum(summary["faults"].values()) > 0
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) == 3  # two landing files and the reference CSV


def test_metrics_names_the_missing_table_and_exits_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from streaming_dq.cli.main import app

    config = tmp_path / "gate.yaml"
    config.write_text(
        "gate: {name: g}\n"
        "source: {format: json, path: in, schema: 'id BIGINT'}\n"
        "checkpoint: chk\n"
        "targets: {pass: p, quarantine: q, metrics: m}\n"
        "checks: [{check: null-check, check-id: id-present, columns: [id]}]\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["metrics", str(config)])
    assert result.exit_code == 2
    assert "targets.metrics" in result.output and "does not exist yet" in result.output


# --- first-day mistakes (#12 items 3 and 5): one line, exit 2, nothing written, no JVM ---------------------------

JOB = """\
gate: {name: orders, event-time: order_ts}
source:
  format: json
  path: landing
  schema: "order_id STRING, order_ts TIMESTAMP, amount STRING"
checkpoint: state/orders
targets: {pass: tables/pass, quarantine: tables/quarantine, results: tables/results}
reference-datasets: {}
checks:
  - {check: numeric-min-check, check-id: amount-positive, columns: [amount], min-value: 0}
"""


def test_validate_refuses_a_numeric_check_on_a_string_column(runner: CliRunner, tmp_path: Path) -> None:
    config = tmp_path / "job.yaml"
    config.write_text(JOB, encoding="utf-8")
    result = runner.invoke(app, ["validate", str(config)])
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"{config}: checks[0].columns[0]: column 'amount' is string; numeric-min-check needs a numeric column "
        "(source.schema)\n"
    )
    config.write_text(JOB.replace("amount STRING", "amount DECIMAL(10,2)"), encoding="utf-8")
    missing = runner.invoke(app, ["validate", str(config)])
    assert missing.exit_code == 2  # as `run` refuses it (#42): the source folder is not there
    assert (
        missing.stderr == f"{config}: source.path: the source folder {tmp_path / 'landing'} does not exist\n"
    )
    (tmp_path / "landing").mkdir()
    assert runner.invoke(app, ["validate", str(config)]).exit_code == 0


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        (None, "source.path", "the source folder {tmp}/landing does not exist"),
        (("tables/results", "a-file/results"), "targets.results", "{tmp}/a-file/results cannot be created: "
         "{tmp}/a-file is a file, not a folder"),
        (("reference-datasets: {}", "reference-datasets: {c: {format: csv, path: customers.csv}}"),
         "reference-datasets.c.path", "the reference data {tmp}/customers.csv does not exist"),
        (("state/orders", "/proc/streaming-dq/state"), "checkpoint", "/proc/streaming-dq/state cannot be created in "
         "/proc: No such file or directory"),
    ],
)  # fmt: skip
def test_run_names_a_path_it_cannot_use_before_starting_spark(
    runner: CliRunner,
    tmp_path: Path,
    no_new_jvm: None,
    change: tuple[str, str] | None,
    field: str,
    reason: str,
) -> None:
    text = JOB.replace("amount STRING", "amount DOUBLE")
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    if change is not None:
        (tmp_path / "landing").mkdir()
        text = text.replace(*change)
    config = tmp_path / "job.yaml"
    config.write_text(text, encoding="utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    result = runner.invoke(app, ["run", str(config)])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"{config}: {field}: {reason.format(tmp=tmp_path)}\n"
    assert result.stdout == ""  # not even "starting Spark"
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no table, no checkpoint written half-way


def test_schema_to_a_missing_folder_is_one_line(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["schema", "-o", str(tmp_path / "nowhere" / "x.json")])
    assert result.exit_code == 2, result.output
    assert (
        result.stderr
        == f"error: --output {tmp_path / 'nowhere' / 'x.json'}: no such folder {tmp_path / 'nowhere'}\n"
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--window", "1 dya"], "--window: invalid window '1 dya': expected e.g. '1 hour', '15 minutes', '1 day'"),
        (["--window", "1 hour"], "--window: no check of this gate is judged over '1 hour' windows (there are: 1 day)"),
        (["--check", "daily-volum"], "--check: the gate has no check 'daily-volum'; did you mean 'daily-volume'"),
    ],
)  # fmt: skip
def test_metrics_with_an_unknown_window_or_check_is_an_error_not_an_empty_table(
    runner: CliRunner, args: list[str], line: str
) -> None:
    result = runner.invoke(app, ["metrics", str(ORDERS), *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"{ORDERS}: {line}"), result.stderr
    assert result.stdout == ""


MAINTAINED = """
gate: {name: orders}
source: {format: json, path: landing, schema: "id BIGINT"}
checkpoint: state
targets: {pass: tables/pass, quarantine: tables/quarantine, results: tables/results, metrics: tables/metrics,
          writer: delta-rs}
maintenance: {every: 100 batches, roll-up-after: 1 days}
checks: [{check: null-check, check-id: id, columns: [id]}]
"""


def test_maintain_compacts_rolls_up_and_refuses_an_unsafe_vacuum(
    runner: CliRunner, tmp_path: Path, no_new_jvm: None
) -> None:
    from datetime import UTC, datetime, timedelta

    import pyarrow as pa

    from streaming_dq.metrics.store import MetricsStore, batch_records
    from streaming_dq.states import CountState
    from streaming_dq.tables import AppTransaction, DeltaRsWriter, DeltaTarget

    config = tmp_path / "gate.yaml"
    config.write_text(MAINTAINED, encoding="utf-8")
    writer, target = DeltaRsWriter(), DeltaTarget(str(tmp_path / "tables" / "pass"))
    for b in range(12):
        writer.append(target, pa.table({"id": [b]}), AppTransaction("orders:q", b))
    store, old = MetricsStore(tmp_path / "tables" / "metrics"), datetime.now(UTC) - timedelta(days=3)
    for b in range(12):
        rows = batch_records(gate="orders", app_id="orders:q", batch_id=b, states={("id", 0): {"rows": CountState(1)}},
                             check_types={"id": "null-check"}, written_at=old + timedelta(minutes=b))  # fmt: skip
        store.write(rows, "orders:q", b)

    result = runner.invoke(app, ["maintain", str(config)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any(
        line.startswith("pass ") and "12 -> 1 files, compacted 12 into 1, checkpoint" in line
        for line in lines
    )
    assert any(line.startswith("metrics ") and "rolled up 12 rows into 1" in line for line in lines)
    assert any(line.startswith("quarantine ") and "no table yet" in line for line in lines)
    assert store.lifetime("orders") == {"id": {"rows": CountState(12)}}

    unsafe = runner.invoke(app, ["maintain", str(config), "--vacuum", "1 day"])
    assert unsafe.exit_code == 2
    assert "maintenance.vacuum.retention" in unsafe.stderr and "shorter than 7 days" in unsafe.stderr
    dry = runner.invoke(app, ["maintain", str(config), "--vacuum", "7 days", "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    tables = {t["table"]: t for t in json.loads(dry.stdout)["tables"]}
    assert (tables["pass"]["vacuumed"], tables["pass"]["dry_run"], tables["pass"]["files_after"]) == (
        0,
        True,
        1,
    )
    assert runner.invoke(app, ["maintain", str(config), "--dry-run"]).exit_code == 2


def test_maintain_dry_run_writes_nothing(tmp_path: Path, no_new_jvm: None) -> None:
    """#42: `maintain --vacuum 7d --dry-run` compacted the tables (8 -> 1 files, an OPTIMIZE in the history)."""
    from datetime import UTC, datetime, timedelta

    import pyarrow as pa
    from deltalake import DeltaTable

    from streaming_dq.metrics.store import MetricsStore, batch_records
    from streaming_dq.states import CountState
    from streaming_dq.tables import AppTransaction, DeltaRsWriter, DeltaTarget

    config = tmp_path / "gate.yaml"
    config.write_text(MAINTAINED, encoding="utf-8")
    writer, target = DeltaRsWriter(), DeltaTarget(str(tmp_path / "tables" / "pass"))
    for b in range(8):
        writer.append(target, pa.table({"id": [b]}), AppTransaction("orders:q", b))
    store = MetricsStore(tmp_path / "tables" / "metrics")
    old = datetime.now(UTC) - timedelta(days=3)
    for b in range(3):
        rows = batch_records(gate="orders", app_id="orders:q", batch_id=b, states={("id", 0): {"rows": CountState(1)}},
                             check_types={"id": "null-check"}, written_at=old + timedelta(minutes=b))  # fmt: skip
        store.write(rows, "orders:q", b)
    tables = {role: tmp_path / "tables" / role for role in ("pass", "metrics")}
    before = {role: DeltaTable(str(path)).version() for role, path in tables.items()}
    files = len(DeltaTable(str(tables["pass"])).file_uris())
    dry = CliRunner().invoke(
        app, ["maintain", str(config), "--vacuum", "7 days", "--dry-run", "--log-retention", "7 days"]
    )
    assert dry.exit_code == 0, dry.output
    assert {role: DeltaTable(str(path)).version() for role, path in tables.items()} == before
    assert len(DeltaTable(str(tables["pass"])).file_uris()) == files == 8
    assert "compacted" not in dry.stdout and "would delete 0 files" in dry.stdout


ANOMALY = """
gate: {name: shop, event-time: ts, timezone: UTC}
source: {format: json, path: landing, schema: "id BIGINT, ts TIMESTAMP"}
checkpoint: state
targets: {pass: tables/pass, quarantine: tables/quarantine, metrics: tables/metrics, writer: delta-rs}
checks:
  - check: anomaly-check
    check-id: daily-orders
    metric: {check: row-count}
    scope: {window: 1 day}
    baseline: {windows: 4, season: weekly}
    band: {relative: 0.2}
"""


def test_metrics_shows_each_windows_expected_value_band_and_score(
    runner: CliRunner, tmp_path: Path, no_new_jvm: None
) -> None:
    """The metrics table a gate over eight generated weeks would have written, read by ``streaming-dq
    metrics``: the anomaly columns for judged days, the reason for the first weeks'."""
    import pyarrow as pa

    from benchmarks.anomaly import anomaly_check, batches, generate_year
    from streaming_dq.metrics.accumulator import WindowAccumulator
    from streaming_dq.metrics.calendar import UTC_MICROS, max_event_time
    from streaming_dq.metrics.store import MetricsStore, batch_records
    from streaming_dq.metrics.window_states import EVENT_TIME_COLUMN, batch_window_states

    config = tmp_path / "shop.yaml"
    config.write_text(ANOMALY, encoding="utf-8")
    year, check = generate_year(6, days=56, anomalies=2), anomaly_check("relative", 0.2)
    acc, store = (
        WindowAccumulator("shop", [check], timezone="UTC"),
        MetricsStore(tmp_path / "tables" / "metrics"),
    )
    closed = []
    for b, times in enumerate(batches(year, 7)):
        table = pa.table({EVENT_TIME_COLUMN: pa.array(times, UTC_MICROS)})
        update = acc.update(
            b, batch_window_states([check], table), max_event_time(table.column(EVENT_TIME_COLUMN))
        )
        closed += update.closed
        store.write(batch_records(gate="shop", app_id="shop:q", batch_id=b, update=update), "shop:q", b)
    spike = next(w for w in closed if w.status == "failed")

    shown = runner.invoke(app, ["metrics", str(config), "--window", "1 day", "--json"])
    assert shown.exit_code == 0, shown.output
    lines = {line["window_start"][:10]: line for line in json.loads(shown.stdout)["metrics"]}
    day = lines[spike.window_start.date().isoformat()]
    assert (day["status"], day["expected"], day["band_low"], day["band_high"]) == (
        "failed",
        spike.expected_value,
        spike.band_low,
        spike.band_high,
    )
    assert lines[year.start.isoformat()]["reason"] == "not enough history: 0 of 4 windows"

    table_text = runner.invoke(app, ["metrics", str(config), "--window", "1 day"], env={"COLUMNS": "200"})
    assert table_text.exit_code == 0, table_text.output
    assert (
        "expected (band)" in table_text.stdout and "not enough history: 0 of 4 windows" in table_text.stdout
    )
    assert (
        f"{spike.expected_value:,.6g} ({spike.band_low:,.6g} .. {spike.band_high:,.6g})" in table_text.stdout
    )


def test_the_batch_line_of_an_anomaly_verdict_shows_expected_band_score_or_why_it_was_skipped() -> None:
    from datetime import UTC, datetime

    from streaming_dq.cli.progress import anomaly_text
    from streaming_dq.core.outcome import WindowOutcome

    day = datetime(2025, 3, 6, tzinfo=UTC)
    judged = WindowOutcome(
        "d", "anomaly-check", "1 day", day, day, "warning", "failed", 1650.0, 1650.0,
        expected_value=1197.5, band_low=1017.875, band_high=1377.125, score=0.3779, history=4,
    )  # fmt: skip
    assert anomaly_text(judged) == "  expected 1,197.5 in [1,017.88, 1,377.12], score 0.378 over 4 windows"
    above = WindowOutcome(
        "d", "anomaly-check", "1 day", day, day, "warning", "passed", 10.0, 10.0,
        expected_value=9.0, band_low=None, band_high=12.0, score=0.1, history=4,
    )  # fmt: skip
    assert "in [-inf, 12]" in anomaly_text(above)
    skipped = WindowOutcome(
        "d", "anomaly-check", "1 day", day, day, "warning", "skipped", 10.0, 10.0, history=1,
        reason="not enough history: 1 of 4 windows",
    )  # fmt: skip
    assert anomaly_text(skipped) == "  (not enough history: 1 of 4 windows)"


@pytest.mark.parametrize(
    ("args", "field", "reason"),
    [
        (["release", str(ORDERS), "--check", "customer-knwon"], "--check", "did you mean 'customer-known'"),
        (
            ["quarantine", "discard", str(ORDERS), "--older-than", "90d", "--check", "customer-knwon"],
            "--check",
            "did you mean 'customer-known'",
        ),
        (
            ["release", str(ORDERS), "--check", "nothing-like-it"],
            "--check",
            "(its check ids: amount-plausible,",
        ),
        (["release", str(ORDERS), "--set", "amout = amount / 100"], "--set", "did you mean 'amount'?"),
    ],
)
def test_release_and_discard_refuse_an_unknown_check_or_column_before_spark(
    runner: CliRunner, no_new_jvm: None, args: list[str], field: str, reason: str
) -> None:
    """#42: `release --check customer-knwon` started Spark, ran 40 s and wrote a real, empty release."""
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert f"orders.yaml: {field}: " in result.stderr and reason in result.stderr, result.stderr


def test_release_accepts_the_gate_s_own_reason_ids(no_new_jvm: None) -> None:
    from streaming_dq.cli.releasing import refuse_unknown_selection
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.release import Fix

    config = load_gate_config(ORDERS)
    refuse_unknown_selection(
        config, ["customer-known", "malformed-record", "schema-drift"], [Fix("amount", "1")]
    )


def test_validate_refuses_a_missing_reference_as_run_does(
    runner: CliRunner, tmp_path: Path, no_new_jvm: None
) -> None:
    """#42: `validate` passed a config whose reference file does not exist; `run` refused it 2 s later."""
    config = ready(ORDERS, tmp_path)
    reference = tmp_path / "orders" / "data" / "reference" / "customers.csv"
    reference.unlink()
    result = runner.invoke(app, ["validate", str(config)])
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"{config}: reference-datasets.customers.path: the reference data {reference} does not exist\n"
    )


def test_sql_placeholders_name_the_gate_s_tables_by_catalog_name_or_by_location(tmp_path: Path) -> None:
    from streaming_dq.cli.querying import with_tables
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.exceptions import ConfigError

    config = load_gate_config(ready(ORDERS, tmp_path))
    quarantine = config.table("quarantine").uri
    assert with_tables("SELECT count(*) FROM {quarantine} WHERE x = '{y}'", config) == (
        f"SELECT count(*) FROM delta.`{quarantine}` WHERE x = '{{y}}'"
    )
    named = config.model_copy(
        update={"targets": config.targets.model_copy(update={"pass_table": "table:sales.orders_pass"})}
    )
    assert with_tables("SELECT * FROM {pass}", named) == "SELECT * FROM sales.orders_pass"
    without = config.model_copy(update={"targets": config.targets.model_copy(update={"metrics": None})})
    with pytest.raises(ConfigError, match="the gate has no metrics table"):
        with_tables("SELECT * FROM {metrics}", without)
    with pytest.raises(ConfigError, match="the gate has no keys table"):  # no unique-key check across batches
        with_tables("SELECT * FROM {keys}", config)
    keyed = config.model_copy(update={"targets": config.targets.model_copy(update={"keys": "tables/keys"})})
    assert with_tables("SELECT * FROM {keys}", keyed) == f"SELECT * FROM delta.`{keyed.table('keys').uri}`"


def test_sql_refuses_a_table_the_gate_lacks_before_spark_starts(
    runner: CliRunner, tmp_path: Path, no_new_jvm: None
) -> None:
    bad = tmp_path / "no-results.yaml"
    bad.write_text(
        "gate: {name: g}\nsource: {format: json, path: landing, schema: 'a STRING'}\ncheckpoint: state\n"
        "targets: {pass: p, quarantine: q}\nchecks: [{check: null-check, check-id: a, columns: [a]}]\n",
        encoding="utf-8",
    )
    (tmp_path / "landing").mkdir()
    result = runner.invoke(app, ["sql", str(bad), "SELECT * FROM {results}"])
    assert result.exit_code == 2, result.output
    assert "targets.results: {results}: the gate has no results table" in result.output


def test_a_child_s_stderr_loses_only_the_noise_lines(capfd: pytest.CaptureFixture[str]) -> None:
    """#42: the JVM's `WARNING: Using incubator modules` on every command. The filter the JVM is launched
    under drops exactly that line: the child's other lines arrive in order and unbroken, and ours too."""
    import time

    from streaming_dq.runtime.session import JVM_NOISE, stderr_filtered

    script = (
        "import sys, time\n"
        "sys.stderr.write('first\\nWARNING: Using incubator modules: jdk.incubator.vector\\n')\n"
        "sys.stderr.flush(); time.sleep(0.3)\n"
        "sys.stderr.write('after the block' + 'x' * 70000 + '\\nno newline at the end')\n"
    )
    with stderr_filtered(JVM_NOISE):
        child = subprocess.Popen([sys.executable, "-c", script])
    print("ours", file=sys.stderr, flush=True)
    assert child.wait(timeout=60) == 0
    deadline = time.monotonic() + 10
    err = ""
    while "no newline at the end" not in err and time.monotonic() < deadline:
        time.sleep(0.05)
        err += capfd.readouterr().err
    assert "incubator" not in err
    lines = err.splitlines()
    assert "ours" in lines  # this process's stderr is its own again (when the child writes does not matter)
    lines.remove("ours")
    assert lines == ["first", "after the block" + "x" * 70000, "no newline at the end"]


def test_each_gate_of_a_fleet_gets_a_declared_fair_scheduler_pool(tmp_path: Path) -> None:
    """#42: `WARN FairSchedulableBuilder: ... pool jan, which has not been configured` for every gate."""
    import xml.etree.ElementTree as ET

    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.runtime.fleet import GateFleet

    first = load_gate_config(ready(ORDERS, tmp_path / "a"))
    other = load_gate_config(ready(ORDERS, tmp_path / "b"))
    second = other.model_copy(update={"gate": other.gate.model_copy(update={"name": 'b"&<'})})
    conf = GateFleet([first, second])._spark_section().conf
    assert conf["spark.scheduler.mode"] == "FAIR"
    pools = ET.parse(conf["spark.scheduler.allocation.file"]).getroot()
    assert [(p.get("name"), p.findtext("weight"), p.findtext("schedulingMode")) for p in pools] == [
        ("orders", "1", "FAIR"), ('b"&<', "1", "FAIR"),
    ]  # fmt: skip
    assert "spark.scheduler.allocation.file" not in GateFleet([first])._spark_section().conf  # one gate


def test_sigusr1_prints_every_thread_s_stack_and_the_job_goes_on() -> None:
    """Where is a job that does not stop waiting? ``kill -USR1`` answers without ending it."""
    import signal
    import time

    body = (
        "import time\nimport streaming_dq.cli.main as m\n"
        "m.app = lambda: (print('ready', flush=True), time.sleep(60))\nm.main()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", body],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"  # inside main()
        proc.send_signal(signal.SIGUSR1)
        time.sleep(1)
        assert proc.poll() is None  # still running
        proc.terminate()
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Current thread" in err and "<lambda>" in err, err


def test_check_format_kafka_needs_a_config_with_a_kafka_source(tmp_path: Path) -> None:
    config = tmp_path / "gate.yaml"
    config.write_text(
        "gate: {name: orders}\nsource: {format: json, path: landing, schema: 'id INT'}\ncheckpoint: state\n"
        "targets: {pass: p, quarantine: q}\nchecks: [{check: null-check, check-id: id-present, columns: [id]}]\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["check", str(config), "--format", "kafka", "--data", "orders"])
    assert result.exit_code == 2
    assert (
        "--format: --format kafka reads a topic of the config's Kafka source" in result.stdout + result.stderr
    )
