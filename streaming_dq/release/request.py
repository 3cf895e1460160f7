"""What a release asks for: which quarantined rows (checks, batches, event time, a SQL condition) and which
fixes (``column = SQL expression``), checked against the quarantine table before anything is read.

The request is also the release's identity on a rerun: :meth:`ReleaseRequest.key` is the canonical text of the
selection and the fixes, recorded when the release starts; a rerun with the same key finishes the interrupted
release instead of starting another (:mod:`streaming_dq.release.ledger`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from streaming_dq.core.sql import quote
from streaming_dq.exceptions import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

__all__ = ["Fix", "ReleaseRequest", "parse_batch_range", "parse_time_range", "refuse_unknown"]

_FIX = re.compile(r"^\s*(`[^`]+`|[^=\s]+)\s*=(?!=)\s*(.+?)\s*$", re.S)


@dataclass(frozen=True)
class Fix:
    """One ``--set``: the column takes the expression's value (cast to the column's type) in the released row.

    The quarantine table keeps the row as it arrived; the fix is applied to what is judged again and, when
    that passes, to what the pass table receives.

    Example:
        >>> Fix.parse("amount = amount / 100")
        Fix(column='amount', expression='amount / 100')
    """

    column: str
    expression: str

    @classmethod
    def parse(cls, text: str, option: str = "--set") -> Fix:
        m = _FIX.match(text)
        if not m:
            raise ConfigError(
                f"{text!r} is not 'column = SQL expression' (e.g. \"amount = amount / 100\")",
                field_path=option,
            )
        column = m.group(1)
        if column.startswith("`"):
            column = column[1:-1]
        return cls(column, m.group(2))

    def __str__(self) -> str:
        return f"{quote(self.column)} = {self.expression}"


def parse_batch_range(text: str, option: str = "--batches") -> tuple[int | None, int | None]:
    """``"A..B"``, ``"A.."``, ``"..B"`` or ``"N"`` as inclusive batch-id bounds.

    Example:
        >>> parse_batch_range("3..7"), parse_batch_range("5"), parse_batch_range("..9")
        ((3, 7), (5, 5), (None, 9))
    """
    lo, sep, hi = text.partition("..")
    try:
        bounds = (int(lo) if lo.strip() else None, int(hi) if hi.strip() else None)
    except ValueError:
        raise ConfigError(
            f"{text!r} is not a batch range such as '3..7', '3..' or '..7'", field_path=option
        ) from None
    if not sep:
        bounds = (bounds[0], bounds[0])
    if bounds == (None, None) or (None not in bounds and bounds[0] > bounds[1]):  # type: ignore[operator]
        raise ConfigError(f"{text!r} is an empty batch range", field_path=option) from None
    return bounds


def parse_time_range(
    text: str, timezone: str, option: str = "--event-time"
) -> tuple[datetime | None, datetime | None]:
    """``"FROM..TO"`` (ISO dates or times; either side may be left out) as ``[FROM, TO)`` in UTC; a value
    without an offset is in ``timezone`` (the gate's), a bare date is its midnight.

    Example:
        >>> parse_time_range("2026-11-01..2026-11-02T06:00", "UTC")[1].isoformat()
        '2026-11-02T06:00:00+00:00'
    """
    lo, sep, hi = text.partition("..")
    if not sep:
        raise ConfigError(
            f"{text!r} is not a range such as '2026-11-01..2026-11-08'", field_path=option
        ) from None
    zone = ZoneInfo(timezone)

    def one(value: str) -> datetime | None:
        if not value.strip():
            return None
        try:
            t = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ConfigError(f"{value!r} is not an ISO date or time", field_path=option) from None
        return (t if t.tzinfo else t.replace(tzinfo=zone)).astimezone(ZoneInfo("UTC"))

    bounds = (one(lo), one(hi))
    if bounds == (None, None) or (None not in bounds and bounds[0] >= bounds[1]):  # type: ignore[operator]
        raise ConfigError(f"{text!r} is an empty time range", field_path=option) from None
    return bounds


@dataclass(frozen=True)
class ReleaseRequest:
    """Which quarantined rows to judge again, and how to fix them first. Every filter given must hold.

    Attributes:
        checks: Rows quarantined (or, after an earlier release, still failing) for any of these check ids.
        batches: Inclusive ``_dq_batch_id`` bounds (either may be None).
        event_time: ``[from, to)`` on the gate's event-time column (either may be None).
        where: A Spark SQL condition over the quarantine table's columns.
        fixes: ``column = expression`` changes applied before the rows are judged.
        note: Free text recorded with the release (a ticket, a reason); not part of its identity.

    Example:
        >>> ReleaseRequest(checks=("customer-known",)).selection_sql(None)
        "exists(coalesce(_dq_release.errors, _dq_errors), e -> e.`check-id` IN ('customer-known'))"
    """

    checks: tuple[str, ...] = ()
    batches: tuple[int | None, int | None] | None = None
    event_time: tuple[datetime | None, datetime | None] | None = None
    where: str | None = None
    fixes: tuple[Fix, ...] = ()
    note: str | None = field(default=None, compare=False)

    def selection_sql(self, event_time_column: str | None) -> str:
        """The Spark SQL condition the request puts on a quarantined row (``true``: every row)."""
        terms: list[str] = []
        if self.checks:
            ids = ", ".join(_literal(c) for c in self.checks)
            terms.append(f"exists(coalesce(_dq_release.errors, _dq_errors), e -> e.`check-id` IN ({ids}))")
        if self.batches is not None:
            lo, hi = self.batches
            if lo is not None:
                terms.append(f"_dq_batch_id >= {lo}")
            if hi is not None:
                terms.append(f"_dq_batch_id <= {hi}")
        if self.event_time is not None:
            if event_time_column is None:
                raise ConfigError("the gate has no event-time column", field_path="--event-time")
            lo_t, hi_t = self.event_time
            if lo_t is not None:
                terms.append(f"{quote(event_time_column)} >= {spark_timestamp(lo_t)}")
            if hi_t is not None:
                terms.append(f"{quote(event_time_column)} < {spark_timestamp(hi_t)}")
        if self.where:
            terms.append(f"({self.where})")
        return " AND ".join(terms) if terms else "true"

    def key(self) -> str:
        """The canonical text of the selection and the fixes (a rerun with the same key resumes)."""
        data = {**self.to_dict(with_note=False), "checks": sorted(set(self.checks))}
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    def to_dict(self, *, with_note: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "checks": list(self.checks),
            "batches": list(self.batches) if self.batches is not None else None,
            "event_time": [t.isoformat() if t else None for t in self.event_time]
            if self.event_time
            else None,
            "where": self.where,
            "fixes": [str(f) for f in self.fixes],
        }
        if with_note:
            out["note"] = self.note
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReleaseRequest:
        """The request :meth:`to_dict` recorded."""
        batches = data.get("batches")
        times = data.get("event_time")
        return cls(
            checks=tuple(data.get("checks") or ()),
            batches=(batches[0], batches[1]) if batches else None,
            event_time=tuple(datetime.fromisoformat(t) if t else None for t in times) if times else None,  # type: ignore[arg-type]
            where=data.get("where"),
            fixes=tuple(Fix.parse(f) for f in data.get("fixes") or ()),
            note=data.get("note"),
        )

    def describe(self) -> str:
        """One line for logs and errors: the filters and fixes given."""
        parts = [f"--check {c}" for c in self.checks]
        if self.batches is not None:
            lo, hi = self.batches
            parts.append(f"--batches {'' if lo is None else lo}..{'' if hi is None else hi}")
        if self.event_time is not None:
            lo_t, hi_t = self.event_time
            parts.append(
                f"--event-time {lo_t.isoformat() if lo_t else ''}..{hi_t.isoformat() if hi_t else ''}"
            )
        if self.where:
            parts.append(f"--where {self.where!r}")
        parts += [f"--set {str(f)!r}" for f in self.fixes]
        return " ".join(parts) or "(every quarantined row)"

    def validate(self, spark: SparkSession, schema: StructType, input_columns: list[str]) -> None:
        """Check every expression against the quarantine table's ``schema`` with Spark's analyzer; an error
        names the option (``--where``, ``--set``).

        Raises:
            ConfigError: An unknown column, a fix of a ``_dq_*`` column, or an expression Spark refuses.
        """

        empty = spark.createDataFrame([], schema)
        if self.where:
            _analyze(empty, self.where, "--where", self.where)
        seen: set[str] = set()
        for fix in self.fixes:
            if fix.column not in input_columns:
                known = ", ".join(input_columns)
                raise ConfigError(
                    f"{fix.column!r} is not a column of the quarantined rows (columns: {known})",
                    field_path="--set",
                )
            if fix.column in seen:
                raise ConfigError(f"{fix.column!r} is set twice", field_path="--set")
            seen.add(fix.column)
            dtype = schema[fix.column].dataType
            _analyze(empty, fix.expression, "--set", str(fix), cast=dtype)


def _analyze(frame: Any, sql: str, option: str, text: str, *, cast: Any = None) -> None:
    """Analyze the expression ``sql`` (cast to ``cast``) over ``frame``. The Column is made inside the ``try``:
    Spark 3.5 parses ``F.expr`` text when the Column is made, 4.x when it is analyzed."""
    from pyspark.sql import functions as F

    try:
        column = F.expr(sql) if cast is None else F.expr(sql).cast(cast)
        frame.select(column).schema  # noqa: B018 - the analysis is the point
    except Exception as exc:  # Spark's AnalysisException / ParseException, classic or Connect
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{text!r}: {first}", field_path=option) from None


def _literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def spark_timestamp(t: datetime) -> str:
    """A UTC instant as a Spark SQL timestamp literal."""
    return f"TIMESTAMP'{t.astimezone(ZoneInfo('UTC')).strftime('%Y-%m-%d %H:%M:%S.%f')}Z'"


def refuse_unknown(
    checks: Sequence[str],
    fixes: Sequence[Fix],
    *,
    check_ids: Sequence[str],
    columns: Sequence[str] | None,
    source: str | None = None,
) -> None:
    """Refuse, before anything is read, a ``--check`` that names no check the gate has and a ``--set`` of a
    column its schema lacks (``columns`` None: the schema is the source table's, unknown here), each with the
    nearest names ("did you mean").

    Raises:
        ConfigError: one problem, or :class:`~streaming_dq.config.errors.ConfigErrors` for several.
    """
    from streaming_dq.config.errors import ConfigErrors

    problems = [
        ConfigError(
            f"the gate has no check {c!r}{_did_you_mean(c, check_ids, 'check ids')}",
            source=source,
            field_path="--check",
        )
        for c in checks
        if c not in check_ids
    ]
    if columns is not None:
        problems += [
            ConfigError(
                f"column {f.column!r} is not in the config's source.schema{_did_you_mean(f.column, columns, 'columns')}",
                source=source,
                field_path="--set",
            )
            for f in fixes
            if f.column not in columns
        ]
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise ConfigErrors(problems, source=source)


def _did_you_mean(name: str, known: Sequence[str], what: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    if close:
        return ": did you mean " + " or ".join(repr(c) for c in close) + "?"
    return f" (its {what}: {', '.join(sorted(known))})"
