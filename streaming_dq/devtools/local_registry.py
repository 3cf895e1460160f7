"""A schema registry on 127.0.0.1 for the schema-registry Kafka tests and demo (#46): Apicurio Registry, whose
Confluent-compatible API (``/apis/ccompat/v7``) confluent-kafka's serializers and the gate speak.

:func:`fetch` downloads the app's ``tar.gz`` assembly (``io.apicurio:apicurio-registry-app``, classifier
``all``: a Quarkus fast-jar) from Maven Central, checks its SHA-1 against the one Maven Central publishes, and
unpacks it under ``$STREAMING_DQ_JARS/apicurio-registry/<version>`` (``make registry`` runs it). The registry
needs Java 21 or newer; Spark keeps its own JVM: :func:`registry_java` finds a newer JDK beside it
(``$STREAMING_DQ_REGISTRY_JAVA``, else the newest ``/usr/lib/jvm/*/bin/java`` or ``java`` on the PATH that is
21+). :func:`local_registry` starts it with its in-memory storage (or an H2 file, to be restarted), bound to 127.0.0.1 only (its HTTP and
management ports both), and stops it when the block ends.

Example:
    >>> with local_registry(Path("/tmp/registry")) as url:  # doctest: +SKIP
    ...     print(url)  # http://127.0.0.1:40123/apis/ccompat/v7
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from streaming_dq.devtools.local_kafka import free_port, log_tail, stop_group
from streaming_dq.exceptions import ConfigError, LocalServerError

__all__ = ["REGISTRY_VERSION", "fetch", "local_registry", "registry_home", "registry_java"]

REGISTRY_VERSION = "3.3.3"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
_ARTIFACT = "io/apicurio/apicurio-registry-app/{v}/apicurio-registry-app-{v}-all.tar.gz"
MIN_JAVA = 21


def registry_home(version: str = REGISTRY_VERSION) -> Path:
    """Where the unpacked registry lives (its ``quarkus-run.jar`` at the top)."""
    from streaming_dq.runtime.jvm import jars_home

    return jars_home() / "apicurio-registry" / version


def fetch(version: str = REGISTRY_VERSION) -> Path:
    """Download, check and unpack the registry (nothing when it is there already); its folder.

    Raises:
        LocalServerError: the download failed or its SHA-1 is not Maven Central's.
    """
    home = registry_home(version)
    if (home / "quarkus-run.jar").is_file():
        return home
    url = f"{MAVEN_CENTRAL}/{_ARTIFACT.format(v=version)}"
    home.parent.mkdir(parents=True, exist_ok=True)
    archive = home.parent / f"apicurio-registry-app-{version}-all.tar.gz"
    try:
        with urllib.request.urlopen(url + ".sha1", timeout=60) as answer:
            expected = answer.read().decode().split()[0].strip()
        digest = hashlib.sha1(usedforsecurity=False)
        if archive.is_file():  # an earlier download that was not unpacked: checked like a new one
            with archive.open("rb") as kept:
                while chunk := kept.read(1 << 20):
                    digest.update(chunk)
        if digest.hexdigest() != expected:
            digest = hashlib.sha1(usedforsecurity=False)
            with urllib.request.urlopen(url, timeout=600) as answer, archive.open("wb") as out:
                while chunk := answer.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
    except (urllib.error.URLError, OSError) as exc:
        raise LocalServerError(f"could not download {url}: {exc}") from exc
    if digest.hexdigest() != expected:
        archive.unlink(missing_ok=True)
        raise LocalServerError(f"{url}: SHA-1 {digest.hexdigest()} is not Maven Central's {expected}")
    partial = home.with_name(home.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(partial, filter="data")
    partial.rename(home)  # whole or not at all: a second run finds the jar only when everything is there
    archive.unlink()
    return home


def _java_major(java: str) -> int | None:
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, check=False)
    except OSError:
        return None
    match = re.search(r'version "(\d+)', done.stderr + done.stdout)
    return int(match.group(1)) if match else None


def registry_java() -> str:
    """A ``java`` of version 21 or newer (see the module).

    Raises:
        ConfigError: none was found (what to install or set).
    """
    configured = os.environ.get("STREAMING_DQ_REGISTRY_JAVA")
    if configured:
        major = _java_major(configured)
        if major is None or major < MIN_JAVA:
            raise ConfigError(f"STREAMING_DQ_REGISTRY_JAVA={configured} is not Java {MIN_JAVA} or newer")
        return configured
    found = [str(p) for p in Path("/usr/lib/jvm").glob("*/bin/java")]
    found += [j] if (j := shutil.which("java")) else []
    versions = [
        (major, java) for java in dict.fromkeys(found) if (major := _java_major(java)) and major >= MIN_JAVA
    ]
    if not versions:
        raise ConfigError(
            f"the schema registry needs Java {MIN_JAVA} or newer and none was found (set "
            "STREAMING_DQ_REGISTRY_JAVA to its java, or install a JDK 21+ under /usr/lib/jvm)"
        )
    return max(versions)[1]


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/subjects", timeout=2) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def local_registry(
    workdir: Path, *, timeout: float = 120.0, port: int | None = None, storage: Path | None = None
) -> Iterator[str]:
    """Run the registry with its log under ``workdir``; yields its Confluent-compatible API's URL.

    ``port`` (default: a free one) and ``storage`` (default: in memory; else an H2 database in that folder,
    which the registry ships) let a registry be stopped and started again with what it held: an outage.

    Raises:
        ConfigError: not fetched, or no Java 21+.
        LocalServerError: it exited or did not answer in time (with the tail of its log).
    """
    home = registry_home()
    if not (home / "quarkus-run.jar").is_file():
        raise ConfigError(f"no schema registry in {home}: run `make registry` (python -m {__name__} fetch)")
    java = registry_java()
    workdir.mkdir(parents=True, exist_ok=True)
    port, management = port or free_port(), free_port()
    settings: dict[str, object] = {
        "quarkus.http.host": "127.0.0.1",
        "quarkus.http.port": port,
        "quarkus.management.host": "127.0.0.1",
        "quarkus.management.port": management,
        "quarkus.log.console.level": "WARN",
    }
    if storage is not None:
        storage.mkdir(parents=True, exist_ok=True)
        settings |= {
            "apicurio.storage.kind": "sql",
            "apicurio.storage.sql.kind": "h2",
            "apicurio.datasource.url": f"jdbc:h2:file:{storage.resolve() / 'registry'}",
        }
    command = [java, "-Xms128m", "-Xmx512m", *[f"-D{k}={v}" for k, v in settings.items()], "-jar",
               str(home / "quarkus-run.jar")]  # fmt: skip
    log = workdir / "registry.log"
    with open(log, "ab") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, cwd=workdir, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}/apis/ccompat/v7"
    try:
        deadline = time.monotonic() + timeout
        while not _ready(url):
            if process.poll() is not None:
                raise LocalServerError(
                    f"the schema registry exited with {process.returncode}:\n{log_tail(log)}"
                )
            if time.monotonic() > deadline:
                raise LocalServerError(
                    f"the schema registry did not answer in {timeout:.0f} s:\n{log_tail(log)}"
                )
            time.sleep(0.3)
        yield url
    finally:
        stop_group(process)


def main(argv: list[str]) -> int:
    if argv[:1] != ["fetch"]:
        print(f"usage: python -m {__name__} fetch [VERSION]", file=sys.stderr)
        return 2
    print(fetch(*argv[1:2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
