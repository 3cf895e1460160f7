"""The ``streaming-dq`` command.

Exit codes, for every command: 0 success, 1 the data failed (checks failed, the stream failed), 2 a usage,
config or path error, 130 stopped by Ctrl-C (143 by SIGTERM). Heavy imports (pyspark, the sink) happen inside the commands that need them, so ``--help``,
``validate`` and ``schema`` stay fast and never start a JVM.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from streaming_dq.cli import contracting, quarantine_commands, querying, reporting, running, validating
from streaming_dq.cli.common import (
    EXIT_USAGE,
    ConfigArg,
    FailOnOption,
    JsonOption,
    QuietOption,
    console,
    count,
    fail_config,
    plain_help,
    problems_of,
)
from streaming_dq.cli.sessions import Progress
from streaming_dq.exceptions import ConfigError

if TYPE_CHECKING:
    pass

plain_help()
app = typer.Typer(
    name="streaming-dq",
    help="A data-quality gate for Spark Structured Streaming: validate every micro-batch, route each row "
    "to a pass or a quarantine Delta table exactly once, export metrics to Prometheus.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"streaming-dq {version('streaming-dq')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit.", metavar=""
        ),
    ] = False,
) -> None:
    """A data-quality gate for Spark Structured Streaming."""


app.command()(validating.validate)
app.command()(validating.schema)
app.command()(contracting.contract)


# --- run ----------------------------------------------------------------------------------------------------


app.command()(running.run)
app.command()(reporting.report)


# --- check --------------------------------------------------------------------------------------------------


class DataFormat(StrEnum):
    """Formats ``streaming-dq check`` reads."""

    json = "json"
    csv = "csv"
    parquet = "parquet"
    delta = "delta"
    kafka = "kafka"


@app.command()
def check(
    config: Annotated[
        Path,
        typer.Argument(
            help="A gate config, or a checks file (a list of checks or {checks: [...]}).", metavar="CONFIG"
        ),
    ],
    data: Annotated[
        Path,
        typer.Option(
            "--data",
            help="The file, folder or Delta table to validate; with --format kafka, a topic of the config's "
            "broker: its messages now, decoded as `run` decodes them.",
        ),
    ],
    data_format: Annotated[DataFormat, typer.Option("--format", help="Format of --data.")] = DataFormat.json,
    as_json: JsonOption = False,
    examples: Annotated[int, typer.Option("--examples", min=0, help="Also print up to N failed rows.")] = 0,
    fail_on: FailOnOption = "critical",
) -> None:
    """Validate a file or table once with the batch engine and print the report.

    With a gate config, its fail levels, profiles, event time and reference datasets apply, and json/csv data
    is read with its source schema and options. Exit 0 when no check failed at the `--fail-on` level (default:
    a critical check), 1 when one did, 2 on a usage or config error.
    """
    from streaming_dq.cli.checking import run_check

    try:
        code = run_check(config, data, data_format.value, as_json=as_json, examples=examples, fail_on=fail_on)
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=as_json) from None
    raise typer.Exit(code)


# --- suggest ------------------------------------------------------------------------------------------


@app.command()
def suggest(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data", help="The file, folder or Delta table to profile (default: --config's source)."
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="A gate config: its source's schema and options read the data as `run` does, and its "
            "internal columns are skipped.",
            metavar="CONFIG",
        ),
    ] = None,
    data_format: Annotated[
        DataFormat | None, typer.Option("--format", help="Format of --data (default: --config's, else json).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the checks here (default: print them).")
    ] = None,
    sample_rows: Annotated[
        int, typer.Option("--sample-rows", min=1, help="Profile the first N rows.")
    ] = 100_000,
    max_values: Annotated[
        int,
        typer.Option("--max-values", min=1, help="Suggest a value set for columns with at most N values."),
    ] = 20,
    min_share: Annotated[
        float,
        typer.Option(
            "--min-share",
            min=0,
            max=1,
            help="A value set allows the values seen in at least this share of the rows (rarer ones are named, "
            "not allowed).",
            metavar="SHARE",
        ),
    ] = 0.01,
) -> None:
    """Profile a sample of --data in one pass and write a YAML check set derived from it.

    Every rule carries a comment saying what it was derived from (NULL counts, min/max, distinct counts,
    string lengths and formats, value sets, candidate keys). Bounds and value sets are warnings. With
    `--config`, the data is read with the gate's source schema and options (typed columns, not strings), from
    its source folder unless `--data` says otherwise. Edit the file, then `streaming-dq validate` it. Exit 0,
    2 on a usage or config error.
    """
    from streaming_dq.cli.checking import read_data
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.config.sections import SparkSection
    from streaming_dq.runtime.session import build_spark_session
    from streaming_dq.suggest import DEFAULT_SKIPPED, profile, render_yaml, suggest_checks

    try:
        gate = load_gate_config(config) if config is not None else None
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=False) from None
    if data is None and (gate is None or gate.source.path is None):
        typer.echo("error: --data: give the data to profile, or --config with a source path", err=True)
        raise typer.Exit(EXIT_USAGE)
    where = data if data is not None else Path(str(gate.source.path if gate else ""))
    fmt = data_format.value if data_format is not None else gate.source.format if gate else "json"
    if "://" not in str(where) and not where.exists():
        typer.echo(f"error: --data {where}: no such file or directory", err=True)
        raise typer.Exit(EXIT_USAGE)
    skipped = tuple(DEFAULT_SKIPPED)
    if gate is not None:
        skipped += (gate.source.malformed_column, gate.source.unknown_fields_column)
    session, own_session = build_spark_session(
        gate.spark if gate else SparkSection(), app_name="streaming-dq-suggest", delta=fmt == "delta"
    )
    try:
        profiles = profile(
            read_data(session, where, fmt, gate), sample_rows=sample_rows, max_values=max_values, skip=skipped
        )
    finally:
        if own_session:
            session.stop()
    suggestions = suggest_checks(profiles, max_values=max_values, min_share=min_share)
    rows = profiles[0].rows if profiles else 0
    text = render_yaml(suggestions, source=str(where), rows=rows)
    if output is None:
        typer.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {count(len(suggestions), 'check')} from {rows:,} rows to {output}")


# --- metrics ------------------------------------------------------------------------------------------


@app.command()
def metrics(
    config: ConfigArg,
    window: Annotated[
        str | None, typer.Option("--window", help="Event-time window size to show, e.g. '1 day'.")
    ] = None,
    check_id: Annotated[str | None, typer.Option("--check", help="Only this check id.")] = None,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Show a gate's accumulated metrics from its metrics table (no Spark).

    Without `--window`: one line per observable check, its metric over the stream's life. With
    `--window "1 day"`: the latest verdict of every window of that size (open windows are `provisional`).
    Exit 0, or 2 when the config is invalid or has no metrics table yet.
    """
    from streaming_dq.cli.metrics_view import load_lines, print_lines

    try:
        view = load_lines(config, window=window, check=check_id, progress=Progress(quiet))
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=as_json) from None
    out = console() if sys.stdout.isatty() else Console(highlight=False, width=400)
    print_lines(view, as_json=as_json, console=out)


# --- maintain -----------------------------------------------------------------------------------------------


@app.command()
def maintain(
    config: ConfigArg,
    compact: Annotated[
        bool | None, typer.Option("--compact/--no-compact", help="Rewrite small files (default: yes).")
    ] = None,
    checkpoint: Annotated[
        bool | None, typer.Option("--checkpoint/--no-checkpoint", help="Write a Delta log checkpoint.")
    ] = None,
    vacuum: Annotated[
        str | None,
        typer.Option(
            "--vacuum",
            help="Delete files unreferenced for longer than this, e.g. '7 days'.",
            metavar="RETENTION",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="With --vacuum: only list what it would delete; write nothing (no compaction, checkpoint, "
            "roll-up or retention change either).",
        ),
    ] = False,
    roll_up_after: Annotated[
        str | None,
        typer.Option(
            "--roll-up-after", help="Fold metrics rows older than this, e.g. '7 days'.", metavar="AGE"
        ),
    ] = None,
    log_retention: Annotated[
        str | None,
        typer.Option(
            "--log-retention",
            help="Set the tables' delta.logRetentionDuration, e.g. '7 days' (the checkpoint then removes "
            "older log files).",
            metavar="AGE",
        ),
    ] = None,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Compact, checkpoint, vacuum and roll up a gate's tables now; one line per table.

    Uses the config's `maintenance:` section (compaction and checkpoints by default), with these options on
    top. A vacuum shorter than a table's delta.deletedFileRetentionDuration (7 days by default) is refused.
    Exit 0, 1 when a table's maintenance failed, 2 on a config error.
    """
    from streaming_dq.cli.maintaining import run_maintain

    out = console() if sys.stdout.isatty() else Console(highlight=False, width=400)
    try:
        code = run_maintain(
            config, out, as_json=as_json, progress=Progress(quiet), compact=compact, checkpoint=checkpoint, vacuum=vacuum,
            dry_run=dry_run, roll_up_after=roll_up_after, log_retention=log_retention,
        )  # fmt: skip
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=as_json) from None
    raise typer.Exit(code)


@app.command()
def doctor(
    config: ConfigArg,
    repair: Annotated[
        bool, typer.Option("--repair", help="Mend what can be mended (a batch committed twice).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what --repair would mend; write nothing.")
    ] = False,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Audit a gate's tables: a batch committed twice, a batch missing from a table committed before others.

    One line per finding. With --repair, a batch committed twice loses exactly its later commits' files (one
    new commit per table). Run --repair while the gate is stopped. Exit 0 when nothing is left broken, 1
    otherwise, 2 on a config error.
    """
    from streaming_dq.cli.doctoring import run_doctor

    out = console() if sys.stdout.isatty() else Console(highlight=False, width=400)
    try:
        code = run_doctor(
            config, out, repair=repair, dry_run=dry_run, as_json=as_json, progress=Progress(quiet)
        )
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=as_json) from None
    raise typer.Exit(code)


app.command()(querying.sql)


# --- release, quarantine discard ----------------------------------------------------------------------------

app.command()(quarantine_commands.release)
quarantine_app = typer.Typer(
    name="quarantine",
    help="A gate's quarantine table: show its rows, discard old ones.",
    no_args_is_help=True,
)
quarantine_app.command()(quarantine_commands.discard)
quarantine_app.command()(quarantine_commands.show)
app.add_typer(quarantine_app)


# --- demo ---------------------------------------------------------------------------------------------------


@app.command()
def demo(
    workdir: Annotated[
        Path, typer.Option("--workdir", help="Demo folder, wiped and recreated at start.")
    ] = Path(".demo"),
    port: Annotated[
        int,
        typer.Option("--port", min=0, max=65535, help="Port of /metrics (0: any free port)."),
    ] = 9108,
    rows: Annotated[int, typer.Option("--rows", min=20, help="Orders on a regular day.")] = 600,
    batches_per_day: Annotated[
        int, typer.Option("--batches-per-day", min=1, max=12, help="Micro-batches per day (five days).")
    ] = 2,
) -> None:
    """Run a gate job end to end on generated orders and print what happened.

    Local Spark, Delta tables under `--workdir`, `/metrics` on 127.0.0.1 (a free port when `--port` is
    taken). Exit 0, 1 when the stream failed or the tables do not account for every generated line, 2 when
    the work folder cannot be used.
    """
    from streaming_dq.cli.demo import DemoError, DemoOptions, run_demo

    options = DemoOptions(workdir=workdir, port=port, rows=rows, batches_per_day=batches_per_day)
    try:
        code = run_demo(options, console())
    except DemoError as exc:
        console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(EXIT_USAGE) from None
    raise typer.Exit(code)


def main() -> Any:
    """Entry point of the ``streaming-dq`` console script. ``kill -USR1 <pid>`` prints the stack of every
    Python thread to stderr and the job goes on (where is a job that does not stop waiting?)."""
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True, chain=False)
    return app()


if __name__ == "__main__":
    sys.exit(main())
