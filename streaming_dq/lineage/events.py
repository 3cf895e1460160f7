"""OpenLineage run events of a gate: one per committed micro-batch, one per final window verdict, one per batch
that failed before it committed.

A batch's event (job ``<gate>``, ``COMPLETE``) names its input (the source) and its two outputs (the pass and
quarantine tables), carries each check's verdict twice in the standard facets (the input's
``dataQualityAssertions``, and the run's ``test`` facet with severity, expected and actual), the input's row
count (``dataQualityMetrics``), the rows each output received (``outputStatistics``), and the batch's own
verdict in ``streamingDq`` (:data:`BATCH_FACET_SCHEMA`). A window's event (job ``<gate>.windows``) carries
the window as the run's ``nominalTime`` and its verdict as a test, and points at the batch that closed it
(``parent``). A failed batch's event is ``FAIL`` with ``errorMessage``. Severity is written the way the
facets spell it: ``error`` for critical, ``warn`` for warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib.metadata import version as _version
from typing import Any, ClassVar

import attr
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    RunFacet,
    data_quality_assertions_dataset,
    data_quality_metrics_input_dataset,
    error_message_run,
    job_type_job,
    nominal_time_run,
    output_statistics_output_dataset,
    parent_run,
    test_run,
)
from openlineage.client.uuid import generate_new_uuid

from streaming_dq.core.outcome import BatchOutcome, CheckOutcome, WindowOutcome

__all__ = ["BATCH_FACET_SCHEMA", "PRODUCER", "Datasets", "batch_event", "failure_event", "window_event"]

#: Who produced the events (a URI, as the spec asks).
PRODUCER = f"urn:streaming-dq:{_version('streaming-dq')}"
#: The schema of the ``streamingDq`` run facet, shipped as streaming_dq/lineage/StreamingDqBatchRunFacet.json.
BATCH_FACET_SCHEMA = "urn:streaming-dq:schema:StreamingDqBatchRunFacet:1-0-0#/$defs/StreamingDqBatchRunFacet"
_SEVERITY = {"critical": "error", "warning": "warn"}
_TEST_STATUS = {"passed": "pass", "failed": "fail", "skipped": "skip"}


@attr.define
class StreamingDqBatchRunFacet(RunFacet):
    """The batch's own verdict: its id, rows in, passed, quarantined, warned, malformed, late, and whether a
    check failed at a failing level."""

    batchId: int
    verdict: str
    rowsIn: int
    rowsPassed: int
    rowsQuarantined: int
    rowsWarned: int
    rowsMalformed: int
    rowsLate: int
    activeProfiles: list[str]
    _additional_skip_redact: ClassVar[list[str]] = ["batchId", "verdict"]

    @staticmethod
    def _get_schema() -> str:
        return BATCH_FACET_SCHEMA


@attr.define(frozen=True)
class Datasets:
    """The gate's datasets as OpenLineage names them: (namespace, name) of the input, pass and quarantine."""

    source: tuple[str, str]
    passed: tuple[str, str]
    quarantine: tuple[str, str]


def dataset_name(uri: str, *, topic: str | None = None, servers: str | None = None) -> tuple[str, str]:
    """OpenLineage's (namespace, name) of a table or source: ``file`` and the absolute path for a local path,
    ``s3://bucket`` and the key for an object store, ``kafka://host:port`` and the topic for Kafka.

    Example:
        >>> dataset_name("/data/orders_pass")
        ('file', '/data/orders_pass')
        >>> dataset_name("s3a://lake/tables/orders_pass")
        ('s3://lake', 'tables/orders_pass')
    """
    if topic is not None:
        first = (servers or "").split(",")[0].strip()
        return f"kafka://{first}", topic
    if "://" in uri:
        scheme, rest = uri.split("://", 1)
        bucket, _, key = rest.partition("/")
        scheme = {"s3a": "s3", "s3n": "s3", "abfss": "abfss", "gs": "gs"}.get(scheme, scheme)
        return f"{scheme}://{bucket}", key
    if uri.startswith("file:"):
        return "file", uri.removeprefix("file:")
    return "file", uri


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _value(v: float | int | None) -> str | None:
    return None if v is None else f"{v:g}" if isinstance(v, float) else str(v)


def _expected_actual(c: CheckOutcome | WindowOutcome) -> tuple[str | None, str | None]:
    """What the check expected and saw: no violating row for a row check; the anomaly band or the value."""
    if isinstance(c, CheckOutcome) and c.kind == "row":
        return "0", _value(c.violations)
    actual = _value(c.adjusted_value if c.adjusted_value is not None else c.raw_value)
    if c.band_low is not None or c.band_high is not None:
        return f"[{_value(c.band_low) or '-inf'}, {_value(c.band_high) or 'inf'}]", actual
    return None, actual


def _test(c: CheckOutcome | WindowOutcome, name: str) -> test_run.TestExecution:
    expected, actual = _expected_actual(c)
    return test_run.TestExecution(
        name=name,
        status=_TEST_STATUS.get(c.status, "skip"),
        severity=_SEVERITY.get(c.severity, c.severity),
        type=c.check_type,
        expected=expected,
        actual=actual,
    )


def _job(namespace: str, name: str) -> Job:
    kind = job_type_job.JobTypeJobFacet(
        processingType="STREAMING", integration="STREAMING_DQ", jobType="MICRO_BATCH", producer=PRODUCER
    )
    return Job(namespace=namespace, name=name, facets={"jobType": kind})


def batch_event(
    outcome: BatchOutcome, *, namespace: str, datasets: Datasets, fail_levels: Sequence[str], run_id: str
) -> RunEvent:
    """The event of a committed batch (see the module); ``run_id`` identifies it (its windows point at it)."""
    checks = [c for c in outcome.checks if c.status != "provisional"]
    assertions = [
        data_quality_assertions_dataset.Assertion(
            assertion=c.check_type,
            success=c.status != "failed",
            severity=_SEVERITY.get(c.severity, c.severity),
            name=c.check_id,
            expected=_expected_actual(c)[0],
            actual=_expected_actual(c)[1],
        )
        for c in checks
        if c.status != "skipped"
    ]
    failing = any(c.status == "failed" and c.severity in fail_levels for c in checks)
    source = InputDataset(
        namespace=datasets.source[0],
        name=datasets.source[1],
        inputFacets={
            "dataQualityAssertions": data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(
                assertions=assertions, producer=PRODUCER
            ),
            "dataQualityMetrics": data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet(
                rowCount=outcome.rows_in, columnMetrics={}, producer=PRODUCER
            ),
        },
    )
    outputs = [
        OutputDataset(namespace=ns, name=name, outputFacets={"outputStatistics":
            output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(rowCount=rows, producer=PRODUCER)})
        for (ns, name), rows in ((datasets.passed, outcome.rows_passed), (datasets.quarantine, outcome.rows_quarantined))
    ]  # fmt: skip
    verdict = StreamingDqBatchRunFacet(
        batchId=outcome.batch_id,
        verdict="failed" if failing else "passed",
        rowsIn=outcome.rows_in,
        rowsPassed=outcome.rows_passed,
        rowsQuarantined=outcome.rows_quarantined,
        rowsWarned=outcome.rows_warned,
        rowsMalformed=outcome.rows_malformed,
        rowsLate=outcome.rows_late,
        activeProfiles=list(outcome.active_profiles),
        producer=PRODUCER,
    )
    tests = test_run.TestRunFacet(tests=[_test(c, c.check_id) for c in checks], producer=PRODUCER)
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=_now(),
        run=Run(runId=run_id, facets={"test": tests, "streamingDq": verdict}),
        job=_job(namespace, datasets_job(outcome.gate)),
        inputs=[source],
        outputs=outputs,
        producer=PRODUCER,
    )


def datasets_job(gate: str) -> str:
    """A gate's batch job name (its windows' job is ``<gate>.windows``)."""
    return gate


def window_event(window: WindowOutcome, *, gate: str, namespace: str, parent: str | None) -> RunEvent:
    """The event of one final window verdict; ``parent``: the run id of the batch that closed it."""
    facets: dict[str, RunFacet] = {
        "nominalTime": nominal_time_run.NominalTimeRunFacet(
            nominalStartTime=window.window_start.astimezone(UTC).isoformat(),
            nominalEndTime=window.window_end.astimezone(UTC).isoformat(),
            producer=PRODUCER,
        ),
        "test": test_run.TestRunFacet(tests=[_test(window, f"{window.check_id} ({window.window})")], producer=PRODUCER),
    }  # fmt: skip
    if parent is not None:
        facets["parent"] = parent_run.ParentRunFacet(
            run=parent_run.Run(runId=parent),
            job=parent_run.Job(namespace=namespace, name=datasets_job(gate)),
            producer=PRODUCER,
        )
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=_now(),
        run=Run(runId=new_run_id(), facets=facets),
        job=_job(namespace, f"{datasets_job(gate)}.windows"),
        producer=PRODUCER,
    )


def failure_event(gate: str, batch_id: int, error: BaseException, *, namespace: str) -> RunEvent:
    """The event of a batch that raised before it committed (Spark replays it)."""
    message = error_message_run.ErrorMessageRunFacet(
        message=f"batch {batch_id}: {type(error).__name__}: {error}"[:2000],
        programmingLanguage="python",
        producer=PRODUCER,
    )
    return RunEvent(
        eventType=RunState.FAIL,
        eventTime=_now(),
        run=Run(runId=new_run_id(), facets={"errorMessage": message}),
        job=_job(namespace, datasets_job(gate)),
        producer=PRODUCER,
    )


def new_run_id() -> str:
    """A new run id (a time-ordered UUID)."""
    return str(generate_new_uuid())


def as_dict(event: RunEvent) -> Mapping[str, Any]:
    """The event as the JSON the transports send."""
    from openlineage.client.serde import Serde

    return Serde.to_dict(event)
