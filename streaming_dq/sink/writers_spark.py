"""The cluster writer: Spark's own Delta writer (needs the delta-spark JARs and its session extension).

Every append carries ``txnAppId``/``txnVersion``, so Delta itself skips a batch the table already holds;
the gate still asks first (reading the table's log with delta-rs, which Spark-written tables of protocol
(1,2) allow) so that it knows whether the batch was a replay and must not be counted again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from streaming_dq.sink.schemas import arrow_schema_of
from streaming_dq.sink.targets import AppTransaction, DeltaTarget, TableWriter
from streaming_dq.sink.writers_deltars import DeltaRsWriter

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"


def has_delta_extension(spark: SparkSession) -> bool:
    """Whether the session loads Delta's SQL extension (``spark.sql.extensions``)."""
    return DELTA_EXTENSION in (spark.conf.get("spark.sql.extensions", "") or "")


class SparkDeltaWriter(TableWriter):
    """Writes Arrow tables through ``DataFrame.write.format("delta")`` with ``txnAppId``/``txnVersion``.

    Args:
        spark: The session that writes (in ``foreachBatch``, the batch DataFrame's session).

    Example:
        >>> writer = SparkDeltaWriter(spark)  # doctest: +SKIP
    """

    name = "spark"

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self._log_reader = DeltaRsWriter()

    def table_schema(self, target: DeltaTarget) -> pa.Schema | None:
        from pyspark.errors import AnalysisException

        try:
            schema = self.spark.read.format("delta").options(**target.storage_options).load(target.uri).schema
        except AnalysisException:
            return None
        return arrow_schema_of(schema)

    def create_table(self, target: DeltaTarget, schema: pa.Schema) -> None:
        writer = (
            self.spark.createDataFrame(schema.empty_table())
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
        (
            self.spark.createDataFrame(data)
            .write.format("delta")
            .mode("append")
            .options(**target.storage_options)
            .option("txnAppId", txn.app_id)
            .option("txnVersion", str(txn.version))
            .option("mergeSchema", "true" if merge_schema else "false")
            .save(target.uri)
        )
