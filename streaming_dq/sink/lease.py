"""A lease on a streaming checkpoint: one job at a time writes a gate's tables (#41).

Spark notices a second query on one checkpoint only when it writes the offset log, after the batch's writes;
a second job started on a checkpoint in use (an overlapping retry, a rolling deploy, a second terminal) must
stop before its first batch instead. :func:`hold_checkpoint` takes the lease before Spark starts and keeps it
until the job ends; a job that finds it held stops with :class:`CheckpointInUseError`, one line naming the
checkpoint, the holder (host, pid, since when) and what to do.

Where the checkpoint lives decides how the lease is held, in ``<checkpoint>/_streaming_dq_lease.json``
(Spark ignores a file it does not know in the checkpoint's folder):

- **Local disk**: an exclusive ``flock`` on that file, held by the process for as long as it runs. The kernel
  drops it the moment the process ends, however it ends, so a job killed with SIGKILL locks its successor out
  for no time at all. The file itself says who holds it (for the message), and is never deleted (deleting a
  locked file lets two processes lock two files of one name). ``flock`` on a network file system is only as
  good as that file system's locks.
- **Object stores** (``s3://``, ``s3a://``, ``abfss://``, ``az://``, ``gs://``): a lease object written by
  conditional writes (create if absent; replace only the version read, by ETag), renewed every
  ``ttl / 3`` seconds by a thread. A holder that stopped renewing is taken over ``ttl`` seconds after its last
  renewal (:data:`DEFAULT_TTL`, 30 s); one on this host whose process is gone is taken over at once (the
  restart right after a crash). What it cannot promise: a holder whose renewals stall past ``ttl`` (a long GC
  pause, a network partition) loses the lease while it may still be writing; it finds out at its next
  renewal and fails its next batch, and the commits of the batch in flight are fenced by the tables' own
  application transactions (:mod:`streaming_dq.tables.targets`: a version is never committed twice). The
  expiry compares the holder's clock with the taker's: keep the hosts' clocks within a few seconds.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any

from streaming_dq.config.paths import local_path
from streaming_dq.exceptions import StreamingDQError
from streaming_dq.sink.holder import DEFAULT_TTL, Holder
from streaming_dq.tables.objects import object_store

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

logger = logging.getLogger("streaming_dq.lease")

__all__ = [
    "DEFAULT_TTL",
    "LEASE_FILE",
    "CheckpointInUseError",
    "CheckpointLease",
    "Holder",
    "LeaseLostError",
    "hold_checkpoint",
    "read_holder",
    "release_when_stopped",
]

#: The lease's name inside the checkpoint's folder.
LEASE_FILE = "_streaming_dq_lease.json"
_OBJECT_SCHEMES = ("s3", "s3a", "abfs", "abfss", "az", "azure", "gs", "gcs")


class CheckpointInUseError(StreamingDQError, RuntimeError):
    """Another job holds the checkpoint's lease: this one stops before its first batch, having written nothing.

    Attributes:
        checkpoint: The checkpoint's location.
        holder: The job holding it (None when it could not be read).
    """

    def __init__(self, checkpoint: str, holder: Holder | None, *, object_store: bool = False) -> None:
        self.checkpoint = checkpoint
        self.holder = holder
        who = "another job" if holder is None else f"another job ({holder.describe()})"
        after = (
            f"; a job that was killed frees it {holder.ttl:g} s after its last renewal ({holder.renewed})"
            if object_store and holder is not None
            else ""
        )
        super().__init__(
            f"checkpoint {checkpoint} is in use by {who}: stop that job first, or give this one its own "
            f"checkpoint (a second job on one checkpoint would write its batches twice){after}"
        )


class LeaseLostError(StreamingDQError, RuntimeError):
    """The job's lease on its checkpoint was taken over by another job (its renewals stalled past the ttl):
    the batch fails before writing anything."""

    def __init__(self, checkpoint: str, holder: Holder | None) -> None:
        self.checkpoint = checkpoint
        self.holder = holder
        who = "another job" if holder is None else f"another job ({holder.describe()})"
        super().__init__(
            f"the lease on checkpoint {checkpoint} was taken over by {who}: this job stops writing "
            "(its renewals stalled longer than the lease's ttl)"
        )


class CheckpointLease:
    """A held lease (see the module); :meth:`release` gives it back. Re-entrant within a process: holding
    a checkpoint this process holds already counts once more."""

    def __init__(self, checkpoint: str, holder: Holder) -> None:
        self.checkpoint = checkpoint
        self.holder = holder
        self.holds = 1
        self.key = checkpoint
        self._lost: Holder | None = None
        self._lost_flag = False

    @property
    def lost(self) -> bool:
        """Whether another job took the lease over (object stores only)."""
        return self._lost_flag

    def check(self) -> None:
        """Raise :class:`LeaseLostError` when the lease was taken over."""
        if self._lost_flag:
            raise LeaseLostError(self.checkpoint, self._lost)

    def _mark_lost(self, by: Holder | None) -> None:
        self._lost, self._lost_flag = by, True
        logger.error("%s", LeaseLostError(self.checkpoint, by))

    def release(self) -> None:
        """Give the lease back once every holding of this process released it; given back before the book
        forgets it, so a take in this process that follows at once never finds it half given back."""
        with _HELD_LOCK:
            self.holds -= 1
            if self.holds > 0:
                return
            try:
                self._give_back()
            finally:
                _HELD.pop(self.key, None)

    def _give_back(self) -> None:
        raise NotImplementedError


class _LocalLease(CheckpointLease):
    def __init__(self, checkpoint: str, holder: Holder, file: IO[bytes]) -> None:
        super().__init__(checkpoint, holder)
        self._file = file

    def _give_back(self) -> None:
        with contextlib.suppress(OSError):  # the lock goes with the descriptor whatever the write did
            _rewrite(self._file, self.holder.released_now().to_json())
        self._file.close()


class _NoLease(CheckpointLease):
    def _give_back(self) -> None:
        pass


class _ObjectLease(CheckpointLease):
    def __init__(self, checkpoint: str, holder: Holder, store: Any, etag: str) -> None:
        super().__init__(checkpoint, holder)
        self._store, self._etag = store, etag
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew_loop, name=f"lease {checkpoint}", daemon=True)
        self._thread.start()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.holder.ttl / 3):
            try:
                self.renew()
            except Exception as exc:  # a store that does not answer: tried again; lost only when taken over
                logger.warning("renewing the lease on %s: %s: %s", self.checkpoint, type(exc).__name__, exc)
            if self._lost_flag:
                return

    def renew(self) -> None:
        import obstore
        from obstore.exceptions import PreconditionError

        renewed = self.holder.renewed_now()
        try:
            result = obstore.put(self._store, LEASE_FILE, renewed.to_json(), mode={"e_tag": self._etag})
        except PreconditionError:
            self._mark_lost(_read_object(self._store)[0])
            return
        self.holder, self._etag = renewed, str(result["e_tag"])

    def _give_back(self) -> None:
        import obstore
        from obstore.exceptions import PreconditionError

        self._stop.set()
        if self._lost_flag:
            return
        with contextlib.suppress(PreconditionError):  # taken over meanwhile: it is not ours to give back
            obstore.put(
                self._store, LEASE_FILE, self.holder.released_now().to_json(), mode={"e_tag": self._etag}
            )


_HELD: dict[str, CheckpointLease] = {}
_HELD_LOCK = threading.Lock()


def hold_checkpoint(
    checkpoint: str, storage_options: Mapping[str, str] | None = None, *, ttl: float = DEFAULT_TTL
) -> CheckpointLease:
    """Take the lease on ``checkpoint`` (creating its folder on local disk), or count once more a lease this
    process holds.

    Raises:
        CheckpointInUseError: another job holds it.
    """
    key = _key(checkpoint)
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is not None:
            held.holds += 1
            return held
        lease = _take(checkpoint, dict(storage_options or {}), ttl)
        lease.key = key
        _HELD[key] = lease
        return lease


def _key(checkpoint: str) -> str:
    """One name per checkpoint, however it is spelled (a relative path, ``s3a://`` for ``s3://``)."""
    path = local_path(checkpoint)
    if path is not None:
        return str(path.resolve())
    scheme, _, rest = checkpoint.partition("://")
    return ("s3" if scheme.lower() == "s3a" else scheme.lower()) + "://" + rest.rstrip("/")


@contextlib.contextmanager
def holding(
    checkpoints: Mapping[str, Mapping[str, str]], *, ttl: float = DEFAULT_TTL
) -> Iterator[dict[str, CheckpointLease]]:
    """Hold every checkpoint's lease (none, if one is in use) while the block runs."""
    taken: dict[str, CheckpointLease] = {}
    try:
        for checkpoint, options in checkpoints.items():
            taken[checkpoint] = hold_checkpoint(checkpoint, options, ttl=ttl)
        yield taken
    finally:
        for lease in taken.values():
            lease.release()


def release_when_stopped(lease: CheckpointLease, query: StreamingQuery, *, every: float = 2.0) -> None:
    """Release ``lease`` once ``query`` is no longer active (a thread that asks every ``every`` seconds)."""

    def watch() -> None:
        try:
            while query.isActive:
                time.sleep(every)
        except Exception as exc:  # the session went away: the query is gone with it
            logger.info("watching query of %s: %s: %s", lease.checkpoint, type(exc).__name__, exc)
        lease.release()

    threading.Thread(target=watch, name=f"lease watch {lease.checkpoint}", daemon=True).start()


def read_holder(checkpoint: str, storage_options: Mapping[str, str] | None = None) -> Holder | None:
    """Who the checkpoint's lease names (None: no lease, or nothing readable), held or not."""
    path = local_path(checkpoint)
    if path is not None:
        try:
            return Holder.from_json((path / LEASE_FILE).read_bytes())
        except FileNotFoundError:
            return None
    return _read_object(object_store(checkpoint, dict(storage_options or {})))[0]


def _take(checkpoint: str, options: dict[str, str], ttl: float) -> CheckpointLease:
    path = local_path(checkpoint)
    if path is not None:
        return _take_local(checkpoint, path, ttl)
    scheme = checkpoint.partition("://")[0].lower()
    if scheme not in _OBJECT_SCHEMES:  # HDFS, DBFS ...: no conditional write to build a lease on
        logger.warning(
            "no lease on checkpoint %s: a second job on it is not refused (%s://)", checkpoint, scheme
        )
        return _NoLease(checkpoint, Holder.of_this_process(ttl))
    return _take_object(checkpoint, options, ttl)


def _take_local(checkpoint: str, folder: Any, ttl: float) -> CheckpointLease:
    folder.mkdir(parents=True, exist_ok=True)
    file = open(folder / LEASE_FILE, "a+b")  # noqa: SIM115 - held open for as long as the lease
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        file.seek(0)
        holder = Holder.from_json(file.read())
        file.close()
        raise CheckpointInUseError(checkpoint, holder) from None
    except BaseException:
        file.close()
        raise
    holder = Holder.of_this_process(ttl)
    _rewrite(file, holder.to_json())
    return _LocalLease(checkpoint, holder, file)


def _rewrite(file: IO[bytes], data: bytes) -> None:
    file.seek(0)
    file.truncate()
    file.write(data)
    file.flush()
    os.fsync(file.fileno())


def _take_object(checkpoint: str, options: dict[str, str], ttl: float) -> CheckpointLease:
    import obstore
    from obstore.exceptions import AlreadyExistsError, PreconditionError

    store = object_store(checkpoint, options)
    holder = Holder.of_this_process(ttl)
    try:
        result = obstore.put(store, LEASE_FILE, holder.to_json(), mode="create")
        return _ObjectLease(checkpoint, holder, store, str(result["e_tag"]))
    except AlreadyExistsError:
        pass
    current, etag = _read_object(store)
    if current is not None and not current.is_gone():
        raise CheckpointInUseError(checkpoint, current, object_store=True)
    try:  # taken over: replaced only if nobody renewed or took it since it was read
        result = obstore.put(store, LEASE_FILE, holder.to_json(), mode={"e_tag": etag})
    except PreconditionError:
        raise CheckpointInUseError(checkpoint, _read_object(store)[0], object_store=True) from None
    if current is not None and not current.released:
        logger.warning(
            "took over the lease on %s from a job that is gone (%s)", checkpoint, current.describe()
        )
    return _ObjectLease(checkpoint, holder, store, str(result["e_tag"]))


def _read_object(store: Any) -> tuple[Holder | None, str | None]:
    import obstore
    from obstore.exceptions import NotFoundError

    try:
        got = obstore.get(store, LEASE_FILE)
    except NotFoundError:
        return None, None
    return Holder.from_json(bytes(got.bytes())), got.meta["e_tag"]
