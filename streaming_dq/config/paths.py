"""Before a job starts Spark: the paths it reads exist, and the paths it writes can be written.

A missing landing folder (what you get when you skip a job's ``generate.py``), a missing reference file, or a
table under a regular file or under ``/proc`` would otherwise fail deep inside Spark or delta-rs, after the
JVM started and, for some, after other tables were created. Each is one :class:`ConfigError` naming the file
and the field, before anything is written. Local paths (plain or ``file:``) are checked on the file system;
a table on an object store (``s3://`` ...) is asked once per bucket through delta-rs with its storage options
(a missing bucket, refused credentials, an endpoint that does not answer).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from streaming_dq.config.gate_config import GateConfig
from streaming_dq.exceptions import ConfigError
from streaming_dq.tables.catalog import catalog_name

__all__ = ["absolute_location", "local_path", "path_problems"]

_GLOB = frozenset("*?[{")


def local_path(location: str) -> Path | None:
    """The local path of ``location`` (a plain path or a ``file:`` URI); None for any other scheme."""
    parsed = urlparse(location)
    if parsed.scheme == "file":
        return Path(parsed.path)
    if parsed.scheme == "":
        return Path(location)
    return None


def absolute_location(location: str) -> str:
    """A local checkpoint path made absolute (a Connect server's batch worker runs in another directory); a
    URI as Spark names it (``s3://`` is S3A's ``s3a://``)."""
    from streaming_dq.tables.storage import spark_uri

    path = local_path(location)
    if path is None:
        return spark_uri(location)
    if urlparse(location).scheme == "file":
        return location
    return os.path.abspath(location)


def _readable_problem(location: str, what: str) -> str | None:
    path = local_path(location)
    if path is None or _GLOB & set(str(path)):
        return None
    if not path.exists():
        return f"{what} {path} does not exist"
    if not os.access(path, os.R_OK):
        return f"{what} {path} cannot be read"
    return None


def _writable_problem(location: str) -> str | None:
    """Why ``location`` cannot be a folder this job creates and writes (None when it can)."""
    path = local_path(location)
    if path is None:
        return None
    path = Path(os.path.abspath(path))
    if path.exists():
        return None if path.is_dir() else f"{path} is a file, not a folder"
    ancestor = path.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{path} cannot be created: {ancestor} is a file, not a folder"
    try:  # what the job will do, undone at once: permissions alone do not tell (root, /proc, read-only mounts)
        os.rmdir(tempfile.mkdtemp(prefix=".streaming-dq-probe-", dir=ancestor))
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        return f"{path} cannot be created in {ancestor}: {reason}"
    return None


def _store_problems(config: GateConfig) -> list[tuple[str, str | None]]:
    """The gate's tables on S3 whose commits would not be safe, then (when they are) the tables and Delta
    references on an object store that the store refuses (a missing bucket, refused credentials, no answer),
    each bucket asked once, with no secret in the reason."""
    from streaming_dq.tables.storage import refused_option, store_problem, unsafe_commit_problem

    roles = config.tables()
    places = [(f"targets.{role}", t.uri, dict(t.storage_options)) for role, t in roles.items()]
    places += [
        (f"reference-datasets.{name}.path", r.path, config.reference_storage_options(name))
        for name, r in config.reference_datasets.items()
        if r.format == "delta"
    ]
    if config.source.path is not None and not _GLOB & set(config.source.path):  # any format: one listing
        places.append(("source.path", config.source.path, config.source_storage_options()))
    places = [p for p in places if catalog_name(p[1]) is None]  # asked by name once Spark runs
    found: list[tuple[str, str | None]] = []
    for field, uri, options in places:
        if not field.startswith("targets."):  # the gate commits to its own tables only
            continue
        unsafe = unsafe_commit_problem(uri, options, os.environ)
        if unsafe is not None and all(reason != unsafe for _, reason in found):  # said once for all tables
            found.append((field, unsafe))
    asked: dict[tuple[str, str], str | None] = {}
    for field, uri, options in places:
        if local_path(uri) is not None or found:  # an unsafe commit mode is reason enough to stop
            continue
        bucket = (uri.split("://", 1)[-1].split("/", 1)[0], repr(sorted(options.items())))
        if bucket not in asked:  # one answer per bucket and options: the same refusal is not repeated
            asked[bucket] = problem = store_problem(uri, options)
            key = refused_option(problem, options) if problem else None
            if key is None:
                found.append((field, problem))
            else:  # a refused secret is the option's fault, not the table's (#42)
                found.append((f"{_options_field(config, field, key)}.{key}", f"{problem} ({field})"))
    return found


def _options_field(config: GateConfig, field: str, key: str) -> str:
    """The ``storage-options`` section that gives ``key`` to the location of ``field``: its own, else the
    gate-wide one."""
    if field.startswith("targets."):
        return "targets.storage-options" if key in config.targets.storage_options else "storage-options"
    if field.startswith("reference-datasets."):
        name = field.split(".")[1]
        own = config.reference_datasets[name].storage_options
        return f"reference-datasets.{name}.storage-options" if key in own else "storage-options"
    return "source.storage-options" if key in config.source.storage_options else "storage-options"


def path_problems(config: GateConfig) -> list[ConfigError]:
    """Every local path of ``config`` that the job could not read or write, one ConfigError each."""
    found: list[tuple[str, str | None]] = []
    source = config.source
    if source.path is not None:
        found.append(("source.path", _readable_problem(source.path, "the source folder")))
    for part, payload in (("value", source.value), ("key", source.key)):
        if payload is not None and payload.avro_schema_file is not None:
            found.append(
                (
                    f"source.{part}.avro-schema-file",
                    _readable_problem(payload.avro_schema_file, "the Avro schema"),
                )
            )
        if payload is not None and payload.proto_file is not None:
            found.append(
                (f"source.{part}.proto-file", _readable_problem(payload.proto_file, "the Protobuf schema"))
            )
    for name, reference in config.reference_datasets.items():
        found.append(
            (f"reference-datasets.{name}.path", _readable_problem(reference.path, "the reference data"))
        )
    found.append(("checkpoint", _writable_problem(config.checkpoint)))
    for key, table in config.targets.paths().items():
        found.append((f"targets.{key}", _writable_problem(table)))
    found += _store_problems(config)
    return [
        ConfigError(reason, source=config.source_file, field_path=field) for field, reason in found if reason
    ]
