"""Reading an ODCS data contract: the file, its JSON Schema, the standard's own pydantic model.

A contract is read in three steps, each of which names the file and the field when it fails:

1. the YAML (or JSON) document, read with the same loader as a gate config (a key written twice is refused);
2. validated against the published ODCS JSON Schema of its ``apiVersion`` (the schemas are kept in
   ``schemas/``, see its README for where each comes from), every problem as ``FILE: path.to.field: reason``.
   A document that breaks its declared version's schema but holds under a later 3.x one is read as that later
   version, with a note saying so: the ODCS repository validates its own examples that way (all against its
   newest schema, whatever their ``apiVersion``), and three of them use 3.1 fields under ``v3.0.2``;
3. parsed into :class:`open_data_contract_standard.model.OpenDataContractStandard`, the model the
   ``open-data-contract-standard`` package keeps (the one datacontract-cli reads contracts with), not one of ours.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from streaming_dq.config.errors import ConfigErrors, format_loc
from streaming_dq.exceptions import ConfigError

__all__ = ["SCHEMA_VERSIONS", "Contract", "read_contract", "schema_problems"]

_SCHEMAS = Path(__file__).with_name("schemas")
#: The ODCS versions a contract may declare as its ``apiVersion`` (each with its published JSON Schema).
SCHEMA_VERSIONS = ("v3.0.0", "v3.0.1", "v3.0.2", "v3.1.0", "v3.2.0")
#: How much of an offending value an error shows.
_SHOWN = 60


@dataclass(frozen=True)
class Contract:
    """A contract as read: the file it came from, its raw mapping and the standard's model of it."""

    source: str
    raw: Mapping[str, Any]
    model: Any  # open_data_contract_standard.model.OpenDataContractStandard
    #: The ODCS version whose schema the document holds under (its ``apiVersion`` unless a note says otherwise).
    validated_as: str = ""
    notes: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return str(self.raw["apiVersion"])

    @property
    def contract_id(self) -> str:
        return str(self.raw.get("id") or self.raw.get("name") or Path(self.source).stem)

    @property
    def version(self) -> str:
        return str(self.raw.get("version") or "")

    def schema_objects(self) -> list[Mapping[str, Any]]:
        objects = self.raw.get("schema") or []
        return [o for o in objects if isinstance(o, Mapping)]


@cache
def _schema(version: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((_SCHEMAS / f"odcs-json-schema-{version}.json").read_text("utf-8"))
    return loaded


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


#: A quality rule's comparison operators: exactly one per rule (the schema's ``oneOf``).
_OPERATORS = ("mustBe", "mustNotBe", "mustBeGreaterThan", "mustBeGreaterOrEqualTo", "mustBeLessThan",
              "mustBeLessOrEqualTo", "mustBeBetween", "mustNotBeBetween")  # fmt: skip


def _reason(error: Any) -> str:
    """One line for a JSON Schema error: the deepest cause of a ``oneOf``/``anyOf`` that failed, shortened."""
    from jsonschema.exceptions import best_match

    if isinstance(error.instance, Mapping):
        given = [k for k in _OPERATORS if k in error.instance]
        if len(given) > 1:
            return f"a rule takes one operator, not {len(given)} ({', '.join(given)})"
    if error.context:
        error = best_match(error.context)
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        message = str(error.message)
        keys = message.split(" (", 1)[1].rsplit(" w", 1)[0] if " (" in message else ""
        return f"unknown properties {keys}".strip() + " (not in the standard)"
    if error.validator in ("enum", "const", "type", "required", "minItems", "maxItems", "minimum", "pattern"):
        message = str(error.message)
        value = _shown(error.instance)
        return message.replace(json.dumps(error.instance, default=str), value).replace(
            repr(error.instance), value
        )
    return f"{_shown(error.instance)} does not satisfy the schema's {error.validator!r} rule"


def schema_problems(raw: Mapping[str, Any], source: str, version: str | None = None) -> list[ConfigError]:
    """Every way ``raw`` breaks the ODCS JSON Schema of ``version`` (by default its ``apiVersion``; empty: it
    is a valid contract)."""
    from jsonschema import Draft201909Validator

    version = version or raw.get("apiVersion")
    if version not in SCHEMA_VERSIONS:
        hint = " (ODCS 2.x is a different format: migrate it to 3.x)" if str(version).startswith("v2") else ""
        reason = f"apiVersion {version!r} is not one this gate reads: {', '.join(SCHEMA_VERSIONS)}{hint}"
        return [ConfigError(reason, source=source, field_path="apiVersion")]
    validator = Draft201909Validator(_schema(str(version)))
    found = sorted(validator.iter_errors(raw), key=lambda e: [str(p) for p in e.absolute_path])
    # properties a failed alternative would have read are "unevaluated" too: the failure says it already
    failed_at = {tuple(e.absolute_path) for e in found if e.validator != "unevaluatedProperties"}
    errors: Iterable[Any] = [
        e for e in found if e.validator != "unevaluatedProperties" or tuple(e.absolute_path) not in failed_at
    ]
    problems: dict[tuple[str, str], ConfigError] = {}
    for e in errors:  # one line per field and reason (two alternatives can fail the same way)
        where, reason = format_loc(list(e.absolute_path)), _reason(e)
        problems.setdefault((where, reason), ConfigError(reason, source=source, field_path=where or None))
    return list(problems.values())


def _read(path: str, storage_options: Mapping[str, str]) -> Any:
    """The YAML document at ``path``: a local file, or an object on a store (``s3://``, ``abfss://``, ``gs://``
    ...) read with the config's storage options."""
    from streaming_dq.config.yaml_reader import parse_yaml, read_yaml
    from streaming_dq.tables.targets import is_local_uri

    if is_local_uri(path):
        return read_yaml(path.removeprefix("file://"))
    import obstore
    from obstore.exceptions import BaseError

    from streaming_dq.exceptions import StreamingDQError
    from streaming_dq.tables.objects import object_store
    from streaming_dq.tables.storage import mask

    folder, _, name = path.rpartition("/")
    try:
        data = bytes(obstore.get(object_store(folder, storage_options), name).bytes())
    except (StreamingDQError, BaseError, OSError) as exc:  # the store refused, or the path is not there
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"cannot read the contract: {mask(first, storage_options)}", source=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read the contract: {exc}", source=path) from None
    return parse_yaml(text, path)


def read_contract(path: str | Path, storage_options: Mapping[str, str] | None = None) -> Contract:
    """Read, validate and parse the contract at ``path`` (a file, or an object-store URL read with
    ``storage_options``; see the module docstring).

    Raises:
        ConfigError: one problem (the file, the field, the reason).
        ConfigErrors: several.
    """
    from open_data_contract_standard.model import OpenDataContractStandard
    from pydantic import ValidationError

    source = str(path)
    raw = _read(source, storage_options or {})
    if not isinstance(raw, Mapping):
        raise ConfigError(
            "an ODCS contract is a mapping with apiVersion, kind, id, schema ...", source=source
        )
    problems = schema_problems(raw, source)
    validated_as, notes = str(raw.get("apiVersion")), []
    if problems and validated_as in SCHEMA_VERSIONS:
        for later in SCHEMA_VERSIONS[SCHEMA_VERSIONS.index(validated_as) + 1 :]:
            if not schema_problems(raw, source, later):
                fields = ", ".join(sorted({p.field_path or "(top)" for p in problems}))
                notes.append(
                    f"declares apiVersion {validated_as} but holds only under the {later} schema "
                    f"({fields}): read as {later}"
                )
                problems, validated_as = [], later
                break
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise ConfigErrors(problems, source=source)
    try:
        model = OpenDataContractStandard.model_validate(dict(raw))
    except ValidationError as exc:  # the schema allowed it and the standard's model did not
        first = exc.errors()[0]
        raise ConfigError(
            f"the ODCS model refuses it: {first['msg']}",
            source=source,
            field_path=format_loc(first["loc"]) or None,
        ) from None
    return Contract(source, raw, model, validated_as, tuple(notes))
