"""Delta tables and the writer back-ends every gate table goes through (delta-rs, Spark's Delta writer).

Example:
    >>> from streaming_dq.tables import DeltaTarget, DeltaRsWriter
    >>> DeltaRsWriter().committed_version(DeltaTarget("/nonexistent/t"), "app") is None
    True
"""

from streaming_dq.tables.deltars import DeltaRsWriter
from streaming_dq.tables.reading import read_table, sql_literal
from streaming_dq.tables.spark import SparkDeltaWriter, has_delta_extension
from streaming_dq.tables.targets import AppTransaction, DeltaTarget, TableWriter

__all__ = [
    "AppTransaction",
    "DeltaRsWriter",
    "DeltaTarget",
    "SparkDeltaWriter",
    "TableWriter",
    "has_delta_extension",
    "read_table",
    "sql_literal",
]
