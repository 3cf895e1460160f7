"""Profile one variant's stream, for py-spy: ``python -m benchmarks.profile_gate [gate|floor|plain] ROWS CHECKS``.

Runs one warm-up stream, then ``--reps`` timed streams of the variant over the benchmark batches and prints
the per-batch function times. Under py-spy (installed in its own venv, not a project dependency)::

    benchmarks/.venvs/pyspy/bin/py-spy record -o gate.svg --subprocesses -- \\
        .venv/bin/python -m benchmarks.profile_gate gate 1000000 20
"""

from __future__ import annotations

import argparse
import shutil
import statistics

from benchmarks.data import ensure_dataset
from benchmarks.harness import build_spark, run_stream
from benchmarks.rules import rule_mix
from benchmarks.run import WORK
from benchmarks.variants import VARIANTS


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("variant", choices=sorted(VARIANTS))
    p.add_argument("rows", type=int)
    p.add_argument("checks", type=int)
    p.add_argument("--batches", type=int, default=3)
    p.add_argument("--reps", type=int, default=2)
    args = p.parse_args()
    spark = build_spark("streaming-dq-profile")
    source = ensure_dataset(WORK / "data", args.rows, args.batches)
    for rep in range(-1, args.reps):
        target = WORK / "profile" / args.variant
        shutil.rmtree(target, ignore_errors=True)
        fn, prepare = VARIANTS[args.variant](rule_mix(args.checks), target)
        run = run_stream(spark, source, fn, checkpoint=target / "_checkpoint", prepare=prepare)
        print(
            f"{args.variant} rep={'warm' if rep < 0 else rep} stream={run.seconds:.2f}s "
            f"batch-fn median={statistics.median(run.batch_seconds):.3f}s {[round(s, 3) for s in run.batch_seconds]}",
            flush=True,
        )
    spark.stop()


if __name__ == "__main__":
    main()
