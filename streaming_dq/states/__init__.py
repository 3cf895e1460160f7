"""The mergeable states: what an aggregate of a batch, a window or a stream's life is kept as.

The bottom layer of the package (it imports only :mod:`streaming_dq.exceptions`): every state merges with
another of its kind (associative, commutative, with an identity), so a window's state is the merge of its
batches' states, never a rescan. :mod:`~streaming_dq.states.kinds` holds the kinds, their records and their
identities; :mod:`~streaming_dq.states.spec` how a check asks Spark for one.
"""

from streaming_dq.states.kinds import (
    HLL_LG_K,
    KLL_K,
    STATE_TYPES,
    CountState,
    ExtremumState,
    HllState,
    KllState,
    MaxState,
    MinState,
    MomentsState,
    State,
    StateKind,
    SumState,
    empty_state,
    kll_from_values,
    state_from_record,
    state_type,
)
from streaming_dq.states.spec import StateSpec

__all__ = [
    "HLL_LG_K",
    "KLL_K",
    "STATE_TYPES",
    "CountState",
    "ExtremumState",
    "HllState",
    "KllState",
    "MaxState",
    "MinState",
    "MomentsState",
    "State",
    "StateKind",
    "StateSpec",
    "SumState",
    "empty_state",
    "kll_from_values",
    "state_from_record",
    "state_type",
]
