"""``streaming-dq doctor CONFIG``: audit a gate's tables for broken invariants, and repair what can be.

The audit reads the tables' Delta logs with delta-rs (no Spark, unless catalog table names must be looked up):
see :mod:`streaming_dq.maintenance.doctor` for what it finds and how ``--repair`` mends a batch committed
twice. Run ``--repair`` while the gate is stopped.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from streaming_dq.cli.sessions import Progress

EXIT_HEALTHY, EXIT_FINDINGS = 0, 1


def run_doctor(
    config_path: Path, out: Console, *, repair: bool, dry_run: bool, as_json: bool, progress: Progress
) -> int:
    """Audit (and with ``repair``, mend) the tables of the gate in ``config_path``; print one line per finding;
    the exit code: 0 when nothing is left broken, 1 otherwise.

    Raises:
        ConfigError: the config is invalid.
    """
    from streaming_dq.cli.sessions import opened_gate
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.maintenance import doctor

    config = load_gate_config(config_path)
    with opened_gate(config, "doctor", progress=progress) as opened:  # catalog names looked up as `run` does
        config = opened.config
    targets = config.tables()
    findings = doctor.examine(targets)
    if repair or dry_run:
        findings = doctor.repair(targets, findings, dry_run=dry_run or not repair)
    left = [f for f in findings if not f.repaired]
    if as_json:
        out.print_json(json.dumps({"gate": config.gate.name, "findings": [f.as_json() for f in findings]}))
        return EXIT_FINDINGS if left else EXIT_HEALTHY
    for finding in findings:
        mark = (
            "repaired" if finding.repaired else "would repair" if dry_run and finding.repairable else "found"
        )
        out.print(escape(f"{mark}: {finding.line}"), style="green" if finding.repaired else "red")
    if not findings:
        out.print(escape(f"gate {config.gate.name!r}: {len(targets)} table(s) examined, nothing broken"))
    elif dry_run:
        out.print(escape("dry run: nothing written"), style="dim")
    return EXIT_FINDINGS if left else EXIT_HEALTHY
