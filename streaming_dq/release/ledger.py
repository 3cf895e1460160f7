"""A release's record in the gate's results table (``kind = "release"``, the codec of
:mod:`streaming_dq.core.outcome_rows`): started (with its request), each chunk's counts, finished.

The record is how a rerun knows an interrupted release: a ``started`` row without a ``finished`` one. Every
record commit carries an app transaction of the release's own, so a rerun never writes a row twice.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from streaming_dq.core.outcome_rows import ReleaseHistory, decode_release_rows, results_table
from streaming_dq.core.results_log import RELEASE_KIND, START_SUFFIX, ReleaseRecord, release_rows
from streaming_dq.tables import AppTransaction, DeltaTarget, TableWriter
from streaming_dq.tables.reading import sql_literal
from streaming_dq.tables.targets import writing

__all__ = ["Counts", "Ledger", "Started"]

#: Rows by check id (None: the totals) -> (released, still failing).
Counts = dict[str | None, tuple[int, int]]

#: The suffix of the app id under which a release's ``started`` row is committed.
_START = START_SUFFIX


class Started:
    """An unfinished release, as its ``started`` row recorded it."""

    def __init__(self, started: ReleaseRecord) -> None:
        self.app_id: str = started.app_id
        self.ts: datetime = started.at
        record = json.loads(started.request or "{}")
        self.release_id: str = record.get("id", "")
        self.key: str = record.get("key", "")
        self.by: str = record.get("by", "")
        self.request: dict[str, Any] = record.get("request", {})
        self.chunk_rows: int | None = record.get("chunk_rows")


class Ledger:
    """Reads and writes a gate's release records (see the module).

    Args:
        writer: The gate's writer.
        results: The gate's results table.
        gate: The gate's name.
    """

    def __init__(self, writer: TableWriter, results: DeltaTarget, gate: str) -> None:
        self.writer, self.results, self.gate = writer, results, gate

    def _records(self, app_id: str | None = None) -> dict[str, ReleaseHistory]:
        predicate = f"gate = {sql_literal(self.gate)} AND kind = {sql_literal(RELEASE_KIND)}"
        if app_id is not None:
            predicate += f" AND (app_id = {sql_literal(app_id)} OR app_id = {sql_literal(app_id + _START)})"
        with writing(self.results, None):
            if self.writer.table_schema(self.results) is None:
                return {}
            rows = self.writer.read(self.results, predicate=predicate).to_pylist()
        return decode_release_rows(rows)  # the started row is filed with its release

    def unfinished(self) -> list[Started]:
        """The gate's releases that started and did not finish, oldest first."""
        found = [Started(r.started) for r in self._records().values() if r.started and r.finished is None]
        return sorted(found, key=lambda s: s.ts)

    def chunks(self, app_id: str) -> dict[int, Counts]:
        """The recorded chunks of a release: chunk number -> counts."""
        entry = self._records(app_id).get(app_id)
        return dict(entry.chunks) if entry else {}

    def _append(self, rows: list[dict[str, Any]], txn: AppTransaction, *, checked: bool = False) -> None:
        """Append the records under ``txn`` once: skipped when the table has it, unless the caller has just
        checked that (``checked``: the commit sequencer); a taken version is refused by the table either way."""
        with writing(self.results, txn.version):
            if checked:
                self.writer.append(self.results, results_table(rows), txn, merge_schema=True)
            else:
                self.writer.write_once(self.results, results_table(rows), txn, merge_schema=True)

    def start(self, app_id: str, record: Mapping[str, Any], ts: datetime) -> None:
        head = {"gate": self.gate, "app_id": app_id + _START, "batch_id": None}
        self._append(
            release_rows(head, "started", ts, reason=json.dumps(record, sort_keys=True)),
            AppTransaction(app_id + _START, 0),
        )

    def chunk(self, app_id: str, number: int, counts: Counts, ts: datetime, seconds: float) -> None:
        """The chunk's record: the last write of the chunk's commit sequence
        (:func:`~streaming_dq.sink.commit.commit_in_order`), which has checked that the table lacks it."""
        head = {"gate": self.gate, "app_id": app_id, "batch_id": number}
        rows = release_rows(head, "chunk", ts, counts=counts or {None: (0, 0)}, duration_seconds=seconds)
        self._append(rows, AppTransaction(app_id, number), checked=True)

    def finish(self, app_id: str, chunks: int, counts: Counts, ts: datetime, seconds: float) -> None:
        head = {"gate": self.gate, "app_id": app_id, "batch_id": None}
        rows = release_rows(head, "finished", ts, counts=counts or {None: (0, 0)}, duration_seconds=seconds)
        self._append(rows, AppTransaction(app_id, chunks))


def total(chunks: Mapping[int, Counts]) -> Counts:
    """The counts of many chunks added up."""
    out: Counts = {}
    for counts in chunks.values():
        for check, (released, still) in counts.items():
            r, s = out.get(check, (0, 0))
            out[check] = (r + released, s + still)
    return out
