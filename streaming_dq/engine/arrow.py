"""The driver router's engine half: one Spark job per batch, the decision taken from the rows in Arrow.

Validating a micro-batch costs exactly one scan: the rows come back as one Arrow table carrying the fired
checks (a list on the rows where one fired, packed into bitmask words here), the regime ordinal when profiles
split the batch, and one per-row input per state of the batch's aggregate checks. Every aggregate is computed from that table in Arrow
(:meth:`~streaming_dq.engine.layout.AggregateLayout.read_collected`): Spark's ``observe`` would compute the
same states row by row outside its generated code, at a few hundred times the cost (benchmarks/NOTES.md). The
counts are taken from the bitmask, the pass/quarantine split and the ``_dq_errors`` lists (built only for
quarantined rows) with pyarrow, all through the plan's :class:`~streaming_dq.engine.rules.FlagRules`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame

from streaming_dq.compat.spark import to_arrow
from streaming_dq.engine.decision import BatchDecision
from streaming_dq.engine.plan import ValidationPlan
from streaming_dq.engine.regime_table import REGIME_COLUMN
from streaming_dq.engine.result import ERRORS_COLUMN
from streaming_dq.engine.rules import ERROR_TYPE, bits_column
from streaming_dq.engine.values import BatchAggregates

__all__ = ["ArrowSplit", "Collected", "DeferredFlags", "collect", "split"]

_EXTRA = "__xc_"


@dataclass(frozen=True)
class Collected:
    """One batch collected to the driver.

    Attributes:
        table: Input columns, bitmask words, the regime (when split) and the extra columns (prefixed).
        aggregates: Everything aggregated over the batch (the window states are left to the caller).
        frame: The batch with its regime column, which classic aggregate checks rescan.
        extra_columns: The extra per-row columns asked for, for every row, under their own names.
    """

    table: pa.Table
    aggregates: BatchAggregates
    frame: DataFrame
    extra_columns: pa.Table


@dataclass(frozen=True)
class ArrowSplit:
    """The rows of a batch routed: pass (input columns) and quarantine (input columns + ``_dq_errors``)."""

    passed: pa.Table
    quarantined: pa.Table


class DeferredFlags(Protocol):
    """Row checks whose flags the driver decides from the collected rows, after the collect (the driver
    router's duplicates across batches, :mod:`~streaming_dq.checks.stream_keys_arrow`): in Spark their
    condition is False; :meth:`finish` completes the rows and says where each fired, and the plan's guard
    (malformed record, regime) is applied to it as to every other flag."""

    check_ids: Sequence[str]

    def finish(self, table: pa.Table) -> tuple[pa.Table, Mapping[str, Any]]:
        """The collected rows completed (their helper columns gone), and per check id where it fired."""
        ...


_GUARD = "__dq_guard"


def collect(
    plan: ValidationPlan,
    df: DataFrame,
    *,
    extra_columns: Mapping[str, Column] | None = None,
    deferred: DeferredFlags | None = None,
) -> Collected:
    """Run the batch ONCE: rows (input + flags [+ regime] + state inputs + extras) to Arrow, then every
    aggregate from them in Arrow.

    :meth:`ValidationPlan.annotate` computes each check's flag in a projection right above the scan (when
    every row check is a plain condition) and folds them into one list in the projection above it; the rows,
    that list and each state's per-row input are collected from there, all in one code-generated stage.
    """
    inputs = [col.alias(name) for name, col in plan.layout.collected_inputs().items()]
    extras = [col.alias(f"{_EXTRA}{name}") for name, col in (extra_columns or {}).items()]
    flags = {cid: plan.flag_index(cid) for cid in (deferred.check_ids if deferred else ())}
    guards = [plan.guard_column(i).alias(f"{_GUARD}{i}") for i in flags.values()]
    rows = plan.annotate(df).select(*plan.collected_columns(df.columns), *inputs, *extras, *guards)
    table = plan.rules.pack(to_arrow(rows))
    if deferred is not None:
        table, fired = deferred.finish(table)
        guard = {
            i: np.asarray(table.column(f"{_GUARD}{i}").to_numpy(zero_copy_only=False), bool)
            for i in flags.values()
        }
        table = plan.rules.with_fired(table, {i: fired[cid] & guard[i] for cid, i in flags.items()})
        table = table.drop_columns([f"{_GUARD}{i}" for i in flags.values()])
    aggregates = plan.layout.read_collected(table, plan.rules.count(table))
    # classic aggregate checks rescan the input (+ regime), never the annotated frame: its joins and windows
    # (unique keys, foreign keys, groups) would be recomputed by every such check
    names = [c for c in table.column_names if c.startswith(_EXTRA)]
    extras = table.select(names).rename_columns([c[len(_EXTRA) :] for c in names])
    return Collected(table, aggregates, plan.with_regime(df), extras)


def split(
    plan: ValidationPlan, table: pa.Table, decision: BatchDecision, input_columns: list[str]
) -> ArrowSplit:
    """Route the collected rows as the decision says."""
    rules = plan.rules
    failed = rules.failed_mask(table, decision.breached)
    passed_mask = pc.invert(failed)
    inputs = table.select(input_columns)
    quarantined = inputs.filter(failed)  # filter works chunk by chunk; take() on a chunked table is slower
    keys = [bits_column(w) for w in range(rules.n_words)] + ([REGIME_COLUMN] if plan.regimes.split else [])
    errors = rules.errors_array(table.select(keys).filter(failed), decision.agg_errors)
    return ArrowSplit(
        passed=inputs.filter(passed_mask),
        quarantined=quarantined.append_column(pa.field(ERRORS_COLUMN, ERROR_TYPE), errors),
    )
