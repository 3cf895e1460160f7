"""``streaming-dq check``: validate a file or table once with the batch engine and report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from streaming_dq.config.loader import load_check_file
from streaming_dq.config.sections import SparkSection
from streaming_dq.core.modes import FailOn, failing_severities
from streaming_dq.core.severity import Severity
from streaming_dq.exceptions import CheckEvaluationError, ConfigError, MissingReferenceDatasetError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from streaming_dq.config.gate_config import GateConfig
    from streaming_dq.engine.result import BatchValidationResult

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

#: Reader options when the data is not described by a gate config's source.
DEFAULT_OPTIONS = {"csv": {"header": "true", "inferSchema": "true"}}


def read_data(session: SparkSession, path: Path, data_format: str, config: GateConfig | None) -> DataFrame:
    """Read ``path``; when the gate config's source has this format, exactly as ``run`` reads it.

    That keeps the malformed column (malformed lines are quarantined with their text, as in ``run``) and the
    unknown-fields column, so one file gives the same per-check counts through ``check`` and ``run``.
    """
    from streaming_dq.sink import ReferenceSpec
    from streaming_dq.sources import read_source

    if config is not None and data_format == "kafka":  # the topic's messages now (endingOffsets latest)
        topic = {"subscribe": str(path), "subscribe_pattern": None, "assign": None}
        return read_source(session, config.source.model_copy(update=topic), stream=False)
    if config is not None and config.source.format == data_format:
        return read_source(session, config.source, stream=False, path=str(path))
    return ReferenceSpec(data_format, str(path), None, DEFAULT_OPTIONS.get(data_format, {})).load(session)


def _references(session: SparkSession, config: GateConfig | None) -> dict[str, DataFrame]:
    from streaming_dq.sink import ReferenceSpec

    if config is None:
        return {}
    return {
        name: ReferenceSpec(r.format, r.path, r.schema_, dict(r.options)).load(session)
        for name, r in config.reference_datasets.items()
    }


def _document(
    result: BatchValidationResult, fail_on: FailOn, examples: list[dict[str, Any]]
) -> dict[str, Any]:
    summary = result.summary()
    report = result.report()
    return {
        "ok": _exit_code(result, fail_on) == EXIT_OK,
        "summary": {
            "total_records": summary.total_records,
            "passed_records": summary.passed_records,
            "failed_records": summary.failed_records,
            "warning_records": summary.warning_records,
            "pass_rate": summary.pass_rate,
        },
        "checks": [
            {
                "check-id": line.check_id,
                "check": line.check_type,
                "severity": line.severity,
                "status": line.status,
                "details": line.details,
            }
            for line in report.lines
        ],
        "failed_examples": examples,
    }


def _exit_code(result: BatchValidationResult, fail_on: FailOn) -> int:
    """1 when a check failed at a severity ``fail_on`` names (as ``run`` decides), else 0."""
    levels = failing_severities(fail_on)
    failed = [line for line in result.report().failed if line.severity in levels]
    return EXIT_FAILED if failed else EXIT_OK


def _examples(result: BatchValidationResult, limit: int, malformed: str | None) -> list[dict[str, Any]]:
    """Failed rows as the quarantine shows them (#42): a malformed record's text as ``_dq_raw`` (not the
    source's internal column), every timestamp in ISO 8601 with its offset."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    from streaming_dq.sink.schemas import RAW_COLUMN

    if limit <= 0:
        return []
    failed = result.fail_df()
    shown = [
        F.date_format(F.col(f"`{f.name}`"), "yyyy-MM-dd'T'HH:mm:ss.SSSXXX").alias(f.name)
        if isinstance(f.dataType, TimestampType)
        else F.col(f"`{f.name}`")
        for f in failed.schema.fields
    ]
    rows = [row.asDict(recursive=True) for row in failed.select(*shown).limit(limit).collect()]
    if malformed is None:
        return rows
    return [{(RAW_COLUMN if k == malformed else k): v for k, v in row.items()} for row in rows]


def run_check(
    config_path: Path,
    data: Path,
    data_format: str,
    *,
    as_json: bool,
    examples: int,
    fail_on: FailOn = "critical",
) -> int:
    """Validate ``data`` with the checks of ``config_path``; print the report; return the exit code.

    Raises:
        ConfigError: the config or checks file is invalid (the caller prints each problem, exit 2).
    """
    from streaming_dq.engine.batch import BatchDQEngine
    from streaming_dq.runtime.session import build_spark_session, source_bundles

    loaded = load_check_file(config_path)
    config = loaded.config
    if data_format == "kafka":
        if config is None or config.source.format != "kafka":
            raise ConfigError(
                "--format kafka reads a topic of the config's Kafka source: give a gate config with one",
                field_path="--format",
            )
    elif "://" not in str(data) and not data.exists():
        typer.echo(f"error: --data {data}: no such file or directory", err=True)
        return EXIT_USAGE
    fail_levels = list(config.fail_levels) if config else [Severity.CRITICAL]
    formats = (
        {data_format, *(r.format for r in config.reference_datasets.values())} if config else {data_format}
    )
    session, own_session = build_spark_session(
        config.spark if config else SparkSection(),
        app_name="streaming-dq-check",
        delta="delta" in formats,
        bundles=source_bundles(config.source) if config and data_format == "kafka" else (),
    )
    try:
        engine = BatchDQEngine(
            loaded.check_set,
            fail_levels,
            profiles=config.profile_objects() if config else (),
            event_time=config.gate.event_time if config else None,
            timezone=config.gate.timezone if config else "UTC",
            malformed_column=config.source.malformed_column if config else None,
        )
        try:
            result = engine.run_batch(
                read_data(session, data, data_format, config), _references(session, config)
            )
        except (CheckEvaluationError, MissingReferenceDatasetError) as exc:
            typer.echo(f"error: {exc}", err=True)
            return EXIT_USAGE
        shown = _examples(result, examples, config.source.malformed_column if config else None)
        mapping = config.contract_mapping if config is not None else None
        held = None
        if mapping is not None:  # the run in contract terms (docs/contracts.md)
            statuses: dict[str, str] = {a.check_id: a.status for a in result.aggregate_results}
            statuses.update({r.check.check_id: r.status for r in result.outcome.row_results})
            held = mapping.held_in(statuses)
        if as_json:
            document = _document(result, fail_on, shown)
            if mapping is not None:
                document["contract"] = {"id": mapping.contract_id, "version": mapping.version, **(held or {})}
            typer.echo(json.dumps(document, indent=2, default=str))
        else:
            typer.echo(f"{data}: {result.summary()}")
            typer.echo(str(result.report()).rstrip())
            if mapping is not None and held is not None:
                typer.echo(mapping.line(held))
            for row in shown:
                typer.echo(f"failed row: {json.dumps(row, default=str)}")
        return _exit_code(result, fail_on)
    finally:
        if own_session:
            session.stop()
