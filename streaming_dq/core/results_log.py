"""The results table as a typed log: one record type per kind of row that is not a batch's verdict, each with
its own fields, and the one codec between them and the table's columns.

The results table has one schema for every kind of row (:data:`~streaming_dq.core.outcome_rows.RESULTS_SCHEMA`),
so a column means different things by kind: in a release's row ``batch_id`` is the chunk's number and
``rows_passed`` the rows released. That mapping is written here once per kind, as the record's ``COLUMNS``
(field -> column), and nowhere else: writers build records, readers get records back
(:func:`encode_records`, :func:`decode_record`). A batch's own rows (``batch``, ``row``, ``aggregate``,
``window``) are its :class:`~streaming_dq.core.outcome.BatchOutcome`'s, encoded by
:mod:`~streaming_dq.core.outcome_rows`, which also holds the read model over all of them
(:class:`~streaming_dq.core.outcome_rows.ResultsLog`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, ClassVar

__all__ = [
    "DISCARD_KIND",
    "MAINTENANCE_KIND",
    "RELEASE_KIND",
    "START_SUFFIX",
    "DiscardRecord",
    "LogRecord",
    "MaintenanceRecord",
    "ReleaseRecord",
    "decode_record",
    "discard_rows",
    "encode_records",
    "release_rows",
]

#: The suffix of the app id a release's or a discard's ``started`` row is committed under (its own transaction,
#: before any other commit of it); a reader files the row with the release or discard it starts.
START_SUFFIX = "/start"

#: ``kind`` of the rows that carry a maintenance run (one per table), with the batch after the run.
MAINTENANCE_KIND = "maintenance"

#: ``kind`` of the rows that record a release of quarantined rows (``streaming_dq.release``), under the
#: release's own app id: ``status`` ``started`` (the request, as JSON), ``chunk`` (per committed chunk) and
#: ``finished``; per chunk and at the end one row for the totals and one per check the rows were quarantined
#: for.
RELEASE_KIND = "release"

#: ``kind`` of the rows that record a discard of old quarantined rows (``streaming-dq quarantine discard``),
#: under the discard's own app id: ``status`` ``started`` (the request, as JSON) and ``finished``, each one row
#: for the total and one per check the rows were quarantined for.
DISCARD_KIND = "discard"


@dataclass(frozen=True)
class ReleaseRecord:
    """One row of a release's record.

    Attributes:
        gate: The gate.
        app_id: The release's app id (its ``started`` row: the same with ``/start``).
        status: ``started``, ``chunk`` or ``finished``.
        at: When the row was written.
        chunk: The chunk's number (``chunk`` rows).
        check_id: The check the counted rows were quarantined for; None: the totals.
        released: Rows released (appended to the pass table).
        still_failing: Rows judged again that still fail.
        request: The ``started`` row's request, as JSON.
        duration_seconds: The chunk's, or the whole release's, seconds (totals rows).
    """

    KIND: ClassVar[str] = RELEASE_KIND
    COLUMNS: ClassVar[Mapping[str, str]] = {
        "gate": "gate", "app_id": "app_id", "status": "status", "at": "validation_ts", "chunk": "batch_id",
        "check_id": "check_id", "released": "rows_passed", "still_failing": "rows_quarantined",
        "request": "reason", "duration_seconds": "duration_seconds",
    }  # fmt: skip

    gate: str
    app_id: str
    status: str
    at: datetime
    chunk: int | None = None
    check_id: str | None = None
    released: int = 0
    still_failing: int = 0
    request: str | None = None
    duration_seconds: float | None = None

    def derived_columns(self) -> dict[str, Any]:
        return {"rows": self.released + self.still_failing}

    @property
    def release_id(self) -> str:
        """The release's app id, whichever row of it this is."""
        return self.app_id.removesuffix(START_SUFFIX)


@dataclass(frozen=True)
class DiscardRecord:
    """One row of a discard's record: ``deleted`` rows quarantined for ``check_id`` (None: the total)."""

    KIND: ClassVar[str] = DISCARD_KIND
    COLUMNS: ClassVar[Mapping[str, str]] = {
        "gate": "gate", "app_id": "app_id", "status": "status", "at": "validation_ts", "check_id": "check_id",
        "deleted": "rows", "request": "reason",
    }  # fmt: skip

    gate: str
    app_id: str
    status: str
    at: datetime
    check_id: str | None = None
    deleted: int = 0
    request: str | None = None

    def derived_columns(self) -> dict[str, Any]:
        return {"batch_id": None}

    @property
    def discard_id(self) -> str:
        """The discard's app id, whichever row of it this is."""
        return self.app_id.removesuffix(START_SUFFIX)


@dataclass(frozen=True)
class MaintenanceRecord:
    """One table of a maintenance run, written with the batch after the run.

    Attributes:
        gate: The gate.
        app_id: The batch's app id.
        batch_id: The batch whose rows carry the run (the one after it).
        table: The table's role (``pass``, ``quarantine``, ``results``, ``metrics``).
        status: ``maintained`` or ``failed``.
        files_after: The table's data files after the run.
        table_seconds: This table's share of the run.
        started_at: When the run started.
        run_seconds: The whole run.
        error: Why the table failed.
    """

    KIND: ClassVar[str] = MAINTENANCE_KIND
    COLUMNS: ClassVar[Mapping[str, str]] = {
        "gate": "gate", "app_id": "app_id", "batch_id": "batch_id", "table": "check_id", "status": "status",
        "files_after": "rows", "table_seconds": "raw_value", "started_at": "validation_ts",
        "run_seconds": "duration_seconds", "error": "reason",
    }  # fmt: skip

    gate: str
    app_id: str
    batch_id: int
    table: str
    status: str
    files_after: int = 0
    table_seconds: float = 0.0
    started_at: datetime | None = None
    run_seconds: float = 0.0
    error: str | None = None

    def derived_columns(self) -> dict[str, Any]:
        return {}


LogRecord = ReleaseRecord | DiscardRecord | MaintenanceRecord
_BY_KIND: dict[str, type[LogRecord]] = {r.KIND: r for r in (ReleaseRecord, DiscardRecord, MaintenanceRecord)}
_COUNTS = {"released", "still_failing", "deleted", "files_after"}
_SECONDS = {"table_seconds", "run_seconds"}


def encode_records(records: Iterable[LogRecord]) -> list[dict[str, Any]]:
    """The results rows of ``records`` (``kind`` and ``check_type`` are the record's kind)."""
    rows = []
    for record in records:
        row = {column: getattr(record, name) for name, column in record.COLUMNS.items()}
        rows.append({**row, **record.derived_columns(), "kind": record.KIND, "check_type": record.KIND})
    return rows


def decode_record(row: Mapping[str, Any]) -> LogRecord | None:
    """The record a results row holds; None for a batch's own rows (see the module)."""
    record_type = _BY_KIND.get(row.get("kind") or "")
    if record_type is None:
        return None
    values: dict[str, Any] = {}
    for f in fields(record_type):
        value = row.get(record_type.COLUMNS[f.name])
        if f.name in _COUNTS:
            value = int(value or 0)
        elif f.name in _SECONDS:
            value = float(value or 0.0)
        elif f.name in ("chunk", "batch_id") and value is not None:
            value = int(value)
        values[f.name] = value
    return record_type(**values)


def _by_check(counts: Mapping[str | None, Any]) -> list[tuple[str | None, Any]]:
    """The totals (None) first, then the checks by id."""
    return sorted(counts.items(), key=lambda kv: (kv[0] is not None, kv[0] or ""))


def release_rows(
    head: Mapping[str, Any],
    status: str,
    ts: datetime,
    *,
    counts: Mapping[str | None, tuple[int, int]] | None = None,
    reason: str | None = None,
    duration_seconds: float | None = None,
) -> list[dict[str, Any]]:
    """A release's record rows (:class:`~streaming_dq.core.results_log.ReleaseRecord`); ``head`` is gate, app
    id and batch id (the chunk's number, None for ``started`` and ``finished``); ``counts`` maps a check id
    (None: the totals) to (released, still failing); the request and the duration go with the totals."""
    base = {
        "gate": head["gate"],
        "app_id": head["app_id"],
        "status": status,
        "at": ts,
        "chunk": head.get("batch_id"),
    }
    if not counts:
        return encode_records([ReleaseRecord(**base, request=reason, duration_seconds=duration_seconds)])
    return encode_records(
        ReleaseRecord(
            **base,
            check_id=check,
            released=released,
            still_failing=still,
            request=reason if check is None else None,
            duration_seconds=duration_seconds if check is None else None,
        )
        for check, (released, still) in _by_check(counts)
    )


def discard_rows(
    head: Mapping[str, Any],
    status: str,
    ts: datetime,
    counts: Mapping[str | None, int],
    *,
    reason: str | None = None,
) -> list[dict[str, Any]]:
    """A discard's record rows (:class:`~streaming_dq.core.results_log.DiscardRecord`); ``counts`` maps a check
    id (None: the total) to the rows deleted."""
    return encode_records(
        DiscardRecord(
            gate=head["gate"],
            app_id=head["app_id"],
            status=status,
            at=ts,
            check_id=check,
            deleted=n,
            request=reason if check is None else None,
        )
        for check, n in _by_check({None: 0, **counts})
    )
