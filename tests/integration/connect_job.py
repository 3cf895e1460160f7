"""A Spark Connect client that streams files through a gate (run by tests/integration/test_connect.py).

Usage: connect_job.py URL BASE ROUTING STEP...; each STEP is ``stream:K`` (land file K, stream it on
checkpoint K) or ``replay:K`` (forget checkpoint K's last commit, so Spark replays its last batch, then land
one more file and stream again). Prints one JSON line: the rows in the pass and quarantine tables and the
results table's batch rows per app id.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from pyspark.sql import SparkSession

from streaming_dq import CheckSet, QualityGate
from streaming_dq.tables import read_table

CHECKS = [
    {"check": "null-check", "check-id": "id-present", "columns": ["id"]},
    {"check": "row-count-min-check", "check-id": "volume", "min-count": 1, "severity": "warning"},
]


def land(base: Path, k: int, n: int = 10) -> None:
    folder = base / f"landing{k}"
    folder.mkdir(parents=True, exist_ok=True)
    index = len(list(folder.glob("*.json")))
    lines = [json.dumps({"id": k * 1000 + index * 100 + i if i % 4 else None}) for i in range(n)]
    (folder / f"part-{index}.json").write_text("\n".join(lines) + "\n", encoding="utf-8")


def stream(spark: SparkSession, base: Path, routing: str, k: int) -> None:
    gate = QualityGate(
        "orders",
        CheckSet.from_dicts(CHECKS),
        pass_table=str(base / "pass"),
        quarantine_table=str(base / "quarantine"),
        results_table=str(base / "results"),
        writer="spark" if routing == "distributed" else "delta-rs",
        routing=routing,
        driver_commit_rows=0,  # the Spark router's own path; small batches on the driver are the other's
    )
    source = (
        spark.readStream.schema("id BIGINT").option("maxFilesPerTrigger", "1").json(str(base / f"landing{k}"))
    )
    query = gate.start(source, checkpoint_location=str(base / f"chk{k}"), trigger={"availableNow": True})
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))


def main() -> None:
    url, base, routing, *steps = sys.argv[1:]
    root = Path(base)
    spark = SparkSession.builder.remote(url).getOrCreate()
    replayed = []
    for step in steps:
        action, k = step.split(":")
        if action == "replay":
            commits = sorted((root / f"chk{k}" / "commits").glob("[0-9]*"), key=lambda p: int(p.name))
            commits[-1].unlink()  # the batch ran and wrote its tables, but Spark will run it again
            for crc in (root / f"chk{k}" / "commits").glob(f".{commits[-1].name}.crc"):
                crc.unlink()
            stream(spark, root, routing, int(k))
            replayed.append(commits[-1].exists())  # Spark ran the batch again and committed it anew
            continue
        land(root, int(k))
        stream(spark, root, routing, int(k))
    results = read_table(str(root / "results")).to_pylist()
    batches = Counter(r["app_id"] for r in results if r["kind"] == "batch")
    print(json.dumps({
        "pass": read_table(str(root / "pass")).num_rows,
        "quarantine": read_table(str(root / "quarantine")).num_rows,
        "batches_per_app": sorted(batches.values()),
        "apps": len(batches),
        "replayed": replayed,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
