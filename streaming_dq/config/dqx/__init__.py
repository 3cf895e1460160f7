"""Databricks Labs DQX's rule format, loaded unchanged and translated into this catalog's checks.

A DQX rule is ``{criticality: error | warn, name?, filter?, user_metadata?, check: {function, arguments |
for_each_column}}``. :func:`translate` turns a list of them into our check configs: ``criticality: error``
becomes ``severity: critical`` (a fail level by default), ``warn`` becomes ``warning``; ``filter`` the check's
``filter`` (a dataset check's row filter); ``user_metadata`` tags ``key=value`` (kept, never dropped);
``for_each_column`` one check per column. Each DQX function maps onto one of our checks (:data:`FUNCTIONS`);
where the two differ in an edge case the mapping says so (:attr:`Translation.notes`), and a function without
a counterpart yet is a config error naming the rule, as is an unknown function (with close matches) or an
argument DQX does not have.

DQX reads a string limit as SQL (``"col_b"``, ``"col_b * 2"``), a digit string as a number and an ISO date
string as a date; a quoted string (``"'paid'"``) is a string literal. The translation keeps that reading.

docs/migrating-from-dqx.md lists every function, our check and what differs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from streaming_dq.config.dqx.arguments import Arguments, sql_of
from streaming_dq.config.dqx.functions import FUNCTIONS, UNSUPPORTED
from streaming_dq.config.errors import ConfigErrors
from streaming_dq.core.suggest import did_you_mean
from streaming_dq.exceptions import ConfigError

__all__ = ["FUNCTIONS", "UNSUPPORTED", "Translation", "is_dqx_rule", "is_dqx_rules", "sql_of", "translate"]


@dataclass
class Translation:
    """Our check configs, each with the index of the DQX rule it came from, and the notes on approximations."""

    checks: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def is_dqx_rule(raw: Any) -> bool:
    """A DQX rule: a mapping with ``criticality``, or whose ``check`` is a mapping naming a ``function``."""
    return isinstance(raw, Mapping) and (
        "criticality" in raw or (isinstance(raw.get("check"), Mapping) and "function" in raw["check"])
    )


def is_dqx_rules(raws: Sequence[Any]) -> bool:
    """Whether a list of checks is in DQX's format (every item, or none: a mix is refused).

    Raises:
        ConfigError: some items are DQX rules and others are not.
    """
    marks = [is_dqx_rule(r) for r in raws]
    if any(marks) and not all(marks):
        first_native = marks.index(False)
        raise ConfigError(
            "this list mixes DQX rules (check: {function: ...}) with streaming_dq checks (check: name); "
            "use one dialect per file",
            field_path=f"checks[{first_native}]",
        )
    return bool(marks) and all(marks)


_CRITICALITY = {"error": "critical", "warn": "warning"}


_RULE_KEYS = ("criticality", "name", "filter", "user_metadata", "check")


_CHECK_KEYS = ("function", "arguments", "for_each_column")


def translate(raws: Sequence[Any], *, prefix: str = "checks") -> Translation:
    """Translate DQX rules into our check configs (see the module docstring).

    Every rule is tried: the ones that translate are kept, and each one that does not gives one problem.

    Raises:
        ConfigError: one rule cannot be translated (field path ``checks[i].check.function`` ...).
        ConfigErrors: several cannot, one error each, in the file's order.
    """
    out = Translation()
    used: set[str] = set()
    problems: list[ConfigError] = []
    for i, raw in enumerate(raws):
        try:
            _translate_rule(raw, i, f"{prefix}[{i}]", used, out)
        except ConfigError as exc:
            problems.append(exc)
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise ConfigErrors(problems)
    return out


def _translate_rule(raw: Any, i: int, where: str, used: set[str], out: Translation) -> None:
    """Append the check configs of the DQX rule ``raw`` (item ``i``) and its note to ``out``."""
    if not isinstance(raw, Mapping):
        raise ConfigError("a DQX rule must be a mapping", field_path=where)
    for key in raw:
        if key not in _RULE_KEYS:
            raise ConfigError(
                f"unknown key {key!r} of a DQX rule{did_you_mean(str(key), _RULE_KEYS)}",
                field_path=f"{where}.{key}",
            )
    check = raw.get("check")
    if not isinstance(check, Mapping) or "function" not in check:
        raise ConfigError("a DQX rule needs check: {function: ...}", field_path=f"{where}.check")
    for key in check:
        if key not in _CHECK_KEYS:
            raise ConfigError(
                f"unknown key {key!r}{did_you_mean(str(key), _CHECK_KEYS)}",
                field_path=f"{where}.check.{key}",
            )
    function = str(check["function"])
    mapping = FUNCTIONS.get(function)
    if mapping is None:
        if function in UNSUPPORTED:
            raise ConfigError(
                f"DQX function {function!r}: {UNSUPPORTED[function]}",
                field_path=f"{where}.check.function",
            )
        raise ConfigError(
            f"unknown DQX function {function!r}{did_you_mean(function, [*FUNCTIONS, *UNSUPPORTED])}",
            field_path=f"{where}.check.function",
        )
    criticality = str(raw.get("criticality", "error")).lower()
    if criticality not in _CRITICALITY:
        raise ConfigError(
            f"criticality must be error or warn, not {criticality!r}", field_path=f"{where}.criticality"
        )
    arguments = dict(check.get("arguments") or {})
    expansions: list[dict[str, Any]] = [arguments]
    if check.get("for_each_column") is not None:
        columns = check["for_each_column"]
        if not isinstance(columns, list) or not columns:
            raise ConfigError(
                "for_each_column must be a non-empty list", field_path=f"{where}.check.for_each_column"
            )
        key = "columns" if "columns" in mapping.arguments else "column"
        expansions = [{**arguments, key: c} for c in columns]
    built_rules = []
    for n, args in enumerate(expansions):
        built = mapping.build(Arguments(args, where, mapping.arguments))
        built["severity"] = _CRITICALITY[criticality]
        if raw.get("filter"):
            if built["check"] == "aggregate-check":
                built["row-filter"] = raw["filter"]
            else:
                built["filter"] = raw["filter"]
        if raw.get("user_metadata"):
            meta = raw["user_metadata"]
            if not isinstance(meta, Mapping):
                raise ConfigError("user_metadata must be a mapping", field_path=f"{where}.user_metadata")
            built["tags"] = [f"{k}={v}" for k, v in meta.items()]
        built["check-id"] = _check_id(raw.get("name"), function, args, n, len(expansions), used)
        built_rules.append((i, built))
    out.checks.extend(built_rules)  # a rule that fails half-way adds nothing
    if mapping.note:
        out.notes.append(f"{where} ({function} -> {mapping.ours}): {mapping.note}")


def _check_id(name: Any, function: str, args: Mapping[str, Any], n: int, of: int, used: set[str]) -> str:
    """The rule's name (with the column when it expands), else ``function_column``; unique within the file."""
    subject = args.get("column") or args.get("column1") or args.get("columns") or args.get("expression") or ""
    if isinstance(subject, list):
        subject = "_".join(str(s) for s in subject)
    subject = re.sub(r"[^A-Za-z0-9_]+", "_", str(subject)).strip("_")
    base = str(name) if name else "_".join(p for p in (function, subject) if p)
    if name and of > 1:
        base = f"{name}_{subject or n}"
    check_id, k = base, 2
    while check_id in used:
        check_id, k = f"{base}_{k}", k + 1
    used.add(check_id)
    return check_id
