"""Old quarantined rows deleted for good: raw bad data is often personal data with a retention limit.

``streaming-dq quarantine discard CONFIG --older-than 90d [--check ID]`` deletes the gate's quarantined rows
validated before the cut-off (only those whose current reasons include one of the checks, when given), in ONE
commit of the quarantine table under the discard's own app transaction, recorded in the results table like a
release (``kind = "discard"``: started, with the counts per check, then finished). A rerun after a crash finishes
the interrupted discard with its recorded cut-off. The bytes leave the storage with the next vacuum older than
the table's retention (``streaming-dq maintain --vacuum``). Released rows are discarded too: the pass table
holds them.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streaming_dq.core.modes import RELEASE_COMMIT_ORDER, TableRole
from streaming_dq.core.outcome_rows import results_table
from streaming_dq.core.results_log import DISCARD_KIND, START_SUFFIX, discard_rows
from streaming_dq.exceptions import ConfigError
from streaming_dq.release.judge import current_errors, quarantined_for
from streaming_dq.release.runner import new_release_id, who
from streaming_dq.release.store import Store, results_target, store_for, string_literal, timestamp_literal
from streaming_dq.sink.commit import Write, commit_in_order
from streaming_dq.sink.schemas import GATE_COLUMN, VALIDATION_TS_COLUMN
from streaming_dq.tables import AppTransaction
from streaming_dq.tables.reading import sql_literal
from streaming_dq.tables.targets import writing

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streaming_dq.core.severity import Severity
    from streaming_dq.sink.gate import QualityGate

logger = logging.getLogger("streaming_dq.release")

__all__ = ["DiscardReport", "discard"]

_START = START_SUFFIX


@dataclass(frozen=True)
class DiscardReport:
    """What a discard did (or, with ``dry_run``, would do).

    Attributes:
        per_check: Check id the rows were quarantined for -> rows deleted (a row may count for several).
    """

    gate: str
    discard_id: str
    app_id: str
    dry_run: bool
    resumed: bool
    cutoff: datetime
    discarded: int
    per_check: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "discard_id": self.discard_id,
            "app_id": self.app_id,
            "dry_run": self.dry_run,
            "resumed": self.resumed,
            "cutoff": self.cutoff.isoformat(),
            "discarded": self.discarded,
            "checks": [{"check_id": c, "discarded": n} for c, n in self.per_check.items()],
            "seconds": round(self.seconds, 3),
        }


def discard(
    gate: QualityGate,
    spark: SparkSession,
    older_than: timedelta,
    *,
    checks: tuple[str, ...] = (),
    dry_run: bool = False,
    by: str | None = None,
) -> DiscardReport:
    """Delete the gate's quarantined rows validated more than ``older_than`` ago (see the module).

    Raises:
        ConfigError: No results table, a negative age, or another discard of the gate that did not finish
            with other options.
        TargetWriteError: A table could not be read or written (rerun: the discard finishes).
    """
    started = time.monotonic()
    if older_than < timedelta(0):
        raise ConfigError("must not be negative", field_path="--older-than")
    results = results_target(gate.targets, "discard")
    writer = gate.writer_for(spark)
    store = store_for(spark, writer, gate.targets["quarantine"], gate.targets["pass"])
    key = json.dumps(
        {"older_than": older_than.total_seconds(), "checks": sorted(set(checks))}, sort_keys=True
    )
    unfinished = _unfinished(store, results, gate.name)
    resumed = unfinished is not None
    if unfinished is not None:
        if unfinished["key"] != key:
            raise ConfigError(
                f"discard {unfinished['id']} of gate {gate.name!r} (older than {unfinished['older_than']} s, "
                f"checks {unfinished['checks'] or 'any'}) did not finish: run it again with those options first",
                field_path="discard",
            )
        discard_id, cutoff = unfinished["id"], datetime.fromisoformat(unfinished["cutoff"])
        counts: dict[str | None, int] = {k if k != "" else None: v for k, v in unfinished["counts"].items()}
    else:
        now = datetime.now(UTC)
        discard_id, cutoff = new_release_id(now), now - older_than
    app_id = f"{gate.name}/discard/{discard_id}"
    predicate = (
        f"{GATE_COLUMN} = {string_literal(gate.name, 'gate name')}"
        f" AND {VALIDATION_TS_COLUMN} < {timestamp_literal(cutoff)}"
    )
    chosen = _chosen(checks)
    if unfinished is None:
        counts = _count(store.rows(predicate).where(chosen), gate.options.fail_levels)
        if dry_run:
            return _report(gate.name, discard_id, "", True, False, cutoff, counts, started)
        record = {
            "id": discard_id,
            "key": key,
            "older_than": older_than.total_seconds(),
            "checks": sorted(set(checks)),
            "cutoff": cutoff.isoformat(),
            "counts": {k or "": v for k, v in counts.items()},
            "by": by or who(),
        }
        head = {"gate": gate.name, "app_id": app_id + _START, "batch_id": None}
        rows = discard_rows(
            head, "started", datetime.now(UTC), counts, reason=json.dumps(record, sort_keys=True)
        )
        with writing(results, None):
            writer.write_once(
                results, results_table(rows), AppTransaction(app_id + _START, 0), merge_schema=True
            )
    elif dry_run:
        return _report(gate.name, discard_id, app_id, True, True, cutoff, counts, started)
    txn = AppTransaction(app_id, 0)
    head = {"gate": gate.name, "app_id": app_id, "batch_id": None}

    def finished() -> None:
        with writing(results, None):
            writer.append(
                results, results_table(discard_rows(head, "finished", datetime.now(UTC), counts)), txn
            )

    # a discard commits in a release's order, with no pass rows: the rows kept (one commit), then the record
    writes: dict[TableRole, Write] = {"results": Write(results, finished)}
    if counts.get(None, 0):
        writes["quarantine"] = Write(
            store.quarantine, lambda: store.replace(store.rows(predicate).where(~chosen), predicate, txn)
        )
    commit_in_order(
        RELEASE_COMMIT_ORDER, writes, txn, writer=writer, spark=spark, gate=gate.name, unit="discard"
    )
    report = _report(gate.name, discard_id, app_id, False, resumed, cutoff, counts, started)
    logger.info(
        "gate %r: discard %s: %d quarantined row(s) validated before %s deleted",
        gate.name,
        discard_id,
        report.discarded,
        cutoff.isoformat(),
    )
    return report


def _chosen(checks: tuple[str, ...]) -> Any:
    if not checks:
        return F.lit(True)
    ids = F.array(*[F.lit(c) for c in checks])
    return F.exists(current_errors(), lambda e: F.array_contains(ids, e["check-id"]))


def _count(rows: DataFrame, fail_levels: Iterable[Severity]) -> dict[str | None, int]:
    """Rows in total (None) and per check they were quarantined for. One Spark job."""
    exploded = rows.select(F.posexplode_outer(quarantined_for(fail_levels)))
    first = F.when(F.col("pos").isNull() | (F.col("pos") == 0), 1).otherwise(0)
    counts: dict[str | None, int] = {None: 0}
    for r in exploded.groupBy("col").agg(F.count(F.lit(1)).alias("n"), F.sum(first).alias("rows")).collect():
        counts[None] += int(r["rows"])
        if r["col"] is not None:
            counts[r["col"]] = int(r["n"])
    return counts


def _unfinished(store: Store, results: Any, gate: str) -> dict[str, Any] | None:
    """The gate's discard that started and did not finish, as its started row recorded it."""
    predicate = f"gate = {sql_literal(gate)} AND kind = {sql_literal(DISCARD_KIND)} AND check_id IS NULL"
    with writing(results, None):
        if store.writer.table_schema(results) is None:
            return None
        rows = store.writer.read(results, predicate=predicate).to_pylist()
    finished = {r["app_id"] for r in rows if r["status"] == "finished"}
    open_ = [r for r in rows if r["status"] == "started" and r["app_id"].removesuffix(_START) not in finished]
    if not open_:
        return None
    record: dict[str, Any] = json.loads(min(open_, key=lambda r: r["validation_ts"])["reason"])
    return record


def _report(
    gate: str,
    discard_id: str,
    app_id: str,
    dry_run: bool,
    resumed: bool,
    cutoff: datetime,
    counts: dict[str | None, int],
    started: float,
) -> DiscardReport:
    return DiscardReport(
        gate=gate,
        discard_id=discard_id,
        app_id=app_id,
        dry_run=dry_run,
        resumed=resumed,
        cutoff=cutoff,
        discarded=counts.get(None, 0),
        per_check={k: v for k, v in sorted(counts.items(), key=lambda kv: kv[0] or "") if k is not None},
        seconds=time.monotonic() - started,
    )
