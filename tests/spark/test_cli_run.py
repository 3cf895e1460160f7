"""``streaming-dq run`` and ``streaming-dq check`` end to end: a generated landing folder, real Delta tables."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jobs_support import CLI, in_order, make_orders_job
from typer.testing import CliRunner

from streaming_dq.cli.main import app
from streaming_dq.tables import read_table

pytestmark = pytest.mark.spark


def test_run_drains_an_orders_landing_folder_into_pass_and_quarantine(tmp_path: Path) -> None:
    config, summary = make_orders_job(tmp_path, batches=3, rows=40)
    config.write_text(config.read_text(encoding="utf-8").replace("every: 500 batches", "every: 2 batches"))
    lines = sum(len(Path(f).read_text(encoding="utf-8").splitlines()) for f in summary["files"])
    # day 1: 40 orders, day 2 (an outage): 16, day 3 (Christmas): 20
    assert summary["records"] == lines == 76 and summary["malformed"] == 6
    in_order(summary["files"])  # day by day: the window verdicts below depend on it

    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "COLUMNS": "200"}
    done = subprocess.run(
        [str(CLI), "run", str(config), "--available-now"],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=tmp_path,
    )
    # #42: a critical check failed, so the run exits 1 as the README says (and as `check` does on one file)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"exit 1: critical checks failed: [\w, -]+ \(--fail-on never to exit 0\)", last), last
    assert "order-id-present" in last and "daily-volume" in last  # a row check and a window verdict

    batch_lines = [line for line in done.stdout.splitlines() if line.startswith("batch ")]
    assert len(batch_lines) == 3, done.stdout
    rows_in = [
        re.search(r"in +(\d+) +passed +\d+ +quarantined +\d+ +warned +\d+ +[\d.]+ s", line)
        for line in batch_lines
    ]
    # one file per batch; files written within the same second may be picked in either order
    assert sorted(int(m[1]) if m else -1 for m in rows_in) == [16, 20, 40]
    assert "metrics at http://127.0.0.1:" in done.stdout
    # what a user reads (#12 item 8): what happens before batch 0, every failed check, closed days' verdicts,
    # and none of the notices every local Spark run used to print
    assert done.stdout.splitlines()[0].startswith("starting Spark (local[2]), then the stream")
    assert " ..." not in done.stdout
    assert max(len(re.findall(r"[\w-]+", line.split("failed: ")[-1])) for line in batch_lines) > 4
    windows = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("window ")]
    assert any(
        re.match(r"window daily-volume Fri 2025-12-19 \(Europe/Berlin\): failed \(critical\)", w)
        for w in windows
    ), done.stdout
    noise = ("NativeCodeLoader", "resolves to a loopback address", "log4j profile", "Truncated the string",
             "Using incubator modules")  # fmt: skip
    assert not [line for line in done.stderr.splitlines() if any(n in line for n in noise)], done.stderr

    tables = tmp_path / "data" / "tables"
    passed = read_table(str(tables / "orders_pass"))
    quarantined = read_table(str(tables / "orders_quarantine"))
    assert passed.num_rows + quarantined.num_rows == summary["records"]
    assert quarantined.num_rows >= summary["malformed"]
    malformed = [
        errors
        for errors in quarantined.column("_dq_errors").to_pylist()
        if any(e["check-id"] == "malformed-record" for e in errors)
    ]
    assert len(malformed) == summary["malformed"]
    totals = re.search(r"3 batches, 76 rows in: (\d+) passed, (\d+) quarantined", done.stdout)
    assert totals is not None, done.stdout
    assert (int(totals[1]), int(totals[2])) == (passed.num_rows, quarantined.num_rows)

    # `every: 2 batches`: the gate maintained its four tables after the second batch, and by hand afterwards
    maintained = [
        line.strip() for line in done.stdout.splitlines() if line.strip().startswith("maintenance ")
    ]
    assert [line.split()[1] for line in maintained] == ["pass", "quarantine", "results", "metrics"], (
        done.stdout
    )
    assert "2 -> 1 files, compacted 2 into 1, checkpoint" in maintained[0], done.stdout
    by_hand = subprocess.run([str(CLI), "maintain", str(config)], capture_output=True, text=True, timeout=300)
    assert by_hand.returncode == 0, by_hand.stdout + by_hand.stderr
    assert re.search(r"^pass .*orders_pass: 2 -> 1 files, compacted 2 into 1", by_hand.stdout, re.M), (
        by_hand.stdout
    )
    assert re.search(r"^metrics .*nothing to roll up", by_hand.stdout, re.M), by_hand.stdout
    assert re.search(r"^orders: pass maintained \([\d.]+ s\)$", by_hand.stderr, re.M), (
        by_hand.stderr
    )  # progress
    assert read_table(str(tables / "orders_pass")).num_rows == passed.num_rows


def test_run_exits_1_when_the_stream_fails(spark: object, tmp_path: Path) -> None:
    """In this process, in the test session (``run`` uses an active session and leaves it running): the
    command's exit code and lines, without a JVM start of its own."""
    from typer.testing import CliRunner

    from streaming_dq.cli.main import app

    config, _ = make_orders_job(tmp_path, batches=1, rows=10)
    text = config.read_text(encoding="utf-8").replace(
        "on-aggregate-failure: quarantine-batch", "on-aggregate-failure: stop"
    )
    text += "  - {check: row-count-min-check, check-id: at-least-1000, min-count: 1000}\n"
    config.write_text(text, encoding="utf-8")
    done = CliRunner().invoke(app, ["run", str(config)])
    assert done.exit_code == 1, done.stdout + done.stderr[-3000:]
    assert "the stream failed: GateFailedError: gate 'orders' stopped at batch 0" in done.stderr
    assert "0 batches, 0 rows in" in done.stdout
    assert spark.sparkContext._jsc is not None  # type: ignore[attr-defined]  # the session was not stopped


def test_run_with_a_taken_metrics_port_is_a_clear_error(tmp_path: Path) -> None:
    import socket

    config, _ = make_orders_job(tmp_path, batches=1, rows=5)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config.write_text(
            config.read_text(encoding="utf-8").replace("port: 0", f"port: {port}"), encoding="utf-8"
        )
        done = subprocess.run([str(CLI), "run", str(config)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert f"cannot serve Prometheus metrics on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "data" / "tables").exists()


@pytest.fixture()
def orders_file(tmp_path: Path) -> tuple[Path, Path]:
    config, summary = make_orders_job(tmp_path, batches=1, rows=30, seed=9)
    return config, Path(summary["files"][0])


def test_check_reports_failed_checks_with_exit_1(spark: object, orders_file: tuple[Path, Path]) -> None:
    config, data = orders_file
    result = CliRunner().invoke(
        app, ["check", str(config), "--data", str(data), "--format", "json", "--json"]
    )
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["ok"] is False
    assert doc["summary"]["total_records"] == 30
    assert doc["summary"]["failed_records"] > 0
    statuses = {c["check-id"]: c["status"] for c in doc["checks"]}
    assert set(statuses) >= {"order-id-present", "customer-known", "order-id-unique", "batch-volume"}
    assert statuses["batch-volume"] == "failed"  # 30 < 100 orders
    # the exit code is a documented choice (#42): never fail on the data
    never = CliRunner().invoke(app, ["check", str(config), "--data", str(data), "--fail-on", "never"])
    assert never.exit_code == 0, never.output

    # one vocabulary (#42): the config's check names, `_dq_raw` as in the quarantine, times with their zone
    shown = CliRunner().invoke(
        app, ["check", str(config), "--data", str(data), "--json", "--examples", "30", "--fail-on", "never"]
    )
    examples = json.loads(shown.stdout)["failed_examples"]
    assert examples and all(set(e) >= {"_dq_errors", "_dq_validation_ts"} for e in examples)
    assert not [e for e in examples if "_corrupt_record" in e]
    assert any(e.get("_dq_raw") for e in examples)  # the seed-9 file has malformed lines
    assert all(
        re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)", e["_dq_validation_ts"]) for e in examples
    )
    names = {error["check"] for e in examples for error in e["_dq_errors"]}
    assert names and all(re.fullmatch(r"[a-z-]+", n) for n in names), names
    assert "malformed-record" in names and "null-check" in names, names


def test_check_passes_clean_data_with_a_checks_file(spark: object, tmp_path: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text(
        "checks:\n"
        "  - {check: null-check, check-id: id-present, columns: [order_id]}\n"
        "  - {check: numeric-min-check, check-id: amount-positive, columns: [amount], min-value: 0}\n",
        encoding="utf-8",
    )
    data = tmp_path / "orders.json"
    data.write_text('{"order_id": "a", "amount": 3.5}\n{"order_id": "b", "amount": 7}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["check", str(checks), "--data", str(data), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "2 rows: 2 passed, 0 failed" in result.stdout
    assert "Validation Report: 2 passed, 0 failed" in result.stdout

    data.write_text('{"order_id": null, "amount": -1}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["check", str(checks), "--data", str(data), "--examples", "1"])
    assert result.exit_code == 1, result.output
    assert "failed row: " in result.stdout


def test_check_usage_errors_exit_2(spark: object, tmp_path: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text("- {check: null-check, check-id: a, columns: [missing_column]}\n", encoding="utf-8")
    data = tmp_path / "d.json"
    data.write_text('{"x": 1}\n', encoding="utf-8")
    absent = CliRunner().invoke(app, ["check", str(checks), "--data", str(tmp_path / "absent.json")])
    assert absent.exit_code == 2 and "no such file or directory" in absent.stderr
    missing_column = CliRunner().invoke(app, ["check", str(checks), "--data", str(data)])
    assert missing_column.exit_code == 2, missing_column.output
    assert "missing_column" in missing_column.stderr


def test_a_processing_time_job_runs_until_stopped_in_an_existing_session(
    spark: object, tmp_path: Path
) -> None:
    import threading

    from streaming_dq.config.fields import Trigger
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.runtime.job import GateJob

    config_path, summary = make_orders_job(tmp_path, batches=1, rows=20)
    config = load_gate_config(config_path).with_trigger(Trigger("1 second"))
    stop = threading.Event()
    seen = []

    def on_batch(outcome: object) -> None:
        seen.append(outcome)
        stop.set()

    job = GateJob(config, on_batch=on_batch, stop_event=stop, session=spark)  # type: ignore[arg-type]
    totals = job.run(timeout=600)
    assert not totals.failed, totals.error
    assert (totals.batches, totals.rows_in) == (1, summary["records"])
    assert totals.rows_passed + totals.rows_quarantined == summary["records"]
    assert [o.batch_id for o in seen] == [0]
    assert job.query is not None and not job.query.isActive
    assert spark.sparkContext._jsc is not None  # type: ignore[attr-defined]  # the session was not stopped


def test_run_close_windows_judges_the_last_day_once_at_the_end_of_the_input(
    spark: object, tmp_path: Path
) -> None:
    """``run --close-windows`` (or ``gate.close-windows: at-end``) ends a drained run by judging the windows
    still open (#27): the last generated day gets its final verdicts, printed and in the results table, and a
    second run with nothing new gives none again."""
    from typer.testing import CliRunner

    from streaming_dq.cli.main import app
    from streaming_dq.tables import read_table

    config, _ = make_orders_job(tmp_path, batches=2, rows=40)
    results = tmp_path / "data" / "tables" / "orders_results"

    def finals() -> list[tuple[str, object, str]]:
        rows = read_table(str(results)).to_pylist()
        return [
            (r["check_id"], r["window_start"], r["status"])
            for r in rows
            if r["kind"] == "window" and r["status"] != "provisional"
        ]

    kept_open = CliRunner().invoke(app, ["run", str(config), "--fail-on", "never"])
    assert kept_open.exit_code == 0, kept_open.stdout + kept_open.stderr[-3000:]
    assert "end of input" not in kept_open.stdout
    before = finals()
    rows = read_table(str(results)).to_pylist()
    last_day = max(r["window_start"] for r in rows if r["kind"] == "window")
    assert not [f for f in before if f[1] == last_day]  # the last day is provisional

    config.write_text(
        config.read_text(encoding="utf-8").replace(
            "late-data: count", "late-data: count\n  close-windows: at-end"
        )
    )
    closed = CliRunner().invoke(app, ["run", str(config), "--fail-on", "never"])
    assert closed.exit_code == 0, closed.stdout + closed.stderr[-3000:]
    assert "end of input: 2 window verdict(s) for the windows still open" in closed.stdout
    after = finals()
    assert sorted(f[0] for f in after if f[1] == last_day) == ["daily-basket", "daily-volume"]
    assert len(after) == len(set(after)) == len(before) + 2

    again = CliRunner().invoke(app, ["run", str(config), "--close-windows"])  # nothing failed: exit 0 (#42)
    assert again.exit_code == 0 and "end of input: 0 window verdict(s)" in again.stdout
    assert finals() == after


def test_an_intended_stop_prints_its_line_and_the_traces_go_to_the_trace_file(tmp_path: Path) -> None:
    """#42: `on-aggregate-failure: stop` printed ~90 lines of Spark errors and traces before its one line."""
    config, _ = make_orders_job(tmp_path, batches=1, rows=10)
    text = config.read_text(encoding="utf-8").replace(
        "on-aggregate-failure: quarantine-batch", "on-aggregate-failure: stop"
    )
    text += "  - {check: row-count-min-check, check-id: at-least-1000, min-count: 1000}\n"
    config.write_text(text.replace("\nspark:\n", f"\nspark:\n  app-name: stop-{tmp_path.name}\n"), "utf-8")
    done = subprocess.run([str(CLI), "run", str(config)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    from streaming_dq.runtime.session import trace_file

    trace = trace_file(f"stop-{tmp_path.name}")
    assert done.stderr.splitlines() == [
        "gate 'orders': batch 0 failed aggregate check(s) ['at-least-1000']: stopping",
        "the stream failed: GateFailedError: gate 'orders' stopped at batch 0: aggregate check(s) failed: "
        "['at-least-1000']",
        f"the full traces: {trace}",
    ], done.stderr
    logged = trace.read_text(encoding="utf-8")
    assert "terminated with error" in logged and "GateFailedError" in logged  # nothing lost: it is there


def test_run_judges_the_orders_stream_by_its_data_contract(tmp_path: Path) -> None:
    """#59: the orders job with its checks from jobs/orders/orders.odcs.yaml (contract: instead of checks:),
    through `streaming-dq run`: rows out by the contract's row rules, every verdict named by the rule's id."""
    _, summary = make_orders_job(tmp_path, batches=2, rows=40)
    jobs = Path(__file__).resolve().parents[2] / "jobs" / "orders"
    (tmp_path / "orders.odcs.yaml").write_text((jobs / "orders.odcs.yaml").read_text(encoding="utf-8"))
    config = tmp_path / "contract.yaml"
    config.write_text((jobs / "contract.yaml").read_text(encoding="utf-8").replace("port: 9109", "port: 0"))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "COLUMNS": "200"}
    done = subprocess.run([str(CLI), "run", str(config), "--available-now"], capture_output=True, text=True,
                          timeout=900, env=env, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, (
        done.stdout + done.stderr[-3000:]
    )  # the generator's faults break critical rules
    tables = tmp_path / "data" / "tables"
    passed = read_table(str(tables / "orders_contract_pass"))
    quarantined = read_table(str(tables / "orders_contract_quarantine"))
    assert passed.num_rows + quarantined.num_rows == summary["records"]
    reasons = {e["check-id"] for errors in quarantined.column("_dq_errors").to_pylist() for e in errors}
    # the generator's faults, each quarantined by the contract rule that states it (a repeated order id breaks
    # the critical duplicateValues rule, so those batches are held back whole, as the contract says)
    assert {"order_id.not-null", "currency.enum", "order-id-duplicates", "malformed-record"} <= reasons, (
        reasons
    )
    results = read_table(str(tables / "orders_contract_results")).to_pylist()
    judged = {r["check_id"] for r in results if r["kind"] != "batch"}
    listed = subprocess.run(
        [str(CLI), "contract", str(config), "--json"], capture_output=True, text=True, timeout=120
    )
    mapping = json.loads(listed.stdout)["contract"]
    assert (mapping["id"], mapping["version"], mapping["rules"], mapping["executable"]) == (
        "urn:datacontract:shop:orders", "1.2.0", 20, 19)  # fmt: skip
    runs = {m["check_id"] for m in mapping["mapping"] if m.get("check_id")}
    assert {"order-id-duplicates", "basket-size", "batch-volume", "orders.schema"} <= judged <= runs | {
        "malformed-record", "unknown-fields"}  # fmt: skip
    # the results in contract terms, per batch, from the results table
    held = subprocess.run([str(CLI), "contract", str(config), "--batches", "5", "--json"], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    per_batch = json.loads(held.stdout)["batches"]
    assert [b["batch_id"] for b in per_batch] == [0, 1]
    for batch in per_batch:
        rows = [
            r for r in results if r["batch_id"] == batch["batch_id"] and r["kind"] in ("row", "aggregate")
        ]
        broken = sorted(r["check_id"] for r in rows if r["status"] == "failed" and r["check_id"] in runs)
        assert sorted(batch["broken"]) == broken and batch["rules"] == 19
        assert batch["held"] == sum(r["status"] == "passed" and r["check_id"] in runs for r in rows)
        assert "daily-volume" in batch["not_judged"]  # a window's rule: judged when its day closes
    text = subprocess.run([str(CLI), "contract", str(config), "--batches", "1"], capture_output=True, text=True,
                          timeout=120, env={**env, "COLUMNS": "200"}).stdout  # fmt: skip
    assert re.search(r"^batch 1: contract urn:datacontract:shop:orders v1\.2\.0: \d+/19 rules held; broke: ", text,
                     re.M), text  # fmt: skip


def test_run_executes_a_contract_from_the_odcs_repository(tmp_path: Path) -> None:
    """#59: the ODCS repository's own accuracy example (a sql rule naming its table, a number property) as a
    gate's checks through `streaming-dq run`: the batch with a value out of range breaks it and is held back."""
    example = (
        Path(__file__).resolve().parents[1] / "data" / "odcs-examples" / "quality--column-accuracy.odcs.yaml"
    )
    (tmp_path / "air.odcs.yaml").write_text(example.read_text(encoding="utf-8"), encoding="utf-8")
    landing = tmp_path / "landing"
    landing.mkdir()
    for i, values in enumerate(([12.5, 40.0, 499.0], [3.0, 612.0])):
        path = landing / f"{i}.json"
        path.write_text("".join(json.dumps({"DataValue": v}) + "\n" for v in values), encoding="utf-8")
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))
    config = tmp_path / "air.yaml"
    config.write_text(
        "gate: {name: air}\n"
        "source: {format: json, path: landing, schema: 'DataValue DOUBLE', max-files-per-trigger: 1}\n"
        "checkpoint: state\n"
        "targets: {pass: t/pass, quarantine: t/quarantine, results: t/results, writer: delta-rs}\n"
        "contract: {path: air.odcs.yaml}\n"
        "metrics: {prometheus: {port: 0}}\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "COLUMNS": "200"}
    done = subprocess.run([str(CLI), "run", str(config), "--available-now"], capture_output=True, text=True,
                          timeout=600, env=env, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    passed = read_table(str(tmp_path / "t" / "pass")).column("DataValue").to_pylist()
    quarantined = read_table(str(tmp_path / "t" / "quarantine"))
    assert sorted(passed) == [12.5, 40.0, 499.0]
    assert sorted(quarantined.column("DataValue").to_pylist()) == [3.0, 612.0]
    assert {e["check-id"] for errors in quarantined.column("_dq_errors").to_pylist() for e in errors} == {
        "DataValue.sql"}  # fmt: skip
    results = read_table(str(tmp_path / "t" / "results")).to_pylist()
    [broken] = [r for r in results if r["check_id"] == "DataValue.sql" and r["status"] == "failed"]
    assert (broken["batch_id"], broken["raw_value"]) == (1, 1.0)  # one value outside (0, 500)
