"""What one contract rule became: :class:`MappedRule`, and the pieces every mapping shares (ids, severity, tags,
the comparison operators, SQL literals)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal, Protocol

from streaming_dq.core.modes import ExtraColumns
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import string_literal

__all__ = [
    "OPERATORS",
    "Add",
    "ContractOptions",
    "Level",
    "MappedRule",
    "RuleIds",
    "comparator_of",
    "sql_literal",
]

#: ``row``: a row that breaks the rule is quarantined; ``batch``: the rule judges the batch (a fail-level rule
#: that fails quarantines the batch, as every aggregate does); None: not executable (``reason`` says why).
Level = Literal["row", "batch"]

#: ODCS comparison operators and the comparator key each becomes (rows-where-check's and our metric checks').
OPERATORS = {
    "mustBe": "eq",
    "mustNotBe": "ne",
    "mustBeGreaterThan": "gt",
    "mustBeGreaterOrEqualTo": "ge",
    "mustBeLessThan": "lt",
    "mustBeLessOrEqualTo": "le",
    "mustBeBetween": "between",
    "mustNotBeBetween": "not-between",
}

#: ODCS severities are free text; these mean a failure (critical) or a warning. Any other is critical, noted.
_CRITICAL = {"error", "critical", "fatal", "blocker", "high", "major"}
_WARNING = {"warning", "warn", "info", "informational", "low", "minor", "medium"}


class Add(Protocol):
    """Records one rule: its kind, place, level and check (or the reason it has none); ``rule`` may name it."""

    def __call__(
        self,
        kind: str,
        where: str,
        level: Level | None,
        check: dict[str, Any] | None,
        reason: str | None,
        rule: Mapping[str, Any] | None = None,
    ) -> None: ...


@dataclass(frozen=True)
class ContractOptions:
    """What a gate config says about running its contract (``contract:``; docs/contracts.md)."""

    #: The schema object judged (its ``name``); None: the contract's only one.
    schema_object: str | None = None
    #: ``unique``/primary-key properties judged across batches for this long of event time (None: per batch).
    unique_horizon: timedelta | None = None
    #: ODCS object name -> the name of a ``reference-datasets`` entry holding its rows (foreign keys).
    references: Mapping[str, str] = field(default_factory=dict)
    #: Whether a column the contract does not describe breaks the schema rule (``fail``) or not (``allow``).
    extra_columns: ExtraColumns = "fail"
    #: The severity of the property rules (ODCS gives them none) and of quality rules without one.
    severity: Severity = Severity.CRITICAL


@dataclass(frozen=True)
class MappedRule:
    """One rule of the contract and what it became: a check config, or why it is not executable."""

    #: The rule's id as reported (the contract's ``id``, else ``name``, else derived: ``amount.minimum``).
    rule_id: str
    #: Where the rule is in the contract (``schema[0].properties[2].quality[0]``).
    where: str
    #: What the rule is (``required``, ``logicalTypeOptions.maximum``, ``library nullValues``, ``sql`` ...).
    kind: str
    level: Level | None
    check: dict[str, Any] | None = None
    reason: str | None = None

    @property
    def executable(self) -> bool:
        return self.check is not None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule_id, "where": self.where, "kind": self.kind}
        if self.check is not None:
            out.update(level=self.level, check=self.check["check"], check_id=self.check["check-id"])
        else:
            out.update(executable=False, reason=self.reason)
        return out


class RuleIds:
    """Unique check ids for a contract's rules: the rule's own ``id`` (or ``name``), else a derived one."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def take(self, given: Any, derived: str) -> str:
        base = str(given).strip() if given not in (None, "") else derived
        rule_id, n = base, 2
        while rule_id in self._used:
            rule_id, n = f"{base}-{n}", n + 1
        self._used.add(rule_id)
        return rule_id


def severity_of(value: Any, default: Severity, notes: list[str], where: str) -> Severity:
    """A rule's ``severity`` as ours (see :data:`_CRITICAL`, :data:`_WARNING`); ``default`` when absent."""
    if value in (None, ""):
        return default
    text = str(value).strip().lower()
    if text in _WARNING:
        return Severity.WARNING
    if text not in _CRITICAL:
        notes.append(f"{where}.severity: {value!r} is not a severity this gate knows: judged as critical")
    return Severity.CRITICAL


def tags_of(contract_id: str, version: str, rule_id: str, rule: Mapping[str, Any]) -> list[str]:
    """The tags a contract's check carries into results, metrics and the report."""
    tags = [f"contract={contract_id}", f"contract-rule={rule_id}"]
    if version:
        tags.insert(1, f"contract-version={version}")
    if rule.get("dimension"):
        tags.append(f"dimension={rule['dimension']}")
    tags += [str(t) for t in rule.get("tags") or []]
    return tags


def comparator_of(rule: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The one ODCS operator of a rule as ``(our comparator key, value)`` (None: the rule has none)."""
    for odcs, ours in OPERATORS.items():
        if odcs in rule:
            return ours, rule[odcs]
    return None


def sql_literal(value: Any) -> str:
    """A Python value from the contract as a Spark SQL literal (strings quoted and escaped)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return string_literal(str(value))


def slug(text: str) -> str:
    """A short id part from free text (a rule's ``name``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "rule"


def shown(value: Any) -> str:
    return json.dumps(value, default=str)
