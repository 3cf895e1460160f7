"""A contract's ``quality`` rules (on the schema object and on each property) as checks.

Every quality rule judges the batch (its metric is over the batch's rows; a fail-level rule that fails
quarantines the batch, as every aggregate does):

* ``library`` metrics ``nullValues``, ``missingValues``, ``invalidValues`` and ``rowCount`` become a
  ``rows-where-check`` (a count in the batch's one pass, in rows or percent, every operator);
  ``duplicateValues`` (of a property, or of ``arguments.properties`` on the object) a ``sql-metric-check`` over
  the batch (non-NULL values minus distinct values; percent of the non-NULL values);
* ``sql``: the query's single value compared by the rule's operator, ``{object}`` (and ``FROM <the object's
  name>``) read as the batch, ``{property}`` as the property's column (``${...}`` too, as ODCS 3.0 wrote them);
* ``custom`` with ``engine: streaming-dq``: its ``implementation`` is one of our checks (YAML text or a mapping);
* ``text``, and ``custom`` of another engine: listed as not executable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from streaming_dq.config.odcs.rules import Add, comparator_of, shown, sql_literal
from streaming_dq.core.sql import quote

__all__ = ["quality_rules"]

#: ODCS 3.0's library rule names, as 3.1 calls them.
_RENAMED = {"duplicateCount": "duplicateValues", "validValues": "invalidValues", "nullCount": "nullValues"}
_METRICS = ("nullValues", "missingValues", "invalidValues", "duplicateValues", "rowCount")
#: What ``missingValues`` counts when the rule gives no ``arguments.missingValues``.
DEFAULT_MISSING: tuple[Any, ...] = (None, "")


def quality_rules(rules: list[Any], where: str, obj_name: str, prop: str | None, add: Add) -> None:
    """Map the quality rules ``rules`` (at ``where``; of property ``prop`` or, None, of the object) through
    ``add(kind, where, level, check, reason, rule)``."""
    for i, rule in enumerate(rules):
        at = f"{where}.quality[{i}]"
        if not isinstance(rule, Mapping):
            add("quality", at, None, None, "a quality rule must be a mapping", {})
            continue
        kind = str(rule.get("type") or ("library" if rule.get("metric") or rule.get("rule") else "text"))
        if kind == "library":
            _library(rule, at, prop, add)
        elif kind == "sql":
            _sql(rule, at, obj_name, prop, add)
        elif kind == "custom":
            _custom(rule, at, add)
        elif kind == "text":
            add("text", at, None, None, "a text rule is for people: not executable", rule)
        else:
            add(kind, at, None, None, f"unknown quality type {kind!r} (library, sql, custom or text)", rule)


def _library(rule: Mapping[str, Any], at: str, prop: str | None, add: Add) -> None:
    given = str(rule.get("metric") or rule.get("rule") or "")
    metric = _RENAMED.get(given, given)
    kind = f"library {metric}"
    if metric not in _METRICS:
        add(kind, at, None, None, f"unknown library metric {given!r} (one of {', '.join(_METRICS)})", rule)
        return
    args = rule.get("arguments") or {}
    unit = str(rule.get("unit") or "rows")
    if unit not in ("rows", "percent") or (metric == "rowCount" and unit != "rows"):
        add(kind, at, None, None, f"unit {unit!r} is not one this metric is counted in", rule)
        return
    comparison = comparator_of(rule)
    if comparison is None and given == "validValues":  # ODCS 3.0: no operator meant none may be invalid
        comparison = ("eq", 0)
    if comparison is None:
        add(kind, at, None, None, "the rule has no operator (mustBe, mustBeLessThan ...)", rule)
        return
    key, value = comparison
    if not _numeric(value):
        add(kind, at, None, None, f"{shown(value)} is not a number to compare a count with", rule)
        return
    if metric == "duplicateValues":
        columns = [prop] if prop else [str(c) for c in args.get("properties") or []]
        if not columns:
            add(kind, at, None, None, "duplicateValues of an object needs arguments.properties", rule)
            return
        add(kind, at, "batch", _duplicates(columns, unit, key, value, rule), None, rule)
        return
    if metric != "rowCount" and prop is None:
        add(kind, at, None, None, f"{metric} is a property's metric: put it under the property", rule)
        return
    where = _predicate(metric, quote(prop) if prop else "", args, rule)
    if isinstance(where, tuple):
        add(kind, at, None, None, where[0], rule)
        return
    check: dict[str, Any] = {"check": "rows-where-check", "unit": unit, key: value}
    if where:
        check["where"] = where
    add(kind, at, "batch", check, None, rule)


def _numeric(value: Any) -> bool:
    if isinstance(value, list):
        return len(value) == 2 and all(_numeric(v) for v in value)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _predicate(metric: str, c: str, args: Mapping[str, Any], rule: Mapping[str, Any]) -> str | tuple[str]:
    """The SQL predicate that picks the rows a metric counts ('' for rowCount; a 1-tuple: why it cannot)."""
    if metric == "rowCount":
        return ""
    if metric == "nullValues":
        return f"{c} IS NULL"
    if metric == "missingValues":
        values = list(args.get("missingValues", DEFAULT_MISSING))
        return _in(c, values, null_counts=None in values)
    valid = args.get("validValues", rule.get("validValues"))
    if valid is not None:
        kept = [v for v in valid if v is not None]
        listed = f"{c} IN ({', '.join(sql_literal(v) for v in kept)})" if kept else "false"
        return f"{c} IS NOT NULL AND NOT ({listed})"
    if args.get("pattern") is not None:
        return f"{c} IS NOT NULL AND NOT ({c} RLIKE {sql_literal(args['pattern'])})"
    return ("invalidValues needs arguments.validValues or arguments.pattern",)


def _in(c: str, values: list[Any], *, null_counts: bool) -> str:
    kept = [v for v in values if v is not None]
    parts = [f"{c} IS NULL"] if null_counts else []
    if kept:
        parts.append(f"{c} IN ({', '.join(sql_literal(v) for v in kept)})")
    return " OR ".join(parts) or "false"


def _judged(value_sql: str, key: str, value: Any, label: str) -> dict[str, Any]:
    """A sql-metric-check: the query's one value against the rule's operator (a boolean bound is 1 or 0)."""
    bound = [float(v) for v in value] if isinstance(value, list) else float(value)
    return {"check": "sql-metric-check", "query": value_sql, "label": label, key: bound}


def _duplicates(
    columns: list[str], unit: str, key: str, value: Any, rule: Mapping[str, Any]
) -> dict[str, Any]:
    cols = [quote(c) for c in columns]
    present = " AND ".join(f"{c} IS NOT NULL" for c in cols)
    counted = f"count_if({present})"
    dups = f"{counted} - count(DISTINCT {', '.join(cols)})"
    metric = (
        dups if unit == "rows" else f"CASE WHEN {counted} = 0 THEN 0D ELSE 100D * ({dups}) / {counted} END"
    )
    what = f"Duplicate values of {', '.join(columns)}" + (" (% of non-NULL)" if unit == "percent" else "")
    return _judged(f"SELECT {metric} FROM {{{{ input_view }}}}", key, value, what)


_OBJECT = re.compile(r"\$?\{object\}")
_PROPERTY = re.compile(r"\$?\{property\}")


def _sql(rule: Mapping[str, Any], at: str, obj_name: str, prop: str | None, add: Add) -> None:
    query = str(rule.get("query") or "").strip().rstrip(";")
    if not query:
        add("sql", at, None, None, "a sql rule needs a query", rule)
        return
    comparison = comparator_of(rule)
    if comparison is None:
        add("sql", at, None, None, "the rule has no operator (mustBe, mustBeLessThan ...)", rule)
        return
    if _PROPERTY.search(query) and prop is None:
        add("sql", at, None, None, "{property} in a rule of the object, not of a property", rule)
        return
    text = _OBJECT.sub("{{ input_view }}", query)
    if obj_name:  # a query that names its object as a table reads the batch too
        text = re.sub(
            rf"(?i)\b(from|join)\s+`?{re.escape(obj_name)}`?(?=\s|$|\))", r"\1 {{ input_view }}", text
        )
    if prop is not None:
        text = _PROPERTY.sub(lambda _: quote(prop), text)
    if "{{ input_view }}" not in text:
        add(
            "sql",
            at,
            None,
            None,
            f"the query reads no {{object}} (nor FROM {obj_name}): it would not judge the batch",
            rule,
        )
        return
    key, value = comparison
    if not (_numeric(value) or isinstance(value, bool)):
        add(
            "sql",
            at,
            None,
            None,
            f"{shown(value)} is not a number or boolean to compare the value with",
            rule,
        )
        return
    add("sql", at, "batch", _judged(text, key, value, "The contract's SQL value"), None, rule)


def _custom(rule: Mapping[str, Any], at: str, add: Add) -> None:
    engine = str(rule.get("engine") or "")
    if engine.lower() not in ("streaming-dq", "streaming_dq"):
        add(
            f"custom {engine}",
            at,
            None,
            None,
            f"engine {engine!r} is another tool's: not executable here",
            rule,
        )
        return
    body = rule.get("implementation")
    try:
        check = yaml.safe_load(body) if isinstance(body, str) else body
    except yaml.YAMLError as exc:
        add("custom streaming-dq", at, None, None, f"implementation is not YAML: {exc}", rule)
        return
    if not isinstance(check, Mapping) or "check" not in check:
        add(
            "custom streaming-dq",
            at,
            None,
            None,
            "implementation must be one check: {check: <name>, ...}",
            rule,
        )
        return
    add("custom streaming-dq", at, None, dict(check), None, rule)  # its level: its check's (row or not)
