"""The metrics store: a Delta table of mergeable states per gate, batch, check and event-time window.

One row per (gate, batch, check, scope, window, state) holds the state's components, so any roll-up (a window,
a day, the stream's life) is a fold of rows, never a rescan of data. Scopes:

* ``batch``: the states of every observable (batch-scoped) check in one batch, per profile override group;
* ``window`` / ``late`` / ``no-event-time``: what a batch added to a window-scoped check's window, or counted
  late (``late-data: count``, or past ``reopen-horizon``), or could not place (NULL event time);
* ``window-result``: a window verdict (``provisional`` while open, then ``passed``/``failed``/``skipped``);
* ``watermark``: the largest event time seen after the batch, the watermark, and the batch's late rows and
  rows without an event time.

Every batch is one commit carrying the app transaction ``(app_id, batch_id)``; a batch id at or below the
table's recorded version for the app is a replay and writes nothing. The table is created explicitly (all
columns nullable, timestamps ``timestamp[us, tz=UTC]``) before the first write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from streaming_dq.core.outcome_rows import VERDICT_COLUMNS, verdict_fields
from streaming_dq.exceptions import ConfigError
from streaming_dq.metrics.calendar import UTC_MICROS
from streaming_dq.metrics.rollup import ROLLUP_SCOPE, roll_up_records
from streaming_dq.metrics.window_update import WindowUpdate
from streaming_dq.states import state_from_record
from streaming_dq.states.keyed import ROWS_STATE, merge_named
from streaming_dq.tables.storage import delta_rs_options

if TYPE_CHECKING:
    from streaming_dq.core.outcome import WindowOutcome
    from streaming_dq.states.keyed import BatchStates
    from streaming_dq.tables import TableWriter

__all__ = ["METRICS_SCHEMA", "MetricsStore", "batch_records", "metrics_table"]

METRICS_SCHEMA = pa.schema(
    [
        pa.field("gate", pa.string()),
        pa.field("app_id", pa.string()),
        pa.field("batch_id", pa.int64()),
        pa.field("seq", pa.int64()),
        pa.field("written_at", UTC_MICROS),
        pa.field("scope", pa.string()),
        pa.field("check_id", pa.string()),
        pa.field("check_type", pa.string()),
        pa.field("window", pa.string()),
        pa.field("window_start", UTC_MICROS),
        pa.field("window_end", UTC_MICROS),
        pa.field("override_group", pa.int64()),
        pa.field("state_name", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("n", pa.int64()),
        pa.field("sum", pa.float64()),
        pa.field("mean", pa.float64()),
        pa.field("m2", pa.float64()),
        pa.field("value", pa.float64()),
        pa.field("sketch", pa.binary()),
        pa.field("status", pa.string()),
        pa.field("severity", pa.string()),
        pa.field("raw_value", pa.float64()),
        pa.field("adjusted_value", pa.float64()),
        pa.field("multiplier", pa.float64()),
        pa.field("profiles", pa.list_(pa.string())),
        pa.field("event_time_max", UTC_MICROS),
        pa.field("watermark", UTC_MICROS),
        pa.field("late_rows", pa.int64()),
        pa.field("null_event_time_rows", pa.int64()),
        *VERDICT_COLUMNS,
        pa.field("in_baseline", pa.bool_()),
    ]
)
"""The metrics table's schema: every column nullable."""

_STATE_SCOPES = ("window", "late", "no-event-time")
#: Scopes whose states add up to a check's lifetime.
_LIFETIME_SCOPES = ("batch", ROLLUP_SCOPE, *_STATE_SCOPES)


def _state_row(state: Any) -> dict[str, Any]:
    row = state.to_record()
    if "sketch" in row and row["sketch"] is not None:
        row["sketch"] = bytes(row["sketch"])
    return row


def _batch_state_rows(states: BatchStates, check_types: Mapping[str, str]) -> list[dict[str, Any]]:
    """One row per state of every batch-scoped observable check and override group."""
    rows = []
    for (check_id, group), named in sorted(states.items()):
        for sname, state in named.items():
            rows.append(
                {"scope": "batch", "check_id": check_id, "check_type": check_types.get(check_id),
                 "override_group": group, "state_name": sname, "kind": state.kind, **_state_row(state)}
            )  # fmt: skip
    return rows


def _window_rows(update: WindowUpdate) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for d in update.deltas:
        base: dict[str, Any] = {"scope": d.scope, "check_id": d.check_id, "window": d.window}
        base |= {"window_start": d.start, "window_end": d.end}
        for sname, state in d.states.items():
            rows.append({**base, "state_name": sname, "kind": state.kind, **_state_row(state)})
    rows += [_result_row(w) for w in update.outcomes]
    rows.append(
        {"scope": "watermark", "event_time_max": update.max_event_time, "watermark": update.watermark,
         "late_rows": update.late_rows, "null_event_time_rows": update.null_event_time_rows}
    )  # fmt: skip
    return rows


def _result_row(w: WindowOutcome) -> dict[str, Any]:
    return {
        "scope": "window-result", "check_id": w.check_id, "check_type": w.check_type, "window": w.window,
        "window_start": w.window_start, "window_end": w.window_end, "status": w.status,
        "severity": w.severity, "raw_value": w.raw_value, "adjusted_value": w.adjusted_value,
        "multiplier": w.multiplier, "profiles": list(w.profiles), **verdict_fields(w),
        "in_baseline": w.in_baseline,
    }  # fmt: skip


def batch_records(
    *,
    gate: str,
    app_id: str,
    batch_id: int,
    states: BatchStates | None = None,
    check_types: Mapping[str, str] | None = None,
    update: WindowUpdate | None = None,
    written_at: datetime | None = None,
) -> pa.Table:
    """The metrics rows of one batch, in :data:`METRICS_SCHEMA`.

    Args:
        gate: The gate's name.
        app_id: The app transaction id (gate name + streaming query id).
        batch_id: The micro-batch id.
        states: ``BatchDecision.states``: per (check id, override group), the batch's states.
        check_types: The check type of each check id.
        update: The window accumulator's update for this batch.
        written_at: Commit time (default now, UTC).

    Example:
        >>> table = batch_records(gate="orders", app_id="orders-q1", batch_id=7, states=decision.states,
        ...                       check_types={"volume": "row-count-min-check"}, update=window_update)  # doctest: +SKIP
    """
    rows = _batch_state_rows(states or {}, check_types or {})
    if update is not None:
        rows += _window_rows(update)
    stamp = written_at or datetime.now(UTC)
    for seq, row in enumerate(rows):
        row |= {"gate": gate, "app_id": app_id, "batch_id": batch_id, "seq": seq, "written_at": stamp}
    return pa.Table.from_pylist(rows, schema=METRICS_SCHEMA)


def _commit_order(rec: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        rec.get("written_at") or datetime.min.replace(tzinfo=UTC),
        rec.get("batch_id") or 0,
        rec.get("seq") or 0,
    )


class MetricsStore:
    """The gate's metrics Delta table, written through the gate's :class:`~streaming_dq.tables.TableWriter`.

    Args:
        path: The table's location.
        writer: The writer back-end (default delta-rs; the gate passes its own, so that under ``writer: spark``
            this table is written by Spark's Delta writer like every other).
        storage_options: delta-rs storage options (object stores).

    Example:
        >>> store = MetricsStore(tmp_path / "metrics")  # doctest: +SKIP
        >>> if not store.committed(app_id, batch_id):  # doctest: +SKIP
        ...     store.write(store.records_for_batch(gate="orders", app_id=app_id, batch_id=batch_id,
        ...                                         update=window_update), app_id, batch_id)
    """

    def __init__(
        self,
        path: str | Path,
        *,
        writer: TableWriter | None = None,
        storage_options: dict[str, str] | None = None,
        configuration: Mapping[str, str | None] | None = None,
    ) -> None:
        from streaming_dq.tables import DeltaRsWriter, DeltaTarget

        self.path = str(path)
        self.storage_options = storage_options
        self.target = DeltaTarget(
            self.path, storage_options=dict(storage_options or {}), configuration=dict(configuration or {})
        )
        self.writer: TableWriter = writer or DeltaRsWriter()
        self._created = False
        #: Whether the table predates columns of METRICS_SCHEMA (the next write adds them); None: not looked.
        self._lacks_columns: bool | None = None

    def ensure_table(self) -> None:
        """Create the table with :data:`METRICS_SCHEMA` unless it exists (explicitly: all columns nullable)."""
        if self._created:
            return
        self.writer.ensure_table(self.target, METRICS_SCHEMA)
        self._created = True

    def committed(self, app_id: str, batch_id: int) -> bool:
        """Whether ``batch_id`` of ``app_id`` is already in the table (a replay)."""
        from streaming_dq.tables import AppTransaction

        return self.writer.is_committed(self.target, AppTransaction(app_id, batch_id))

    records_for_batch = staticmethod(batch_records)

    def write(self, table: pa.Table, app_id: str, batch_id: int) -> bool:
        """Append one batch's rows in one commit carrying the app transaction ``(app_id, batch_id)``.

        An empty table still commits (the transaction is recorded). Returns False, writing nothing, when the
        table already holds this or a later batch id of the app.

        Example:
            >>> store.write(rows, "orders-q1", 7)  # doctest: +SKIP
            True
        """
        from streaming_dq.tables import AppTransaction

        self.ensure_table()
        data = table.select(METRICS_SCHEMA.names).cast(METRICS_SCHEMA)
        if self._lacks_columns is None:
            current = self.writer.table_schema(self.target)
            self._lacks_columns = current is not None and not set(METRICS_SCHEMA.names) <= set(current.names)
        txn = AppTransaction(app_id, batch_id)
        written = self.writer.write_once(self.target, data, txn, merge_schema=self._lacks_columns)
        self._lacks_columns = False if written else self._lacks_columns
        return written

    def read_table(self, gate: str | None = None) -> pa.Table:
        """All rows (of one gate), as stored."""
        from deltalake import DeltaTable

        from streaming_dq.tables.reading import sql_literal

        if not DeltaTable.is_deltatable(
            self.path, storage_options=delta_rs_options(self.storage_options or {})
        ):
            return METRICS_SCHEMA.empty_table()
        predicate = f"gate = {sql_literal(gate)}" if gate is not None else None
        return self.writer.read(self.target, predicate=predicate)

    def read(self, gate: str) -> list[dict[str, Any]]:
        """One gate's rows as dicts, in commit order (for ``WindowAccumulator.restore``)."""
        return sorted(self.read_table(gate).to_pylist(), key=_commit_order)

    def roll_up(self, gate: str, *, before: datetime) -> tuple[int, int]:
        """Replace the gate's rows written before ``before`` by their fold, in ONE commit (exact: see
        :mod:`~streaming_dq.metrics.rollup`); returns the number of rows before and after.

        Lifetimes, window states, final verdicts and what a restart rebuilds are the same afterwards; the
        per-batch rows older than ``before`` are gone (``batches()`` lists only younger ones). Run it between
        batches: the gate does (``maintenance.roll-up``), as does ``streaming-dq maintain``.

        Example:
            >>> store.roll_up("orders", before=datetime.now(UTC) - timedelta(days=7))  # doctest: +SKIP
            (120960, 212)
        """
        from streaming_dq.tables.reading import sql_literal

        if before.tzinfo is None:
            raise ConfigError("roll_up: 'before' must be timezone-aware", field_path="before")
        stamp = before.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        predicate = f"gate = {sql_literal(gate)} AND written_at < '{stamp}'"
        if self.writer.table_schema(self.target) is None:
            return 0, 0
        old = self.writer.read(self.target, predicate=predicate)
        if old.num_rows == 0:
            return 0, 0
        rolled = roll_up_records(old.to_pylist())
        if len(rolled) >= old.num_rows:  # nothing to fold: no commit
            return old.num_rows, old.num_rows
        data = pa.Table.from_pylist(rolled, schema=METRICS_SCHEMA)
        current = self.writer.table_schema(self.target)
        if current is not None:  # a table from before newer columns: their values are all NULL in its rows
            data = data.select([name for name in METRICS_SCHEMA.names if name in current.names])
        self.writer.replace_rows(self.target, data, predicate)
        return old.num_rows, len(rolled)

    def lifetime(self, gate: str, *, check: str | None = None) -> dict[str, dict[str, Any]]:
        """Per check, its states merged over the stream's life (all batches, windows, override groups).

        Example:
            >>> store.lifetime("orders")["orders-per-day"]["rows"]  # doctest: +SKIP
            CountState(n=5230)
        """
        out: dict[str, dict[str, Any]] = {}
        for rec in self.read(gate):
            if rec["scope"] not in _LIFETIME_SCOPES or (check and rec["check_id"] != check):
                continue
            state = state_from_record(rec["kind"], rec)
            out[rec["check_id"]] = merge_named(out.get(rec["check_id"], {}), {rec["state_name"]: state})
        return out

    def windows(self, gate: str, *, check: str | None = None, window: str | None = None) -> pa.Table:
        """The latest verdict per (check, window): provisional for open windows, final for closed ones."""
        latest: dict[tuple[str, Any], dict[str, Any]] = {}
        for rec in self.read(gate):
            if rec["scope"] != "window-result" or (check and rec["check_id"] != check):
                continue
            if window is not None and not _same_window(rec["window"], window):
                continue
            latest[(rec["check_id"], rec["window_start"])] = rec
        rows = [latest[k] for k in sorted(latest, key=lambda k: (k[1], k[0]))]
        return pa.Table.from_pylist(rows, schema=METRICS_SCHEMA)

    def batches(self, gate: str, *, check: str | None = None) -> pa.Table:
        """The per-batch state rows (scope ``batch``) of one gate, in commit order."""
        rows = [r for r in self.read(gate) if r["scope"] == "batch" and (not check or r["check_id"] == check)]
        return pa.Table.from_pylist(rows, schema=METRICS_SCHEMA)


def _same_window(stored: str | None, asked: str) -> bool:
    from streaming_dq.core.scope import parse_window

    if stored is None:
        return False
    try:
        return parse_window(stored) == parse_window(asked)
    except ValueError:
        return stored.strip() == asked.strip()


def _lifetime_value(cid: str, states: dict[str, Any], checks: Mapping[str, Any]) -> float | None:
    check = checks.get(cid)
    if check is not None:
        try:
            value = check.metric_value(states)
            return None if value is None else float(value)
        except (KeyError, AttributeError, TypeError):
            pass
    named = [s for name, s in states.items() if name != ROWS_STATE]
    return named[0].value if len(named) == 1 else None


def metrics_table(
    store_path: str | Path,
    *,
    gate: str,
    window: str | None = None,
    check: str | None = None,
    checks: Mapping[str, Any] | Sequence[Any] | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """What ``streaming-dq metrics CONFIG [--window W] [--check ID]`` prints, one dict per line.

    With ``window``: the latest verdict of every window of that size (open ones ``provisional``). Without:
    one line per check over the stream's life (no verdict: checks judge batches or windows, not lifetimes).
    Every dict has ``check, window, window_start, window_end, raw, adjusted, multiplier, status, profiles``.

    Args:
        store_path: The metrics table.
        gate: The gate's name.
        window: A window size (``1 day``), or None for lifetime values.
        check: Only this check id.
        checks: The configured checks (by id, or a sequence): their ``metric_value`` turns lifetime states
            into the metric; without them a single-state check shows its state's value, others None.
        storage_options: The table's object-store options.

    Example:
        >>> for line in metrics_table("/data/metrics", gate="orders", window="1 day"):  # doctest: +SKIP
        ...     print(line["check"], line["window_start"], line["raw"], line["status"])
    """
    store = MetricsStore(store_path, storage_options=dict(storage_options or {}))
    if window is not None:
        return [
            {"check": r["check_id"], "window": r["window"], "window_start": r["window_start"],
             "window_end": r["window_end"], "raw": r["raw_value"], "adjusted": r["adjusted_value"],
             "multiplier": r["multiplier"], "status": r["status"], "profiles": tuple(r["profiles"] or ()),
             "expected": r.get("expected_value"), "band_low": r.get("band_low"), "band_high": r.get("band_high"),
             "score": r.get("score"), "reason": r.get("reason")}
            for r in store.windows(gate, check=check, window=window).to_pylist()
        ]  # fmt: skip
    by_id = dict(checks) if isinstance(checks, Mapping) else {c.check_id: c for c in checks or ()}
    return [
        {"check": cid, "window": "lifetime", "window_start": None, "window_end": None,
         "raw": _lifetime_value(cid, states, by_id), "adjusted": None, "multiplier": None, "status": None,
         "profiles": ()}
        for cid, states in sorted(store.lifetime(gate, check=check).items())
    ]  # fmt: skip
