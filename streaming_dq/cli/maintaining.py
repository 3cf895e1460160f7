"""``streaming-dq maintain CONFIG``: compact, checkpoint, vacuum and roll up a gate's tables by hand.

The same operations the gate runs between batches under ``maintenance:`` (:mod:`streaming_dq.maintenance`),
with the config's policy and the command line's overrides. A ``delta-rs`` gate is maintained without Spark; a
gate written by Spark's Delta writer (``writer: spark``, or ``auto`` on a cluster master) is maintained with
Delta's own ``OPTIMIZE`` and ``VACUUM`` in a session built from the config's ``spark:`` section. Run it while
the gate is stopped, or accept that a concurrent batch may make one table's compaction fail with a conflict
(the gate's own appends never conflict with each other: they only add files).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from streaming_dq.cli.common import duration_of
from streaming_dq.exceptions import ConfigError

if TYPE_CHECKING:
    from streaming_dq.cli.sessions import Progress
    from streaming_dq.config.gate_config import GateConfig
    from streaming_dq.core.outcome import MaintenanceReport
    from streaming_dq.maintenance import MaintenancePolicy


def policy_for(
    config: GateConfig,
    *,
    compact: bool | None = None,
    checkpoint: bool | None = None,
    vacuum: str | None = None,
    dry_run: bool = False,
    roll_up_after: str | None = None,
    log_retention: str | None = None,
) -> MaintenancePolicy:
    """The config's ``maintenance:`` policy (or the defaults) with the command line's overrides."""
    from streaming_dq.maintenance import MaintenancePolicy

    policy = config.maintenance.policy() if config.maintenance is not None else MaintenancePolicy()
    changes: dict[str, object] = {}
    if compact is not None:
        changes["compact"] = compact
    if checkpoint is not None:
        changes["checkpoint"] = checkpoint
    if vacuum is not None:
        changes["vacuum_retention"] = duration_of(vacuum, "--vacuum")
    if dry_run:
        if policy.vacuum_retention is None and "vacuum_retention" not in changes:
            raise ConfigError(
                "--dry-run lists what a vacuum would delete: give --vacuum RETENTION", field_path="--dry-run"
            )
        changes["vacuum_dry_run"] = True
    if roll_up_after is not None:
        changes["roll_up_after"] = duration_of(roll_up_after, "--roll-up-after")
    if log_retention is not None:
        changes["log_retention"] = duration_of(log_retention, "--log-retention")
    if dry_run:  # writes nothing: every step that commits is left out, the vacuum only lists (#42)
        changes |= {"compact": False, "checkpoint": False, "roll_up_after": None, "log_retention": None}
    return replace(policy, **changes)  # type: ignore[arg-type]


def uses_spark_writer(config: GateConfig) -> bool:
    """Whether the gate's tables are written (so maintained) by Spark's Delta writer."""
    writer = config.targets.writer
    return writer == "spark" or (writer == "auto" and not config.spark.master.startswith("local"))


def run_maintain(
    config_path: Path, console: Console, *, as_json: bool, progress: Progress, **overrides: object
) -> int:
    """Maintain the tables of the gate in ``config_path``; print one line per table; the exit code.

    Raises:
        ConfigError: the config or an override is invalid, or a vacuum retention is below a table's safe
            minimum.
    """
    from streaming_dq.cli.sessions import opened_gate
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.maintenance import maintain
    from streaming_dq.metrics.store import MetricsStore
    from streaming_dq.sink.seen_keys import SeenKeys, stream_key_checks
    from streaming_dq.tables import DeltaRsWriter, SparkDeltaWriter

    config = load_gate_config(config_path)
    policy = policy_for(config, **overrides)  # type: ignore[arg-type]
    on_spark = uses_spark_writer(config)
    with opened_gate(
        config, "maintain", spark=on_spark, writer="spark" if on_spark else None, progress=progress
    ) as opened:
        config = opened.config
        writer = SparkDeltaWriter(opened.require_session()) if on_spark else DeltaRsWriter()
        targets, missing = {}, []
        for role, target in config.tables().items():
            if writer.table_schema(target) is None:
                missing.append((role, target.uri))
            else:
                targets[role] = target
        metrics = None
        if "metrics" in targets:
            store = MetricsStore(
                targets["metrics"].uri,
                storage_options=dict(targets["metrics"].storage_options),
                writer=writer,
            )
            metrics = (store, config.gate.name)
        prune = {}
        if "keys" in targets:
            seen = SeenKeys(
                config.gate.name,
                stream_key_checks(config.check_set()),
                targets["keys"],
                config.gate.event_time,
            )
            if seen:
                prune["keys"] = lambda: seen.forget(writer)
        try:
            report = maintain(
                writer,
                targets,
                policy,
                metrics=metrics,
                prune=prune,
                on_table=lambda role, done: progress.say(
                    f"{config.gate.name}: {role} maintained ({done.seconds:.1f} s)"
                ),
            )
        except ConfigError as exc:
            raise ConfigError(exc.reason, source=str(config_path), field_path=exc.field_path) from None
    _print(report, missing, console, as_json=as_json, writer=writer.name)
    return 1 if report.failed else 0


def _print(
    report: MaintenanceReport, missing: list[tuple[str, str]], console: Console, *, as_json: bool, writer: str
) -> None:
    if as_json:
        tables = [
            {"table": t.role, "path": t.uri, "files_before": t.files_before, "files_after": t.files_after,
             "compacted": list(t.compacted) if t.compacted else None, "checkpointed": t.checkpointed,
             "vacuumed": t.vacuumed, "dry_run": t.dry_run, "rolled_up": list(t.rolled_up) if t.rolled_up else None, "forgotten": t.forgotten,
             "log_retention_seconds": t.log_retention.total_seconds() if t.log_retention else None,
             "seconds": round(t.seconds, 3), "error": t.error}
            for t in report.tables
        ]  # fmt: skip
        absent = [{"table": role, "path": path, "error": "no table yet"} for role, path in missing]
        console.print_json(
            json.dumps({"writer": writer, "tables": tables + absent, "seconds": report.seconds})
        )
        return
    for t in report.tables:
        console.print(escape(t.line()), style="red" if t.error else None)
    for role, path in missing:
        console.print(
            escape(f"{role} {path}: no table yet (the gate creates it on its first run)"), style="dim"
        )
    console.print(escape(f"maintained {len(report.tables)} table(s) with {writer} in {report.seconds:.1f} s"))
