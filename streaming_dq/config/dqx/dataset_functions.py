"""Translators of DQX's dataset-level functions (uniqueness, references, aggregates, queries, schema)."""

from __future__ import annotations

from typing import Any

from streaming_dq.config.dqx.arguments import (
    Arguments,
    Translator,
    number_of,
    split_ddl,
    with_message,
)
from streaming_dq.exceptions import ConfigError


def gaps_rule(a: Arguments) -> dict[str, Any]:
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


def unique_rule(a: Arguments) -> dict[str, Any]:
    a.refuse("row_filter", "give the rule's filter instead of row_filter")
    return {
        "check": "unique-key-check",
        "columns": a.columns(),
        "nulls-distinct": bool(a.get("nulls_distinct", True)),
    }


def foreign_key_rule(a: Arguments) -> dict[str, Any]:
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


def compare_rule(a: Arguments) -> dict[str, Any]:
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


AGGR_ARGS = ("column", "limit", "aggr_type", "group_by", "row_filter", "aggr_params")


def aggr_matches_rule(a: Arguments) -> dict[str, Any]:
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


def sql_query_rule(a: Arguments) -> dict[str, Any]:
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
    return with_message(out, a)


def aggr_rule(op: str) -> Translator:
    def build(a: Arguments) -> dict[str, Any]:
        column = a.need("column")
        limit = number_of(a.need("limit"))
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


ANOMALY_METRICS = {
    "avg": "mean",
    "sum": "sum",
    "min": "min",
    "max": "max",
    "stddev": "stddev",
    "stddev_samp": "stddev",
    "count_distinct": "distinct-count",
    "approx_count_distinct": "distinct-count",
}


GRAINS = {"minute": "1 minute", "hour": "1 hour", "day": "1 day", "week": "7 days"}


def aggr_outliers_rule(a: Arguments) -> dict[str, Any]:
    for name in ("group_by", "row_filter", "aggr_params"):
        a.refuse(name, f"{name} has no counterpart yet in anomaly-check")
    aggr, column = str(a.get("aggr_type", "avg")), a.need("column")
    if aggr == "count" and column == "*":
        metric: dict[str, Any] = {"check": "row-count"}
    elif aggr in ANOMALY_METRICS:
        metric = {"check": ANOMALY_METRICS[aggr], "column": a.column()}
    else:
        raise ConfigError(
            f"aggr_type {aggr!r} has no mergeable window state here (anomaly-check knows count of '*', "
            f"{', '.join(ANOMALY_METRICS)})",
            field_path=f"{a.where}.check.arguments.aggr_type",
        )
    grain = str(a.get("time_interval", "day"))
    if grain not in GRAINS:
        raise ConfigError(
            f"time_interval {grain!r} has no counterpart yet (known: {', '.join(GRAINS)})",
            field_path=f"{a.where}.check.arguments.time_interval",
        )
    lookback, warmup = int(a.get("lookback_num_intervals", 14)), int(a.get("warmup_num_intervals", 7))
    return {
        "check": "anomaly-check",
        "metric": metric,
        "scope": {"window": GRAINS[grain]},
        "baseline": {"windows": lookback},
        "band": {"stddevs": float(a.get("sigma", 3.0))},
        "min-history": warmup,
    }


def fresh_windows_rule(a: Arguments) -> dict[str, Any]:
    a.refuse("curr_timestamp", "curr_timestamp is a Spark Column in DQX and cannot be given in YAML here")
    a.refuse("row_filter", "row_filter has no counterpart yet in a window-scoped check")
    a.column()
    return {
        "check": "row-count-min-check",
        "min-count": int(a.need("min_records_per_window")),
        "scope": {"window": f"{int(a.need('window_minutes'))} minutes"},
    }


def schema_rule(a: Arguments) -> dict[str, Any]:
    for name in ("ref_df_name", "ref_table", "columns", "exclude_columns"):
        a.refuse(name, f"{name} has no counterpart yet (give expected_schema as DDL)")
    ddl = a.need("expected_schema")
    if not isinstance(ddl, str):
        raise ConfigError(
            "expected_schema must be DDL text", field_path=f"{a.where}.check.arguments.expected_schema"
        )
    fields = {}
    for part in split_ddl(ddl):
        name, _, kind = part.strip().partition(" ")
        if not name or not kind.strip():
            raise ConfigError(
                f"cannot read {part!r} as 'name type'",
                field_path=f"{a.where}.check.arguments.expected_schema",
            )
        fields[name.strip("`")] = kind.strip()
    return {"check": "schema-check", "expected-schema": fields, "strict": bool(a.get("strict", False))}
