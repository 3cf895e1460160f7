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

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streaming_dq.config.source_model import SourceSection
    from streaming_dq.sources.registry import RegistryDecoder

from streaming_dq.compat.spark import parse_ddl
from streaming_dq.config.source_model import REGISTRY_FORMATS
from streaming_dq.sources.csv import CsvHeaderDecoder, line_coordinates, reads_csv_by_header, text_options
from streaming_dq.sources.json import (
    options_of,
    parsed_json_lines,
    reads_json_lines,
    with_corrupt_record_column,
)
from streaming_dq.sources.kafka import kafka_raw, read_kafka
from streaming_dq.tables.catalog import catalog_name
from streaming_dq.tables.storage import spark_uri

__all__ = ["read_source", "source_decoder"]


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

    if source.format == "kafka":
        assert source.value is not None
        if source.value.format in REGISTRY_FORMATS:  # decoded per micro-batch: it needs the batch's ids
            from streaming_dq.sources.registry import registry_decoder

            raw = kafka_raw(session, source, stream=stream)
            return raw if stream else registry_decoder(source)(raw)
        return read_kafka(session, source, stream=stream)
    where = path or source.path
    if catalog_name(where) is None and where is not None:
        where = spark_uri(where)  # s3:// is S3A's to Spark
    reader: Any = session.readStream if stream else session.read
    if stream and source.max_files_per_trigger is not None:
        reader = reader.option("maxFilesPerTrigger", str(source.max_files_per_trigger))
    if reads_json_lines(source):
        schema = parse_ddl(source.schema_ or "")
        lines = reader.format("text").options(**options_of(source)).load(where)
        return parsed_json_lines(lines, source, schema)
    if reads_csv_by_header(source):
        text = reader.format("text").options(**text_options(source)).load(where)
        lines = text.select("value", *line_coordinates())
        return lines if stream else CsvHeaderDecoder(source)(lines)
    reader = reader.format(source.format).options(**source.options)
    if source.schema_ is not None and source.format in ("json", "csv") and source.permissive:
        reader = reader.option("columnNameOfCorruptRecord", source.malformed_column)
        reader = reader.schema(with_corrupt_record_column(source.schema_, source.malformed_column))
    elif source.schema_ is not None:
        reader = reader.schema(source.schema_)
    name = catalog_name(where)
    return reader.load(where) if name is None else reader.table(name)


def source_decoder(source: SourceSection) -> CsvHeaderDecoder | RegistryDecoder | None:
    """What turns each micro-batch of ``source``'s raw records into its rows (None: the stream has its rows):
    a csv source read by header, a Kafka source framed by a schema registry."""
    if reads_csv_by_header(source):
        return CsvHeaderDecoder(source)
    if source.format == "kafka" and source.value is not None and source.value.format in REGISTRY_FORMATS:
        from streaming_dq.sources.registry import registry_decoder

        return registry_decoder(source)
    return None
