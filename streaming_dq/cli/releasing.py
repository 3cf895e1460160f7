"""``streaming-dq release CONFIG``: judge quarantined rows again after a fix and release those that pass.

The gate of the config (its tables, writer, checks, reference data and profiles) in a session built from its
``spark:`` section; the work is :func:`streaming_dq.release.release`. Text: one line per check the rows were
quarantined for, then the totals; ``--json``: one document. A progress line per chunk goes to stderr.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from streaming_dq.cli.sessions import Progress
    from streaming_dq.config.gate_config import GateConfig
    from streaming_dq.core.modes import FailOn
    from streaming_dq.release import Fix, ReleaseReport, ReleaseRequest
    from streaming_dq.release.discard import DiscardReport


def request_of(
    timezone: str,
    *,
    checks: list[str],
    batches: str | None,
    event_time: str | None,
    where: str | None,
    sets: list[str],
    note: str | None,
) -> ReleaseRequest:
    """The command line's selection and fixes (an error names its option)."""
    from streaming_dq.release import Fix, ReleaseRequest, parse_batch_range, parse_time_range

    return ReleaseRequest(
        checks=tuple(checks),
        batches=parse_batch_range(batches) if batches is not None else None,
        event_time=parse_time_range(event_time, timezone) if event_time is not None else None,
        where=where,
        fixes=tuple(Fix.parse(s) for s in sets),
        note=note,
    )


def run_release(
    config_path: Path,
    console: Console,
    *,
    dry_run: bool,
    as_json: bool,
    chunk_rows: int,
    progress: Progress,
    fail_on: FailOn = "critical",
    **selection: object,
) -> int:
    """Release the quarantined rows of the gate in ``config_path``; print what happened; the exit code: 1 when
    rows judged again still fail (they failed a check at a fail level: critical ones, unless ``fail_on`` is
    ``never``), else 0.

    Raises:
        ConfigError: The config or an option is invalid, or another release of the gate did not finish.
    """
    from streaming_dq.cli.sessions import opened_gate
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.exceptions import ConfigError
    from streaming_dq.release import release
    from streaming_dq.sink import QualityGate
    from streaming_dq.sources.reparse import record_parser

    config = load_gate_config(config_path)
    request = request_of(config.gate.timezone, **selection)  # type: ignore[arg-type]
    refuse_unknown_selection(config, request.checks, request.fixes)  # before Spark starts
    name = config.gate.name

    def chunk_done(done: int, planned: int, counts: dict[str | None, tuple[int, int]]) -> None:
        released, still = counts.get(None, (0, 0))
        progress.say(f"{name}: chunk {done}/{planned}: {released:,} released, {still:,} still quarantined")

    with opened_gate(config, "release", spark=True, progress=progress) as opened:
        config, session = opened.config, opened.require_session()
        gate = QualityGate.from_config(config)
        try:
            report = release(
                gate,
                session,
                request,
                dry_run=dry_run,
                chunk_rows=chunk_rows,
                progress=chunk_done,
                parser=record_parser(config.source),
            )
        except ConfigError as exc:
            raise ConfigError(exc.reason, source=str(config_path), field_path=exc.field_path) from None
    _print(report, request, console, as_json=as_json)
    return 1 if report.still_quarantined and fail_on != "never" else 0


def refuse_unknown_selection(config: GateConfig, checks: Sequence[str], fixes: Sequence[Fix]) -> None:
    """A ``--check`` the gate does not have, a ``--set`` column its schema lacks: refused with "did you mean"
    (:func:`~streaming_dq.release.request.refuse_unknown`), before a session starts (#42)."""
    from streaming_dq.config.fields import ddl_column_names
    from streaming_dq.engine.plan import MALFORMED_CHECK_ID
    from streaming_dq.release.request import refuse_unknown
    from streaming_dq.sink.drift import DRIFT_CHECK_ID

    ids = [c.check_id for c in config.check_set()] + [MALFORMED_CHECK_ID, DRIFT_CHECK_ID]
    schema = config.source.schema_
    refuse_unknown(
        checks,
        fixes,
        check_ids=ids,
        columns=ddl_column_names(schema) if schema else None,
        source=config.source_file,
    )


def run_discard(
    config_path: Path,
    console: Console,
    *,
    older_than: str,
    checks: list[str],
    dry_run: bool,
    as_json: bool,
    progress: Progress,
) -> int:
    """Discard the old quarantined rows of the gate in ``config_path``; print what happened; the exit code (0).

    Raises:
        ConfigError: The config or an option is invalid, or another discard of the gate did not finish.
    """
    from streaming_dq.cli.common import duration_of
    from streaming_dq.cli.sessions import opened_gate
    from streaming_dq.config.loader import load_gate_config
    from streaming_dq.exceptions import ConfigError
    from streaming_dq.release.discard import discard
    from streaming_dq.sink import QualityGate

    age = duration_of(older_than, "--older-than")
    config = load_gate_config(config_path)
    refuse_unknown_selection(config, checks, ())  # before Spark starts
    with opened_gate(config, "discard", spark=True, progress=progress) as opened:
        gate = QualityGate.from_config(opened.config)
        try:
            report = discard(gate, opened.require_session(), age, checks=tuple(checks), dry_run=dry_run)
        except ConfigError as exc:
            raise ConfigError(exc.reason, source=str(config_path), field_path=exc.field_path) from None
    _print_discard(report, console, as_json=as_json)
    return 0


def _print_discard(report: DiscardReport, console: Console, *, as_json: bool) -> None:
    if as_json:
        console.print_json(json.dumps(report.to_dict()))
        return
    verb = "would be deleted" if report.dry_run else "deleted"
    width = max([len(c) for c in report.per_check] + [5])
    for check, n in report.per_check.items():
        console.print(escape(f"{check:<{width}}  {n:>10,} {verb}"))
    what = (
        "dry run"
        if report.dry_run
        else f"discard {report.discard_id}" + (" (resumed)" if report.resumed else "")
    )
    console.print(
        escape(
            f"{report.gate}: {what}: {report.discarded:,} quarantined row(s) validated before "
            f"{report.cutoff.isoformat(timespec='seconds')} {verb} in {report.seconds:.1f} s"
        )
    )


def _print(report: ReleaseReport, request: ReleaseRequest, console: Console, *, as_json: bool) -> None:
    if as_json:
        console.print_json(json.dumps({**report.to_dict(), "request": request.to_dict()}))
        return
    verb = ("would be released", "would still fail") if report.dry_run else ("released", "still quarantined")
    width = max([len(c) for c in report.per_check] + [5])
    for check, (released, still) in report.per_check.items():
        console.print(escape(f"{check:<{width}}  {released:>10,} {verb[0]}  {still:>10,} {verb[1]}"))
    what = (
        "dry run"
        if report.dry_run
        else f"release {report.release_id}" + (" (resumed)" if report.resumed else "")
    )
    console.print(
        escape(
            f"{report.gate}: {what}: {report.released:,} row(s) {verb[0]}, {report.still_quarantined:,} "
            f"{verb[1]}"
            + ("" if report.dry_run else f", {report.chunks} chunk(s)")
            + f" in {report.seconds:.1f} s"
        )
    )
    if report.dry_run:
        print("nothing was written", file=sys.stderr)
