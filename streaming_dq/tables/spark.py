"""The cluster writer: Spark's own Delta writer (the delta-spark JARs and its session extension).

Every append carries ``txnAppId``/``txnVersion``, so Delta itself skips a batch the table already holds.
The gate still asks first, so that it knows whether a batch was a replay and must not be counted again: the
table's log (schema and application transactions) is read with delta-rs, which needs no Spark job (Spark's
reader would replay the log in jobs of its own on every batch) and reads Spark-written tables of the
protocols the gate creates. The rows themselves are written by the executors through
:meth:`SparkDeltaWriter.append_frame`; :meth:`SparkDeltaWriter.append` is for the small driver-built tables
(results, metrics).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

import pyarrow as pa

from streaming_dq.tables.deltars import DeltaRsWriter
from streaming_dq.tables.targets import AppTransaction, Compaction, DeltaTarget, TableWriter

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"


def has_delta_extension(spark: SparkSession) -> bool:
    """Whether the session loads Delta's SQL extension (``spark.sql.extensions``)."""
    extensions = spark.conf.get("spark.sql.extensions", "") or ""
    return DELTA_EXTENSION in [e.strip() for e in extensions.split(",")]


class SparkDeltaWriter(TableWriter):
    """Writes through ``DataFrame.write.format("delta")`` with ``txnAppId``/``txnVersion``.

    Args:
        spark: The session that writes (in ``foreachBatch``, the batch DataFrame's session).

    Example:
        >>> writer = SparkDeltaWriter(spark)  # doctest: +SKIP
        >>> writer.append_frame(DeltaTarget("/data/pass"), batch_df, AppTransaction("g:q", 7))  # doctest: +SKIP
    """

    name = "spark"

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self._log_reader = DeltaRsWriter()

    def table_schema(self, target: DeltaTarget) -> pa.Schema | None:
        return self._log_reader.table_schema(target)

    def _frame(self, data: pa.Table) -> DataFrame:
        """A small driver-built table as a DataFrame, with its schema given (Connect cannot infer an empty one)."""
        from pyspark.sql.pandas.types import from_arrow_schema

        return self.spark.createDataFrame(data, schema=from_arrow_schema(data.schema))

    def create_table(self, target: DeltaTarget, schema: pa.Schema) -> None:
        writer = (
            self._frame(schema.empty_table())
            .write.format("delta")
            .mode("ignore")
            .options(**target.storage_options)
        )
        if target.partition_by:
            writer = writer.partitionBy(*target.partition_by)
        writer.save(target.uri)
        props = ", ".join(f"'{k}' = '{v}'" for k, v in target.configuration.items() if v is not None)
        if props:
            self.spark.sql(f"ALTER TABLE delta.`{target.uri}` SET TBLPROPERTIES ({props})")

    def committed_version(self, target: DeltaTarget, app_id: str) -> int | None:
        return self._log_reader.committed_version(target, app_id)

    def append(
        self, target: DeltaTarget, data: pa.Table, txn: AppTransaction, *, merge_schema: bool = False
    ) -> None:
        self.append_frame(target, self._frame(data), txn, merge_schema=merge_schema)

    def append_frame(
        self, target: DeltaTarget, frame: DataFrame, txn: AppTransaction, *, merge_schema: bool = False
    ) -> None:
        """Append a DataFrame in one commit recording ``txn``: the executors write the files.

        Delta skips the write (no commit, no error) when the table already records ``txn.version`` or a
        later one for ``txn.app_id``; an empty DataFrame still commits and records the transaction.
        """
        (
            frame.write.format("delta")
            .mode("append")
            .options(**target.storage_options)
            .option("txnAppId", txn.app_id)
            .option("txnVersion", str(txn.version))
            .option("mergeSchema", "true" if merge_schema else "false")
            .save(target.uri)
        )

    # -- maintenance: Delta's own SQL commands, so they run on the executors (and under Spark Connect) ----

    def file_count(self, target: DeltaTarget) -> int:
        return self._log_reader.file_count(target)

    def _table(self, target: DeltaTarget) -> str:
        return "delta.`" + target.uri.replace("`", "``") + "`"

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
        from pyspark.sql.utils import is_remote

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

    def replace_rows(self, target: DeltaTarget, data: pa.Table, predicate: str) -> None:
        (
            self._frame(data)
            .write.format("delta")
            .mode("overwrite")
            .options(**target.storage_options)
            .option("replaceWhere", predicate)
            .save(target.uri)
        )
