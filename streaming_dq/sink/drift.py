"""Schema drift: how a batch's columns differ from the pass table's, and what the gate does about it.

The pass table's schema is the contract. A batch can add columns (a producer started sending a new field),
lack columns, or carry a column with another type. The policy (``schema_drift``):

* ``None`` (default): added nullable columns are merged (the table evolves); a missing column or a changed
  type quarantines the whole batch;
* ``merge``: added columns are merged, missing columns are written as NULL; a changed type quarantines the
  batch;
* ``quarantine``: any drift quarantines the whole batch;
* ``stop``: any drift raises :class:`~streaming_dq.exceptions.GateFailedError`.

A type change cannot be merged into a Delta table without rewriting it, so ``merge`` quarantines it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from streaming_dq.core.modes import DriftAction, DriftPolicy
from streaming_dq.sink.schemas import normalize_type

DRIFT_CHECK_ID = "schema-drift"


@dataclass(frozen=True)
class SchemaDrift:
    """The differences between a batch's schema and the pass table's.

    Attributes:
        added: Batch columns the table lacks.
        missing: Table columns the batch lacks.
        changed: ``(column, table type, batch type)`` for columns whose type differs.
    """

    added: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    changed: tuple[tuple[str, str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.missing or self.changed)

    @property
    def additive(self) -> bool:
        """Only new columns: the table can evolve to hold the batch."""
        return bool(self.added) and not self.missing and not self.changed

    def describe(self) -> str:
        """A one-line summary, e.g. ``added [coupon]; type of amount changed double -> string``."""
        parts = []
        if self.added:
            parts.append(f"added {list(self.added)}")
        if self.missing:
            parts.append(f"missing {list(self.missing)}")
        parts += [f"type of {c} changed {old} -> {new}" for c, old, new in self.changed]
        return "; ".join(parts) or "no drift"


def detect_drift(table_schema: pa.Schema, batch_schema: pa.Schema) -> SchemaDrift:
    """Compare column names and (normalized) types; nullability and column order do not count."""
    table_types = {f.name: normalize_type(f.type) for f in table_schema}
    batch_types = {f.name: normalize_type(f.type) for f in batch_schema}
    return SchemaDrift(
        added=tuple(n for n in batch_types if n not in table_types),
        missing=tuple(n for n in table_types if n not in batch_types),
        changed=tuple(
            (n, str(t), str(batch_types[n]))
            for n, t in table_types.items()
            if n in batch_types and batch_types[n] != t
        ),
    )


def drift_action(drift: SchemaDrift, policy: DriftPolicy | None) -> DriftAction:
    """What the gate does with a batch showing ``drift`` under ``policy`` (see the module table)."""
    if not drift:
        return "proceed"
    if policy == "stop":
        return "stop"
    if policy == "quarantine":
        return "quarantine"
    if drift.changed:
        return "quarantine"
    if policy == "merge" or drift.additive:
        return "merge"
    return "quarantine"
