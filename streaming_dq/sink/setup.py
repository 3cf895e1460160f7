"""Before the first batch: the gate's tables created if missing, their maintenance settings checked.

It answers in one line before any row moves: a table that cannot be created, a vacuum retention below a
table's safe minimum, an order-by column the stream lacks. (The checks are held against the stream's schema by
:func:`~streaming_dq.core.column_types.check_schema`.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from streaming_dq.checks.stream_keys import KEYS_SCHEMA
from streaming_dq.core.modes import TargetRole
from streaming_dq.core.outcome_rows import RESULTS_SCHEMA
from streaming_dq.exceptions import CheckEvaluationError
from streaming_dq.maintenance import check_log_retention, check_retention, z_order_columns
from streaming_dq.metrics.store import METRICS_SCHEMA
from streaming_dq.sink.schemas import arrow_schema_of, quarantine_schema
from streaming_dq.tables.targets import writing

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from streaming_dq.maintenance import MaintenancePolicy
    from streaming_dq.sink.seen_keys import SeenKeys
    from streaming_dq.sink.tracker import MetricsTracker
    from streaming_dq.tables import DeltaTarget, TableWriter

__all__ = ["ensure_tables"]


def ensure_tables(
    writer: TableWriter,
    targets: Mapping[TargetRole, DeltaTarget],
    tracker: MetricsTracker | None,
    schema: StructType,
    *,
    keys: SeenKeys | None = None,
    malformed_column: str,
    maintenance: MaintenancePolicy | None,
    batch_id: int | None = None,
) -> None:
    """Create the missing tables with explicit, all-nullable schemas derived from ``schema`` (the pass table's
    drops the malformed column; the quarantine's adds the reasons), and refuse unsafe maintenance settings.

    Raises:
        TargetWriteError: A table cannot be created (or read).
        ConfigError: A vacuum or log retention below a table's safe minimum, or unknown Z-order columns.
    """
    pass_target = targets["pass"]
    rows_schema = arrow_schema_of(schema, drop=[malformed_column])
    with writing(pass_target, batch_id):
        pass_schema = writer.ensure_table(pass_target, rows_schema)
    wanted = {"quarantine": quarantine_schema(pass_schema), "results": RESULTS_SCHEMA}
    for role, target in targets.items():
        if role != "pass":
            with writing(target, batch_id):
                writer.ensure_table(target, wanted[role])
    if tracker is not None:
        with writing(tracker.target, batch_id):
            if tracker.target.name is not None:  # by the gate's writer: Spark's adds it to the catalog
                writer.ensure_table(tracker.target, METRICS_SCHEMA)
            tracker.ensure_table()
    if keys is not None and keys.target is not None:
        with writing(keys.target, batch_id):
            writer.ensure_table(keys.target, KEYS_SCHEMA)
        problems = [
            (c.check_id, name) for c in keys.checks for name in c.order_by if name not in schema.fieldNames()
        ]
        if problems:
            check_id, name = problems[0]
            raise CheckEvaluationError(check_id, f"order-by column {name!r} is not in the stream's columns")
    if maintenance is not None:
        z_order_columns(maintenance.z_order, pass_schema.names)
        tables = [*targets.values(), *([tracker.target] if tracker is not None else [])]
        tables += [keys.target] if keys is not None and keys.target is not None else []
        for target in tables:
            if maintenance.vacuum_retention is not None:
                check_retention(writer, target, maintenance.vacuum_retention)
            if maintenance.log_retention is not None:
                check_log_retention(writer, target, maintenance.log_retention)
