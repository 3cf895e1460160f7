"""CSV files read by each file's header: columns by name, an added column kept and named (see
:class:`CsvHeaderDecoder`)."""

from __future__ import annotations

import logging
from functools import reduce
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

if TYPE_CHECKING:
    from streaming_dq.config.source_model import SourceSection

from streaming_dq.sources.json import is_blank, with_corrupt_record_column

logger = logging.getLogger("streaming_dq.source")

__all__ = ["CsvHeaderDecoder", "line_coordinates", "reads_csv_by_header", "text_options"]


def reads_csv_by_header(source: SourceSection) -> bool:
    """True when a csv file source is read line by line and mapped to the schema by each file's header
    (:class:`CsvHeaderDecoder`): a declared schema, ``header: true``, PERMISSIVE, not multiLine."""
    return (
        source.format == "csv"
        and source.schema_ is not None
        and source.has_header
        and source.permissive
        and not source.multiline
    )


def line_coordinates() -> list[Column]:
    """Where each line of a csv source read by header came from: its file, and the start of its file split."""
    return [
        F.col("_metadata.file_path").alias("_dq_file"),
        F.col("_metadata.file_block_start").alias("_dq_block"),
    ]


def text_options(source: SourceSection) -> dict[str, str]:
    """The options of the text reader for a csv source's lines (only the line separator carries over)."""
    return {k: str(v) for k, v in source.options.items() if k.lower() == "linesep"}


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
        self.unknown = source.unknown_fields_column if source.detects_unknown_fields else None
        self.options = {
            k: str(v)
            for k, v in source.options.items()
            if k.lower() not in ("header", "mode", "columnnameofcorruptrecord", "multiline", "enforceschema")
        }
        self._told: set[tuple[str, ...]] = set()

    def declared(self) -> Any:
        """The declared fields (without the malformed column), as a StructType."""

        schema = with_corrupt_record_column(str(self.source.schema_), self.malformed)
        return StructType([f for f in schema.fields if f.name != self.malformed])

    def schema(self) -> Any:
        """The rows' schema: the declared fields, the malformed column, and the unknown-fields column."""

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
