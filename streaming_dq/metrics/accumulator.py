"""Window-scoped checks: per-row state inputs, per-batch window states, and the accumulator that judges windows.

The flow per micro-batch (see docs/streaming.md, "Windows and late data"):

1. :func:`window_state_columns` gives the per-row inputs of every window-scoped check's states; the gate hands
   them to ``validate_to_arrow(extra_columns=...)`` so they ride on the batch's single Spark job.
2. :func:`batch_window_states` groups those rows by event-time window in Arrow and builds one mergeable state
   per (check, window, state).
3. :meth:`WindowAccumulator.update` merges them, advances the watermark (max event time seen minus the allowed
   lateness), closes the windows the watermark passed and judges each ONCE under the profiles active on the
   window's date, and reports provisional verdicts of the windows still open.

Late rows (their window was closed before the batch arrived) follow ``late_data``: ``count`` counts them and
leaves the closed window's verdict alone (they still count in the check's lifetime states); ``reopen`` merges
them and judges the window again (a new final verdict is reported) while the window ended less than
``reopen_horizon`` before the watermark. Past that horizon a closed window's states leave memory and its late
rows are counted as under ``count``: a stream that runs for months holds a bounded number of windows.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa

from streaming_dq.core.base_check import HistoryJudged, ObservableAggregateCheck
from streaming_dq.core.modes import LateDataPolicy
from streaming_dq.core.outcome import WindowOutcome
from streaming_dq.exceptions import ConfigError, InternalError
from streaming_dq.metrics.baseline import HistoryPoint
from streaming_dq.metrics.calendar import window_bounds, window_date, window_starts
from streaming_dq.states import CountState, empty_state, state_from_record, state_type
from streaming_dq.states.keyed import ROWS_STATE, merge_named

if TYPE_CHECKING:
    from pyspark.sql import Column

    from streaming_dq.states.spec import StateSpec

__all__ = [
    "DEFAULT_REOPEN_HORIZON",
    "EVENT_TIME_COLUMN",
    "LateDataPolicy",
    "WindowAccumulator",
    "WindowDelta",
    "WindowKey",
    "WindowUpdate",
    "batch_window_states",
    "state_column_name",
    "window_state_columns",
]

WindowKey = tuple[str, datetime | None]
"""(check id, window start in UTC); a None start holds the rows whose event time is NULL."""

#: The extra column carrying the event time (cast to timestamp) next to the state inputs.
EVENT_TIME_COLUMN = "__w_event_time"
#: Under ``reopen``, how long after the watermark passed its end a closed window can still be reopened.
DEFAULT_REOPEN_HORIZON = timedelta(days=7)
#: Past this many windows to close at once for a check (a jump in event time), empty ones are not reported.
MAX_EMPTY_WINDOWS = 1000

_FINAL = frozenset({"passed", "failed", "skipped"})


def state_column_name(check_id: str, state_name: str) -> str:
    """The extra column holding the per-row input of one state of a window-scoped check."""
    return f"__w__{check_id}__{state_name}"


# -- per-row inputs (Spark, lazy) -----------------------------------------------------------------------------


def window_state_columns(
    window_checks: Sequence[ObservableAggregateCheck], event_time: str
) -> dict[str, Column]:
    """Per-row input columns of every window-scoped check's states, plus the event time.

    Count states get their boolean predicate (NULL -> False; a count of every row needs no column), hll states
    the raw value, the other kinds the value cast to double. Pure and lazy: no Spark action.

    Args:
        window_checks: The plan's ``window_checks``.
        event_time: The event-time column (cast to timestamp in :data:`EVENT_TIME_COLUMN`).

    Example:
        >>> cols = window_state_columns(plan.window_checks, "ts")  # doctest: +SKIP
        >>> v = validate_to_arrow(plan, df, extra_columns=cols)  # doctest: +SKIP
        >>> states = batch_window_states(plan.window_checks, v.extra_columns, timezone="Europe/Berlin")  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    cols: dict[str, Column] = {EVENT_TIME_COLUMN: F.col(event_time).cast("timestamp")}
    for check in window_checks:
        for sname, spec in check.state_specs().items():
            col = _row_input(spec, check.check_id)
            if col is not None:
                cols[state_column_name(check.check_id, sname)] = col
    return cols


def _row_input(spec: StateSpec, check_id: str) -> Column | None:
    try:
        return state_type(spec.kind).row_input(spec.expr)
    except InternalError:
        raise ConfigError(f"check {check_id!r}: a {spec.kind} state needs an expression") from None


# -- per-batch window states (Arrow) --------------------------------------------------------------------------


def batch_window_states(
    window_checks: Sequence[ObservableAggregateCheck],
    table: pa.Table,
    event_time_array: pa.Array | pa.ChunkedArray | None = None,
    size: timedelta | None = None,
    timezone: str = "UTC",
) -> dict[WindowKey, dict[str, Any]]:
    """The states of one batch per (check, event-time window), grouped in Arrow.

    Every group also holds :data:`ROWS_STATE` (its row count). Rows with a NULL event time are in no window:
    they form the group ``(check_id, None)``.

    Args:
        window_checks: The window-scoped checks.
        table: The per-row inputs (``ArrowValidation.extra_columns``), named by :func:`state_column_name`.
        event_time_array: The rows' event times; default: the table's :data:`EVENT_TIME_COLUMN`.
        size: One window size for every check; default: each check's ``scope.size``.
        timezone: Zone whose local midnight aligns the windows.

    Example:
        >>> batch_window_states([orders_per_day], table, timezone="Europe/Berlin")  # doctest: +SKIP
        {('orders-per-day', datetime(2025, 12, 23, 23, 0, tzinfo=UTC)): {'rows': CountState(n=37), ...}}
    """
    ts = table.column(EVENT_TIME_COLUMN) if event_time_array is None else event_time_array
    by_size: dict[timedelta, list[ObservableAggregateCheck]] = defaultdict(list)
    for check in window_checks:
        by_size[size or _scope_size(check)].append(check)
    out: dict[WindowKey, dict[str, Any]] = {}
    for window_size, checks in by_size.items():
        out.update(_size_states(checks, table, window_starts(ts, window_size, timezone)))
    return out


def _scope_size(check: ObservableAggregateCheck) -> timedelta:
    if check.scope is None:
        raise ConfigError(f"check {check.check_id!r} has no window scope")
    return check.scope.size


def _size_states(
    checks: Sequence[ObservableAggregateCheck], table: pa.Table, starts: pa.Array
) -> dict[WindowKey, dict[str, Any]]:
    """Group the inputs of checks sharing a window size in ONE Arrow group-by; hll from distinct values, kll
    from each window's values."""
    columns: dict[str, Any] = {"ws": starts}
    aggs: list[tuple[Any, ...]] = [([], "count_all")]
    decoders: dict[tuple[str, str], tuple[str, str]] = {}
    sketches: dict[tuple[str, str], tuple[str, pa.ChunkedArray]] = {}
    for check in checks:
        for sname, kind in _kinds(check).items():
            name = state_column_name(check.check_id, sname)
            state = state_type(kind)
            if kind == "count" and name not in table.column_names:
                decoders[(check.check_id, sname)] = (kind, "")  # every row counts: the group's row count
            elif state.sketched:
                sketches[(check.check_id, sname)] = (kind, table.column(name))
            else:
                col = f"c{len(columns)}"
                columns[col] = table.column(name).cast(state.arrow_type())
                aggs += state.arrow_aggregates(col)
                decoders[(check.check_id, sname)] = (kind, col)
    out: dict[WindowKey, dict[str, Any]] = {}
    for row in pa.table(columns).group_by("ws").aggregate(aggs).to_pylist():
        for check in checks:
            out[(check.check_id, row["ws"])] = {ROWS_STATE: CountState(int(row["count_all"]))}
        for (cid, sname), (kind, col) in decoders.items():
            decoded = state_type(kind).from_arrow_row(col, row) if col else CountState(int(row["count_all"]))
            out[(cid, row["ws"])][sname] = decoded
    for (cid, sname), (kind, values) in sketches.items():
        for start, sketch in state_type(kind).from_window_values(starts, values).items():
            out[(cid, start)][sname] = sketch
    return out


def _kinds(check: ObservableAggregateCheck) -> dict[str, str]:
    return {sname: spec.kind for sname, spec in check.state_specs().items()}


# -- the accumulator ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowDelta:
    """The states one batch added for one check and window (what the metrics store writes).

    Attributes:
        check_id: The check.
        window: The check's window size as configured (``1 day``).
        scope: ``window`` (merged into the window), ``late`` (its window was closed and the ``count`` policy,
            or the ``reopen`` horizon, kept it out) or ``no-event-time`` (rows with a NULL event time: in no window).
        start: Window start (UTC); None for ``no-event-time``.
        end: Window end (UTC); None for ``no-event-time``.
        states: ``{state name: state}``, including :data:`ROWS_STATE`.
    """

    check_id: str
    window: str
    scope: Literal["window", "late", "no-event-time"]
    start: datetime | None
    end: datetime | None
    states: Mapping[str, Any]

    @property
    def rows(self) -> int:
        rows = self.states.get(ROWS_STATE)
        return rows.n if rows is not None else 0


@dataclass(frozen=True)
class WindowUpdate:
    """What one batch did to the windows.

    Attributes:
        batch_id: The batch.
        closed: Final verdicts: windows the watermark closed in this batch (each judged once), and windows
            re-judged because late rows reopened them (``reopen`` policy).
        provisional: Verdicts of the windows still open (status ``provisional``, or ``skipped``).
        deltas: The states merged (or counted late) in this batch, for the metrics store.
        late_rows: Rows that arrived after their window closed (the largest count over the window-scoped
            checks: exact when they share one window size).
        null_event_time_rows: Rows with a NULL event time (in no window).
        max_event_time: The largest event time seen so far (over all batches).
        watermark: ``max_event_time - allowed_lateness``: windows ending at or before it are closed.
    """

    batch_id: int
    closed: tuple[WindowOutcome, ...] = ()
    provisional: tuple[WindowOutcome, ...] = ()
    deltas: tuple[WindowDelta, ...] = ()
    late_rows: int = 0
    null_event_time_rows: int = 0
    max_event_time: datetime | None = None
    watermark: datetime | None = None

    @property
    def outcomes(self) -> tuple[WindowOutcome, ...]:
        """Final then provisional verdicts (for ``BatchOutcome.windows``)."""
        return self.closed + self.provisional


class WindowAccumulator:
    """Merged states per (check, window) and per check over the stream's life; judges windows as they close.

    Args:
        gate: The gate's name (restore reads only its records).
        window_checks: The window-scoped observable checks (``ValidationPlan.window_checks``).
        profiles: The gate's profiles; a window is judged under those active on its date.
        timezone: The zone of window alignment and of profile dates.
        allowed_lateness: How far behind the largest event time seen a window may still receive rows.
        late_data: ``count`` (late rows are counted, the closed verdict stands) or ``reopen`` (late rows are
            merged and the window is judged again).
        reopen_horizon: Under ``reopen``: a closed window whose end is at least this far behind the watermark
            is dropped from memory, and later rows for it are counted late (scope ``late``) as under ``count``.

    Example:
        >>> acc = WindowAccumulator("orders", plan.window_checks, profiles=profiles,
        ...                         timezone="Europe/Berlin", allowed_lateness=timedelta(hours=1))  # doctest: +SKIP
        >>> update = acc.update(batch_id, batch_window_states(...), max_event_time(ts))  # doctest: +SKIP
        >>> [(w.check_id, w.window_start, w.status) for w in update.closed]  # doctest: +SKIP
    """

    def __init__(
        self,
        gate: str,
        window_checks: Sequence[ObservableAggregateCheck],
        *,
        profiles: Sequence[Any] = (),
        timezone: str = "UTC",
        allowed_lateness: timedelta = timedelta(0),
        late_data: LateDataPolicy = "count",
        reopen_horizon: timedelta = DEFAULT_REOPEN_HORIZON,
    ) -> None:
        if late_data not in ("count", "reopen"):
            raise ConfigError(f"late_data must be 'count' or 'reopen', got {late_data!r}")
        if allowed_lateness < timedelta(0):
            raise ConfigError("allowed_lateness must not be negative")
        if reopen_horizon < timedelta(0):
            raise ConfigError("reopen_horizon must not be negative", field_path="gate.reopen-horizon")
        self.gate = gate
        self.checks = {c.check_id: c for c in window_checks}
        self.sizes = {c.check_id: _scope_size(c) for c in window_checks}
        self.kinds = {c.check_id: _kinds(c) for c in window_checks}
        #: How far back an anomaly check's baseline reaches (its history keeps no more).
        self.lookbacks: dict[str, timedelta] = {
            c.check_id: c.lookback for c in window_checks if isinstance(c, HistoryJudged)
        }
        self.profiles = tuple(profiles)
        self.timezone = timezone
        self.allowed_lateness = allowed_lateness
        self.late_data = late_data
        self.reopen_horizon = reopen_horizon
        self._reset()

    def _reset(self) -> None:
        self.windows: dict[tuple[str, datetime], dict[str, Any]] = {}
        #: Anomaly checks' closed windows by start: what later baselines are picked from.
        self.history: dict[str, dict[datetime, HistoryPoint]] = {cid: {} for cid in self.lookbacks}
        self.lifetime: dict[str, dict[str, Any]] = {}
        self.next_start: dict[str, datetime] = {}
        self.max_event_time: datetime | None = None
        self.late_rows_total = 0
        self.null_event_time_rows_total = 0

    @property
    def watermark(self) -> datetime | None:
        """Largest event time seen minus the allowed lateness (None before any event time)."""
        return None if self.max_event_time is None else self.max_event_time - self.allowed_lateness

    def window_text(self, check_id: str) -> str:
        scope = self.checks[check_id].scope
        assert scope is not None
        return scope.window

    def window_end(self, check_id: str, start: datetime) -> datetime:
        return window_bounds(start, self.sizes[check_id], self.timezone)[1]

    def update(
        self,
        batch_id: int,
        window_states: Mapping[WindowKey, Mapping[str, Any]],
        max_event_time: datetime | None,
    ) -> WindowUpdate:
        """Merge one batch's window states, advance the watermark, judge the windows it closes.

        Call it once per batch id that is not a replay (check the metrics store first): it changes the
        accumulator.

        Args:
            batch_id: The micro-batch id.
            window_states: :func:`batch_window_states` of the batch.
            max_event_time: The batch's largest event time (``windows.max_event_time``), None if none.

        Raises:
            ValueError: a key names a check the accumulator does not know.
        """
        self._open_first_windows(window_states)
        reopened: list[tuple[str, datetime]] = []
        late: dict[str, int] = defaultdict(int)
        nulls: dict[str, int] = defaultdict(int)
        ordered = sorted(window_states.items(), key=_window_order)
        deltas = [self._merge(key, states, reopened, late, nulls) for key, states in ordered]
        if max_event_time is not None and (
            self.max_event_time is None or max_event_time > self.max_event_time
        ):
            self.max_event_time = max_event_time
        closed = self._close_due()
        closed += [self._judge(cid, start, final=True) for cid, start in dict.fromkeys(reopened)]
        provisional = [
            self._judge(cid, start, final=False)
            for cid, start in sorted(self.windows, key=lambda k: (k[1], k[0]))
            if start >= self.next_start[cid]
        ]
        self._prune()
        late_rows, null_rows = max(late.values(), default=0), max(nulls.values(), default=0)
        self.late_rows_total += late_rows
        self.null_event_time_rows_total += null_rows
        return WindowUpdate(
            batch_id, tuple(closed), tuple(provisional), tuple(deltas), late_rows, null_rows,
            self.max_event_time, self.watermark,
        )  # fmt: skip

    def close_open_windows(self, batch_id: int) -> WindowUpdate:
        """Judge every open window that holds rows, now, once: the input has ended.

        Per check, the windows from its first open one to its last one that holds rows are judged as a
        passing watermark would judge them (empty ones between included) and the check's first open window
        moves past them; windows after the last row are not invented. The watermark itself does not move: a
        restart rebuilds the same state from the final verdicts, and rows of a closed window that arrive
        later are late (counted, or reopening it under ``reopen``), as after any close.

        Args:
            batch_id: The last batch of the input (the results and metrics rows carry it).
        """
        closed: list[WindowOutcome] = []
        for cid, start in list(self.next_start.items()):
            held = [s for c, s in self.windows if c == cid and s >= start]
            if not held:
                continue
            stop = self.window_end(cid, max(held))
            closed += [
                self._judge(cid, window, final=True) for window in self._windows_between(cid, start, stop)
            ]
            self.next_start[cid] = stop
        closed.sort(key=lambda w: (w.window_start, w.check_id))
        self._prune()
        return WindowUpdate(batch_id, tuple(closed), (), (), 0, 0, self.max_event_time, self.watermark)

    def _open_first_windows(self, window_states: Mapping[WindowKey, Mapping[str, Any]]) -> None:
        """A check's first window is the earliest one of the first batch that has rows for it."""
        for cid, start in window_states:
            if cid not in self.checks:
                raise ConfigError(f"unknown window-scoped check {cid!r}")
            if start is not None and cid not in self.next_start:
                first = min(s for c, s in window_states if c == cid and s is not None)
                self.next_start[cid] = first

    def _merge(
        self,
        key: WindowKey,
        states: Mapping[str, Any],
        reopened: list[tuple[str, datetime]],
        late: dict[str, int],
        nulls: dict[str, int],
    ) -> WindowDelta:
        cid, start = key
        window = self.window_text(cid)
        self.lifetime[cid] = merge_named(self.lifetime.get(cid, {}), states)
        if start is None:
            delta = WindowDelta(cid, window, "no-event-time", None, None, states)
            nulls[cid] += delta.rows
            return delta
        delta = WindowDelta(cid, window, "window", start, self.window_end(cid, start), states)
        if start < self.next_start[cid]:
            late[cid] += delta.rows
            if not self._reopenable(cid, start):
                return WindowDelta(cid, window, "late", start, delta.end, states)
            reopened.append((cid, start))
        self.windows[(cid, start)] = merge_named(self.windows.get((cid, start), {}), states)
        return delta

    def _close_due(self) -> list[WindowOutcome]:
        """Judge every window that ends at or before the watermark, once, including empty ones."""
        watermark = self.watermark
        out: list[WindowOutcome] = []
        if watermark is None:
            return out
        for cid, start in list(self.next_start.items()):
            first_open = window_bounds(watermark, self.sizes[cid], self.timezone)[0]
            if first_open <= start:
                continue
            for window in self._windows_between(cid, start, first_open):
                out.append(self._judge(cid, window, final=True))
            self.next_start[cid] = first_open
        out.sort(key=lambda w: (w.window_start, w.check_id))
        return out

    def _windows_between(self, cid: str, start: datetime, stop: datetime) -> list[datetime]:
        """Window starts in ``[start, stop)``: all of them, or only those with rows past MAX_EMPTY_WINDOWS."""
        held = sorted(s for c, s in self.windows if c == cid and start <= s < stop)
        if (stop - start) / self.sizes[cid] > MAX_EMPTY_WINDOWS + len(held):
            return held
        starts = []
        while start < stop:
            starts.append(start)
            start = self.window_end(cid, start)
        return starts

    def _judge(self, cid: str, start: datetime, *, final: bool) -> WindowOutcome:
        """One verdict under the overrides of the profiles active on the window's date."""
        from streaming_dq.profiles import CheckTarget, resolve_overrides

        check = self.checks[cid]
        held = self.windows.get((cid, start), {})
        states = {s: held.get(s) or empty_state(kind) for s, kind in self.kinds[cid].items()}
        target = CheckTarget(check.check_id, group=check.group, tags=frozenset(check.tags))
        overrides = resolve_overrides(target, self.profiles, window_date(start, self.timezone))
        raw = check.metric_value(states)
        adjusted: float | None = None
        anomaly: dict[str, Any] = {}
        if overrides.disabled:
            status = (
                "skipped" if final else "provisional"
            )  # an open window is never final: a restart reads it
        elif isinstance(check, HistoryJudged):
            adjusted = raw * overrides.metric_multiplier if raw is not None and not math.isnan(raw) else raw
            status, anomaly = self._judge_anomaly(check, start, adjusted, overrides, final=final)
        else:
            result = check.evaluate_states(states, multiplier=overrides.metric_multiplier)
            adjusted = result.metrics.get("adjusted")
            status = ("passed" if result.passed else "failed") if final else "provisional"
        return WindowOutcome(
            check_id=cid,
            check_type=check.check_type,
            window=self.window_text(cid),
            window_start=start,
            window_end=self.window_end(cid, start),
            severity=overrides.effective_severity(check.severity).value,
            status=status,  # type: ignore[arg-type]
            raw_value=raw,
            adjusted_value=adjusted,
            multiplier=overrides.metric_multiplier,
            profiles=overrides.profiles,
            **anomaly,
        )

    def _judge_anomaly(
        self, check: Any, start: datetime, observed: float | None, overrides: Any, *, final: bool
    ) -> tuple[str, dict[str, Any]]:
        """An anomaly check's verdict against the history of the windows closed before this one; a final
        verdict enters the history (left out of later baselines when a profile applied, unless its rules
        keep it)."""
        history = self.history[check.check_id]
        verdict = check.judge(observed, list(history.values()), start, timezone=self.timezone)
        in_baseline = not overrides.profiles or overrides.keep_in_baseline
        if final:
            history[start] = HistoryPoint(start, observed, not in_baseline)
        fields = {
            "expected_value": verdict.expected, "band_low": verdict.low, "band_high": verdict.high,
            "score": verdict.score, "history": verdict.history, "reason": verdict.reason,
            "in_baseline": in_baseline,
        }  # fmt: skip
        status = verdict.status if final else "provisional"
        return status, fields

    def _reopenable(self, cid: str, start: datetime) -> bool:
        """Whether late rows of the closed window at ``start`` reopen it: under ``reopen``, until the watermark
        is ``reopen_horizon`` past the window's end (the same test drops the window from memory)."""
        if self.late_data == "count":
            return False
        watermark = self.watermark
        return watermark is None or self.window_end(cid, start) > watermark - self.reopen_horizon

    def _prune(self) -> None:
        """A closed window that can no longer change (always under ``count``; past the reopen horizon under
        ``reopen``) leaves memory. Anomaly histories keep only what a baseline can still reach (``lookback``
        before the first open window)."""
        for cid, start in [k for k in self.windows if k[1] < self.next_start[k[0]]]:
            if not self._reopenable(cid, start):
                del self.windows[(cid, start)]
        for cid, points in self.history.items():
            first_open = self.next_start.get(cid)
            if first_open is None:
                continue
            oldest = first_open - self.lookbacks[cid]
            for start in [s for s in points if s < oldest]:
                del points[start]

    def restore(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Rebuild everything from the metrics store's records (``MetricsStore.read(gate)``).

        Window states are the fold of the stored per-batch deltas (in commit order), the watermark the largest
        stored event time, and a check's first open window follows its last final verdict, so a restart
        neither loses nor double-counts state. Records of another gate, of an unknown check, or of a check
        whose window size changed since, are ignored.

        Example:
            >>> acc.restore(MetricsStore(path).read("orders"))  # doctest: +SKIP
        """
        self._reset()
        last_final: dict[str, datetime] = {}
        for rec in records:
            cid, scope = rec.get("check_id"), rec.get("scope")
            if rec.get("gate") != self.gate:
                continue
            if scope == "watermark":
                self._restore_watermark(rec)
            elif cid in self.checks and self._same_size(cid, rec.get("window")):
                if scope == "window-result" and rec.get("status") in _FINAL:
                    end = rec["window_end"]
                    last_final[cid] = max(end, last_final.get(cid, end))
                    if cid in self.history:
                        self._restore_history(cid, rec)
                elif scope in ("window", "late", "no-event-time"):
                    self._restore_state(cid, scope, rec)
        for cid in self.checks:
            starts = [s for c, s in self.windows if c == cid]
            if cid in last_final:
                self.next_start[cid] = last_final[cid]
            elif starts:
                self.next_start[cid] = min(starts)
        self._prune()

    def _restore_history(self, cid: str, rec: Mapping[str, Any]) -> None:
        """A final verdict of an anomaly check back in its history (a later verdict of the same window, after
        late rows reopened it, replaces the earlier)."""
        start = rec["window_start"]
        value = rec.get("adjusted_value")
        excluded = rec.get("in_baseline") is False or (rec.get("status") == "skipped" and value is None)
        self.history[cid][start] = HistoryPoint(start, value, excluded)

    def _same_size(self, check_id: str, window: str | None) -> bool:
        from streaming_dq.core.scope import parse_window

        try:
            return window is not None and parse_window(window) == self.sizes[check_id]
        except ValueError:
            return False

    def _restore_watermark(self, rec: Mapping[str, Any]) -> None:
        value = rec.get("event_time_max")
        if value is not None and (self.max_event_time is None or value > self.max_event_time):
            self.max_event_time = value
        self.late_rows_total += rec.get("late_rows") or 0
        self.null_event_time_rows_total += rec.get("null_event_time_rows") or 0

    def _restore_state(self, cid: str, scope: str, rec: Mapping[str, Any]) -> None:
        state = state_from_record(rec["kind"], dict(rec))
        sname = rec["state_name"]
        self.lifetime[cid] = merge_named(self.lifetime.get(cid, {}), {sname: state})
        if scope == "window":
            key = (cid, rec["window_start"])
            self.windows[key] = merge_named(self.windows.get(key, {}), {sname: state})


def _window_order(item: tuple[WindowKey, Any]) -> tuple[str, bool, datetime]:
    """Deltas in (check, window start) order, rows without event time last: the metrics rows of a batch are
    the same whichever router grouped them (and whichever order a replay produced them in)."""
    (check_id, start), _ = item
    return check_id, start is None, start or datetime.min.replace(tzinfo=UTC)
