"""OpenLineage events of a gate (#45), checked against the published JSON Schemas (tests/lineage_schema.py):
a batch's event names its input and both outputs with the verdicts of its checks, a window's event its
window and the batch that closed it, a failed batch's event its error; and the validation can fail. The
``lineage`` config section refuses a transport without what it needs before Spark starts."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import jsonschema
import pytest
import yaml
from lineage_schema import validate_event
from referencing.exceptions import Unresolvable

from streaming_dq.core.outcome import BatchOutcome, CheckOutcome, WindowOutcome
from streaming_dq.lineage.events import (
    Datasets,
    as_dict,
    batch_event,
    dataset_name,
    failure_event,
    new_run_id,
    window_event,
)

T0 = datetime(2026, 3, 1, 10, tzinfo=UTC)
DATASETS = Datasets(("file", "/landing"), ("file", "/t/pass"), ("s3://lake", "t/quarantine"))


def outcome() -> BatchOutcome:
    start = datetime(2026, 3, 1, tzinfo=UTC)
    return BatchOutcome(
        gate="orders", batch_id=7, status="committed", rows_in=100, rows_passed=90, rows_quarantined=10,
        rows_warned=3, active_profiles=("sale",),
        checks=(
            CheckOutcome(check_id="id-present", check_type="null-check", kind="row", severity="critical",
                         status="failed", violations=10, raw_value=None, adjusted_value=None),
            CheckOutcome(check_id="amount-high", check_type="numeric-max-check", kind="row", severity="warning",
                         status="failed", violations=3, raw_value=None, adjusted_value=None),
            CheckOutcome(check_id="volume", check_type="row-count-anomaly-check", kind="aggregate",
                         severity="warning", status="passed", violations=None, raw_value=100.0,
                         adjusted_value=100.0, expected_value=95.0, band_low=80.0, band_high=110.0, score=0.3),
        ),
        windows=(
            WindowOutcome(check_id="per-day", check_type="row-count-min-check", window="1 day", window_start=start,
                          window_end=start + timedelta(days=1), severity="critical", status="failed",
                          raw_value=40.0, adjusted_value=40.0),  # type: ignore[arg-type]
        ),
    )  # fmt: skip


def test_a_batch_event_is_valid_and_carries_every_verdict() -> None:
    run_id = new_run_id()
    event = as_dict(
        batch_event(outcome(), namespace="shop", datasets=DATASETS, fail_levels=["critical"], run_id=run_id)
    )
    checked = validate_event(event)
    assert "run.test" in checked and "run.streamingDq" in checked and "job.jobType" in checked
    assert "inputs[/landing].inputFacets.dataQualityAssertions" in checked
    assert "outputs[t/quarantine].outputFacets.outputStatistics" in checked
    assert event["eventType"] == "COMPLETE" and event["run"]["runId"] == run_id and uuid.UUID(run_id)
    assert (event["job"]["namespace"], event["job"]["name"]) == ("shop", "orders")
    tests = {t["name"]: t for t in event["run"]["facets"]["test"]["tests"]}
    assert (tests["id-present"]["status"], tests["id-present"]["severity"], tests["id-present"]["expected"],
            tests["id-present"]["actual"]) == ("fail", "error", "0", "10")  # fmt: skip
    assert (tests["amount-high"]["status"], tests["amount-high"]["severity"]) == ("fail", "warn")
    assert (tests["volume"]["expected"], tests["volume"]["actual"]) == ("[80, 110]", "100")
    (source,) = event["inputs"]
    assertions = source["inputFacets"]["dataQualityAssertions"]["assertions"]
    assert [(a["name"], a["success"]) for a in assertions] == [
        ("id-present", False),
        ("amount-high", False),
        ("volume", True),
    ]
    assert source["inputFacets"]["dataQualityMetrics"]["rowCount"] == 100
    rows = {
        (o["namespace"], o["name"]): o["outputFacets"]["outputStatistics"]["rowCount"]
        for o in event["outputs"]
    }
    assert rows == {("file", "/t/pass"): 90, ("s3://lake", "t/quarantine"): 10}
    verdict = event["run"]["facets"]["streamingDq"]
    assert (verdict["batchId"], verdict["verdict"], verdict["rowsWarned"], verdict["activeProfiles"]) == (
        7,
        "failed",
        3,
        ["sale"],
    )
    # a warning alone does not fail the batch's verdict when only critical fails the gate
    lenient = as_dict(
        batch_event(outcome(), namespace="shop", datasets=DATASETS, fail_levels=[], run_id=run_id)
    )
    assert lenient["run"]["facets"]["streamingDq"]["verdict"] == "passed"


def test_a_window_event_names_its_window_and_the_batch_that_closed_it() -> None:
    parent = new_run_id()
    event = as_dict(window_event(outcome().windows[0], gate="orders", namespace="shop", parent=parent))
    assert set(validate_event(event)) == {"run.nominalTime", "run.test", "run.parent", "job.jobType"}
    assert event["job"]["name"] == "orders.windows"
    assert event["run"]["facets"]["nominalTime"]["nominalStartTime"].startswith("2026-03-01T00:00:00")
    assert event["run"]["facets"]["parent"]["run"]["runId"] == parent
    (test,) = event["run"]["facets"]["test"]["tests"]
    assert (test["name"], test["status"], test["actual"]) == ("per-day (1 day)", "fail", "40")


def test_a_failed_batch_event_says_why() -> None:
    event = as_dict(failure_event("orders", 8, OSError("disk full"), namespace="shop"))
    assert validate_event(event) == ["run.errorMessage", "job.jobType"]
    assert event["eventType"] == "FAIL" and "disk full" in event["run"]["facets"]["errorMessage"]["message"]


@pytest.mark.parametrize(
    ("spoil", "error"),
    [
        (lambda e: e["run"].update(runId="not-a-uuid"), jsonschema.ValidationError),
        (lambda e: e.update(eventType="FINISHED"), jsonschema.ValidationError),
        (lambda e: e.update(eventTime="yesterday"), jsonschema.ValidationError),
        (lambda e: e["run"]["facets"]["streamingDq"].update(verdict="maybe"), jsonschema.ValidationError),
        (lambda e: e["run"]["facets"]["test"]["tests"][0].pop("status"), jsonschema.ValidationError),
        (lambda e: e["run"]["facets"]["test"].update(_schemaURL="https://openlineage.io/spec/facets/9-9-9/X.json"),
         Unresolvable),
    ],
)  # fmt: skip
def test_the_validation_refuses_a_spoiled_event(spoil, error) -> None:  # type: ignore[no-untyped-def]
    event = as_dict(
        batch_event(
            outcome(), namespace="shop", datasets=DATASETS, fail_levels=["critical"], run_id=new_run_id()
        )
    )
    validate_event(event)
    spoil(event)
    with pytest.raises(error):
        validate_event(event)


def test_dataset_names_follow_the_naming_spec() -> None:
    assert dataset_name("s3a://lake/orders/pass") == ("s3://lake", "orders/pass")
    assert dataset_name("/data/pass") == ("file", "/data/pass")
    assert dataset_name("", topic="orders", servers="127.0.0.1:9092,other:9092") == (
        "kafka://127.0.0.1:9092",
        "orders",
    )


BASE = {
    "gate": {"name": "orders"},
    "source": {"format": "json", "path": "landing", "schema": "id BIGINT"},
    "checkpoint": "state",
    "targets": {"pass": "pass", "quarantine": "quarantine"},
    "checks": [{"check": "null-check", "check-id": "id", "columns": ["id"]}],
}


@pytest.mark.parametrize(
    ("transport", "message"),
    [
        ({"type": "http"}, "needs `url`"),
        ({"type": "file"}, "needs `path`"),
        ({"type": "kafka", "topic": "ol"}, "bootstrap.servers"),
        ({"type": "carrier-pigeon"}, "type"),
    ],
)
def test_a_lineage_transport_without_what_it_needs_is_refused(tmp_path, transport, message) -> None:  # type: ignore[no-untyped-def]
    from streaming_dq.config.loader import inspect_gate_config

    path = tmp_path / "g.yaml"
    path.write_text(yaml.safe_dump({**BASE, "lineage": {"transport": transport}}))
    config, problems = inspect_gate_config(path)
    assert config is None and problems
    assert any("lineage.transport" in str(p) and message in str(p) for p in problems), [
        str(p) for p in problems
    ]


def test_a_file_transport_path_is_made_absolute_and_an_unset_key_is_called_a_secret(
    tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from streaming_dq.config.loader import inspect_gate_config

    path = tmp_path / "g.yaml"
    path.write_text(
        yaml.safe_dump({**BASE, "lineage": {"transport": {"type": "file", "path": "ol/events.jsonl"}}})
    )
    config, problems = inspect_gate_config(path)
    assert problems == [] and config is not None and config.lineage is not None
    assert config.lineage.transport.path == str(tmp_path / "ol" / "events.jsonl")
    monkeypatch.delenv("OL_KEY", raising=False)
    http = {"type": "http", "url": "http://127.0.0.1:1", "api-key": "${OL_KEY}"}
    path.write_text(yaml.safe_dump({**BASE, "lineage": {"transport": http}}))
    _, problems = inspect_gate_config(path)
    assert any("holds a secret" in str(p) for p in problems), [str(p) for p in problems]
