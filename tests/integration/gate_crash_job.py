"""The streaming job the crash test kills: a landing folder through a gate into delta-rs tables.

Run as its own process (``python gate_crash_job.py LANDING OUT --trigger processing-time|available-now``):
one SparkSession, one file per micro-batch, the gate writing ``OUT/pass``, ``OUT/quarantine`` and
``OUT/results`` with the checkpoint in ``OUT/checkpoint``. Each committed batch prints one line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for the shared session builder

from conftest import build_spark_session

from streaming_dq.config.check_set import CheckSet
from streaming_dq.core.outcome import BatchOutcome
from streaming_dq.sink import QualityGate, with_corrupt_record_column

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
    args = parser.parse_args(argv)
    out = Path(args.out)
    spark = build_spark_session()
    spark.sparkContext.setLogLevel("ERROR")
    gate = QualityGate(
        "crash-test",
        CheckSet.from_dicts(CHECKS),
        pass_table=str(out / "pass"),
        quarantine_table=str(out / "quarantine"),
        results_table=str(out / "results"),
        writer="delta-rs",
        on_batch=report,
    )
    source = (
        spark.readStream.format("json")
        .schema(with_corrupt_record_column(SCHEMA))
        .option("maxFilesPerTrigger", "1")
        .load(args.landing)
    )
    query = gate.start(source, checkpoint_location=str(out / "checkpoint"), trigger=TRIGGERS[args.trigger])
    print(f"started query {query.id}", flush=True)
    query.awaitTermination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
