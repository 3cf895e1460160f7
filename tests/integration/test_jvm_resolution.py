"""Spark's own resolution of the gate's JARs (``spark.jars.packages``, used when no fetched folder holds them)
on a machine whose local Maven repository holds POM files without their JARs, and a resolution that fails
(#27): a subprocess each, since the JVM resolves its packages once, when it starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CLI = Path(sys.executable).parent / "streaming-dq"
SLF4J_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>2.0.13</version></project>
"""
WRITE_DELTA = """
import sys
from streaming_dq.config.sections import SparkSection
from streaming_dq.runtime.session import build_spark_session
session, _ = build_spark_session(SparkSection(), app_name="resolution", writer="spark")
print(session.conf.get("spark.jars.packages"))
session.range(3).write.format("delta").save(sys.argv[1])
print("rows", session.read.format("delta").load(sys.argv[1]).count())
session.stop()
"""


def _env(tmp_path: Path) -> dict[str, str]:
    """No fetched JARs (so Spark resolves them), and a Java user home whose ~/.m2 has a POM without its JAR
    (what an earlier ``mvn`` run leaves: Maven fetched the POM to compare versions, never the JAR)."""
    home = tmp_path / "home"
    pom = home / ".m2" / "repository" / "org" / "slf4j" / "slf4j-api" / "2.0.13" / "slf4j-api-2.0.13.pom"
    pom.parent.mkdir(parents=True)
    pom.write_text(SLF4J_POM, encoding="utf-8")
    (tmp_path / "no-jars").mkdir()
    return {
        **os.environ,
        "STREAMING_DQ_JARS": str(tmp_path / "no-jars"),
        "JAVA_TOOL_OPTIONS": f"-Duser.home={home}",  # Ivy reads ~/.m2 and keeps its cache under user.home
    }


def test_spark_resolves_the_delta_jars_past_a_pom_only_local_maven_repository(tmp_path: Path) -> None:
    """Spark's default Ivy chain asks ~/.m2 first and trusts the POM there: ``download failed:
    org.slf4j#slf4j-api;2.0.13!slf4j-api.jar`` and a JAVA_GATEWAY_EXITED traceback. The packaged Ivy
    settings resolve from Maven Central only."""
    table = tmp_path / "table"
    done = subprocess.run(
        [sys.executable, "-c", WRITE_DELTA, str(table)],
        env=_env(tmp_path), capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "io.delta:delta-spark" in done.stdout and "rows 3" in done.stdout
    assert "download failed" not in done.stderr


def test_a_package_that_cannot_be_resolved_is_one_line_naming_it_and_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "gate.yaml"
    config.write_text(
        "gate: {name: orders}\n"
        "source: {format: json, path: ./landing, schema: 'id int'}\n"
        "targets: {pass: ./pass, quarantine: ./quarantine, writer: delta-rs}\n"
        "checkpoint: ./cp\n"
        "spark: {conf: {spark.jars.packages: 'org.example.nothing:no-such-artifact:0.0.1'}}\n"
        "checks: [{check: null-check, check-id: id-present, columns: [id]}]\n",
        encoding="utf-8",
    )
    (tmp_path / "landing").mkdir()
    done = subprocess.run(
        [str(CLI), "run", str(config)],
        env=_env(tmp_path), capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: cannot fetch the org.example.nothing:no-such-artifact:0.0.1 JARs: ")
    assert "org.example.nothing#no-such-artifact;0.0.1" in last and "spark.jars.packages" in last
    assert "Traceback" not in done.stderr


def test_the_s3_log_store_is_compiled_from_its_source_once_per_version(tmp_path):
    """``log_store_jar`` compiles ``S3ConditionalLogStore.java`` with javac against the delta bundle's
    delta-storage into ``<home>/logstore/`` (what ``make jars`` does); a second call finds it; without the
    delta bundle it says what to fetch."""
    import zipfile

    from streaming_dq.exceptions import JarFetchError
    from streaming_dq.runtime.jvm import jars_home, log_store_jar

    (tmp_path / "delta").symlink_to(jars_home() / "delta")  # the fetched bundle, under a fresh home
    assert log_store_jar(tmp_path, build=False) is None
    jar = log_store_jar(tmp_path)
    assert jar is not None and jar.parent == tmp_path / "logstore"
    with zipfile.ZipFile(jar) as archive:
        assert "io/streamingdq/delta/S3ConditionalLogStore.class" in archive.namelist()
    built = jar.stat().st_mtime_ns
    assert log_store_jar(tmp_path) == jar and jar.stat().st_mtime_ns == built  # not compiled again
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(JarFetchError, match="fetch the delta bundle first"):
        log_store_jar(empty)


@pytest.mark.parametrize("order", [["s3"], ["s3", "delta"]])
def test_fetch_s3_on_its_own_fetches_what_it_needs_first(tmp_path: Path, order: list[str]) -> None:
    """#42: `python -m streaming_dq.runtime.jvm fetch s3`, the one command docs/deploy.md gives for S3A, failed
    on its own ('fetch the delta bundle first'), and so did `fetch s3 delta`."""
    done = subprocess.run(
        [sys.executable, "-m", "streaming_dq.runtime.jvm", "fetch", *order, "--home", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("delta: ") and lines[1].startswith("s3: ")
    assert "the S3 LogStore in" in lines[2]
    assert (tmp_path / "delta" / "manifest.json").exists() and (tmp_path / "s3" / "manifest.json").exists()
