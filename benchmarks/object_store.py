"""``python -m benchmarks.object_store [--quick]``: what a gate's batch costs on an object store, per writer.

One session with delta-spark and S3A, an S3 server process on 127.0.0.1 (``moto_server``, the tests' server),
one cached batch of ``rows`` orders handed to :class:`~streaming_dq.sink.QualityGate` as successive
micro-batches writing pass, quarantine, results and metrics tables on the store, against a plain append of the
same batch to one table on the same store, per writer, the four variants interleaved round by round:

* ``delta-rs plain`` / ``delta-rs gate``: ``write_deltalake`` of the batch / the gate with delta-rs (driver
  router), commits by conditional put;
* ``spark plain`` / ``spark gate``: Spark's Delta writer through S3A / the gate with Spark's writer (Spark
  router).

Then, for each gate, the object-store requests one batch makes per table (LIST, GET, HEAD, PUT, POST,
DELETE), counted from the server's request log over a few more batches: what a month of batches costs is
that times the batches. The server is on loopback, so the seconds here are request counts times a small
latency; on a real store each request costs tens of milliseconds more. Writes
``benchmarks/results/object-store-latest.json``.
"""

from __future__ import annotations

import os
import re
import statistics
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from benchmarks.harness import batch_grid, interleaved_rounds, save_result
from benchmarks.small_batches import orders
from streaming_dq.compat.spark import to_arrow

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "object-store-latest.json"
WRITERS = ("delta-rs", "spark")
TABLES = ("pass", "quarantine", "results", "metrics")
_REQUEST = re.compile(r'"(GET|PUT|POST|HEAD|DELETE) (/[^ ]*) HTTP/')


def build_spark(s3: Any) -> Any:
    """local[2] with delta-spark and S3A (the JARs ``make jars`` fetched) as a job's session loads them (the
    S3 LogStore included, :func:`streaming_dq.runtime.jvm.log_store_jar`), S3A set for the server's bucket."""
    from benchmarks.distributed import build_spark as local_spark
    from streaming_dq.runtime.jvm import bundle_jars
    from streaming_dq.runtime.session import jar_conf
    from streaming_dq.tables.storage import hadoop_options

    if bundle_jars("s3") is None:
        raise SystemExit("no S3A JARs: run `make jars`")
    extra = jar_conf(True, ["delta", "s3"])
    extra |= {f"spark.hadoop.{k}": v for k, v in hadoop_options("s3a://lake/", s3.storage_options()).items()}
    return local_spark(extra)


class Runs:
    """The variants' batch functions; each call of :meth:`make` starts on fresh tables (a new prefix)."""

    def __init__(self, s3: Any) -> None:
        self.s3, self.options, self.made = s3, s3.storage_options(), 0

    def prefix(self, variant: str) -> str:
        self.made += 1
        return f"s3://lake/{variant.replace(' ', '-')}-{self.made}"

    def make(self, variant: str) -> Any:
        writer, kind = variant.split(" ")
        prefix = self.prefix(variant)
        if kind == "gate":
            return self.gate(writer, prefix)
        if writer == "delta-rs":
            from deltalake import write_deltalake

            return lambda df, _: write_deltalake(
                f"{prefix}/plain", to_arrow(df), mode="append", storage_options=self.options
            )
        from streaming_dq.tables.storage import hadoop_options, spark_uri

        hadoop = hadoop_options(prefix, self.options)
        return lambda df, _: (
            df.write.format("delta").mode("append").options(**hadoop).save(spark_uri(f"{prefix}/plain"))
        )

    def gate(self, writer: str, prefix: str) -> Any:
        from benchmarks.small_batches import gate

        return gate(writer, prefix, self.options)  # the small-batch benchmark's gate, its tables on the store


def requests_per_batch(
    s3: Any, fn: Any, df: Any, prefix_of: str, batches: int
) -> dict[str, dict[str, float]]:
    """Requests of ``batches`` batches of ``fn`` (its tables created first, not counted), per table and kind."""
    assert s3.log is not None
    fn(df, 0)
    start = len(s3.log.read_text(errors="replace").splitlines())
    for batch in range(1, batches + 1):
        fn(df, batch)
    lines = s3.log.read_text(errors="replace").splitlines()[start:]
    counts: Counter[tuple[str, str]] = Counter()
    for line in lines:
        match = _REQUEST.search(line)
        if match is None:
            continue
        method, path = match.group(1), unquote(match.group(2))
        kind = "LIST" if method == "GET" and "list-type=2" in path else method
        where = path.split("prefix=", 1)[1] if kind == "LIST" else path.removeprefix("/lake/")
        parts = where.split("/")
        table = parts[1] if len(parts) > 1 and parts[0] == prefix_of else "other"
        counts[(table, kind)] += 1
    out: dict[str, dict[str, float]] = {}
    for (table, kind), n in sorted(counts.items()):
        out.setdefault(table, {})[kind] = n / batches
    return out


def main(argv: list[str] | None = None) -> None:
    rows, batches, rounds = batch_grid(argv, __doc__ or "", quick=(1_000, 3, 2), full=(10_000, 5, 3))
    from streaming_dq.devtools.local_s3 import local_s3

    with tempfile.TemporaryDirectory(prefix="object-store-bench-") as work, local_s3(Path(work)) as s3:
        spark = build_spark(s3)
        df = orders(spark, rows)
        pids = [os.getpid(), spark.sparkContext._jvm.ProcessHandle.current().pid()]
        runs = Runs(s3)
        variants = [f"{w} {k}" for w in WRITERS for k in ("plain", "gate")]
        seen = interleaved_rounds(variants, runs.make, df, batches=batches, rounds=rounds, pids=pids)
        result: dict[str, Any] = {"rows": rows, "batches": batches, "rounds": rounds, "writers": {}}
        for writer in WRITERS:
            plain, gated = seen[f"{writer} plain"], seen[f"{writer} gate"]
            fn = runs.make(f"{writer} gate")
            prefix = f"{writer}-gate-{runs.made}"
            result["writers"][writer] = {
                "plain_seconds": statistics.median(plain["seconds"]),
                "gate_seconds": statistics.median(gated["seconds"]),
                "plain_cpu": statistics.median(plain["cpu"]),
                "gate_cpu": statistics.median(gated["cpu"]),
                "ratio": statistics.median(gated["seconds"]) / statistics.median(plain["seconds"]),
                "requests_per_batch": requests_per_batch(s3, fn, df, prefix, batches),
            }
        spark.stop()
    save_result(RESULTS, result)
    print(f"object store: {rows:,} rows per batch, {batches} batches x {rounds} rounds (medians per batch)")
    for writer, m in result["writers"].items():
        print(
            f"  {writer:<9} gate {m['gate_seconds']:.3f} s (cpu {m['gate_cpu']:.2f}) / plain "
            f"{m['plain_seconds']:.3f} s (cpu {m['plain_cpu']:.2f}) = {m['ratio']:.2f}"
        )
        for table, kinds in m["requests_per_batch"].items():
            print(f"    {table:<11} " + "  ".join(f"{k} {v:.1f}" for k, v in kinds.items()))


if __name__ == "__main__":
    main()
