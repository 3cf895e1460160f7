"""How a micro-batch becomes routed rows, in one Spark job either way.

* :func:`route_validated`: the engine's fast path. ``observe`` + ``toArrow`` collect the rows with every
  aggregate (row counts, per-check violation counts, aggregate check states, the event-time range), and the
  split into pass and quarantine happens in Arrow.
* :func:`route_drifted`: a batch quarantined whole because of schema drift. It is not validated (its checks
  may reference columns it no longer has); every row is kept as JSON in ``_dq_raw``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.core.outcome import CheckOutcome
from streaming_dq.engine.arrow import ArrowValidation, validate_to_arrow
from streaming_dq.engine.plan import ValidationPlan
from streaming_dq.exceptions import CheckEvaluationError, MissingReferenceDatasetError
from streaming_dq.sink.drift import DRIFT_CHECK_ID, SchemaDrift
from streaming_dq.sink.records import (
    BatchContext,
    EventTimeStats,
    RoutedBatch,
    active_profiles,
    check_outcomes,
    error_entries,
    event_time_of,
    quarantine_rows,
)
from streaming_dq.sink.schemas import ERRORS_COLUMN, RAW_COLUMN, conform


def route_validated(
    plan: ValidationPlan,
    df: DataFrame,
    ctx: BatchContext,
    table_schema: pa.Schema,
    malformed: str | None,
    *,
    event_time: str | None,
    merge: bool,
    extra_columns: dict[str, Column] | None = None,
) -> RoutedBatch:
    """Validate ``df`` and shape its rows for the pass and quarantine tables.

    Args:
        plan: The batch's validation plan (``malformed`` is its malformed column, when the batch has one).
        df: The batch.
        ctx: The batch's identity.
        table_schema: The pass table's current schema.
        malformed: The corrupt-record column present in ``df``, or None.
        event_time: The event-time column, whose range and NULL count are observed on the same job.
        merge: Keep the batch's extra columns (schema-drift ``merge``).
        extra_columns: Per-row inputs of window-scoped checks, collected by the same job.
    """
    aggregates = plan.memo(
        ("event-time", event_time, malformed), lambda: event_time_aggregates(event_time, malformed)
    )
    validation = validate(plan, df, aggregates, extra_columns)
    dropped = [malformed] if malformed else []
    quarantined = validation.quarantined
    extras = validation.extras
    return RoutedBatch(
        passed=conform(validation.passed.drop_columns(dropped), table_schema, keep_extra=merge),
        quarantined=quarantine_rows(
            quarantined.drop_columns(dropped),
            quarantined.column(ERRORS_COLUMN),
            quarantined.column(malformed) if malformed else None,
            ctx,
            table_schema,
        ),
        checks=check_outcomes(plan, validation.outcome),
        rows_in=validation.outcome.total,
        rows_warned=validation.warned,
        rows_malformed=validation.outcome.violations.get(0, 0) if malformed else 0,
        event_time=EventTimeStats.from_micros(
            extras.get("et_min"), extras.get("et_max"), extras.get("et_nulls")
        ),
        active_profiles=active_profiles(plan, validation.outcome),
        breached=bool(validation.outcome.breached),
        plan_outcome=validation.outcome,
        plan=plan,
        window_inputs=validation.extra_columns if extra_columns else None,
    )


def validate(
    plan: ValidationPlan,
    df: DataFrame,
    extra_aggregates: dict[str, Column],
    extra_columns: dict[str, Column] | None = None,
) -> ArrowValidation:
    """The engine's fast path; ``df`` is persisted only when classic aggregate checks rescan it.

    Raises:
        MissingReferenceDatasetError: An integrity check's reference dataset is missing (unwrapped from the
            engine's CheckEvaluationError so the caller sees the real cause).
    """
    persist = bool(plan.classic_checks())
    if persist:
        df.persist()
    try:
        return validate_to_arrow(plan, df, extra_aggregates=extra_aggregates, extra_columns=extra_columns)
    except CheckEvaluationError as exc:
        if isinstance(exc.__cause__, MissingReferenceDatasetError):
            raise exc.__cause__ from exc
        raise
    finally:
        if persist:
            df.unpersist()


def event_time_aggregates(event_time: str | None, malformed: str | None) -> dict[str, Column]:
    """Min/max event time (epoch microseconds) and the count of well-formed rows without one."""
    if not event_time:
        return {}
    ts = F.col(event_time).cast("timestamp")
    well_formed = F.col(malformed).isNull() if malformed else F.lit(True)
    return {
        "et_min": F.unix_micros(F.min(ts)),
        "et_max": F.unix_micros(F.max(ts)),
        "et_nulls": F.count_if(ts.isNull() & well_formed),
    }


def route_drifted(
    df: DataFrame,
    ctx: BatchContext,
    table_schema: pa.Schema,
    drift: SchemaDrift,
    malformed: str | None,
    *,
    event_time: str | None,
) -> RoutedBatch:
    """The whole batch to quarantine in ONE job: matching columns kept, every row's JSON in ``_dq_raw``."""
    data_cols = [c for c in df.columns if c != malformed]
    payload = F.to_json(F.struct(*[F.col(f"`{c}`") for c in data_cols]))
    raw = F.coalesce(F.col(f"`{malformed}`"), payload) if malformed else payload
    rows = df.select(*[F.col(f"`{c}`") for c in df.columns], raw.alias(RAW_COLUMN)).toArrow()
    changed = {c for c, _, _ in drift.changed}
    kept = rows.select([c for c in table_schema.names if c in rows.column_names and c not in changed])
    n = rows.num_rows
    errors = error_entries(n, "SchemaDrift", DRIFT_CHECK_ID, "critical")
    return RoutedBatch(
        passed=table_schema.empty_table(),
        quarantined=quarantine_rows(kept, errors, rows.column(RAW_COLUMN), ctx, table_schema),
        checks=(
            CheckOutcome(DRIFT_CHECK_ID, DRIFT_CHECK_ID, "aggregate", "critical", "failed", violations=n),
        ),
        rows_in=n,
        rows_malformed=n - rows.column(malformed).null_count if malformed else 0,
        event_time=event_time_of(rows, event_time, malformed),
    )


def fill_missing(df: DataFrame, table_schema: pa.Schema, missing: Sequence[str]) -> DataFrame:
    """Add the table's columns the batch lacks, as typed NULLs (schema-drift ``merge``)."""
    if not missing:
        return df
    from pyspark.sql.pandas.types import from_arrow_type

    return df.withColumns(
        {c: F.lit(None).cast(from_arrow_type(table_schema.field(c).type, False)) for c in missing}
    )
