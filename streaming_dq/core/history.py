"""The committed batches' values a batch-scoped anomaly check is judged by, passed down the call stack.

Like reference data (:mod:`~streaming_dq.core.references`), the history of a batch-scoped anomaly check is an
input of one run, never state of the check: a plan and its checks are kept across micro-batches and can serve
two gates. The gate's :class:`~streaming_dq.sink.batch_history.BatchHistory` reads the values of the batches
committed before this one and opens :func:`using_history` around the validation; the check looks its values
up with :func:`batch_history`. Outside such a block a check has no history (and says "not enough history").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["batch_history", "using_history"]

_CURRENT: ContextVar[Mapping[str, Sequence[float]] | None] = ContextVar("streaming_dq_history", default=None)


@contextmanager
def using_history(values: Mapping[str, Sequence[float]] | None) -> Iterator[None]:
    """Make ``values`` (check id -> the committed batches' values, oldest first) the history of the block.

    Example:
        >>> with using_history({"per-batch": [20.0, 21.0, 19.0]}):
        ...     batch_history("per-batch")
        [20.0, 21.0, 19.0]
    """
    token = _CURRENT.set({k: list(v) for k, v in (values or {}).items()})
    try:
        yield
    finally:
        _CURRENT.reset(token)


def batch_history(check_id: str) -> list[float]:
    """The values of the batches committed before this one for ``check_id`` (empty outside a run)."""
    return list((_CURRENT.get() or {}).get(check_id, ()))
