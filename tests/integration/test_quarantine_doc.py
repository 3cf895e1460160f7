"""docs/quarantine.md's worked example runs as written, in a copy of the orders job (metrics on a free port)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from streaming_dq.tables import read_table

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def example_blocks() -> list[str]:
    text = (REPO / "docs" / "quarantine.md").read_text(encoding="utf-8")
    section = text[text.index("## A worked example") :]
    section = section[: section.index("\n## ", 1)]
    return re.findall(r"```bash\n(.*?)```", section, flags=re.S)


def test_the_worked_example_releases_the_rows_of_the_customers_added(tmp_path: Path) -> None:
    blocks = example_blocks()
    assert len(blocks) == 2
    for name in ("generate.py", "orders.yaml"):
        shutil.copy(REPO / "jobs" / "orders" / name, tmp_path / name)
    config = tmp_path / "orders.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("port: 9108", "port: 0"), encoding="utf-8")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYSPARK_PYTHON": sys.executable,
        "COLUMNS": "200",
    }
    outputs = []
    for block in blocks:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, block + done.stdout[-3000:] + done.stderr[-3000:]
        outputs.append(done.stdout)

    before, after = outputs
    dry = [line for line in before.splitlines() if line.startswith("customer-known")]
    assert dry and re.search(r"\b0 would be released\s+[1-9][\d,]* would still fail", dry[0]), before
    assert "customers added to the reference" in after
    released = re.search(r"release \S+: ([\d,]+) row\(s\) released", after)
    assert released and int(released.group(1).replace(",", "")) > 0, after
    assert re.search(r"dry run: 0 row\(s\) would be released", after), after

    quarantine = read_table(str(tmp_path / "data" / "tables" / "orders_quarantine")).to_pylist()
    moved = [r for r in quarantine if (r["_dq_release"] or {}).get("state") == "released"]
    assert len(moved) == int(released.group(1).replace(",", ""))
    assert all(r["_dq_release"]["by"] and "@" in r["_dq_release"]["by"] for r in moved)
