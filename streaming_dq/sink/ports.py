"""What the gate asks of the parts a caller plugs into it: a source decoder and outcome listeners."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from streaming_dq.core.listeners import OutcomeListener
from streaming_dq.core.outcome import SchemaMessages

__all__ = ["MessageCounter", "OutcomeRecorder", "SourceDecoder"]


class SourceDecoder(Protocol):
    """Turns a micro-batch of a source's raw records into its rows (see ``QualityGate(source_decoder=...)``)."""

    def __call__(self, batch: DataFrame, /) -> DataFrame: ...

    def schema(self) -> StructType: ...


@runtime_checkable
class MessageCounter(Protocol):
    """A source decoder that also counts the messages of the batch it decoded last, per schema id (the registry
    decoder): the counts reach the batch's outcome, its results row and ``/metrics``."""

    def counted(self) -> tuple[SchemaMessages, ...]: ...


#: What the gate asks of a metrics sink: the outcome feed's listener (kept under this name for callers).
OutcomeRecorder = OutcomeListener
