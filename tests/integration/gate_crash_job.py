"""The streaming job the crash and cluster tests run: a landing folder through a gate into Delta tables.

Run as its own process (``python gate_crash_job.py LANDING OUT --trigger processing-time|available-now``):
one SparkSession (``--master``: local[2] or a standalone cluster's URL), one file per micro-batch, the gate
writing ``OUT/pass``, ``OUT/quarantine`` and ``OUT/results`` with the checkpoint in ``OUT/checkpoint``, with
delta-rs or Spark's Delta writer (``--writer``) and either router (``--routing``). Each committed batch prints
one line; ``--conf key=value`` sets Spark conf (e.g. a small ``spark.driver.maxResultSize``);
``--maintain-every N`` makes the gate maintain its tables every N batches (its log lines are printed);
``--tables URI`` puts the tables there instead (``s3://lake/run``), with the storage options in the JSON of the
environment variable ``CRASH_JOB_STORAGE_OPTIONS`` (so the keys never reach a command line), and
``--checkpoint URI`` the checkpoint (on the store with Spark's writer, whose S3A settings the gate puts in the
session when it creates its tables).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for the shared session builder

from conftest import build_spark_session

from streaming_dq.config.check_set import CheckSet
from streaming_dq.core.outcome import BatchOutcome
from streaming_dq.maintenance import MaintenancePolicy
from streaming_dq.sink import DeltaTarget, QualityGate, with_corrupt_record_column
from streaming_dq.tables.storage import hadoop_options

SCHEMA = "id BIGINT, amount DOUBLE, ts TIMESTAMP"
CHECKS = [
    {"check": "null-check", "check-id": "id-present", "columns": ["id"]},
    {"check": "null-check", "check-id": "amount-present", "columns": ["amount"]},
]
TRIGGERS = {"processing-time": {"processingTime": "0.5 seconds"}, "available-now": {"availableNow": True}}


def report(outcome: BatchOutcome) -> None:
    print(
        f"batch {outcome.batch_id} {outcome.status} in={outcome.rows_in} "
        f"passed={outcome.rows_passed} quarantined={outcome.rows_quarantined}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("landing")
    parser.add_argument("out")
    parser.add_argument("--trigger", choices=sorted(TRIGGERS), default="processing-time")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--writer", choices=["delta-rs", "spark"], default="delta-rs")
    parser.add_argument("--routing", choices=["auto", "driver", "distributed"], default="auto")
    parser.add_argument("--driver-commit-rows", type=int, default=0, help="0: every write through Spark")
    parser.add_argument("--format", choices=["json", "parquet"], default="json")
    parser.add_argument("--conf", action="append", default=[], help="key=value")
    parser.add_argument("--maintain-every", type=int, default=None, help="maintenance every N batches")
    parser.add_argument("--tables", default=None, help="where the tables go (default OUT)")
    parser.add_argument("--checkpoint", default=None, help="the stream's checkpoint (default OUT/checkpoint)")
    parser.add_argument("--keys", action="store_true", help="ids unique across batches (a keys table, #44)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stdout, level=logging.WARNING, format="%(name)s: %(message)s")
    logging.getLogger("streaming_dq.maintenance").setLevel(logging.INFO)  # its lines mark a run's progress
    out = Path(args.out)
    cluster = (
        {"spark.cores.max": "2", "spark.executor.memory": "1g"} if args.master.startswith("spark:") else {}
    )
    spark = build_spark_session(args.master, {**cluster, **dict(c.split("=", 1) for c in args.conf)})
    spark.sparkContext.setLogLevel("ERROR")
    tables = (args.tables or str(out)).rstrip("/")
    options = json.loads(os.environ.get("CRASH_JOB_STORAGE_OPTIONS", "{}"))
    once = {"check": "unique-key-check", "check-id": "id-once", "columns": ["id"], "horizon": "1 day"}
    gate = QualityGate(
        "crash-test",
        CheckSet.from_dicts([*CHECKS, once] if args.keys else CHECKS),
        keys_table=DeltaTarget(f"{tables}/keys", options) if args.keys else None,
        event_time="ts" if args.keys else None,
        pass_table=DeltaTarget(f"{tables}/pass", options),
        quarantine_table=DeltaTarget(f"{tables}/quarantine", options),
        results_table=DeltaTarget(f"{tables}/results", options),
        writer=args.writer,
        routing=args.routing,
        driver_commit_rows=args.driver_commit_rows,
        on_batch=report,
        maintenance=MaintenancePolicy(every_batches=args.maintain_every) if args.maintain_every else None,
    )
    schema = with_corrupt_record_column(SCHEMA) if args.format == "json" else SCHEMA
    source = (
        spark.readStream.format(args.format)
        .schema(schema)
        .option("maxFilesPerTrigger", "1")
        .load(args.landing)
    )
    checkpoint = args.checkpoint or str(out / "checkpoint")
    # what a user of the Python API does for a checkpoint on the store: S3A's settings in the session's Hadoop
    # configuration (a new session would take them as spark.hadoop.* conf; this one may be the test's)
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]
    for key, value in hadoop_options(checkpoint, options).items():
        hadoop.set(key, value)
    query = gate.start(source, checkpoint_location=checkpoint, trigger=TRIGGERS[args.trigger])
    print(f"started query {query.id}", flush=True)
    query.awaitTermination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
