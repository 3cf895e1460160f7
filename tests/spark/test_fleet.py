"""Many gates in one application (``streaming-dq run a.yaml b.yaml``, :class:`GateFleet`): one session, one
``/metrics`` endpoint, a failed gate that does not stop the others."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jobs_support import make_orders_jobs, order_ids
from typer.testing import CliRunner

from streaming_dq.cli.main import app
from streaming_dq.exceptions import ConfigError

pytestmark = pytest.mark.spark


def tables(config: Path) -> Path:
    return config.parent / "data" / "tables"


def test_run_two_gates_one_failing_the_other_drains_and_the_last_lines_name_the_failed_one(
    spark: Any, tmp_path: Path
) -> None:
    (a, a_data), (b, _) = make_orders_jobs(tmp_path, ["orders-a", "orders-b"], batches=2, rows=20)
    text = b.read_text(encoding="utf-8").replace(
        "on-aggregate-failure: quarantine-batch", "on-aggregate-failure: stop"
    )
    b.write_text(text + "  - {check: row-count-min-check, check-id: at-least-1000, min-count: 1000}\n")

    done = CliRunner().invoke(app, ["run", str(a), str(b), "--fail-on", "never"])  # the stream's failure

    assert done.exit_code == 1, done.stdout + done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "the stream of gate 'orders-b' failed: GateFailedError: gate 'orders-b' stopped"
    ), last
    assert "orders-a" not in done.stderr
    a_batches = [line for line in done.stdout.splitlines() if line.startswith("orders-a: batch ")]
    assert len(a_batches) == 2, done.stdout
    assert not [line for line in done.stdout.splitlines() if line.startswith("orders-b: batch ")]
    assert f"orders-a: 2 batches, {a_data['records']} rows in" in done.stdout
    assert "orders-b: 0 batches, 0 rows in" in done.stdout
    passed_a, quarantined_a = order_ids(tables(a) / "orders_pass"), order_ids(tables(a) / "orders_quarantine")
    assert len(passed_a) + len(quarantined_a) == a_data["records"]
    assert not (tables(b) / "orders_pass").exists() or not order_ids(tables(b) / "orders_pass")
    assert spark.sparkContext._jsc is not None  # the session (the test's) was not stopped


def test_stop_all_on_failure_stops_the_other_gates(spark: Any, tmp_path: Path) -> None:
    (a, _), (b, _) = make_orders_jobs(tmp_path, ["orders-a", "orders-b"], batches=1, rows=10)
    for config in (a, b):
        config.write_text(
            config.read_text(encoding="utf-8").replace(
                "trigger: available-now", 'trigger: {processing-time: "1 second"}'
            )
        )
    text = b.read_text(encoding="utf-8").replace(
        "on-aggregate-failure: quarantine-batch", "on-aggregate-failure: stop"
    )
    b.write_text(text + "  - {check: row-count-min-check, check-id: at-least-1000, min-count: 1000}\n")

    done = CliRunner().invoke(
        app, ["run", str(a), str(b), "--stop-all-on-failure", "--timeout", "300", "--fail-on", "never"]
    )

    assert done.exit_code == 1, done.stdout + done.stderr[-3000:]
    assert "the stream of gate 'orders-b' failed" in done.stderr
    assert "orders-a: 1 batch," in done.stdout  # it ran, then was stopped with the fleet (not by the timeout)
    # #42: the healthy gate is stopped, not failed, whatever it was doing when the other one failed
    assert "orders-a" not in done.stderr and "InterruptedException" not in done.stderr, done.stderr
    assert not [q for q in spark.streams.active if q.name in ("orders-a", "orders-b")]


def test_one_metrics_endpoint_serves_both_gates_series(spark: Any, tmp_path: Path) -> None:
    from streaming_dq.config.fields import Trigger
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.runtime.fleet import GateFleet

    jobs = make_orders_jobs(tmp_path, ["orders-a", "orders-b"], batches=1, rows=20)
    configs = [load_gate_config(c).with_trigger(Trigger("1 second")) for c, _ in jobs]
    stop, urls, seen = threading.Event(), [], Counter()
    scraped: list[str] = []

    def on_batch(outcome: Any) -> None:
        seen[outcome.gate] += 1
        if len(seen) == 2 and not scraped:  # both gates committed a batch: scrape, then stop
            with urllib.request.urlopen(f"{urls[0]}", timeout=30) as response:
                scraped.append(response.read().decode())
            stop.set()

    fleet = GateFleet(configs, on_batch=on_batch, on_started=urls.append, stop_event=stop, session=spark)
    totals = fleet.run(timeout=600)

    assert totals.failed == [], totals
    assert len(urls) == 1 and urls[0].startswith("http://127.0.0.1:"), urls
    text = scraped[0]
    for (_, summary), gate in zip(jobs, ("orders-a", "orders-b"), strict=True):
        line = f'streaming_dq_rows_in_total{{gate="{gate}"}} {float(summary["records"])}'
        assert line in text, text[:3000]
    assert text.count("# TYPE streaming_dq_rows_in_total counter") == 1  # one family, two gates

    # each gate's jobs ran in its own scheduler pool (the Spark UI's REST API records each stage's pool)
    sc = spark.sparkContext
    with urllib.request.urlopen(f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages") as response:
        pools = {stage.get("schedulingPool") for stage in json.load(response)}
    assert {"orders-a", "orders-b"} <= pools, pools


def test_gates_of_one_run_need_their_own_name_checkpoint_and_tables(tmp_path: Path) -> None:
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.runtime.fleet import check_fleet

    (a, _), (b, _) = make_orders_jobs(tmp_path, ["orders-a", "orders-b"], batches=1, rows=5)
    text = b.read_text(encoding="utf-8")
    same_table = b.with_name("same-table.yaml")
    same_table.write_text(
        text.replace("pass: data/tables/orders_pass", f"pass: {tables(a) / 'orders_pass'}"), encoding="utf-8"
    )
    with pytest.raises(ConfigError) as caught:
        check_fleet([load_gate_config(a), load_gate_config(same_table)])
    assert caught.value.field_path == "targets.pass" and caught.value.source == str(same_table)
    assert "also the table of gate 'orders-a'" in str(caught.value)

    # each gate remembers its own keys across batches (#44): one keys table for two gates is refused too
    keys = "  metrics: data/tables/orders_metrics\n"
    for config, keys_at in ((a, tables(a)), (b.with_name("same-keys.yaml"), tables(a))):
        config.write_text(
            (a if config == a else b)
            .read_text(encoding="utf-8")
            .replace(keys, f"{keys}  keys: {keys_at / 'k'}\n"),
            encoding="utf-8",
        )
    with pytest.raises(ConfigError) as caught:
        check_fleet([load_gate_config(a), load_gate_config(b.with_name("same-keys.yaml"))])
    assert caught.value.field_path == "targets.keys", caught.value

    same_name = b.with_name("same-name.yaml")
    same_name.write_text(text.replace("name: orders-b", "name: orders-a"), encoding="utf-8")
    done = CliRunner().invoke(app, ["run", str(a), str(same_name)])
    assert done.exit_code == 2 and "gate.name" in done.stderr and "same-name.yaml" in done.stderr, done.stderr


def test_a_batch_that_begins_while_its_query_stops_is_not_run_and_is_no_failure(
    spark: Any, tmp_path: Path
) -> None:
    """The gate's side of a fleet's stop (#42): told ``stopping()``, it runs no new batch and counts none as
    failed; nothing is written, so the next run replays it."""
    from prometheus_client import CollectorRegistry

    from streaming_dq import CheckSet, QualityGate
    from streaming_dq.exceptions import GateStoppedError
    from streaming_dq.exporter import GateMetrics

    registry = CollectorRegistry()
    checks = CheckSet.from_dicts([{"check": "null-check", "check-id": "id-present", "columns": ["id"]}])
    metrics = GateMetrics("g", registry=registry)
    gate = QualityGate(
        "g", checks, pass_table=str(tmp_path / "pass"), quarantine_table=str(tmp_path / "q"), metrics=metrics
    )
    gate(spark.createDataFrame([(1,)], "id int"), 0)  # a batch before the stop counts
    assert registry.get_sample_value("streaming_dq_batches_total", {"gate": "g", "result": "committed"}) == 1
    gate.stopping()
    gate.stopped()
    with pytest.raises(GateStoppedError, match="batch 1 not run: the query is stopping"):
        gate(spark.createDataFrame([(2,)], "id int"), 1)
    from streaming_dq.tables import read_table

    assert read_table(str(tmp_path / "pass")).column("id").to_pylist() == [1]  # batch 1 wrote nothing
    failed = registry.get_sample_value("streaming_dq_batches_total", {"gate": "g", "result": "failed"})
    assert not failed, failed
