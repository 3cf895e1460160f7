"""Reading a gate's source, streaming (``run``) or once (``check``), the same way.

A json or csv source in ``PERMISSIVE`` mode (Spark's default) gets the malformed column appended to its
schema, so a malformed line reaches the gate (and its quarantine) with its raw text instead of becoming a row
of NULLs. A CSV line with more fields than the schema is malformed to Spark, so nothing is dropped there.

A JSON line can also carry keys the schema does not declare; Spark's JSON reader drops them without a word.
Unless ``source.unknown-fields`` is ``ignore``, a line-delimited json source is read as text and parsed with
``from_json`` (the parser ``spark.read.json`` uses, with the same options), and the keys it does not declare
are kept, with their values, as a JSON object in ``source.unknown-fields-column`` (NULL when there are none).
A built-in row check, ``unknown-fields``, fails on such rows: at ``warning`` severity for ``warn`` (the row
passes, is counted as warned, and the pass table keeps the column), at the first fail level for
``quarantine``. Everything runs on the executors.

Example:
    >>> df = read_source(spark, config.source, stream=True)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.null import NotNullCheck
from streaming_dq.checks.wording import violations_sentence
from streaming_dq.core.severity import Severity

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streaming_dq.config.gate_config import SourceSection

__all__ = [
    "UNKNOWN_FIELDS_CHECK_ID",
    "UnknownFieldsCheck",
    "detects_unknown_fields",
    "read_source",
    "unknown_fields_check",
    "unknown_fields_detection",
]

#: The check-id of the built-in check on undeclared JSON keys.
UNKNOWN_FIELDS_CHECK_ID = "unknown-fields"


class UnknownFieldsCheck(NotNullCheck):
    """Fails a row whose unknown-fields column holds keys the source schema does not declare."""

    check_name = "unknown-fields"

    def __init__(self, column: str, severity: Severity) -> None:
        super().__init__(UNKNOWN_FIELDS_CHECK_ID, [column], severity)

    def violation_details(self, violations: int, total: int) -> str:
        return violations_sentence(
            self.columns, violations, total, "row with undeclared fields", "rows with undeclared fields"
        )


def _permissive(source: SourceSection) -> bool:
    return str(source.options.get("mode", "PERMISSIVE")).upper() == "PERMISSIVE"


def _multiline(source: SourceSection) -> bool:
    return str(source.options.get("multiLine", source.options.get("multiline", "false"))).lower() == "true"


def unknown_fields_detection(source: SourceSection) -> str | None:
    """Why undeclared fields cannot be detected on ``source`` (None when they can, or are ignored)."""
    if source.unknown_fields == "ignore":
        return None
    if source.format == "kafka":
        assert source.value is not None
        return None if source.value.format == "json" else f"a {source.value.format} payload is not json"
    if source.format != "json":
        if source.format == "csv":
            return None  # extra CSV fields make the line malformed: nothing to detect
        return f"a {source.format} source brings its own schema"
    if source.schema_ is None:
        return "the source has no schema"
    if _multiline(source):
        return "a multiLine json source is not read line by line"
    if not _permissive(source):
        return f"mode {source.options.get('mode')} is not PERMISSIVE"
    return None


def detects_unknown_fields(source: SourceSection) -> bool:
    """True when ``source`` is read with the unknown-fields column."""
    return (
        (source.format == "json" or (source.format == "kafka" and _json_value(source)))
        and source.unknown_fields != "ignore"
        and unknown_fields_detection(source) is None
    )


def reads_json_lines(source: SourceSection) -> bool:
    """True when a json file source is read as text and parsed line by line with ``from_json`` (a declared
    schema, PERMISSIVE, not multiLine): undeclared keys and text after a record's object are seen there,
    whatever ``unknown-fields`` says."""
    return (
        source.format == "json"
        and source.schema_ is not None
        and _permissive(source)
        and not _multiline(source)
    )


def _json_value(source: SourceSection) -> bool:
    return source.value is not None and source.value.format == "json"


def _options(source: SourceSection) -> dict[str, str]:
    return {key: str(value) for key, value in source.options.items()}


#: What a blank line or message is made of: JSON's whitespace and the other ASCII spaces.
WHITESPACE = " \t\n\r\f\u000b"


def is_blank(text: Column) -> Column:
    """True for text of only whitespace (tabs and line breaks too: ``F.trim`` strips spaces only)."""
    return F.btrim(text, F.lit(WHITESPACE)) == ""


def has_trailing_content(value: Column) -> Column:
    """True when anything but whitespace follows the first JSON value of ``value`` (``{...} text``, two
    objects in one line or message). Spark's JSON parsers stop after the first value without a word.

    Two wrappings tell it, each a streaming token count: in ``[value]`` text after the value is an error
    unless it closes the array early with ``]``, or starts a second element (a length above 1); in
    ``{"_": value}`` the early close would be ``}``, which the array wrapping refuses.
    """
    in_array = F.json_array_length(F.concat(F.lit("["), value, F.lit("]")))
    in_object = F.json_object_keys(F.concat(F.lit('{"_":'), value, F.lit("}")))
    return in_array.isNull() | (in_array != 1) | in_object.isNull()


def _parsed_json(lines: DataFrame, source: SourceSection, schema: Any) -> DataFrame:
    """Parse the text source's ``value`` lines as ``spark.read.json`` would, keeping undeclared keys."""
    lines = lines.where(~is_blank(F.col("value")))  # blank lines are not records (spark.read.json skips them)
    unknown = source.unknown_fields_column if detects_unknown_fields(source) else None
    return _json_records(lines, schema, _options(source), source.malformed_column, unknown)


def _json_records(
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
    from streaming_dq.sink.schemas import with_corrupt_record_column

    declared = F.array(*[F.lit(name) for name in schema.fieldNames()])
    full = with_corrupt_record_column(schema, malformed)
    options = {**options, "columnNameOfCorruptRecord": malformed}
    value = F.col("value")
    undeclared = F.array_except(F.json_object_keys(value), declared)
    kept: Column = F.when(
        F.size(undeclared) > 0,
        F.to_json(
            F.map_filter(
                F.from_json(value, "map<string,variant>"), lambda k, _: ~F.array_contains(declared, k)
            )
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


def read_source(
    session: SparkSession, source: SourceSection, *, stream: bool, path: str | None = None
) -> DataFrame:
    """The source as a DataFrame: a streaming one (``stream=True``), or the files at ``path`` read once.

    Args:
        session: The SparkSession.
        source: The ``source:`` section.
        stream: Read with ``readStream`` (and ``maxFilesPerTrigger``) instead of ``read``.
        path: What to read instead of ``source.path`` (``streaming-dq check --data``).
    """
    from pyspark.sql.types import StructType

    from streaming_dq.sink.schemas import with_corrupt_record_column

    if source.format == "kafka":
        from streaming_dq.kafka import read_kafka

        return read_kafka(session, source, stream=stream)
    where = path or source.path
    reader: Any = session.readStream if stream else session.read
    if stream and source.max_files_per_trigger is not None:
        reader = reader.option("maxFilesPerTrigger", str(source.max_files_per_trigger))
    if reads_json_lines(source):
        schema = StructType.fromDDL(source.schema_ or "")
        lines = reader.format("text").options(**_options(source)).load(where)
        return _parsed_json(lines, source, schema)
    reader = reader.format(source.format).options(**source.options)
    if source.schema_ is not None and source.format in ("json", "csv") and _permissive(source):
        reader = reader.option("columnNameOfCorruptRecord", source.malformed_column)
        reader = reader.schema(with_corrupt_record_column(source.schema_, source.malformed_column))
    elif source.schema_ is not None:
        reader = reader.schema(source.schema_)
    return reader.load(where)


def unknown_fields_check(source: SourceSection, fail_levels: list[Severity]) -> UnknownFieldsCheck | None:
    """The built-in check on undeclared keys for ``source`` (None when they are ignored or not detected)."""
    if not detects_unknown_fields(source):
        return None
    severity = fail_levels[0] if source.unknown_fields == "quarantine" else Severity.WARNING
    return UnknownFieldsCheck(source.unknown_fields_column, severity)
