"""The summary ``streaming-dq demo`` prints, computed by reading its Delta tables back with ``deltalake``.

Nothing here trusts the gate's own counters for the totals: the pass and quarantine tables are read back and
must together hold exactly the number of lines the generator wrote (every line, malformed ones included,
lands in exactly one of them). The gate's batch outcomes only supply what the tables cannot: how many of the
passed rows carried a warning (the pass table keeps the input columns only).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from streaming_dq.cli.demo_data import LandingFile
from streaming_dq.config.gate_config import GateConfig
from streaming_dq.core.outcome import BatchOutcome
from streaming_dq.engine.plan import MALFORMED_CHECK_ID
from streaming_dq.engine.result import ERRORS_COLUMN
from streaming_dq.profiles.event_time import time_zone
from streaming_dq.sink.schemas import BATCH_ID_COLUMN, FIRST_SEEN_COLUMN, RAW_COLUMN

__all__ = ["CheckFailures", "DemoRun", "failing_checks", "print_summary", "read_rows"]

MALFORMED = MALFORMED_CHECK_ID
ERRORS = ERRORS_COLUMN
RAW = RAW_COLUMN
SHOWN_COLUMNS = ("order_id", "order_ts", "customer_id", "amount", "currency", "status")
#: Series worth showing from the scrape, in this order.
SERIES = (
    "streaming_dq_rows_total",
    "streaming_dq_check_violations_total",
    "streaming_dq_aggregate_value",
    "streaming_dq_window_results_total",
    "streaming_dq_window_check_failed",
    "streaming_dq_profile_active",
    "streaming_dq_batches_total",
)


@dataclass(frozen=True)
class DemoRun:
    """What the demo ran and saw, for the summary.

    Attributes:
        workdir: The demo folder.
        config: The job's config as it ran last (absolute paths).
        files: The landing files written, in order.
        outcomes: The gate's outcome of every batch, in order.
        metrics_url: The ``/metrics`` URL the job served.
        exposition: The last scrape of that URL (after the last batch), or None.
        seconds: Wall-clock seconds so far.
    """

    workdir: Path
    config: GateConfig
    files: Sequence[LandingFile]
    outcomes: Sequence[BatchOutcome]
    metrics_url: str | None
    exposition: str | None
    seconds: float

    @property
    def lines(self) -> int:
        """Lines the generator wrote (one record each, malformed ones included)."""
        return sum(f.lines for f in self.files)


@dataclass(frozen=True)
class CheckFailures:
    """One check's failures over the run, from the results table."""

    check_id: str
    check_type: str
    kind: str
    severities: tuple[str, ...]
    rows: int
    failed_batches: int
    batches: int


def read_rows(path: str) -> list[dict[str, Any]]:
    """Every row of the Delta table at ``path`` (an empty list when there is no table)."""
    from deltalake import DeltaTable

    from streaming_dq.tables import read_table

    if not DeltaTable.is_deltatable(path):
        return []
    return list(read_table(path).to_pylist())


def failing_checks(results: Iterable[dict[str, Any]]) -> list[CheckFailures]:
    """Per check, the rows it failed (row checks) and the batches it failed in, most failures first."""
    found: dict[str, dict[str, Any]] = {}
    for rec in results:
        if rec["kind"] == "batch":
            continue  # the batch's own row: counts, no verdict
        entry = found.setdefault(
            rec["check_id"],
            {"type": rec["check_type"], "kind": rec["kind"], "sev": set(), "rows": 0, "failed": 0, "n": 0},
        )
        if rec["status"] == "provisional":
            continue  # an open window's running value, not a verdict
        entry["n"] += 1
        if rec["status"] == "failed":
            entry["failed"] += 1
            entry["sev"].add(rec["severity"])
            entry["rows"] += rec["violations"] or 0
    failures = [
        CheckFailures(cid, e["type"], e["kind"], tuple(sorted(e["sev"])), e["rows"], e["failed"], e["n"])
        for cid, e in found.items()
        if e["failed"]
    ]
    return sorted(failures, key=lambda f: (-f.rows, -f.failed_batches, f.check_id))


def _shown(path: str | Path) -> str:
    """``path`` relative to the working directory when it is inside it."""
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else str(path)


def _totals(run: DemoRun, passed: int, quarantined: int, console: Console) -> bool:
    committed = [o for o in run.outcomes if o.status == "committed"]
    table = Table(title="Rows", title_justify="left", show_header=True, header_style="bold")
    for name in ("generated lines", "rows in (gate)", "passed", "quarantined", "warned"):
        table.add_column(name, justify="right")
    warned = sum(o.rows_warned for o in committed)
    rows_in = sum(o.rows_in for o in committed)
    table.add_row(
        f"{run.lines:,}", f"{rows_in:,}", f"[green]{passed:,}[/]", f"[red]{quarantined:,}[/]", f"{warned:,}"
    )
    console.print(table)
    console.print(
        f"  read back from Delta: pass table {passed:,} + quarantine table {quarantined:,} = "
        f"{passed + quarantined:,} rows for {run.lines:,} generated lines in {len(committed)} batches; "
        f"warned = passed rows that carry a warning (from the gate's batch outcomes)"
    )
    return passed + quarantined == run.lines == rows_in


def _value(value: Any, tz: tzinfo) -> str:
    if isinstance(value, datetime):
        return f"{value.astimezone(tz):%Y-%m-%d %H:%M:%S %Z}"
    return str(value)


def _example(row: dict[str, Any], tz: tzinfo) -> str:
    """One quarantined row: its values (or the raw text of a malformed line) and its ``_dq_errors``."""
    errors = ", ".join(f"{e['check-id']} ({e['severity']})" for e in row.get(ERRORS) or [])
    raw = row.get(RAW)
    if raw is not None:
        text = raw if len(raw) <= 90 else raw[:87] + "..."
        return f"{RAW}: {escape(text)}  [dim]{ERRORS}: {escape(errors)}[/]"
    values = "  ".join(f"{c}={_value(row.get(c), tz)}" for c in SHOWN_COLUMNS if c in row)
    return f"{escape(values)}  [dim]{ERRORS}: {escape(errors)}[/]"


def later_retries(quarantine: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The quarantined rows whose key was first seen in an earlier micro-batch, with that pointer, by batch."""
    found = [
        (row, p)
        for row in quarantine
        for p in row.get(FIRST_SEEN_COLUMN) or ()
        if not p["late"] and p["batch_id"] is not None and p["batch_id"] < row[BATCH_ID_COLUMN]
    ]
    return sorted(found, key=lambda f: (f[0][BATCH_ID_COLUMN], f[1]["key"]))


def _retries(quarantine: list[dict[str, Any]], tz: tzinfo, console: Console) -> None:
    found = later_retries(quarantine)
    if not found:
        return
    row, p = found[0]
    first = p["event_time"].astimezone(tz)
    order = ", ".join(str(v) for v in json.loads(p["key"]))  # the key's JSON: here the one order id
    console.print(
        f"[bold]Duplicates across micro-batches[/]: {len(found):,} producer retries arrived in a later batch than "
        f"their original and were quarantined with a pointer to it, e.g. order {escape(order)} in batch "
        f"{row[BATCH_ID_COLUMN]}: first seen in batch {p['batch_id']} at {first:%a %d %b %H:%M} "
        f"({FIRST_SEEN_COLUMN})"
    )


def _failures(
    failures: list[CheckFailures], quarantine: list[dict[str, Any]], tz: tzinfo, console: Console
) -> None:
    if not failures:
        console.print("[bold]Failing checks[/]: none")
        return
    table = Table(
        title="Failing checks, most failed rows first (results table)",
        caption="verdicts: one per check and batch (one per profile regime when profiles split a batch)",
        title_justify="left",
        caption_justify="left",
        header_style="bold",
    )
    table.add_column("check", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("rows", justify="right")
    table.add_column("verdicts failed", justify="right")
    for f in failures:
        rows = f"{f.rows:,}" if f.kind == "row" or f.rows else "-"
        table.add_row(f.check_id, "/".join(f.severities), rows, f"{f.failed_batches} of {f.batches}")
    console.print(table)
    shown = [f for f in failures if f.rows][:3]
    shown += [f for f in failures if f.check_id == MALFORMED and f not in shown]
    for f in shown:
        examples = [r for r in quarantine if any(e["check-id"] == f.check_id for e in r.get(ERRORS) or [])]
        warned = f" ({f.rows - len(examples):,} more only warned)" if f.rows > len(examples) else ""
        console.print(f"  [bold]{f.check_id}[/]: {len(examples):,} quarantined rows{warned}, e.g.")
        for row in examples[:3]:
            console.print(f"    {_example(row, tz)}")


def _windows(run: DemoRun, console: Console) -> None:
    config = run.config
    window_checks = [c for c in config.check_set() if getattr(c, "scope", None) is not None]
    path = config.targets.metrics
    if not window_checks or path is None:
        console.print("[bold]Windows[/]: this config has no window-scoped check")
        return
    from streaming_dq.metrics.store import metrics_table

    tz = time_zone(config.gate.timezone)
    console.print(f"[bold]Event-time windows[/] (metrics table, days in {config.gate.timezone})")
    for check in window_checks:
        about = check.description()
        params = ", ".join(f"{k.replace('_', '-')} {v}" for k, v in about["parameters"].items())
        console.print(f"  [bold]{escape(check.check_id)}[/] ({escape(params)}, {about['severity']}):")
        scope = getattr(check, "scope", None)
        lines = metrics_table(path, gate=config.gate.name, window=scope.window if scope else None)
        for line in (line for line in lines if line["check"] == check.check_id):
            start = line["window_start"].astimezone(tz)
            value = _number(line["raw"])
            if line["multiplier"] not in (None, 1.0):
                value += f" x{line['multiplier']:g} = {_number(line['adjusted'])}"
            status = line["status"]
            colour = {"passed": "green", "failed": "red"}.get(status, "yellow")
            note = "  [dim](still open: no later order has moved the watermark past its end)[/]"
            profiles = f"  [dim]{escape(', '.join(line['profiles']))}[/]" if line["profiles"] else ""
            console.print(
                f"    {start:%a %d %b}  {escape(value):<22} [{colour}]{status:<11}[/]{profiles}"
                + (note if status == "provisional" else "")
            )


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _tables(run: DemoRun, console: Console) -> None:
    from deltalake import DeltaTable

    console.print("[bold]Tables[/] (Delta, written by delta-rs)")
    for role, path in run.config.targets.paths().items():
        if DeltaTable.is_deltatable(path):
            table = DeltaTable(path)
            rows = table.count()
            console.print(f"  {role:<11} {_shown(path)}  [dim](version {table.version()}, {rows:,} rows)[/]")
    python = shlex.quote(_shown(sys.executable))
    quarantine = _shown(run.config.targets.quarantine)
    results = _shown(run.config.targets.results or run.config.targets.quarantine)
    pandas_line = (
        f"from streaming_dq.tables import read_table; df = read_table({quarantine!r}).to_pandas(); "
        f"print(df[['order_id', 'amount', '{ERRORS}']].head(10).to_string())"
    )
    spark_line = (
        "from pyspark.sql import SparkSession; from streaming_dq.tables import read_table; "
        "spark = SparkSession.builder.master('local[1]').getOrCreate(); "
        f"spark.createDataFrame(read_table({results!r}))"
        ".groupBy('check_id').sum('violations').show()"
    )
    console.print("  query them:")
    for code in (pandas_line, spark_line):
        console.print(f"    {python} -c {escape(_shell_quoted(code))}", soft_wrap=True)
    console.print(
        "    [dim]on a cluster with the delta-spark package: "
        f"spark.read.format('delta').load({escape(repr(_shown(run.config.targets.pass_table)))})[/]"
    )
    config = _shown(run.config.source_file or run.workdir / "demo.yaml")
    console.print(
        f"  re-run the job (nothing new to drain, its checkpoint is kept): {_command()} run {config}"
    )


def _command() -> str:
    """How to call ``streaming-dq`` from here: the console script next to this Python when there is one."""
    script = Path(sys.executable).parent / "streaming-dq"
    return shlex.quote(_shown(script)) if script.is_file() else "streaming-dq"


def _shell_quoted(code: str) -> str:
    """``code`` as one shell word, in double quotes when that needs no escaping (easier to read and edit)."""
    if not set(code) & set('"$`\\!'):
        return f'"{code}"'
    return shlex.quote(code)


_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?P<labels>\{[^}]*\})?\s+(?P<value>\S+)")


def exposition_excerpt(text: str, *, limit: int = 14) -> list[str]:
    """A few real samples of a ``/metrics`` scrape: the interesting series first, zero values left out."""
    samples = [m for line in text.splitlines() if (m := _SAMPLE.match(line)) and not line.startswith("#")]
    picked: list[str] = []
    for prefix in SERIES:
        group = [m for m in samples if m["name"].startswith(prefix) and not m["name"].endswith("_created")]
        group = [m for m in group if _nonzero(m["value"])]
        if prefix == "streaming_dq_check_violations_total":
            group = sorted(group, key=lambda m: -float(m["value"]))[:3]
        picked += [m.group(0) for m in group[:4]]
    return picked[:limit]


def _nonzero(value: str) -> bool:
    try:
        return float(value) != 0.0
    except ValueError:
        return False


def _metrics(run: DemoRun, console: Console) -> None:
    if run.metrics_url is None:
        console.print("[bold]Metrics[/]: no endpoint was configured")
        return
    console.print(f"[bold]Metrics[/] served at {run.metrics_url} while the job ran (stopped with it)")
    if run.exposition is None:
        console.print("  [yellow]the endpoint did not answer the scrape[/]")
        return
    console.print(
        "  scraped over HTTP after the last batch (counters restart with the process: these count the "
        "batches since the restart; Prometheus' rate() and increase() handle such resets):"
    )
    for line in exposition_excerpt(run.exposition):
        console.print(f"    {escape(line)}", soft_wrap=True)


def print_summary(run: DemoRun, console: Console) -> bool:
    """Print the demo's summary; return False (after an error message) when the row counts do not add up."""
    targets = run.config.targets
    passed = read_rows(targets.pass_table)
    quarantine = read_rows(targets.quarantine)
    results = read_rows(targets.results) if targets.results else []
    console.rule("[bold]Summary[/]")
    balanced = _totals(run, len(passed), len(quarantine), console)
    _failures(failing_checks(results), quarantine, time_zone(run.config.gate.timezone), console)
    _windows(run, console)
    _retries(quarantine, time_zone(run.config.gate.timezone), console)
    _tables(run, console)
    _metrics(run, console)
    console.print(f"[bold]Done[/] in {run.seconds:.0f} s.")
    if not balanced:
        console.print(
            f"[red]error:[/] the tables do not account for every generated line: {len(passed):,} passed + "
            f"{len(quarantine):,} quarantined != {run.lines:,} generated"
        )
    return balanced
