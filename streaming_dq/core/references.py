"""The reference datasets of one run, passed down the call stack instead of stored in shared checks.

A plan (and so its checks) is kept across micro-batches while reference data may be re-read between them, and
the same check objects can serve two gates. So an integrity check never holds reference data: the caller
opens :func:`using_references` around the run (``ValidationPlan.references``), and the check looks its
dataset up in the innermost one (:func:`reference_dataset`). The DataFrames a check builds inside capture the
data they joined; nothing outlives the block.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from streaming_dq.exceptions import MissingReferenceDatasetError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["reference_dataset", "using_references"]

_CURRENT: ContextVar[Mapping[str, DataFrame] | None] = ContextVar("streaming_dq_references", default=None)


@contextmanager
def using_references(datasets: Mapping[str, DataFrame] | None) -> Iterator[None]:
    """Make ``datasets`` the reference data of the checks run inside the block.

    Example:
        >>> with using_references({"customers": customers_df}):  # doctest: +SKIP
        ...     result = foreign_key_check.evaluate(orders_df)
    """
    token = _CURRENT.set(dict(datasets or {}))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def reference_dataset(name: str) -> DataFrame:
    """The reference dataset ``name`` of the innermost :func:`using_references` block.

    Raises:
        MissingReferenceDatasetError: The run has no dataset of that name (or no reference data at all).
    """
    datasets = _CURRENT.get() or {}
    if name not in datasets:
        raise MissingReferenceDatasetError(name, sorted(datasets))
    return datasets[name]
