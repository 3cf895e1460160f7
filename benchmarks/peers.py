"""Peer tools (placeholder while the peer drivers are written)."""

from __future__ import annotations

from typing import Any


def run_peers(config: Any, log: Any = print) -> dict[str, Any]:
    return {"description": "", "comparisons": []}
