"""A gate's side of its query's stop: a batch the stop interrupts, or one that begins meanwhile, is no failure.

The job that stops a gate's query tells the gate first (:meth:`StopSignal.begin`), then stops the query, then
says it has stopped (:meth:`StopSignal.done`). Meanwhile a batch that begins is not run, and a batch that the
stop interrupts is not counted as failed: both raise :class:`~streaming_dq.exceptions.GateStoppedError`,
commit nothing and are replayed by the next run. So a healthy gate stopped beside a failed one is not
reported failed (#42).
"""

from __future__ import annotations

import logging
import threading

from streaming_dq.exceptions import GateStoppedError

__all__ = ["STOPPING_WAIT_SECONDS", "StopSignal"]

logger = logging.getLogger("streaming_dq.gate")

#: How long a batch that began while its query stops waits for the stop before it gives up on its own.
STOPPING_WAIT_SECONDS = 60.0


class StopSignal:
    """Whether the gate's query is being stopped (see the module). A copy sent to a Spark Connect server's
    batch worker starts unset there: the client stops its own query."""

    def __init__(self) -> None:
        self._stopping, self._stopped = threading.Event(), threading.Event()

    def begin(self) -> None:
        self._stopping.set()

    def done(self) -> None:
        self._stopped.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def refuse_new_batch(self, gate: str, batch_id: int) -> None:
        """A batch that begins while the query is being stopped waits for the stop (which interrupts Spark's
        side of the call) and is not run.

        Raises:
            GateStoppedError: the query is being stopped.
        """
        if self._stopping.is_set():
            self._stopped.wait(STOPPING_WAIT_SECONDS)
            raise GateStoppedError(gate, batch_id)

    def interrupted(self, gate: str, batch_id: int, error: Exception) -> GateStoppedError | None:
        """The error to raise instead of ``error`` when the stop interrupted the batch (None: a real failure)."""
        if not self._stopping.is_set():
            return None
        logger.info("gate %r: batch %d interrupted by the stop: %s", gate, batch_id, error)
        return GateStoppedError(gate, batch_id)

    def __getstate__(self) -> dict[str, object]:
        return {}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__()  # type: ignore[misc]
