"""The README's quickstart runs as written: its Python blocks, in order, in a fresh interpreter."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def quickstart_blocks() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Quickstart") :]
    section = section[: section.index("\n## ", 1)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_quickstart_has_both_examples() -> None:
    blocks = quickstart_blocks()
    assert len(blocks) == 2
    assert "run_batch" in blocks[0] and "gate.start" in blocks[1]


def test_the_readme_quickstart_runs_as_written(tmp_path: Path) -> None:
    script = tmp_path / "quickstart.py"
    script.write_text("\n".join(quickstart_blocks()), encoding="utf-8")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Validation Report: 1 passed, 2 failed" in done.stdout, done.stdout
    assert "3 rows: 2 passed, 1 failed, 0 warned (pass rate 0.67)" in done.stdout
    assert "1 row passed, 1 row quarantined" in done.stdout, done.stdout


def test_the_readme_yaml_commands_run(tmp_path: Path) -> None:
    """generate, then validate (which checks the landing folder exists, as `run` does), on a copy of the job."""
    import shutil

    exe = Path(sys.executable).parent / "streaming-dq"
    job = tmp_path / "orders"
    shutil.copytree(REPO / "jobs" / "orders", job)
    config = job / "orders.yaml"
    missing = subprocess.run([str(exe), "validate", str(config)], capture_output=True, text=True)
    assert missing.returncode == 2 and "source.path: the source folder" in missing.stderr, missing.stderr
    subprocess.run([sys.executable, str(job / "generate.py")], check=True, capture_output=True, cwd=job)
    done = subprocess.run([str(exe), "validate", str(config)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: gate 'orders'")
    # the README's suggest line as written (#42: `--data landing/` pointed nowhere), on the copy of the job
    (line,) = [x for x in (REPO / "README.md").read_text(encoding="utf-8").splitlines() if " suggest " in x]
    command = line.split("#")[0].split()
    assert command[0] == ".venv/bin/streaming-dq", line
    args = [a.replace("jobs/orders/", f"{job}/") for a in command[1:]]
    suggested = subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert suggested.returncode == 0, suggested.stderr[-3000:]
    text = (tmp_path / "checks.yaml").read_text(encoding="utf-8")
    assert "amount-range" in text and "_corrupt_record" not in text, text
