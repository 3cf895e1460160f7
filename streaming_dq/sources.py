"""Reading a gate's source, streaming (``run``) or once (``check``), the same way.

A json or csv source in ``PERMISSIVE`` mode (Spark's default) gets the malformed column appended to its
schema, so a malformed line reaches the gate (and its quarantine) with its raw text instead of becoming a row
of NULLs. A CSV line (without a header) with more fields than the schema is malformed, so nothing is dropped.

A JSON line can also carry keys the schema does not declare; Spark's JSON reader drops them without a word.
A line-delimited json source with a schema is read as text and parsed with ``from_json`` (the parser
``spark.read.json`` uses, with the same options): a line with text after its object is malformed as a whole,
and unless ``source.unknown-fields`` is ``ignore`` the keys it does not declare are kept, with their values,
as a JSON object in ``source.unknown-fields-column`` (NULL when there are none). A built-in row check,
``unknown-fields``, fails on such rows: at ``warning`` severity for ``warn`` (the row passes, is counted as
warned, and the pass table keeps the column), at the first fail level for ``quarantine``. A csv source with
``header: true`` is read by each file's header (:class:`CsvHeaderDecoder`): its undeclared columns are kept
the same way. Everything runs on the executors.

Example:
    >>> df = read_source(spark, config.source, stream=True)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from functools import reduce
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from streaming_dq.checks.null import NotNullCheck
from streaming_dq.checks.wording import violations_sentence
from streaming_dq.core.severity import Severity
from streaming_dq.exceptions import ConfigTypeError

logger = logging.getLogger("streaming_dq.source")

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streaming_dq.config.gate_config import SourceSection

__all__ = [
    "DEFAULT_MALFORMED_COLUMN",
    "UNKNOWN_FIELDS_CHECK_ID",
    "CsvHeaderDecoder",
    "UnknownFieldsCheck",
    "detects_unknown_fields",
    "read_source",
    "reads_csv_by_header",
    "source_decoder",
    "unknown_fields_check",
    "unknown_fields_detection",
    "with_corrupt_record_column",
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
    schema = StructType.fromDDL(schema_ddl) if isinstance(schema_ddl, str) else schema_ddl
    if not isinstance(schema, StructType):
        raise ConfigTypeError(f"expected a struct schema, got {schema.simpleString()}")
    if column in schema.fieldNames():
        return schema
    return StructType([*schema.fields, StructField(column, StringType(), True)])


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
    if source.format == "csv":
        if source.schema_ is None:
            return "the source has no schema"
        if not _has_header(source):
            return (
                "a csv source without header: true has no column names (a line with more fields is malformed)"
            )
        if _multiline(source):
            return "a multiLine csv source is not read line by line"
        if not _permissive(source):
            return f"mode {source.options.get('mode')} is not PERMISSIVE"
        return None
    if source.format != "json":
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
        (source.format in ("json", "csv") or (source.format == "kafka" and _json_value(source)))
        and source.unknown_fields != "ignore"
        and unknown_fields_detection(source) is None
    )


def _has_header(source: SourceSection) -> bool:
    return str(source.options.get("header", "false")).lower() == "true"


def reads_csv_by_header(source: SourceSection) -> bool:
    """True when a csv file source is read line by line and mapped to the schema by each file's header
    (:class:`CsvHeaderDecoder`): a declared schema, ``header: true``, PERMISSIVE, not multiLine."""
    return (
        source.format == "csv"
        and source.schema_ is not None
        and _has_header(source)
        and _permissive(source)
        and not _multiline(source)
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
    if reads_csv_by_header(source):
        text = reader.format("text").options(**_text_options(source)).load(where)
        lines = text.select("value", *_line_coordinates())
        return lines if stream else CsvHeaderDecoder(source)(lines)
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


# -- csv files mapped by their header ------------------------------------------------------------------------


def _line_coordinates() -> list[Column]:
    """Where each line of a csv source read by header came from: its file, and the start of its file split."""
    return [
        F.col("_metadata.file_path").alias("_dq_file"),
        F.col("_metadata.file_block_start").alias("_dq_block"),
    ]


def _text_options(source: SourceSection) -> dict[str, str]:
    """The options of the text reader for a csv source's lines (only the line separator carries over)."""
    return {k: str(v) for k, v in source.options.items() if k.lower() == "linesep"}


def source_decoder(source: SourceSection) -> CsvHeaderDecoder | None:
    """What turns each micro-batch of ``source``'s raw lines into its rows (None: the stream has its rows)."""
    return CsvHeaderDecoder(source) if reads_csv_by_header(source) else None


class CsvHeaderDecoder:
    """Rows of a csv source, each file's columns read by the names of its own header.

    Spark's CSV reader maps columns by position and only warns when a header differs, so a producer that adds
    a column made every line of its files malformed (too many fields), and one that reorders columns would
    shift values into the wrong columns. Here the source is read as text lines with their file (a stream),
    and for each micro-batch :meth:`__call__`:

    1. finds each file's header: the first line of the file's first split (one small Spark job per batch:
       a ``min_by`` per file, so no line goes to the driver);
    2. parses every line with ``from_csv`` and a schema per distinct header (a declared column at its
       header position with its declared type; an undeclared one as a string), on the executors;
    3. gives the declared columns by name (NULL where a header lacks one), the malformed column (the raw line
       of one the parser refused, e.g. a value of the wrong type or a field too many), and the undeclared
       columns with their values as a JSON object in the unknown-fields column (``unknown-fields`` decides
       what happens to the row, as for JSON; ``ignore`` drops them);
    4. drops the header lines and blank lines, as Spark's reader does.

    A header that differs from the schema (other names, missing or extra columns, another order) is logged
    once per layout, naming the file, the columns and what happens to them.
    """

    def __init__(self, source: SourceSection) -> None:
        self.source = source
        self.malformed = source.malformed_column
        self.unknown = source.unknown_fields_column if detects_unknown_fields(source) else None
        self.options = {
            k: str(v)
            for k, v in source.options.items()
            if k.lower() not in ("header", "mode", "columnnameofcorruptrecord", "multiline", "enforceschema")
        }
        self._told: set[tuple[str, ...]] = set()

    def declared(self) -> Any:
        """The declared fields (without the malformed column), as a StructType."""
        from pyspark.sql.types import StructType

        schema = with_corrupt_record_column(str(self.source.schema_), self.malformed)
        return StructType([f for f in schema.fields if f.name != self.malformed])

    def schema(self) -> Any:
        """The rows' schema: the declared fields, the malformed column, and the unknown-fields column."""
        from pyspark.sql.types import StringType, StructField, StructType

        extra = [self.malformed, *([self.unknown] if self.unknown else [])]
        return StructType([*self.declared().fields, *(StructField(c, StringType(), True) for c in extra)])

    def headers(self, lines: DataFrame) -> dict[str, str]:
        """``{file: header line}`` of the files in ``lines`` (one Spark job; a file's header is the first line
        of its split that starts at byte 0)."""
        firsts = (
            lines.withColumn("_dq_line", F.monotonically_increasing_id())
            .where(F.col("_dq_block") == 0)
            .groupBy("_dq_file")
            .agg(F.min_by("value", "_dq_line").alias("header"))
        )
        return {row["_dq_file"]: row["header"] for row in firsts.collect()}

    def __call__(self, lines: DataFrame) -> DataFrame:
        """The rows of a batch of lines (``value``, ``_dq_file``, ``_dq_block``), in :meth:`schema`.

        Two projections: each line parsed once (one ``from_csv`` column per distinct header, set only for the
        lines of its files), then the rows built from the parsed columns. In one projection the parser ran
        once per reference to its result (a field, the corrupt flag): 5x Spark's reader instead of ~2x.
        """
        headers = self.headers(lines)
        by_header: dict[str, list[str]] = {}
        for path, header in sorted(headers.items()):
            by_header.setdefault(header, []).append(path)
        declared = self.declared()
        file, value = F.col("_dq_file"), F.col("value")
        layouts: list[tuple[Column | None, list[str]]] = []
        header_of: Column | None = None
        for header, files in by_header.items():
            names = self._names(header)
            self._tell(names, declared.fieldNames(), files)
            layouts.append((file.isin(files), names))
            text = F.lit(header)
            header_of = (
                F.when(file.isin(files), text)
                if header_of is None
                else header_of.when(file.isin(files), text)
            )
        known = [where for where, _ in layouts if where is not None]
        # a line of no known file (none, unless a header could not be found) is read in the schema's order
        layouts.append((~reduce(lambda a, b: a | b, known) if known else None, declared.fieldNames()))
        keep = ~is_blank(value)
        if header_of is not None:
            keep = keep & (header_of.isNull() | (value != header_of))
        parsed = [
            (
                F.from_csv(value, ddl, self._parse_options)
                if where is None
                else F.when(where, F.from_csv(value, ddl, self._parse_options))
            ).alias(f"_dq_p{g}")
            for g, (where, ddl, _) in enumerate(self._layouts(layouts, declared))
        ]
        staged = lines.where(keep).select(value, *parsed)
        row: Column | None = None
        for g, (where, names) in enumerate(layouts):
            built = self._row(F.col(f"_dq_p{g}"), names, declared)
            if where is None:
                row = built
                break
            row = (
                F.when(F.col(f"_dq_p{g}").isNotNull(), built)
                if row is None
                else row.when(F.col(f"_dq_p{g}").isNotNull(), built)
            )
        assert row is not None
        out = staged.select(row.alias("_dq_row"))
        return out.select(*[F.col(f"_dq_row.`{name}`").alias(name) for name in self.schema().fieldNames()])

    @property
    def _parse_options(self) -> dict[str, str]:
        return {**self.options, "mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_dq_corrupt"}

    def _layouts(
        self, layouts: list[tuple[Column | None, list[str]]], declared: Any
    ) -> list[tuple[Column | None, str, list[str]]]:
        return [(where, self._ddl(names, declared), names) for where, names in layouts]

    def _names(self, header: str) -> list[str]:
        import csv

        sep = str(self.options.get("sep", self.options.get("delimiter", ",")))
        quote = str(self.options.get("quote", '"')) or '"'
        fields = next(
            csv.reader([header.lstrip("\ufeff")], delimiter=sep[:1] or ",", quotechar=quote[:1]), []
        )
        return [f.strip() for f in fields]

    @staticmethod
    def _positions(names: list[str], declared: Any) -> dict[str, int]:
        """Where each declared column stands among a header's ``names`` (by name, letter case ignored)."""
        wanted = {f.name.lower(): f.name for f in declared.fields}
        at: dict[str, int] = {}
        for i, name in enumerate(names):
            field = wanted.get(name.lower())
            if field is not None and field not in at:
                at[field] = i
        return at

    def _ddl(self, names: list[str], declared: Any) -> str:
        """The ``from_csv`` schema of a header: a declared column with its type, any other as a string."""
        at = self._positions(names, declared)
        types = {i: f.dataType.simpleString() for f in declared.fields for n, i in at.items() if n == f.name}
        return ", ".join(
            [*(f"`_c{i}` {types.get(i, 'STRING')}" for i in range(len(names))), "`_dq_corrupt` STRING"]
        )

    def _row(self, parsed: Column, names: list[str], declared: Any) -> Column:
        """One struct of :meth:`schema` from a line's ``parsed`` struct (parsed with a header's ``names``)."""
        at = self._positions(names, declared)
        bad = parsed["_dq_corrupt"].isNotNull()
        fields = [
            (F.when(~bad, parsed[f"_c{at[f.name]}"]) if f.name in at else F.lit(None).cast(f.dataType)).alias(
                f.name
            )
            for f in declared.fields
        ]
        fields.append(F.when(bad, F.col("value")).alias(self.malformed))
        if self.unknown is not None:
            extra = [(i, n) for i, n in enumerate(names) if i not in at.values()]
            kept = (
                F.to_json(F.struct(*[parsed[f"_c{i}"].alias(n) for i, n in extra])) if extra else F.lit(None)
            )
            fields.append(F.when(~bad, kept).cast("string").alias(self.unknown))
        return F.struct(*fields)

    def _tell(self, names: list[str], declared: list[str], files: list[str]) -> None:
        """Log once per header layout how it differs from the schema and what the rows get."""
        key = tuple(names)
        if key in self._told or names == declared:
            return
        self._told.add(key)
        lowered = {n.lower() for n in names}
        extra = [n for n in names if n.lower() not in {d.lower() for d in declared}]
        missing = [d for d in declared if d.lower() not in lowered]
        said = []
        if extra:
            where = (
                f"kept in {self.unknown} (unknown-fields: {self.source.unknown_fields})"
                if self.unknown
                else "dropped (unknown-fields: ignore)"
            )
            said.append(f"column(s) not in source.schema: {', '.join(extra)}, {where}")
        if missing:
            said.append(f"no column(s) {', '.join(missing)} of source.schema: NULL in its rows")
        common = [n for n in names if n.lower() in {d.lower() for d in declared}]
        if [n.lower() for n in common] != [d.lower() for d in declared if d.lower() in lowered]:
            said.append("the declared columns in another order: read by name")
        logger.warning(
            "csv header of %s%s differs from source.schema: %s",
            files[0],
            f" (and {len(files) - 1} more file(s))" if len(files) > 1 else "",
            "; ".join(said or ["other letter case: read by name"]),
        )
