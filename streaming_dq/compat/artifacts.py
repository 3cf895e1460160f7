"""The JVM artifacts that fit each supported Spark line: Delta's Spark writer, the Kafka reader, spark-avro.

Data, not fetching: :mod:`streaming_dq.runtime.jvm` fetches what this names, and config validation refuses
``writer: spark`` on a Spark no Delta release supports (:func:`delta_refusal`) before Spark starts.

Example:
    >>> spark_line("3.5.9").delta.coordinate
    'io.delta:delta-spark_2.12:3.3.2'
    >>> spark_line("4.3.0").delta is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from streaming_dq.compat.versions import pyspark_version, spark_minor
from streaming_dq.exceptions import UnsupportedSparkError

__all__ = ["SPARK_LINES", "MavenArtifact", "SparkLine", "delta_refusal", "spark_line"]


@dataclass(frozen=True)
class MavenArtifact:
    """A Maven coordinate ``group:artifact:version``."""

    group: str
    artifact: str
    version: str

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"


@dataclass(frozen=True)
class SparkLine:
    """The JVM artifacts that fit one Spark minor line.

    Attributes:
        scala: The Scala build of Spark's own Maven artifacts (3.5: 2.12; 4.x: 2.13).
        delta: The delta-spark artifact for this Spark, or None where no Delta release supports it (Spark's
            Delta writer cannot run there; delta-rs, the embedded default, still writes).
        connectors: The version of Spark's Kafka reader and spark-avro: the newest patch of the line whose
            Central serves here (a connector of the same minor line fits every patch of it).
    """

    scala: str
    delta: MavenArtifact | None
    connectors: str


#: Per Spark minor line, its artifacts (docs/deploy.md, "Spark versions", prints this table). Since Delta 4.1
#: the artifact name carries the Spark it was built for; Delta 3.3 is the last line for Spark 3.5 (Scala 2.12,
#: EMR 7's Delta). No delta-spark_4.3 exists on Maven Central (tried 4.4.0 and 4.4.1 on 2026-12-07).
SPARK_LINES: Mapping[str, SparkLine] = {
    "3.5": SparkLine("2.12", MavenArtifact("io.delta", "delta-spark_2.12", "3.3.2"), "3.5.7"),
    "4.0": SparkLine("2.13", MavenArtifact("io.delta", "delta-spark_4.0_2.13", "4.4.0"), "4.0.0"),
    "4.1": SparkLine("2.13", MavenArtifact("io.delta", "delta-spark_4.1_2.13", "4.4.0"), "4.1.1"),
    "4.2": SparkLine("2.13", MavenArtifact("io.delta", "delta-spark_4.2_2.13", "4.4.0"), "4.2.0"),
    "4.3": SparkLine("2.13", None, "4.2.0"),
}


def spark_line(spark_version: str | None = None) -> SparkLine:
    """The artifacts of the running (or the given) Spark's minor line.

    Raises:
        ConfigError: a Spark line the package does not know (outside the supported range).
    """
    minor = spark_minor(spark_version)
    line = SPARK_LINES.get(minor)
    if line is None:
        raise UnsupportedSparkError(
            f"no JVM artifacts are known for Spark {minor} (known: {', '.join(SPARK_LINES)})", found=minor
        )
    return line


def delta_refusal(
    spark_version: str | None = None,
    *,
    what: str = "writer: spark",
    instead: str = "use writer: delta-rs, which writes on every Spark",
) -> str | None:
    """Why ``what`` (which needs Delta's Spark JARs) cannot run on the running (or the given) Spark, in one
    line naming the version, or None when a Delta release supports it.

    Example:
        >>> delta_refusal("4.3.0", what="source.format: delta", instead="read the table as parquet")
        'source.format: delta needs delta-spark, and no Delta release supports Spark 4.3.0 (Delta runs on Spark 3.5, 4.0, 4.1, 4.2): read the table as parquet'
    """
    version = spark_version or pyspark_version() or "0"
    if spark_line(version).delta is not None:
        return None
    served = ", ".join(m for m, line in SPARK_LINES.items() if line.delta is not None)
    return (
        f"{what} needs delta-spark, and no Delta release supports Spark {version} (Delta runs on Spark "
        f"{served}): {instead}"
    )
