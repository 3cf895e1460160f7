"""Why Spark could not resolve ``spark.jars.packages`` (Ivy), in one line.

When no fetched folder holds a bundle (:mod:`~streaming_dq.runtime.jvm`), Spark resolves its coordinates with
Ivy as the session starts (:func:`~streaming_dq.runtime.jvm.ivy_settings` points that at Maven Central
alone); when the JVM exits before the session exists, :func:`resolution_error` names the first artifact Ivy
could not get and the fix.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from streaming_dq.exceptions import JarFetchError
from streaming_dq.runtime.jvm import BUNDLES, bundle

__all__ = ["resolution_error"]


#: Lines of Ivy's report that name what it could not resolve.
_IVY_FAILURE = re.compile(
    r"(download failed: \S+|unresolved dependency: [^\n]+?(?=\s*$)|not found: \S+)", re.M
)


def resolution_error(packages: Sequence[str], settings: str | None) -> JarFetchError:
    """Why Spark could not resolve ``packages`` (the JVM exited before the session started), in one line.

    Ivy's report went to the JVM's own stderr; it is run again here (the Ivy JAR pyspark ships, the same
    settings) to name the first artifact it could not get.
    """
    coordinates = ",".join(packages)
    ours = [name for name in BUNDLES if any(a.coordinate in packages for a in bundle(name))]
    fix = (
        f"fetch them once with `python -m streaming_dq.runtime.jvm fetch {' '.join(ours)}` (Maven; what `make jars` "
        "runs; STREAMING_DQ_JARS names the folder), or check the network and proxy to Maven Central"
        if ours
        else "check the coordinates in spark.conf's spark.jars.packages, and the network to Maven Central"
    )
    return JarFetchError(
        coordinates, f"{_ivy_failure(packages, settings) or 'Spark could not resolve them'}; {fix}"
    )


def _ivy_failure(packages: Sequence[str], settings: str | None) -> str | None:
    import pyspark

    java = (
        shutil.which("java", path=str(Path(os.environ["JAVA_HOME"]) / "bin"))
        if "JAVA_HOME" in os.environ
        else None
    )
    java = java or shutil.which("java")
    ivy = sorted((Path(pyspark.__file__).parent / "jars").glob("ivy-*.jar"))
    if java is None or not ivy:
        return None
    for coordinate in packages:
        group, artifact, version = [*coordinate.split(":"), "", "", ""][:3]
        command = [java, "-cp", str(ivy[-1]), "org.apache.ivy.Main", "-dependency", group, artifact, version,
                   "-confs", "default"] + (["-settings", settings] if settings else [])  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        found = _IVY_FAILURE.search(done.stdout + done.stderr)
        if done.returncode != 0 or found:
            return found.group(1).strip() if found else f"{coordinate} did not resolve"
    return None
