"""The commands on a gate's quarantine: ``streaming-dq release``, ``streaming-dq quarantine discard`` and
``streaming-dq quarantine show``.

Their options and help are here; the work is in :mod:`~streaming_dq.cli.releasing` (and below it
:mod:`streaming_dq.release`). :mod:`~streaming_dq.cli.main` registers them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, NoReturn

import typer
from rich.console import Console

from streaming_dq.cli.common import (
    ConfigArg,
    FailOnOption,
    JsonOption,
    QuietOption,
    console,
    fail_config,
    problems_of,
)
from streaming_dq.cli.sessions import Progress
from streaming_dq.exceptions import ConfigError

__all__ = ["discard", "release", "show"]

CheckOption = Annotated[
    list[str] | None,
    typer.Option(
        "--check", help="Rows quarantined for this check id (repeatable: any of them).", metavar="ID"
    ),
]
BatchesOption = Annotated[
    str | None,
    typer.Option("--batches", help="Rows of these batches: 'A..B', 'A..', '..B' or 'N'.", metavar="A..B"),
]


def release(
    config: ConfigArg,
    check: CheckOption = None,
    batches: BatchesOption = None,
    event_time: Annotated[
        str | None,
        typer.Option(
            "--event-time",
            help="Rows whose event time is in [FROM, TO): ISO dates or times, in the gate's time zone unless "
            "they carry an offset.",
            metavar="FROM..TO",
        ),
    ] = None,
    where: Annotated[
        str | None,
        typer.Option(
            "--where", help="A Spark SQL condition over the quarantine table's columns.", metavar="SQL"
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help='Fix a column before the rows are judged: "column = SQL expression" (repeatable).',
            metavar="FIX",
        ),
    ] = None,
    note: Annotated[
        str | None,
        typer.Option("--note", help="Recorded with the release (a ticket, a reason).", metavar="TEXT"),
    ] = None,
    chunk_rows: Annotated[
        int,
        typer.Option("--chunk-rows", min=1, help="Rows per committed chunk (whole batches).", metavar="N"),
    ] = 1_000_000,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count per check what would be released; write nothing.")
    ] = False,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
    fail_on: FailOnOption = "critical",
) -> None:
    """Judge quarantined rows again with the gate's current checks and release those that pass, exactly once.

    Released rows are appended to the pass table and marked in the quarantine table (`_dq_release`); rows
    that still fail stay, with their new reasons. Nothing is deleted. A release interrupted by a crash is
    finished by running the same command again. Exit 0, 1 when rows judged again still fail (unless
    `--fail-on never`), 2 on a config or option error (or another release of the gate that did not finish),
    130 when interrupted.
    """
    from streaming_dq.cli.releasing import run_release

    _finished("release", as_json, lambda out: run_release(
        config, out, dry_run=dry_run, as_json=as_json, chunk_rows=chunk_rows, progress=Progress(quiet),
        fail_on=fail_on, checks=check or [],
        batches=batches, event_time=event_time, where=where, sets=set_ or [], note=note,
    ))  # fmt: skip


def discard(
    config: ConfigArg,
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than",
            help="Rows validated longer ago than this, e.g. '90d' or '90 days'.",
            metavar="AGE",
        ),
    ],
    check: Annotated[
        list[str] | None,
        typer.Option("--check", help="Only rows quarantined for this check id (repeatable).", metavar="ID"),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count per check; delete nothing.")] = False,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Delete old quarantined rows for good (raw bad data often has a retention limit), recorded in the results
    table.

    One commit of the quarantine table; the files leave the storage with the next vacuum past the table's
    retention (`streaming-dq maintain --vacuum`). A discard interrupted by a crash is finished by running the same
    command again. Exit 0, 2 on a config or option error, 130 when interrupted.
    """
    from streaming_dq.cli.releasing import run_discard

    _finished("discard", as_json, lambda out: run_discard(
        config, out, older_than=older_than, checks=check or [], dry_run=dry_run, as_json=as_json,
        progress=Progress(quiet),
    ))  # fmt: skip


def show(
    config: ConfigArg,
    check: CheckOption = None,
    batches: BatchesOption = None,
    state: Annotated[
        list[str] | None,
        typer.Option(
            "--state",
            help="Rows in this state: quarantined, released or discarded (repeatable).",
            metavar="STATE",
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most N rows.", metavar="N")] = 20,
    mask: Annotated[
        list[str] | None,
        typer.Option("--mask", help="Show *** for this column's values (repeatable).", metavar="COLUMN"),
    ] = None,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Show the quarantined rows with their reasons and release state, in the table's order (--batches picks
    which part of the stream), and how many match.

    Reads the quarantine table with delta-rs (no Spark unless the config names catalog tables); writes nothing.
    Exit 0, 2 on a config or option error.
    """
    from streaming_dq.cli.quarantine_show import run_show

    out = console() if sys.stdout.isatty() else Console(highlight=False, width=400)
    try:
        code = run_show(
            config, out, checks=check or [], batches=batches, states=state or [], limit=limit, mask=mask or [],
            as_json=as_json, progress=Progress(quiet),
        )  # fmt: skip
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=as_json) from None
    raise typer.Exit(code)


def _finished(what: str, as_json: bool, work: Callable[[Console], int]) -> NoReturn:
    """Run a release or a discard and exit with its code: a config error names its field (exit 2), Ctrl-C says
    how to finish the work (exit 130)."""
    from streaming_dq.cli.common import EXIT_INTERRUPTED

    out = console() if sys.stdout.isatty() else Console(highlight=False, width=400)
    try:
        code = work(out)
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=as_json) from None
    except KeyboardInterrupt:
        console(stderr=True).print(f"interrupted: run the same command again to finish the {what}")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    raise typer.Exit(code)
