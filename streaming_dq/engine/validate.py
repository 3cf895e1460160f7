"""The one validation step of every caller: the batch's aggregates in ONE pass, the classic checks, the decision.

Two forms compute the same typed aggregates (:mod:`~streaming_dq.engine.layout`):

* :func:`validate_collected` (the driver router, :func:`validate_to_arrow`): the rows, their flags and each state's
  per-row input collected to Arrow in one job, every aggregate computed there;
* :func:`validate_grouped` (the Spark router, ``BatchDQEngine``): the batch annotated, one
  ``groupBy(regime[, window keys]).agg`` job over it; a handful of group rows reach the driver.

Both then run the classic aggregate checks (a groupBy, join or distinct of their own, over the batch
persisted while they run) and take the :class:`~streaming_dq.engine.decision.BatchDecision`
(:func:`~streaming_dq.engine.classic.decided`). An integrity check whose
reference dataset is missing raises :class:`~streaming_dq.exceptions.MissingReferenceDatasetError` itself, not
the evaluation error that wraps it (:func:`reference_errors_unwrapped`). A caller may label the phases' Spark
jobs (``phase``: a context manager per phase name, ``collect``, ``aggregate`` or ``aggregate checks``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pyarrow as pa

from streaming_dq.engine.arrow import ArrowSplit, Collected, DeferredFlags, collect, split
from streaming_dq.engine.classic import decided
from streaming_dq.engine.decision import BatchDecision
from streaming_dq.exceptions import CheckEvaluationError, MissingReferenceDatasetError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from streaming_dq.engine.plan import ValidationPlan
    from streaming_dq.engine.values import BatchAggregates

__all__ = [
    "ArrowValidation",
    "Phase",
    "reference_errors_unwrapped",
    "validate_collected",
    "validate_grouped",
    "validate_to_arrow",
]

#: Labels the Spark jobs of one phase of the validation (a context manager per phase name).
Phase = Callable[[str], AbstractContextManager[None]]


def _unlabelled(name: str) -> AbstractContextManager[None]:
    return nullcontext()


@contextmanager
def reference_errors_unwrapped() -> Iterator[None]:
    """Raise a missing reference dataset as itself (the check's evaluation wraps it): the caller sees the
    real cause."""
    try:
        yield
    except CheckEvaluationError as exc:
        if isinstance(exc.__cause__, MissingReferenceDatasetError):
            raise exc.__cause__ from exc
        raise


def validate_collected(
    plan: ValidationPlan,
    df: DataFrame,
    *,
    windows: bool = False,
    extra_columns: Mapping[str, Column] | None = None,
    phase: Phase = _unlabelled,
    deferred: DeferredFlags | None = None,
) -> tuple[Collected, BatchDecision]:
    """The rows collected with every aggregate's input in ONE job, then the decision. ``df`` is persisted only
    while classic aggregate checks rescan it.

    Args:
        windows: Also the window-scoped checks' states per event-time window (in the aggregates'
            ``windows``, as the grouped form gives them), from per-row inputs collected in the same job.
        extra_columns: More per-row columns to collect (:meth:`Collected.extra_columns`).
        deferred: Row checks whose flags the driver decides after the collect (:class:`DeferredFlags`).
    """
    window_inputs = plan.layout.window_inputs() if windows else {}
    columns = {**(extra_columns or {}), **window_inputs}
    persist = bool(plan.classic_checks)
    if persist:
        df.persist()
    try:
        with reference_errors_unwrapped():
            with phase("collect"):
                collected = collect(plan, df, extra_columns=columns or None, deferred=deferred)
            with phase("aggregate checks"):
                decision = decided(plan, collected.aggregates, collected.frame if persist else None)
    finally:
        if persist:
            df.unpersist()
    if window_inputs:
        states = plan.layout.read_windows(collected.extra_columns)
        collected = replace(collected, aggregates=replace(collected.aggregates, windows=states))
    return collected, decision


def validate_grouped(
    plan: ValidationPlan,
    df: DataFrame,
    *,
    windows: bool,
    keep: bool = False,
    phase: Phase = _unlabelled,
) -> tuple[DataFrame, BatchAggregates, BatchDecision]:
    """``df`` annotated (:meth:`~streaming_dq.engine.plan.ValidationPlan.annotate`), ONE grouped aggregation
    over it (by regime, and by window when ``windows``), then the decision: the annotated batch, the
    aggregates and the decision.

    Args:
        keep: Persist the annotated batch for the caller, which routes its rows from it and unpersists it
            (the Spark router); the classic checks rescan it. Without it the classic checks rescan the input
            with its regime (never the annotated frame: its joins and windows would rerun for every such
            check), persisted while they run.
    """
    from pyspark import StorageLevel

    layout = plan.layout
    rescan = not keep and bool(plan.classic_checks)
    with reference_errors_unwrapped():
        annotated = plan.annotate(df)
        if keep:
            annotated.persist(StorageLevel.MEMORY_AND_DISK)
        if rescan:
            df.persist()
        try:
            classic_frame = annotated if keep else plan.with_regime(df) if rescan else None
            groups = annotated.groupBy(*layout.group_keys(windows=windows))
            with phase("aggregate"):
                rows = groups.agg(*layout.grouped_columns(windows=windows)).collect()
            aggregates = layout.read_grouped(rows)
            with phase("aggregate checks"):
                decision = decided(plan, aggregates, classic_frame)
        except BaseException:
            if keep:
                annotated.unpersist()
            raise
        finally:
            if rescan:
                df.unpersist()
    return annotated, aggregates, decision


@dataclass(frozen=True)
class ArrowValidation:
    """A batch validated on the driver: its decision, its routed rows and its extra columns."""

    decision: BatchDecision
    split: ArrowSplit
    extra_columns: pa.Table

    @property
    def passed(self) -> pa.Table:
        return self.split.passed

    @property
    def quarantined(self) -> pa.Table:
        return self.split.quarantined

    @property
    def warned(self) -> int:
        """Passed rows that carry a row check's warning (:attr:`BatchDecision.row_warning_records`)."""
        return self.decision.row_warning_records


def validate_to_arrow(
    plan: ValidationPlan, df: DataFrame, *, extra_columns: Mapping[str, Column] | None = None
) -> ArrowValidation:
    """Validate ``df`` with one Spark job (:func:`validate_collected`) and route its rows in Arrow."""
    collected, decision = validate_collected(plan, df, extra_columns=extra_columns)
    routed = split(plan, collected.table, decision, list(df.columns))
    return ArrowValidation(decision, routed, collected.extra_columns)
