"""The three streaming sinks under test, as ``foreachBatch`` functions writing with delta-rs.

* ``plain``: append the batch as it is (``write_deltalake`` of ``batch_df.toArrow()``).
* ``floor``: the minimal hand-written split: every row predicate once as ONE boolean column, ``toArrow``,
  split in Arrow, two appends. No aggregates, no error lists, no idempotency bookkeeping.
* ``gate``: streaming_dq's :class:`~streaming_dq.sink.QualityGate` (writer ``delta-rs``) with a results table,
  as a user runs it: one more (small) commit per batch than the floor's two.
  While the sink package is not importable, a stand-in (``validate_to_arrow`` + two appends) is used and the
  results say so (``gate_impl``).

Each factory gets fresh target folders and returns ``(batch_fn, prepare)``; ``prepare(spark, schema)`` runs before the
timed stream (table creation is not part of the per-batch cost for any variant).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from benchmarks.rules import Rule, any_failed, to_check_dict
from streaming_dq.compat.spark import to_arrow

Factory = Callable[[list[Rule], Path], tuple[Callable[[Any, int], None], Callable[[Any, Any], None]]]


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])


def _create(path: Path, schema: pa.Schema) -> None:
    from deltalake import DeltaTable

    DeltaTable.create(str(path), schema=_nullable(schema), mode="error")


def _arrow_schema(spark_schema: Any) -> pa.Schema:
    from streaming_dq.compat.spark import arrow_schema

    return arrow_schema(spark_schema)


def plain(rules: list[Rule], target: Path) -> tuple[Callable[[Any, int], None], Callable[[Any, Any], None]]:
    from deltalake import write_deltalake

    out = target / "plain"

    def prepare(spark: Any, spark_schema: Any) -> None:
        _create(out, _arrow_schema(spark_schema))

    def batch(batch_df: Any, batch_id: int) -> None:
        write_deltalake(str(out), to_arrow(batch_df), mode="append")

    return batch, prepare


def floor(rules: list[Rule], target: Path) -> tuple[Callable[[Any, int], None], Callable[[Any, Any], None]]:
    from deltalake import write_deltalake

    passed_path, failed_path = target / "pass", target / "quarantine"

    def prepare(spark: Any, spark_schema: Any) -> None:
        schema = _arrow_schema(spark_schema)
        _create(passed_path, schema)
        _create(failed_path, schema)

    def batch(batch_df: Any, batch_id: int) -> None:
        columns = list(batch_df.columns)
        table = to_arrow(batch_df.select(*columns, any_failed(rules).alias("__failed")))
        failed = table.column("__failed")
        rows = table.select(columns)
        write_deltalake(str(passed_path), rows.filter(pc.invert(failed)), mode="append")
        write_deltalake(str(failed_path), rows.filter(failed), mode="append")

    return batch, prepare


def check_set(rules: list[Rule]) -> Any:
    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.config.registry import CheckConfigRegistry

    names = CheckConfigRegistry.names()
    return CheckSet.from_dicts([to_check_dict(r, names) for r in rules])


def gate_impl() -> str:
    """``QualityGate`` when the sink is importable, else ``validate_to_arrow stand-in``."""
    try:
        from streaming_dq.sink import QualityGate  # noqa: F401
    except ImportError:
        return "validate_to_arrow stand-in"
    return "QualityGate"


def gate(rules: list[Rule], target: Path) -> tuple[Callable[[Any, int], None], Callable[[Any, Any], None]]:
    checks = check_set(rules)
    passed_path, failed_path = target / "pass", target / "quarantine"
    if gate_impl() != "QualityGate":
        return _stand_in(checks, passed_path, failed_path)
    from streaming_dq.sink import QualityGate

    the_gate = QualityGate(
        "bench",
        checks,
        pass_table=str(passed_path),
        quarantine_table=str(failed_path),
        results_table=str(target / "results"),
        writer="delta-rs",
    )

    def prepare(spark: Any, spark_schema: Any) -> None:
        the_gate.ensure_tables(spark_schema, spark)

    def batch(batch_df: Any, batch_id: int) -> None:
        the_gate(batch_df, batch_id)

    return batch, prepare


def _stand_in(
    checks: Any, passed_path: Path, failed_path: Path
) -> tuple[Callable[[Any, int], None], Callable[[Any, Any], None]]:
    from deltalake import write_deltalake

    from streaming_dq.engine.plan import ValidationPlan
    from streaming_dq.engine.validate import validate_to_arrow

    plan = ValidationPlan(checks)

    def prepare(spark: Any, spark_schema: Any) -> None:
        return None

    def batch(batch_df: Any, batch_id: int) -> None:
        result = validate_to_arrow(plan, batch_df)
        write_deltalake(str(passed_path), result.passed, mode="append")
        write_deltalake(str(failed_path), result.quarantined, mode="append")

    return batch, prepare


VARIANTS: dict[str, Factory] = {"plain": plain, "floor": floor, "gate": gate}


def table_rows(path: Path) -> int:
    """Rows in a Delta table (0 when it does not exist)."""
    from deltalake import DeltaTable

    if not DeltaTable.is_deltatable(str(path)):
        return 0
    return int(DeltaTable(str(path)).count())


def routed_rows(variant: str, target: Path) -> dict[str, int]:
    """How many rows each variant routed where (a correctness cross-check, not a timing)."""
    if variant == "plain":
        return {"pass": table_rows(target / "plain"), "quarantine": 0}
    return {"pass": table_rows(target / "pass"), "quarantine": table_rows(target / "quarantine")}
