"""Classic aggregate checks: the ones that cannot ride on the batch's one aggregation pass.

A check that needs a groupBy, a join or a distinct over the whole batch (uniqueness, a foreign key as an
aggregate, a distribution) runs its own Spark job per override group present (:meth:`evaluate_frame` over
the group's rows). :func:`classic_results` gives the results, in declaration order, that
:func:`~streaming_dq.engine.decision.decide` folds into the batch's decision (:func:`decided`: both).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streaming_dq.core.results import AggregateCheckResult
from streaming_dq.engine.decision import BatchDecision, aggregate_units, decide, judged, rows_present
from streaming_dq.engine.values import BatchAggregates
from streaming_dq.exceptions import InternalError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streaming_dq.engine.plan import ValidationPlan

__all__ = ["classic_results", "decided"]


def classic_results(
    plan: ValidationPlan, aggregates: BatchAggregates, frame: DataFrame | None
) -> list[tuple[int, AggregateCheckResult]]:
    """The classic checks' results with their declaration order; none when the plan has no classic check.

    Args:
        plan: The batch's plan.
        aggregates: The pass's values (which regimes are present, and how many rows each has).
        frame: The batch with the regime ordinal (:meth:`~streaming_dq.engine.plan.ValidationPlan.with_regime`),
            or the annotated batch; the gate's columns (``__dq_*``) and the source's corrupt-record and
            unknown-fields columns are dropped before a check sees it.

    Raises:
        InternalError: The plan has classic checks and no ``frame`` was given.
    """
    checks = plan.classic_checks
    if not checks:
        return []
    if frame is None:
        raise InternalError("classic aggregate checks need the batch's DataFrame")
    from pyspark.sql import functions as F

    from streaming_dq.checks.unknown_fields import UnknownFieldsCheck

    rows, present = rows_present(plan, aggregates)
    # the data's own columns: not the gate's (__dq_*), nor the source's bookkeeping (its corrupt-record column,
    # its unknown-fields column), which a schema check would count as columns the data has
    kept = {
        plan.malformed_column,
        *(c for k in plan.row_checks if isinstance(k, UnknownFieldsCheck) for c in k.columns),
    }
    out = []
    for check in checks:
        order = plan.declaration_order[check.check_id]
        groups = plan.regimes.groups(check)
        for _g, group, folded in aggregate_units(plan, check, present, rows):
            scope = frozenset(group.ordinals).union(*(groups[x].ordinals for x in folded))
            scoped = frame if not plan.regimes.split else frame.filter(plan.regimes.membership_column(scope))
            own = [c for c in scoped.columns if not c.startswith("__dq_") and c not in kept]
            scoped = scoped.select(*[F.col(f"`{c}`") for c in own])
            out.append((order, judged(plan, check, group, folded, scoped)))
    return out


def decided(plan: ValidationPlan, aggregates: BatchAggregates, frame: DataFrame | None) -> BatchDecision:
    """The batch's decision (:func:`~streaming_dq.engine.decision.decide`) with its classic checks' results
    (:func:`classic_results`: ``frame`` is rescanned when the plan has classic checks)."""
    classic = classic_results(plan, aggregates, frame)
    return decide(plan, aggregates, classic)
