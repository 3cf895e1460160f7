"""States by name and by key: what a batch, a window or a check's life holds, and how two of them merge."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

__all__ = ["ROWS_STATE", "BatchStates", "StateKey", "WindowStates", "merge_keyed", "merge_named"]

#: The name of a window's (or the late / NULL-event-time rows') row-count state.
ROWS_STATE = "__rows__"

StateKey = tuple[str, int]
"""(check id, override group index): whose states, judged under which profile overrides."""
BatchStates = Mapping[StateKey, Mapping[str, Any]]
"""Per (check id, override group), ``{state name: state}``."""
WindowStates = Mapping[tuple[str, "datetime | None"], Mapping[str, Any]]
"""Per (window-scoped check id, window start in UTC; None: rows without event time), ``{state name: state}``."""


def merge_named(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Merge two ``{state name: state}`` dicts name by name (a name missing on one side is the identity)."""
    out = dict(a)
    for name, state in b.items():
        out[name] = out[name].merge(state) if name in out else state
    return out


def merge_keyed(a: Mapping[Any, Mapping[str, Any]], b: Mapping[Any, Mapping[str, Any]]) -> dict[Any, Any]:
    """Merge two ``{key: {state name: state}}`` dicts key by key, then name by name."""
    out: dict[Any, Any] = dict(a)
    for key, states in b.items():
        out[key] = merge_named(out[key], states) if key in out else dict(states)
    return out
