"""The one error hierarchy of streaming_dq.

Every error the library raises on purpose derives from :class:`StreamingDQError` and also from the builtin it
refines, so ``except ValueError`` keeps working for callers that do not know this package. Errors carry the
data needed to act on them as attributes, not only in the message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class StreamingDQError(Exception):
    """Base class of every error raised by streaming_dq."""


class ConfigError(StreamingDQError, ValueError):
    """A configuration is invalid.

    Attributes:
        source: The file (or other origin) the config came from, when known.
        field_path: The dotted/indexed path of the offending field, e.g. ``checks[2].min-value``.
        reason: What is wrong, in plain words.
    """

    def __init__(self, reason: str, *, source: str | None = None, field_path: str | None = None) -> None:
        self.reason = reason
        self.source = source
        self.field_path = field_path
        where = ": ".join(p for p in (source, field_path) if p)
        super().__init__(f"{where}: {reason}" if where else reason)


class InvalidSeverityLevelError(ConfigError):
    """A severity is neither ``critical`` nor ``warning``."""


class MissingCheckTypeError(ConfigError):
    """A check config has no ``check`` key naming its type."""


class UnknownCheckTypeError(ConfigError):
    """A check config names a check type that is not registered."""


class DuplicateCheckIdError(ConfigError):
    """Two checks of one CheckSet share a ``check-id``."""

    def __init__(
        self,
        check_id: str,
        *,
        reason: str | None = None,
        source: str | None = None,
        field_path: str | None = None,
    ) -> None:
        self.check_id = check_id
        reason = reason or f"duplicate check-id {check_id!r}: check ids must be unique within a CheckSet"
        super().__init__(reason, source=source, field_path=field_path)


class MissingReferenceDatasetError(StreamingDQError, KeyError):
    """An integrity check asked for a reference dataset that was not supplied."""

    def __init__(self, name: str, available: Sequence[str] = ()) -> None:
        self.name = name
        self.available = tuple(available)
        super().__init__(
            f"reference dataset {name!r} was not supplied (available: {', '.join(self.available) or 'none'})"
        )

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class CheckEvaluationError(StreamingDQError, RuntimeError):
    """A check could not be evaluated (e.g. it references a column the data does not have)."""

    def __init__(self, check_id: str, reason: str) -> None:
        self.check_id = check_id
        self.reason = reason
        super().__init__(f"check {check_id!r}: {reason}")


class CriticalCheckFailedError(StreamingDQError, RuntimeError):
    """Raised by ``run_batch(..., raise_on_critical=True)`` when a fail-level check failed."""

    def __init__(self, report: Any) -> None:
        self.report = report
        super().__init__(f"critical data-quality checks failed\n{report}")


class GateFailedError(StreamingDQError, RuntimeError):
    """The gate stopped the stream on purpose (``on-aggregate-failure: stop`` or ``schema-drift: stop``).

    The batch is not committed, so Spark replays it once the cause is fixed.
    """

    def __init__(self, gate: str, batch_id: int, reason: str, result: Any = None) -> None:
        self.gate = gate
        self.batch_id = batch_id
        self.reason = reason
        self.result = result
        super().__init__(f"gate {gate!r} stopped at batch {batch_id}: {reason}")


class GateStoppedError(StreamingDQError, RuntimeError):
    """A batch the gate did not run (or stopped running) because its query is being stopped: nothing of it
    was committed, and the next run on the checkpoint replays it. Not a failure of the batch.

    Attributes:
        batch_id: The batch.
    """

    def __init__(self, gate: str, batch_id: int) -> None:
        self.batch_id = batch_id
        super().__init__(
            f"gate {gate!r}: batch {batch_id} not run: the query is stopping (the next run replays it)"
        )


class TargetWriteError(StreamingDQError, OSError):
    """Writing a batch to a Delta target failed; the batch fails so Spark replays it."""

    def __init__(self, table: str, batch_id: int | None, reason: str) -> None:
        self.table = table
        self.batch_id = batch_id
        self.reason = reason
        super().__init__(f"writing batch {batch_id} to {table}: {reason}")


class TransactionTakenError(TargetWriteError):
    """Another writer committed this ``(app id, version)`` to the table first: a second process with the same
    app id (the same checkpoint started twice) is writing the gate's tables. Nothing of this commit landed.

    Attributes:
        app_id: The app id of the commit.
        version: The version (batch id) it was to record.
        committed: The version the table records for ``app_id`` now (``>= version``).
    """

    def __init__(self, table: str, app_id: str, version: int, committed: int) -> None:
        self.app_id = app_id
        self.version = version
        self.committed = committed
        super().__init__(
            table,
            version,
            f"another writer committed version {committed} of app {app_id!r} first (a second job on the same "
            "checkpoint?): this commit was not made; see docs/runbook.md, 'A second job on one checkpoint'",
        )


class ExporterError(StreamingDQError, OSError):
    """The Prometheus endpoint could not be started (e.g. the port is taken) or a push failed.

    Attributes:
        host: The address it tried to bind or reach, when known.
        port: The port, when known.
    """

    def __init__(self, message: str, *, host: str | None = None, port: int | None = None) -> None:
        self.host = host
        self.port = port
        super().__init__(message)


class JarFetchError(StreamingDQError, RuntimeError):
    """Maven could not fetch a bundle of JVM artifacts (no ``mvn``, no network, an unknown artifact).

    Attributes:
        bundle_name: The bundle (``delta``, ``kafka`` ...).
        reason: What Maven said.
    """

    def __init__(self, bundle_name: str, reason: str) -> None:
        super().__init__(f"cannot fetch the {bundle_name} JARs: {reason}")
        self.bundle_name = bundle_name
        self.reason = reason


class LocalBrokerError(StreamingDQError, RuntimeError):
    """The local Kafka broker (:mod:`streaming_dq.devtools.local_kafka`) did not start: its log's tail says why."""


class LocalServerError(LocalBrokerError):
    """A local test server (the S3 server of :mod:`streaming_dq.devtools.local_s3`) did not start."""


class ConfigTypeError(ConfigError, TypeError):
    """A configuration value or an API argument has the wrong type (also a ``TypeError``)."""


class InternalError(StreamingDQError, RuntimeError):
    """An invariant of streaming_dq itself does not hold: a bug, or a metrics table written by something else.

    Please report it with the message; the batch fails, so Spark replays it once the cause is fixed.
    """


class UnsupportedSparkError(StreamingDQError, ImportError):
    """The pyspark beside the package is missing, outside the supported range, or lacks a feature asked for.

    Attributes:
        found: The pyspark version found (None: no pyspark).
        supported: The supported range, as pip writes it (``>=3.5,<4.4``).
    """

    def __init__(self, reason: str, *, found: str | None = None, supported: str | None = None) -> None:
        self.reason = reason
        self.found = found
        self.supported = supported
        super().__init__(reason)
