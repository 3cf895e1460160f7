"""The field grammar of a gate config: non-empty strings, Spark DDL schemas, option values, triggers,
maintenance cadences and sizes, and the base of every section (kebab-case keys, unknown keys refused)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    PlainValidator,
    StringConstraints,
    WithJsonSchema,
)

from streaming_dq.core.base_config import kebab
from streaming_dq.core.modes import (
    FileFormat,
    choices,
)
from streaming_dq.core.scope import parse_duration
from streaming_dq.exceptions import ConfigError
from streaming_dq.tables.catalog import PREFIX, catalog_name, name_problem

FILE_FORMATS: tuple[str, ...] = choices(FileFormat)
"""Source and reference formats a gate config accepts (``delta`` needs the delta-spark JARs to stream)."""

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


def table_value(value: object) -> object:
    """A table's place in a config: a path or URI as written, or a catalog name, written ``{table: NAME}`` or
    ``table:NAME`` and kept as ``table:NAME`` (:mod:`streaming_dq.tables.catalog`)."""
    if isinstance(value, dict):
        if set(value) != {"table"} or not isinstance(value["table"], str):
            raise ConfigError("a catalog table is written {table: schema.table}")
        value = PREFIX + value["table"].strip()
    name = catalog_name(value) if isinstance(value, str) else None
    if name is not None and (problem := name_problem(name)):
        raise ConfigError(problem)
    return value


def named_table(data: object) -> object:
    """A section's ``table: NAME`` (a Delta source, a reference dataset) as its path ``table:NAME``."""
    if not isinstance(data, dict) or "table" not in data:
        return data
    if data.get("path") is not None:
        raise ConfigError("give path or table, not both", field_path="table")
    rest = {k: v for k, v in data.items() if k != "table"}
    table = data["table"]
    if not isinstance(table, str) or not table.strip():
        raise ConfigError("table: give the table's name (schema.table)", field_path="table")
    if problem := name_problem(table.strip()):
        raise ConfigError(problem, field_path="table")
    return {**rest, "path": PREFIX + table.strip()}


#: A table a gate writes: a path or URI, or a catalog table name (``{table: sales.orders_pass}``).
TableRef = Annotated[
    NonEmpty,
    BeforeValidator(table_value),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "description": "Path or URI of a Delta table."},
                {
                    "type": "object",
                    "properties": {"table": {"type": "string", "description": "schema.table in the catalog"}},
                    "required": ["table"],
                    "additionalProperties": False,
                },
            ]
        }
    ),
]


def _checked_ddl(value: str) -> str:
    ddl_column_names(value)  # raises the ConfigError naming the bad item
    return value


#: A Spark DDL schema (``"id STRING, ts TIMESTAMP"``), checked item by item when the config is read.
DdlSchema = Annotated[NonEmpty, AfterValidator(_checked_ddl)]


def _option_value(value: object) -> str:
    """Spark reader options are strings: ``true`` -> ``"true"``, ``1`` -> ``"1"``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise ConfigError(f"an option value must be a string, number or boolean, got {type(value).__name__}")


#: In the JSON Schema a string, number or boolean: what the validator accepts, not the string it makes of it.
OptionValue = Annotated[
    str,
    BeforeValidator(_option_value),
    WithJsonSchema({"type": ["string", "number", "integer", "boolean"]}),
]


class Section(BaseModel):
    model_config = ConfigDict(
        alias_generator=kebab, populate_by_name=True, extra="forbid", frozen=True, validate_default=True
    )


# --- trigger ---------------------------------------------------------------------------------------------

_INTERVAL = re.compile(
    r"^\s*\d+(\.\d+)?\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?|d|days?)\s*$", re.I
)


@dataclass(frozen=True)
class Trigger:
    """When micro-batches run: drain what is there and stop, or one batch every interval, forever.

    Attributes:
        processing_time: The interval (``"10 seconds"``) of a processing-time trigger; None for available-now.
    """

    processing_time: str | None = None

    @property
    def available_now(self) -> bool:
        """True when the job drains the source and stops."""
        return self.processing_time is None

    def to_spark(self) -> dict[str, Any]:
        """The keyword arguments of ``DataStreamWriter.trigger``.

        Example:
            >>> Trigger("10 seconds").to_spark()
            {'processingTime': '10 seconds'}
        """
        if self.processing_time is None:
            return {"availableNow": True}
        return {"processingTime": self.processing_time}

    def to_config(self) -> str | dict[str, str]:
        """The YAML form: ``available-now`` or ``{processing-time: INTERVAL}``."""
        return "available-now" if self.processing_time is None else {"processing-time": self.processing_time}


def parse_trigger(value: object) -> Trigger:
    """Read ``available-now`` or ``{processing-time: "10 seconds"}``.

    Raises:
        ValueError: anything else, with the accepted forms in the message.
    """
    if isinstance(value, Trigger):
        return value
    if value == "available-now":
        return Trigger()
    if isinstance(value, dict) and set(value) == {"processing-time"}:
        interval = value["processing-time"]
        if isinstance(interval, str) and _INTERVAL.match(interval):
            return Trigger(interval.strip())
        raise ConfigError(
            f"processing-time must be an interval such as '10 seconds' or '1 minute', got {interval!r}"
        )
    raise ConfigError(f"trigger must be 'available-now' or {{processing-time: '10 seconds'}}, got {value!r}")


TriggerField = Annotated[
    Trigger,
    PlainValidator(parse_trigger),
    PlainSerializer(lambda t: t.to_config()),
    WithJsonSchema(
        {
            "oneOf": [
                {"const": "available-now", "description": "Drain what the source holds, then stop."},
                {
                    "type": "object",
                    "properties": {"processing-time": {"type": "string", "examples": ["10 seconds"]}},
                    "required": ["processing-time"],
                    "additionalProperties": False,
                    "description": "One micro-batch every interval, until stopped.",
                },
            ]
        }
    ),
]


# --- Spark DDL ---------------------------------------------------------------------------------------------

_SIMPLE_TYPES = frozenset(
    {
        *("string", "varchar", "char", "binary", "boolean", "tinyint", "byte", "smallint", "short", "int"),
        *("integer", "bigint", "long", "float", "real", "double", "decimal", "dec", "numeric", "date"),
        *("timestamp", "timestamp_ntz", "timestamp_ltz", "variant", "void", "interval"),
    }
)
_COMPLEX_TYPES = frozenset({"array", "map", "struct"})


def _split_top_level(ddl: str) -> list[str]:
    """Split ``ddl`` on the commas that are not inside ``<>``, ``()`` or backticks."""
    parts: list[str] = []
    current: list[str] = []
    depth, quoted = 0, False
    for char in ddl:
        if char == "`":
            quoted = not quoted
        elif not quoted and char in "<(":
            depth += 1
        elif not quoted and char in ">)":
            depth -= 1
        elif not quoted and depth == 0 and char == ",":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts]


_COLUMN = re.compile(r"^(`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*)\s*:?\s+([A-Za-z_]+)")
TIME_TYPES = frozenset({"timestamp", "timestamp_ntz", "timestamp_ltz", "date"})


def ddl_columns(ddl: str) -> list[tuple[str, str]]:
    """The top-level ``(column name, lower-case type keyword)`` pairs of a Spark DDL schema, without a JVM.

    Only the shape is checked (``name TYPE`` items, a known type keyword): Spark parses the full types.

    Raises:
        ValueError: an item is not ``name TYPE`` or its type is not a Spark SQL type.

    Example:
        >>> ddl_columns("id STRING, `amount eur` DECIMAL(10,2), tags ARRAY<STRING>")
        [('id', 'string'), ('amount eur', 'decimal'), ('tags', 'array')]
    """
    columns = []
    for item in _split_top_level(ddl):
        match = _COLUMN.match(item)
        if match is None:
            raise ConfigError(f"expected 'name TYPE' items separated by commas, got {item!r}")
        name, type_name = match.group(1), match.group(2).lower()
        if type_name not in _SIMPLE_TYPES | _COMPLEX_TYPES:
            raise ConfigError(f"column {name}: {match.group(2)!r} is not a Spark SQL type")
        columns.append((name[1:-1].replace("``", "`") if name.startswith("`") else name, type_name))
    return columns


def ddl_column_names(ddl: str) -> list[str]:
    """The top-level column names of a Spark DDL schema string (see :func:`ddl_columns`).

    Example:
        >>> ddl_column_names("id STRING, ts TIMESTAMP")
        ['id', 'ts']
    """
    return [name for name, _ in ddl_columns(ddl)]


BATCHES = re.compile(r"^\s*(\d+)\s*batch(es)?\s*$", re.I)
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(b|kib|kb|mib|mb|gib|gb)?\s*$", re.I)
_SIZE_UNIT = {"b": 1, "kib": 1024, "kb": 1000, "mib": 1024**2, "mb": 1000**2, "gib": 1024**3, "gb": 1000**3}


def every_text(value: object) -> str:
    text = str(value).strip()
    if not BATCHES.match(text):
        try:
            parse_duration(text)
        except ConfigError:
            raise ConfigError(f"expected e.g. '500 batches' or '1 hour', got {text!r}") from None
    return text


def size_bytes(value: object) -> int:
    m = _SIZE.match(str(value))
    if isinstance(value, bool) or not m:
        raise ConfigError(f"expected a size such as '128 MiB' or a number of bytes, got {value!r}")
    return int(float(m.group(1)) * _SIZE_UNIT[(m.group(2) or "b").lower()])
