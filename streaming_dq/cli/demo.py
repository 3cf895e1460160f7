"""``streaming-dq demo``: a whole gate job on a laptop, end to end, in about a minute.

What :func:`run_demo` does:

1. wipes and recreates the work folder (``.demo/`` by default), writes the customers reference, the landing
   files of 18-20 December 2025 (:mod:`streaming_dq.cli.demo_data`) and the job's config (``demo.yaml``,
   shipped as package data, with the demo's volumes filled in);
2. runs the job with :class:`~streaming_dq.runtime.job.GateJob`, exactly as ``streaming-dq run`` does: local Spark,
   ``readStream`` of one file per micro-batch (available-now), the quality gate, Delta tables written with
   delta-rs, ``/metrics`` served on 127.0.0.1 (a free port when the asked one is taken); one line per batch;
3. the producer ships version 2 with a new ``coupon_code`` field: the demo writes 21-22 December, adds the
   column to the config's source schema and restarts the job on the same checkpoint, where the gate merges
   the new column into its tables (schema drift, default policy);
4. reads the Delta tables back (:mod:`streaming_dq.cli.demo_report`) and prints the summary; a row count that
   does not add up is an error (exit 1).

Example:
    >>> from rich.console import Console
    >>> run_demo(DemoOptions(workdir=Path("/tmp/sdq-demo"), port=0), Console())  # doctest: +SKIP
    0
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rich.console import Console
from rich.markup import escape

from streaming_dq.cli.demo_data import DemoDay, DemoPlan, LandingFile, write_customers, write_landing
from streaming_dq.cli.demo_lines import batch_line
from streaming_dq.cli.demo_report import DemoRun, print_summary
from streaming_dq.config.gate_config import GateConfig
from streaming_dq.config.loader import expand_env, load_gate_config
from streaming_dq.config.sections import MetricsSection, PrometheusSection
from streaming_dq.core.outcome import BatchOutcome
from streaming_dq.exceptions import ExporterError, InternalError, StreamingDQError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["DemoOptions", "run_demo"]

#: Written into the work folder; a folder without it is never wiped.
MARKER = ".streaming-dq-demo"
CONFIG_NAME = "demo.yaml"
V1_SCHEMA_END = "currency STRING, status STRING, items INT\n"
V2_SCHEMA_END = "currency STRING, status STRING, items INT, coupon_code STRING\n"
LOG4J = """\
# Spark's own log lines at ERROR only, so that the demo's output stays readable.
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
# pyspark's gateway logger (the "shell" Spark takes its level from) at the root's: no "Setting default log level" lines
logger.repl.name = org.apache.spark.api.python.PythonGatewayServer
logger.repl.level = error
"""


@dataclass(frozen=True)
class DemoOptions:
    """What ``streaming-dq demo`` is asked to do.

    Attributes:
        workdir: The demo folder; wiped and recreated at start.
        port: The ``/metrics`` port (0: any free port); a taken port falls back to a free one.
        rows: Orders on a regular day.
        batches_per_day: Landing files, hence micro-batches, per day (five days).
        seed: The generator's random seed.
    """

    workdir: Path = Path(".demo")
    port: int = 9108
    rows: int = 600
    batches_per_day: int = 2
    seed: int = 7

    @property
    def plan(self) -> DemoPlan:
        """The generator's plan."""
        return DemoPlan(rows=self.rows, batches_per_day=self.batches_per_day, seed=self.seed)


class DemoError(StreamingDQError, RuntimeError):
    """The demo cannot run (e.g. its work folder holds something that is not a demo)."""


@dataclass
class _Progress:
    """What the phases collect: every batch outcome, the metrics URL and the last ``/metrics`` scrape."""

    console: Console
    zone: str
    outcomes: list[BatchOutcome] = field(default_factory=list)
    url: str | None = None
    scrape: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def started(self, url: str | None) -> None:
        self.url = url
        if url is not None:
            self.console.print(f"  [dim]metrics at[/] {url}")

    def batch(self, outcome: BatchOutcome) -> None:
        with self._lock:
            self.outcomes.append(outcome)
        self.console.print(batch_line(outcome, self.zone))
        self.scrape = scrape(self.url) or self.scrape  # after the batch's commit and counters

    @property
    def port(self) -> int | None:
        return urlsplit(self.url).port if self.url else None


def scrape(url: str | None, *, timeout: float = 5.0) -> str | None:
    """GET the Prometheus exposition at ``url`` (None when there is no endpoint or it does not answer)."""
    if url is None:
        return None
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return bytes(response.read()).decode("utf-8")
    except OSError:
        return None


class _ConsoleHandler(logging.Handler):
    """Prints the library's log records (schema drift ...) as indented console lines."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.WARNING)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        colour = "red" if record.levelno >= logging.ERROR else "yellow"
        level = record.levelname.lower()
        self.console.print(f"  [{colour}]{level}:[/] {escape(record.getMessage())}")


# --- the work folder -----------------------------------------------------------------------------------------


def prepare_workdir(workdir: Path) -> Path:
    """Wipe and recreate ``workdir``; refuse a non-empty folder that the demo did not create.

    Raises:
        DemoError: ``workdir`` is a file, or a non-empty folder without the demo's marker file.
    """
    workdir = workdir.expanduser().absolute()
    if workdir.exists():
        if not workdir.is_dir():
            raise DemoError(f"{workdir} is a file, not a folder")
        if any(workdir.iterdir()) and not (workdir / MARKER).exists():
            raise DemoError(
                f"refusing to wipe {workdir}: it is not empty and was not created by `streaming-dq demo` "
                f"(no {MARKER} file); pick another --workdir"
            )
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    (workdir / MARKER).write_text("created by `streaming-dq demo`; wiped by its next run\n", encoding="utf-8")
    return workdir


def config_text(options: DemoOptions) -> str:
    """The shipped ``demo.yaml`` with the demo's ``${DEMO_...}`` values filled in."""
    template = (files("streaming_dq.cli") / "demo" / CONFIG_NAME).read_text(encoding="utf-8")
    plan = options.plan
    values = {
        "DEMO_PORT": str(options.port),
        "DEMO_BATCH_MIN_ROWS": str(int(plan.rows_per_batch * 0.6)),
        "DEMO_DAY_MIN_ROWS": str(int(plan.rows * 0.8)),
    }
    text, problems = expand_env(template, variables=values, source=CONFIG_NAME)
    if problems:
        raise DemoError(str(problems[0]))
    return str(text)


def write_config(workdir: Path, text: str) -> GateConfig:
    """Write the job's config into the work folder and load it as ``streaming-dq run`` would."""
    path = workdir / CONFIG_NAME
    path.write_text(text, encoding="utf-8")
    return load_gate_config(path)


def with_port(config: GateConfig, port: int) -> GateConfig:
    """``config`` serving ``/metrics`` on ``port`` instead (same host)."""
    current = config.metrics.prometheus or PrometheusSection()
    metrics = MetricsSection(prometheus=PrometheusSection(host=current.host, port=port))
    return config.model_copy(update={"metrics": metrics}).with_source_file(config.source_file)


# --- running ---------------------------------------------------------------------------------------------------


@contextmanager
def _gate_logs(console: Console) -> Iterator[None]:
    """Show the library's warnings (schema drift ...) through rich while the demo runs."""
    logger = logging.getLogger("streaming_dq")
    handler = _ConsoleHandler(console)
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def run_phase(
    config: GateConfig, session: SparkSession, progress: _Progress, *, port: int
) -> tuple[GateConfig, str | None]:
    """Run the job until the landing folder is drained; fall back to a free port when ``port`` is taken.

    Returns:
        The config that ran (with the port actually asked for) and the stream's error (None: it succeeded).
    """
    from streaming_dq.runtime.job import GateJob

    config = with_port(config, port)
    for attempt in range(2):
        job = GateJob(config, on_batch=progress.batch, on_started=progress.started, session=session)
        try:
            totals = job.run()
        except ExporterError as exc:
            if attempt or port == 0:
                raise
            progress.console.print(
                f"  [yellow]port {port} is taken[/] ({escape(str(exc).split(': ', 1)[-1])}): "
                "serving /metrics on a free port instead"
            )
            config = with_port(config, 0)
            continue
        return config, (totals.error or "the stream failed") if totals.failed else None
    raise InternalError("the demo left its port loop without a result")


def _landing_line(console: Console, written: list[LandingFile]) -> None:
    lines = sum(f.lines for f in written)
    faults: dict[str, int] = {}
    for f in written:
        for name, n in f.faults.items():
            faults[name] = faults.get(name, 0) + n
    days = sorted({f.day for f in written})
    console.print(
        f"  wrote {len(written)} landing files, {lines:,} lines ({days[0]:%d}-{days[-1]:%d %b}): "
        f"{sum(f.malformed for f in written)} malformed, "
        + ", ".join(f"{n} {name}" for name, n in sorted(faults.items(), key=lambda kv: -kv[1]))
    )


def quiet_spark(config: GateConfig, workdir: Path) -> GateConfig:
    """``config`` with Spark's own log lines limited to errors (a log4j2 file in the work folder).

    Only the driver JVM this process starts reads it; a ``spark.driver.extraJavaOptions`` already in the
    config is left alone.
    """
    if "spark.driver.extraJavaOptions" in config.spark.conf:
        return config
    path = workdir / "log4j2.properties"
    path.write_text(LOG4J, encoding="utf-8")
    conf = {
        **config.spark.conf,
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={path.as_uri()}",
    }
    spark = config.spark.model_copy(update={"conf": conf})
    return config.model_copy(update={"spark": spark}).with_source_file(config.source_file)


def _start_session(config: GateConfig, console: Console) -> tuple[SparkSession, bool]:
    from streaming_dq.runtime.session import build_spark_session

    with console.status(f"starting Spark ({config.spark.master}) ..."):
        started = time.monotonic()
        session, created = build_spark_session(config.spark, app_name="streaming-dq-demo")
    console.print(
        f"  Spark {session.version} ({config.spark.master}) ready in {time.monotonic() - started:.1f} s"
    )
    return session, created


def _phase_days(plan: DemoPlan, *, v2: bool) -> list[DemoDay]:
    return [d for d in plan.days if d.producer_v2 == v2]


def run_demo(options: DemoOptions, console: Console) -> int:
    """Run the whole demo and print its summary.

    Returns:
        The exit code: 0, or 1 when the stream failed or the tables do not account for every generated line.

    Raises:
        DemoError: the work folder cannot be used.
        ExporterError: no port at all could be bound for ``/metrics``.
    """
    started = time.monotonic()
    plan = options.plan
    workdir = prepare_workdir(options.workdir)
    console.rule("[bold]streaming-dq demo[/]: a quality gate in front of an orders stream")
    console.print(f"  work folder {workdir} (wiped and recreated)")
    write_customers(workdir / "reference" / "customers.csv", plan)
    written = write_landing(workdir / "landing", plan, _phase_days(plan, v2=False))
    _landing_line(console, written)
    text = config_text(options)
    config = write_config(workdir, text)
    progress = _Progress(console, config.gate.timezone)
    session, created = _start_session(quiet_spark(config, workdir), console)
    try:
        with _gate_logs(console):
            console.print(
                "[bold]1.[/] the job drains the landing folder, one file per micro-batch (producer v1)"
            )
            config, error = run_phase(config, session, progress, port=options.port)
            if error is None:
                console.print(
                    "[bold]2.[/] producer v2 adds a [bold]coupon_code[/] field from Sun 21 Dec: the job's "
                    "source schema gains the column and the job restarts on its checkpoint"
                )
                more = write_landing(workdir / "landing", plan, _phase_days(plan, v2=True))
                _landing_line(console, more)
                written += more
                if V1_SCHEMA_END not in text:
                    raise DemoError(
                        f"the shipped {CONFIG_NAME} does not end its schema with {V1_SCHEMA_END!r}"
                    )
                config = write_config(workdir, text.replace(V1_SCHEMA_END, V2_SCHEMA_END, 1))
                port = progress.port if progress.port is not None else options.port
                config, error = run_phase(config, session, progress, port=port)
    finally:
        if created:
            session.stop()
    if error is not None:
        console.print(f"[red]error:[/] the stream failed: {escape(error)}")
        return 1
    run = DemoRun(
        workdir=workdir,
        config=config,
        files=written,
        outcomes=tuple(progress.outcomes),
        metrics_url=progress.url,
        exposition=progress.scrape,
        seconds=time.monotonic() - started,
    )
    accounted = print_summary(run, console)
    report = write_report(workdir)
    console.print(
        f"Report: [bold]{escape(str(report))}[/] (one HTML file: open it in a browser, offline too)"
    )
    console.print(
        f'  its section "Duplicates across batches" ({escape(report.name)}#{escape(config.gate.name)}-repeats) '
        "lists the retries caught in a later micro-batch, each with its first occurrence"
    )
    return 0 if accounted else 1


def write_report(workdir: Path) -> Path:
    """``streaming-dq report`` of the demo's gate, written to ``report.html`` in the work folder."""
    from streaming_dq.report import ReportOptions, gate_report, redacted_config, render

    path = workdir / CONFIG_NAME
    built = gate_report(load_gate_config(path), redacted_config(path.read_text()), ReportOptions())
    out = workdir / "report.html"
    out.write_text(render([built]), encoding="utf-8")
    return out
