"""Who holds a checkpoint's lease (:mod:`~streaming_dq.sink.lease`): a host, a process and a time, written into
the lease as JSON, and whether that holder can still be writing.

A pid names the same process only within one boot of one host, and only while that process lives: the
holder keeps the host's boot id and the process's start time beside it, so a pid reused after a crash is
told from the holder it names.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

__all__ = ["DEFAULT_TTL", "Holder", "alive", "boot_id", "now_text", "process_started"]

#: Seconds after its last renewal that an object-store lease is free for another job.
DEFAULT_TTL = 30.0


@dataclass(frozen=True)
class Holder:
    """Who holds a lease: written into the lease as JSON."""

    host: str
    pid: int
    since: str  # ISO 8601, UTC
    renewed: str  # ISO 8601, UTC (object stores: the last renewal)
    token: str  # this holding's own id
    boot_id: str | None = None  # the host's kernel boot id: a pid means the same process only within one boot
    started: int | None = None  # the process's start time in clock ticks since boot (tells a reused pid)
    ttl: float = DEFAULT_TTL
    released: bool = False

    @classmethod
    def of_this_process(cls, ttl: float) -> Holder:
        now, pid = now_text(), os.getpid()
        return cls(
            socket.gethostname(), pid, now, now, uuid.uuid4().hex, boot_id(), process_started(pid), ttl
        )

    def describe(self) -> str:
        return f"host {self.host}, pid {self.pid}, since {self.since}"

    def renewed_now(self) -> Holder:
        return Holder(**{**asdict(self), "renewed": now_text()})

    def released_now(self) -> Holder:
        return Holder(**{**asdict(self), "renewed": now_text(), "released": True})

    def to_json(self) -> bytes:
        return (json.dumps(asdict(self), sort_keys=True) + "\n").encode()

    @classmethod
    def from_json(cls, data: bytes) -> Holder | None:
        """The holder a lease names; None when the lease holds nothing readable (an empty, new file)."""
        try:
            raw = json.loads(data.decode() or "null")
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None
        if not isinstance(raw, dict):
            return None
        known = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
        try:
            return cls(**known)
        except TypeError:
            return None

    def is_gone(self, now: float | None = None) -> bool:
        """Whether this holder can no longer be writing: released, its process gone from this host, or (on an
        object store) not renewed for longer than its ttl."""
        if self.released:
            return True
        if self.host == socket.gethostname() and self.boot_id is not None and self.boot_id == boot_id():
            return process_started(self.pid) != self.started or not alive(self.pid)
        renewed = datetime.fromisoformat(self.renewed).timestamp()
        return (time.time() if now is None else now) - renewed > self.ttl


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return None


def process_started(pid: int) -> int | None:
    """The process's start time (clock ticks since boot; field 22 of ``/proc/<pid>/stat``), None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[19])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
