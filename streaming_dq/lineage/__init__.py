"""OpenLineage run events of a gate (``lineage:`` in the config; off without it): :mod:`.events` builds them,
:mod:`.listener` sends them from the gate's outcome feed. Needs ``openlineage-python`` (``streaming-dq[lineage]``).
"""

from streaming_dq.lineage.listener import LineageListener, gate_datasets, transport_config

__all__ = ["LineageListener", "gate_datasets", "transport_config"]
