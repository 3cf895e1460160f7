"""What the installed pyspark ships in its ``jars`` folder: its Hadoop client's version (which hadoop-aws fits),
the artifacts a fetched bundle must not load twice, whether the Spark Connect server is among them."""

from __future__ import annotations

import re
from pathlib import Path

from streaming_dq.exceptions import ConfigError

__all__ = ["artifact_of", "pyspark_home", "spark_hadoop_version", "spark_jar_artifacts"]

_JAR_NAME = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d[^-]*(?:-[^-]+)*?)\.jar$")


def pyspark_home() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent)


def spark_hadoop_version() -> str:
    """The version of the Hadoop client pyspark ships (``hadoop-client-api-<version>.jar``)."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    for jar in sorted(jars.glob("hadoop-client-api-*.jar")):
        return jar.name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    raise ConfigError(f"pyspark ships no hadoop-client-api JAR in {jars}: cannot choose hadoop-aws")


def spark_jar_artifacts() -> set[str]:
    """Artifact names of the JARs the installed pyspark ships (``jackson-core``, ``hadoop-client-api`` ...)."""
    import pyspark

    folder = Path(pyspark.__file__).parent / "jars"
    return {artifact_of(p.name) for p in folder.glob("*.jar")}


def artifact_of(jar_name: str) -> str:
    match = _JAR_NAME.match(jar_name)
    return match.group("artifact") if match else jar_name.removesuffix(".jar")
