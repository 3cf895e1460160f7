"""``streaming-dq contract CONFIG``: how each rule of the config's ODCS contract was mapped (without Spark)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from streaming_dq.cli.common import EXIT_USAGE, ConfigArg, JsonOption, console, fail_config

__all__ = ["contract", "contract_line"]


def contract_line(mapping: Any) -> str:
    """One line for ``validate``: the contract, and how many of its rules run."""
    skipped = len(mapping.rules) - len(mapping.checks())
    tail = f", {skipped} not executable (streaming-dq contract CONFIG lists why)" if skipped else ""
    version = f" v{mapping.version}" if mapping.version else ""
    return (
        f"contract {mapping.contract_id!r}{version}, schema {mapping.schema_object!r}: "
        f"{len(mapping.checks())} of {len(mapping.rules)} rules run as checks{tail}"
    )


def contract(
    config: ConfigArg,
    as_json: JsonOption = False,
    batches: Annotated[
        int, typer.Option("--batches", min=0, help="Also how many of the rules held in the last N batches.")
    ] = 0,
) -> None:
    """Print how each rule of the gate's data contract (`contract:`, ODCS v3) was mapped: the check it became
    (row-level: a row that breaks it is quarantined; batch: it judges the batch), or why it is not executable.

    Nothing is dropped in silence: every rule of the judged schema object is listed. With `--batches N`, the
    results table's verdicts in contract terms: per batch, how many of the contract's rules held and which
    broke. Exit 0, or 2 when the config or the contract is invalid (`FILE: path.to.field: reason`) or the
    config has no `contract:`.
    """
    from streaming_dq.config.loader import inspect_gate_config

    loaded, problems = inspect_gate_config(config)
    if problems or loaded is None:
        raise fail_config(problems, as_json=as_json)
    mapping = loaded.contract_mapping
    if mapping is None:
        message = f"{config}: contract: the config names no data contract"
        if as_json:
            typer.echo(json.dumps({"ok": False, "problems": [message]}, indent=2))
        else:
            typer.echo(message, err=True)
        raise typer.Exit(EXIT_USAGE)
    held = _held(loaded, mapping, batches) if batches else None
    if as_json:
        doc = {"ok": True, "file": str(config), "contract": mapping.summary()}
        if held is not None:
            doc["batches"] = held
        typer.echo(json.dumps(doc, indent=2))
        return
    table = Table(title=escape(contract_line(mapping)), title_justify="left", show_lines=False)
    for column in ("rule", "where in the contract", "kind", "level", "check / why not"):
        table.add_column(column, overflow="fold")
    for rule in mapping.rules:
        became = f"{rule.check['check']}" if rule.check else f"not executable: {rule.reason}"
        table.add_row(
            escape(rule.rule_id), escape(rule.where), escape(rule.kind), rule.level or "-", escape(became)
        )
    out = console()
    out.print(table)
    for note in mapping.notes:
        out.print(f"note: {escape(note)}")
    for batch in held or []:
        out.print(escape(f"batch {batch['batch_id']}: {mapping.line(batch)}"))


def _held(loaded: Any, mapping: Any, last: int) -> list[dict[str, Any]]:
    """The last ``last`` batches of the gate's results table, in contract terms (none without the table)."""
    from deltalake.exceptions import TableNotFoundError

    from streaming_dq.tables.reading import read_table, sql_literal

    if loaded.targets.results is None:
        raise typer.BadParameter("the config has no targets.results table to read", param_hint="--batches")
    target = loaded.table("results")
    try:
        rows = read_table(
            target.uri,
            storage_options=target.storage_options,
            predicate=f"gate = {sql_literal(loaded.gate.name)}",
        ).to_pylist()
    except TableNotFoundError:  # no batch has run yet: no verdicts to show
        return []
    return list(mapping.held_by_batch(rows, last))
