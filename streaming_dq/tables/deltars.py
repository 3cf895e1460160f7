"""The embedded writer: delta-rs (the ``deltalake`` package), committing Arrow tables from the driver.

delta-rs records application transactions but never skips a replay on its own (delta-rs issues #2580 and
#3821): :meth:`~streaming_dq.sink.targets.TableWriter.write_once` reads ``transaction_version(app_id)``
first. delta-rs must not be used in a *forked* child once its runtime exists in the parent; the gate only
calls it on the driver.
"""

from __future__ import annotations

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
from deltalake.exceptions import TableNotFoundError

from streaming_dq.tables.targets import AppTransaction, DeltaTarget, TableWriter


class DeltaRsWriter(TableWriter):
    """Writes through ``deltalake.write_deltalake``; one commit per call, carrying the app transaction.

    Example:
        >>> writer = DeltaRsWriter()
        >>> writer.committed_version(DeltaTarget("/nonexistent/table"), "orders:q1") is None
        True
    """

    name = "delta-rs"

    @staticmethod
    def _options(target: DeltaTarget) -> dict[str, str] | None:
        return dict(target.storage_options) or None

    def _open(self, target: DeltaTarget) -> DeltaTable | None:
        try:
            return DeltaTable(target.uri, storage_options=self._options(target))
        except TableNotFoundError:
            return None

    def table_schema(self, target: DeltaTarget) -> pa.Schema | None:
        table = self._open(target)
        return None if table is None else pa.schema(table.schema().to_arrow())

    def create_table(self, target: DeltaTarget, schema: pa.Schema) -> None:
        DeltaTable.create(
            target.uri,
            schema=schema,
            mode="ignore",
            partition_by=list(target.partition_by) or None,
            configuration=dict(target.configuration) or None,
            storage_options=self._options(target),
        )

    def committed_version(self, target: DeltaTarget, app_id: str) -> int | None:
        table = self._open(target)
        return None if table is None else table.transaction_version(app_id)

    def append(
        self, target: DeltaTarget, data: pa.Table, txn: AppTransaction, *, merge_schema: bool = False
    ) -> None:
        write_deltalake(
            target.uri,
            data,
            mode="append",
            schema_mode="merge" if merge_schema else None,
            storage_options=self._options(target),
            commit_properties=CommitProperties(
                app_transactions=[Transaction(txn.app_id, txn.version)],
                custom_metadata={
                    "streaming_dq.app_id": txn.app_id,
                    "streaming_dq.batch_id": str(txn.version),
                },
            ),
        )
