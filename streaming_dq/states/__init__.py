"""The mergeable states: what an aggregate of a batch, a window or a stream's life is kept as.

The bottom layer of the package (it imports only :mod:`streaming_dq.exceptions`): every state merges with
another of its kind (associative, commutative, with an identity), so a window's state is the merge of its
batches' states, never a rescan. :mod:`~streaming_dq.states.base` is what every kind carries (its Spark, Arrow and
record forms), :mod:`~streaming_dq.states.values` and :mod:`~streaming_dq.states.sketches` the kinds,
:mod:`~streaming_dq.states.kinds` the kinds by name; :mod:`~streaming_dq.states.spec` how a check asks Spark
for one.
"""

from streaming_dq.states.base import Kind, State
from streaming_dq.states.kinds import STATE_TYPES, StateKind, empty_state, state_from_record, state_type
from streaming_dq.states.sketches import HLL_LG_K, KLL_K, HllState, KllState, kll_from_values
from streaming_dq.states.spec import StateSpec
from streaming_dq.states.values import CountState, ExtremumState, MaxState, MinState, MomentsState, SumState

__all__ = [
    "HLL_LG_K",
    "KLL_K",
    "STATE_TYPES",
    "CountState",
    "ExtremumState",
    "HllState",
    "Kind",
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
