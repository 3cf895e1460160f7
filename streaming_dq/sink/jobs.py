"""Labels on the Spark jobs a gate starts, so that the Spark UI (and a job-budget test) can tell them apart.

Each phase of a batch runs under a job description such as ``streaming_dq orders batch 7: aggregate``;
Delta's own log jobs started inside a phase carry ``Delta: <that description>: Compute snapshot ...``. Under
Spark Connect the client has no SparkContext to set the description on, and the jobs keep Spark's defaults.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["JOB_DESCRIPTION", "described", "phase_description"]

JOB_DESCRIPTION = "spark.job.description"


def phase_description(gate: str, batch_id: int, phase: str, unit: str = "batch") -> str:
    """``streaming_dq <gate> batch <id>: <phase>`` (``unit``: what the id numbers, e.g. a release's chunks)."""
    return f"streaming_dq {gate} {unit} {batch_id}: {phase}"


@contextmanager
def described(spark: SparkSession | None, text: str) -> Iterator[None]:
    """Run the block's Spark jobs under the description ``text`` (classic Spark; a no-op under Connect or
    without a session)."""
    from streaming_dq.compat.spark import is_remote

    if spark is None or is_remote():
        yield
        return
    context = spark.sparkContext
    previous = context.getLocalProperty(JOB_DESCRIPTION)
    context.setLocalProperty(JOB_DESCRIPTION, text)
    try:
        yield
    finally:
        context.setLocalProperty(JOB_DESCRIPTION, previous)  # type: ignore[arg-type]
