"""``streaming-dq validate`` and ``streaming-dq schema``: a config or checks file judged without Spark, and the
JSON Schema for editors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from streaming_dq.cli.common import EXIT_USAGE, ConfigArg, JsonOption, count, fail_config, problems_of
from streaming_dq.exceptions import ConfigError

__all__ = ["schema", "validate"]


# --- validate -----------------------------------------------------------------------------------------------


def validate(config: ConfigArg, as_json: JsonOption = False) -> None:
    """Check a gate config (or a checks file, ours or DQX's rules) without running Spark.

    Every check is built through the check factory and every profile is parsed, and every path is checked as
    `run` checks it before Spark starts (sources and references readable, checkpoint and tables writable,
    object-store buckets reachable, commits safe). Exit 0 with a one-line
    summary, or 2 with one `FILE: FIELD.PATH: reason` line per problem. In a config, `${VAR}` and
    `${VAR:-default}` are environment variables, `${CONFIG_DIR}` is the file's folder, and relative paths
    are read from the file's folder.
    """
    from streaming_dq.config.loader import inspect_gate_config
    from streaming_dq.config.yaml_reader import read_yaml

    try:
        data = read_yaml(config)
    except ConfigError as exc:
        raise fail_config([exc], as_json=as_json) from None
    if not (isinstance(data, dict) and "gate" in data):
        _validate_checks_file(config, as_json=as_json)
        return
    loaded, problems = inspect_gate_config(config)
    if loaded is not None and not problems and loaded.spark.remote is None:
        from streaming_dq.config.paths import path_problems

        problems = path_problems(loaded)  # what `run` refuses before Spark: the same check (#42)
    if problems or loaded is None:
        raise fail_config(problems, as_json=as_json)
    from streaming_dq.checks.unknown_fields import UnknownFieldsCheck
    from streaming_dq.config.dqx import is_dqx_rules

    dqx = loaded.dialect == "dqx" or (loaded.dialect == "auto" and is_dqx_rules(loaded.checks))
    notes = list(loaded.translation_notes)

    check_set = loaded.check_set()
    builtin = [c for c in check_set if isinstance(c, UnknownFieldsCheck)]
    rows = len(check_set.get_row_checks()) - len(builtin)
    aggregates = len(check_set.get_aggregate_checks())
    if as_json:
        doc = {
            "ok": True,
            "file": str(config),
            "gate": loaded.gate.name,
            "checks": len(check_set) - len(builtin),
            "row_checks": rows,
            "unknown_fields": loaded.source.unknown_fields if builtin else None,
            "aggregate_checks": aggregates,
            "profiles": [p.name for p in loaded.profiles],
            "dialect": "dqx" if dqx else "native",
            "notes": notes,
        }
        if loaded.contract_mapping is not None:
            doc["contract"] = loaded.contract_mapping.summary()
        typer.echo(json.dumps(doc, indent=2))
        return
    extra = f" + unknown-fields ({loaded.source.unknown_fields})" if builtin else ""
    typer.echo(
        f"ok: gate {loaded.gate.name!r}: {count(len(check_set) - len(builtin), 'check')} ({rows} row, "
        f"{aggregates} aggregate){extra}, {count(len(loaded.profiles), 'profile')}"
        + (" (DQX rules)" if dqx else "")
    )
    if loaded.contract_mapping is not None:
        from streaming_dq.cli.contracting import contract_line

        typer.echo(contract_line(loaded.contract_mapping))
        notes += loaded.contract_mapping.notes
    for note in notes:
        typer.echo(f"note: {note}")


def _validate_checks_file(path: Path, *, as_json: bool) -> None:
    """``validate`` on a checks file (a list of checks, ours or DQX's rules) rather than a gate config."""
    from streaming_dq.config.loader import load_check_file

    try:
        loaded = load_check_file(path)
    except ConfigError as exc:
        raise fail_config(problems_of(exc), as_json=as_json) from None
    checks = loaded.check_set
    rows, aggregates = len(checks.get_row_checks()), len(checks.get_aggregate_checks())
    if as_json:
        doc = {
            "ok": True,
            "file": str(path),
            "checks": len(checks),
            "row_checks": rows,
            "aggregate_checks": aggregates,
            "dialect": loaded.dialect,
            "notes": list(loaded.notes),
        }
        typer.echo(json.dumps(doc, indent=2))
        return
    dialect = " (DQX rules)" if loaded.dialect == "dqx" else ""
    typer.echo(
        f"ok: checks file: {count(len(checks), 'check')} ({rows} row, {aggregates} aggregate){dialect}"
    )
    for note in loaded.notes:
        typer.echo(f"note: {note}")


# --- schema -------------------------------------------------------------------------------------------------


def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the JSON Schema of the gate config, for editors.

    With the YAML language server: put `# yaml-language-server: $schema=gate-config.schema.json` at the top
    of a config after `streaming-dq schema -o gate-config.schema.json`.
    """
    from streaming_dq.config.gate_config import gate_config_json_schema

    text = json.dumps(gate_config_json_schema(), indent=2)
    if output is None:
        typer.echo(text)
        return
    if not output.parent.is_dir():
        typer.echo(f"error: --output {output}: no such folder {output.parent}", err=True)
        raise typer.Exit(EXIT_USAGE)
    try:
        output.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        typer.echo(f"error: --output {output}: {exc.strerror or exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
