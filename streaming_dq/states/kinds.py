"""The state kinds by name: the class of each (:func:`state_type`) and the two ways to make one from a name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from streaming_dq.exceptions import InternalError
from streaming_dq.states.base import Kind
from streaming_dq.states.sketches import HllState, KllState
from streaming_dq.states.values import CountState, MaxState, MinState, MomentsState, SumState

__all__ = ["STATE_TYPES", "StateKind", "empty_state", "state_from_record", "state_type"]

StateKind = Literal["count", "sum", "min", "max", "moments", "hll", "kll"]

STATE_TYPES: dict[str, type[Kind]] = {
    cls.kind: cls for cls in (CountState, SumState, MinState, MaxState, MomentsState, HllState, KllState)
}


def state_type(kind: str) -> type[Kind]:
    """The class of a state kind.

    Raises:
        InternalError: No such kind.
    """
    try:
        return STATE_TYPES[kind]
    except KeyError:
        raise InternalError(f"unknown state kind {kind!r}") from None


def empty_state(kind: str) -> Any:
    """The identity state of a kind."""
    return state_type(kind).identity()


def state_from_record(kind: str, record: Mapping[str, Any]) -> Any:
    """Rebuild a state from :meth:`to_record` output (as stored in the metrics table)."""
    return state_type(kind).from_record(record)
