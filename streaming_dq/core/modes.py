"""Every named mode of the gate, declared once: the config models, the gate's arguments and the docs read these.

A mode is a ``Literal``; :func:`choice` checks a value against one at run time (a Python caller skips pydantic),
naming the config field in the error.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from streaming_dq.exceptions import ConfigError

__all__ = [
    "BATCH_COMMIT_ORDER",
    "RELEASE_COMMIT_ORDER",
    "AggregateFailurePolicy",
    "BandKind",
    "CloseWindows",
    "Dialect",
    "Direction",
    "DriftAction",
    "DriftPolicy",
    "FailOn",
    "FileFormat",
    "LateDataPolicy",
    "RouterName",
    "Routing",
    "Season",
    "SourceFormat",
    "TableRole",
    "TargetRole",
    "UnknownFields",
    "WriterName",
    "choice",
    "choices",
    "failing_severities",
]

#: Which Delta writer: delta-rs on the driver, Delta's Spark writer, or Spark's when the session loads Delta.
WriterName = Literal["auto", "delta-rs", "spark"]
#: A data contract's schema rule: whether a column the contract does not describe breaks it (docs/contracts.md).
ExtraColumns = Literal["fail", "allow"]
#: Where the rows are split: collected to the driver, kept on the executors, or chosen from the writer.
Routing = Literal["auto", "driver", "distributed"]
RouterName = Literal["driver", "distributed"]
#: The tables of a gate that take one commit per batch (the metrics table is the tracker's).
TargetRole = Literal["pass", "quarantine", "results"]
#: Every table a batch commits to: the row-level tables, the keys seen across batches, the metrics table.
TableRole = Literal["pass", "quarantine", "keys", "results", "metrics"]
#: The ONE order of a batch's commits (``sink/commit.py`` runs it, ``streaming-dq doctor`` checks it): the rows,
#: the keys the rows carried, the results (the batch-complete marker of the row-level tables), then LAST the
#: metrics table, so that a table later in the order never holds a batch an earlier one lacks.
BATCH_COMMIT_ORDER: tuple[TableRole, ...] = ("pass", "quarantine", "keys", "results", "metrics")
#: The order of a release's commits per chunk (``release/runner.py``): the rows marked in the quarantine table,
#: the released ones appended to the pass table, then the chunk's record in the results table.
RELEASE_COMMIT_ORDER: tuple[TableRole, ...] = ("quarantine", "pass", "results")
#: What a failed aggregate check does to its batch.
AggregateFailurePolicy = Literal["quarantine-batch", "stop"]
#: What a batch whose schema differs from the pass table's does.
DriftPolicy = Literal["merge", "quarantine", "stop"]
DriftAction = Literal["proceed", "merge", "quarantine", "stop"]
#: Which failed checks make ``run``, ``check`` and ``release`` exit 1: critical ones, warnings too, or none.
FailOn = Literal["critical", "warning", "never"]
#: What rows of an already judged event-time window do.
LateDataPolicy = Literal["count", "reopen"]
#: Whether the windows left open at the end of a finite input are judged.
CloseWindows = Literal["never", "at-end"]
#: The rule-file dialect: native, Databricks DQX, or told from the file.
Dialect = Literal["auto", "native", "dqx"]
#: What a JSON record's keys outside the declared schema do.
UnknownFields = Literal["ignore", "warn", "quarantine"]
FileFormat = Literal["json", "csv", "parquet", "orc", "text", "delta"]
SourceFormat = Literal["json", "csv", "parquet", "orc", "text", "delta", "kafka"]
#: Anomaly baselines: the band's kind, the season compared, the side judged.
BandKind = Literal["relative", "stddevs", "mad"]
Season = Literal["none", "daily", "weekly"]
Direction = Literal["both", "above", "below"]


def choices(mode: Any) -> tuple[str, ...]:
    """The values of a mode, in declaration order."""
    return tuple(get_args(mode))


def failing_severities(fail_on: FailOn) -> frozenset[str]:
    """The severities whose failed checks fail a command under ``fail_on``.

    Example:
        >>> sorted(failing_severities("warning")), sorted(failing_severities("never"))
        (['critical', 'warning'], [])
    """
    return {
        "critical": frozenset({"critical"}),
        "warning": frozenset({"critical", "warning"}),
        "never": frozenset(),
    }[fail_on]


def choice(value: Any, mode: Any, field_path: str) -> Any:
    """``value`` when it is one of ``mode``'s values.

    Raises:
        ConfigError: It is not, naming ``field_path`` and the allowed values.
    """
    allowed = choices(mode)
    if value not in allowed:
        raise ConfigError(f"{value!r} is not one of {', '.join(allowed)}", field_path=field_path)
    return value
