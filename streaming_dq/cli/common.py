"""What every ``streaming-dq`` command shares: exit codes, argument types, consoles and config-problem output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from streaming_dq.core.modes import FailOn
from streaming_dq.exceptions import ConfigError

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "ConfigArg",
    "FailOnOption",
    "JsonOption",
    "QuietOption",
    "console",
    "count",
    "fail_config",
    "problems_of",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT; a SIGTERM stop exits 143

ConfigArg = Annotated[Path, typer.Argument(help="The gate config file (YAML).", show_default=False)]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print a JSON document for machines instead of text.", metavar="")
]

FailOnOption = Annotated[
    FailOn,
    typer.Option(
        "--fail-on",
        help="Exit 1 when a check of this severity failed: critical, warning (or critical), never.",
        metavar="critical|warning|never",
    ),
]
QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress lines on stderr (Spark start, chunks, tables).")
]


def console(*, stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def problems_of(exc: ConfigError) -> list[ConfigError]:
    return list(getattr(exc, "errors", None) or [exc])


def problem_json(problem: ConfigError) -> dict[str, str | None]:
    return {"file": problem.source, "field": problem.field_path, "reason": problem.reason}


def fail_config(problems: list[ConfigError], *, as_json: bool) -> typer.Exit:
    """Print every config problem (``FILE: FIELD.PATH: reason``) and return the exit to raise."""
    if as_json:
        typer.echo(json.dumps({"ok": False, "problems": [problem_json(p) for p in problems]}, indent=2))
    else:
        for problem in problems:
            typer.echo(str(problem), err=True)
    return typer.Exit(EXIT_USAGE)


def count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
