"""The gate's fast path: one Spark job per batch, the split done in Arrow.

``observe`` makes every aggregate of the plan ride on the action that collects the rows, so validating a
micro-batch costs exactly one scan: the rows come back as one Arrow table carrying a compact bitmask of fired
checks (and the regime ordinal when profiles split the batch), and the pass/quarantine split, the warning
flags and the ``_dq_errors`` lists (built only for quarantined rows) are computed with pyarrow.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame, Observation

from streaming_dq.engine.plan import BITS_PER_WORD, PlanOutcome, ValidationPlan, bits_column, flag_column
from streaming_dq.engine.regimes import REGIME_COLUMN

ERROR_TYPE = pa.list_(
    pa.struct(
        [pa.field("check", pa.string()), pa.field("check-id", pa.string()), pa.field("severity", pa.string())]
    )
)


@dataclass
class ArrowValidation:
    """One batch validated and split.

    Attributes:
        passed: Rows for the pass table (input columns only; warned rows included).
        quarantined: Failed rows: input columns + ``_dq_errors``.
        warned: How many passed rows carry a warning.
        outcome: The plan's verdicts (aggregate results, violation counts ...).
        extras: Values of the extra aggregates the caller asked for.
        extra_columns: The extra per-row columns the caller asked for, for ALL rows (same order as the input).
    """

    passed: pa.Table
    quarantined: pa.Table
    warned: int
    outcome: PlanOutcome
    extras: dict[str, Any]
    extra_columns: pa.Table


def collect(
    plan: ValidationPlan,
    df: DataFrame,
    *,
    extra_aggregates: Mapping[str, Column] | None = None,
    extra_columns: Mapping[str, Column] | None = None,
) -> tuple[pa.Table, dict[str, Any], DataFrame]:
    """Run the batch ONCE: rows (input + bits [+ regime] + extras) to Arrow, all aggregates observed.

    When every row check is a plain condition, each check's boolean flag is computed in the same projection
    that selects the rows, and ``observe`` sits on top of it: the scan and the predicates stay in one
    code-generated stage, and Spark's metric collection (which is not code-generated) sees the rows once,
    just before they are sent to Arrow. Otherwise (a check joins or windows the batch) the flags are added
    first by :meth:`ValidationPlan.annotate`. The flags are packed into bitmask words in Arrow
    (:func:`pack_bits`).

    Returns the Arrow table, the observed values, and the frame classic aggregate checks rescan.
    """
    aggs = plan.aggregate_columns(row_counts=False)
    aggs += [col.alias(f"__x_{name}") for name, col in (extra_aggregates or {}).items()]
    extras = [col.alias(f"__xc_{name}") for name, col in (extra_columns or {}).items()]
    if plan.inlinable(df):
        base = plan.with_regime(df)
        try:
            rows = base.select(*plan.inline_columns(df), *extras)
        except Exception:
            plan.annotate(df)  # raises the error naming the check whose condition Spark refuses
            raise
    else:
        base = plan.annotate(df)
        rows = base.select(*plan.collected_columns(df.columns), *extras)
    observation = Observation(f"streaming_dq_{uuid.uuid4().hex}") if aggs else None
    observed = rows.observe(observation, *aggs) if observation is not None else rows
    table = pack_bits(plan, observed.toArrow())
    values = dict(observation.get) if observation is not None else {}
    return table, values, base


def pack_bits(plan: ValidationPlan, table: pa.Table) -> pa.Table:
    """Replace the collected boolean flags by the compact bitmask words (flag ``i`` = bit ``i % 62`` of
    word ``i // 62``).

    The packing happens here rather than in Spark on purpose: one Spark expression OR-ing a shifted bit per
    check grows past the JVM's 8,000-byte limit for JIT-compiling a method at a few dozen checks, and the
    stage then runs interpreted (measured 2.5x slower at 35 row checks); separate boolean outputs do not.
    """
    n_flags = len(plan.flag_checks)
    names = [flag_column(i) for i in range(n_flags)]
    words = []
    for w in range(plan.n_words):
        word: Any = None
        for i in range(w * BITS_PER_WORD, min(n_flags, (w + 1) * BITS_PER_WORD)):
            flag = pc.fill_null(table.column(flag_column(i)), False)  # never NULL by construction; be sure
            if not pc.any(flag).as_py():
                continue  # the usual case on clean data: nothing to set
            bit = pc.if_else(flag, pa.scalar(1 << (i % BITS_PER_WORD), pa.int64()), pa.scalar(0, pa.int64()))
            word = bit if word is None else pc.bit_wise_or(word, bit)
        words.append(word if word is not None else pa.repeat(pa.scalar(0, pa.int64()), table.num_rows))
    table = table.drop_columns(names)
    for w, word in enumerate(words):
        table = table.append_column(bits_column(w), word)
    return table


def validate_to_arrow(
    plan: ValidationPlan,
    df: DataFrame,
    *,
    extra_aggregates: Mapping[str, Column] | None = None,
    extra_columns: Mapping[str, Column] | None = None,
) -> ArrowValidation:
    """Validate ``df`` with one Spark job and split the rows in Arrow.

    Classic aggregate checks (groupBy/join/distinct) still need their own jobs over ``df``; persist it first
    when the plan has any.
    """
    table, values, annotated = collect(
        plan, df, extra_aggregates=extra_aggregates, extra_columns=extra_columns
    )
    values.update(row_counts(plan, table))
    outcome = plan.decide(values, annotated if plan.classic_checks() else None)
    extras = {k[len("__x_") :]: v for k, v in values.items() if k.startswith("__x_")}
    return split(plan, table, outcome, list(df.columns), extras)


def row_counts(plan: ValidationPlan, table: pa.Table) -> dict[str, int]:
    """The counts :meth:`ValidationPlan.decide` needs, from the collected bitmask (no Spark work).

    Same keys as the plan's row-count aggregates: ``__n_{r}``, ``__fail_{r}``, ``__warn_{r}`` per regime,
    ``__v_{i}`` per flag and ``__v_{i}_{g}`` per override group of a row check that profiles split.
    """
    regime = table.column(REGIME_COLUMN) if plan.regimes.split else None
    fail = _any_bits(plan, table, regime, "fail")
    warn_only = pc.and_(pc.invert(fail), _any_bits(plan, table, regime, "warn"))
    out: dict[str, int] = {}
    for r in plan.regimes.ordinals:
        in_r = _in_regimes(regime, {r}, table.num_rows)
        out[f"__n_{r}"] = _count(in_r)
        out[f"__fail_{r}"] = _count(pc.and_(in_r, fail))
        out[f"__warn_{r}"] = _count(pc.and_(in_r, warn_only))
    offset = 1 if plan.malformed_column else 0
    for i in range(len(plan.flag_checks)):
        fired = _fired(table, i)
        out[f"__v_{i}"] = _count(fired)
        if i < offset:
            continue
        groups = plan.regimes.groups(plan.row_checks[i - offset])
        for g, group in enumerate(groups if len(groups) > 1 else ()):
            if group.verdict.kind != "off":
                out[f"__v_{i}_{g}"] = _count(
                    pc.and_(fired, _in_regimes(regime, set(group.ordinals), table.num_rows))
                )
    return out


def _fired(table: pa.Table, i: int) -> Any:
    bits = table.column(bits_column(i // BITS_PER_WORD))
    return pc.not_equal(pc.bit_wise_and(bits, pa.scalar(1 << (i % BITS_PER_WORD), pa.int64())), 0)


def _count(mask: Any) -> int:
    return int(pc.sum(mask).as_py() or 0)


def split(
    plan: ValidationPlan,
    table: pa.Table,
    outcome: PlanOutcome,
    input_columns: list[str],
    extras: dict[str, Any],
) -> ArrowValidation:
    """Route rows: pass (input columns) and quarantine (input columns + ``_dq_errors``)."""
    n = table.num_rows
    regime = table.column(REGIME_COLUMN) if plan.regimes.split else None
    fail = _any_bits(plan, table, regime, "fail")
    warn = _any_bits(plan, table, regime, "warn")
    if outcome.breached:
        fail = pc.or_(fail, _in_regimes(regime, outcome.breached, n))
    warned_regimes = {r for r, errs in outcome.agg_errors.items() if errs} - outcome.breached
    if warned_regimes:
        warn = pc.or_(warn, _in_regimes(regime, warned_regimes, n))
    passed_mask = pc.invert(fail)
    warned = int(pc.sum(pc.and_(passed_mask, warn)).as_py() or 0)
    inputs = table.select(input_columns)
    passed = inputs.filter(passed_mask)
    quarantined = inputs.filter(fail)  # filter works chunk by chunk; take() on a chunked table is slower
    keys = [bits_column(w) for w in range(plan.n_words)] + ([REGIME_COLUMN] if plan.regimes.split else [])
    errors = _errors(plan, table.select(keys).filter(fail), outcome)
    quarantined = quarantined.append_column(pa.field("_dq_errors", ERROR_TYPE), errors)
    xcols = [c for c in table.column_names if c.startswith("__xc_")]
    extra_table = table.select(xcols).rename_columns([c[len("__xc_") :] for c in xcols])
    return ArrowValidation(passed, quarantined, warned, outcome, extras, extra_table)


def _word_masks(plan: ValidationPlan, kind: str) -> dict[int, list[int]]:
    """Per regime ordinal, per bits word: which flag bits count as ``kind`` (fail/warn)."""
    masks = {r: [0] * plan.n_words for r in plan.regimes.ordinals}
    for i in range(len(plan.flag_checks)):
        for r, verdict in plan._flag_verdicts(i).items():
            if verdict.kind == kind:
                masks[r][i // BITS_PER_WORD] |= 1 << (i % BITS_PER_WORD)
    return masks


def _any_bits(
    plan: ValidationPlan, table: pa.Table, regime: pa.ChunkedArray | None, kind: str
) -> pa.ChunkedArray:
    masks = _word_masks(plan, kind)
    result = None
    for w in range(plan.n_words):
        bits = table.column(bits_column(w))
        if regime is None:
            mask: Any = pa.scalar(masks[0][w], pa.int64())
        else:
            lookup = pa.array([masks[r][w] for r in plan.regimes.ordinals], pa.int64())
            mask = pc.take(lookup, regime)
        hit = pc.not_equal(pc.bit_wise_and(bits, mask), 0)
        result = hit if result is None else pc.or_(result, hit)
    if result is None:
        return pa.chunked_array([pa.repeat(pa.scalar(False, pa.bool_()), table.num_rows)])
    return result


def _in_regimes(regime: pa.ChunkedArray | None, ordinals: set[int], n: int) -> Any:
    if regime is None:
        return pa.chunked_array([pa.repeat(pa.scalar(0 in ordinals, pa.bool_()), n)])
    return pc.is_in(regime, value_set=pa.array(sorted(ordinals), pa.int32()))


def _errors(plan: ValidationPlan, failed: pa.Table, outcome: PlanOutcome) -> pa.Array:
    """``_dq_errors`` for the quarantined rows, built once per distinct (bits, regime) combination.

    With one bitmask word and no regime split (the usual case) the rows are mapped to the distinct words
    in Arrow and the lists taken from those few entries; otherwise each row's key is looked up in Python.
    """
    flags = plan.flag_checks
    verdicts = [plan._flag_verdicts(i) for i in range(len(flags))]

    def entry(key: tuple[int, ...]) -> list[dict[str, str]]:
        r = key[0]
        out = []
        for i, (name, check_id, _sev) in enumerate(flags):
            if key[1 + i // BITS_PER_WORD] >> (i % BITS_PER_WORD) & 1:
                out.append({"check": name, "check-id": check_id, "severity": verdicts[i][r].severity.value})
        return out + [
            {"check": c, "check-id": cid, "severity": s} for c, cid, s in outcome.agg_errors.get(r, [])
        ]

    if plan.n_words == 1 and not plan.regimes.split:
        words = failed.column(bits_column(0))
        distinct = pc.unique(words)
        entries = pa.array([entry((0, w)) for w in distinct.to_pylist()], ERROR_TYPE)
        return pc.take(entries, pc.index_in(words, value_set=distinct)).combine_chunks()
    columns = [failed.column(bits_column(w)).to_pylist() for w in range(plan.n_words)]
    regimes = failed.column(REGIME_COLUMN).to_pylist() if plan.regimes.split else [0] * failed.num_rows
    cache: dict[tuple[int, ...], list[dict[str, str]]] = {}
    rows: list[list[dict[str, str]]] = []
    for row in range(failed.num_rows):
        key = (regimes[row], *(c[row] for c in columns))
        found = cache.get(key)
        if found is None:
            found = cache[key] = entry(key)
        rows.append(found)
    return pa.array(rows, ERROR_TYPE)
