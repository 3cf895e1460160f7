"""The catalog side of ``test_catalog_tables.py``, in a process of its own (Spark's embedded Derby metastore
admits one process at a time): a session built from a gate config's ``spark:`` section, as the gate's is.

    python catalog_job.py setup CONFIG     # schema sales, the source table sales.orders_raw, the reference
    python catalog_job.py read CONFIG      # every sales.* table read back by name: JSON on stdout
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from streaming_dq.config.loader import load_gate_config
from streaming_dq.runtime.session import build_spark_session

#: Source rows: (id, customer, amount); amount None and customer "c9" (unknown) fail their checks.
ROWS = [(i, "c9" if i % 5 == 0 else f"c{i % 3}", None if i % 7 == 0 else float(i)) for i in range(1, 41)]


def main(argv: list[str]) -> int:
    command, config_path = argv
    config = load_gate_config(Path(config_path))
    spark, _ = build_spark_session(config.spark, app_name="catalog-test", writer="spark", delta=True)
    try:
        if command == "setup":
            spark.sql("CREATE SCHEMA IF NOT EXISTS sales")
            frame = spark.createDataFrame(
                [(i, c, a, "2025-03-01 00:00:00") for i, c, a in ROWS],
                "id INT, customer_id STRING, amount DOUBLE, ts STRING",
            ).selectExpr("id", "customer_id", "amount", "CAST(ts AS TIMESTAMP) AS ts")
            frame.write.format("delta").saveAsTable("sales.orders_raw")
            spark.createDataFrame([("c0",), ("c1",), ("c2",)], "customer_id STRING").write.format(
                "delta"
            ).saveAsTable("sales.customers")
            return 0
        tables = [r.tableName for r in spark.sql("SHOW TABLES IN sales").collect()]
        out = {}
        for name in tables:
            detail = spark.sql(f"DESCRIBE DETAIL sales.{name}").collect()[0]
            frame = spark.read.table(f"sales.{name}")
            ids = sorted(r[0] for r in frame.select("id").collect()) if "id" in frame.columns else None
            out[name] = {"location": detail["location"], "rows": frame.count(), "ids": ids}
        print(json.dumps(out))
        return 0
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
