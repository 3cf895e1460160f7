"""The Spark session a gate job runs in: the config's settings over the job's defaults, the JARs its source and
writer need (Maven coordinates or the checkout's fetched JARs), and the source stream read with it."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from streaming_dq.compat.artifacts import delta_refusal
from streaming_dq.config.sections import SparkSection
from streaming_dq.config.source_model import SourceSection
from streaming_dq.runtime.jvm import BundleName

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from streaming_dq.config.gate_config import GateConfig

__all__ = [
    "LOCAL_DEFAULTS",
    "SPARK_DEFAULTS",
    "build_spark_session",
    "read_stream",
    "source_bundles",
    "storage_conf",
    "trace_file",
]

#: Spark settings the job applies unless ``spark.conf`` sets them.
SPARK_DEFAULTS: Mapping[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}
#: Extra defaults for a local master, where 200 shuffle partitions only cost time.
LOCAL_DEFAULTS: Mapping[str, str] = {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"}


def build_spark_session(
    spark: SparkSection,
    *,
    app_name: str,
    writer: str = "auto",
    delta: bool = False,
    bundles: Sequence[BundleName] = (),
    hadoop: Mapping[str, str] | None = None,
) -> tuple[SparkSession, bool]:
    """The SparkSession a job runs in: the active one if there is one, else a new one built from ``spark:``.

    ``spark.conf`` entries override :data:`SPARK_DEFAULTS` (and :data:`LOCAL_DEFAULTS` on a ``local`` master).
    With ``writer: spark`` (or ``auto`` on a cluster master, or ``delta=True``: a Delta source or reference
    table is read) the session loads delta-spark, its SQL extension
    and catalog (:func:`streaming_dq.runtime.jvm.spark_conf`: the JARs ``make jars`` fetched, else Spark resolves them
    from Maven Central); ``bundles`` (``kafka``, ``avro``) are loaded the same way; ``spark.jars`` and
    ``spark.jars.packages`` given in ``spark.conf`` are added to those; ``hadoop`` settings (the object stores'
    of :func:`storage_conf`) go in as ``spark.hadoop.*``, under ``spark.conf``. With ``spark.remote`` the job
    connects to a Spark Connect server instead (whose JARs are its own).
    Python workers use this interpreter unless ``PYSPARK_PYTHON`` says otherwise.

    Returns:
        The session, and whether it was created here (the caller then stops it when done).
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    if spark.remote is not None:
        builder = SparkSession.builder.remote(spark.remote)
        for key, value in {"spark.sql.session.timeZone": "UTC", **spark.conf}.items():
            builder = builder.config(key, value)
        return builder.getOrCreate(), True
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    local = spark.master.startswith("local")
    # no Delta release for this Spark (4.3): writer auto takes delta-rs, a Delta reference is read by delta-rs
    # (writer spark and a Delta source are refused by the config's validation, before Spark starts)
    wants_delta = (delta or writer == "spark" or (writer == "auto" and not local)) and delta_refusal() is None
    wanted: list[BundleName] = ["delta"] if wants_delta else []
    delta_conf = jar_conf(local, [*wanted, *(b for b in bundles if b != "delta")])
    stores = {f"spark.hadoop.{k}": v for k, v in (hadoop or {}).items()}
    conf = {**SPARK_DEFAULTS, **(LOCAL_DEFAULTS if local else {}), **delta_conf, **stores, **spark.conf}
    conf["spark.driver.extraJavaOptions"] = " ".join(
        [
            *_log_options(spark.log_level, trace_file(spark.app_name or app_name)),
            str(spark.conf.get("spark.driver.extraJavaOptions", "")),
        ]
    ).strip()
    for key, separator in (
        ("spark.jars", ","),
        ("spark.jars.packages", ","),
        ("spark.driver.extraClassPath", os.pathsep),
    ):
        joined = [v for v in (delta_conf.get(key), spark.conf.get(key)) if v]
        if joined:
            conf[key] = separator.join(joined)
    if conf.get("spark.jars.packages"):  # Maven Central only, unless spark.conf says otherwise
        from streaming_dq.runtime.jvm import ivy_settings

        conf.setdefault("spark.jars.ivySettings", str(ivy_settings()))
    builder = SparkSession.builder.master(spark.master).appName(spark.app_name or app_name)
    for key, value in conf.items():
        builder = builder.config(key, value)
    try:
        with _jvm_stderr_filtered(), _stops_held() as held:
            session = builder.getOrCreate()
    except Exception as exc:
        packages = conf.get("spark.jars.packages")
        if packages and "JAVA_GATEWAY_EXITED" in str(exc):  # spark-submit's resolution failed: say what
            from streaming_dq.runtime.ivy import resolution_error

            raise resolution_error(packages.split(","), conf.get("spark.jars.ivySettings")) from exc
        raise
    if held:  # asked to stop while Spark started: stop what started, then stop as asked
        session.stop()
        if signal.SIGINT in held:
            raise KeyboardInterrupt
        signal.raise_signal(held[0])
    session.sparkContext.setLogLevel(spark.log_level)
    return session, True


@contextlib.contextmanager
def _stops_held() -> Iterator[list[int]]:
    """Hold SIGINT and SIGTERM while Spark's JVM is launched; the ones that arrived are in the yielded list.

    An interrupt in the middle of the launch (pyspark waiting for the new JVM's gateway) left that JVM
    running after this process had exited, with nothing to stop it (its gateway waits for a connection that
    never comes). Held, the stop is taken after the session exists: the caller stops it and then stops as
    asked. A handler set meanwhile (pyspark's SparkContext sets one for SIGINT once its gateway is up: the
    launch is over then) is kept. Only the main thread can hold signals; elsewhere nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield []
        return
    held: list[int] = []

    def hold(number: int, _frame: object) -> None:
        held.append(number)

    previous = {sig: signal.signal(sig, hold) for sig in _STOPS}
    try:
        yield held
    finally:
        for sig, handler in previous.items():
            if signal.getsignal(sig) is hold:  # not replaced meanwhile (pyspark's SparkContext sets its own)
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


_STOPS = (signal.SIGINT, signal.SIGTERM)


def config_session(
    config: GateConfig, *, app_name: str, writer: str | None = None
) -> tuple[SparkSession, bool]:
    """The session of a one-off command on one gate's tables (``release``, ``quarantine discard``,
    ``maintain``): as :func:`build_spark_session` builds it, with the JARs and object-store settings the
    config's source, references and tables need (:func:`storage_conf`). ``writer`` overrides the config's."""
    bundles, hadoop = storage_conf(config)
    formats = [config.source.format, *(r.format for r in config.reference_datasets.values())]
    return build_spark_session(
        config.spark,
        app_name=app_name,
        writer=writer or config.targets.writer,
        delta="delta" in formats,
        bundles=bundles,
        hadoop=hadoop,
    )


def storage_conf(config: GateConfig) -> tuple[list[BundleName], dict[str, str]]:
    """What Spark needs for the object stores of ``config``: the ``s3`` JAR bundle when Spark itself touches
    S3 (the checkpoint, a file source, a reference it reads, the tables with Spark's writer), and the Hadoop
    settings of every such location (S3A's per bucket, from the storage options)."""
    from streaming_dq.tables.storage import hadoop_options, spark_uri

    wide = config.storage_options
    places = [(config.checkpoint, dict(wide))]
    if config.source.path is not None:
        places.append((config.source.path, config.source_storage_options()))
    places += [(r.path, config.reference_storage_options(n)) for n, r in config.reference_datasets.items()]
    if config.targets.writer != "delta-rs":
        places += [(t.uri, dict(t.storage_options)) for t in config.tables().values()]
    settings: dict[str, str] = {}
    s3 = False
    for uri, options in places:
        settings.update(hadoop_options(uri, options))
        s3 = s3 or spark_uri(uri).lower().startswith("s3a://")
    return (["s3"] if s3 else []), settings


def source_bundles(source: SourceSection) -> list[BundleName]:
    """The JAR bundles a source needs in the session: Spark's Kafka reader, and spark-avro for Avro payloads
    (plain or framed by a schema registry)."""
    if source.format != "kafka":
        return []
    payloads = [p for p in (source.value, source.key) if p is not None]
    avro = any(p.is_avro for p in payloads)
    return ["kafka", "avro"] if avro else ["kafka"]


#: What the JVM prints on every start that says nothing about the job: Spark's launcher always adds the
#: incubating vector module, and the JDK has no switch to silence its notice.
JVM_NOISE = (b"WARNING: Using incubator modules: jdk.incubator.vector",)


@contextlib.contextmanager
def _jvm_stderr_filtered() -> Iterator[None]:
    """While a new JVM is launched, hand it a stderr that drops :data:`JVM_NOISE` and passes every other
    line on to this process's stderr (#42: the notice was printed by every command).

    fd 2 is swapped for a pipe only while the JVM starts (it inherits the pipe; this process keeps its own
    stderr); a thread forwards the JVM's lines for as long as the JVM writes. Without a new JVM (one is
    already running), or where fd 2 cannot be duplicated, nothing changes.
    """
    from pyspark import SparkContext

    if SparkContext._gateway is not None:  # the JVM runs already: nothing is launched
        yield
        return
    with stderr_filtered(JVM_NOISE):
        yield


@contextlib.contextmanager
def stderr_filtered(noise: Sequence[bytes]) -> Iterator[None]:
    """Child processes started inside the block write their stderr through a filter that drops the lines
    starting with one of ``noise`` and passes every other line on to this process's stderr, for as long as
    they write; this process's own stderr is itself again after the block."""
    try:
        read_end, write_end = os.pipe()
        saved = os.dup(2)
    except OSError:
        yield
        return
    forward = threading.Thread(
        target=_forward, args=(read_end, saved, tuple(noise)), name="child-stderr", daemon=True
    )
    forward.start()
    sys.stderr.flush()
    os.dup2(write_end, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(write_end)


def _forward(read_end: int, out: int, noise: tuple[bytes, ...]) -> None:
    """Copy the children's stderr lines to ``out`` (this process's stderr), dropping ``noise``."""
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        pending = b""
        while chunk := pipe.read(65536):
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            kept = [line for line in lines if not line.startswith(noise)]
            if kept:
                os.write(out, b"\n".join(kept) + b"\n")
        if pending and not pending.startswith(noise):
            os.write(out, pending)
    os.close(out)


def trace_file(app_name: str) -> Path:
    """Where a job's JVM writes the traces of a failed stream (created only when one fails): the temporary
    folder's ``streaming-dq/<app name>.log``, appended to."""
    return Path(tempfile.gettempdir()) / "streaming-dq" / f"{app_name}.log"


def _log_options(level: str, trace: Path) -> list[str]:
    """JVM options for the packaged log4j2 file (:file:`streaming_dq/log4j2.properties`) at ``level``, the
    traces of a failed stream into ``trace``."""
    from importlib.resources import files

    path = files("streaming_dq") / "log4j2.properties"
    return [
        f"-Dlog4j2.configurationFile={path}",
        f"-Dstreaming_dq.log_level={level.lower()}",
        f"-Dstreaming_dq.log_file={trace}",
    ]


def jar_conf(local: bool, bundles: Sequence[BundleName]) -> dict[str, str]:
    """The Spark conf that loads ``bundles`` (see :func:`streaming_dq.runtime.jvm.spark_conf`): on a
    ``local`` master S3A's JARs on the driver's class path; with Delta and S3 the S3 LogStore
    (:func:`streaming_dq.runtime.jvm.log_store_jar`)."""
    from streaming_dq.runtime.jvm import spark_conf

    if not bundles:
        return {}
    from streaming_dq.runtime.jvm import bundle_jars

    wanted = list(bundles)
    s3 = bundle_jars("s3") if local and "s3" in bundles else None
    if s3 is not None:  # on a local master the driver is the executor: S3A's 690 MB need no copy per session
        bundles = [b for b in bundles if b != "s3"]
    conf = spark_conf(bundles) if bundles else {}
    if s3 is not None:
        conf["spark.driver.extraClassPath"] = os.pathsep.join(str(j) for j in s3)
    if "s3" in wanted and "delta" in wanted:  # Delta's commits on S3 by conditional write
        from streaming_dq.runtime.jvm import log_store_conf

        store = log_store_conf()
        jars = [j for j in (conf.get("spark.jars"), store.pop("spark.jars")) if j]
        conf.update(store, **{"spark.jars": ",".join(jars)})
    if local and "delta" in bundles:  # Delta's log replay runs 50 tasks by default: a fixed cost per commit
        conf["spark.databricks.delta.snapshotPartitions"] = "2"
    return conf


def read_stream(session: SparkSession, source: SourceSection) -> DataFrame:
    """The source as a streaming DataFrame (see :func:`streaming_dq.sources.read_source`)."""
    from streaming_dq.sources import read_source

    return read_source(session, source, stream=True)
