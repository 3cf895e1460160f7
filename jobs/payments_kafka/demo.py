"""The Kafka job end to end on this machine: ``make demo-kafka`` (or ``python jobs/payments_kafka/demo.py``).

Starts a local Apache Kafka broker (KRaft, from the JARs ``make jars`` fetched; see
``streaming_dq.devtools.local_kafka``), produces 2,000 payment events with faults (``generate.py``), runs
``streaming-dq run payments.yaml`` against it with ``trigger: available-now``, and reads the tables back:
every message is in the pass or the quarantine table once, and each undecodable one is shown with the
topic, partition and offset to find it by. The broker and the tables live in a temporary folder
(``--keep DIR`` keeps them in DIR instead). Exit 0 when the counts add up, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import produce  # noqa: E402

from streaming_dq.devtools.local_kafka import local_broker  # noqa: E402
from streaming_dq.tables import read_table  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--keep", type=Path, help="keep the broker's data and the tables here")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="streaming-dq-kafka-demo-"))
    work.mkdir(parents=True, exist_ok=True)
    job = work / "payments_kafka"
    job.mkdir(exist_ok=True)
    shutil.copy(HERE / "payments.yaml", job / "payments.yaml")
    try:
        print(f"starting a Kafka broker (KRaft) under {work / 'broker'} ...", flush=True)
        with local_broker(work / "broker") as bootstrap:
            summary = produce(bootstrap, "payments", args.messages)
            print(f"produced {summary.messages} messages to 'payments' at {bootstrap} "
                  f"({summary.undecodable} undecodable; faults: {summary.faults})", flush=True)  # fmt: skip
            env = {**os.environ, "KAFKA_BOOTSTRAP": bootstrap, "KAFKA_TOPIC": "payments"}
            cli = Path(sys.executable).with_name("streaming-dq")
            done = subprocess.run([str(cli), "run", str(job / "payments.yaml")], env=env, check=False)
            if done.returncode not in (0, 1):
                return done.returncode
        tables = job / "data" / "tables"
        passed = read_table(str(tables / "payments_pass"))
        quarantined = read_table(str(tables / "payments_quarantine")).to_pylist()
        malformed = [
            r for r in quarantined if any(e["check-id"] == "malformed-record" for e in r["_dq_errors"])
        ]
        print(f"\npass table: {passed.num_rows} rows; quarantine table: {len(quarantined)} rows "
              f"({len(malformed)} undecodable messages)")  # fmt: skip
        for r in malformed[:8]:
            print(f"  {r['kafka_topic']}/{r['kafka_partition']}@{r['kafka_offset']} key={r['kafka_key']} "
                  f"raw={r['_dq_raw']!r:.60}")  # fmt: skip
        total = passed.num_rows + len(quarantined)
        if total != summary.messages or len(malformed) != summary.undecodable:
            print(f"MISMATCH: {total} rows for {summary.messages} messages", file=sys.stderr)
            return 1
        print(
            f"every message accounted for once: {passed.num_rows} + {len(quarantined)} = {summary.messages}"
        )
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
