"""Shared fixtures: ONE SparkSession per test session (local[2], few shuffle partitions, UI off, UTC)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def build_spark_session():  # type: ignore[no-untyped-def]
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName("streaming-dq-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.streaming.stopGracefullyOnShutdown", "false")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .getOrCreate()
    )


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    session = build_spark_session()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
