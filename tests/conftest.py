"""Shared fixtures: ONE SparkSession per test session (local[2], few shuffle partitions, UTC, delta-spark)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Seconds each test file took in a full run (its junit XML, summed per file; refresh it when files grow):
#: used only to hand out the heaviest files first (below).
FILE_DURATIONS = Path(__file__).with_name("file_durations.json")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The heaviest files first: `make test` runs two workers that take whole files (``--dist loadfile``) in
    collection order, and a long file that starts last leaves the other worker idle until it ends. A stable
    sort: a file's tests keep their order and stay together; files not in the table keep theirs, after."""
    import json

    seconds: dict[str, float] = json.loads(FILE_DURATIONS.read_text(encoding="utf-8"))
    items.sort(key=lambda item: -seconds.get(item.path.relative_to(REPO).as_posix(), 0.0))


os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
# `make test` fetches the delta-spark JARs here (make jars): every test session can write with Spark's Delta.
os.environ.setdefault("STREAMING_DQ_JARS", str(REPO / ".jars"))
# The JVMs the tests start through spark-submit as other processes (the jobs run by the CLI, the helpers, the
# Connect server) compile with C1 only: their data is tiny and most live for seconds, so C2's compiler threads
# were CPU taken from the other test worker (the catalog test's five Spark processes: 153 s -> 123 s alone;
# the integration tier 2131 -> 1808 s of test time). The shared session below lives for the whole run and
# keeps C2 (with C1 only, the Spark tier took 9% longer). A test-suite setting only: no job's JVM sees it.
SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1"
os.environ.setdefault("SPARK_SUBMIT_OPTS", SHORT_LIVED_JVM)


def delta_conf() -> dict[str, str]:
    """The conf that loads the fetched delta-spark, Kafka-reader, spark-avro and S3A JARs; a clear failure
    when `make jars` has not run."""
    from streaming_dq.runtime.jvm import BundleName, bundle_jars, delta_refusal, jars_home
    from streaming_dq.runtime.session import jar_conf

    # no Delta release for this Spark (a compatibility tier, #56): the session has no Spark Delta writer
    bundles: list[BundleName] = (
        ["kafka", "avro", "s3"] if delta_refusal() else ["delta", "kafka", "avro", "s3"]
    )
    for bundle in bundles:
        if bundle_jars(bundle) is None:
            raise RuntimeError(f"no {bundle} JARs in {jars_home()}: run `make jars` (make test does)")
    # as a job's session on a local master: S3A on the driver's class path, Delta's S3 LogStore in spark.jars
    return jar_conf(True, bundles)


def build_spark_session(master: str = "local[2]", conf: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in {**delta_conf(), **(conf or {})}.items():
        builder = builder.config(key, value)
    short_lived = os.environ.get("SPARK_SUBMIT_OPTS") == SHORT_LIVED_JVM
    if short_lived:  # this JVM lives long: C2 (see above); the processes started later keep C1 only
        del os.environ["SPARK_SUBMIT_OPTS"]
    try:
        return _session(builder, master)
    finally:
        if short_lived:
            os.environ["SPARK_SUBMIT_OPTS"] = SHORT_LIVED_JVM


def _session(builder, master: str):  # type: ignore[no-untyped-def]
    return (
        builder.master(master)
        .appName("streaming-dq-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "true")  # the job-budget tests read job descriptions from its REST API
        .config("spark.ui.port", "0")
        .config("spark.ui.showConsoleProgress", "false")
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


@pytest.fixture(scope="session")
def connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark Connect server on 127.0.0.1 (local[2], delta-spark), once per test session."""
    from servers import connect_server

    with connect_server(tmp_path_factory.mktemp("connect-server"), delta_conf()) as url:
        yield url


@pytest.fixture(scope="session")
def schema_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A schema registry (Apicurio, `make registry`) on 127.0.0.1: its Confluent-compatible API's URL, once
    per test session."""
    from streaming_dq.devtools.local_registry import local_registry

    with local_registry(tmp_path_factory.mktemp("schema-registry")) as url:
        yield url


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Kafka broker (KRaft, the JARs `make jars` fetched) on 127.0.0.1, once per test session."""
    from streaming_dq.devtools.local_kafka import local_broker

    with local_broker(tmp_path_factory.mktemp("kafka-broker")) as bootstrap:
        yield bootstrap


@pytest.fixture(scope="session")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark standalone master and worker on 127.0.0.1, once per test session."""
    from servers import standalone_cluster

    with standalone_cluster(tmp_path_factory.mktemp("standalone-cluster")) as url:
        yield url


@pytest.fixture(scope="session")
def azure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Azurite's blob service (Azure Blob Storage's emulator) on 127.0.0.1 with container ``lake``, once per
    test session; ``AZURITE_BLOB_STORAGE_URL`` points at it while it runs (jobs started by tests inherit it)."""
    from streaming_dq.devtools.local_azure import local_azure

    with local_azure(tmp_path_factory.mktemp("azure-server"), containers=("lake",)) as server:
        yield server


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """An S3-compatible server process (moto_server) on 127.0.0.1 with bucket ``lake``, once per test session;
    it checks signatures, so wrong credentials are refused."""
    from streaming_dq.devtools.local_s3 import local_s3

    with local_s3(tmp_path_factory.mktemp("s3-server"), buckets=("lake",)) as server:
        yield server
