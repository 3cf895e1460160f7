"""Open Data Contract Standard (ODCS v3) contracts run as the gate's checks (``contract:`` in a gate config).

:func:`read_contract` reads and validates a contract (:mod:`~streaming_dq.config.odcs.document`);
:func:`map_contract` turns the schema object the gate judges into :class:`MappedRule` s: each rule of the
contract with the check config it became (its id the rule's, its tags naming the contract, its version and the
rule), or the reason it is not executable. Nothing is dropped in silence: ``streaming-dq contract CONFIG``
prints every rule. Properties: :mod:`~streaming_dq.config.odcs.properties`; quality rules:
:mod:`~streaming_dq.config.odcs.quality`. docs/contracts.md says what maps to what.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from streaming_dq.config.odcs.document import SCHEMA_VERSIONS, Contract, read_contract
from streaming_dq.config.odcs.properties import property_rules
from streaming_dq.config.odcs.quality import quality_rules
from streaming_dq.config.odcs.rules import (
    ContractOptions,
    Level,
    MappedRule,
    RuleIds,
    severity_of,
    slug,
    tags_of,
)
from streaming_dq.core.severity import normalize_severity
from streaming_dq.exceptions import ConfigError

__all__ = [
    "SCHEMA_VERSIONS",
    "Contract",
    "ContractMapping",
    "ContractOptions",
    "MappedRule",
    "contract_checks",
    "map_contract",
    "read_contract",
]


@dataclass(frozen=True)
class ContractMapping:
    """What a contract's schema object became: every rule, executable or not, in the contract's order."""

    contract_id: str
    version: str
    schema_object: str
    source: str
    rules: list[MappedRule] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def checks(self) -> list[dict[str, Any]]:
        """The check configs of the executable rules (our format, ready for the check factory)."""
        return [r.check for r in self.rules if r.check is not None]

    def held_in(self, statuses: Mapping[str, str]) -> dict[str, Any]:
        """The executable rules that held, broke, or gave no verdict, from each check's status (``passed``,
        ``failed``, ``skipped``) by check id: what one batch or one `check` run says in contract terms."""
        ids = [r.rule_id for r in self.rules if r.executable]
        held = [i for i in ids if statuses.get(i) == "passed"]
        broken = [i for i in ids if statuses.get(i) == "failed"]
        unjudged = [i for i in ids if i not in held and i not in broken]
        return {"held": len(held), "rules": len(ids), "broken": broken, "not_judged": unjudged}

    def held_by_batch(self, rows: Sequence[Mapping[str, Any]], last: int) -> list[dict[str, Any]]:
        """What the results table says about the contract's rules in the ``last`` batches of ``rows`` (the gate's
        results rows): per batch, :meth:`held_in` (a window's rule gives no verdict until its window closes, one a
        profile turned off none either), so a catalog can show "v1.2.0: 17/19 rules held on batch 812"."""
        batches = sorted(
            {(r["validation_ts"], r["app_id"], r["batch_id"]) for r in rows if r.get("kind") == "batch"},
            key=lambda t: (t[0] is None, t[0]),
        )[-last:]
        out = []
        for _, app_id, batch_id in batches:
            mine = [r for r in rows if r.get("app_id") == app_id and r.get("batch_id") == batch_id]
            statuses = {r["check_id"]: r["status"] for r in mine if r.get("kind") in ("row", "aggregate")}
            out.append({"batch_id": batch_id, **self.held_in(statuses)})
        return out

    def line(self, held: Mapping[str, Any]) -> str:
        """``contract ID vVERSION: 17/19 rules held; broke: a, b; not judged: 1``."""
        version = f" v{self.version}" if self.version else ""
        broken = f"; broke: {', '.join(held['broken'])}" if held["broken"] else ""
        unjudged = f"; not judged: {len(held['not_judged'])}" if held["not_judged"] else ""
        return f"contract {self.contract_id}{version}: {held['held']}/{held['rules']} rules held{broken}{unjudged}"

    def summary(self) -> dict[str, Any]:
        """The contract in ``--json`` outputs: its id, version, object and each rule's mapping."""
        executable = [r for r in self.rules if r.executable]
        return {
            "id": self.contract_id,
            "version": self.version,
            "schema": self.schema_object,
            "file": self.source,
            "rules": len(self.rules),
            "executable": len(executable),
            "mapping": [r.as_dict() for r in self.rules],
            "notes": list(self.notes),
        }


def _schema_object(contract: Contract, name: str | None) -> tuple[int, Mapping[str, Any]]:
    objects = contract.schema_objects()
    names = [str(o.get("name")) for o in objects]
    if name is None:
        if len(objects) == 1:
            return 0, objects[0]
        reason = (
            "the contract has no schema object to judge"
            if not objects
            else f"the contract has {len(objects)} schema objects ({', '.join(names[:8])}): name one in contract.schema"
        )
        raise ConfigError(reason, source=contract.source, field_path="schema")
    if name not in names:
        from streaming_dq.core.suggest import did_you_mean

        raise ConfigError(
            f"the contract has no schema object {name!r}{did_you_mean(name, names)}",
            source=contract.source,
            field_path="schema",
        )
    index = names.index(name)
    return index, objects[index]


def map_contract(contract: Contract, options: ContractOptions | None = None) -> ContractMapping:
    """Map the judged schema object of ``contract`` (see the module docstring).

    Raises:
        ConfigError: the contract has several schema objects and ``options`` names none, or not one it has.
    """
    from streaming_dq.config.registry import CheckConfigRegistry
    from streaming_dq.core.base_config import BaseRowCheckConfig

    options = options or ContractOptions()
    index, obj = _schema_object(contract, options.schema_object)
    name = str(obj.get("name") or "")
    mapping = ContractMapping(
        contract.contract_id, contract.version, name, contract.source, notes=list(contract.notes)
    )
    ids = RuleIds()

    def add(
        kind: str,
        where: str,
        level: Level | None,
        check: dict[str, Any] | None,
        reason: str | None,
        rule: Mapping[str, Any] | None = None,
    ) -> None:
        rule = rule or {}
        subject = _subject(obj, where)
        given = rule.get("id") or (slug(str(rule["name"])) if rule.get("name") else None)
        derived = ".".join(p for p in (subject, _short(kind)) if p)
        if check is None:
            mapping.rules.append(MappedRule(ids.take(given, derived), where, kind, None, None, reason))
            return
        rule_id = ids.take(given or check.pop("check-id", None), derived)
        check = dict(check)
        check["check-id"] = rule_id
        default = normalize_severity(options.severity)
        check.setdefault("severity", severity_of(rule.get("severity"), default, mapping.notes, where).value)
        check["tags"] = [
            *check.get("tags", []),
            *tags_of(mapping.contract_id, mapping.version, rule_id, rule),
        ]
        if level is None:  # a custom rule: its check's own level
            try:
                level = (
                    "row"
                    if issubclass(CheckConfigRegistry.get(str(check["check"])), BaseRowCheckConfig)
                    else "batch"
                )
            except ConfigError:
                level = "batch"  # the factory names the unknown check when the rule is built
        if rule.get("schedule") or rule.get("scheduler"):
            mapping.notes.append(f"{where}: its schedule does not apply: the gate judges every micro-batch")
        mapping.rules.append(MappedRule(rule_id, where, kind, level, check))

    where = f"schema[{index}]"
    property_rules(obj, where, options, add)
    for i, prop in enumerate(obj.get("properties") or []):
        if isinstance(prop, Mapping) and prop.get("quality"):
            quality_rules(
                list(prop["quality"]), f"{where}.properties[{i}]", name, str(prop.get("name") or ""), add
            )
    if obj.get("quality"):
        quality_rules(list(obj["quality"]), where, name, None, add)
    return mapping


def _short(kind: str) -> str:
    """The part of a derived rule id that says what the rule is (``library nullValues`` -> ``nullValues``)."""
    words = kind.replace("logicalTypeOptions.", "").split()
    if words[0] == "library" and len(words) > 1:
        return words[1]
    return "nested" if len(words) > 1 and words[1] == "of" else words[0]


def _subject(obj: Mapping[str, Any], where: str) -> str:
    """The property a rule at ``where`` belongs to (its name), else the object's name."""
    marker = ".properties["
    if marker in where:
        i = int(where.split(marker, 1)[1].split("]", 1)[0])
        props = obj.get("properties") or []
        if i < len(props) and isinstance(props[i], Mapping):
            return str(props[i].get("name") or "")
    return str(obj.get("name") or "")


def contract_checks(
    path: str | Contract,
    options: ContractOptions,
    taken: Mapping[str, str],
    storage_options: Mapping[str, str] | None = None,
) -> tuple[ContractMapping | None, list[Any], list[ConfigError]]:
    """Read the contract at ``path`` (or take one read), map it and build its executable rules' checks
    through the factory.

    Args:
        taken: Check ids the config's own ``checks:`` hold -> where (a contract rule may not reuse one).
        storage_options: How to read a contract on an object store (the config's, in delta-rs's spelling).

    Returns:
        The mapping (None when the contract cannot be read or mapped), the built checks (``BuiltCheck``), and
        every problem, each naming the contract file and the rule's place in it.
    """
    from streaming_dq.config.building import BuiltCheck, build_one
    from streaming_dq.config.errors import ConfigErrors

    try:
        contract = path if isinstance(path, Contract) else read_contract(path, storage_options)
        mapping = map_contract(contract, options)
    except ConfigErrors as exc:
        return None, [], list(exc.errors)
    except ConfigError as exc:
        return None, [], [exc]
    built: list[BuiltCheck] = []
    problems: list[ConfigError] = []
    for n, rule in enumerate(mapping.rules):
        if rule.check is None:
            continue
        one, found = build_one(rule.check, rule.where, mapping.source)
        problems += found
        if one is not None and rule.rule_id in taken:
            reason = f"rule id {rule.rule_id!r} is also a check-id of the config ({taken[rule.rule_id]})"
            problems.append(ConfigError(reason, source=mapping.source, field_path=rule.where))
        elif one is not None:
            built.append(BuiltCheck(n, one.config, one.check, f"contract.{rule.where}"))
    return mapping, built, problems
