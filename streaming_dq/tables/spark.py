"""The cluster writer: Spark's own Delta writer (the delta-spark JARs and its session extension).

Every append carries ``txnAppId``/``txnVersion``, so Delta itself skips a batch the table already holds.
The gate still asks first, so that it knows whether a batch was a replay and must not be counted again: the
table's log (schema and application transactions) is read with delta-rs, which needs no Spark job (Spark's
reader would replay the log in jobs of its own on every batch) and reads Spark-written tables of the
protocols the gate creates. The rows themselves are written by the executors through
:meth:`SparkDeltaWriter.append_frame`.

Small writes are committed by delta-rs from the driver instead: a commit through Spark's writer costs four
Spark jobs (the write and three that rebuild the table's snapshot), 1-2 s on local[2] however few the rows,
against ~25 ms for delta-rs. That covers the gate's own tables (results, metrics: a few rows per batch) and
the pass and quarantine rows of a batch of at most ``driver_commit_rows`` rows. Both writers record the same
application transaction in the log, so exactly-once does not depend on which one wrote a batch. delta-rs
writes only where it commits as safely as Spark does and only tables whose protocol it fully supports
(:meth:`~streaming_dq.tables.deltars.DeltaRsWriter.can_append_for_spark`); any other table keeps Spark's writer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

import pyarrow as pa

from streaming_dq.compat.spark import from_arrow, parse_ddl, to_arrow
from streaming_dq.exceptions import ConfigError, InternalError, TransactionTakenError
from streaming_dq.tables.deltars import DeltaRsWriter
from streaming_dq.tables.storage import S3_LOG_STORE_CLASS, hadoop_options, spark_uri
from streaming_dq.tables.targets import AppTransaction, Compaction, DeltaTarget, TableWriter

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameWriter, SparkSession

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"

#: Writes of at most this many rows are committed by delta-rs from the driver (see the module); 0: never.
DRIVER_COMMIT_ROWS = 10_000


def has_delta_extension(spark: SparkSession) -> bool:
    """Whether the session loads Delta's SQL extension (``spark.sql.extensions``)."""
    extensions = spark.conf.get("spark.sql.extensions", "") or ""
    return DELTA_EXTENSION in [e.strip() for e in extensions.split(",")]


def read_with_delta_rs(
    spark: SparkSession, uri: str, storage_options: Mapping[str, str], *, schema: str | None = None
) -> DataFrame:
    """A Delta table read by delta-rs into a Spark DataFrame (a session without the Delta extension); with
    ``schema`` (DDL) its columns cast to it, in its order."""
    from pyspark.sql.types import StructType

    from streaming_dq.tables.reading import read_table

    df = from_arrow(spark, read_table(uri, storage_options=storage_options))
    if not schema:
        return df
    wanted = parse_ddl(schema)
    assert isinstance(wanted, StructType)
    return df.select(*[df[f.name].cast(f.dataType).alias(f.name) for f in wanted.fields])


class SparkDeltaWriter(TableWriter):
    """Writes through ``DataFrame.write.format("delta")`` with ``txnAppId``/``txnVersion``.

    Args:
        spark: The session that writes (in ``foreachBatch``, the batch DataFrame's session).
        driver_commit_rows: Writes of at most this many rows are committed by delta-rs from the driver where
            it may write the table (0: every write through Spark).

    Example:
        >>> writer = SparkDeltaWriter(spark)  # doctest: +SKIP
        >>> writer.append_frame(DeltaTarget("/data/pass"), batch_df, AppTransaction("g:q", 7))  # doctest: +SKIP
    """

    name = "spark"

    def __init__(self, spark: SparkSession, *, driver_commit_rows: int = DRIVER_COMMIT_ROWS) -> None:
        self.spark = spark
        self.driver_commit_rows = driver_commit_rows
        self._driver = DeltaRsWriter()  # reads every table's log; commits the small writes
        self._session_hadoop: dict[str, str] = {}  # storage settings already put in the session
        self._s3_log_store: bool | None = None

    def table_schema(self, target: DeltaTarget) -> pa.Schema | None:
        return self._driver.table_schema(target)

    def commits_on_driver(self, target: DeltaTarget, rows: int) -> bool:
        """Whether a write of ``rows`` rows to ``target`` is committed by delta-rs from the driver."""
        return (
            self.driver_commit_rows > 0
            and rows <= self.driver_commit_rows
            and self._driver.can_append_for_spark(target, s3_conditional=self._s3_conditional())
        )

    def _s3_conditional(self) -> bool:
        """Whether the session's Delta commits to S3 by conditional write, as delta-rs can (asked once)."""
        if self._s3_log_store is None:
            chosen = self.spark.conf.get("spark.delta.logStore.s3a.impl", None)
            self._s3_log_store = chosen == S3_LOG_STORE_CLASS
        return self._s3_log_store

    def _frame(self, data: pa.Table) -> DataFrame:
        """A small driver-built table as a DataFrame, with its schema given (Connect cannot infer an empty one)."""
        return from_arrow(self.spark, data)

    def create_table(self, target: DeltaTarget, schema: pa.Schema) -> None:
        writer = (
            self._frame(schema.empty_table())
            .write.format("delta")
            .mode("ignore")
            .options(**self._hadoop(target))
        )
        if target.partition_by:
            writer = writer.partitionBy(*target.partition_by)
        if target.name is not None:
            self._create_by_name(target, writer)
        else:
            writer.save(spark_uri(target.uri))
        props = ", ".join(f"'{k}' = '{v}'" for k, v in target.configuration.items() if v is not None)
        if props:
            self.spark.sql(f"ALTER TABLE {self._table(target)} SET TBLPROPERTIES ({props})")

    def _create_by_name(self, target: DeltaTarget, writer: DataFrameWriter) -> None:
        """Create catalog table ``target.name`` (a managed table), unless it exists, and check that the catalog
        put it where the gate reads its log (``target.uri``, :func:`~streaming_dq.tables.catalog.managed_location`)."""
        from streaming_dq.tables.catalog import table_location

        assert target.name is not None
        writer.saveAsTable(target.name)
        where = table_location(self.spark, target.name)
        if where is None or where.rstrip("/") != target.uri.rstrip("/"):
            raise ConfigError(
                f"the catalog created table {target.name} at {where}, not at {target.uri} where the gate reads "
                "its log: create the table yourself (CREATE TABLE ... USING DELTA) and run again"
            )

    def committed_version(self, target: DeltaTarget, app_id: str) -> int | None:
        return self._driver.committed_version(target, app_id)

    def append(
        self, target: DeltaTarget, data: pa.Table, txn: AppTransaction, *, merge_schema: bool = False
    ) -> None:
        if self.commits_on_driver(target, data.num_rows):
            self._driver.append(target, data, txn, merge_schema=merge_schema)
        else:
            self.append_frame(target, self._frame(data), txn, merge_schema=merge_schema)

    def append_frame(
        self,
        target: DeltaTarget,
        frame: DataFrame,
        txn: AppTransaction,
        *,
        merge_schema: bool = False,
        rows: int | None = None,
    ) -> None:
        """Append a DataFrame in one commit recording ``txn``: the executors write the files, or, when the
        caller knows the frame has ``rows`` rows and :meth:`commits_on_driver` says so, delta-rs from the
        driver (the rows collected as Arrow).

        Spark's writer skips the write (no commit, no error) when the table already records ``txn.version``
        or a later one for ``txn.app_id`` as its transaction starts, and fails it when another writer commits
        one meanwhile (:class:`TransactionTakenError`); delta-rs does not skip, the gate asks first. An empty
        frame still commits and records the transaction.
        """
        if rows is not None and self.commits_on_driver(target, rows):
            data = to_arrow(frame)
            if data.num_rows != rows:
                raise InternalError(f"a write to {target.uri} expected {rows} rows and got {data.num_rows}")
            self._driver.append(target, data, txn, merge_schema=merge_schema)
            return
        writer = (
            frame.write.format("delta")
            .mode("append")
            .options(**self._hadoop(target))
            .option("txnAppId", txn.app_id)
            .option("txnVersion", str(txn.version))
            .option("mergeSchema", "true" if merge_schema else "false")
        )
        with self._refusing_taken(target, txn):
            if target.name is not None:  # through the catalog (Delta applies the txn options there too)
                writer.saveAsTable(target.name)
            else:
                writer.save(spark_uri(target.uri))

    # -- maintenance: Delta's own SQL commands, so they run on the executors (and under Spark Connect) ----

    def file_count(self, target: DeltaTarget) -> int:
        return self._driver.file_count(target)

    def read_frame(self, target: DeltaTarget) -> DataFrame:
        """The table's rows as a DataFrame the executors read (with the target's storage settings)."""
        if target.name is not None:
            return self.spark.read.options(**self._hadoop(target)).table(target.name)
        return self.spark.read.format("delta").options(**self._hadoop(target)).load(spark_uri(target.uri))

    def _table(self, target: DeltaTarget) -> str:
        """The table in Spark SQL (its storage settings put in the session first): its catalog name, or
        ``delta.`location```."""
        self._hadoop(target)
        if target.name is not None:
            return target.name
        return "delta.`" + spark_uri(target.uri).replace("`", "``") + "`"

    def _hadoop(self, target: DeltaTarget) -> dict[str, str]:
        """The target's storage options as Hadoop settings: set in the session once (SQL statements and Delta's
        log reads take them from there; Spark redacts secret-looking keys in its UI) and returned for a
        DataFrame writer's options."""
        options = hadoop_options(target.uri, target.storage_options)
        for key, value in options.items():
            if self._session_hadoop.get(key) != value:
                self.spark.conf.set(key, value)
                self._session_hadoop[key] = value
        return options

    @contextmanager
    def _conf(self, key: str, value: str | None) -> Iterator[None]:
        """Set one session conf for the duration of a command (None: leave it), then restore it."""
        before = self.spark.conf.get(key, None)
        if value is not None:
            self.spark.conf.set(key, value)
        try:
            yield
        finally:
            if value is not None:
                if before is None:
                    self.spark.conf.unset(key)
                else:
                    self.spark.conf.set(key, before)

    def _listing_parallelism(self) -> str:
        """Tasks for VACUUM's file listing: Delta takes ``parallelPartitionDiscovery.parallelism`` (10,000 by
        default) as the task count, which cost 198 s for a 4-file table on local[2] here (3 s with 2)."""
        from streaming_dq.compat.spark import is_remote

        cores = 8 if is_remote() else self.spark.sparkContext.defaultParallelism
        return str(max(2, min(cores, 64)))

    def compact(
        self, target: DeltaTarget, *, target_size: int | None = None, z_order: Sequence[str] = ()
    ) -> Compaction:
        sql = f"OPTIMIZE {self._table(target)}"
        if z_order:
            sql += " ZORDER BY (" + ", ".join(f"`{c}`" for c in z_order) + ")"
        size = None if target_size is None else str(target_size)
        with self._conf("spark.databricks.delta.optimize.maxFileSize", size):
            row = self.spark.sql(sql).collect()[0]
        metrics = row["metrics"]
        return Compaction(int(metrics["numFilesRemoved"]), int(metrics["numFilesAdded"]))

    def checkpoint(self, target: DeltaTarget) -> bool:
        """Spark's Delta writer checkpoints the log itself every ``delta.checkpointInterval`` commits (10)."""
        return False

    def vacuum(self, target: DeltaTarget, retention: timedelta, *, dry_run: bool) -> list[str]:
        hours = int(retention.total_seconds() // 3600)
        with self._conf(
            "spark.sql.sources.parallelPartitionDiscovery.parallelism", self._listing_parallelism()
        ):
            listed = self.spark.sql(f"VACUUM {self._table(target)} RETAIN {hours} HOURS DRY RUN").collect()
            files = [str(r[0]) for r in listed]
            if not dry_run and files:
                self.spark.sql(f"VACUUM {self._table(target)} RETAIN {hours} HOURS").collect()
        return files

    def set_properties(self, target: DeltaTarget, properties: Mapping[str, str]) -> None:
        props = ", ".join(f"'{k}' = '{v}'" for k, v in properties.items())
        self.spark.sql(f"ALTER TABLE {self._table(target)} SET TBLPROPERTIES ({props})")

    def replace_rows(
        self, target: DeltaTarget, data: pa.Table, predicate: str, txn: AppTransaction | None = None
    ) -> None:
        self.replace_frame(target, self._frame(data), predicate, txn)

    def replace_frame(
        self, target: DeltaTarget, frame: DataFrame, predicate: str, txn: AppTransaction | None = None
    ) -> None:
        """Replace the rows matching ``predicate`` (Spark SQL) by ``frame``'s in one commit by the executors
        (``replaceWhere``; Delta refuses a row of ``frame`` that does not match), recording ``txn``: Delta
        skips the write when the table already records it."""
        writer = (
            frame.write.format("delta")
            .mode("overwrite")
            .options(**self._hadoop(target))
            .option("replaceWhere", predicate)
        )
        if txn is None:
            writer.save(spark_uri(target.uri))
            return
        writer = writer.option("txnAppId", txn.app_id).option("txnVersion", str(txn.version))
        with self._refusing_taken(target, txn):
            writer.save(spark_uri(target.uri))

    @contextmanager
    def _refusing_taken(self, target: DeltaTarget, txn: AppTransaction) -> Iterator[None]:
        """A Spark commit that failed because another writer committed ``txn`` first (Delta's conflict check
        raises ``ConcurrentTransactionException`` when a winning commit records the app id this one read) as
        :class:`TransactionTakenError`; any other failure as it is."""
        try:
            yield
        except Exception as exc:
            done = self._driver.committed_version(target, txn.app_id)
            if done is not None and done >= txn.version:
                raise TransactionTakenError(target.uri, txn.app_id, txn.version, done) from exc
            raise
