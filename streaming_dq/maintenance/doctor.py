"""Find and repair what a second writer (or anything else) broke in a gate's tables (#41).

:func:`examine` reads each table's Delta log (the commit files, not the data) and reports, one
:class:`Finding` each:

- ``duplicate-commit``: one ``(app id, version)`` recorded by more than one commit: a batch (or a release
  chunk, a discard ...) written twice. Before #41 a second job on the same checkpoint could do that.
- ``commit-order``: a stream's batch that a later table of the commit order records while an earlier one does
  not: the gate commits pass and quarantine, then the keys it saw (with checks across batches), then results,
  then metrics, so the later table holding a batch the earlier lacks means a commit was lost or removed.

:func:`repair` mends the duplicate commits it can: for every commit after the first one of an
``(app id, version)``, one new commit removes exactly the data files that commit added (a ``remove`` action
per file, ``dataChange: true``), so the table holds each row as often as the first commit wrote it. The files
stay on storage until a vacuum (and time travel to the versions before still shows the duplicate). It cannot
when a compaction has since rewritten those files together with others (their rows are no longer a file of
their own): that finding is reported as not repairable, with the versions to restore to by hand.

Only log files that still exist are read: a log cleaned up after ``delta.logRetentionDuration`` (30 days by
default, :mod:`streaming_dq.maintenance`) keeps no record of its older commits, nor of their duplicates.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from streaming_dq.core.modes import BATCH_COMMIT_ORDER
from streaming_dq.tables import DeltaTarget
from streaming_dq.tables.objects import object_store
from streaming_dq.tables.storage import delta_rs_options

__all__ = ["Finding", "LogCommit", "examine", "read_log", "repair"]

FindingKind = Literal["duplicate-commit", "commit-order"]
#: The commit info's client of a repair commit (so a later audit knows the duplicate was mended).
CLIENT = "streaming-dq-doctor"


@dataclass(frozen=True)
class LogCommit:
    """One commit of a table's log: its version, the app transactions it records, the files it added."""

    version: int
    txns: tuple[tuple[str, int], ...]
    added: tuple[Mapping[str, Any], ...]
    removed: frozenset[str] = frozenset()
    by_doctor: bool = False  # a repair of this module's (its commit info says so)


@dataclass(frozen=True)
class Finding:
    """One broken invariant of one table."""

    kind: FindingKind
    role: str
    table: str
    line: str
    app_id: str
    version: int
    log_versions: tuple[int, ...] = ()
    repairable: bool = False
    repaired: bool = False
    detail: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "table": self.role,
            "uri": self.table,
            "app_id": self.app_id,
            "version": self.version,
            "log_versions": list(self.log_versions),
            "repairable": self.repairable,
            "repaired": self.repaired,
            "line": self.line,
        }


def read_log(target: DeltaTarget) -> list[LogCommit] | None:
    """Every commit file still in the table's log, oldest first (None: no table there)."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        latest = DeltaTable(target.uri, storage_options=delta_rs_options(target.storage_options)).version()
    except TableNotFoundError:
        return None
    store = object_store(target.uri, target.storage_options)
    commits = []
    for version in range(latest + 1):
        text = _read(store, f"_delta_log/{version:020d}.json")
        if text is None:  # cleaned up after the log retention (a checkpoint holds their state)
            continue
        txns: list[tuple[str, int]] = []
        added: list[Mapping[str, Any]] = []
        removed: set[str] = set()
        by_doctor = False
        for line in text.splitlines():
            if not line.strip():
                continue
            action = json.loads(line)
            if "txn" in action:
                txns.append((str(action["txn"]["appId"]), int(action["txn"]["version"])))
            elif "add" in action:
                added.append(action["add"])
            elif "remove" in action:
                removed.add(str(action["remove"]["path"]))
            elif "commitInfo" in action:
                by_doctor = action["commitInfo"].get("clientVersion") == CLIENT
        commits.append(LogCommit(version, tuple(txns), tuple(added), frozenset(removed), by_doctor))
    return commits


def _read(store: Any, key: str) -> str | None:
    import obstore
    from obstore.exceptions import NotFoundError

    try:
        return bytes(obstore.get(store, key).bytes()).decode()
    except (NotFoundError, FileNotFoundError):
        return None


def examine(targets: Mapping[str, DeltaTarget]) -> list[Finding]:
    """Every finding of the gate's tables (``targets`` by role: pass, quarantine, results, metrics)."""
    findings: list[Finding] = []
    logs: dict[str, list[LogCommit]] = {}
    for role, target in targets.items():
        log = read_log(target)
        if log is None:
            continue
        logs[role] = log
        findings += _duplicates(role, target, log)
    findings += _order(targets, logs)
    return findings


def _duplicates(role: str, target: DeltaTarget, log: Sequence[LogCommit]) -> list[Finding]:
    seen: dict[tuple[str, int], list[LogCommit]] = {}
    for commit in log:
        for txn in commit.txns:
            seen.setdefault(txn, []).append(commit)
    removed_later = {path for commit in log for path in commit.removed if not commit.by_doctor}
    repaired = {path for commit in log for path in commit.removed if commit.by_doctor}
    out = []
    for (app_id, version), commits in seen.items():
        if len(commits) < 2:
            continue
        extra = commits[1:]
        files = [a for c in extra for a in c.added]
        if all(a["path"] in repaired for a in files):  # mended by an earlier --repair
            continue
        repairable = all(a["path"] not in removed_later for a in files)
        versions = tuple(c.version for c in commits)
        rows = sum(_rows(a) or 0 for a in files)
        how = (
            f"--repair removes the {len(files)} file(s) ({rows} rows) of log version(s) "
            f"{', '.join(map(str, versions[1:]))}"
            if repairable
            else "not repairable by file: a compaction rewrote its files since; restore the table to a "
            f"version before {versions[1]} and replay, or delete the duplicate rows by hand"
        )
        out.append(
            Finding(
                "duplicate-commit",
                role,
                target.uri,
                f"{role} table {target.uri}: app {app_id!r} version {version} committed {len(commits)} times "
                f"(log versions {', '.join(map(str, versions))}): {how}",
                app_id,
                version,
                versions,
                repairable,
                detail={"files": files},
            )
        )
    return out


def _rows(add: Mapping[str, Any]) -> int | None:
    stats = add.get("stats")
    if not stats:
        return None
    try:
        return int(json.loads(stats).get("numRecords"))
    except (ValueError, TypeError):
        return None


def _order(targets: Mapping[str, DeltaTarget], logs: Mapping[str, list[LogCommit]]) -> list[Finding]:
    """A stream's batch recorded by a later table of :data:`~streaming_dq.core.modes.BATCH_COMMIT_ORDER` and missing from an earlier one."""
    latest: dict[str, dict[str, int]] = {}
    for role, log in logs.items():
        versions: dict[str, int] = {}
        for commit in log:
            for app_id, version in commit.txns:
                if "/" not in app_id and ":" in app_id:  # a stream's batches ("<gate>:<query id>")
                    versions[app_id] = max(version, versions.get(app_id, -1))
        latest[role] = versions
    out = []
    roles = [r for r in BATCH_COMMIT_ORDER if r in latest]
    for i, later in enumerate(roles):
        for earlier in roles[:i]:
            for app_id, version in latest[later].items():
                has = latest[earlier].get(app_id)
                if has is None or has < version:
                    out.append(
                        Finding(
                            "commit-order",
                            earlier,
                            targets[earlier].uri,
                            f"{earlier} table {targets[earlier].uri}: app {app_id!r} has batches up to "
                            f"{'none' if has is None else has} while the {later} table (committed after "
                            f"it) has batch {version}: a commit of the {earlier} table is missing",
                            app_id,
                            version,
                        )
                    )
    return out


def repair(
    targets: Mapping[str, DeltaTarget], findings: Sequence[Finding], *, dry_run: bool
) -> list[Finding]:
    """Repair the repairable duplicate commits (see the module); the findings with ``repaired`` set for those
    mended. ``dry_run`` writes nothing."""
    out = []
    by_role: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.kind == "duplicate-commit" and finding.repairable:
            by_role.setdefault(finding.role, []).append(finding)
        else:
            out.append(finding)
    for role, found in by_role.items():
        if not dry_run:
            _remove_files(targets[role], found)
        out += [replace(f, repaired=not dry_run) for f in found]
    return out


def _remove_files(target: DeltaTarget, findings: Sequence[Finding]) -> None:
    """One commit removing every file of ``findings``' extra commits, made as the next version of the log by a
    create-if-absent write (a concurrent commit makes it try again on the version after)."""
    import obstore
    from deltalake import DeltaTable
    from obstore.exceptions import AlreadyExistsError

    from streaming_dq.exceptions import TargetWriteError

    table = DeltaTable(target.uri, storage_options=delta_rs_options(target.storage_options))
    if table.metadata().configuration.get("delta.appendOnly") == "true":
        raise TargetWriteError(
            target.uri, None, "the table is append-only (delta.appendOnly): nothing removed"
        )
    now = int(time.time() * 1000)
    files = [a for f in findings for a in f.detail["files"]]
    what = "; ".join(f"app {f.app_id!r} version {f.version} (log {f.log_versions[1:]})" for f in findings)
    actions: list[dict[str, Any]] = [
        {
            "commitInfo": {
                "timestamp": now,
                "operation": "DELETE",
                "operationParameters": {"predicate": f"streaming-dq doctor: duplicate commits of {what}"},
                "clientVersion": CLIENT,
                "isBlindAppend": False,
            }
        }
    ]
    for add in files:
        actions.append(
            {
                "remove": {
                    "path": add["path"],
                    "deletionTimestamp": now,
                    "dataChange": True,
                    "extendedFileMetadata": True,
                    "partitionValues": add.get("partitionValues", {}),
                    "size": add.get("size"),
                }
            }
        )
    body = ("\n".join(json.dumps(a) for a in actions) + "\n").encode()
    store = object_store(target.uri, target.storage_options)
    for _ in range(20):
        table.update_incremental()
        current = {p.rsplit("/", 1)[-1] for p in table.file_uris()}
        gone = [a["path"] for a in files if a["path"].rsplit("/", 1)[-1] not in current]
        if gone:
            raise TargetWriteError(
                target.uri, None, f"{len(gone)} file(s) to remove are no longer in the table (a compaction?)"
            )
        try:
            obstore.put(store, f"_delta_log/{table.version() + 1:020d}.json", body, mode="create")
            return
        except AlreadyExistsError:  # another commit took that version: look again
            time.sleep(0.1)
    raise TargetWriteError(target.uri, None, "20 attempts to commit the repair lost to concurrent commits")
