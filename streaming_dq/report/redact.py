"""The gate's configuration as a report shows it: the file's YAML with every value that may be a secret
replaced by ``***``.

``${ENV}`` references are kept as written (they name a variable, not its value). Masked: every value of a
``storage-options`` or ``options`` mapping whose key is not known to hold no secret (the rule of
:func:`streaming_dq.tables.storage.redacted`), and any value whose key says password, secret, token,
credential or JAAS.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from streaming_dq.tables.storage import redacted

__all__ = ["redacted_config"]

_SECRET_KEY = re.compile(r"password|passwd|secret|token|credential|jaas|sas", re.IGNORECASE)
_OPTION_MAPS = {"storage-options", "storage_options", "options", "kafka-options"}
_REFERENCE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$")
MASK = "***"


def _keep(value: Any) -> bool:
    return not isinstance(value, str) or bool(_REFERENCE.match(value.strip()))


def _walk(node: Any, parent: str | None = None) -> Any:
    if isinstance(node, Mapping):
        out: dict[Any, Any] = {}
        if parent in _OPTION_MAPS:
            shown = redacted({str(k): str(v) for k, v in node.items()})
            for k, v in node.items():
                out[k] = v if _keep(v) or shown[str(k)] == str(v) else MASK
            return out
        for k, v in node.items():
            if _SECRET_KEY.search(str(k)) and not isinstance(v, Mapping | list) and not _keep(v):
                out[k] = MASK
            else:
                out[k] = _walk(v, str(k))
        return out
    if isinstance(node, list):
        return [_walk(v, parent) for v in node]
    return node


def redacted_config(text: str) -> str:
    """``text`` (a gate config's YAML) with its secrets masked (see the module)."""
    return yaml.safe_dump(_walk(yaml.safe_load(text)), sort_keys=False, allow_unicode=True, width=100)
