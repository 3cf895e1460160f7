"""The streaming sink: QualityGate (the ``foreachBatch`` callable), Delta targets and idempotent writers.

Example:
    >>> from streaming_dq.sink import QualityGate, ReferenceSpec
    >>> spec = ReferenceSpec("csv", "/data/customers", schema="customer_id STRING", options={"header": "true"})
"""

from streaming_dq.core.outcome_rows import RESULTS_SCHEMA
from streaming_dq.sink.drift import SchemaDrift, detect_drift, drift_action
from streaming_dq.sink.gate import QualityGate
from streaming_dq.sink.options import GateOptions
from streaming_dq.sink.ports import OutcomeRecorder, SourceDecoder
from streaming_dq.sink.references import ReferenceDatasetUnavailableError, ReferenceResolver, ReferenceSpec
from streaming_dq.sources import with_corrupt_record_column
from streaming_dq.tables import AppTransaction, DeltaRsWriter, DeltaTarget, SparkDeltaWriter, TableWriter
from streaming_dq.tables.spark import has_delta_extension

__all__ = [
    "RESULTS_SCHEMA",
    "AppTransaction",
    "DeltaRsWriter",
    "DeltaTarget",
    "GateOptions",
    "OutcomeRecorder",
    "QualityGate",
    "ReferenceDatasetUnavailableError",
    "ReferenceResolver",
    "ReferenceSpec",
    "SchemaDrift",
    "SourceDecoder",
    "SparkDeltaWriter",
    "TableWriter",
    "detect_drift",
    "drift_action",
    "has_delta_extension",
    "with_corrupt_record_column",
]
