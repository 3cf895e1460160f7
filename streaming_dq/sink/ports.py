"""What the gate asks of the parts a caller plugs into it: a source decoder and a metrics recorder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from streaming_dq.core.outcome import BatchOutcome, WindowOutcome

__all__ = ["OutcomeRecorder", "SourceDecoder"]


class SourceDecoder(Protocol):
    """Turns a micro-batch of a source's raw records into its rows (see ``QualityGate(source_decoder=...)``)."""

    def __call__(self, batch: DataFrame, /) -> DataFrame: ...

    def schema(self) -> StructType: ...


class OutcomeRecorder(Protocol):
    """What the gate needs from a metrics sink (e.g. the exporter's ``GateMetrics``)."""

    def record_batch(self, outcome: BatchOutcome) -> None: ...

    def record_failure(self, batch_id: int, error: BaseException) -> None: ...

    def record_windows(self, windows: Sequence[WindowOutcome]) -> None: ...
