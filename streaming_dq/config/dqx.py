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

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from streaming_dq.config.errors import ConfigErrors
from streaming_dq.core.sql import quote
from streaming_dq.core.suggest import did_you_mean
from streaming_dq.exceptions import ConfigError

__all__ = ["FUNCTIONS", "UNSUPPORTED", "Translation", "is_dqx_rules", "translate"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class Translation:
    """Our check configs, each with the index of the DQX rule it came from, and the notes on approximations."""

    checks: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Args:
    """One rule's arguments: read with defaults, every argument accounted for (an unknown one is an error)."""

    def __init__(self, raw: Mapping[str, Any], where: str, allowed: Sequence[str]) -> None:
        self.raw = dict(raw)
        self.where = where
        unknown = [k for k in self.raw if k not in allowed]
        if unknown:
            raise ConfigError(
                f"unknown argument {unknown[0]!r} of this DQX function{did_you_mean(unknown[0], allowed)}",
                field_path=f"{where}.check.arguments.{unknown[0]}",
            )

    def get(self, name: str, default: Any = None) -> Any:
        return self.raw.get(name, default)

    def need(self, name: str) -> Any:
        if self.raw.get(name) is None:
            raise ConfigError(f"missing argument {name!r}", field_path=f"{self.where}.check.arguments.{name}")
        return self.raw[name]

    def column(self, name: str = "column") -> str:
        value = self.need(name)
        if not isinstance(value, str) or not _IDENT.match(value):
            raise ConfigError(
                f"{value!r} is not a plain column name: our checks take column names (a nested field or an "
                "expression needs sql_expression)",
                field_path=f"{self.where}.check.arguments.{name}",
            )
        return value

    def columns(self, name: str = "columns") -> list[str]:
        value = self.need(name)
        if not isinstance(value, list) or not value:
            raise ConfigError(
                "expected a list of column names", field_path=f"{self.where}.check.arguments.{name}"
            )
        for i, c in enumerate(value):
            if not isinstance(c, str) or not _IDENT.match(c):
                raise ConfigError(
                    f"{c!r} is not a plain column name",
                    field_path=f"{self.where}.check.arguments.{name}[{i}]",
                )
        return list(value)

    def refuse(self, name: str, why: str) -> None:
        if self.raw.get(name) not in (None, False):
            raise ConfigError(why, field_path=f"{self.where}.check.arguments.{name}")


def _gaps(a: _Args) -> dict[str, Any]:
    a.refuse("curr_timestamp", "curr_timestamp is a Spark Column in DQX and cannot be given in YAML here")
    out: dict[str, Any] = {
        "check": "window-gaps-check",
        "column": a.column(),
        "window": f"{int(a.need('window_minutes'))} minutes",
        "trailing": bool(a.get("trailing_gap", False)),
    }
    if a.get("group_by"):
        out["group-by"] = a.columns("group_by")
    return out


def sql_of(value: Any) -> str:
    """A DQX limit as SQL text, read as DQX reads it (a plain string is SQL, a digit string a number ...)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | Decimal):
        return repr(value) if not isinstance(value, Decimal) else str(value)
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP'{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE'{value.isoformat()}'"
    if isinstance(value, str):
        if value.isdigit():
            return value
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
        return (
            f"TIMESTAMP'{parsed.isoformat(sep=' ')}'"
            if ":" in value
            else f"DATE'{parsed.date().isoformat()}'"
        )
    raise ConfigError(f"cannot read {value!r} as a value or SQL expression")


def _number(value: Any) -> int | float | None:
    """``value`` as a number when DQX would read it as one, else None (an expression, a date)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


Translator = Callable[[_Args], dict[str, Any]]


@dataclass(frozen=True)
class Mapping_:
    """How one DQX function becomes one of our checks."""

    arguments: tuple[str, ...]
    build: Translator
    #: What differs, said at load time; None when the mapping is exact.
    note: str | None = None
    #: Our check (for the migration table).
    ours: str = ""
    #: Dataset-level in DQX (its ``filter`` is a row filter).
    dataset: bool = False


def _expression(expr: str) -> dict[str, Any]:
    return {"check": "expression-check", "expression": expr}


def _in_list(a: _Args, *, forbid: bool, null_fails: bool) -> dict[str, Any]:
    c = quote(a.column())
    values = a.need("forbidden" if forbid else "allowed")
    if not isinstance(values, list) or not values:
        raise ConfigError("expected a non-empty list", field_path=f"{a.where}.check.arguments")
    sensitive = a.get("case_sensitive", True)
    items = [sql_of(v) for v in values]
    subject = c if sensitive else f"lower({c})"
    listed = ", ".join(items if sensitive else [f"lower({x})" for x in items])
    test = f"{subject} {'NOT IN' if forbid else 'IN'} ({listed})"
    return _expression(f"{c} IS NOT NULL AND {test}" if null_fails else f"{c} IS NULL OR {test}")


def _equality(a: _Args, *, equal: bool) -> dict[str, Any]:
    column = a.column()
    value = a.need("value")
    abs_t, rel_t = a.get("abs_tolerance"), a.get("rel_tolerance")
    if abs_t or rel_t:
        c, v = quote(column), sql_of(value)
        diff = f"abs({c} - {v})"
        same = f"({diff} <= {float(abs_t or 0)!r} OR {diff} <= {float(rel_t or 0)!r} * greatest(abs({c}), abs({v})))"
        return _expression(same if equal else f"NOT {same}")
    check = "equal-to-check" if equal else "not-equal-to-check"
    number = _number(value)
    if number is not None:
        return {"check": check, "columns": [column], "value": number}
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == "'":
        return {"check": check, "columns": [column], "value": value[1:-1].replace("''", "'")}
    return {"check": check, "columns": [column], "expression": sql_of(value)}


def _bound(a: _Args, name: str, relation: str) -> dict[str, Any]:
    check = "column-greater-than-check" if relation == ">=" else "column-less-than-check"
    return {"check": check, "column": a.column(), "limit": sql_of(a.need(name)), "inclusive": True}


def _range(a: _Args, *, inside: bool) -> dict[str, Any]:
    column = a.column()
    low, high = a.need("min_limit"), a.need("max_limit")
    lo_n, hi_n = _number(low), _number(high)
    if lo_n is not None and hi_n is not None:
        check = "numeric-between-check" if inside else "numeric-not-between-check"
        incl_key = {"inclusive": [True, True]}
        return {"check": check, "columns": [column], "min-value": lo_n, "max-value": hi_n, **incl_key}
    c = quote(column)
    between = f"{c} >= {sql_of(low)} AND {c} <= {sql_of(high)}"
    return _expression(between if inside else f"NOT ({between})")


def _older_than(a: _Args, *, other: bool) -> dict[str, Any]:
    days = int(a.get("days", 0) if other else a.need("days"))
    negate = bool(a.get("negate", False))
    if other:
        c1, c2 = a.column("column1"), a.column("column2")
    else:
        a.refuse("curr_date", "curr_date is a Spark Column in DQX and cannot be given in YAML here")
        c1, c2 = a.column(), None
    if negate:  # DQX fails when the value IS at least `days` older
        ref = "current_date()" if c2 is None else f"to_date({quote(c2)})"
        return _expression(f"to_date({quote(c1)}) >= date_sub({ref}, {days})")
    # DQX passes when date(value) < reference - days, i.e. ours with one day more (date <= reference - (days + 1))
    out: dict[str, Any] = {"check": "older-than-check", "columns": [c1], "days": days + 1}
    if c2 is not None:
        out["than-column"] = c2
    return out


def _future(a: _Args, *, near: bool) -> dict[str, Any]:
    a.refuse("curr_timestamp", "curr_timestamp is a Spark Column in DQX and cannot be given in YAML here")
    offset = int(a.get("offset", 0))
    if near and offset <= 0:  # DQX's near future of 0 seconds is empty: the check never fails
        return _expression("true")
    check = "not-in-near-future-check" if near else "not-in-future-check"
    return {"check": check, "columns": [a.column()], "offset": f"{offset} seconds"}


def _date(a: _Args, *, with_time: bool) -> dict[str, Any]:
    column = a.column()
    fmt = a.get("timestamp_format" if with_time else "date_format")
    if fmt is None:  # DQX casts without a pattern
        return _expression(f"{quote(column)} IS NULL OR try_to_timestamp({quote(column)}) IS NOT NULL")
    check = "timestamp-format-check" if with_time else "date-format-check"
    return {"check": check, "columns": [column], "format": fmt}


def _string_case(a: _Args) -> dict[str, Any]:
    case = a.need("case")
    if case not in ("upper", "lower"):
        raise ConfigError(
            f"case {case!r} has no counterpart yet (string-case-check knows upper and lower)",
            field_path=f"{a.where}.check.arguments.case",
        )
    return {"check": "string-case-check", "columns": [a.column()], "case": case}


def _empty(a: _Args, *, must_be_empty: bool, null_ok: bool) -> dict[str, Any]:
    column = a.column()
    trim = bool(a.get("trim_strings", False))
    if must_be_empty:
        c = quote(column)
        text = f"trim({c})" if trim else c
        return _expression(f"{c} IS NULL OR {text} = ''" if null_ok else f"{c} IS NOT NULL AND {text} = ''")
    check = "empty-check" if null_ok else "null-or-empty-check"
    return {"check": check, "columns": [column], "trim": trim}


def _code(check: str, standards: Mapping[str, str], default: str) -> Translator:
    def build(a: _Args) -> dict[str, Any]:
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


def _subdivision(a: _Args) -> dict[str, Any]:
    a.refuse(
        "country_column", "country_column has no counterpart yet (subdivision-code-check takes one country)"
    )
    return {
        "check": "subdivision-code-check",
        "columns": [a.column()],
        "ignore-case": not a.get("case_sensitive", True),
    }


def _uuid(a: _Args) -> dict[str, Any]:
    column = a.column()
    if a.get("strict", False):
        pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"
        return {"check": "regex-match-check", "column": column, "pattern": pattern}
    return {"check": "uuid-format-check", "columns": [column]}


def _regex(a: _Args) -> dict[str, Any]:
    column, regex = a.column(), a.need("regex")
    name = "regex-not-match-check" if a.get("negate", False) else "regex-match-check"
    return {"check": name, "column": column, "pattern": regex}


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _sql_expression(a: _Args) -> dict[str, Any]:
    expr = a.need("expression")
    if a.get("negate", False):  # DQX fails rows where the expression is TRUE
        return _with_message(_expression(f"NOT ({expr})"), a)
    return _with_message(_expression(expr), a)


def _fresh(a: _Args) -> dict[str, Any]:
    column, minutes = a.column(), int(a.need("max_age_minutes"))
    base = a.get("base_timestamp")
    ref = "current_timestamp()" if base is None else sql_of(base)
    return _expression(f"{quote(column)} >= {ref} - INTERVAL {minutes} MINUTES")


def _unique(a: _Args) -> dict[str, Any]:
    a.refuse("row_filter", "give the rule's filter instead of row_filter")
    return {
        "check": "unique-key-check",
        "columns": a.columns(),
        "nulls-distinct": bool(a.get("nulls_distinct", True)),
    }


def _foreign_key(a: _Args) -> dict[str, Any]:
    a.refuse("negate", "negate has no counterpart yet")
    a.refuse("ref_table", "declare the table under the gate's reference-datasets and name it in ref_df_name")
    a.refuse("row_filter", "give the rule's filter instead of row_filter")
    cols, refs = a.columns(), a.columns("ref_columns")
    if len(cols) != 1 or len(refs) != 1:
        raise ConfigError(
            "composite foreign keys have no counterpart yet", field_path=f"{a.where}.check.arguments.columns"
        )
    return {
        "check": "foreign-key-row-check",
        "column": cols[0],
        "reference-dataset": a.need("ref_df_name"),
        "reference-column": refs[0],
    }


def _compare(a: _Args) -> dict[str, Any]:
    for name, why in (
        ("ref_table", "declare the table under the gate's reference-datasets and name it in ref_df_name"),
        ("check_missing_records", "reference rows missing from the batch have no row to fail here"),
        ("rel_tolerance", "rel_tolerance has no counterpart yet (abs_tolerance has)"),
        ("row_filter", "give the rule's filter instead of row_filter"),
    ):
        a.refuse(name, why)
    out: dict[str, Any] = {
        "check": "reference-match-check",
        "columns": a.columns(),
        "reference-dataset": a.need("ref_df_name"),
        "reference-columns": a.columns("ref_columns"),
    }
    if a.get("exclude_columns"):
        out["exclude-columns"] = a.columns("exclude_columns")
    if a.get("abs_tolerance"):
        out["abs-tolerance"] = float(a.get("abs_tolerance"))
    return out


_AGGR_ARGS = ("column", "limit", "aggr_type", "group_by", "row_filter", "aggr_params")


def _aggr_matches(a: _Args) -> dict[str, Any]:
    a.refuse("ref_table", "declare the table under the gate's reference-datasets and name it in ref_df_name")
    out: dict[str, Any] = {
        "check": "reference-aggregate-check",
        "function": a.get("aggr_type", "count"),
        "column": a.need("column"),
        "reference-dataset": a.need("ref_df_name"),
    }
    for ours, theirs in (
        ("reference-column", "ref_column"),
        ("reference-filter", "ref_row_filter"),
        ("filter", "row_filter"),
        ("params", "aggr_params"),
        ("abs-tolerance", "abs_tolerance"),
        ("rel-tolerance", "rel_tolerance"),
    ):
        if a.get(theirs) is not None:
            out[ours] = a.get(theirs)
    if a.get("group_by"):
        out["group-by"] = a.columns("group_by")
    if a.get("ref_group_by"):
        out["reference-group-by"] = a.columns("ref_group_by")
    return out


def _sql_query(a: _Args) -> dict[str, Any]:
    a.refuse("name", "give the rule's name (it becomes the check-id) instead of the argument")
    out: dict[str, Any] = {"check": "sql-query-check", "query": a.need("query")}
    if a.get("merge_columns"):
        out["merge-columns"] = a.columns("merge_columns")
    for ours, theirs in (
        ("condition-column", "condition_column"),
        ("input-placeholder", "input_placeholder"),
        ("filter", "row_filter"),
    ):
        if a.get(theirs) is not None:
            out[ours] = a.get(theirs)
    if a.get("negate"):
        out["negate"] = True
    return _with_message(out, a)


def _with_message(out: dict[str, Any], a: _Args) -> dict[str, Any]:
    """DQX's ``msg`` becomes the check's ``message``: the report words the check's failures with it."""
    if a.get("msg") is not None:
        out["message"] = str(a.get("msg"))
    return out


def _aggr(op: str) -> Translator:
    def build(a: _Args) -> dict[str, Any]:
        column = a.need("column")
        limit = _number(a.need("limit"))
        if limit is None:
            raise ConfigError(
                "a limit that is an expression has no counterpart yet (give a number)",
                field_path=f"{a.where}.check.arguments.limit",
            )
        out: dict[str, Any] = {"function": a.get("aggr_type", "count"), "column": column, op: limit}
        if a.get("aggr_params"):
            out["params"] = a.get("aggr_params")
        for key in ("abs_tolerance", "rel_tolerance"):
            if a.get(key) is not None:
                out[key.replace("_", "-")] = a.get(key)
        group_by = a.get("group_by")
        if group_by:
            out |= {"check": "group-aggregate-check", "group-by": list(group_by)}
            if a.get("row_filter"):
                out["filter"] = a.get("row_filter")
        else:
            out["check"] = "aggregate-check"
            if a.get("row_filter"):
                out["row-filter"] = a.get("row_filter")
        return out

    return build


_ANOMALY_METRICS = {
    "avg": "mean",
    "sum": "sum",
    "min": "min",
    "max": "max",
    "stddev": "stddev",
    "stddev_samp": "stddev",
    "count_distinct": "distinct-count",
    "approx_count_distinct": "distinct-count",
}
_GRAINS = {"minute": "1 minute", "hour": "1 hour", "day": "1 day", "week": "7 days"}


def _aggr_outliers(a: _Args) -> dict[str, Any]:
    for name in ("group_by", "row_filter", "aggr_params"):
        a.refuse(name, f"{name} has no counterpart yet in anomaly-check")
    aggr, column = str(a.get("aggr_type", "avg")), a.need("column")
    if aggr == "count" and column == "*":
        metric: dict[str, Any] = {"check": "row-count"}
    elif aggr in _ANOMALY_METRICS:
        metric = {"check": _ANOMALY_METRICS[aggr], "column": a.column()}
    else:
        raise ConfigError(
            f"aggr_type {aggr!r} has no mergeable window state here (anomaly-check knows count of '*', "
            f"{', '.join(_ANOMALY_METRICS)})",
            field_path=f"{a.where}.check.arguments.aggr_type",
        )
    grain = str(a.get("time_interval", "day"))
    if grain not in _GRAINS:
        raise ConfigError(
            f"time_interval {grain!r} has no counterpart yet (known: {', '.join(_GRAINS)})",
            field_path=f"{a.where}.check.arguments.time_interval",
        )
    lookback, warmup = int(a.get("lookback_num_intervals", 14)), int(a.get("warmup_num_intervals", 7))
    return {
        "check": "anomaly-check",
        "metric": metric,
        "scope": {"window": _GRAINS[grain]},
        "baseline": {"windows": lookback},
        "band": {"stddevs": float(a.get("sigma", 3.0))},
        "min-history": warmup,
    }


def _fresh_windows(a: _Args) -> dict[str, Any]:
    a.refuse("curr_timestamp", "curr_timestamp is a Spark Column in DQX and cannot be given in YAML here")
    a.refuse("row_filter", "row_filter has no counterpart yet in a window-scoped check")
    a.column()
    return {
        "check": "row-count-min-check",
        "min-count": int(a.need("min_records_per_window")),
        "scope": {"window": f"{int(a.need('window_minutes'))} minutes"},
    }


def _schema(a: _Args) -> dict[str, Any]:
    for name in ("ref_df_name", "ref_table", "columns", "exclude_columns"):
        a.refuse(name, f"{name} has no counterpart yet (give expected_schema as DDL)")
    ddl = a.need("expected_schema")
    if not isinstance(ddl, str):
        raise ConfigError(
            "expected_schema must be DDL text", field_path=f"{a.where}.check.arguments.expected_schema"
        )
    fields = {}
    for part in _split_ddl(ddl):
        name, _, kind = part.strip().partition(" ")
        if not name or not kind.strip():
            raise ConfigError(
                f"cannot read {part!r} as 'name type'",
                field_path=f"{a.where}.check.arguments.expected_schema",
            )
        fields[name.strip("`")] = kind.strip()
    return {"check": "schema-check", "expected-schema": fields, "strict": bool(a.get("strict", False))}


def _split_ddl(ddl: str) -> list[str]:
    """``a int, b struct<x: int, y: string>`` -> ``["a int", "b struct<x: int, y: string>"]``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(ddl):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(ddl[start:i])
            start = i + 1
    parts.append(ddl[start:])
    return [p for p in parts if p.strip()]


_TRIM_NOTE = "with trim_strings: true ours strips all whitespace (tabs, line breaks), DQX's trim only spaces"
_PATTERN_NOTE = "our pattern differs from DQX's in edge cases (see docs/checks.md for exactly what it admits)"
_CODES_NOTE = "the code lists come from pycountry, DQX ships its own copy: rare or withdrawn codes may differ"
_CLOCK_NOTE = "ours compares to the microsecond, DQX truncates now + offset to the second"
_CLASSIC_NOTE = "one Spark job per batch (a classic aggregate); an undefined metric fails where DQX passes"

FUNCTIONS: dict[str, Mapping_] = {
    "is_not_null": Mapping_(
        ("column",), lambda a: {"check": "null-check", "columns": [a.column()]}, ours="null-check"
    ),
    "is_null": Mapping_(
        ("column",), lambda a: {"check": "not-null-check", "columns": [a.column()]}, ours="not-null-check"
    ),
    "is_not_empty": Mapping_(
        ("column", "trim_strings"),
        lambda a: _empty(a, must_be_empty=False, null_ok=True),
        _TRIM_NOTE,
        "empty-check",
    ),
    "is_not_null_and_not_empty": Mapping_(
        ("column", "trim_strings"),
        lambda a: _empty(a, must_be_empty=False, null_ok=False),
        _TRIM_NOTE,
        "null-or-empty-check",
    ),
    "is_empty": Mapping_(
        ("column", "trim_strings"),
        lambda a: _empty(a, must_be_empty=True, null_ok=True),
        ours="expression-check",
    ),
    "is_null_or_empty": Mapping_(
        ("column", "trim_strings"),
        lambda a: _empty(a, must_be_empty=True, null_ok=True),
        ours="expression-check",
    ),
    "has_valid_string_case": Mapping_(("column", "case"), _string_case, ours="string-case-check"),
    "is_in_list": Mapping_(
        ("column", "allowed", "case_sensitive"),
        lambda a: _in_list(a, forbid=False, null_fails=False),
        ours="expression-check",
    ),
    "is_not_null_and_is_in_list": Mapping_(
        ("column", "allowed", "case_sensitive"),
        lambda a: _in_list(a, forbid=False, null_fails=True),
        ours="expression-check",
    ),
    "is_not_in_list": Mapping_(
        ("column", "forbidden", "case_sensitive"),
        lambda a: _in_list(a, forbid=True, null_fails=False),
        ours="expression-check",
    ),
    "sql_expression": Mapping_(
        ("expression", "msg", "name", "negate", "columns"), _sql_expression, ours="expression-check"
    ),
    "is_older_than_col2_for_n_days": Mapping_(
        ("column1", "column2", "days", "negate"),
        lambda a: _older_than(a, other=True),
        ours="older-than-check",
    ),
    "is_older_than_n_days": Mapping_(
        ("column", "days", "curr_date", "negate"),
        lambda a: _older_than(a, other=False),
        ours="older-than-check",
    ),
    "is_not_in_future": Mapping_(
        ("column", "offset", "curr_timestamp"),
        lambda a: _future(a, near=False),
        _CLOCK_NOTE,
        "not-in-future-check",
    ),
    "is_not_in_near_future": Mapping_(
        ("column", "offset", "curr_timestamp"),
        lambda a: _future(a, near=True),
        _CLOCK_NOTE,
        "not-in-near-future-check",
    ),
    "is_equal_to": Mapping_(
        ("column", "value", "abs_tolerance", "rel_tolerance"),
        lambda a: _equality(a, equal=True),
        ours="equal-to-check",
    ),
    "is_not_equal_to": Mapping_(
        ("column", "value", "abs_tolerance", "rel_tolerance"),
        lambda a: _equality(a, equal=False),
        ours="not-equal-to-check",
    ),
    "is_not_less_than": Mapping_(
        ("column", "limit"), lambda a: _bound(a, "limit", ">="), ours="column-greater-than-check"
    ),
    "is_not_greater_than": Mapping_(
        ("column", "limit"), lambda a: _bound(a, "limit", "<="), ours="column-less-than-check"
    ),
    "is_in_range": Mapping_(
        ("column", "min_limit", "max_limit"), lambda a: _range(a, inside=True), ours="numeric-between-check"
    ),
    "is_not_in_range": Mapping_(
        ("column", "min_limit", "max_limit"),
        lambda a: _range(a, inside=False),
        ours="numeric-not-between-check",
    ),
    "regex_match": Mapping_(("column", "regex", "negate"), _regex, ours="regex-match-check"),
    "is_not_null_and_not_empty_array": Mapping_(
        ("column",),
        lambda a: {"check": "null-or-empty-array-check", "columns": [a.column()]},
        ours="null-or-empty-array-check",
    ),
    "is_valid_date": Mapping_(
        ("column", "date_format"), lambda a: _date(a, with_time=False), ours="date-format-check"
    ),
    "is_valid_timestamp": Mapping_(
        ("column", "timestamp_format"), lambda a: _date(a, with_time=True), ours="timestamp-format-check"
    ),
    "is_valid_ipv4_address": Mapping_(
        ("column",),
        lambda a: {"check": "ipv4-format-check", "columns": [a.column()]},
        _PATTERN_NOTE,
        "ipv4-format-check",
    ),
    "is_valid_ipv6_address": Mapping_(
        ("column",),
        lambda a: {"check": "ipv6-format-check", "columns": [a.column()]},
        _PATTERN_NOTE,
        "ipv6-format-check",
    ),
    "is_ipv4_address_in_cidr": Mapping_(
        ("column", "cidr_block"),
        lambda a: {
            "check": "ipv4-in-cidr-check",
            "columns": [a.column()],
            "cidr-blocks": [a.need("cidr_block")],
        },
        ours="ipv4-in-cidr-check",
    ),
    "is_valid_email": Mapping_(
        ("column",),
        lambda a: {"check": "email-format-check", "columns": [a.column()]},
        _PATTERN_NOTE,
        "email-format-check",
    ),
    "is_valid_uuid": Mapping_(("column", "strict"), _uuid, ours="uuid-format-check"),
    "is_valid_country_code": Mapping_(
        ("column", "code_format", "case_sensitive"),
        _code(
            "country-code-check",
            {"alpha-2": "alpha-2", "alpha-3": "alpha-3", "numeric": "numeric"},
            "alpha-2",
        ),
        _CODES_NOTE,
        "country-code-check",
    ),
    "is_valid_currency_code": Mapping_(
        ("column", "code_format", "case_sensitive"),
        _code("currency-code-check", {"alphabetic": "alpha-3", "numeric": "numeric"}, "alphabetic"),
        _CODES_NOTE,
        "currency-code-check",
    ),
    "is_valid_language_code": Mapping_(
        ("column", "code_format", "case_sensitive"),
        _code("language-code-check", {"alpha-2": "alpha-2", "alpha-3": "alpha-3"}, "alpha-2"),
        _CODES_NOTE,
        "language-code-check",
    ),
    "is_valid_subdivision_code": Mapping_(
        ("column", "case_sensitive", "country_column"), _subdivision, _CODES_NOTE, "subdivision-code-check"
    ),
    "is_data_fresh": Mapping_(
        ("column", "max_age_minutes", "base_timestamp"), _fresh, ours="expression-check"
    ),
    "is_valid_json": Mapping_(
        ("column",),
        lambda a: {"check": "json-format-check", "columns": [a.column()]},
        "ours refuses duplicate keys and anything after the document, which DQX's parse may accept",
        "json-format-check",
    ),
    "has_json_keys": Mapping_(
        ("column", "keys", "require_all"),
        lambda a: {
            "check": "json-keys-check",
            "columns": [a.column()],
            "keys": a.need("keys"),
            "require-all": a.get("require_all", True),
        },
        "a value that is not one complete JSON object fails",
        "json-keys-check",
    ),
    "is_ipv6_address_in_cidr": Mapping_(
        ("column", "cidr_block"),
        lambda a: {
            "check": "ipv6-in-cidr-check",
            "columns": [a.column()],
            "cidr-blocks": [a.need("cidr_block")],
        },
        _PATTERN_NOTE,
        "ipv6-in-cidr-check",
    ),
    "has_valid_json_schema": Mapping_(
        ("column", "schema"),
        lambda a: {"check": "json-schema-check", "columns": [a.column()], "schema": a.need("schema")},
        "the text must also be one complete JSON document (duplicate keys fail)",
        "json-schema-check",
    ),
    "has_no_outliers": Mapping_(
        ("column", "row_filter"),
        lambda a: (
            {"check": "mad-outlier-check", "column": a.column(), "k": 3.5}
            | ({"filter": a.get("row_filter")} if a.get("row_filter") else {})
        ),
        "ours uses the exact (interpolated) median, DQX percentile_approx: bounds can differ on even counts",
        "mad-outlier-check",
        dataset=True,
    ),
    "is_unique": Mapping_(
        ("columns", "nulls_distinct", "row_filter"), _unique, ours="unique-key-check", dataset=True
    ),
    "foreign_key": Mapping_(
        ("columns", "ref_columns", "ref_df_name", "ref_table", "negate", "row_filter", "null_safe"),
        _foreign_key,
        "a NULL key passes (null_safe: true is not honoured)",
        "foreign-key-row-check",
        dataset=True,
    ),
    "is_aggr_not_greater_than": Mapping_(
        _AGGR_ARGS, _aggr("le"), _CLASSIC_NOTE, "aggregate-check / group-aggregate-check", True
    ),
    "is_aggr_not_less_than": Mapping_(
        _AGGR_ARGS, _aggr("ge"), _CLASSIC_NOTE, "aggregate-check / group-aggregate-check", True
    ),
    "is_aggr_equal": Mapping_(
        (*_AGGR_ARGS, "abs_tolerance", "rel_tolerance"),
        _aggr("eq"),
        _CLASSIC_NOTE,
        "aggregate-check / group-aggregate-check",
        True,
    ),
    "is_aggr_not_equal": Mapping_(
        (*_AGGR_ARGS, "abs_tolerance", "rel_tolerance"),
        _aggr("ne"),
        _CLASSIC_NOTE,
        "aggregate-check / group-aggregate-check",
        True,
    ),
    "has_no_aggr_outliers": Mapping_(
        (
            "column",
            "time_column",
            "aggr_type",
            "sigma",
            "lookback_num_intervals",
            "warmup_num_intervals",
            "time_interval",
            "group_by",
            "row_filter",
            "aggr_params",
        ),
        _aggr_outliers,
        "an anomaly-check on event-time windows: the gate's event-time must be time_column; each window is "
        "judged once the watermark closes it, its baseline uses the sample stddev (DQX stddev_pop), and week "
        "windows are 7 days from 1970-01-01 (a Thursday), not calendar weeks",
        "anomaly-check",
        True,
    ),
    "is_data_fresh_per_time_window": Mapping_(
        (
            "column",
            "window_minutes",
            "min_records_per_window",
            "lookback_windows",
            "row_filter",
            "curr_timestamp",
        ),
        _fresh_windows,
        "a window-scoped row-count-min-check: the gate's event-time must be column; every window is judged once "
        "the watermark closes it (lookback_windows is not needed); a window without any row is never judged",
        "row-count-min-check (scope: window)",
        True,
    ),
    "compare_datasets": Mapping_(
        (
            "columns",
            "ref_columns",
            "ref_df_name",
            "ref_table",
            "check_missing_records",
            "exclude_columns",
            "null_safe_row_matching",
            "null_safe_column_value_matching",
            "row_filter",
            "abs_tolerance",
            "rel_tolerance",
        ),
        _compare,
        "row by row: a row whose key is missing from the reference, matches several reference rows, or differs "
        "in a shared column fails; a row with a NULL key passes (DQX matches NULL keys null-safely)",
        "reference-match-check",
        True,
    ),
    "has_no_gaps_per_time_window": Mapping_(
        ("column", "window_minutes", "group_by", "trailing_gap", "curr_timestamp"),
        _gaps,
        ours="window-gaps-check",
        dataset=True,
    ),
    "aggr_matches_dataset": Mapping_(
        (
            "column",
            "ref_table",
            "ref_df_name",
            "ref_column",
            "aggr_type",
            "aggr_params",
            "group_by",
            "ref_group_by",
            "row_filter",
            "ref_row_filter",
            "abs_tolerance",
            "rel_tolerance",
        ),
        _aggr_matches,
        "the reference is a dataset given to the gate (ref_df_name), re-aggregated every batch; two "
        "aggregates of no values count as equal",
        "reference-aggregate-check",
        True,
    ),
    "sql_query": Mapping_(
        (
            "query",
            "merge_columns",
            "msg",
            "name",
            "negate",
            "condition_column",
            "input_placeholder",
            "row_filter",
        ),
        _sql_query,
        "the query runs on each micro-batch, not on the whole table; with merge_columns a key the query "
        "returns twice fails when either of its rows does",
        "sql-query-check",
        True,
    ),
    "has_valid_schema": Mapping_(
        ("expected_schema", "ref_df_name", "ref_table", "columns", "strict", "exclude_columns"),
        _schema,
        "types are compared by name as written in the DDL",
        "schema-check",
        True,
    ),
}

#: DQX functions with no counterpart yet, and what to use meanwhile.
UNSUPPORTED: dict[str, str] = {
    "is_valid_national_id": (
        "no counterpart yet; a regex-match-check with the country's pattern comes closest (and luhn-check "
        "for ids with a mod-10 check digit)"
    ),
}


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
        built = mapping.build(_Args(args, where, mapping.arguments))
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
