"""The window accumulator: it merges each batch's window states and judges every event-time window once.

Per micro-batch (see docs/streaming.md, "Windows and late data"), after the batch's window states are built
(:mod:`~streaming_dq.metrics.window_states`), :meth:`WindowAccumulator.update` merges them, advances the watermark (max event time seen minus the allowed
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
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from streaming_dq.core.base_check import HistoryJudged, ObservableAggregateCheck
from streaming_dq.core.modes import LateDataPolicy
from streaming_dq.core.outcome import WindowOutcome
from streaming_dq.exceptions import ConfigError
from streaming_dq.metrics.baseline import HistoryPoint
from streaming_dq.metrics.calendar import window_bounds, window_date
from streaming_dq.metrics.window_states import WindowKey, scope_size, state_kinds
from streaming_dq.metrics.window_update import WindowDelta, WindowUpdate
from streaming_dq.states import empty_state, state_from_record
from streaming_dq.states.keyed import merge_named

if TYPE_CHECKING:
    pass

__all__ = [
    "DEFAULT_REOPEN_HORIZON",
    "LateDataPolicy",
    "WindowAccumulator",
]

#: Under ``reopen``, how long after the watermark passed its end a closed window can still be reopened.
DEFAULT_REOPEN_HORIZON = timedelta(days=7)
#: Past this many windows to close at once for a check (a jump in event time), empty ones are not reported.
MAX_EMPTY_WINDOWS = 1000

_FINAL = frozenset({"passed", "failed", "skipped"})


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
            raise ConfigError(f"must be 'count' or 'reopen', got {late_data!r}", field_path="gate.late-data")
        if allowed_lateness < timedelta(0):
            raise ConfigError("must not be negative", field_path="gate.allowed-lateness")
        if reopen_horizon < timedelta(0):
            raise ConfigError("reopen_horizon must not be negative", field_path="gate.reopen-horizon")
        self.gate = gate
        self.checks = {c.check_id: c for c in window_checks}
        self.sizes = {c.check_id: scope_size(c) for c in window_checks}
        self.kinds = {c.check_id: state_kinds(c) for c in window_checks}
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
