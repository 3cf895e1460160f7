"""Delta targets and the one interface every writer back-end implements (every gate table goes through it).

Exactly-once rests on Delta's *application transactions*: every commit of batch ``n`` records
``(app_id, n)`` in the table's log, and a write is skipped when the table already records a version
``>= n`` for that app id. Spark's Delta writer applies that rule itself (``txnAppId``/``txnVersion``);
delta-rs does not, so :meth:`TableWriter.write_once` applies it for every back-end and reports whether it
wrote. The check is per table: a batch that died after committing the pass table and before the quarantine
table is replayed as "skip pass, write quarantine".

The check and the commit are one step against a second writer of the same app id (the same checkpoint
started twice): a commit is made on the very table version whose transaction version was read, or not at
all; one that lost the race raises :class:`~streaming_dq.exceptions.TransactionTakenError` and lands nothing.
No table ever holds one ``(app id, version)`` twice.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import ClassVar

import pyarrow as pa

from streaming_dq.exceptions import ConfigError, TargetWriteError
from streaming_dq.tables.storage import delta_rs_options, mask


@dataclass(frozen=True)
class DeltaTarget:
    """A Delta table the gate writes to.

    Attributes:
        uri: Path or URI of the table (``/data/orders_pass``, ``s3://bucket/orders_pass`` ...).
        storage_options: Object-store options (credentials, endpoint, commit mode ...) in delta-rs's spelling
            (:mod:`streaming_dq.tables.storage`); never shown by ``repr``.
        partition_by: Partition columns; only used when the gate creates the table.
        configuration: Delta table properties set when the gate creates the table. Never set
            ``delta.setTransactionRetentionDuration``: expiring the transaction ids would let very old
            replays duplicate rows.
        name: The table's name in the Spark session's catalog, when it is addressed by name (``uri`` is then
            its location, :mod:`streaming_dq.config.catalog`); Spark's writer creates and appends by name.

    Example:
        >>> DeltaTarget("/tmp/orders_pass").uri
        '/tmp/orders_pass'
    """

    uri: str
    storage_options: Mapping[str, str] = field(default_factory=dict, repr=False)
    partition_by: tuple[str, ...] = ()
    configuration: Mapping[str, str | None] = field(default_factory=dict)
    name: str | None = None

    @classmethod
    def of(cls, value: str | os.PathLike[str] | DeltaTarget) -> DeltaTarget:
        """A target from a path, or the target itself."""
        if isinstance(value, DeltaTarget):
            return value
        return cls(os.fspath(value))

    def __str__(self) -> str:
        return self.uri


def is_local_uri(uri: str) -> bool:
    """Whether ``uri`` names a table on this machine's file system (a path or a ``file:`` URI).

    Example:
        >>> is_local_uri("/data/orders"), is_local_uri("file:///data/orders"), is_local_uri("s3://lake/orders")
        (True, True, False)
    """
    scheme, sep, _ = uri.partition("://")
    return not sep or scheme.lower() == "file"


#: The Delta property that bounds how young a file a vacuum may delete, and Delta's default for it.
RETENTION_PROPERTY = "delta.deletedFileRetentionDuration"
DEFAULT_RETENTION = timedelta(days=7)
#: The Delta property that bounds how old a log file a checkpoint's clean-up may delete, and its default.
LOG_RETENTION_PROPERTY = "delta.logRetentionDuration"
DEFAULT_LOG_RETENTION = timedelta(days=30)

_INTERVAL = re.compile(r"^\s*(?:interval\s+)?(\d+)\s*(second|minute|hour|day|week)s?\s*$", re.I)
_UNIT = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}


def parse_interval(text: str, what: str = "interval") -> timedelta:
    """A Delta interval property (``interval 7 days``, ``168 hours``) as a timedelta.

    Example:
        >>> parse_interval("interval 7 days")
        datetime.timedelta(days=7)
    """
    m = _INTERVAL.match(text)
    if not m:
        raise ConfigError(f"{what}: cannot read {text!r} as an interval (e.g. 'interval 7 days')")
    return timedelta(seconds=int(m.group(1)) * _UNIT[m.group(2).lower()])


@dataclass(frozen=True)
class Compaction:
    """What one compaction did: files rewritten and written."""

    files_removed: int
    files_added: int


@dataclass(frozen=True)
class AppTransaction:
    """The idempotency key of one commit: the gate's app id and the batch id as version."""

    app_id: str
    version: int


class TableWriter(ABC):
    """A Delta back-end: reads a table's schema and txn versions, creates tables, appends Arrow data."""

    #: The back-end's name (``delta-rs``, ``spark``), for logs.
    name: ClassVar[str] = ""

    @abstractmethod
    def table_schema(self, target: DeltaTarget) -> pa.Schema | None:
        """The table's current schema, or None when no table exists at ``target``."""

    @abstractmethod
    def create_table(self, target: DeltaTarget, schema: pa.Schema) -> None:
        """Create an empty table with exactly ``schema`` (a no-op when it appeared meanwhile)."""

    @abstractmethod
    def committed_version(self, target: DeltaTarget, app_id: str) -> int | None:
        """The last batch id committed to ``target`` under ``app_id`` (None: never, or no table)."""

    @abstractmethod
    def append(
        self, target: DeltaTarget, data: pa.Table, txn: AppTransaction, *, merge_schema: bool = False
    ) -> None:
        """Append ``data`` in ONE commit that records ``txn``, even when ``data`` has no rows.

        Raises:
            TransactionTakenError: another writer committed ``txn`` (or a later version of its app id) to the
                table before this commit could; nothing of this one landed.
        """

    # -- maintenance (streaming_dq.maintenance calls these between batches, never during a write) -----------

    @abstractmethod
    def file_count(self, target: DeltaTarget) -> int:
        """The number of data files in the table's current version (0 when there is no table)."""

    @abstractmethod
    def compact(
        self, target: DeltaTarget, *, target_size: int | None = None, z_order: Sequence[str] = ()
    ) -> Compaction:
        """Rewrite small files into larger ones (Z-ordered by ``z_order`` when given) in a commit that changes
        no data (``dataChange = false``): readers and the application transactions see the same table."""

    @abstractmethod
    def checkpoint(self, target: DeltaTarget) -> bool:
        """Write a log checkpoint of the current version; False when the back-end writes them itself."""

    @abstractmethod
    def vacuum(self, target: DeltaTarget, retention: timedelta, *, dry_run: bool) -> list[str]:
        """Delete (or, with ``dry_run``, list) files no version younger than ``retention`` references.

        The caller checks ``retention`` against :meth:`safe_retention` first; back-ends refuse less too.
        """

    @abstractmethod
    def set_properties(self, target: DeltaTarget, properties: Mapping[str, str]) -> None:
        """Set Delta table properties (``delta.logRetentionDuration`` ...) in one commit."""

    @abstractmethod
    def replace_rows(
        self, target: DeltaTarget, data: pa.Table, predicate: str, txn: AppTransaction | None = None
    ) -> None:
        """Replace the rows matching the SQL ``predicate`` by ``data`` (every row of which matches it) in ONE
        commit (recording ``txn`` when given): readers see the old rows or the new ones, never both or
        neither. ``predicate`` is read by the back-end's SQL dialect: keep to columns, comparisons with
        string and number literals, ``IN`` lists, ``AND`` and ``OR``, which both read alike."""

    def table_properties(self, target: DeltaTarget) -> dict[str, str]:
        """The table's Delta properties (``delta.checkpointInterval`` ...); empty when there is no table."""
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        try:
            table = DeltaTable(target.uri, storage_options=delta_rs_options(target.storage_options))
        except TableNotFoundError:
            return {}
        return {k: v for k, v in table.metadata().configuration.items() if v is not None}

    def safe_retention(self, target: DeltaTarget) -> timedelta:
        """The shortest vacuum retention that keeps every promise: the table's
        ``delta.deletedFileRetentionDuration`` (Delta's default, 7 days, when unset)."""
        value = self.table_properties(target).get(RETENTION_PROPERTY)
        return DEFAULT_RETENTION if value is None else parse_interval(value, RETENTION_PROPERTY)

    def log_retention(self, target: DeltaTarget) -> timedelta:
        """The table's ``delta.logRetentionDuration`` (Delta's default, 30 days, when unset)."""
        value = self.table_properties(target).get(LOG_RETENTION_PROPERTY)
        return DEFAULT_LOG_RETENTION if value is None else parse_interval(value, LOG_RETENTION_PROPERTY)

    def read(self, target: DeltaTarget, *, predicate: str | None = None) -> pa.Table:
        """The table's rows (only those matching the SQL ``predicate``), read on the driver with delta-rs.

        Meant for the gate's own small tables (results, metrics); never for the pass table of a stream.
        """
        from streaming_dq.tables.reading import read_table

        return read_table(target.uri, storage_options=target.storage_options, predicate=predicate)

    def ensure_table(self, target: DeltaTarget, schema: pa.Schema) -> pa.Schema:
        """Create the table with ``schema`` when it does not exist; return its current schema."""
        current = self.table_schema(target)
        if current is not None:
            return current
        self.create_table(target, schema)
        return self.table_schema(target) or schema

    def is_committed(self, target: DeltaTarget, txn: AppTransaction) -> bool:
        """Whether ``target`` already holds this batch (or a later one) for this app id."""
        done = self.committed_version(target, txn.app_id)
        return done is not None and done >= txn.version

    def write_once(
        self, target: DeltaTarget, data: pa.Table, txn: AppTransaction, *, merge_schema: bool = False
    ) -> bool:
        """Append unless ``target`` already committed ``txn``; return whether a commit was made (a race lost to
        another writer of ``txn`` raises :class:`~streaming_dq.exceptions.TransactionTakenError`)."""
        if self.is_committed(target, txn):
            return False
        self.append(target, data, txn, merge_schema=merge_schema)
        return True


@contextmanager
def writing(target: DeltaTarget, batch_id: int | None) -> Iterator[None]:
    """Turn any back-end error while touching ``target`` into a :class:`TargetWriteError` (the batch fails and
    Spark replays it)."""
    try:
        yield
    except TargetWriteError:
        raise
    except Exception as exc:
        reason = mask(f"{type(exc).__name__}: {exc}", target.storage_options)  # a client may echo an option
        raise TargetWriteError(target.uri, batch_id, reason) from exc
