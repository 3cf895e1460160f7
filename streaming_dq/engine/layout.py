"""Where every aggregate of a batch sits in Spark's result row, and how its value is read back into typed values.

The layout is the one place that names the aggregate columns of a batch and the one place that reads them
(Deequ keeps this protocol between the runner and the analyzer the same way): callers get
:class:`~streaming_dq.engine.values.BatchAggregates`, never a dict of column names to parse.

Two forms of the same aggregates:

* **grouped** (the Spark router, :class:`~streaming_dq.engine.batch.BatchDQEngine`): ``groupBy(regime[, window
  keys]).agg(...)``: per group the rows, the failed and warned rows, each flag's fired rows, every state of
  every observable check (computed once per distinct state), the event-time range and, with window keys, the
  states of every window-scoped check. Groups are few (regimes x windows in one batch) and are folded on the
  driver, which is exact because every value merges;
* **collected** (the driver router): each state's per-row input rides on the collect
  (:meth:`AggregateLayout.collected_inputs`) and :meth:`AggregateLayout.read_collected` computes the states per
  regime in Arrow, merging the regimes of each override group; the counts come from the collected bitmask
  (:meth:`~streaming_dq.engine.rules.FlagRules.count`) and the window states from Arrow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from streaming_dq.engine.regime_table import REGIME_COLUMN, RegimeTable
from streaming_dq.engine.rules import FlagRules
from streaming_dq.engine.values import BatchAggregates, EventTimeStats, RowCounts, from_micros
from streaming_dq.exceptions import InternalError
from streaming_dq.metrics.window_states import batch_window_states, window_state_columns
from streaming_dq.states.kinds import state_type

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column

    from streaming_dq.core.base_check import ObservableAggregateCheck
    from streaming_dq.states.spec import StateSpec

__all__ = ["AggregateLayout", "StateSlot"]

_ROWS, _FAILED, _WARNED = "__n", "__failed", "__warned"
_ET_MIN, _ET_MAX, _ET_NULLS = "__et_min", "__et_max", "__et_nulls"
_ET_MICROS, _ET_MISSING = "__dq_et", "__dq_et_missing"


@dataclass(frozen=True)
class StateSlot:
    """One state of one check, and the alias prefix of the aggregate columns that compute it.

    Slots asking for the same state (same kind and declared key, same rows) share one ``alias``: the state is
    computed once and read for each of them.
    """

    check_id: str
    group: int
    state: str
    spec: StateSpec
    alias: str

    def columns(self, where: Column | None = None) -> list[Column]:
        return [col.alias(f"{self.alias}.{comp}") for comp, col in self.spec.aggregations(where).items()]

    def read(self, values: Mapping[str, Any]) -> Any:
        prefix = f"{self.alias}."
        return self.spec.decode({k[len(prefix) :]: v for k, v in values.items() if k.startswith(prefix)})


class AggregateLayout:
    """The aggregates of a batch under a plan, in both forms.

    Args:
        observable: The batch-scoped observable aggregate checks.
        window_checks: The window-scoped ones (their states per event-time window, grouped form only).
        regimes: The run's regimes.
        rules: The flags' verdicts (for the failed / warned counts).
        event_time: The event-time column (its range is aggregated too), or None.
        malformed: The corrupt-record column (its rows do not count as missing an event time), or None.
        timezone: The zone whose local midnight aligns the windows.
    """

    def __init__(
        self,
        observable: Sequence[ObservableAggregateCheck],
        window_checks: Sequence[ObservableAggregateCheck],
        regimes: RegimeTable,
        rules: FlagRules,
        *,
        event_time: str | None,
        malformed: str | None,
        timezone: str,
    ) -> None:
        self.observable = tuple(observable)
        self.window_checks = tuple(window_checks)
        self.regimes = regimes
        self.rules = rules
        self.event_time = event_time
        self.malformed = malformed
        self.timezone = timezone
        self.grouped_slots = self._grouped_slots()
        self.observed_slots = self._observed_slots()
        self.input_names = self._input_names()
        self.window_sizes: tuple[timedelta, ...] = tuple(
            dict.fromkeys(c.scope.size for c in self.window_checks if c.scope is not None)
        )
        self.window_slots = self._window_slots()
        self._columns: dict[Any, list[Column]] = {}  # built once per plan, reused for every batch
        self._inputs: dict[str, Column] | None = None
        self._window_inputs: dict[str, Column] | None = None

    # -- slots ------------------------------------------------------------------------------------------------

    def _grouped_slots(self) -> tuple[StateSlot, ...]:
        """Per check and state, the regime-agnostic slot (one group row = one regime)."""
        slots: list[StateSlot] = []
        shared: dict[tuple[str, str], str] = {}
        for check in self.observable:
            for sname, spec in check.state_specs().items():
                identity = spec.identity
                alias = shared.get(identity) if identity is not None else None
                if alias is None:
                    alias = f"__s{len(slots)}"
                    if identity is not None:
                        shared[identity] = alias
                slots.append(StateSlot(check.check_id, -1, sname, spec, alias))
        return tuple(slots)

    def _observed_slots(self) -> tuple[StateSlot, ...]:
        """Per check, override group and state, a slot filtered to the group's rows (shared where equal)."""
        slots: list[StateSlot] = []
        shared: dict[tuple[Any, ...], str] = {}
        for check in self.observable:
            for g, group in enumerate(self.regimes.groups(check)):
                if group.verdict.kind == "off":
                    continue
                for sname, spec in check.state_specs().items():
                    identity = spec.identity
                    key = (*identity, group.ordinals) if identity is not None else None
                    alias = shared.get(key) if key is not None else None
                    if alias is None:
                        alias = f"__o{len(slots)}"
                        if key is not None:
                            shared[key] = alias
                    slots.append(StateSlot(check.check_id, g, sname, spec, alias))
        return tuple(slots)

    def _window_slots(self) -> tuple[StateSlot, ...]:
        return tuple(
            StateSlot(check.check_id, -1, sname, spec, f"__w{k}_{j}")
            for k, check in enumerate(self.window_checks)
            for j, (sname, spec) in enumerate(check.state_specs().items())
        )

    def _group_of(self, check_id: str, regime: int) -> int:
        """The override group of an aggregate check holding ``regime`` (aggregates have one per regime)."""
        for g, group in enumerate(self.regimes.groups_by_id(check_id)):
            if regime in group.ordinals:
                return g
        raise InternalError(f"no override group of {check_id!r} holds regime {regime}")

    # -- grouped form (Spark) ---------------------------------------------------------------------------------

    def _cached(self, key: Any, build: Any) -> list[Column]:
        if key not in self._columns:
            self._columns[key] = build()
        return list(self._columns[key])

    def group_keys(self, *, windows: bool) -> list[Column]:
        """The ``groupBy`` keys: the regime when profiles split the batch, and one window key per size."""
        return self._cached(("keys", windows), lambda: self._group_keys(windows))

    def _group_keys(self, windows: bool) -> list[Column]:
        from pyspark.sql import functions as F

        keys = [F.col(REGIME_COLUMN)] if self.regimes.split else []
        if windows and self.window_checks and self.event_time:
            from streaming_dq.metrics.calendar import window_start_column

            ts = F.col(self.event_time).cast("timestamp")
            keys += [
                window_start_column(ts, size, self.timezone).alias(_window_key(n))
                for n, size in enumerate(self.window_sizes)
            ]
        return keys

    def grouped_columns(self, *, windows: bool) -> list[Column]:
        """Every aggregate of the grouped form, aliased (for ``groupBy(*group_keys()).agg(...)``)."""
        return self._cached(("grouped", windows), lambda: self._grouped_columns(windows))

    def _grouped_columns(self, windows: bool) -> list[Column]:
        from pyspark.sql import functions as F

        failed = self.rules.any_column("fail")
        cols = [
            F.count(F.lit(1)).alias(_ROWS),
            F.count_if(failed).alias(_FAILED),
            F.count_if(~failed & self.rules.any_column("warn")).alias(_WARNED),
        ]
        cols += [F.count_if(self.rules.flag(i)).alias(_fired(i)) for i in range(self.rules.n_flags)]
        seen: set[str] = set()
        for slot in self.grouped_slots:
            if slot.alias not in seen:
                seen.add(slot.alias)
                cols += slot.columns()
        cols += self.event_time_columns()
        if windows and self.event_time:
            for slot in self.window_slots:
                cols += slot.columns()
        return cols

    def read_grouped(self, rows: Iterable[Any]) -> BatchAggregates:
        """Fold the grouped result rows (``Row`` objects or dicts) into one :class:`BatchAggregates`."""
        total = BatchAggregates(windows={} if self.window_checks else None)
        for row in rows:
            values = row.asDict() if hasattr(row, "asDict") else dict(row)
            total = total.merge(self._read_group(values))
        return total

    def _read_group(self, values: Mapping[str, Any]) -> BatchAggregates:
        regime = int(values.get(REGIME_COLUMN) or 0) if self.regimes.split else 0
        rows = int(values.get(_ROWS) or 0)
        counts = RowCounts.of(
            {regime: rows},
            {regime: int(values.get(_FAILED) or 0)},
            {regime: int(values.get(_WARNED) or 0)},
            {(i, regime): int(values.get(_fired(i)) or 0) for i in range(self.rules.n_flags)},
        )
        states: dict[tuple[str, int], dict[str, Any]] = {}
        for slot in self.grouped_slots:
            key = (slot.check_id, self._group_of(slot.check_id, regime))
            states.setdefault(key, {})[slot.state] = slot.read(values)
        windows = self._read_windows(values, rows) if self.window_checks and self.event_time else None
        return BatchAggregates(counts, states, self._read_event_time(values), windows)

    def _read_windows(self, values: Mapping[str, Any], rows: int) -> dict[Any, dict[str, Any]]:
        from streaming_dq.states import CountState
        from streaming_dq.states.keyed import ROWS_STATE

        out: dict[Any, dict[str, Any]] = {}
        for check in self.window_checks:
            assert check.scope is not None
            start = from_micros(values.get(_window_key(self.window_sizes.index(check.scope.size))))
            out[(check.check_id, start)] = {ROWS_STATE: CountState(rows)}
        for slot in self.window_slots:
            check = next(c for c in self.window_checks if c.check_id == slot.check_id)
            assert check.scope is not None
            start = from_micros(values.get(_window_key(self.window_sizes.index(check.scope.size))))
            out[(slot.check_id, start)][slot.state] = slot.read(values)
        return out

    # -- collected form (driver router) ------------------------------------------------------------------------

    def collected_inputs(self) -> dict[str, Column]:
        """The per-row columns the driver router collects beside the rows to compute its states in Arrow.

        One column per distinct state input (each kind's ``row_input``; a count of every row needs none) and,
        with an event time, its epoch microseconds and whether a well-formed row lacks it. The override groups
        are not applied here: :meth:`read_collected` computes each state per regime and merges the regimes of
        each group.
        """
        if self._inputs is None:
            self._inputs = self._collected_inputs()
        return dict(self._inputs)

    def window_inputs(self) -> dict[str, Column]:
        """The per-row inputs of the window-scoped checks' states, collected beside the rows (their windows'
        states are read back by :meth:`read_windows`); none without such checks or an event time."""
        if not self.window_checks or not self.event_time:
            return {}
        if self._window_inputs is None:
            self._window_inputs = window_state_columns(self.window_checks, self.event_time)
        return dict(self._window_inputs)

    def read_windows(self, inputs: pa.Table) -> dict[Any, dict[str, Any]]:
        """The batch's states per (window-scoped check, event-time window) from the collected
        :meth:`window_inputs`."""
        return batch_window_states(self.window_checks, inputs, timezone=self.timezone)

    def _collected_inputs(self) -> dict[str, Column]:
        from pyspark.sql import functions as F

        cols: dict[str, Column] = {}
        for name, spec in self._input_specs().items():
            col = state_type(spec.kind).row_input(spec.expr) if spec.expr is not None else None
            if col is not None:
                cols[name] = col
        if self.event_time:
            ts = F.col(self.event_time).cast("timestamp")
            well_formed = F.col(self.malformed).isNull() if self.malformed else F.lit(True)
            cols[_ET_MICROS] = F.unix_micros(ts)
            cols[_ET_MISSING] = ts.isNull() & well_formed
        return cols

    def _input_specs(self) -> dict[str, StateSpec]:
        """Each distinct state input by the name of its collected column (a count of every row has none)."""
        return {self.input_names[slot.alias]: slot.spec for slot in self.observed_slots}

    def _input_names(self) -> dict[str, str]:
        """Per observed slot alias, the collected column of its input (shared by every slot of the same state
        whatever its override group: the groups are applied when the states are read)."""
        names: dict[str, str] = {}
        by_identity: dict[Any, str] = {}
        for slot in self.observed_slots:
            identity = slot.spec.identity or ("alias", slot.alias)
            if identity not in by_identity:
                by_identity[identity] = f"__dq_state{len(by_identity)}"
            names[slot.alias] = by_identity[identity]
        return names

    def read_collected(self, table: pa.Table, counts: RowCounts) -> BatchAggregates:
        """The batch's states and event-time range from the collected rows (:meth:`collected_inputs` and the
        regime column), with the counts taken from the bitmask, as :class:`BatchAggregates`."""
        import pyarrow as pa

        from streaming_dq.states.grouping import grouped_states

        if self.regimes.split:
            keys = table.column(REGIME_COLUMN)
        else:
            keys = pa.repeat(pa.scalar(0, pa.int32()), table.num_rows)
        inputs = {
            name: (spec.kind, table.column(name) if name in table.column_names else None)
            for name, spec in self._input_specs().items()
        }
        per_regime = grouped_states(keys, inputs).states
        states: dict[tuple[str, int], dict[str, Any]] = {}
        for slot in self.observed_slots:
            group = self.regimes.groups_by_id(slot.check_id)[slot.group]
            name = self.input_names[slot.alias]
            state = state_type(slot.spec.kind).identity()
            for regime in sorted(group.ordinals):
                if regime in per_regime:
                    state = state.merge(per_regime[regime][name])
            states.setdefault((slot.check_id, slot.group), {})[slot.state] = state
        return BatchAggregates(counts, states, self._collected_event_time(table))

    def _collected_event_time(self, table: pa.Table) -> EventTimeStats:
        if not self.event_time:
            return EventTimeStats()
        import pyarrow.compute as pc

        extremes = pc.min_max(table.column(_ET_MICROS)).as_py()
        missing = pc.sum(table.column(_ET_MISSING).cast("int64")).as_py()
        return EventTimeStats.from_micros(extremes["min"], extremes["max"], missing or 0)

    # -- event time -------------------------------------------------------------------------------------------

    def event_time_columns(self) -> list[Column]:
        """Min / max event time (epoch microseconds) and the count of well-formed rows without one."""
        if not self.event_time:
            return []
        from pyspark.sql import functions as F

        ts = F.col(self.event_time).cast("timestamp")
        well_formed = F.col(self.malformed).isNull() if self.malformed else F.lit(True)
        return [
            F.unix_micros(F.min(ts)).alias(_ET_MIN),
            F.unix_micros(F.max(ts)).alias(_ET_MAX),
            F.count_if(ts.isNull() & well_formed).alias(_ET_NULLS),
        ]

    def _read_event_time(self, values: Mapping[str, Any]) -> EventTimeStats:
        if not self.event_time:
            return EventTimeStats()
        return EventTimeStats.from_micros(values.get(_ET_MIN), values.get(_ET_MAX), values.get(_ET_NULLS))


def _fired(i: int) -> str:
    return f"__v{i}"


def _window_key(n: int) -> str:
    return f"__wk{n}"
