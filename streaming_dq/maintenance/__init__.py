"""Keeping a gate's tables healthy for months: compaction, log checkpoints, vacuum, the metrics roll-up.

Every micro-batch appends at least one file and one commit to each of the gate's tables. Left alone, a table
written every 10 s holds 8,640 more files a day, downstream reads slow down with the file count, and the
metrics table a restart reads back grows without end. A :class:`MaintenancePolicy` says what to do and how
often; :func:`maintain` does it for a set of tables, one :class:`TableReport` per table.

The gate runs it itself between batches (after a batch's last commit, before the next batch starts), so it
never races its own appends, and ``streaming-dq maintain CONFIG`` runs it by hand. None of it changes what a
replay decides: a compaction commits with ``dataChange = false`` and keeps the table's application
transactions (the txn ids the gate reads to skip a replayed batch), a checkpoint carries them, and a vacuum
deletes only files no version younger than its retention references, never with a retention shorter than
the table's ``delta.deletedFileRetentionDuration`` (7 days unless the table says otherwise).
"""

from streaming_dq.maintenance.policy import ZORDER_ROLES, MaintenancePolicy, z_order_columns
from streaming_dq.maintenance.runner import Maintainer, check_log_retention, check_retention, maintain

__all__ = [
    "ZORDER_ROLES",
    "Maintainer",
    "MaintenancePolicy",
    "check_log_retention",
    "check_retention",
    "maintain",
    "z_order_columns",
]
