"""Spark SQL helpers of the catalog: quoting column names, and checking SQL and regex text at config time.

Config-time checks use the active SparkSession's own parser (so the grammar is exactly Spark's) and are
skipped when no session is active: a check built before the session exists is checked again when the engine
builds its condition, where an error names the check too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DataType

from streaming_dq.compat.spark import jvm, jvm_session
from streaming_dq.exceptions import CheckEvaluationError, ConfigError

#: Every column the engine adds while validating starts with this (flags, bitmasks, the regime ordinal).
INTERNAL_PREFIX = "__dq"


def col(name: str) -> Column:
    """The column called ``name``, quoted so dots, dashes and spaces in the name are taken literally.

    Example:
        >>> col("order.id")  # doctest: +SKIP
        Column<'order.id'>
    """
    return F.col("`" + name.replace("`", "``") + "`")


def try_cast(sql: str, data_type: str | DataType) -> Column:
    """``try_cast(<sql> AS <type>)``: NULL where a value does not convert, whatever ANSI mode says.

    Built from SQL text on every Spark version: ``Column.try_cast`` is 4.0+, and Spark 3.5's Connect protocol
    has no TRY cast of a Column, while the SQL form parses the same on 3.5 and 4.x, classic and Connect.

    Args:
        sql: The value as SQL text (a :func:`quote` d column name, or an expression of them).
        data_type: A Spark SQL type name (``bigint``) or a type.
    """
    type_sql = data_type if isinstance(data_type, str) else data_type.simpleString()
    return F.expr(f"try_cast({sql} AS {type_sql})")


def data_columns(df: DataFrame) -> list[str]:
    """The data's own columns: ``df.columns`` without the engine's internal ones.

    Classic aggregate checks may be handed the engine's annotated DataFrame (it carries the per-row flags and
    the regime used to scope them), so schema-level checks look at these columns only.
    """
    return [c for c in df.columns if not c.startswith(INTERNAL_PREFIX)]


def string_literal(text: str) -> str:
    """``text`` as a Spark SQL string literal (single-quoted, backslashes and quotes escaped by a backslash)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def quote(name: str) -> str:
    """``name`` as a backquoted SQL identifier (for use inside SQL expression text)."""
    return "`" + name.replace("`", "``") + "`"


def _active_jvm_session() -> Any | None:
    """The active classic session's JVM side, None without one or under Spark Connect (checks skipped)."""
    from pyspark.sql import SparkSession

    return jvm_session(SparkSession.getActiveSession())


def _java_message(exc: Exception) -> str:
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return str(java.getMessage()).strip().splitlines()[0]
        except Exception:  # pragma: no cover - py4j detail
            pass
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check_sql_expression(sql: str, *, check_id: str, field: str) -> None:
    """Raise ConfigError unless ``sql`` parses as a Spark SQL expression.

    Args:
        sql: The expression text.
        check_id: The check it belongs to (named in the error).
        field: The config field holding it (the error's ``field_path``).

    Raises:
        ConfigError: The text is empty or Spark's parser rejects it.
    """
    if not sql or not sql.strip():
        raise ConfigError(f"check {check_id!r}: {field} must not be empty", field_path=field)
    jss = _active_jvm_session()
    if jss is None:
        return
    try:
        jss.sessionState().sqlParser().parseExpression(sql)
    except Exception as exc:
        raise ConfigError(
            f"check {check_id!r}: invalid Spark SQL expression {sql!r}: {_java_message(exc)}",
            field_path=field,
        ) from None


def check_sql_type(text: str, *, check_id: str, field: str) -> None:
    """Raise ConfigError unless ``text`` parses as a Spark SQL data type (``bigint``, ``decimal(10,2)``).

    Skipped without an active SparkSession, like :func:`check_sql_expression`.
    """
    jss = _active_jvm_session()
    if jss is None:
        return
    try:
        jss.sessionState().sqlParser().parseDataType(text)
    except Exception as exc:
        raise ConfigError(
            f"check {check_id!r}: {text!r} is not a Spark SQL type: {_java_message(exc)}", field_path=field
        ) from None


def check_java_regex(pattern: str, *, check_id: str, field: str) -> None:
    """Raise ConfigError unless ``pattern`` compiles as a Java regular expression (Spark's ``rlike``).

    Raises:
        ConfigError: The pattern does not compile.
    """
    from pyspark.sql import SparkSession

    view = jvm(SparkSession.getActiveSession())
    if view is None:
        return
    try:
        view.java.util.regex.Pattern.compile(pattern)
    except Exception as exc:
        raise ConfigError(
            f"check {check_id!r}: invalid regular expression {pattern!r}: {_java_message(exc)}",
            field_path=field,
        ) from None


def check_filters(checks: Iterable[Any], df: DataFrame) -> None:
    """Raise CheckEvaluationError for the first check whose ``filter`` (or another predicate the check names in
    its ``predicate_fields``, e.g. ``predicate``) does not resolve on ``df`` as a boolean.

    Analysis only (no Spark job): run it on the stream itself at start, and on a batch's schema.

    Raises:
        CheckEvaluationError: A predicate names a column ``df`` lacks, does not parse, or is not boolean.
    """
    from pyspark.sql.types import BooleanType, NullType

    for check in checks:
        for field in ("filter", *getattr(check, "predicate_fields", ())):
            text = getattr(check, field, None)
            if text is None:
                continue
            name = field.replace("_", "-")
            try:
                dtype = df.select(F.expr(text).alias("f")).schema["f"].dataType
            except Exception as exc:
                raise CheckEvaluationError(
                    check.check_id, f"{name} {text!r} cannot be evaluated on the data: {_java_message(exc)}"
                ) from None
            if not isinstance(dtype, BooleanType | NullType):
                raise CheckEvaluationError(
                    check.check_id, f"{name} {text!r} is {dtype.simpleString()}, not a predicate (true/false)"
                )
