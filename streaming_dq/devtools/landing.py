"""Writing landing files the way a file stream source needs them (the shipped generators and the demo).

Each file is written under a hidden temporary name and renamed into place, so Spark never lists a half-written
file, and gets a modification time at least 10 ms after the previous one's: Spark's file source takes new
files oldest first by their millisecond modification times, and small files written within one millisecond
came in either order (a day that arrives after the next one is late, and its window verdict is lost).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

__all__ = ["write_landing_file"]

_LAST_MTIME_NS = [0]


def write_landing_file(path: Path, lines: Iterable[str]) -> None:
    """Write ``lines`` (one record each) to ``path`` atomically, newer than every file written before it."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    os.replace(tmp, path)
    ns = max(time.time_ns(), _LAST_MTIME_NS[0] + 10_000_000)
    os.utime(path, ns=(ns, ns))
    _LAST_MTIME_NS[0] = ns
