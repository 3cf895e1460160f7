"""The checkpoint lease (#41): a second job on a checkpoint in use is refused, naming the holder; a job killed
with SIGKILL frees it at once on its own host; an object-store lease expires, renews and knows when it is lost.

The holder runs in a real second process (its own pid, as a second job has); the object store is the S3 server
process of the test session.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from streaming_dq.sink.lease import (
    LEASE_FILE,
    CheckpointInUseError,
    Holder,
    LeaseLostError,
    hold_checkpoint,
    read_holder,
)

REPO = Path(__file__).resolve().parents[2]
HOLD = """
import json, sys, time
from streaming_dq.sink.lease import hold_checkpoint
lease = hold_checkpoint(sys.argv[1], json.loads(sys.argv[2]))
print("held", flush=True)
time.sleep(600)
"""


def other_process_refused(checkpoint: str, options: dict[str, str] | None = None) -> bool:
    """Whether a second process is refused the lease (it exits at once either way)."""
    script = HOLD.replace("time.sleep(600)", "")
    done = subprocess.run(
        [sys.executable, "-c", script, checkpoint, json.dumps(options or {})],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    if done.returncode == 0:
        assert done.stdout.strip() == "held"
        return False
    assert "CheckpointInUseError" in done.stderr, done.stderr
    return True


@contextmanager
def holder_process(checkpoint: str, options: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """A second process holding the lease (until killed)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, checkpoint, json.dumps(options or {})],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "held", proc.stderr.read() if proc.stderr else line
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


@pytest.fixture(params=["local", "s3"])
def checkpoint(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, str]]:
    if request.param == "local":
        return str(tmp_path / "chk"), {}
    s3 = request.getfixturevalue("s3")
    return f"s3://lake/lease-{tmp_path.name}/chk", s3.storage_options()


def test_a_second_job_is_refused_naming_the_holder_and_a_killed_one_frees_it_at_once(
    checkpoint: tuple[str, dict[str, str]],
) -> None:
    location, options = checkpoint
    with holder_process(location, options) as other:
        with pytest.raises(CheckpointInUseError) as refused:
            hold_checkpoint(location, options)
        message = str(refused.value)
        assert location in message
        assert f"host {socket.gethostname()}, pid {other.pid}, since 20" in message
        assert "stop that job first, or give this one its own checkpoint" in message
        assert "\n" not in message
        assert refused.value.holder is not None and refused.value.holder.pid == other.pid
        other.send_signal(signal.SIGKILL)
        other.wait()
        lease = hold_checkpoint(location, options)  # at once: the holder's process is gone from this host
    try:
        holder = read_holder(location, options)
        assert holder is not None and holder.pid == os.getpid() and not holder.released
    finally:
        lease.release()
    after = read_holder(location, options)
    assert after is not None and after.released


def test_a_released_lease_is_free_for_the_next_job(checkpoint: tuple[str, dict[str, str]]) -> None:
    location, options = checkpoint
    first = hold_checkpoint(location, options)
    again = hold_checkpoint(location, options)  # the same process holding it once more (the CLI, then start)
    assert again is first
    first.release()
    assert other_process_refused(location, options)  # still held once
    again.release()
    with holder_process(location, options) as other:  # another process takes it now
        assert other.poll() is None


def test_a_take_while_this_process_gives_the_lease_back_waits_for_it_instead_of_being_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher thread releases a finished query's lease while a new gate of this process takes it (a
    restart on the same checkpoint, as the tests and the fleet do): the take must find the lease free, not
    half given back (forgotten by this process but its lock still held)."""
    location = str(tmp_path / "chk")
    first = hold_checkpoint(location)
    giving_back = threading.Event()
    real = type(first)._give_back

    def slow_give_back(self: object) -> None:
        giving_back.set()
        time.sleep(0.5)  # the window a take fell into: the book updated, the lock not yet let go
        real(self)  # type: ignore[arg-type]

    monkeypatch.setattr(type(first), "_give_back", slow_give_back)
    releasing = threading.Thread(target=first.release)
    releasing.start()
    assert giving_back.wait(10)
    second = hold_checkpoint(location)  # refused with CheckpointInUseError when the book forgot it first
    releasing.join()
    try:
        assert second is not first
        holder = read_holder(location)
        assert holder is not None and holder.pid == os.getpid() and not holder.released
    finally:
        monkeypatch.undo()
        second.release()
    assert not other_process_refused(location)


def _put_lease(s3: object, key: str, holder: Holder) -> None:
    s3.client().put_object(Bucket="lake", Key=key, Body=holder.to_json())  # type: ignore[attr-defined]


def _foreign(renewed: datetime, ttl: float = 30.0) -> Holder:
    since = (renewed - timedelta(minutes=5)).isoformat(timespec="seconds")
    return Holder(
        "another-host", 4242, since, renewed.isoformat(timespec="seconds"), "t0k3n", "other-boot", 1, ttl
    )


def test_an_object_store_lease_of_another_host_is_in_use_until_its_ttl_passes(
    s3: object, tmp_path: Path
) -> None:
    location = f"s3://lake/lease-{tmp_path.name}/chk"
    options = s3.storage_options()  # type: ignore[attr-defined]
    key = f"lease-{tmp_path.name}/chk/{LEASE_FILE}"
    _put_lease(s3, key, _foreign(datetime.now(UTC)))
    with pytest.raises(CheckpointInUseError, match=r"host another-host, pid 4242.*frees it 30 s after"):
        hold_checkpoint(location, options)
    _put_lease(s3, key, _foreign(datetime.now(UTC) - timedelta(seconds=31)))
    lease = hold_checkpoint(location, options)  # its last renewal is older than its ttl: taken over
    try:
        holder = read_holder(location, options)
        assert holder is not None and holder.token == lease.holder.token
    finally:
        lease.release()


def test_an_object_store_lease_renews_and_finds_out_when_it_was_taken_over(
    s3: object, tmp_path: Path
) -> None:
    location = f"s3://lake/lease-{tmp_path.name}/chk"
    options = s3.storage_options()  # type: ignore[attr-defined]
    lease = hold_checkpoint(location, options, ttl=0.9)
    try:
        first = read_holder(location, options)
        assert first is not None
        deadline = time.monotonic() + 10
        while (now := read_holder(location, options)) is not None and now.renewed == first.renewed:
            assert time.monotonic() < deadline, "no renewal within 10 s"
            time.sleep(0.1)
        assert now is not None and now.token == first.token
        lease.check()  # still ours
        key = f"lease-{tmp_path.name}/chk/{LEASE_FILE}"
        _put_lease(s3, key, _foreign(datetime.now(UTC)))  # another job took it over (the renewals stalled)
        deadline = time.monotonic() + 10
        while not lease.lost:
            assert time.monotonic() < deadline, "the takeover was not noticed within 10 s"
            time.sleep(0.1)
        with pytest.raises(LeaseLostError, match=r"taken over by another job \(host another-host"):
            lease.check()
    finally:
        lease.release()
    holder = read_holder(location, options)
    assert (
        holder is not None and holder.host == "another-host"
    )  # a lost lease is not given back over the taker's


def test_a_lease_file_left_by_a_killed_job_on_local_disk_names_it_but_does_not_hold(tmp_path: Path) -> None:
    """The kernel lock went with the process; the file still names the last holder (for the message)."""
    location = str(tmp_path / "chk")
    with holder_process(location) as other:
        named = read_holder(location)
        assert named is not None and named.pid == other.pid
        other.kill()
        other.wait()
    lease = hold_checkpoint(location)
    try:
        assert json.loads((tmp_path / "chk" / LEASE_FILE).read_text())["pid"] == os.getpid()
    finally:
        lease.release()
