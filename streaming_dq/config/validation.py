"""Validating the parts of a gate config and reporting every problem, each with its YAML field path.

* :func:`cross_problems`: what ties the sections together (columns in the source schema, reference datasets,
  profile selectors, event time, distinct targets).
"""

from __future__ import annotations

from collections.abc import Mapping

from streaming_dq.checks.unknown_fields import UNKNOWN_FIELDS_CHECK_ID
from streaming_dq.compat.artifacts import delta_refusal
from streaming_dq.compat.versions import missing
from streaming_dq.config.building import BuiltCheck
from streaming_dq.config.fields import TIME_TYPES
from streaming_dq.config.gate_config import GateConfig
from streaming_dq.core.column_types import column_type_problems
from streaming_dq.exceptions import ConfigError
from streaming_dq.profiles.selectors import CheckTarget

__all__ = ["cross_problems"]


# --- what ties the sections together -------------------------------------------------------------------------

_COLUMN_FIELDS = ("column", "columns", "subset_columns", "allowed_values", "than_column", "group_by")


def _column_refs(built: BuiltCheck) -> list[tuple[str, str]]:
    """``(field path inside the check, column)`` for every source column a check's parameters name."""
    refs = []
    fields = type(built.config).model_fields
    for name in _COLUMN_FIELDS:
        if name not in fields:
            continue
        if name == "column" and getattr(built.check, "column", "") is None:
            continue  # the check reads no column by it ('*' for count, count-if's predicate)
        key, value = fields[name].alias or name, getattr(built.config, name)
        if isinstance(value, str):
            refs.append((key, value))
        elif isinstance(value, Mapping):
            refs += [(f"{key}.{column}", str(column)) for column in value]
        elif isinstance(value, list | tuple):
            refs += [(f"{key}[{i}]", c) for i, c in enumerate(value) if isinstance(c, str)]
    return refs


def _unknown_fields_problems(config: GateConfig, built: list[BuiltCheck]) -> list[tuple[str, str]]:
    source, problems = config.source, []
    why_not = source.unknown_fields_detection()
    if why_not is not None and "unknown_fields" in source.model_fields_set:
        problems.append(
            ("source.unknown-fields", f"{why_not}: undeclared fields cannot be detected; use ignore")
        )
    if not source.detects_unknown_fields:
        return problems
    if source.unknown_fields_column in (source.columns() or {}):
        problems.append(
            ("source.unknown-fields-column", f"column {source.unknown_fields_column!r} is in source.schema")
        )
    problems += [
        (
            f"{b.place}.check-id",
            f"{UNKNOWN_FIELDS_CHECK_ID!r} is the built-in check on undeclared fields",
        )
        for b in built
        if b.check.check_id == UNKNOWN_FIELDS_CHECK_ID
    ]
    return problems


def cross_problems(
    config: GateConfig, built: list[BuiltCheck], source: str | None, *, all_built: bool
) -> list[ConfigError]:
    """Problems between sections: columns, reference datasets, profile selectors, event time, targets."""
    problems: list[tuple[str, str]] = []
    columns = config.source.columns()
    if config.source.format in ("json", "csv") and columns is None:
        problems.append(("source.schema", f"a {config.source.format} stream needs a schema (Spark DDL)"))
    event_time = config.gate.event_time
    if config.profiles and event_time is None:
        problems.append(("profiles", "profiles are chosen from each row's event time: set gate.event-time"))
    problems += _unknown_fields_problems(config, built)
    if columns is not None:
        known = {**columns, config.source.malformed_column: "string"}
        if config.source.detects_unknown_fields:
            known[config.source.unknown_fields_column] = "string"
        if event_time is not None and event_time not in known:
            problems.append(("gate.event-time", f"column {event_time!r} is not in source.schema"))
        elif event_time is not None and known[event_time] not in TIME_TYPES:
            problems.append(
                ("gate.event-time", f"column {event_time!r} is {known[event_time]}, not a timestamp")
            )
        for b in built:
            problems += [
                (f"{b.place}.{path}", f"column {column!r} is not in source.schema")
                for path, column in _column_refs(b)
                if column not in known
            ]
            problems += [
                (f"{b.place}.{path}", f"{reason} (source.schema)")
                for _, path, reason in column_type_problems([b.check], known, missing=False)
            ]
    for b in built:
        if getattr(b.check, "scope", None) is not None and event_time is None:
            problems.append((f"{b.place}.scope", "a window-scoped check needs gate.event-time"))
        name = getattr(b.config, "reference_dataset", None)
        if isinstance(name, str) and name not in config.reference_datasets:
            available = ", ".join(config.reference_datasets) or "none configured"
            reason = f"reference dataset {name!r} is not in reference-datasets ({available})"
            problems.append((f"{b.place}.reference-dataset", reason))
    if all_built:
        targets = [CheckTarget.from_check(b.check) for b in built]
        for p, profile in enumerate(config.profiles):
            for r, rule in enumerate(profile.rules):
                if not any(rule.to_rule().selector.matches(t) for t in targets):
                    problems.append((f"profiles[{p}].rules[{r}].select", "selects no configured check"))
    if config.targets.writer == "spark" and (refused := delta_refusal()) is not None:
        problems.append(("targets.writer", refused))
    on_s3 = [key for key, path in config.targets.paths().items() if path.startswith(("s3://", "s3a://"))]
    if config.targets.writer == "spark" and on_s3:
        what = f"writer: spark with a table on S3 (targets.{on_s3[0]})"
        if (refused := missing("s3a_conditional_create", what=what)) is not None:
            problems.append(
                ("targets.writer", f"{refused}: use writer: delta-rs, which commits there itself")
            )
    if config.source.format == "delta" and (
        refused := delta_refusal(what="a Delta source", instead="stream the table's files (format: parquet)")
    ):
        problems.append(("source.format", refused))
    paths: dict[str, str] = {}
    for key, path in config.targets.paths().items():
        if path in paths:
            problems.append((f"targets.{key}", f"same table as targets.{paths[path]}"))
        paths.setdefault(path, key)
    return [ConfigError(reason, source=source, field_path=path) for path, reason in problems]
