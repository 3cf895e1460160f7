"""The JVM artifacts the gate can use (Delta's Spark writer, Kafka and Avro sources), fetched from Maven Central.

Two ways to put them on a session's classpath, both documented in docs/deploy.md:

* **a fetched folder** (what ``make test`` and ``make demo`` use): :func:`fetch` writes a small POM and runs
  ``mvn dependency:copy-dependencies`` into ``<home>/<bundle>/``, then records in a manifest the JARs Spark
  does not already ship (delta-spark's POM also pulls Hadoop, Parquet, Jackson and Scala builds that differ
  from Spark's own: Spark's copies are kept, delta issue #7415). After the first fetch this works offline;
  :func:`spark_conf` passes the manifest's JARs as ``spark.jars``;
* **Spark's own resolution**: ``spark.jars.packages`` with the Maven coordinates (Ivy, cached in
  ``~/.ivy2.5.2``), used by :func:`spark_conf` when no fetched folder holds the bundle. This is also the way on
  a cluster (``spark-submit --packages``).

The folder is ``$STREAMING_DQ_JARS`` when set, else a checkout's ``.jars`` (what ``make jars`` fills), else
``~/.cache/streaming-dq/jars``.

Example:
    >>> [a.coordinate for a in bundle("delta", spark_version="4.2.0")]
    ['io.delta:delta-spark_4.2_2.13:4.4.0']
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from streaming_dq.compat.artifacts import SPARK_LINES, MavenArtifact, SparkLine, delta_refusal, spark_line
from streaming_dq.exceptions import ConfigError, JarFetchError
from streaming_dq.runtime.pyspark_jars import (
    artifact_of,
    pyspark_home,
    spark_hadoop_version,
    spark_jar_artifacts,
)
from streaming_dq.tables.storage import S3_LOG_STORE_CLASS

__all__ = [
    "DELTA_CATALOG",
    "DELTA_EXTENSION",
    "SPARK_LINES",
    "BundleName",
    "JarFetchError",
    "MavenArtifact",
    "SparkLine",
    "bundle",
    "bundle_jars",
    "delta_refusal",
    "fetch",
    "ivy_settings",
    "jars_home",
    "spark_conf",
    "spark_line",
]

BundleName = Literal["delta", "kafka", "avro", "kafka-broker", "s3", "connect"]
BUNDLES: tuple[BundleName, ...] = ("delta", "kafka", "avro", "kafka-broker", "s3", "connect")
#: What a bundle needs fetched before it (the S3 LogStore compiles against the delta bundle's delta-storage).
NEEDS: dict[BundleName, tuple[BundleName, ...]] = {"s3": ("delta",)}


def with_needs(names: Sequence[BundleName]) -> list[BundleName]:
    """``names`` with what each needs, each once, a bundle after what it needs (any order given works).

    Example:
        >>> with_needs(["s3"]), with_needs(["s3", "delta"]), with_needs(["kafka", "s3"])
        (['delta', 's3'], ['delta', 's3'], ['kafka', 'delta', 's3'])
    """
    out: list[BundleName] = []
    for name in names:
        for needed in (*NEEDS.get(name, ()), name):
            if needed not in out:
                out.append(needed)
    return out


DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"


#: The Kafka broker the tests and the Kafka demo run (KRaft, Java 17+).
KAFKA_BROKER_VERSION = "4.1.1"

_MANIFEST = "manifest.json"


def _spark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def bundle(name: BundleName, *, spark_version: str | None = None) -> tuple[MavenArtifact, ...]:
    """The Maven artifacts of a bundle, for the installed (or the given) Spark version.

    Raises:
        ConfigError: unknown bundle, or no delta-spark release for this Spark version.
    """
    version = spark_version or _spark_version()
    line = spark_line(version)
    if name == "delta":
        if line.delta is None:
            raise ConfigError(str(delta_refusal(version)), field_path="targets.writer")
        return (line.delta,)
    if name == "kafka":
        return (MavenArtifact("org.apache.spark", f"spark-sql-kafka-0-10_{line.scala}", line.connectors),)
    if name == "avro":
        return (MavenArtifact("org.apache.spark", f"spark-avro_{line.scala}", line.connectors),)
    if name == "connect":  # the Spark Connect server: in pyspark's own JARs since 4.0, from Maven for 3.5
        if any((Path(pyspark_home()) / "jars").glob("spark-connect_*.jar")):
            return ()
        return (MavenArtifact("org.apache.spark", f"spark-connect_{line.scala}", line.connectors),)
    if name == "kafka-broker":
        return (MavenArtifact("org.apache.kafka", "kafka_2.13", KAFKA_BROKER_VERSION),)
    if name == "s3":  # S3A for Spark: the hadoop-aws of Spark's own Hadoop client, and the AWS SDK it needs
        return (MavenArtifact("org.apache.hadoop", "hadoop-aws", spark_hadoop_version()),)
    raise ConfigError(f"unknown JAR bundle {name!r}: expected one of {', '.join(BUNDLES)}")


#: The project folder ``make jars`` fills, when the package runs from a checkout (an editable install).
CHECKOUT_JARS = Path(__file__).resolve().parents[2] / ".jars"


def jars_home() -> Path:
    """Where fetched bundles live: ``$STREAMING_DQ_JARS``; else the checkout's ``.jars`` folder when the
    package runs from a checkout that has one (what ``make jars`` filled, so ``.venv/bin/streaming-dq run``
    finds it outside make too); else ``~/.cache/streaming-dq/jars``."""
    configured = os.environ.get("STREAMING_DQ_JARS")
    if configured:
        return Path(configured)
    if CHECKOUT_JARS.is_dir() and (CHECKOUT_JARS.parent / "pyproject.toml").is_file():
        return CHECKOUT_JARS
    return Path.home() / ".cache" / "streaming-dq" / "jars"


def _pom(artifacts: Sequence[MavenArtifact]) -> str:
    deps = "\n".join(
        f"    <dependency><groupId>{a.group}</groupId><artifactId>{a.artifact}</artifactId>"
        f"<version>{a.version}</version></dependency>"
        for a in artifacts
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n  <modelVersion>4.0.0</modelVersion>\n'
        "  <groupId>streaming-dq</groupId><artifactId>jars</artifactId><version>0</version>\n"
        f"  <dependencies>\n{deps}\n  </dependencies>\n</project>\n"
    )


def fetch(name: BundleName, *, home: Path | None = None, keep_spark_duplicates: bool = False) -> list[Path]:
    """Fetch a bundle with Maven into ``<home>/<name>/`` and record the JARs to load.

    Idempotent: a bundle whose manifest matches the wanted coordinates is not fetched again.

    Args:
        name: The bundle.
        home: The folder of bundles (default :func:`jars_home`).
        keep_spark_duplicates: Also load JARs whose artifact Spark ships (the broker bundle runs in a JVM of
            its own, without Spark's classpath, so it keeps everything).

    Returns:
        The JARs to put on the classpath.

    Raises:
        JarFetchError: ``mvn`` is missing or failed.
    """
    artifacts = bundle(name)
    if not artifacts:  # nothing to fetch for this Spark (its own JARs hold the bundle)
        return []
    folder = (home or jars_home()) / name
    found = bundle_jars(name, home=home)
    if found is not None:
        return found
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JarFetchError(name, "Maven ('mvn') is not on the PATH; or use spark.jars.packages")
    staging = folder.with_name(f".{name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="streaming-dq-pom-") as work:
        Path(work, "pom.xml").write_text(_pom(artifacts), encoding="utf-8")
        done = subprocess.run(
            [mvn, "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={staging}",
             "-DincludeScope=runtime"],
            cwd=work, capture_output=True, text=True, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
        raise JarFetchError(name, " | ".join(tail) or f"mvn exited with {done.returncode}")
    skip = set() if keep_spark_duplicates else spark_jar_artifacts()
    selected = sorted(p.name for p in staging.glob("*.jar") if artifact_of(p.name) not in skip)
    manifest = {"coordinates": [a.coordinate for a in artifacts], "jars": selected}
    (staging / _MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    return [folder / jar for jar in selected]


def bundle_jars(name: BundleName, *, home: Path | None = None) -> list[Path] | None:
    """The fetched JARs of a bundle, or None when it was not fetched (for this Spark version)."""
    if not bundle(name):
        return []
    folder = (home or jars_home()) / name
    try:
        manifest = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("coordinates") != [a.coordinate for a in bundle(name)]:
        return None
    jars = [folder / jar for jar in manifest.get("jars", [])]
    return jars if jars and all(j.is_file() for j in jars) else None


def spark_conf(bundles: Sequence[BundleName], *, home: Path | None = None) -> dict[str, str]:
    """Spark conf entries that load ``bundles`` (and, for ``delta``, its SQL extension and catalog).

    Fetched bundles are loaded from their folder (``spark.jars``); the others are resolved by Spark from
    Maven Central (``spark.jars.packages``).

    Example:
        >>> conf = spark_conf(["delta"])
        >>> conf["spark.sql.extensions"]
        'io.delta.sql.DeltaSparkSessionExtension'
    """
    jars: list[str] = []
    packages: list[str] = []
    for name in dict.fromkeys(bundles):
        found = bundle_jars(name, home=home)
        if found is not None:
            jars += [str(j) for j in found]
        else:
            packages += [a.coordinate for a in bundle(name)]
    conf: dict[str, str] = {}
    if jars:
        conf["spark.jars"] = ",".join(jars)
    if packages:
        conf["spark.jars.packages"] = ",".join(packages)
        conf["spark.jars.ivySettings"] = str(ivy_settings())
    if "delta" in bundles:
        conf["spark.sql.extensions"] = DELTA_EXTENSION
        conf["spark.sql.catalog.spark_catalog"] = DELTA_CATALOG
    return conf


def ivy_settings() -> Path:
    """The Ivy settings Spark resolves ``spark.jars.packages`` with here: Maven Central only.

    Spark's default chain asks the local Maven repository first, and trusts a POM there whose JAR is missing
    (what an earlier ``mvn`` run leaves): resolution then fails with ``download failed: ...jar``.
    """
    from importlib.resources import files

    return Path(str(files("streaming_dq") / "ivysettings.xml"))


# --- the S3 LogStore ---------------------------------------------------------------------------------------------
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


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m streaming_dq.runtime.jvm fetch|conf|jars|coordinates BUNDLE... [--home DIR]``.

    ``fetch`` is what ``make jars`` runs; ``conf`` prints the Spark conf as JSON; ``jars`` prints the fetched
    JARs comma-separated, for ``spark-submit --jars`` (exit 1 when a bundle was not fetched); ``coordinates``
    the bundles' Maven coordinates for the pyspark beside the package, for ``spark-submit --packages``.
    """
    parser = argparse.ArgumentParser(prog="python -m streaming_dq.runtime.jvm")
    parser.add_argument("command", choices=["fetch", "conf", "jars", "coordinates"])
    parser.add_argument("bundles", nargs="+", choices=BUNDLES)
    parser.add_argument("--home", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        if args.command == "coordinates":  # for spark-submit --packages, on the Spark beside this package
            print(",".join(a.coordinate for name in args.bundles for a in bundle(name)))
            return 0
        if args.command == "conf":
            print(json.dumps(spark_conf(args.bundles, home=args.home), indent=1))
            return 0
        if args.command == "jars":
            found = [bundle_jars(name, home=args.home) for name in args.bundles]
            missing = [name for name, jars in zip(args.bundles, found, strict=True) if jars is None]
            if missing:
                print(f"error: not fetched: {', '.join(missing)} (run: python -m streaming_dq.runtime.jvm fetch "
                      f"{' '.join(missing)})", file=sys.stderr)  # fmt: skip
                return 1
            listed = [str(j) for jars in found for j in jars or ()]
            if "s3" in args.bundles:
                listed.append(str(log_store_jar(args.home)))
            print(",".join(listed))
            return 0
        no_delta = delta_refusal(what="the delta bundle", instead="skipped (delta-rs writes there)")
        for name in with_needs(args.bundles):
            if name == "delta" and no_delta:
                print(no_delta)
                continue
            if not bundle(name):
                print(f"{name}: in pyspark's own JARs")
                continue
            jars = fetch(name, home=args.home, keep_spark_duplicates=name == "kafka-broker")
            print(f"{name}: {len(jars)} JARs in {jars[0].parent if jars else args.home}")
            if (
                name == "s3" and not no_delta
            ):  # Delta's commits through S3A as conditional writes: compiled here
                print(f"s3: the S3 LogStore in {log_store_jar(args.home)}")
    except JarFetchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
