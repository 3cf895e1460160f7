"""``streaming-dq report CONFIG... [-o report.html] [--since 7d] [--mask COLUMN] [--json]``.

One self-contained HTML file for one gate or a fleet (each config, or each ``*.yaml`` of a folder, a section
of its own), read from the gates' tables with delta-rs: no Spark unless a config names catalog tables. Every
config and option is checked before a table is read.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from streaming_dq.cli.common import JsonOption, QuietOption, console, fail_config, problems_of
from streaming_dq.cli.sessions import Progress
from streaming_dq.exceptions import ConfigError

__all__ = ["report", "since_of"]


def since_of(text: str, now: datetime) -> datetime:
    """``--since``: a duration back from now (``7d``, ``12h``) or a UTC date or time (``2026-12-01``).

    Raises:
        ConfigError: neither, naming the option.
    """
    from streaming_dq.cli.common import duration_of

    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return now - duration_of(text, "--since")
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def report(
    configs: Annotated[
        list[Path],
        typer.Argument(
            help="Gate config files (YAML), or folders of them: one report, a section per gate.",
            show_default=False,
            metavar="CONFIG",
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The HTML file to write.", metavar="FILE")
    ] = Path("report.html"),
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only what was validated since: '7d', '12h', or a date '2026-12-01'.",
            metavar="WHEN",
        ),
    ] = None,
    mask: Annotated[
        list[str] | None,
        typer.Option(
            "--mask", help="A column of the quarantined rows to show as *** (repeatable).", metavar="COLUMN"
        ),
    ] = None,
    samples: Annotated[
        int, typer.Option("--samples", min=0, max=100, help="Sample rows per quarantine reason.")
    ] = 3,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Write a report of how gates did to ONE HTML file that opens offline (no server, nothing fetched).

    Per check its violations and pass rate per batch and per day; window verdicts as a calendar or with
    their anomaly band; the active profiles; the top quarantine reasons with sample rows; releases,
    discards and maintenance runs; each gate's configuration (secrets masked). `--json` prints the same
    as a JSON document instead. Exit 0, or 2 when a config, a path or an option is wrong.
    """
    progress = Progress(quiet)
    try:
        code = run_report(configs, output=output, since=since, mask=mask or [], samples=samples,
                          as_json=as_json, progress=progress)  # fmt: skip
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=as_json) from None
    raise typer.Exit(code)


def run_report(
    configs: list[Path],
    *,
    output: Path,
    since: str | None,
    mask: list[str],
    samples: int,
    as_json: bool,
    progress: Progress,
    now: datetime | None = None,
) -> int:
    """Build and write (or print) the report; the exit code.

    Raises:
        ConfigError: a config or an option is invalid, a masked column no quarantine table has, or the
            output cannot be written.
    """
    from streaming_dq.cli.running import config_files
    from streaming_dq.cli.sessions import opened_gate
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.report import ReportOptions, gate_report, redacted_config, render, report_json

    now = now or datetime.now(UTC)
    options = ReportOptions(since=since_of(since, now) if since else None, mask=tuple(mask), samples=samples)
    files = config_files(configs)
    loaded = [(path, load_gate_config(path)) for path in files]  # every config checked before a table is read
    if not as_json:
        _check_output(output)
    reports = []
    for path, config in loaded:
        with opened_gate(config, "report", progress=progress) as opened:
            try:
                built = gate_report(opened.config, redacted_config(path.read_text()), options, now=now)
            except ConfigError as exc:
                raise ConfigError(exc.reason, source=str(path), field_path=exc.field_path) from None
        reports.append(built)
        progress.say(f"{config.gate.name}: {len(built.batches)} batches read")
    if as_json:
        sys.stdout.write(report_json(reports) + "\n")
        return 0
    output.write_text(render(reports), encoding="utf-8")
    console().print(f"report written to {escape(str(output.resolve()))}")
    return 0


def _check_output(output: Path) -> None:
    if output.is_dir():
        raise ConfigError(f"{output} is a folder: give a file name", field_path="--output")
    if not output.parent.resolve().is_dir():
        raise ConfigError(f"the folder {output.parent} does not exist", field_path="--output")
