"""A DQX rule's arguments as our translators read them: every argument accounted for, limits read as DQX
reads them (a plain string is SQL, a digit string a number, an ISO string a date)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from streaming_dq.core.sql import string_literal
from streaming_dq.core.suggest import did_you_mean
from streaming_dq.exceptions import ConfigError

__all__ = [
    "IDENTIFIER",
    "Arguments",
    "FunctionMapping",
    "Translator",
    "expression_check",
    "number_of",
    "split_ddl",
    "sql_of",
    "sql_string",
    "with_message",
]

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Arguments:
    """One rule's arguments: read with defaults, every argument accounted for (an unknown one is an error)."""

    def __init__(self, raw: Mapping[str, Any], where: str, allowed: Sequence[str]) -> None:
        self.raw = dict(raw)
        self.where = where
        unknown = [k for k in self.raw if k not in allowed]
        if unknown:
            raise ConfigError(
                f"unknown argument {unknown[0]!r} of this DQX function{did_you_mean(unknown[0], allowed)}",
                field_path=f"{where}.check.arguments.{unknown[0]}",
            )

    def get(self, name: str, default: Any = None) -> Any:
        return self.raw.get(name, default)

    def need(self, name: str) -> Any:
        if self.raw.get(name) is None:
            raise ConfigError(f"missing argument {name!r}", field_path=f"{self.where}.check.arguments.{name}")
        return self.raw[name]

    def column(self, name: str = "column") -> str:
        value = self.need(name)
        if not isinstance(value, str) or not IDENTIFIER.match(value):
            raise ConfigError(
                f"{value!r} is not a plain column name: our checks take column names (a nested field or an "
                "expression needs sql_expression)",
                field_path=f"{self.where}.check.arguments.{name}",
            )
        return value

    def columns(self, name: str = "columns") -> list[str]:
        value = self.need(name)
        if not isinstance(value, list) or not value:
            raise ConfigError(
                "expected a list of column names", field_path=f"{self.where}.check.arguments.{name}"
            )
        for i, c in enumerate(value):
            if not isinstance(c, str) or not IDENTIFIER.match(c):
                raise ConfigError(
                    f"{c!r} is not a plain column name",
                    field_path=f"{self.where}.check.arguments.{name}[{i}]",
                )
        return list(value)

    def refuse(self, name: str, why: str) -> None:
        if self.raw.get(name) not in (None, False):
            raise ConfigError(why, field_path=f"{self.where}.check.arguments.{name}")


def sql_of(value: Any) -> str:
    """A DQX limit as SQL text, read as DQX reads it (a plain string is SQL, a digit string a number ...)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | Decimal):
        return repr(value) if not isinstance(value, Decimal) else str(value)
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP'{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE'{value.isoformat()}'"
    if isinstance(value, str):
        if value.isdigit():
            return value
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
        return (
            f"TIMESTAMP'{parsed.isoformat(sep=' ')}'"
            if ":" in value
            else f"DATE'{parsed.date().isoformat()}'"
        )
    raise ConfigError(f"cannot read {value!r} as a value or SQL expression")


def number_of(value: Any) -> int | float | None:
    """``value`` as a number when DQX would read it as one, else None (an expression, a date)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


Translator = Callable[[Arguments], dict[str, Any]]


@dataclass(frozen=True)
class FunctionMapping:
    """How one DQX function becomes one of our checks."""

    arguments: tuple[str, ...]
    build: Translator
    #: What differs, said at load time; None when the mapping is exact.
    note: str | None = None
    #: Our check (for the migration table).
    ours: str = ""
    #: Dataset-level in DQX (its ``filter`` is a row filter).
    dataset: bool = False


def sql_string(text: str) -> str:
    return string_literal(text)


def split_ddl(ddl: str) -> list[str]:
    """``a int, b struct<x: int, y: string>`` -> ``["a int", "b struct<x: int, y: string>"]``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(ddl):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(ddl[start:i])
            start = i + 1
    parts.append(ddl[start:])
    return [p for p in parts if p.strip()]


def expression_check(expr: str) -> dict[str, Any]:
    return {"check": "expression-check", "expression": expr}


def with_message(out: dict[str, Any], a: Arguments) -> dict[str, Any]:
    """DQX's ``msg`` becomes the check's ``message``: the report words the check's failures with it."""
    if a.get("msg") is not None:
        out["message"] = str(a.get("msg"))
    return out
