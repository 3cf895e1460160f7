"""Reading a gate's source, streaming (``run``) or once (``check``), the same way: files (json, csv,
parquet ...), Delta tables and Kafka topics, with malformed records kept and undeclared fields named.

:mod:`~streaming_dq.sources.reader` dispatches by format; :mod:`~streaming_dq.sources.json`,
:mod:`~streaming_dq.sources.csv` and :mod:`~streaming_dq.sources.kafka` decode their records.
"""

from streaming_dq.sources.csv import CsvHeaderDecoder, reads_csv_by_header
from streaming_dq.sources.json import (
    DEFAULT_MALFORMED_COLUMN,
    has_trailing_content,
    is_blank,
    reads_json_lines,
    with_corrupt_record_column,
)
from streaming_dq.sources.kafka import decode_kafka, kafka_options, raw_text, read_kafka
from streaming_dq.sources.reader import read_source, source_decoder

__all__ = [
    "DEFAULT_MALFORMED_COLUMN",
    "CsvHeaderDecoder",
    "decode_kafka",
    "has_trailing_content",
    "is_blank",
    "kafka_options",
    "raw_text",
    "read_kafka",
    "read_source",
    "reads_csv_by_header",
    "reads_json_lines",
    "source_decoder",
    "with_corrupt_record_column",
]
