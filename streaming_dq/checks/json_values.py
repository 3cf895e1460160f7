"""JSON text: ``json-format-check``, ``json-keys-check``, ``json-schema-check``, read with Spark's own JSON parser
(no Python runs per row).

NULL semantics: NULL passes unless ``treat-null-as-failure: true``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce
from typing import Any, ClassVar

from pydantic import Field
from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.checks.value_rule import ValueRuleCheck, ValueRuleConfig
from streaming_dq.compat.spark import parse_ddl
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.exceptions import ConfigError


def is_json(value: Column) -> Column:
    """True when ``value`` is one complete JSON document (Spark's variant parser; duplicate keys refused).

    Spark's parser stops after the first value (``{"a":1} x`` would parse), so the text is parsed as the
    only element of an array: anything after the first value makes that array invalid or longer than one.
    """
    wrapped = F.concat(F.lit("["), value, F.lit("]"))
    return F.try_parse_json(wrapped).isNotNull() & (F.json_array_length(wrapped) == 1)


class JsonFormatCheck(ValueRuleCheck):
    """Fails a row when a value is not one complete JSON document (RFC 8259: an object, array, string,
    number, ``true``, ``false`` or ``null``, surrounding whitespace allowed). An object with a key twice fails
    (Spark's JSON parser refuses it); ``NaN``, single quotes and trailing commas fail.
    """

    column_kind: ClassVar[str | None] = "string"
    spark_feature: ClassVar[str | None] = "variant"  # is_json: try_parse_json

    def bad(self, value: Column) -> Column:
        return ~is_json(value)

    def rule_text(self) -> str:
        return "not a JSON document"


class JsonKeysCheck(ValueRuleCheck):
    """Fails a row when a value is not a JSON object with every one of ``keys`` at its top level.

    With ``require-all: false`` one of the keys is enough. A value that is not JSON, or JSON that is not an
    object, fails.
    """

    column_kind: ClassVar[str | None] = "string"
    spark_feature: ClassVar[str | None] = "variant"  # is_json: try_parse_json

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        keys: Sequence[str],
        require_all: bool = True,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        if not keys:
            raise ConfigError("keys must name at least one key", field_path="keys")
        self.keys = list(keys)
        self.require_all = require_all

    def bad(self, value: Column) -> Column:
        found = F.json_object_keys(value)
        has = [F.array_contains(found, F.lit(k)) for k in self.keys]
        present = reduce((lambda a, b: a & b) if self.require_all else (lambda a, b: a | b), has)
        return ~(is_json(value) & found.isNotNull() & F.coalesce(present, F.lit(False)))

    def rule_text(self) -> str:
        which = "all of" if self.require_all else "any of"
        return f"not a JSON object with {which} the keys {', '.join(self.keys)}"


class JsonSchemaCheck(ValueRuleCheck):
    """Fails a row when a value is not a JSON object conforming to ``schema`` (Spark DDL, e.g.
    ``id INT NOT NULL, tags ARRAY<STRING>``): Spark's JSON reader must read it into that struct without a
    type mismatch (``{"id": "x"}`` for an INT fails, a number for a STRING field is read as its text), and
    every top-level ``NOT NULL`` field must be present and not null. Other keys are allowed. The text must
    also be one complete JSON document (as ``json-format-check``).
    """

    column_kind: ClassVar[str | None] = "string"
    spark_feature: ClassVar[str | None] = "variant"  # is_json: try_parse_json

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        schema: str,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        if not schema or not schema.strip():
            raise ConfigError(
                "schema must be Spark DDL, e.g. 'id INT NOT NULL, name STRING'", field_path="schema"
            )
        self.schema = schema
        from pyspark.sql import SparkSession

        if SparkSession.getActiveSession() is not None:
            self._struct()  # a schema Spark cannot parse is a config error now, not in the first batch

    def _struct(self) -> Any:
        from pyspark.sql import types as T

        try:
            struct = parse_ddl(self.schema)
        except Exception as exc:
            raise ConfigError(
                f"cannot read schema {self.schema!r} as Spark DDL: {exc}", field_path="schema"
            ) from None
        if not isinstance(struct, T.StructType):
            raise ConfigError(f"schema {self.schema!r} is not a list of fields", field_path="schema")
        return struct

    def bad(self, value: Column) -> Column:
        from pyspark.sql import types as T

        struct = self._struct()
        corrupt = "__dq_corrupt_record"
        parsed = F.from_json(
            value,
            T.StructType([*struct.fields, T.StructField(corrupt, T.StringType(), True)]),
            {"columnNameOfCorruptRecord": corrupt, "mode": "PERMISSIVE"},
        )
        ok = is_json(value) & parsed.isNotNull() & parsed.getField(corrupt).isNull()
        for f in struct.fields:
            if not f.nullable:
                ok = ok & parsed.getField(f.name).isNotNull()
        return ~ok

    def rule_text(self) -> str:
        return f"not a JSON object of {self.schema}"


@register_check_config(check_name="json-format-check")
class JsonFormatCheckConfig(ValueRuleConfig):
    """``{check: json-format-check, check-id, columns: [...]}``."""

    check_class: ClassVar[type[BaseCheck]] = JsonFormatCheck


@register_check_config(check_name="json-keys-check")
class JsonKeysCheckConfig(ValueRuleConfig):
    """``{check: json-keys-check, check-id, columns: [...], keys: [...], require-all?: true}``."""

    check_class: ClassVar[type[BaseCheck]] = JsonKeysCheck
    keys: list[str] = Field(min_length=1)
    require_all: bool = True


@register_check_config(check_name="json-schema-check")
class JsonSchemaCheckConfig(ValueRuleConfig):
    """``{check: json-schema-check, check-id, columns: [...], schema: "id INT NOT NULL, name STRING"}``."""

    check_class: ClassVar[type[BaseCheck]] = JsonSchemaCheck
    schema_: str = Field(alias="schema", min_length=1)

    def check_parameters(self) -> dict[str, Any]:
        params = super().check_parameters()
        params["schema"] = params.pop("schema_")
        return params
