"""A gate's upkeep: maintenance of every table it writes, on its schedule between batches or on demand.

The tables are the gate's row-level tables, its metrics table and its keys table; besides compaction and
vacuum (:mod:`streaming_dq.maintenance`) the upkeep drops the keys no batch can need any more
(:meth:`~streaming_dq.sink.seen_keys.SeenKeys.forget`) and records each run in the metrics table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from streaming_dq.exceptions import ConfigError
from streaming_dq.maintenance import Maintainer, MaintenancePolicy, maintain

if TYPE_CHECKING:
    from streaming_dq.core.outcome import MaintenanceReport
    from streaming_dq.metrics.store import MetricsStore
    from streaming_dq.sink.options import GateOptions
    from streaming_dq.sink.seen_keys import SeenKeys
    from streaming_dq.sink.tracker import MetricsTracker
    from streaming_dq.tables import DeltaTarget, TableWriter

__all__ = ["Upkeep"]


class Upkeep:
    """The maintenance of a gate's tables (see the module)."""

    def __init__(self, options: GateOptions, tracker: MetricsTracker | None, seen_keys: SeenKeys) -> None:
        self.options = options
        self.tracker = tracker
        self.seen_keys = seen_keys
        policy = options.maintenance
        self._maintainer = Maintainer(policy) if policy is not None and policy.scheduled else None

    def tables(self) -> dict[str, DeltaTarget]:
        """Every table the gate writes, by role (``pass``, ``quarantine``, ``results``, ``metrics``, ``keys``)."""
        tables: dict[str, DeltaTarget] = {str(role): target for role, target in self.options.targets.items()}
        if self.options.metrics_table is not None:
            tables["metrics"] = self.options.metrics_table
        if self.seen_keys.target is not None:
            tables["keys"] = self.seen_keys.target
        return tables

    def after_batch(self, writer: TableWriter, batch_id: int) -> MaintenanceReport | None:
        """After a committed batch (written by ``writer``): the scheduled run when it is due (None when none
        is)."""
        if self._maintainer is None or not self._maintainer.committed():
            return None
        return self._maintainer.run(
            writer,
            self.tables(),
            metrics=self._metrics_store(),
            batch_id=batch_id,
            prune=self._pruners(writer),
        )

    def now(self, writer: TableWriter, policy: MaintenancePolicy | None) -> MaintenanceReport:
        """A run on every existing table now, under ``policy`` or the gate's own.

        Raises:
            ConfigError: No policy, or a vacuum retention below a table's safe minimum.
        """
        policy = policy or self.options.maintenance
        if policy is None:
            raise ConfigError("no maintenance policy given", field_path="maintenance")
        targets = {r: t for r, t in self.tables().items() if writer.table_schema(t) is not None}
        return maintain(writer, targets, policy, metrics=self._metrics_store(), prune=self._pruners(writer))

    def _pruners(self, writer: TableWriter) -> dict[str, Callable[[], int]]:
        """What maintenance drops besides files: the keys beyond the horizons."""
        return {"keys": lambda: self.seen_keys.forget(writer)} if self.seen_keys else {}

    def _metrics_store(self) -> tuple[MetricsStore, str] | None:
        return None if self.tracker is None else (self.tracker.store, self.options.name)
