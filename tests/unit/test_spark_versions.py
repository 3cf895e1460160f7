"""The supported Spark range, declared once, and what the package says and does outside it (#56). JVM-free: the
command runs against stand-in pyspark packages put first on PYTHONPATH (only their version module), which is
what the check reads before anything imports the rest of pyspark."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from streaming_dq.compat import artifacts, versions
from streaming_dq.exceptions import UnsupportedSparkError

pytestmark = pytest.mark.compat  # every Spark tier checks its own pyspark against the range

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
COMMAND = Path(sys.executable).with_name("streaming-dq")


def test_the_package_requires_no_pyspark_and_its_spark_extra_declares_the_range() -> None:
    project = PYPROJECT["project"]

    assert not [d for d in project["dependencies"] if d.lower().startswith(("pyspark", "delta-spark"))]
    assert project["optional-dependencies"]["spark"] == ["pyspark[connect]>=3.5,<4.4"]
    assert versions.supported_range() == ">=3.5,<4.4"  # read back from the installed metadata


@pytest.mark.parametrize(
    ("found", "ok"),
    [
        ("3.4.4", False),
        ("3.5.0", True),
        ("3.5.9", True),
        ("4.0.0.dev1", True),
        ("4.3.0", True),
        ("4.4.0", False),
    ],
)
def test_the_range_holds_each_version_as_pip_would(found: str, ok: bool) -> None:
    assert versions._in_range(found, versions.supported_range()) is ok


def test_features_are_named_once_with_the_version_that_brought_them() -> None:
    assert [versions.has(f, "3.5.9") for f in ("to_arrow", "variant", "kll_sketch", "try_to_date")] == [
        False,
        False,
        False,
        False,
    ]
    assert [versions.has(f, "4.0.5") for f in ("to_arrow", "variant", "kll_sketch", "try_to_date")] == [
        True,
        True,
        False,
        False,
    ]
    assert all(versions.has(f, "4.1.4") for f in ("to_arrow", "variant", "kll_sketch", "try_to_date"))
    assert versions.missing("kll_sketch", what="quantile-check ('p95')", version="4.1.0") is None
    assert versions.missing("kll_sketch", what="quantile-check ('p95')", version="4.0.5") == (
        "quantile-check ('p95') needs Spark 4.1 or newer (KLL quantile sketches (kll_sketch_agg_double)); "
        "this is Spark 4.0.5"
    )


def test_each_spark_line_names_its_scala_build_delta_and_connectors() -> None:
    assert artifacts.spark_line("3.5.9").delta == artifacts.MavenArtifact(
        "io.delta", "delta-spark_2.12", "3.3.2"
    )
    assert artifacts.spark_line("3.5.0").scala == "2.12"
    for minor in ("4.0", "4.1", "4.2"):
        line = artifacts.spark_line(f"{minor}.3")
        assert line.scala == "2.13"
        assert line.delta is not None and line.delta.artifact == f"delta-spark_{minor}_2.13"
        assert line.connectors.startswith(f"{minor}.")  # the Kafka reader and spark-avro of the same line
    assert artifacts.spark_line("4.3.0").delta is None
    assert artifacts.delta_refusal("4.2.0") is None
    refused = artifacts.delta_refusal("4.3.0")
    assert refused is not None and "Spark 4.3.0" in refused and "writer: delta-rs" in refused
    with pytest.raises(UnsupportedSparkError, match=r"Spark 3\.4"):
        artifacts.spark_line("3.4.1")


def stand_in(tmp_path: Path, version: str | None) -> dict[str, str]:
    """An environment whose first ``pyspark`` package has only ``version`` (None: no version module, as
    without pyspark the import of ``pyspark.version`` fails)."""
    package = tmp_path / "pyspark"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    if version is not None:
        (package / "version.py").write_text(f"__version__ = {version!r}\n", encoding="utf-8")
    return {**os.environ, "PYTHONPATH": str(tmp_path)}


@pytest.mark.parametrize(("version", "says"), [("3.4.1", "finds pyspark 3.4.1"), (None, "finds none here")])
def test_the_command_outside_the_range_says_so_in_one_line_and_exits_2(
    tmp_path: Path, version: str | None, says: str
) -> None:
    config = tmp_path / "job.yaml"
    config.write_text("gate: {name: x}\n", encoding="utf-8")

    done = subprocess.run(
        [str(COMMAND), "validate", str(config)],
        env=stand_in(tmp_path, version),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert says in lines[0]
    assert ">=3.5,<4.4" in lines[0] and "streaming-dq[spark]" in lines[0]


def test_a_program_importing_the_package_gets_the_error_with_the_range(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import streaming_dq"],
        env=stand_in(tmp_path, "4.4.0"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 1
    assert (
        "UnsupportedSparkError: streaming-dq runs on pyspark >=3.5,<4.4 and finds pyspark 4.4.0"
        in done.stderr
    )
