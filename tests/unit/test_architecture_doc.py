"""docs/architecture.md draws the layers the import contract enforces (#28): the list there is the contract's."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_documented_layers_are_the_contracts() -> None:
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- layers: [^>]*-->\n```text\n(.*?)```", doc, re.S)
    assert block is not None, "docs/architecture.md lost its layers block"
    documented = [line.strip() for line in block.group(1).splitlines() if line.strip()]
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    assert documented == contract["layers"]
