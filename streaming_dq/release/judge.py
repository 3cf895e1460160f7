"""Quarantined rows judged again by the gate's current row checks, as Spark columns (rows stay on the executors).

:class:`ReleaseJudge` turns rows of the quarantine table into the same rows with a new ``_dq_release`` where
the request selects them: the fixes applied, the row checks of the gate's CURRENT check set, reference data
and profiles (each row under the profiles of its own event time) evaluated by the same
:class:`~streaming_dq.engine.plan.ValidationPlan` a micro-batch goes through. A selected row that no
fail-level check fails is ``released``; one that still fails stays ``quarantined`` with its new reasons in
``_dq_release.errors``. The row's own columns and ``_dq_errors`` are written back as they were.

Aggregate checks are not judged again: a release moves single rows, long after their batch and window were
judged (see docs/quarantine.md). A row the gate quarantined because its batch failed an aggregate check (or
drifted from the pass table's schema) keeps that reason - it still fails - unless the request names that
check (``--check order-id-unique``: the operator accepts the batch). A record that arrived malformed is parsed
again from its ``_dq_raw`` (which the operator may have corrected) with the source's schema and options, as
the stream would (:mod:`streaming_dq.sources.reparse`); where the source's records cannot be parsed from their
text, it keeps its ``malformed-record`` reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.core.base_check import BaseRowCheck
from streaming_dq.core.column_types import check_input
from streaming_dq.core.sql import col
from streaming_dq.engine.plan import MALFORMED_CHECK_ID, ValidationPlan
from streaming_dq.engine.rules import ERROR_SPARK_TYPE
from streaming_dq.sink.drift import DRIFT_CHECK_ID
from streaming_dq.sink.schemas import ERRORS_COLUMN, QUARANTINE_COLUMNS, RAW_COLUMN, RELEASE_COLUMN

if TYPE_CHECKING:
    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.core.severity import Severity
    from streaming_dq.release.request import ReleaseRequest
    from streaming_dq.sink.options import GateOptions
    from streaming_dq.sources.reparse import RecordParser

__all__ = [
    "DISCARDED",
    "RELEASED",
    "STILL_QUARANTINED",
    "ReleaseJudge",
    "ReleaseStamp",
    "eligible",
    "quarantined_for",
]

RELEASED = "released"
STILL_QUARANTINED = "quarantined"
DISCARDED = "discarded"

_SELECTED = "__dq_release_selected"


def eligible(release_id: str) -> str:
    """Rows a release may judge: never released nor discarded, and not judged by this release already."""
    rid = "'" + release_id.replace("'", "\\'") + "'"
    return (
        f"({RELEASE_COLUMN} IS NULL OR ({RELEASE_COLUMN}.state = '{STILL_QUARANTINED}'"
        f" AND {RELEASE_COLUMN}.id <> {rid}))"
    )


@dataclass(frozen=True)
class ReleaseStamp:
    """What a release writes into ``_dq_release`` of every row it judges (the state and errors aside)."""

    release_id: str
    ts: datetime
    by: str
    fix: str | None
    chunk: int


class ReleaseJudge:
    """Judges quarantined rows for one release (see the module).

    Args:
        options: The gate's options (fail levels, profiles, event time, time zone).
        check_set: The gate's current checks.
        request: The selection and the fixes.
        input_columns: The quarantined rows' own columns (the quarantine table's, without ``_dq_*``).
        references: The gate's reference datasets, resolved now.
        parser: How the source parses a record's text (None: malformed records stay quarantined).
    """

    def __init__(
        self,
        options: GateOptions,
        check_set: CheckSet,
        request: ReleaseRequest,
        input_columns: list[str],
        references: Mapping[str, DataFrame],
        parser: RecordParser | None = None,
    ) -> None:
        self.options = options
        self.check_set = check_set
        self.request = request
        self.input_columns = input_columns
        self.references = references
        self.parser = parser
        self.plan = ValidationPlan(
            check_set,
            fail_levels=options.fail_levels,
            profiles=options.profiles,
            event_time=options.event_time,
            timezone=options.timezone,
            malformed_column=parser.malformed if parser is not None else None,
            strict_types=True,
        )
        self._checked = False

    def selected(self, release_id: str) -> Column:
        """True for the rows this release judges."""
        return F.expr(eligible(release_id)) & F.expr(self.request.selection_sql(self.options.event_time))

    def fixed(self, rows: DataFrame, where: Column | None = None) -> DataFrame:
        """``rows`` with the request's fixes applied (to the rows where ``where`` holds; all rows without it)."""
        if not self.request.fixes:
            return rows
        types = {f.name: f.dataType for f in rows.schema.fields}
        changes: dict[str, Column] = {}
        for fix in self.request.fixes:
            value = F.expr(fix.expression).cast(types[fix.column])
            changes[fix.column] = value if where is None else F.when(where, value).otherwise(col(fix.column))
        return rows.withColumns(changes)

    def prepared(self, rows: DataFrame, where: Column) -> DataFrame:
        """What is judged of the rows where ``where`` holds: a record that arrived malformed parsed again from
        its (corrected) ``_dq_raw`` - with the source's malformed column set where it still does not parse -
        then the fixes applied. Deterministic: the pass rows are prepared again from the marked rows."""
        out = rows
        if self.parser is not None:
            arrived_malformed = (
                F.exists(F.col(ERRORS_COLUMN), lambda e: e["check-id"] == F.lit(MALFORMED_CHECK_ID))
                & F.col(RAW_COLUMN).isNotNull()
            )
            out = self.parser.parse(out, RAW_COLUMN, where & arrived_malformed)
        return self.fixed(out, where)

    def judged(self, rows: DataFrame, stamp: ReleaseStamp) -> DataFrame:
        """``rows`` (quarantine rows, every column) with ``_dq_release`` set on the selected ones."""
        if not self._checked:
            check_input(self.check_set, self.options.event_time, rows.select(*map(col, self.input_columns)))
            self._checked = True
        columns = rows.columns
        originals = {c: f"__dq_release_orig{i}" for i, c in enumerate(self.input_columns)}
        marked = rows.withColumn(_SELECTED, self.selected(stamp.release_id))
        marked = marked.withColumns({alias: col(c) for c, alias in originals.items()})
        fixed = self.prepared(marked, F.col(_SELECTED))
        with self.plan.references(self.references):
            annotated = self.plan.annotate(fixed)
            rules = self.plan.rules
            failed, errors = self._failed_and_errors(rules.failed_column(), rules.errors_column())
            release = F.when(
                F.col(_SELECTED),
                F.struct(
                    F.lit(stamp.release_id).alias("id"),
                    F.when(failed, F.lit(STILL_QUARANTINED)).otherwise(F.lit(RELEASED)).alias("state"),
                    F.lit(stamp.ts).alias("ts"),
                    F.lit(stamp.by).alias("by"),
                    F.lit(stamp.fix).cast("string").alias("fix"),
                    F.lit(stamp.chunk).cast("bigint").alias("chunk"),
                    F.when(failed, errors).alias("errors"),
                ),
            ).otherwise(col(RELEASE_COLUMN))
            out = [
                col(originals[c]).alias(c)
                if c in originals
                else (release.alias(c) if c == RELEASE_COLUMN else col(c))
                for c in columns
            ]
            return annotated.select(*out)

    def _sticky(self) -> Column:
        """The row's reasons a release does not judge again (see the module), at a fail level."""
        named = set(self.request.checks)
        batch_level = {c.check_id for c in self.check_set if not isinstance(c, BaseRowCheck)} | {
            DRIFT_CHECK_ID
        }
        sticky = sorted((batch_level - named) | ({MALFORMED_CHECK_ID} if self.parser is None else set()))
        levels = sorted(s.value for s in self.options.fail_levels)
        ids = F.array(*[F.lit(i) for i in sticky])
        fail = F.array(*[F.lit(v) for v in levels])
        return F.filter(
            F.col(ERRORS_COLUMN),
            lambda e: F.array_contains(ids, e["check-id"]) & F.array_contains(fail, e["severity"]),
        )

    def _failed_and_errors(self, failed: Column, errors: Column) -> tuple[Column, Column]:
        """Whether a judged row still fails, and why: its row checks now, and its sticky reasons."""
        sticky = self._sticky()
        still = failed | (F.size(sticky) > 0)
        return still, F.concat(F.when(failed, errors).otherwise(F.array().cast(ERROR_SPARK_TYPE)), sticky)

    def released(self, marked: DataFrame, pass_columns: list[str]) -> DataFrame:
        """The pass table's rows from the quarantine rows a release marked ``released``: fixed again (the
        fix is deterministic SQL), the quarantine's own columns dropped, in the pass table's column order."""
        fixed = self.prepared(marked, F.lit(True))
        return fixed.select(*[col(c) for c in pass_columns if c in fixed.columns])


def input_columns_of(quarantine_columns: list[str]) -> list[str]:
    """The quarantined rows' own columns: the quarantine table's without the gate's ``_dq_*`` ones."""
    return [c for c in quarantine_columns if c not in QUARANTINE_COLUMNS.names]


def quarantined_for(fail_levels: Iterable[Severity]) -> Column:
    """The check ids a quarantined row was quarantined for: its reasons at a fail level. A row also carries
    the warnings it met, which never quarantine a row, so they are not counted as reasons (#42)."""
    levels = F.array(*[F.lit(s.value) for s in sorted(fail_levels, key=lambda s: s.value)])
    at_fail_level = F.filter(F.col(ERRORS_COLUMN), lambda e: F.array_contains(levels, e["severity"]))
    return at_fail_level.getField("check-id")


def current_errors() -> Column:
    """A row's reasons now: those of the last release that judged it, else those it was quarantined for."""
    return F.coalesce(F.col(f"{RELEASE_COLUMN}.errors"), F.col(ERRORS_COLUMN))
