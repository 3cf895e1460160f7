"""A process that reads a Delta table as its last step exits 0, also while the machine is busy.

``DeltaTable.to_pyarrow_table()`` leaves read-ahead work on pyarrow's thread pool that may need the GIL while
the interpreter shuts down, which aborts the process (``terminate called without an active exception``,
exit 134; apache/arrow#34314): the README quickstart did so in about one run in eight. Every read of the
project goes through :func:`streaming_dq.tables.read_table` instead (delta-rs's own scan).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SCRIPT = """
import sys
import pyarrow as pa
from deltalake import write_deltalake
from streaming_dq.tables import read_table

path = sys.argv[1]
if sys.argv[2] == "write":
    for i in range(20):
        write_deltalake(path, pa.table({"a": list(range(i * 100, (i + 1) * 100))}), mode="append")
print(read_table(path, predicate="a >= 0").num_rows)
"""

BUSY = "import time\nend = time.time() + 120\nwhile time.time() < end: sum(range(10000))\n"


def test_reading_a_table_as_the_last_step_exits_cleanly_eight_times_under_load(tmp_path: Path) -> None:
    script = tmp_path / "read_last.py"
    script.write_text(SCRIPT, encoding="utf-8")
    table = str(tmp_path / "t")
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(2)]  # both cores taken
    try:
        results = [
            subprocess.run(
                [sys.executable, str(script), table, "write" if i == 0 else "read"],
                capture_output=True, text=True, timeout=120, env=os.environ.copy(),
            )
            for i in range(8)
        ]  # fmt: skip
    finally:
        for proc in busy:
            proc.kill()
    assert [(r.returncode, r.stdout.strip(), r.stderr.strip()) for r in results] == [(0, "2000", "")] * 8
