"""A malformed record's text parsed again the way the stream parsed it: for a release of records whose raw text
(``_dq_raw`` in the quarantine table) was corrected.

Only sources whose records are JSON text the gate itself parses can be parsed again from that text: JSON-lines
files read with a declared schema (``from_json``, :func:`~streaming_dq.sources.json.json_records`) and Kafka
values in JSON. For the others (CSV by header, Avro, a source Spark parses itself) :func:`record_parser` gives
None and a release keeps such records quarantined.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streaming_dq.compat.spark import parse_ddl
from streaming_dq.sources.json import json_records, options_of, reads_json_lines

if TYPE_CHECKING:
    from streaming_dq.config.source_model import SourceSection

__all__ = ["RecordParser", "record_parser"]


class RecordParser:
    """Parses a text column into the source's declared columns, as the stream does.

    Args:
        schema: The declared record schema.
        options: The parser's options (the source's).
        malformed: The column that holds the text of a record that still does not parse (NULL: it parsed).
        unknown: The unknown-fields column, when the source keeps undeclared keys.
    """

    def __init__(
        self, schema: StructType, options: dict[str, str], malformed: str, unknown: str | None
    ) -> None:
        self.schema, self.options, self.malformed, self.unknown = schema, options, malformed, unknown

    def parse(self, frame: DataFrame, text: str, where: Column) -> DataFrame:
        """``frame`` with its declared columns replaced by the parse of column ``text`` where ``where`` holds,
        and the :attr:`malformed` column: the text where it still does not parse, else NULL."""
        names = [n for n in self.schema.fieldNames() if n != self.malformed]
        if self.unknown:
            names.append(self.unknown)
        kept = {
            n: f"__dq_reparse{i}"
            for i, n in enumerate([*names, "value", self.malformed])
            if n in frame.columns
        }
        staged = frame.withColumnsRenamed(kept).withColumn(
            "value", F.when(where, F.col(_quote(kept.get(text, text))))
        )
        parsed = json_records(staged, self.schema, self.options, self.malformed, self.unknown)
        restored: dict[str, Any] = {
            n: F.when(where, F.col(_quote(n))).otherwise(F.col(_quote(kept[n]))) for n in names if n in kept
        }
        restored[self.malformed] = F.when(where, F.col(_quote(self.malformed)))
        out = parsed.withColumns(restored)
        wanted = [c for c in frame.columns if c != self.malformed]
        return out.select(*[F.col(_quote(c)) for c in wanted], F.col(_quote(self.malformed)))


def record_parser(source: SourceSection) -> RecordParser | None:
    """How ``source``'s records are parsed from their text (None: they are not JSON text the gate parses)."""
    unknown = source.unknown_fields_column if source.detects_unknown_fields else None
    if reads_json_lines(source):
        schema = _struct(source.schema_ or "")
        return RecordParser(schema, options_of(source), source.malformed_column, unknown)
    value = source.value
    if source.format == "kafka" and value is not None and value.format == "json":
        options = {k: str(v) for k, v in value.options.items()}
        return RecordParser(_struct(str(value.schema_)), options, source.malformed_column, unknown)
    return None


def _struct(ddl: str) -> StructType:
    schema = parse_ddl(ddl)
    assert isinstance(schema, StructType)  # a source schema is a list of fields
    return schema


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
