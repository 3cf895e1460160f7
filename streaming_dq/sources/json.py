"""Line-delimited JSON (files and Kafka values): ``from_json`` on the executors, nothing dropped.

A line is parsed with the parser and options ``spark.read.json`` uses; a line the parser refuses, and one with
text after its object (which Spark's parser would cut without a word), keeps its raw text in the malformed
column; the keys the schema does not declare are kept as a JSON object in the unknown-fields column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from streaming_dq.compat.spark import json_values_type, parse_ddl
from streaming_dq.exceptions import ConfigTypeError

if TYPE_CHECKING:
    from streaming_dq.config.source_model import SourceSection

__all__ = [
    "DEFAULT_MALFORMED_COLUMN",
    "WHITESPACE",
    "has_trailing_content",
    "is_blank",
    "json_records",
    "parsed_json_lines",
    "reads_json_lines",
    "with_corrupt_record_column",
]


#: The column a malformed record's raw text goes to (Spark's ``columnNameOfCorruptRecord`` default).
DEFAULT_MALFORMED_COLUMN = "_corrupt_record"


def with_corrupt_record_column(
    schema_ddl: str | StructType, column: str = DEFAULT_MALFORMED_COLUMN
) -> StructType:
    """Return the source schema with a nullable string column for malformed records, appended if absent.

    A JSON or CSV source in ``PERMISSIVE`` mode only keeps the raw text of a malformed line when the user
    schema has this column (``columnNameOfCorruptRecord``); the gate then quarantines such rows with a
    ``malformed-record`` error and the text in ``_dq_raw``. Parsing a DDL string needs an active SparkSession.

    Args:
        schema_ddl: The source schema, as a DDL string (``"id BIGINT, ts TIMESTAMP"``) or a StructType.
        column: The corrupt-record column name (Spark's default ``_corrupt_record``).

    Returns:
        The schema with ``column STRING`` as its last field.

    Example:
        >>> with_corrupt_record_column("id BIGINT").fieldNames()  # doctest: +SKIP
        ['id', '_corrupt_record']
    """
    schema = parse_ddl(schema_ddl) if isinstance(schema_ddl, str) else schema_ddl
    if not isinstance(schema, StructType):
        raise ConfigTypeError(f"expected a struct schema, got {schema.simpleString()}")
    if column in schema.fieldNames():
        return schema
    return StructType([*schema.fields, StructField(column, StringType(), True)])


def reads_json_lines(source: SourceSection) -> bool:
    """True when a json file source is read as text and parsed line by line with ``from_json`` (a declared
    schema, PERMISSIVE, not multiLine): undeclared keys and text after a record's object are seen there,
    whatever ``unknown-fields`` says."""
    return (
        source.format == "json" and source.schema_ is not None and source.permissive and not source.multiline
    )


def options_of(source: SourceSection) -> dict[str, str]:
    return {key: str(value) for key, value in source.options.items()}


#: What a blank line or message is made of: JSON's whitespace and the other ASCII spaces.
WHITESPACE = " \t\n\r\f\u000b"


def is_blank(text: Column) -> Column:
    """True for text of only whitespace (tabs and line breaks too: ``F.trim`` strips spaces only)."""
    return F.btrim(text, F.lit(WHITESPACE)) == ""


def has_trailing_content(value: Column) -> Column:
    """True when anything but whitespace follows the first JSON value of ``value`` (``{...} text``, two
    objects in one line or message). Spark's JSON parsers stop after the first value without a word.

    Exact test: two wrappings, each a streaming token count. In ``[value]`` text after the value is an
    error unless it closes the array early with ``]`` or starts a second element (a length above 1); in
    ``{"_": value}`` that early close would be ``}``, which the array wrapping refuses. Each costs a second
    pass of the JSON parser (~1 us a row: it doubled the parse), so it runs only where trailing text is
    possible: a line that does not end with ``}``, or with a ``}`` followed by something (nested objects,
    braces in strings). A flat record, one ``}`` at its end, skips it (~+5% of the parse).
    """
    in_array = F.json_array_length(F.concat(F.lit("["), value, F.lit("]")))
    in_object = F.json_object_keys(F.concat(F.lit('{"_":'), value, F.lit("}")))
    exact = in_array.isNull() | (in_array != 1) | in_object.isNull()
    possible = F.regexp_like(value, F.lit(r"\}\s*\S")) | ~F.endswith(F.rtrim(value), F.lit("}"))
    return F.when(possible, exact).otherwise(F.lit(False))


def parsed_json_lines(lines: DataFrame, source: SourceSection, schema: Any) -> DataFrame:
    """Parse the text source's ``value`` lines as ``spark.read.json`` would, keeping undeclared keys."""
    lines = lines.where(~is_blank(F.col("value")))  # blank lines are not records (spark.read.json skips them)
    unknown = source.unknown_fields_column if source.detects_unknown_fields else None
    return json_records(lines, schema, options_of(source), source.malformed_column, unknown)


def json_records(
    lines: DataFrame,
    schema: Any,
    options: dict[str, str],
    malformed: str,
    unknown: str | None,
) -> DataFrame:
    """``from_json`` of the string column ``value``: the declared fields, the malformed column (the raw text
    of an unparsable record), the undeclared keys as JSON in ``unknown`` (when not None), then the other
    columns of ``lines`` as they are.

    A record with text after its object (:func:`has_trailing_content`) is malformed as a whole: its raw text
    in the malformed column, its fields and undeclared keys NULL, as for any record the parser refuses.
    """
    declared = F.array(*[F.lit(name) for name in schema.fieldNames()])
    full = with_corrupt_record_column(schema, malformed)
    options = {**options, "columnNameOfCorruptRecord": malformed}
    value = F.col("value")
    undeclared = F.array_except(F.json_object_keys(value), declared)
    kept: Column = F.when(
        F.size(undeclared) > 0,
        F.to_json(
            F.map_filter(F.from_json(value, json_values_type()), lambda k, _: ~F.array_contains(declared, k))
        ),
    )
    extra = [kept.alias("_dq_unknown")] if unknown else []
    internal = ("_dq_row", "_dq_unknown", "_dq_value")
    carried = [F.col(f"`{c}`") for c in lines.columns if c != "value"]
    parsed = lines.select(
        F.from_json(value, full, options).alias("_dq_row"), *extra, value.alias("_dq_value"), *carried
    )
    raw, corrupt = F.col("_dq_value"), F.col(f"_dq_row.`{malformed}`")
    trailing = corrupt.isNull() & raw.isNotNull() & has_trailing_content(raw)
    parsed = parsed.withColumn("_dq_trailing", trailing)
    whole = ~F.col("_dq_trailing")
    columns = [
        (
            F.when(whole, corrupt).otherwise(raw)
            if name == malformed
            else F.when(whole, F.col(f"_dq_row.`{name}`"))
        ).alias(name)
        for name in full.fieldNames()
    ]
    if unknown:
        columns.append(F.when(whole, F.col("_dq_unknown")).alias(unknown))
    return parsed.select(
        *columns,
        *[F.col(f"`{c}`") for c in parsed.columns if c not in (*internal, "_dq_trailing")],
    )
