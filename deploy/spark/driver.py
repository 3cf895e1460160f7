"""spark-submit entry point: ``streaming-dq run CONFIG`` inside the session spark-submit configured.

spark-submit needs a Python file to run. This one creates the SparkSession from the submit-time settings
first (master, ``--packages``, ``--conf``), then hands over to the ``streaming-dq run`` command, which uses
the active session. Without it, ``streaming-dq run`` would build its own session from the config's
``spark:`` section, whose ``master`` (``local[2]`` by default) would replace the cluster's.

Settings the job applies by default (UTC session time zone, Arrow transfers, no console progress bar) are
added here only when spark-submit did not set them.

Usage:
    spark-submit [SPARK OPTIONS] deploy/spark/driver.py CONFIG [--available-now] [--timeout SECONDS]

deploy/spark/submit.sh builds that command line.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    """Run ``streaming-dq run`` with ``argv`` (CONFIG and run options) and return its exit code."""
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2

    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    from streaming_dq.cli.main import app
    from streaming_dq.runtime.session import SPARK_DEFAULTS

    submitted = SparkConf()  # what spark-submit passed (--conf, --packages, --master ...)
    builder = SparkSession.builder
    for key, value in SPARK_DEFAULTS.items():
        if not submitted.contains(key):
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        app(args=["run", *argv], prog_name="streaming-dq")
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
