"""Which fired row check fails or warns a row under which regime: written once, rendered in Spark and in Arrow.

A batch's row checks become boolean *flags* (flag ``i`` True = check ``i`` fired on the row; the malformed-
record guard is flag 0 when the source has a corrupt-record column). Profiles decide, per regime, whether a
fired flag is ``off``, fails the row or only warns. :class:`FlagRules` holds exactly that table, and every
question about a row is answered from it in two forms that must agree:

* Spark columns over the annotated batch, for the Spark router and for
  :class:`~streaming_dq.engine.batch.BatchDQEngine`. The annotated batch carries its flags as ONE column,
  :data:`FIRED_COLUMN`: every flag of the row as a list, NULL on a row where none fired
  (:meth:`FlagRules.fired_column`; :meth:`FlagRules.flag` reads flag ``i`` back), plus the regime ordinal;
* Arrow arrays over the rows collected to the driver, for the driver router: the same list column, turned
  into bitmask words on arrival (flag ``i`` is bit ``i % 62`` of word ``i // 62``, :meth:`FlagRules.pack`).

The decision about aggregates is rendered the same way: rows of a *breached* regime (a fail-level aggregate
failed there) fail whole, and every row of a regime with a failed aggregate carries that aggregate in
``_dq_errors``. ``tests/spark/test_rules_forms.py`` holds the two forms equal on random flags and regimes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, reduce
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from streaming_dq.engine.regime_table import REGIME_COLUMN, RegimeTable, Verdict
from streaming_dq.engine.values import RowCounts
from streaming_dq.exceptions import InternalError

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = [
    "BITS_PER_WORD",
    "ERROR_SPARK_TYPE",
    "ERROR_TYPE",
    "FIRED_COLUMN",
    "ErrorEntry",
    "FlagRules",
    "FlagSpec",
    "bits_column",
    "flag_column",
]

BITS_PER_WORD = 62

#: ``_dq_errors``: one entry per reason a row failed or warned.
ERROR_TYPE = pa.list_(
    pa.struct(
        [pa.field("check", pa.string()), pa.field("check-id", pa.string()), pa.field("severity", pa.string())]
    )
)
ERROR_SPARK_TYPE = "array<struct<check:string,`check-id`:string,severity:string>>"

Kind = Literal["fail", "warn"]

#: The annotated batch's list of every flag of a row on which one fired; NULL on a row where none did.
FIRED_COLUMN = "__dq_fired"


def flag_column(i: int) -> str:
    """The annotated batch's column of flag ``i`` (True = the check fired)."""
    return f"__dq_f{i}"


def bits_column(word: int) -> str:
    """The collected table's column of bitmask word ``word``."""
    return f"__dq_bits{word}"


@dataclass(frozen=True)
class ErrorEntry:
    """One entry of ``_dq_errors``."""

    check: str
    check_id: str
    severity: str

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "check-id": self.check_id, "severity": self.severity}


@dataclass(frozen=True)
class FlagSpec:
    """A flag: the check (class name) and check id its ``_dq_errors`` entries name."""

    check: str
    check_id: str


class FlagRules:
    """The verdict of every flag under every regime, and its Spark and Arrow renderings.

    Args:
        flags: The flags in index order.
        verdicts: Per flag, per regime ordinal, how a fired flag counts.
        regimes: The run's regimes (for the regime membership expressions).
    """

    def __init__(
        self, flags: Sequence[FlagSpec], verdicts: Sequence[Mapping[int, Verdict]], regimes: RegimeTable
    ) -> None:
        if len(flags) != len(verdicts):
            raise InternalError("one verdict table per flag")
        self.flags = tuple(flags)
        self.verdicts = tuple(dict(v) for v in verdicts)
        self.regimes = regimes
        # Columns are unresolved expressions: built once through py4j, reused for every batch of the plan.
        self._columns: dict[Any, Column] = {}

    def _cached(self, key: Any, build: Any) -> Column:
        if key not in self._columns:
            self._columns[key] = build()
        return self._columns[key]

    @property
    def n_flags(self) -> int:
        return len(self.flags)

    @property
    def n_words(self) -> int:
        return max(1, -(-self.n_flags // BITS_PER_WORD))

    def ordinals_where(self, i: int, kind: str) -> frozenset[int]:
        """Regimes in which flag ``i`` counts as ``kind`` (``fail``, ``warn`` or ``off``)."""
        return frozenset(r for r, v in self.verdicts[i].items() if v.kind == kind)

    def enabled_in(self, i: int) -> frozenset[int]:
        return frozenset(r for r, v in self.verdicts[i].items() if v.kind != "off")

    def entry(self, i: int, regime: int) -> ErrorEntry:
        flag = self.flags[i]
        return ErrorEntry(flag.check, flag.check_id, self.verdicts[i][regime].severity.value)

    @cached_property
    def _word_masks(self) -> dict[Kind, dict[int, tuple[int, ...]]]:
        """Per kind, per regime ordinal, per bits word: the bits of the flags that count as that kind."""
        out: dict[Kind, dict[int, tuple[int, ...]]] = {}
        for kind in ("fail", "warn"):
            masks = {r: [0] * self.n_words for r in self.regimes.ordinals}
            for i in range(self.n_flags):
                for r in self.ordinals_where(i, kind):
                    masks[r][i // BITS_PER_WORD] |= 1 << (i % BITS_PER_WORD)
            out[kind] = {r: tuple(m) for r, m in masks.items()}
        return out

    # -- Spark ------------------------------------------------------------------------------------------------

    def any_column(self, kind: Kind) -> Column:
        """True when a flag that counts as ``kind`` under the row's regime fired."""
        return self._cached(("any", kind), lambda: self._any_column(kind))

    def _any_column(self, kind: Kind) -> Column:
        from pyspark.sql import functions as F

        terms: list[Column] = []
        for i in range(self.n_flags):
            where = self.regimes.membership(self.ordinals_where(i, kind))
            if where is False:
                continue
            flag = self.flag(i)
            terms.append(flag if where is True else flag & where)
        return reduce(lambda a, b: a | b, terms) if terms else F.lit(False)

    def failed_column(self, breached: frozenset[int] = frozenset()) -> Column:
        """True when the row goes to quarantine: a fail-level flag fired, or its regime is breached."""
        if not breached:
            return self.any_column("fail")
        key = ("failed", frozenset(breached))
        return self._cached(key, lambda: self.any_column("fail") | self.regimes.membership_column(breached))

    def errors_column(self, agg_errors: Mapping[int, Sequence[ErrorEntry]] | None = None) -> Column:
        """``_dq_errors`` of each row: its fired flags (severity of its regime), then its regime's failed
        aggregates; an empty array for a clean row."""
        key = ("errors", tuple(sorted((r, tuple(e)) for r, e in (agg_errors or {}).items())))
        return self._cached(key, lambda: self._errors_column(agg_errors))

    def _errors_column(self, agg_errors: Mapping[int, Sequence[ErrorEntry]] | None) -> Column:
        from pyspark.sql import functions as F

        entries = [self._flag_entry(i) for i in range(self.n_flags)]
        for r, errors in sorted((agg_errors or {}).items()):
            in_r = self.regimes.membership_column({r})
            entries += [F.when(in_r, _struct(e.check, e.check_id, F.lit(e.severity))) for e in errors]
        if not entries:
            return F.array().cast(ERROR_SPARK_TYPE)
        return F.filter(F.array(*entries), lambda e: e.isNotNull())

    def _flag_entry(self, i: int) -> Column:
        from pyspark.sql import functions as F

        severities = {r: v.severity.value for r, v in self.verdicts[i].items() if v.kind != "off"}
        severity = self.regimes.value_column(severities, default=None)
        flag = self.flags[i]
        return F.when(self.flag(i), _struct(flag.check, flag.check_id, severity))

    def fired_column(self) -> Column:
        """The annotated batch's flags as one column, :data:`FIRED_COLUMN`: every flag of the row as a list,
        NULL on a row where none fired (:meth:`flag` reads flag ``i`` in Spark, :meth:`pack` in Arrow).

        It reads the flag columns (:func:`flag_column`) of a projection below it, so each flag is evaluated
        once: referenced twice here, Spark keeps the two projections apart. It is written as SQL text over
        those internal names: one py4j call, where the same expression built column by column costs about 20
        per flag when a plan is first built.

        Why a list on the failing rows only: a clean row then costs one NULL instead of one boolean per check,
        on the way to Python and in a persisted batch. At 35 row checks, 1M rows (2026-12-04): the driver
        router's collect took 1.45 s against 1.86 s with one boolean column per check, and persisting the
        annotated batch and aggregating it (the Spark router) 2.6 s against 3.9 s. The words are not built in
        Spark: one expression OR-ing a shifted bit per check grows past the JVM's 8,000-byte limit for
        JIT-compiling a method at a few dozen checks, and the stage then runs interpreted (with words of 16, 8
        or 4 flags the 50-check benchmark's projection ran twice as slow as the booleans, and as fast with the
        JVM's ``-XX:-DontCompileHugeMethods``).
        """
        from pyspark.sql import functions as F

        def build() -> Column:
            names = [flag_column(i) for i in range(self.n_flags)]
            if not names:
                return F.expr("CAST(NULL AS ARRAY<BOOLEAN>)").alias(FIRED_COLUMN)
            sql = f"CASE WHEN {' OR '.join(names)} THEN array({', '.join(names)}) END"
            return F.expr(sql).alias(FIRED_COLUMN)

        return self._cached("fired", build)

    def flag(self, i: int) -> Column:
        """Whether flag ``i`` fired on the row of the annotated batch (never NULL)."""
        from pyspark.sql import functions as F

        return self._cached(("flag", i), lambda: F.coalesce(F.col(FIRED_COLUMN)[i], F.lit(False)))

    # -- Arrow ------------------------------------------------------------------------------------------------

    def pack(self, table: pa.Table) -> pa.Table:
        """Replace the collected :data:`FIRED_COLUMN` by the bitmask words."""
        import numpy as np

        fired = table.column(FIRED_COLUMN).combine_chunks()
        rows = np.flatnonzero(fired.is_valid().to_numpy(zero_copy_only=False))
        flags = pc.list_flatten(fired).to_numpy(zero_copy_only=False).reshape(len(rows), self.n_flags)
        table = table.drop_columns([FIRED_COLUMN])
        for w in range(self.n_words):
            bits = flags[:, w * BITS_PER_WORD : (w + 1) * BITS_PER_WORD].astype(np.int64)
            word = np.zeros(table.num_rows, np.int64)
            word[rows] = bits @ (np.int64(1) << np.arange(bits.shape[1], dtype=np.int64))
            table = table.append_column(bits_column(w), pa.array(word))
        return table

    def with_fired(self, table: pa.Table, fired: Mapping[int, Any]) -> pa.Table:
        """``table`` (packed) with flag ``i`` also set on the rows ``fired[i]`` marks (NumPy booleans): a flag
        decided on the driver after the collect (:class:`~streaming_dq.engine.arrow.DeferredFlags`)."""
        import numpy as np

        for w in range(self.n_words):
            mine = {i: m for i, m in fired.items() if i // BITS_PER_WORD == w}
            if not mine:
                continue
            name = bits_column(w)
            word = np.asarray(table.column(name).to_numpy(), dtype=np.int64).copy()
            for i, mask in mine.items():
                word[np.asarray(mask, dtype=bool)] |= np.int64(1) << np.int64(i % BITS_PER_WORD)
            table = table.set_column(table.column_names.index(name), name, pa.array(word))
        return table

    def fired(self, table: pa.Table, i: int) -> Any:
        """Whether flag ``i`` fired, per collected row."""
        bits = table.column(bits_column(i // BITS_PER_WORD))
        return pc.not_equal(pc.bit_wise_and(bits, pa.scalar(1 << (i % BITS_PER_WORD), pa.int64())), 0)

    def any_mask(self, table: pa.Table, kind: Kind) -> Any:
        """Arrow form of :meth:`any_column`."""
        regime = self._regime(table)
        result = None
        for w in range(self.n_words):
            masks = self._word_masks[kind]
            if regime is None:
                mask: Any = pa.scalar(masks[0][w], pa.int64())
            else:
                lookup = pa.array([masks[r][w] for r in self.regimes.ordinals], pa.int64())
                mask = pc.take(lookup, regime)
            hit = pc.not_equal(pc.bit_wise_and(table.column(bits_column(w)), mask), 0)
            result = hit if result is None else pc.or_(result, hit)
        return result if result is not None else self._constant(False, table.num_rows)

    def failed_mask(self, table: pa.Table, breached: frozenset[int] = frozenset()) -> Any:
        """Arrow form of :meth:`failed_column`."""
        failed = self.any_mask(table, "fail")
        if breached:
            failed = pc.or_(failed, self.in_regimes(table, breached))
        return failed

    def in_regimes(self, table: pa.Table, ordinals: frozenset[int] | set[int]) -> Any:
        regime = self._regime(table)
        if regime is None:
            return self._constant(0 in ordinals, table.num_rows)
        return pc.is_in(regime, value_set=pa.array(sorted(ordinals), pa.int32()))

    def errors_array(
        self, failed: pa.Table, agg_errors: Mapping[int, Sequence[ErrorEntry]] | None = None
    ) -> pa.Array:
        """Arrow form of :meth:`errors_column`, for the (quarantined) rows of ``failed``.

        The lists are built once per distinct (regime, bits) combination: with one bitmask word and no regime
        split (the usual case) the rows are mapped to the distinct words in Arrow; otherwise each row's key is
        looked up in Python.
        """
        agg = agg_errors or {}

        def entries(regime: int, words: Sequence[int]) -> list[dict[str, str]]:
            out = [
                self.entry(i, regime).as_dict()
                for i in range(self.n_flags)
                if words[i // BITS_PER_WORD] >> (i % BITS_PER_WORD) & 1
            ]
            return out + [e.as_dict() for e in agg.get(regime, ())]

        if self.n_words == 1:
            words = failed.column(bits_column(0))
            if not self.regimes.split:
                distinct = pc.unique(words)
                lists = pa.array([entries(0, [w]) for w in distinct.to_pylist()], ERROR_TYPE)
                return pc.take(lists, pc.index_in(words, value_set=distinct)).combine_chunks()
            # per regime present (a few), the distinct words of its rows; each row indexes the lists
            regime = failed.column(REGIME_COLUMN)
            known: list[list[dict[str, str]]] = []
            index = pa.nulls(failed.num_rows, pa.int32())
            for r in pc.unique(regime).to_pylist():
                here = pc.equal(regime, r)
                distinct = pc.unique(pc.filter(words, here))
                at = pc.add(pc.index_in(words, value_set=distinct), len(known))
                known += [entries(r, [w]) for w in distinct.to_pylist()]
                index = pc.if_else(here, at, index)
            taken = pc.take(pa.array(known, ERROR_TYPE), index)
            return taken.combine_chunks() if isinstance(taken, pa.ChunkedArray) else taken
        columns = [failed.column(bits_column(w)).to_pylist() for w in range(self.n_words)]
        regimes = failed.column(REGIME_COLUMN).to_pylist() if self.regimes.split else [0] * failed.num_rows
        cache: dict[tuple[int, ...], list[dict[str, str]]] = {}
        rows: list[list[dict[str, str]]] = []
        for row in range(failed.num_rows):
            key = (regimes[row], *(c[row] for c in columns))
            found = cache.get(key)
            if found is None:
                found = cache[key] = entries(key[0], key[1:])
            rows.append(found)
        return pa.array(rows, ERROR_TYPE)

    def count(self, table: pa.Table) -> RowCounts:
        """The :class:`RowCounts` of the collected rows (the Spark form is the engine's grouped aggregation)."""
        fail = self.any_mask(table, "fail")
        warn_only = pc.and_(pc.invert(fail), self.any_mask(table, "warn"))
        regime = self._regime(table)
        if regime is None:
            rows = {0: table.num_rows}
            failed = {0: _count(fail)}
            warned = {0: _count(warn_only)}
            fired = {(i, 0): _count(self.fired(table, i)) for i in range(self.n_flags)}
            return RowCounts.of(rows, failed, warned, fired)
        return RowCounts.of(
            _per_regime(regime, None),
            _per_regime(regime, fail),
            _per_regime(regime, warn_only),
            {
                (i, r): n
                for i in range(self.n_flags)
                for r, n in _per_regime(regime, self.fired(table, i)).items()
            },
        )

    def _regime(self, table: pa.Table) -> pa.ChunkedArray | None:
        return table.column(REGIME_COLUMN) if self.regimes.split else None

    @staticmethod
    def _constant(value: bool, n: int) -> pa.ChunkedArray:
        return pa.chunked_array([pa.repeat(pa.scalar(value, pa.bool_()), n)])


def _struct(check: str, check_id: str, severity: Column) -> Column:
    from pyspark.sql import functions as F

    return F.struct(
        F.lit(check).alias("check"), F.lit(check_id).alias("check-id"), severity.alias("severity")
    )


def _count(mask: Any) -> int:
    return int(pc.sum(mask).as_py() or 0)


def _per_regime(regime: pa.ChunkedArray, mask: Any) -> dict[int, int]:
    """Rows per regime ordinal (only where ``mask`` holds, when given); regimes without rows are left out."""
    values = regime if mask is None else regime.filter(mask)
    counted = pc.value_counts(values)
    return {
        int(v): int(n)
        for v, n in zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist(), strict=True)
        if v is not None
    }
