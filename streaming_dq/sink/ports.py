"""What the gate asks of the parts a caller plugs into it: a source decoder and outcome listeners."""

from __future__ import annotations

from typing import Protocol

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from streaming_dq.core.listeners import OutcomeListener

__all__ = ["OutcomeRecorder", "SourceDecoder"]


class SourceDecoder(Protocol):
    """Turns a micro-batch of a source's raw records into its rows (see ``QualityGate(source_decoder=...)``)."""

    def __call__(self, batch: DataFrame, /) -> DataFrame: ...

    def schema(self) -> StructType: ...


#: What the gate asks of a metrics sink: the outcome feed's listener (kept under this name for callers).
OutcomeRecorder = OutcomeListener
