"""Spark's Delta commits on S3 as conditional writes: the LogStore in ``logstore/S3ConditionalLogStore.java``,
compiled here from its source against the delta bundle's delta-storage and the Hadoop client API pyspark ships
(``python -m streaming_dq.runtime.jvm fetch s3`` builds it).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from streaming_dq.exceptions import JarFetchError
from streaming_dq.runtime.jvm import bundle_jars, jars_home
from streaming_dq.tables.storage import S3_LOG_STORE_CLASS

__all__ = ["LOG_STORE_CLASS", "LOG_STORE_SCHEMES", "log_store_conf", "log_store_jar"]

# Spark's Delta commits on S3 as conditional writes: the LogStore in ``S3ConditionalLogStore.java``.
#
# Delta's default S3 LogStore is safe for one driver only, and its multi-writer LogStore needs DynamoDB (and a
# JAR this project's registries do not serve). S3 refuses a PUT with ``If-None-Match: *`` on an existing key,
# S3A (Hadoop 3.4.2 and later) sends that header for a file created with ``fs.option.create.conditional.overwrite``, and
# delta-rs commits the same way (``aws_conditional_put``): with this LogStore Spark's writer, delta-rs,
# ``streaming-dq maintain`` and an ``OPTIMIZE`` from anywhere can commit to one table on S3.
#
# The Java source ships with the package and is compiled here, once per source version, against delta-storage
# (the ``delta`` JAR bundle) and the Hadoop client API pyspark ships: nothing binary is downloaded or committed.
# Building needs a JDK's ``javac``.

#: The LogStore's class, for ``spark.delta.logStore.<scheme>.impl``.
LOG_STORE_CLASS = S3_LOG_STORE_CLASS
LOG_STORE_SOURCE = Path(__file__).with_name("logstore") / "S3ConditionalLogStore.java"
#: The S3 schemes Spark addresses (``s3://`` is S3A's too, see :func:`streaming_dq.tables.storage.spark_uri`).
LOG_STORE_SCHEMES = ("s3a", "s3")


def _log_store_version() -> str:
    return hashlib.sha256(LOG_STORE_SOURCE.read_bytes()).hexdigest()[:12]


def _log_store_classpath(home: Path | None) -> list[Path]:
    import pyspark

    delta = bundle_jars("delta", home=home) or []
    storage = [j for j in delta if j.name.startswith("delta-storage-")]
    if not storage:
        raise JarFetchError(
            "s3", "the S3 LogStore compiles against delta-storage: fetch the delta bundle first"
        )
    hadoop = sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"))
    if not hadoop:
        raise JarFetchError("s3", "pyspark ships no hadoop-client-api JAR to compile the S3 LogStore against")
    return [*storage, hadoop[-1]]


def log_store_jar(home: Path | None = None, *, build: bool = True) -> Path | None:
    """The compiled LogStore's JAR under ``<home>/logstore/`` (built now when missing and ``build``).

    Returns:
        The JAR, or None when it is not built and ``build`` is False.

    Raises:
        JarFetchError: no ``javac`` (a JRE only), no delta bundle, or the compiler failed.
    """
    folder = (home or jars_home()) / "logstore"
    jar = folder / f"streaming-dq-logstore-{_log_store_version()}.jar"
    if jar.is_file() or not build:
        return jar if jar.is_file() else None
    javac = shutil.which("javac")
    if javac is None:
        raise JarFetchError("s3", "building the S3 LogStore needs a JDK ('javac' is not on the PATH)")
    classpath = ":".join(str(p) for p in _log_store_classpath(home))
    with tempfile.TemporaryDirectory(prefix="streaming-dq-logstore-") as work:
        done = subprocess.run(
            [javac, "--release", "17", "-nowarn", "-d", work, "-cp", classpath, str(LOG_STORE_SOURCE)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
            raise JarFetchError("s3", "javac failed on the S3 LogStore: " + " | ".join(tail))
        folder.mkdir(parents=True, exist_ok=True)
        staging = folder / f".{jar.name}.partial"
        with zipfile.ZipFile(staging, "w", zipfile.ZIP_DEFLATED) as archive:
            for cls in sorted(Path(work).rglob("*.class")):
                archive.write(cls, cls.relative_to(work).as_posix())
        for old in folder.glob("streaming-dq-logstore-*.jar"):
            old.unlink()
        staging.rename(jar)
    return jar


def log_store_conf(home: Path | None = None) -> dict[str, str]:
    """Spark conf that loads the LogStore (``spark.jars``: Delta instantiates it with the loader that holds
    delta-storage) and makes it the LogStore of ``s3a://`` and ``s3://`` tables."""
    jar = log_store_jar(home)
    assert jar is not None
    conf = {f"spark.delta.logStore.{scheme}.impl": LOG_STORE_CLASS for scheme in LOG_STORE_SCHEMES}
    conf["spark.jars"] = str(jar)
    return conf
