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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from streaming_dq.exceptions import ConfigError

if TYPE_CHECKING:
    from streaming_dq.cli.sessions import Progress
    from streaming_dq.config.gate_config import GateConfig

__all__ = ["run_sql", "with_tables"]

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
