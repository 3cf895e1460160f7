"""The embedded writer: delta-rs (the ``deltalake`` package), committing Arrow tables from the driver.

delta-rs records application transactions but never skips a replay on its own (delta-rs issues #2580 and
#3821): :meth:`~streaming_dq.sink.targets.TableWriter.write_once` reads ``transaction_version(app_id)``
first, and every commit that records one is made on exactly the version after the one whose transaction
version it read (:meth:`DeltaRsWriter._commit_once`), so two processes with one app id cannot both commit a
batch: the one that lost finds out. delta-rs must not be used in a *forked* child once its runtime exists in the parent; the gate only
calls it on the driver.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from streaming_dq.exceptions import ConfigError, InternalError, TargetWriteError, TransactionTakenError
from streaming_dq.tables.catalog import catalog_name
from streaming_dq.tables.storage import commits_by_conditional_put, delta_rs_options, unsafe_commit_problem
from streaming_dq.tables.targets import AppTransaction, Compaction, DeltaTarget, TableWriter, is_local_uri

logger = logging.getLogger("streaming_dq.tables")

#: The writer features of the tables this writer appends to for Spark's writer (``SparkDeltaWriter``): a table
#: that needs any other one (row tracking, column mapping, identity or generated columns, CHECK constraints ...)
#: is left to Spark's writer, which knows them all. Legacy protocols up to writer version 2 need none of them.
APPENDABLE_FEATURES = frozenset(
    {"appendOnly", "invariants", "changeDataFeed", "deletionVectors", "timestampNtz", "vacuumProtocolCheck"}
)

#: A kept table is loaded anew after this many commits: brought up to date incrementally it holds every
#: commit read since its load (the driver's RSS grew ~260 MiB per 1,000 batches over 4 unmaintained tables),
#: and a load starts from the newest checkpoint (delta-rs writes one every 100 commits by itself).
RELOAD_EVERY = 100
#: How many times a commit is made anew after losing to a concurrent commit, and the first pause between two.
COMMIT_ATTEMPTS = 30
COMMIT_BACKOFF_SECONDS = 0.02
#: How long a kept table's view of its log counts as fresh for a commit (not for reading a transaction version).
FRESH_SECONDS = 5.0


class DeltaRsWriter(TableWriter):
    """Writes through ``deltalake.write_deltalake``; one commit per call, carrying the app transaction.

    It keeps each table it opened and brings it up to date with ``update_incremental()`` (reading only the
    commits since) before every read of its transactions and every write, instead of loading the table's
    log anew twice per append: 57 -> 23 ms per idempotent append of a small batch here. Commits by anyone
    else (a ``streaming-dq maintain`` by hand, Spark's writer) are among those read; when the table cannot
    be brought up to date (its log was replaced or truncated under it) it is loaded anew, and so it is every
    :data:`RELOAD_EVERY` commits and after each checkpoint.

    Example:
        >>> writer = DeltaRsWriter()
        >>> writer.committed_version(DeltaTarget("/nonexistent/table"), "orders:q1") is None
        True
    """

    name = "delta-rs"

    def __init__(self) -> None:
        self._tables: dict[str, tuple[DeltaTable, int]] = {}
        self._refreshed: dict[str, float] = {}  # when each kept table last read its log (monotonic seconds)
        self._lock = threading.Lock()

    @staticmethod
    def _options(target: DeltaTarget) -> dict[str, str] | None:
        return delta_rs_options(target.storage_options)

    def _open(self, target: DeltaTarget, *, refresh: bool = True) -> DeltaTable | None:
        """The table at its latest version (None: no table there). Without ``refresh`` the kept one as it is,
        when it read its log within :data:`FRESH_SECONDS` (a log listing saved: what a commit needs, since a
        commit on a slightly stale version finds the next free one and checks for conflicts on its own)."""
        with self._lock:
            kept = self._tables.get(target.uri)
            now = time.monotonic()
            if (
                kept is not None
                and not refresh
                and now - self._refreshed.get(target.uri, 0.0) < FRESH_SECONDS
            ):
                return kept[0]
            if kept is not None:
                table, loaded = kept
                try:
                    table.update_incremental()
                    self._refreshed[target.uri] = now
                    if table.version() - loaded < RELOAD_EVERY:
                        return table
                except DeltaError as exc:  # not lost: loaded anew below, which raises if that fails
                    logger.info("reloading %s: %s: %s", target.uri, type(exc).__name__, exc)
                del self._tables[target.uri]
            _located(target)
            try:
                table = DeltaTable(target.uri, storage_options=self._options(target))
            except TableNotFoundError:
                return None
            self._tables[target.uri] = (table, table.version())
            self._refreshed[target.uri] = now
            return table

    def __getstate__(self) -> dict[str, object]:
        # Under Spark Connect the gate, with its writer, is pickled to the server's batch worker: the kept
        # tables and the lock stay behind, the copy opens its own.
        return {}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__()  # type: ignore[misc]

    def _forget(self, target: DeltaTarget) -> None:
        with self._lock:
            self._tables.pop(target.uri, None)

    def table_schema(self, target: DeltaTarget) -> pa.Schema | None:
        table = self._open(target)
        return None if table is None else pa.schema(table.schema().to_arrow())

    def create_table(self, target: DeltaTarget, schema: pa.Schema) -> None:
        _located(target)
        unsafe = unsafe_commit_problem(target.uri, target.storage_options, os.environ)
        if unsafe is not None:  # before the first commit: a second writer could silently lose this one's
            raise ConfigError(f"{target.uri}: {unsafe}", field_path="storage-options")
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

    def can_append_for_spark(self, target: DeltaTarget, *, s3_conditional: bool = False) -> bool:
        """Whether this writer may commit appends to a table Spark's writer also writes: the table exists on
        the local file system (where both commit by an atomic create of the log file) or on S3 where both
        commit by conditional write (``s3_conditional``: Spark's LogStore does, see
        :data:`~streaming_dq.tables.storage.S3_LOG_STORE_CLASS`; and so does delta-rs, with
        ``aws_conditional_put: etag``), and its protocol needs no feature outside :data:`APPENDABLE_FEATURES`."""
        if not is_local_uri(target.uri) and not (
            s3_conditional and commits_by_conditional_put(target.uri, target.storage_options, os.environ)
        ):
            return False
        table = self._open(target, refresh=False)  # the protocol: a change of it fails the commit anyway
        if table is None:
            return False
        protocol = table.protocol()
        if protocol.min_writer_version <= 2:
            return True
        features = protocol.writer_features
        return (
            protocol.min_writer_version == 7
            and features is not None
            and APPENDABLE_FEATURES.issuperset(features)
        )

    def append(
        self, target: DeltaTarget, data: pa.Table, txn: AppTransaction, *, merge_schema: bool = False
    ) -> None:
        def write(table: DeltaTable, properties: CommitProperties) -> None:
            write_deltalake(
                table,
                data,
                mode="append",
                schema_mode="merge" if merge_schema else None,
                commit_properties=properties,
            )

        self._commit_once(target, txn, data.schema, write)

    def _commit_once(
        self,
        target: DeltaTarget,
        txn: AppTransaction,
        schema: pa.Schema,
        write: Callable[[DeltaTable, CommitProperties], None],
    ) -> None:
        """Make the commit ``write`` makes, recording ``txn``, on exactly the version after the one whose
        transaction version was read: never rebased over a concurrent commit (delta-rs would rebase an append
        over a commit of the same ``(app id, version)`` read from an older snapshot, and both would land).

        A concurrent commit fails the attempt; the table is read again and the attempt made anew (its data
        files written again; the lost attempt's files are never referenced, and a full vacuum deletes them),
        unless the table now records ``txn``: then :class:`TransactionTakenError`.
        """
        table = self._open(target, refresh=False)  # a stale view only costs one failed attempt
        if table is None:  # never a write by URI: it would commit on whatever version it finds
            self.create_table(target, schema)
            table = self._require(target)
        for attempt in range(COMMIT_ATTEMPTS):
            done = table.transaction_version(txn.app_id)
            if done is not None and done >= txn.version:
                raise TransactionTakenError(target.uri, txn.app_id, txn.version, done)
            try:
                write(table, _commit_properties(txn))
                return
            except CommitFailedError as exc:  # a concurrent commit took the next version: read, then again
                logger.info(
                    "%s: commit of %s@%d lost to a concurrent commit (attempt %d): %s",
                    target.uri,
                    txn.app_id,
                    txn.version,
                    attempt + 1,
                    exc,
                )
            time.sleep(min(COMMIT_BACKOFF_SECONDS * 2**attempt, 1.0) * (0.5 + random.random()))
            table = self._require(target)
        raise TargetWriteError(
            target.uri,
            txn.version,
            f"{COMMIT_ATTEMPTS} attempts to commit lost to concurrent commits (is another job writing it?)",
        )

    # -- maintenance -------------------------------------------------------------------------------------

    def _require(self, target: DeltaTarget) -> DeltaTable:
        table = self._open(target)
        if table is None:
            raise TableNotFoundError(f"no Delta table at {target.uri}")
        return table

    def file_count(self, target: DeltaTarget) -> int:
        table = self._open(target)
        return 0 if table is None else len(table.file_uris())

    def compact(
        self, target: DeltaTarget, *, target_size: int | None = None, z_order: Sequence[str] = ()
    ) -> Compaction:
        table = self._require(target)
        if z_order:
            done = table.optimize.z_order(list(z_order), target_size=target_size)
        else:
            done = table.optimize.compact(target_size=target_size)
        return Compaction(int(done.get("numFilesRemoved", 0)), int(done.get("numFilesAdded", 0)))

    def checkpoint(self, target: DeltaTarget) -> bool:
        table = self._require(target)
        table.create_checkpoint()
        # Removes the log files before the newest checkpoint that is older than delta.logRetentionDuration
        # (30 days by default): every version younger than the retention stays readable.
        table.cleanup_metadata()
        self._forget(target)  # the next write loads the table from this checkpoint, not the removed files
        return True

    def vacuum(self, target: DeltaTarget, retention: timedelta, *, dry_run: bool) -> list[str]:
        # full: every unreferenced file older than the retention, as Spark's VACUUM does (also the orphans of a
        # write killed before its commit); the "lite" mode reads only the tombstones the log still carries, and
        # a checkpoint drops those older than delta.deletedFileRetentionDuration.
        hours = int(retention.total_seconds() // 3600)
        return list(self._require(target).vacuum(retention_hours=hours, dry_run=dry_run, full=True))

    def replace_rows(
        self, target: DeltaTarget, data: pa.Table, predicate: str, txn: AppTransaction | None = None
    ) -> None:
        if txn is None:  # a rewrite that records no batch (the metrics roll-up): delta-rs's own retries
            table = self._open(target)
            write_deltalake(
                target.uri if table is None else table,
                data,
                mode="overwrite",
                predicate=predicate,
                storage_options=self._options(target) if table is None else None,
            )
            return

        def write(table: DeltaTable, properties: CommitProperties) -> None:
            write_deltalake(table, data, mode="overwrite", predicate=predicate, commit_properties=properties)

        self._commit_once(target, txn, data.schema, write)

    def set_properties(self, target: DeltaTarget, properties: Mapping[str, str]) -> None:
        self._require(target).alter.set_table_properties(dict(properties))


def _located(target: DeltaTarget) -> None:
    """Refuse a catalog name nobody looked up (delta-rs writes by location)."""
    name = catalog_name(target.uri)
    if name is not None:
        raise InternalError(
            f"catalog table {name} was not looked up in the catalog before its first use "
            "(streaming_dq.config.catalog.resolve_catalog_tables)"
        )


def _commit_properties(txn: AppTransaction) -> CommitProperties:
    """The app transaction of a commit, and the same ids as commit info (for a reader of the log); no retry
    by delta-rs (:meth:`DeltaRsWriter._commit_once` decides what a lost race means)."""
    return CommitProperties(
        app_transactions=[Transaction(txn.app_id, txn.version)],
        max_commit_retries=0,
        custom_metadata={"streaming_dq.app_id": txn.app_id, "streaming_dq.batch_id": str(txn.version)},
    )
