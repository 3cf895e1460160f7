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
from typing import Literal

from streaming_dq.core.base_check import BaseCheck

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
    checks: Iterable[BaseCheck], types: Mapping[str, str], *, missing: bool = True
) -> list[tuple[BaseCheck, str, str]]:
    """``(check, parameter path, reason)`` for every column of a check that is missing or of the wrong kind.

    Args:
        checks: The checks.
        types: ``{column: type}``, DDL keywords or Spark type names.
        missing: Also report the columns ``types`` does not have.
    """
    problems: list[tuple[BaseCheck, str, str]] = []
    for check in checks:
        kind = getattr(check, "column_kind", None)  # an anomaly check takes its metric's
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
