"""What a schema object's properties say, as checks: ``required``, ``unique``, ``primaryKey``, ``logicalType``,
``logicalTypeOptions``, ``enum`` and foreign-key ``relationships`` (docs/contracts.md has the table).

Row-level (a row that breaks one is quarantined with the rule's id): required, unique and primary keys, the
value options of ``logicalTypeOptions``, ``enum``, foreign keys. Batch-level: the schema rule (every property a
column of its logical type; no other column unless ``extra-columns: allow``). Whatever a property says that is
a constraint and cannot be checked here is a :class:`MappedRule` without a check, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streaming_dq.config.odcs.rules import Add, ContractOptions, shown, sql_literal
from streaming_dq.core.sql import quote

__all__ = ["property_rules"]

#: ODCS logical type -> the schema check's type (a family: any size of integer, number, timestamp).
_TYPES = {
    "string": "string",
    "integer": "any-integer",
    "number": "any-number",
    "boolean": "boolean",
    "date": "date",
    "timestamp": "any-timestamp",
    "array": "array",
    "object": "struct",
    "map": "map",
    "vector": "array",
}
#: ``format`` of a string property -> the format check that judges it.
_FORMATS = {
    "email": "email-format-check",
    "uuid": "uuid-format-check",
    "ipv4": "ipv4-format-check",
    "ipv6": "ipv6-format-check",
    "uri": "url-format-check",
    "url": "url-format-check",
}


def property_rules(obj: Mapping[str, Any], where: str, options: ContractOptions, add: Add) -> None:
    """Map the properties of schema object ``obj`` (at ``where``) through ``add(kind, where, level, check,
    reason)``; ``add`` gives each check its id, severity and tags."""
    properties = [p for p in obj.get("properties") or [] if isinstance(p, Mapping)]
    expected: dict[str, str] = {}
    keys = sorted(
        (int(p.get("primaryKeyPosition") or 0), i, str(p.get("name") or ""))
        for i, p in enumerate(properties)
        if p.get("primaryKey") and p.get("name")
    )
    #: A one-column primary key's uniqueness is its ``unique`` (one rule, not two)
    single_key = keys[0][2] if len(keys) == 1 else None
    for i, prop in enumerate(properties):
        at = f"{where}.properties[{i}]"
        name = str(prop.get("name") or "")
        if not name:
            add("property", at, None, None, "a property without a name cannot be matched to a column")
            continue
        logical = prop.get("logicalType")
        if logical == "time":
            add(
                "logicalType", f"{at}.logicalType", None, None, "Spark has no time-of-day type to check it as"
            )
            expected[name] = "any"
        else:
            expected[name] = _TYPES.get(str(logical), "any") if logical else "any"
        if keys and keys[0][1] == i:  # the key's first column states the key: unique over all its columns
            columns = [n for _, _, n in keys]
            named = {"id": f"{obj.get('name') or 'object'}.primaryKey"} if len(columns) > 1 else None
            add("primaryKey", f"{at}.primaryKey", "row", _unique(columns, options, prop), None, named)
        if prop.get("required") or prop.get("primaryKey"):
            kind = "required" if prop.get("required") else "not-null"
            add(
                kind,
                f"{at}.required" if prop.get("required") else f"{at}.primaryKey",
                "row",
                {"check": "null-check", "columns": [name]},
                None,
            )
        if prop.get("unique") and name != single_key:
            add("unique", f"{at}.unique", "row", _unique([name], options, prop), None)
        _type_options(name, prop, at, add)
        if prop.get("enum"):
            values = [e.get("value") if isinstance(e, Mapping) else e for e in prop["enum"]]
            add(
                "enum",
                f"{at}.enum",
                "row",
                {
                    "check": "is-contained-in-check",
                    "allowed-values": {name: [v for v in values if v is not None]},
                },
                None,
            )
        for r, rel in enumerate(prop.get("relationships") or []):
            _foreign_key([name], rel, f"{at}.relationships[{r}]", options, add)
        for nested in ("properties", "items"):
            if prop.get(nested):
                add(
                    f"{nested} of {name}",
                    f"{at}.{nested}",
                    None,
                    None,
                    "rules on nested fields are not executed yet: only the column itself is checked",
                )
    if expected:
        add(
            "schema",
            f"{where}.properties",
            "batch",
            {"check": "schema-check", "expected-schema": expected, "strict": options.extra_columns == "fail"},
            None,
        )
    for r, rel in enumerate(obj.get("relationships") or []):
        origin = rel.get("from") if isinstance(rel, Mapping) else None
        sources: list[Any] = origin if isinstance(origin, list) else [origin] if origin else []
        listed = [str(c).split(".")[-1] for c in sources]
        _foreign_key(listed, rel, f"{where}.relationships[{r}]", options, add)


#: A property's custom property that asks for uniqueness across batches for that long of event time.
HORIZON_PROPERTY = "streaming-dq.unique-horizon"


def _unique(columns: list[str], options: ContractOptions, prop: Mapping[str, Any]) -> dict[str, Any]:
    """Unique in the batch, or across batches for the property's ``streaming-dq.unique-horizon`` custom property
    (e.g. ``7 days``), else the config's ``contract.unique-horizon``."""
    check: dict[str, Any] = {"check": "unique-key-check", "columns": columns}
    asked = [
        c.get("value") for c in prop.get("customProperties") or [] if c.get("property") == HORIZON_PROPERTY
    ]
    horizon = asked[0] if asked else options.unique_horizon
    if horizon is not None:
        check["horizon"] = horizon
    return check


def _type_options(name: str, prop: Mapping[str, Any], at: str, add: Add) -> None:
    """``logicalTypeOptions``: ranges, lengths, pattern, format, array sizes (each its own rule)."""
    opts = prop.get("logicalTypeOptions") or {}
    logical = str(prop.get("logicalType") or "")
    c = quote(name)
    for key, value in opts.items():
        where = f"{at}.logicalTypeOptions.{key}"
        kind = f"logicalTypeOptions.{key}"
        check: dict[str, Any] | None = None
        reason: str | None = None
        if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            check, reason = _bound(name, logical, key, value, opts)
        elif key == "minLength":
            check = {"check": "string-min-length-check", "column": name, "min-length": value}
        elif key == "maxLength":
            check = {"check": "string-max-length-check", "column": name, "max-length": value}
        elif key == "pattern":
            check = {"check": "regex-match-check", "column": name, "pattern": value}
        elif key == "format" and logical == "string":
            if str(value).lower() in _FORMATS:
                check = {"check": _FORMATS[str(value).lower()], "columns": [name]}
            else:
                reason = f"format {shown(value)} describes the text; no check judges it"
        elif key == "format":
            reason = f"format {shown(value)} is how a {logical or 'value'} is written as text; the column is checked as {logical or 'typed'} by the schema rule"
        elif key == "multipleOf":
            check = {"check": "expression-check", "expression": f"{c} % {sql_literal(value)} = 0"}
        elif key in ("minItems", "maxItems"):
            op = ">=" if key == "minItems" else "<="
            check = {"check": "expression-check", "expression": f"size({c}) {op} {int(value)}"}
        elif key == "uniqueItems" and value:
            check = {"check": "expression-check", "expression": f"size(array_distinct({c})) = size({c})"}
        elif key == "uniqueItems":
            continue
        else:
            reason = f"{key} of a {logical or 'property'} is not checked by this gate"
        if check is None and reason is None:
            continue
        add(kind, where, "row" if check else None, check, reason)


def _bound(
    name: str, logical: str, key: str, value: Any, opts: Mapping[str, Any]
) -> tuple[dict[str, Any] | None, str | None]:
    """A minimum/maximum (inclusive) or exclusiveMinimum/exclusiveMaximum (exclusive) as a range check. ODCS
    3.0 wrote the exclusive ones as booleans beside minimum/maximum: such a flag makes that bound exclusive and
    is no rule of its own ``(None, None)``."""
    lower = key in ("minimum", "exclusiveMinimum")
    flag = opts.get("exclusiveMinimum" if lower else "exclusiveMaximum")
    if isinstance(value, bool):
        plain = "minimum" if lower else "maximum"
        return (None, None) if plain in opts else (None, f"a 3.0-style flag without the {plain} it modifies")
    inclusive = key in ("minimum", "maximum") and flag is not True
    family = {"date": "date", "timestamp": "timestamp"}.get(logical, "numeric")
    if family == "numeric" and (isinstance(value, bool) or not isinstance(value, int | float)):
        return None, f"{shown(value)} is not a number"
    bound = "min" if lower else "max"
    return {
        "check": f"{family}-{bound}-check",
        "columns": [name],
        f"{bound}-value": value,
        "inclusive": inclusive,
    }, None


def _foreign_key(columns: list[str], rel: Any, where: str, options: ContractOptions, add: Add) -> None:
    """A ``foreignKey`` relationship as a row check against the reference dataset the config names for the
    referenced object (``contract.references``); other relationship types are not rules."""
    if not isinstance(rel, Mapping) or str(rel.get("type") or "foreignKey") != "foreignKey":
        return
    targets = rel.get("to")
    targets = targets if isinstance(targets, list) else [targets]
    if len(columns) != 1 or len(targets) != 1:
        add("foreignKey", where, None, None, "a composite foreign key is not executed yet (one column only)")
        return
    target = str(targets[0]).split("/")[-1]
    obj, _, column = target.rpartition(".")
    obj = obj.split(".")[-1]
    if not obj or obj not in options.references:
        add(
            "foreignKey",
            where,
            None,
            None,
            f"the config names no reference dataset for object {obj or target!r}: "
            f"add contract.references.{obj or 'OBJECT'}: <a reference-datasets name>",
        )
        return
    add(
        "foreignKey",
        where,
        "row",
        {
            "check": "foreign-key-row-check",
            "column": columns[0],
            "reference-dataset": options.references[obj],
            "reference-column": column,
        },
        None,
    )
