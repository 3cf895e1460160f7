"""The quarantine as a way back: quarantined rows judged again after a fix and released exactly once.

``streaming-dq release CONFIG`` and :func:`release` select quarantined rows (by check, batch, event time or a
SQL condition), optionally fix them (``--set "column = expression"``), judge them with the gate's current row
checks, append those that pass to the pass table and mark them released in the quarantine table, chunk by
chunk, each chunk committed under the release's own app transaction. Nothing is deleted. See
docs/quarantine.md.
"""

from streaming_dq.release.request import Fix, ReleaseRequest, parse_batch_range, parse_time_range
from streaming_dq.release.runner import DEFAULT_CHUNK_ROWS, ReleaseReport, release

__all__ = [
    "DEFAULT_CHUNK_ROWS",
    "Fix",
    "ReleaseReport",
    "ReleaseRequest",
    "parse_batch_range",
    "parse_time_range",
    "release",
]
