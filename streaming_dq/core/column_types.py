"""Which column types a check can judge, checked before any batch runs.

A check that compares a column with numbers, dates or patterns needs a column of that kind: with a STRING
``amount`` a numeric bound makes Spark cast every value (under ANSI mode a value that is not a number fails
the job with ``CAST_INVALID_INPUT``, every batch, every restart). ``validate`` compares each check with the
declared source schema and the gate compares it with the stream's schema in ``start()``, so the mistake is
one line naming the check, the column and the types, before any data is read.

Types are told apart by their kind: Spark DDL keywords (``int``, ``bigint``, ``decimal``) and
``DataType.typeName()`` names (``integer``, ``long``, ``decimal(10,2)``) map to the same kinds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.sql import check_filters
from streaming_dq.exceptions import CheckEvaluationError, ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

ColumnKind = Literal["numeric", "string", "temporal", "array"]

_KINDS: Mapping[str, frozenset[str]] = {
    "numeric": frozenset(
        {
            "tinyint",
            "byte",
            "smallint",
            "short",
            "int",
            "integer",
            "bigint",
            "long",
            "float",
            "real",
            "double",
        }
        | {"decimal", "dec", "numeric"}
    ),
    "string": frozenset({"string", "varchar", "char"}),
    "temporal": frozenset({"date", "timestamp", "timestamp_ntz", "timestamp_ltz"}),
    "array": frozenset({"array"}),
}
_NOUNS: Mapping[str, str] = {
    "numeric": "a numeric",
    "string": "a string",
    "temporal": "a date or timestamp",
    "array": "an array",
}


def type_keyword(type_name: str) -> str:
    """``decimal(10,2)`` -> ``decimal``, ``varchar(20)`` -> ``varchar``, ``array<int>`` -> ``array``."""
    return type_name.split("(", 1)[0].split("<", 1)[0].strip().lower()


def is_kind(type_name: str, kind: ColumnKind) -> bool:
    """True when a column of ``type_name`` is of ``kind``."""
    return type_keyword(type_name) in _KINDS[kind]


def check_columns(check: BaseCheck) -> list[tuple[str, str]]:
    """``(parameter path, column)`` for the columns a check reads its values from (``columns``/``column``)."""
    columns = getattr(check, "columns", None)
    if isinstance(columns, list | tuple):
        return [(f"columns[{i}]", c) for i, c in enumerate(columns) if isinstance(c, str)]
    column = getattr(check, "column", None)
    return [("column", column)] if isinstance(column, str) else []


def column_type_problems(
    checks: Iterable[BaseCheck], types: Mapping[str, str], *, missing: bool = True, kinds: bool = True
) -> list[tuple[BaseCheck, str, str]]:
    """``(check, parameter path, reason)`` for every column of a check that is missing or of the wrong kind.

    Args:
        checks: The checks.
        types: ``{column: type}``, DDL keywords or Spark type names.
        missing: Also report the columns ``types`` does not have.
        kinds: Also report the columns of a kind their check cannot judge.
    """
    problems: list[tuple[BaseCheck, str, str]] = []
    for check in checks:
        kind = getattr(check, "column_kind", None) if kinds else None  # an anomaly check takes its metric's
        for path, column in check_columns(check):
            if column not in types:
                if missing:
                    problems.append((check, path, f"column {column!r} is not in the stream's columns"))
            elif kind is not None and not is_kind(types[column], kind):
                name = check.check_type or type(check).__name__
                reason = (
                    f"column {column!r} is {type_keyword(types[column])}; {name} needs {_NOUNS[kind]} column"
                )
                problems.append((check, path, reason))
    return problems


def check_schema(
    checks: Iterable[BaseCheck], event_time: str | None, schema: StructType, *, kinds: bool = True
) -> None:
    """Fail now, in one line, when the checks cannot run on rows of ``schema``.

    Args:
        kinds: Also refuse a column of a kind its check cannot judge (a gate: its stream would fail every
            batch); without it Spark casts the values, as ``BatchDQEngine`` lets it.

    Raises:
        ConfigError: the event-time column is missing or not a date/timestamp.
        CheckEvaluationError: a check's column is missing or of a type it cannot judge (a numeric bound
            on a STRING column would fail every batch with Spark's ``CAST_INVALID_INPUT``).
    """
    types = {f.name: f.dataType.typeName() for f in schema.fields}
    if event_time:
        if event_time not in types:
            raise ConfigError(
                f"event-time column {event_time!r} is not in the stream (columns: {', '.join(types)})",
                field_path="gate.event-time",
            )
        if not is_kind(types[event_time], "temporal"):
            raise ConfigError(
                f"event-time column {event_time!r} is {types[event_time]}, not a timestamp",
                field_path="gate.event-time",
            )
    problems = column_type_problems(checks, types, kinds=kinds)
    if problems:
        check, _, reason = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise CheckEvaluationError(check.check_id, reason + more)


def check_input(checks: Iterable[Any], event_time: str | None, df: DataFrame, *, kinds: bool = True) -> None:
    """Fail now, in one line naming the check, when ``checks`` cannot run on ``df``'s rows: a column missing
    (or, with ``kinds``, of a kind a check cannot judge), an event-time column that is no timestamp
    (:func:`check_schema`), a filter that does not resolve on them (:func:`~streaming_dq.core.sql.check_filters`).
    Analysis only: the gate runs it on the stream at start, a plan on each new input schema.

    Raises:
        ConfigError: The event-time column is missing or not a date/timestamp.
        CheckEvaluationError: A check's column or filter cannot be evaluated on ``df``.
    """
    checks = list(checks)
    check_schema(checks, event_time, df.schema, kinds=kinds)
    check_filters(checks, df)
