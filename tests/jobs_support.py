"""Shared helpers of the job tests (no tests here): a copy of the orders job with generated landing data."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
ORDERS_JOB = REPO / "jobs" / "orders"
CLI = Path(sys.executable).parent / "streaming-dq"


def make_orders_job(tmp_path: Path, *, batches: int, rows: int, seed: int = 5) -> tuple[Path, dict]:
    """A copy of the orders job in ``tmp_path`` (delta-rs writer, metrics on a free port) and its data."""
    config = (ORDERS_JOB / "orders.yaml").read_text(encoding="utf-8")
    config = config.replace("writer: auto ", "writer: delta-rs").replace("port: 9108", "port: 0")
    assert "writer: delta-rs" in config and "port: 0" in config
    path = tmp_path / "orders.yaml"
    path.write_text(config, encoding="utf-8")
    args = [
        "--out",
        str(tmp_path / "data"),
        "--batches",
        str(batches),
        "--rows",
        str(rows),
        "--seed",
        str(seed),
    ]
    generated = subprocess.run(
        [sys.executable, str(ORDERS_JOB / "generate.py"), *args, "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return path, json.loads(generated.stdout)


def in_order(files: list[str]) -> None:
    """Give the landing files increasing modification times: the file source takes them oldest first, and
    files written within the same second would otherwise come in either order (a day then arrives late)."""
    base = time.time() - 3600
    for i, name in enumerate(sorted(files)):
        os.utime(name, (base + i, base + i))


def make_orders_jobs(tmp_path: Path, names: list[str], *, batches: int, rows: int) -> list[tuple[Path, dict]]:
    """One orders job per name, each in a folder of its own (its own data, checkpoint and tables), the gate
    named after it; every metrics endpoint on port 0 (one free port when they run together)."""
    jobs = []
    for i, name in enumerate(names):
        folder = tmp_path / name
        folder.mkdir()
        config, summary = make_orders_job(folder, batches=batches, rows=rows, seed=5 + i)
        text = config.read_text(encoding="utf-8")
        assert "  name: orders\n" in text
        config.write_text(text.replace("  name: orders\n", f"  name: {name}\n", 1), encoding="utf-8")
        jobs.append((config, summary))
    return jobs


def order_ids(table: Path) -> list[str]:
    """The order ids in a pass or quarantine table (a malformed record's from its raw JSON, else its text)."""
    from streaming_dq.tables import read_table

    t = read_table(str(table))
    raws = t.column("_dq_raw").to_pylist() if "_dq_raw" in t.column_names else [None] * t.num_rows
    out = []
    for oid, raw in zip(t.column("order_id").to_pylist(), raws, strict=True):
        out.append(oid if oid is not None else f"raw:{raw}")
    return out


@contextlib.contextmanager
def background_run(
    config: Path, log: Path, *, env: Mapping[str, str], cwd: Path, timeout: int = 600
) -> Iterator[subprocess.Popen[bytes]]:
    """``streaming-dq run CONFIG --timeout N`` in the background, its output in ``log``; killed on leaving the
    block if it still runs (end it with :func:`interrupt` inside the block)."""
    with log.open("w") as out:
        run = subprocess.Popen(
            [str(CLI), "run", str(config), "--timeout", str(timeout)],
            stdout=out, stderr=subprocess.STDOUT, env=dict(env), cwd=cwd,
            start_new_session=True,  # its JVM in its group: a kill takes both (a killed driver orphans its JVM)
        )  # fmt: skip
    try:
        yield run
    finally:
        if run.poll() is None:
            kill_job(run)
            run.wait()


def kill_job(job: subprocess.Popen[Any]) -> None:
    """SIGKILL a job and, when it leads a process group of its own, the group (its Spark JVM with it)."""
    try:
        if os.getpgid(job.pid) == job.pid:
            os.killpg(job.pid, signal.SIGKILL)
            return
    except ProcessLookupError:
        return
    job.kill()


def interrupt(run: subprocess.Popen[bytes], log: Path) -> None:
    """Ctrl-C the job: it ends cleanly between batches, exit code 130."""
    run.send_signal(signal.SIGINT)
    assert wait_or_dump(run, 120) == 130, log.read_text()


def wait_or_dump(job: subprocess.Popen[Any], timeout: float) -> int:
    """The job's exit code; a job still running after ``timeout`` seconds is asked for its threads' stacks
    (``streaming-dq`` prints them on SIGUSR1, to its stderr), then killed, and the test fails saying so."""
    try:
        return job.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stacks_then_kill(job)
        job.wait()
        raise AssertionError(
            f"the job did not exit within {timeout:g} s: its threads' stacks are in its stderr"
        ) from None


def _stacks_then_kill(job: subprocess.Popen[Any]) -> None:
    """Ask a job that does not end for its threads' stacks (``streaming-dq`` prints them on SIGUSR1), then kill it."""
    job.send_signal(signal.SIGUSR1)
    time.sleep(2)
    kill_job(job)


def communicate_or_dump(job: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    """:meth:`~subprocess.Popen.communicate` for a job started with pipes; one still running after ``timeout``
    seconds fails the test with its threads' stacks (SIGUSR1, see :func:`wait_or_dump`) and its stderr's tail."""
    try:
        return job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stacks_then_kill(job)
        _out, err = job.communicate()
        raise AssertionError(
            f"the job did not exit within {timeout:g} s; its stderr ends:\n{err[-8000:]}"
        ) from None


def txn_counts(table: Path) -> Counter[tuple[str, int]]:
    """How often each ``(app id, version)`` appears in a local table's Delta log (every commit file read)."""
    found: Counter[tuple[str, int]] = Counter()
    for commit in sorted((table / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line) if line.strip() else {}
            if "txn" in action:
                found[(action["txn"]["appId"], int(action["txn"]["version"]))] += 1
    return found
