"""``streaming-dq sql CONFIG STATEMENT``: one SQL statement in the gate's own Spark session.

The session is the one ``run`` builds from the config (its ``spark:`` settings, its catalog and embedded
metastore, Delta's JARs and extension, the object stores' settings), so ``CREATE SCHEMA sales`` lands in the
catalog the gate reads, and the audit queries of docs/quarantine.md run as written. ``{pass}``,
``{quarantine}``, ``{results}``, ``{metrics}`` and ``{keys}`` stand for the gate's tables (by name when the config names
them, else ``delta.`<location>```).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from streaming_dq.cli.common import (
    EXIT_USAGE,
    ConfigArg,
    JsonOption,
    QuietOption,
    console,
    fail_config,
    problems_of,
)
from streaming_dq.cli.sessions import Progress
from streaming_dq.exceptions import ConfigError

if TYPE_CHECKING:
    from streaming_dq.config.gate_config import GateConfig

__all__ = ["run_sql", "sql", "with_tables"]

_PLACEHOLDER = re.compile(r"\{(pass|quarantine|results|metrics|keys)\}")


def with_tables(statement: str, config: GateConfig) -> str:
    """``statement`` with each ``{role}`` replaced by the gate's table of that role.

    Raises:
        ConfigError: the statement names a table the config does not have.
    """
    from streaming_dq.tables.storage import spark_uri

    tables = config.tables()

    def table(match: re.Match[str]) -> str:
        role = match.group(1)
        if role not in tables:
            raise ConfigError(
                f"{{{role}}}: the gate has no {role} table",
                source=config.source_file,
                field_path=f"targets.{role}",
            )
        target = tables[role]
        return target.name if target.name is not None else f"delta.`{spark_uri(target.uri)}`"

    return _PLACEHOLDER.sub(table, statement)


def run_sql(
    config_path: Path, statement: str, out: Console, *, as_json: bool, limit: int, progress: Progress
) -> int:
    """Run ``statement`` in the gate's session; print its rows (at most ``limit``); the exit code.

    Raises:
        ConfigError: the config is invalid, or the statement names a table the gate does not have.
    """
    from streaming_dq.cli.sessions import opened_gate
    from streaming_dq.config.loader import load_gate_config

    config = load_gate_config(config_path)
    with_tables(statement, config)  # a {role} the gate lacks is refused before Spark starts
    # names stay names: {pass} of a catalog table is its name, and CREATE SCHEMA runs before any table exists
    with opened_gate(config, "sql", spark=True, writer="spark", progress=progress, resolve=False) as opened:
        frame = opened.require_session().sql(with_tables(statement, opened.config))
        rows = [row.asDict(recursive=True) for row in frame.limit(limit + 1).collect()]
        columns = frame.columns
    more = len(rows) > limit
    rows = rows[:limit]
    if as_json:
        out.print_json(json.dumps({"columns": columns, "rows": rows, "truncated": more}, default=str))
        return 0
    if columns:
        table = Table(*columns, show_lines=False)
        for row in rows:
            table.add_row(*(escape(_cell(row[c])) for c in columns))
        out.print(table)
    out.print(escape(f"{len(rows)} row(s)" + (f", more not shown (--limit {limit})" if more else "")))
    return 0


def _cell(value: Any) -> str:
    return "NULL" if value is None else str(value)


def sql(
    config: ConfigArg,
    statement: Annotated[
        str,
        typer.Argument(
            help="One Spark SQL statement; {pass}, {quarantine}, {results}, {metrics} and {keys} stand for the "
            "gate's tables.",
            show_default=False,
            metavar="STATEMENT",
        ),
    ],
    limit: Annotated[int, typer.Option("--limit", min=1, help="Print at most N rows.", metavar="N")] = 100,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Run one SQL statement in the gate's own Spark session: its catalog and metastore, Delta, its stores.

    For `CREATE SCHEMA sales` before a gate writes catalog tables, and for audits such as
    `SELECT _dq_batch_id, count(*) FROM {quarantine} GROUP BY 1`. Exit 0, 2 on a config error or a statement
    Spark refuses.
    """
    from pyspark.errors import PySparkException

    out = console() if sys.stdout.isatty() else Console(highlight=False, width=400)
    try:
        code = run_sql(config, statement, out, as_json=as_json, limit=limit, progress=Progress(quiet))
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=as_json) from None
    except PySparkException as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        console(stderr=True).print(f"[red]error:[/] {escape(first)}", soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
    raise typer.Exit(code)
