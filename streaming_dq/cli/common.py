"""What every ``streaming-dq`` command shares: exit codes, argument types, consoles and config-problem output."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

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
    "duration_of",
    "fail_config",
    "problems_of",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT; a SIGTERM stop exits 143

ConfigArg = Annotated[
    Path, typer.Argument(help="The gate config file (YAML).", show_default=False, metavar="CONFIG")
]
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


def duration_of(text: str, option: str) -> timedelta:
    """An option's duration in the one grammar of configs and commands (``5s``, ``15 min``, ``90d``; a bare
    number is seconds).

    Raises:
        ConfigError: not a duration, naming ``option``.
    """
    from streaming_dq.core.scope import parse_duration

    try:
        return parse_duration(text, bare_seconds=True)
    except ConfigError as exc:
        raise ConfigError(exc.reason, field_path=option) from None


#: How an option's value reads in help, for typer's Python type names.
_TYPE_NAMES = {"int range": "N", "int": "N", "float range": "NUMBER", "float": "NUMBER", "str": "TEXT",
               "path": "PATH"}  # fmt: skip


def plain_help() -> None:
    """Help that reads as a command line (#42). typer 0.29 prints a flag's type beside it (``--dry-run
    <bool>``, ``--help <bool>``: as if it took a value), an argument's Python type (``<list[Path]>``) beside
    its name, and a required argument in braces (``{config}``). Here a flag shows no type, an argument with a
    metavar shows that name only, and a required argument is its bare name. Applied once, by
    :mod:`streaming_dq.cli.main`; a later typer without these hooks is left as it is.
    """
    from typer.core import TyperArgument, TyperOption

    if getattr(TyperOption, "_streaming_dq_plain", False):
        return
    option_type = TyperOption.display_type_rich
    argument_usage = getattr(TyperArgument, "_usage_display_name", None)

    def flag_type(self: Any, ctx: Any) -> str | None:
        if self.is_flag:
            return None
        shown = option_type(self, ctx)
        if shown is None or self.metavar is not None:
            return shown
        inner = str(shown).strip("<>")
        return _TYPE_NAMES.get(inner, inner)  # <int range> -> N, <path> -> PATH, <json|csv> -> json|csv

    def argument_type(self: Any, ctx: Any) -> str | None:
        return None  # the argument's metavar (its name) says what it takes

    def usage_name(self: Any) -> str:
        shown = str(argument_usage(self))  # type: ignore[misc]
        return shown.replace("{", "").replace("}", "") if self.required else shown

    TyperOption.display_type_rich = flag_type  # type: ignore[method-assign]
    TyperArgument.display_type_rich = argument_type  # type: ignore[method-assign]
    if argument_usage is not None:
        TyperArgument._usage_display_name = usage_name  # type: ignore[method-assign]
    TyperOption._streaming_dq_plain = True  # type: ignore[attr-defined]


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
