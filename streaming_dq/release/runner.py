"""A release from start to end: select, judge, commit chunk by chunk, record; resume where a crash stopped it.

The walk (each step a committed unit of work, so a SIGKILL anywhere leaves a state a rerun finishes):

1. find an unfinished release of the gate (:class:`~streaming_dq.release.ledger.Ledger`): with the same
   request it is resumed, under its id; with another the release is refused, naming it;
2. else record the start (the request, who ran it);
3. if the last chunk's quarantine commit happened and its pass commit or record did not, make them;
4. plan chunks over the selected rows not yet judged by this release (batches, up to ``chunk_rows`` rows);
5. per chunk, in :data:`~streaming_dq.core.modes.RELEASE_COMMIT_ORDER` under ``(<gate>/release/<id>, chunk
   number)``, run by the sink's one commit sequencer (:func:`~streaming_dq.sink.commit.commit_in_order`,
   which skips a table that has the chunk already): judge its rows and replace them in the quarantine table
   (a commit that meets a concurrent one is retried from a fresh read), append the rows it marked
   ``released`` to the pass table, record its counts in the results table;
6. record the end with the totals.
"""

from __future__ import annotations

import getpass
import logging
import re
import secrets
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streaming_dq.compat.spark import spark_schema
from streaming_dq.core.modes import RELEASE_COMMIT_ORDER, TableRole
from streaming_dq.exceptions import ConfigError, TargetWriteError
from streaming_dq.release.judge import RELEASED, ReleaseJudge, ReleaseStamp, input_columns_of, quarantined_for
from streaming_dq.release.ledger import Counts, Ledger, total
from streaming_dq.release.store import Chunk, Store, marked_predicate, results_target, store_for
from streaming_dq.sink.commit import Write, commit_in_order
from streaming_dq.sink.schemas import BATCH_ID_COLUMN, RELEASE_COLUMN, VALIDATION_TS_COLUMN
from streaming_dq.tables import AppTransaction

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streaming_dq.core.severity import Severity
    from streaming_dq.release.request import ReleaseRequest
    from streaming_dq.sink.gate import QualityGate
    from streaming_dq.sources.reparse import RecordParser

logger = logging.getLogger("streaming_dq.release")

__all__ = ["DEFAULT_CHUNK_ROWS", "ReleaseReport", "release"]

#: Rows per chunk by default: with delta-rs a chunk's rows are held on the driver (as a 1M-row micro-batch is
#: by the driver router). A chunk costs a fixed ~4-6 s on local[2] (two commits, reads of the marked rows): a
#: release of 1M rows took 47 s in 5 chunks and 16-22 s in one (benchmarks/release.py).
DEFAULT_CHUNK_ROWS = 1_000_000
_ATTEMPTS = 5
_CONFLICT = re.compile(r"Concurrent|CommitFailed|conflict|MetadataChanged|ProtocolChanged", re.I)


@dataclass(frozen=True)
class ReleaseReport:
    """What a release did (or, with ``dry_run``, would do).

    Attributes:
        per_check: Check id the rows were quarantined for -> (released, still failing).
    """

    gate: str
    release_id: str
    app_id: str
    dry_run: bool
    resumed: bool
    released: int
    still_quarantined: int
    per_check: dict[str, tuple[int, int]] = field(default_factory=dict)
    chunks: int = 0
    seconds: float = 0.0

    @classmethod
    def of(cls, counts: Counts, **kwargs: Any) -> ReleaseReport:
        released, still = counts.get(None, (0, 0))
        per_check = {k: v for k, v in sorted(counts.items(), key=lambda kv: kv[0] or "") if k is not None}
        return cls(released=released, still_quarantined=still, per_check=per_check, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "release_id": self.release_id,
            "app_id": self.app_id,
            "dry_run": self.dry_run,
            "resumed": self.resumed,
            "released": self.released,
            "still_quarantined": self.still_quarantined,
            "checks": [
                {"check_id": c, "released": r, "still_quarantined": s} for c, (r, s) in self.per_check.items()
            ],
            "chunks": self.chunks,
            "seconds": round(self.seconds, 3),
        }


Progress = Callable[[int, int, Counts], None]


def release(
    gate: QualityGate,
    spark: SparkSession,
    request: ReleaseRequest,
    *,
    dry_run: bool = False,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    by: str | None = None,
    progress: Progress | None = None,
    parser: RecordParser | None = None,
) -> ReleaseReport:
    """Judge the quarantined rows ``request`` selects again and release those that pass, exactly once.

    Args:
        gate: The gate whose quarantine is released (its tables, checks, references, profiles, writer).
        spark: The session the rows are judged (and, with Spark's writer, written) in.
        request: Which rows, and which fixes.
        dry_run: Judge and count only; write nothing.
        chunk_rows: Rows per chunk (a chunk is whole batches, so it may hold more).
        by: Who or what runs it (default: ``user@host``).
        progress: Called after each chunk with (chunks done, chunks planned, the chunk's counts).
        parser: How the gate's source parses a record's text
            (:func:`~streaming_dq.sources.reparse.record_parser` of its config's ``source:``): records that
            arrived malformed are parsed again from their ``_dq_raw``; None keeps them quarantined.

    Raises:
        ConfigError: The gate has no results table, an option is invalid, or another release of the gate
            did not finish.
        TargetWriteError: A table could not be read or written (rerun: the release resumes).
    """
    return _Release(gate, spark, request, chunk_rows, by or who(), progress, parser).run(dry_run=dry_run)


def who() -> str:
    """Who runs a release or a discard: ``user@host``."""
    try:
        user = getpass.getuser()
    except Exception:  # no login name in some containers: the host alone then
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def new_release_id(now: datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


class _Release:
    def __init__(
        self,
        gate: QualityGate,
        spark: SparkSession,
        request: ReleaseRequest,
        chunk_rows: int,
        by: str,
        progress: Progress | None,
        parser: RecordParser | None = None,
    ) -> None:
        if chunk_rows < 1:
            raise ConfigError("must be at least 1", field_path="--chunk-rows")
        self.gate, self.spark, self.request, self.chunk_rows, self.by = gate, spark, request, chunk_rows, by
        self.progress = progress
        results = results_target(gate.targets, "release")
        writer = gate.writer_for(spark)
        self.store: Store = store_for(spark, writer, gate.targets["quarantine"], gate.targets["pass"])
        self.ledger = Ledger(writer, results, gate.name)
        schema = self.store.schema(self.store.quarantine)
        inputs = input_columns_of(schema.names)
        request.validate(spark, spark_schema(_with_release(schema)), inputs)
        self.pass_columns = self.store.schema(self.store.pass_).names
        references = gate.references.resolve(spark)
        self.judge = ReleaseJudge(gate.options, gate.check_set, request, inputs, references, parser)

    # -- the walk --------------------------------------------------------------------------------------------

    def run(self, *, dry_run: bool) -> ReleaseReport:
        started = time.monotonic()
        if dry_run:
            return self._dry_run(started)
        release_id, resumed, since = self._open()
        app_id = f"{self.gate.name}/release/{release_id}"
        self.store.ensure_release_column(AppTransaction(f"{app_id}/schema", 0))
        chunks = self.ledger.chunks(app_id)
        last = self.store.committed(self.store.quarantine, app_id)
        if last is not None:
            if last not in chunks:  # its pass commit or its record did not happen: finish it
                chunks[last] = self._commit_chunk(app_id, release_id, last, None, started)
            number = last + 1
        else:
            number = 0
        planned = self._plan(release_id, since)
        for i, chunk in enumerate(planned):
            chunks[number] = self._commit_chunk(app_id, release_id, number, chunk, time.monotonic())
            if self.progress is not None:
                self.progress(i + 1, len(planned), chunks[number])
            number += 1
        totals = total(chunks)
        seconds = time.monotonic() - started
        self.ledger.finish(app_id, number, totals, datetime.now(UTC), seconds)
        report = ReleaseReport.of(
            totals,
            gate=self.gate.name,
            release_id=release_id,
            app_id=app_id,
            dry_run=False,
            resumed=resumed,
            chunks=number,
            seconds=seconds,
        )
        logger.info(
            "gate %r: release %s %s: %d row(s) released, %d still quarantined, %d chunk(s)",
            self.gate.name,
            release_id,
            "resumed and finished" if resumed else "finished",
            report.released,
            report.still_quarantined,
            number,
        )
        return report

    def _open(self) -> tuple[str, bool, datetime]:
        """The release to run: the unfinished one of the same request, or a new one (recorded); and when it
        started (it takes the rows quarantined until then)."""
        from streaming_dq.release.request import ReleaseRequest

        key = self.request.key()
        for unfinished in self.ledger.unfinished():
            if unfinished.key == key:
                logger.info("gate %r: resuming release %s", self.gate.name, unfinished.release_id)
                return unfinished.release_id, True, unfinished.ts
            raise ConfigError(
                f"release {unfinished.release_id} of gate {self.gate.name!r}, started "
                f"{unfinished.ts.isoformat()} by {unfinished.by} with "
                f"{ReleaseRequest.from_dict(unfinished.request).describe()}, did not finish: run it again with "
                "those options to finish it first",
                field_path="release",
            )
        now = datetime.now(UTC)
        release_id = new_release_id(now)
        record = {
            "id": release_id,
            "key": key,
            "by": self.by,
            "request": self.request.to_dict(),
            "chunk_rows": self.chunk_rows,
        }
        self.ledger.start(f"{self.gate.name}/release/{release_id}", record, now)
        return release_id, False, now

    def _plan(self, release_id: str, since: datetime) -> list[Chunk]:
        """Chunks of whole batches over the selected rows quarantined before the release started that it has
        not judged yet."""
        candidates = self.store.open_rows(self.gate.name, since).where(self.judge.selected(release_id))
        batches = (
            candidates.groupBy(BATCH_ID_COLUMN)
            .agg(F.count(F.lit(1)).alias("n"), F.max(VALIDATION_TS_COLUMN).alias("until"))
            .orderBy(BATCH_ID_COLUMN)
            .collect()
        )
        chunks: list[Chunk] = []
        ids: list[int] = []
        rows, until = 0, None
        for b in batches:
            ids.append(int(b[BATCH_ID_COLUMN]))
            rows += int(b["n"])
            until = b["until"] if until is None else max(until, b["until"])
            if rows >= self.chunk_rows:
                chunks.append(Chunk(tuple(ids), until, rows))
                ids, rows, until = [], 0, None
        if ids:
            assert until is not None
            chunks.append(Chunk(tuple(ids), until, rows))
        return chunks

    def _stamp(self, release_id: str, chunk: int) -> ReleaseStamp:
        fixes = "; ".join(str(f) for f in self.request.fixes) or None
        return ReleaseStamp(release_id, datetime.now(UTC), self.by, fixes, chunk)

    def _commit_chunk(
        self, app_id: str, release_id: str, number: int, chunk: Chunk | None, started: float
    ) -> Counts:
        """A chunk's commits in :data:`~streaming_dq.core.modes.RELEASE_COMMIT_ORDER`, each made only when its
        table lacks ``(app id, chunk number)`` (``chunk`` None: its rows are marked already, the rest is
        finished); its counts."""
        txn = AppTransaction(app_id, number)
        counted: list[Counts] = []

        def counts() -> Counts:  # read from the marked rows once the quarantine commit is made
            if not counted:
                marked = self.store.rows(marked_predicate(release_id, number, None))
                counted.append(count_judged(marked, release_id, self.gate.options.fail_levels))
            return counted[0]

        def append_released() -> None:
            released = counts().get(None, (0, 0))[0]
            if released:  # no empty commits
                marked = self.store.rows(marked_predicate(release_id, number, RELEASED))
                self.store.append_pass(self.judge.released(marked, self.pass_columns), txn, released)

        def record() -> None:
            self.ledger.chunk(app_id, number, counts(), datetime.now(UTC), time.monotonic() - started)

        writes: dict[TableRole, Write] = {
            "pass": Write(self.store.pass_, append_released),
            "results": Write(self.ledger.results, record),
        }
        if chunk is not None:
            writes["quarantine"] = Write(self.store.quarantine, lambda: self._mark(txn, release_id, chunk))
        commit_in_order(
            RELEASE_COMMIT_ORDER,
            writes,
            txn,
            writer=self.store.writer,
            spark=self.spark,
            gate=self.gate.name,
            unit="release chunk",
        )
        return counts()

    def _mark(self, txn: AppTransaction, release_id: str, chunk: Chunk) -> None:
        """The chunk's rows replaced by themselves with ``_dq_release`` set; retried from a fresh read when a
        concurrent commit conflicts."""
        predicate = chunk.predicate(self.gate.name)
        for attempt in range(1, _ATTEMPTS + 1):
            done = self.store.committed(self.store.quarantine, txn.app_id)
            if done is not None and done >= txn.version:  # an earlier attempt committed, its answer was lost
                return
            judged = self.judge.judged(self.store.rows(predicate), self._stamp(release_id, txn.version))
            try:
                self.store.replace(judged, predicate, txn)
                return
            except TargetWriteError as exc:
                if attempt == _ATTEMPTS or not _CONFLICT.search(str(exc)):
                    raise
                logger.warning(
                    "gate %r: release %s chunk %d met a concurrent commit (attempt %d of %d), reading it again: %s",
                    self.gate.name,
                    release_id,
                    txn.version,
                    attempt,
                    _ATTEMPTS,
                    exc.reason if hasattr(exc, "reason") else exc,
                )
                time.sleep(0.2 * attempt)

    def _dry_run(self, started: float) -> ReleaseReport:
        release_id = "dry-run"
        candidates = self.store.open_rows(self.gate.name, datetime.now(UTC))
        judged = self.judge.judged(candidates, self._stamp(release_id, 0))
        counts = count_judged(judged, release_id, self.gate.options.fail_levels)
        return ReleaseReport.of(
            counts,
            gate=self.gate.name,
            release_id=release_id,
            app_id="",
            dry_run=True,
            resumed=False,
            seconds=time.monotonic() - started,
        )


def count_judged(rows: DataFrame, release_id: str, fail_levels: Iterable[Severity]) -> Counts:
    """Released and still-failing rows among ``rows`` judged by ``release_id``: in total (key None) and per
    check they were quarantined for (:func:`~streaming_dq.release.judge.quarantined_for`; a row quarantined for
    two checks counts for both). One Spark job."""
    judged = rows.where(F.col(f"{RELEASE_COLUMN}.id") == F.lit(release_id))
    exploded = judged.select(
        F.col(f"{RELEASE_COLUMN}.state").alias("state"), F.posexplode_outer(quarantined_for(fail_levels))
    )
    first = F.when(F.col("pos").isNull() | (F.col("pos") == 0), 1).otherwise(0)
    grouped = exploded.groupBy("col", "state").agg(F.count(F.lit(1)).alias("n"), F.sum(first).alias("rows"))
    out: Counts = {}
    for r in grouped.collect():
        released = r["state"] == RELEASED
        for key, n in ((None, int(r["rows"])), (r["col"], int(r["n"]))):
            if key is None and n == 0:
                continue
            if key is None or r["col"] is not None:
                a, b = out.get(key, (0, 0))
                out[key] = (a + n, b) if released else (a, b + n)
    return out


def _with_release(schema: Any) -> Any:
    import pyarrow as pa

    from streaming_dq.sink.schemas import RELEASE_TYPE

    if RELEASE_COLUMN in schema.names:
        return schema
    return pa.schema([*schema, pa.field(RELEASE_COLUMN, RELEASE_TYPE)])
