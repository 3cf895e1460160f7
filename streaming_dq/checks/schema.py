"""Schema checks: ``schema-check`` and ``column-presence-check`` (aggregate; they read the schema only and run
no Spark job).

Types are Spark type names as ``DataType.simpleString()`` writes them (``int``, ``bigint``, ``string``,
``decimal(10,2)``, ``array<string>``, ``timestamp``, ``timestamp_ntz`` ...). Common aliases are accepted
(``integer``, ``long``, ``short``, ``byte``, ``bool``, ``decimal`` = ``decimal(10,0)``) and a bare ``array``,
``map`` or ``struct`` matches any type of that kind. Three families match a kind of type whatever its size:
``any-integer`` (``tinyint`` to ``bigint``), ``any-number`` (those, ``float``, ``double`` and any ``decimal``) and
``any-timestamp`` (``timestamp``, ``timestamp_ntz``), and ``any`` matches every type: a data contract's
logical types become these (``any``: a property without one, which must still be a column).

NULL semantics: not applicable (values are not looked at).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import Field, field_validator
from pyspark.sql import DataFrame

from streaming_dq.core.base_check import BaseAggregateCheck, BaseCheck
from streaming_dq.core.base_config import BaseAggregateCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.results import AggregateCheckResult, AggregateEvaluationResult
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import data_columns
from streaming_dq.exceptions import ConfigError

_ALIASES = {
    "integer": "int",
    "long": "bigint",
    "short": "smallint",
    "byte": "tinyint",
    "bool": "boolean",
    "decimal": "decimal(10,0)",
    "dec": "decimal(10,0)",
    "numeric": "decimal(10,0)",
    "real": "float",
    "text": "string",
}
_ATOMIC = {
    "string",
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "date",
    "timestamp",
    "timestamp_ntz",
    "binary",
    "void",
    "variant",
}
_NESTED = {"array", "map", "struct"}
_DECIMAL = re.compile(r"^decimal\(\d+,\d+\)$")
_PARAMETERISED = re.compile(r"^(array|map|struct)<.*>$")
_CHAR = re.compile(r"^(var)?char\(\d+\)$")
#: Families of types a contract's logical type names (``integer``, ``number``, ``timestamp``), whatever their size.
_FAMILIES = {
    "any-integer": re.compile(r"^(tinyint|smallint|int|bigint)$"),
    "any-number": re.compile(r"^(tinyint|smallint|int|bigint|float|double|decimal\(\d+,\d+\))$"),
    "any-timestamp": re.compile(r"^timestamp(_ntz)?$"),
    "any": re.compile(r"^.+$"),
}
#: A type name inside ``array<..>``/``map<..>``/``struct<..>`` (not a struct field name, which precedes ':').
_INNER_TYPE = re.compile(r"(?<=[<,:])([a-z_]+)(?=[>,])")


def normalize_type(name: str) -> str:
    """A Spark type name in ``simpleString`` form: lower case, no blanks, aliases resolved.

    Raises:
        ValueError: ``name`` is not a Spark type name.
    """
    text = re.sub(r"\s+", "", str(name)).lower()
    text = _ALIASES.get(text, text)
    if text in _ATOMIC or text in _NESTED or text in _FAMILIES or _DECIMAL.match(text) or _CHAR.match(text):
        return text
    if _PARAMETERISED.match(text) and text.count("<") == text.count(">"):
        return _INNER_TYPE.sub(lambda m: _ALIASES.get(m.group(1), m.group(1)), text)
    if text.startswith("interval"):
        return text
    raise ConfigError(f"unknown Spark type {name!r}")


def type_matches(expected: str, actual: str) -> bool:
    """Whether an actual ``simpleString`` type satisfies an expected (normalized) type."""
    actual = re.sub(r"\s+", "", actual).lower()
    if expected in _NESTED:
        return actual.startswith(f"{expected}<")
    if expected in _FAMILIES:
        return bool(_FAMILIES[expected].match(actual))
    return expected == actual


class SchemaCheck(BaseAggregateCheck):
    """Passes when every column of ``expected_schema`` exists with its type, and (with ``strict``) no other.

    NULL semantics: not applicable.

    Example:
        >>> SchemaCheck("orders-schema", {"id": "bigint", "amount": "decimal(10,2)"})  # doctest: +SKIP
    """

    def __init__(
        self,
        check_id: str,
        expected_schema: Mapping[str, str],
        strict: bool = True,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.expected_schema = {c: normalize_type(t) for c, t in expected_schema.items()}
        self.strict = strict

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        own = set(data_columns(df))
        actual = {f.name: f.dataType.simpleString() for f in df.schema.fields if f.name in own}
        missing = [c for c in self.expected_schema if c not in actual]
        mismatched = {
            c: {"expected": t, "actual": actual[c]}
            for c, t in self.expected_schema.items()
            if c in actual and not type_matches(t, actual[c])
        }
        unexpected = [c for c in actual if c not in self.expected_schema] if self.strict else []
        metrics = {
            "missing_columns": missing,
            "type_mismatches": mismatched,
            "unexpected_columns": unexpected,
        }
        return AggregateEvaluationResult(not (missing or mismatched or unexpected), metrics)

    def details(self, result: AggregateCheckResult) -> str:
        m = result.metrics
        if result.status == "skipped" or "missing_columns" not in m:
            return super().details(result)
        problems = []
        if m["missing_columns"]:
            problems.append(f"missing column(s) {', '.join(m['missing_columns'])}")
        if m["type_mismatches"]:
            shown = ", ".join(
                f"{c} is {v['actual']} (expected {v['expected']})" for c, v in m["type_mismatches"].items()
            )
            problems.append(f"wrong type(s): {shown}")
        if m["unexpected_columns"]:
            problems.append(f"unexpected column(s) {', '.join(m['unexpected_columns'])}")
        if not problems:
            return f"Schema matches ({len(self.expected_schema)} columns{', strict' if self.strict else ''})"
        return "Schema differs: " + "; ".join(problems)


class ColumnPresenceCheck(BaseAggregateCheck):
    """Passes when every column of ``required_columns`` exists (types are not checked).

    NULL semantics: not applicable.
    """

    def __init__(
        self,
        check_id: str,
        required_columns: Sequence[str],
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self.required_columns = list(required_columns)

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        present = set(data_columns(df))
        missing = [c for c in self.required_columns if c not in present]
        return AggregateEvaluationResult(not missing, {"missing_columns": missing})

    def details(self, result: AggregateCheckResult) -> str:
        m = result.metrics
        if result.status == "skipped" or "missing_columns" not in m:
            return super().details(result)
        if m["missing_columns"]:
            return f"Missing column(s): {', '.join(m['missing_columns'])}"
        return f"All {len(self.required_columns)} required columns are present"


@register_check_config(check_name="schema-check")
class SchemaCheckConfig(BaseAggregateCheckConfig):
    """``{check: schema-check, check-id, expected-schema: {column: type}, strict?: true}``."""

    check_class: ClassVar[type[BaseCheck]] = SchemaCheck
    expected_schema: dict[str, str] = Field(min_length=1)
    strict: bool = True

    @field_validator("expected_schema")
    @classmethod
    def _known_types(cls, value: dict[str, str]) -> dict[str, str]:
        bad = []
        for column, name in value.items():
            try:
                normalize_type(name)
            except ValueError:
                bad.append(f"{column}: {name}")
        if bad:
            raise ConfigError(f"unknown Spark type(s): {', '.join(bad)}")
        return value


@register_check_config(check_name="column-presence-check")
class ColumnPresenceCheckConfig(BaseAggregateCheckConfig):
    """``{check: column-presence-check, check-id, required-columns: [...]}``."""

    check_class: ClassVar[type[BaseCheck]] = ColumnPresenceCheck
    required_columns: list[str] = Field(min_length=1)
