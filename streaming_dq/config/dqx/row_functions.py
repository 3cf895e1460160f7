"""Translators of DQX's row-level functions: each returns our check config for one rule's arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streaming_dq.config.dqx.arguments import (
    Arguments,
    Translator,
    expression_check,
    number_of,
    sql_of,
    with_message,
)
from streaming_dq.core.sql import quote
from streaming_dq.exceptions import ConfigError


def in_list_rule(a: Arguments, *, forbid: bool, null_fails: bool) -> dict[str, Any]:
    c = quote(a.column())
    values = a.need("forbidden" if forbid else "allowed")
    if not isinstance(values, list) or not values:
        raise ConfigError("expected a non-empty list", field_path=f"{a.where}.check.arguments")
    sensitive = a.get("case_sensitive", True)
    items = [sql_of(v) for v in values]
    subject = c if sensitive else f"lower({c})"
    listed = ", ".join(items if sensitive else [f"lower({x})" for x in items])
    test = f"{subject} {'NOT IN' if forbid else 'IN'} ({listed})"
    return expression_check(f"{c} IS NOT NULL AND {test}" if null_fails else f"{c} IS NULL OR {test}")


def equality_rule(a: Arguments, *, equal: bool) -> dict[str, Any]:
    column = a.column()
    value = a.need("value")
    abs_t, rel_t = a.get("abs_tolerance"), a.get("rel_tolerance")
    if abs_t or rel_t:
        c, v = quote(column), sql_of(value)
        diff = f"abs({c} - {v})"
        same = f"({diff} <= {float(abs_t or 0)!r} OR {diff} <= {float(rel_t or 0)!r} * greatest(abs({c}), abs({v})))"
        return expression_check(same if equal else f"NOT {same}")
    check = "equal-to-check" if equal else "not-equal-to-check"
    number = number_of(value)
    if number is not None:
        return {"check": check, "columns": [column], "value": number}
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == "'":
        return {"check": check, "columns": [column], "value": value[1:-1].replace("''", "'")}
    return {"check": check, "columns": [column], "expression": sql_of(value)}


def bound_rule(a: Arguments, name: str, relation: str) -> dict[str, Any]:
    check = "column-greater-than-check" if relation == ">=" else "column-less-than-check"
    return {"check": check, "column": a.column(), "limit": sql_of(a.need(name)), "inclusive": True}


def range_rule(a: Arguments, *, inside: bool) -> dict[str, Any]:
    column = a.column()
    low, high = a.need("min_limit"), a.need("max_limit")
    lo_n, hi_n = number_of(low), number_of(high)
    if lo_n is not None and hi_n is not None:
        check = "numeric-between-check" if inside else "numeric-not-between-check"
        incl_key = {"inclusive": [True, True]}
        return {"check": check, "columns": [column], "min-value": lo_n, "max-value": hi_n, **incl_key}
    c = quote(column)
    between = f"{c} >= {sql_of(low)} AND {c} <= {sql_of(high)}"
    return expression_check(between if inside else f"NOT ({between})")


def older_than_rule(a: Arguments, *, other: bool) -> dict[str, Any]:
    days = int(a.get("days", 0) if other else a.need("days"))
    negate = bool(a.get("negate", False))
    if other:
        c1, c2 = a.column("column1"), a.column("column2")
    else:
        a.refuse("curr_date", "curr_date is a Spark Column in DQX and cannot be given in YAML here")
        c1, c2 = a.column(), None
    if negate:  # DQX fails when the value IS at least `days` older
        ref = "current_date()" if c2 is None else f"to_date({quote(c2)})"
        return expression_check(f"to_date({quote(c1)}) >= date_sub({ref}, {days})")
    # DQX passes when date(value) < reference - days, i.e. ours with one day more (date <= reference - (days + 1))
    out: dict[str, Any] = {"check": "older-than-check", "columns": [c1], "days": days + 1}
    if c2 is not None:
        out["than-column"] = c2
    return out


def future_rule(a: Arguments, *, near: bool) -> dict[str, Any]:
    a.refuse("curr_timestamp", "curr_timestamp is a Spark Column in DQX and cannot be given in YAML here")
    offset = int(a.get("offset", 0))
    if near and offset <= 0:  # DQX's near future of 0 seconds is empty: the check never fails
        return expression_check("true")
    check = "not-in-near-future-check" if near else "not-in-future-check"
    return {"check": check, "columns": [a.column()], "offset": f"{offset} seconds"}


def date_rule(a: Arguments, *, with_time: bool) -> dict[str, Any]:
    column = a.column()
    fmt = a.get("timestamp_format" if with_time else "date_format")
    if fmt is None:  # DQX casts without a pattern
        return expression_check(f"{quote(column)} IS NULL OR try_to_timestamp({quote(column)}) IS NOT NULL")
    check = "timestamp-format-check" if with_time else "date-format-check"
    return {"check": check, "columns": [column], "format": fmt}


def string_case_rule(a: Arguments) -> dict[str, Any]:
    case = a.need("case")
    if case not in ("upper", "lower"):
        raise ConfigError(
            f"case {case!r} has no counterpart yet (string-case-check knows upper and lower)",
            field_path=f"{a.where}.check.arguments.case",
        )
    return {"check": "string-case-check", "columns": [a.column()], "case": case}


def empty_rule(a: Arguments, *, must_be_empty: bool, null_ok: bool) -> dict[str, Any]:
    column = a.column()
    trim = bool(a.get("trim_strings", False))
    if must_be_empty:
        c = quote(column)
        text = f"trim({c})" if trim else c
        return expression_check(
            f"{c} IS NULL OR {text} = ''" if null_ok else f"{c} IS NOT NULL AND {text} = ''"
        )
    check = "empty-check" if null_ok else "null-or-empty-check"
    return {"check": check, "columns": [column], "trim": trim}


def code_rule(check: str, standards: Mapping[str, str], default: str) -> Translator:
    def build(a: Arguments) -> dict[str, Any]:
        fmt = str(a.get("code_format", default)).lower()
        if fmt not in standards:
            raise ConfigError(
                f"code_format {fmt!r} has no counterpart yet (known: {', '.join(standards)})",
                field_path=f"{a.where}.check.arguments.code_format",
            )
        out = {"check": check, "columns": [a.column()], "ignore-case": not a.get("case_sensitive", True)}
        if standards[fmt]:
            out["standard"] = standards[fmt]
        return out

    return build


def subdivision_rule(a: Arguments) -> dict[str, Any]:
    a.refuse(
        "country_column", "country_column has no counterpart yet (subdivision-code-check takes one country)"
    )
    return {
        "check": "subdivision-code-check",
        "columns": [a.column()],
        "ignore-case": not a.get("case_sensitive", True),
    }


def uuid_rule(a: Arguments) -> dict[str, Any]:
    column = a.column()
    if a.get("strict", False):
        pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"
        return {"check": "regex-match-check", "column": column, "pattern": pattern}
    return {"check": "uuid-format-check", "columns": [column]}


def regex_rule(a: Arguments) -> dict[str, Any]:
    column, regex = a.column(), a.need("regex")
    name = "regex-not-match-check" if a.get("negate", False) else "regex-match-check"
    return {"check": name, "column": column, "pattern": regex}


def sql_expression_rule(a: Arguments) -> dict[str, Any]:
    expr = a.need("expression")
    if a.get("negate", False):  # DQX fails rows where the expression is TRUE
        return with_message(expression_check(f"NOT ({expr})"), a)
    return with_message(expression_check(expr), a)


def fresh_rule(a: Arguments) -> dict[str, Any]:
    column, minutes = a.column(), int(a.need("max_age_minutes"))
    base = a.get("base_timestamp")
    ref = "current_timestamp()" if base is None else sql_of(base)
    return expression_check(f"{quote(column)} >= {ref} - INTERVAL {minutes} MINUTES")
