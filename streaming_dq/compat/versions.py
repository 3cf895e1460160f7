"""Which pyspark runs here, whether the package supports it, and what it can carry.

The supported range is declared once: the ``spark`` extra of pyproject.toml (``pyspark[connect]>=3.5,<4.4``),
read back here from the installed package's metadata. The runtime brings pyspark (Databricks, EMR, a Spark
image); the package itself requires none, so pip never replaces the runtime's own.

What differs between the supported versions is named once, as a :class:`Feature` with the first version that
has it; call sites ask :func:`has` (or the adapters of :mod:`streaming_dq.compat.spark` ask it for them) and
never compare versions themselves. A feature an older Spark cannot carry is refused by ``validate`` and ``run``
with :func:`missing` (one line naming the feature and the version), before Spark starts.

Example:
    >>> parse_version("3.5.9") < parse_version("4.0.0")
    True
    >>> FEATURES["variant"].since
    (4, 0)
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path

from streaming_dq.exceptions import UnsupportedSparkError

__all__ = [
    "FEATURES",
    "Feature",
    "check_at_import",
    "has",
    "missing",
    "parse_version",
    "pyspark_version",
    "require_pyspark",
    "spark_minor",
    "supported_range",
]

#: The extra that brings a default pyspark for local use (``pip install 'streaming-dq[spark]'``).
SPARK_EXTRA = "spark"
_DISTRIBUTION = "streaming-dq"


@dataclass(frozen=True)
class Feature:
    """A capability some supported Spark versions lack.

    Attributes:
        name: The key call sites use.
        since: The first (major, minor) that has it.
        words: What it is, for the refusal's line.
    """

    name: str
    since: tuple[int, int]
    words: str


#: Every difference between supported versions that the package adapts or refuses, by name.
FEATURES: dict[str, Feature] = {
    f.name: f
    for f in (
        Feature("to_arrow", (4, 0), "DataFrame.toArrow"),
        Feature("create_from_arrow", (4, 0), "createDataFrame of an Arrow table"),
        Feature("ddl_schema", (4, 0), "StructType.fromDDL"),
        Feature("is_valid_utf8", (4, 0), "the SQL function is_valid_utf8"),
        Feature("try_to_date", (4, 1), "the SQL function try_to_date"),
        Feature("kll_sketch", (4, 1), "KLL quantile sketches (kll_sketch_agg_double)"),
        Feature("variant", (4, 0), "the VARIANT type and its JSON parser (try_parse_json)"),
        Feature("transform_with_state", (4, 0), "transformWithState"),
        Feature("error_conditions", (4, 0), "error conditions (getCondition)"),
        Feature("arrow_schema_timezone", (4, 2), "to_arrow_schema(timezone=...)"),
        Feature(
            "s3a_conditional_create",
            (4, 1),
            "S3A's conditional create, in the Hadoop 3.4.2 pyspark ships since 4.1: Delta's commits on S3 by "
            "conditional write",
        ),
    )
}


def parse_version(text: str) -> tuple[int, int, int]:
    """``(major, minor, patch)`` of a version string (``4.2.0``, ``3.5.0.dev0``, ``4.1.0+databricks``).

    Example:
        >>> parse_version("4.1.0+db"), parse_version("3.5")
        ((4, 1, 0), (3, 5, 0))
    """
    numbers = [int(n) for n in re.findall(r"\d+", text.split("+")[0])[:3]]
    major, minor, patch = [*numbers, 0, 0, 0][:3]
    return major, minor, patch


@cache
def pyspark_version() -> str | None:
    """The version of the importable pyspark (databricks-connect's own included), or None without one."""
    try:
        from pyspark.version import __version__
    except ImportError:
        return None
    return str(__version__)


def spark_minor(version: str | None = None) -> str:
    """``"3.5"`` of the running (or the given) pyspark.

    Raises:
        UnsupportedSparkError: No pyspark and no version given.
    """
    found = version or pyspark_version()
    if found is None:
        raise UnsupportedSparkError(_none_line(), supported=supported_range())
    major, minor, _ = parse_version(found)
    return f"{major}.{minor}"


@cache
def supported_range() -> str:
    """The ``spark`` extra's pyspark specifier (``>=3.5,<4.4``), from the installed package's metadata (or,
    in a checkout that was never installed, from its pyproject.toml)."""
    try:
        requirements = metadata.requires(_DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        requirements = _checkout_requirements()
    for requirement in requirements:
        text = requirement.split(";")[0].strip()
        marker = requirement.split(";", 1)[1] if ";" in requirement else ""
        if re.match(r"pyspark\b", text) and re.search(rf"extra\s*==\s*['\"]{SPARK_EXTRA}['\"]", marker):
            bounds = re.sub(r"^pyspark(\[[^\]]*\])?\s*", "", text).replace(" ", "").split(",")
            return ",".join(sorted(bounds, key=lambda b: not b.startswith(">")))  # the lower bound first
    raise UnsupportedSparkError(
        f"the {_DISTRIBUTION} metadata declares no pyspark in its '{SPARK_EXTRA}' extra"
    )


def _checkout_requirements() -> list[str]:
    import tomllib

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    return [f'{r} ; extra == "{SPARK_EXTRA}"' for r in extras.get(SPARK_EXTRA, [])]


def _in_range(version: str, specifier: str) -> bool:
    from packaging.specifiers import SpecifierSet

    release = ".".join(str(n) for n in parse_version(version))
    return SpecifierSet(specifier).contains(release, prereleases=True)


def _none_line() -> str:
    return (
        f"streaming-dq runs on pyspark {supported_range()} and finds none here: the Spark runtime brings it "
        f"(Databricks, EMR, a Spark image), or `pip install 'streaming-dq[{SPARK_EXTRA}]'` brings a default"
    )


def require_pyspark() -> str:
    """The running pyspark's version, when the package supports it.

    Raises:
        UnsupportedSparkError: No pyspark, or one outside :func:`supported_range` (one line naming the
            range and the extra).
    """
    found = pyspark_version()
    supported = supported_range()
    if found is None:
        raise UnsupportedSparkError(_none_line(), supported=supported)
    if not _in_range(found, supported):
        raise UnsupportedSparkError(
            f"streaming-dq runs on pyspark {supported} and finds pyspark {found}: install a pyspark in that "
            f"range, or `pip install 'streaming-dq[{SPARK_EXTRA}]'` for the default",
            found=found,
            supported=supported,
        )
    return found


#: The console script: where a refusal is one line and exit code 2 (a usage error), not a traceback.
COMMAND = "streaming-dq"


def check_at_import() -> None:
    """:func:`require_pyspark` as ``import streaming_dq`` runs it: the ``streaming-dq`` command prints the one
    line and exits with 2 before anything starts; a program importing the package gets the error.

    Raises:
        UnsupportedSparkError: No supported pyspark, in a program other than the command.
    """
    try:
        require_pyspark()
    except UnsupportedSparkError as exc:
        if Path(sys.argv[0] if sys.argv else "").name == COMMAND:
            sys.stderr.write(f"{COMMAND}: {exc}\n")
            raise SystemExit(2) from None
        raise


def has(feature: str, version: str | None = None) -> bool:
    """Whether the running (or the given) Spark has ``feature`` (a key of :data:`FEATURES`).

    Example:
        >>> has("variant", "3.5.9"), has("variant", "4.0.1")
        (False, True)
    """
    wanted = FEATURES[feature].since
    return parse_version(version or pyspark_version() or "0")[:2] >= wanted


def missing(feature: str, *, what: str, version: str | None = None) -> str | None:
    """The one line that refuses ``what`` on a Spark without ``feature``, or None when it has it.

    Example:
        >>> missing("variant", what="json-format-check", version="3.5.9")
        'json-format-check needs Spark 4.0 or newer (the VARIANT type and its JSON parser (try_parse_json)); this is Spark 3.5.9'
    """
    found = version or pyspark_version() or "0"
    if has(feature, found):
        return None
    f = FEATURES[feature]
    return f"{what} needs Spark {f.since[0]}.{f.since[1]} or newer ({f.words}); this is Spark {found}"
