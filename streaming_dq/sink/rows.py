"""What a router hands the committer: each row-level table's rows, ready to append, and what the split did.

A router decides where every row of a batch goes; it writes nothing. It returns a :class:`SplitBatch`: the
pass rows and the quarantine rows as :class:`TableRows` (an Arrow table split on the driver, or a lazy
DataFrame the executors will write) and the :class:`~streaming_dq.sink.records.RoutedBatch` that counts them.
The committer (:mod:`~streaming_dq.sink.commit`) appends them, in its order, to the tables that still lack
the batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import pyarrow as pa

from streaming_dq.core.modes import TargetRole
from streaming_dq.exceptions import InternalError
from streaming_dq.tables import SparkDeltaWriter

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streaming_dq.sink.records import RoutedBatch
    from streaming_dq.tables import AppTransaction, DeltaTarget, TableWriter

__all__ = ["ROW_ROLES", "KeyRows", "SplitBatch", "TableRows"]

#: The row-level tables, in the order their rows are committed (every row to exactly one of them).
ROW_ROLES: tuple[TargetRole, ...] = ("pass", "quarantine")


@dataclass(frozen=True)
class TableRows:
    """The rows of one table for one batch.

    Attributes:
        data: An Arrow table (appended from the driver) or a DataFrame (appended by Spark's Delta writer).
        rows: How many rows ``data`` holds (known from the decision: a DataFrame is not counted again); None
            when only the executors know (the frame is then written by them).
        merge: Merge the table's schema with the rows' (schema-drift ``merge``; the quarantine table always
            follows the pass table's evolution).
    """

    data: pa.Table | DataFrame
    rows: int | None
    merge: bool = False

    def append(self, writer: TableWriter, target: DeltaTarget, txn: AppTransaction) -> None:
        """Append the rows in one commit recording ``txn``."""
        if isinstance(self.data, pa.Table):
            writer.append(target, self.data, txn, merge_schema=self.merge)
            return
        if not isinstance(writer, SparkDeltaWriter):
            raise InternalError(
                f"rows kept on the executors are written by Spark's Delta writer, not {writer.name}"
            )
        writer.append_frame(target, self.data, txn, merge_schema=self.merge, rows=self.rows)


@dataclass(frozen=True)
class KeyRows:
    """The keys a batch saw, for the keys table (:mod:`~streaming_dq.sink.seen_keys`).

    Attributes:
        rows: The keys table's rows of the batch.
        latest: Per check, the latest event time among them (its watermark after the batch).
        late: Per check, the batch's rows too late to judge.
    """

    rows: TableRows
    latest: Mapping[str, datetime] = field(default_factory=dict)
    late: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SplitBatch:
    """A batch split and not yet written: its pass and quarantine rows, what the routing counted, and the
    participants' rows (the keys it saw)."""

    passed: TableRows
    quarantined: TableRows
    routed: RoutedBatch
    #: The batch's key records for the keys table (:mod:`~streaming_dq.sink.seen_keys`), when it has any.
    keys: KeyRows | None = None

    def rows_for(self, role: TargetRole) -> TableRows:
        """The rows of ``pass`` or ``quarantine``."""
        if role == "pass":
            return self.passed
        if role == "quarantine":
            return self.quarantined
        raise InternalError(f"{role!r} is not a row-level table")
