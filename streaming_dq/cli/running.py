"""``streaming-dq run``: one gate job, or many on one driver (one SparkSession, one /metrics endpoint)."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from streaming_dq.cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    FailOnOption,
    console,
    duration_of,
    fail_config,
    problems_of,
)
from streaming_dq.cli.progress import batch_line, end_line, start_line, window_lines
from streaming_dq.core.modes import failing_severities
from streaming_dq.exceptions import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from streaming_dq.config.gate_config import GateConfig
    from streaming_dq.core.outcome import BatchOutcome, WindowOutcome
    from streaming_dq.runtime.fleet import JobTotals

__all__ = ["config_files", "run"]

CONFIG_SUFFIXES = (".yaml", ".yml")


def config_files(paths: Sequence[Path]) -> list[Path]:
    """The config files named: each file as given, each folder's ``*.yaml``/``*.yml`` files in name order.

    Raises:
        ConfigError: A folder holds no config, or a path does not exist (named).
    """
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in CONFIG_SUFFIXES)
            if not found:
                raise ConfigError(f"no gate config (*.yaml, *.yml) in the folder {path}", source=str(path))
            files.extend(found)
        else:
            files.append(path)  # a missing file is reported by the loader, with its path
    return list(dict.fromkeys(files))


def run(
    configs: Annotated[
        list[Path],
        typer.Argument(
            help="Gate config files (YAML), or folders of them: several gates run on one driver.",
            show_default=False,
            metavar="CONFIG",
        ),
    ],
    available_now: Annotated[
        bool,
        typer.Option(
            "--available-now",
            "--until-idle",
            metavar="",
            help="Drain what the sources hold, then stop (overrides a processing-time trigger).",
        ),
    ] = False,
    timeout: Annotated[
        str | None,
        typer.Option(
            "--timeout", help="Stop the streams after this long: '300', '5 min', '2h'.", metavar="DURATION"
        ),
    ] = None,
    close_windows: Annotated[
        bool | None,
        typer.Option(
            "--close-windows/--keep-windows-open",
            help="When an available-now run has drained its input, judge the event-time windows still open "
            "(default: gate.close-windows).",
        ),
    ] = None,
    stop_all_on_failure: Annotated[
        bool,
        typer.Option(
            "--stop-all-on-failure",
            metavar="",
            help="With several gates: a gate whose stream fails stops the others (by default they go on).",
        ),
    ] = False,
    fail_on: FailOnOption = "critical",
) -> None:
    """Run gate jobs: source stream, gate, Delta targets, /metrics when configured.

    Prints one line per micro-batch (prefixed by the gate's name when several run). An available-now job ends
    when its source is drained; a processing-time job runs until Ctrl-C / SIGTERM (or --timeout). With
    --close-windows a drained run ends by judging the windows still open (a backfill's last day), once.
    Several configs (or a folder of them) run on one SparkSession, each gate in a fair-scheduler pool of its
    own, with one /metrics endpoint; a failed gate does not stop the others unless --stop-all-on-failure.
    Exit 0, 1 if a stream failed or a check failed at the `--fail-on` level (default: a critical check; the
    last lines name the gate and the checks), 2 on a config error, a taken metrics port, or a checkpoint another
    job holds (nothing written).
    """
    from streaming_dq.config.fields import Trigger
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.exceptions import (
        CheckEvaluationError,
        ExporterError,
        JarFetchError,
        MissingReferenceDatasetError,
    )
    from streaming_dq.runtime.fleet import GateFleet
    from streaming_dq.runtime.session import trace_file
    from streaming_dq.sink.lease import CheckpointInUseError
    from streaming_dq.sources.registry import RegistryUnavailableError

    out, err = console(), console(stderr=True)
    try:
        seconds = None if timeout is None else duration_of(timeout, "--timeout").total_seconds()
        loaded = [load_gate_config(path) for path in config_files(configs)]
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=False) from None
    if available_now:
        loaded = [c.with_trigger(Trigger()) for c in loaded]
    by_name = {c.gate.name: c for c in loaded}
    many = len(loaded) > 1

    def prefix(name: str) -> str:
        return f"{escape(name)}: " if many else ""

    def print_batch(outcome: BatchOutcome) -> None:
        tz = by_name[outcome.gate].gate.timezone if outcome.gate in by_name else "UTC"
        for line in (batch_line(outcome), *window_lines(outcome.windows, tz)):
            out.print(prefix(outcome.gate) + line)
        if outcome.maintenance is not None:
            for table in outcome.maintenance.tables:
                out.print(
                    prefix(outcome.gate) + escape(f"  maintenance {table.line()}"),
                    style="red" if table.error else "dim",
                )

    def print_closed(name: str, windows: Sequence[WindowOutcome]) -> None:
        out.print(f"{prefix(name)}end of input: {len(windows)} window verdict(s) for the windows still open")
        for line in window_lines(windows, by_name[name].gate.timezone):
            out.print(prefix(name) + line)

    def print_started(url: str | None) -> None:
        for config in loaded:
            out.print(escape(start_line(config, url)))

    try:
        fleet = GateFleet(
            loaded,
            on_batch=print_batch,
            on_started=print_started,
            handle_signals=True,
            close_windows=close_windows,
            on_windows_closed=print_closed,
            stop_all_on_failure=stop_all_on_failure,
        )
        fleet.check_paths()  # before saying that Spark starts
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=False) from None
    spark = loaded[0].spark
    where = f"Spark Connect at {spark.remote}" if spark.remote else f"Spark ({spark.master})"
    streams = f"{len(loaded)} streams" if many else "the stream"
    started = time.time()
    try:
        with fleet.holding_checkpoints():  # a second job on a checkpoint stops here, before Spark starts
            out.print(
                escape(f"starting {where}, then {streams}; the first batch also plans the checks"),
                style="dim",
            )
            totals = fleet.run(timeout=seconds)
    except CheckpointInUseError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=False) from None
    except (ExporterError, CheckEvaluationError, MissingReferenceDatasetError, JarFetchError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
    except (
        RegistryUnavailableError
    ) as exc:  # before the stream started (the reader schema): a service is down
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(EXIT_FAILED) from None
    except KeyboardInterrupt:
        err.print(
            "interrupted: committed batches are in the tables; the next run resumes from the checkpoint"
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    _report_end(loaded, totals.gates, many)
    if totals.interrupted is not None:
        name = signal.Signals(totals.interrupted).name
        err.print(
            f"stopped by {name}: committed batches are in the tables; the next run resumes from the checkpoint"
        )
        raise typer.Exit(128 + totals.interrupted)
    for gate in totals.failed:
        label = f"the stream of gate {gate!r} failed" if many else "the stream failed"
        err.print(f"[red]{escape(label)}:[/] {escape(totals.gates[gate].error or 'unknown error')}")
    trace = trace_file(fleet.app_name)
    if totals.failed and trace.exists() and trace.stat().st_mtime >= started:
        err.print(escape(f"the full traces: {trace}"), style="dim")
    failing = failing_severities(fail_on)
    checks = {gate: t.failures_at(failing) for gate, t in totals.gates.items() if t.failures_at(failing)}
    for gate, ids in checks.items():
        where = f" of gate {gate!r}" if many else ""
        err.print(
            escape(f"exit 1: {fail_on} checks{where} failed: {', '.join(ids)} (--fail-on never to exit 0)"),
            soft_wrap=True,
        )
    if totals.failed or checks:
        raise typer.Exit(EXIT_FAILED)


def _report_end(configs: Sequence[GateConfig], totals: Mapping[str, JobTotals], many: bool) -> None:
    out = console()
    for config in configs:
        for line in end_line(config, totals[config.gate.name]).splitlines():
            out.print(escape(f"{config.gate.name}: {line}" if many else line))
