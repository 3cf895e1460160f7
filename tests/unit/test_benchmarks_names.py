"""The benchmarks run as scripts and subprocesses with their folder on ``sys.path``: no module there may take a
standard library module's name (``benchmarks/calendar.py`` once broke every peer that imported ``calendar``)."""

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_no_benchmark_module_shadows_the_standard_library() -> None:
    names = {path.stem for path in BENCHMARKS.glob("*.py")}
    assert "run" in names  # the folder is where this test thinks it is
    assert sorted(names & set(sys.stdlib_module_names)) == []
