"""docs/architecture.md draws the layers the import contracts enforce (#28, the sink's inside #43): the lists
there are the contracts'."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_documented_layers_are_the_contracts() -> None:
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = {c["name"]: c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"}
    for name, marker in (("layers", "layers"), ("sink", "sink layers")):
        block = re.search(rf"<!-- {marker}: [^>]*-->\n```text\n(.*?)```", doc, re.S)
        assert block is not None, f"docs/architecture.md lost its {marker} block"
        documented = [line.strip() for line in block.group(1).splitlines() if line.strip()]
        assert documented == contracts[name]["layers"], name
