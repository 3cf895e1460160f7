"""Every DQX function and the check it becomes (:data:`FUNCTIONS`), with what differs; the ones without a
counterpart yet (:data:`UNSUPPORTED`). docs/migrating-from-dqx.md is this table in words."""

from __future__ import annotations

from streaming_dq.config.dqx.arguments import FunctionMapping
from streaming_dq.config.dqx.dataset_functions import (
    AGGR_ARGS,
    aggr_matches_rule,
    aggr_outliers_rule,
    aggr_rule,
    compare_rule,
    foreign_key_rule,
    fresh_windows_rule,
    gaps_rule,
    schema_rule,
    sql_query_rule,
    unique_rule,
)
from streaming_dq.config.dqx.row_functions import (
    bound_rule,
    code_rule,
    date_rule,
    empty_rule,
    equality_rule,
    fresh_rule,
    future_rule,
    in_list_rule,
    older_than_rule,
    range_rule,
    regex_rule,
    sql_expression_rule,
    string_case_rule,
    subdivision_rule,
    uuid_rule,
)

__all__ = ["FUNCTIONS", "UNSUPPORTED"]

_TRIM_NOTE = "with trim_strings: true ours strips all whitespace (tabs, line breaks), DQX's trim only spaces"


_PATTERN_NOTE = "our pattern differs from DQX's in edge cases (see docs/checks.md for exactly what it admits)"


_CODES_NOTE = "the code lists come from pycountry, DQX ships its own copy: rare or withdrawn codes may differ"


_CLOCK_NOTE = "ours compares to the microsecond, DQX truncates now + offset to the second"


_CLASSIC_NOTE = "one Spark job per batch (a classic aggregate); an undefined metric fails where DQX passes"


FUNCTIONS: dict[str, FunctionMapping] = {
    "is_not_null": FunctionMapping(
        ("column",), lambda a: {"check": "null-check", "columns": [a.column()]}, ours="null-check"
    ),
    "is_null": FunctionMapping(
        ("column",), lambda a: {"check": "not-null-check", "columns": [a.column()]}, ours="not-null-check"
    ),
    "is_not_empty": FunctionMapping(
        ("column", "trim_strings"),
        lambda a: empty_rule(a, must_be_empty=False, null_ok=True),
        _TRIM_NOTE,
        "empty-check",
    ),
    "is_not_null_and_not_empty": FunctionMapping(
        ("column", "trim_strings"),
        lambda a: empty_rule(a, must_be_empty=False, null_ok=False),
        _TRIM_NOTE,
        "null-or-empty-check",
    ),
    "is_empty": FunctionMapping(
        ("column", "trim_strings"),
        lambda a: empty_rule(a, must_be_empty=True, null_ok=True),
        ours="expression-check",
    ),
    "is_null_or_empty": FunctionMapping(
        ("column", "trim_strings"),
        lambda a: empty_rule(a, must_be_empty=True, null_ok=True),
        ours="expression-check",
    ),
    "has_valid_string_case": FunctionMapping(("column", "case"), string_case_rule, ours="string-case-check"),
    "is_in_list": FunctionMapping(
        ("column", "allowed", "case_sensitive"),
        lambda a: in_list_rule(a, forbid=False, null_fails=False),
        ours="expression-check",
    ),
    "is_not_null_and_is_in_list": FunctionMapping(
        ("column", "allowed", "case_sensitive"),
        lambda a: in_list_rule(a, forbid=False, null_fails=True),
        ours="expression-check",
    ),
    "is_not_in_list": FunctionMapping(
        ("column", "forbidden", "case_sensitive"),
        lambda a: in_list_rule(a, forbid=True, null_fails=False),
        ours="expression-check",
    ),
    "sql_expression": FunctionMapping(
        ("expression", "msg", "name", "negate", "columns"), sql_expression_rule, ours="expression-check"
    ),
    "is_older_than_col2_for_n_days": FunctionMapping(
        ("column1", "column2", "days", "negate"),
        lambda a: older_than_rule(a, other=True),
        ours="older-than-check",
    ),
    "is_older_than_n_days": FunctionMapping(
        ("column", "days", "curr_date", "negate"),
        lambda a: older_than_rule(a, other=False),
        ours="older-than-check",
    ),
    "is_not_in_future": FunctionMapping(
        ("column", "offset", "curr_timestamp"),
        lambda a: future_rule(a, near=False),
        _CLOCK_NOTE,
        "not-in-future-check",
    ),
    "is_not_in_near_future": FunctionMapping(
        ("column", "offset", "curr_timestamp"),
        lambda a: future_rule(a, near=True),
        _CLOCK_NOTE,
        "not-in-near-future-check",
    ),
    "is_equal_to": FunctionMapping(
        ("column", "value", "abs_tolerance", "rel_tolerance"),
        lambda a: equality_rule(a, equal=True),
        ours="equal-to-check",
    ),
    "is_not_equal_to": FunctionMapping(
        ("column", "value", "abs_tolerance", "rel_tolerance"),
        lambda a: equality_rule(a, equal=False),
        ours="not-equal-to-check",
    ),
    "is_not_less_than": FunctionMapping(
        ("column", "limit"), lambda a: bound_rule(a, "limit", ">="), ours="column-greater-than-check"
    ),
    "is_not_greater_than": FunctionMapping(
        ("column", "limit"), lambda a: bound_rule(a, "limit", "<="), ours="column-less-than-check"
    ),
    "is_in_range": FunctionMapping(
        ("column", "min_limit", "max_limit"),
        lambda a: range_rule(a, inside=True),
        ours="numeric-between-check",
    ),
    "is_not_in_range": FunctionMapping(
        ("column", "min_limit", "max_limit"),
        lambda a: range_rule(a, inside=False),
        ours="numeric-not-between-check",
    ),
    "regex_match": FunctionMapping(("column", "regex", "negate"), regex_rule, ours="regex-match-check"),
    "is_not_null_and_not_empty_array": FunctionMapping(
        ("column",),
        lambda a: {"check": "null-or-empty-array-check", "columns": [a.column()]},
        ours="null-or-empty-array-check",
    ),
    "is_valid_date": FunctionMapping(
        ("column", "date_format"), lambda a: date_rule(a, with_time=False), ours="date-format-check"
    ),
    "is_valid_timestamp": FunctionMapping(
        ("column", "timestamp_format"), lambda a: date_rule(a, with_time=True), ours="timestamp-format-check"
    ),
    "is_valid_ipv4_address": FunctionMapping(
        ("column",),
        lambda a: {"check": "ipv4-format-check", "columns": [a.column()]},
        _PATTERN_NOTE,
        "ipv4-format-check",
    ),
    "is_valid_ipv6_address": FunctionMapping(
        ("column",),
        lambda a: {"check": "ipv6-format-check", "columns": [a.column()]},
        _PATTERN_NOTE,
        "ipv6-format-check",
    ),
    "is_ipv4_address_in_cidr": FunctionMapping(
        ("column", "cidr_block"),
        lambda a: {
            "check": "ipv4-in-cidr-check",
            "columns": [a.column()],
            "cidr-blocks": [a.need("cidr_block")],
        },
        ours="ipv4-in-cidr-check",
    ),
    "is_valid_email": FunctionMapping(
        ("column",),
        lambda a: {"check": "email-format-check", "columns": [a.column()]},
        _PATTERN_NOTE,
        "email-format-check",
    ),
    "is_valid_uuid": FunctionMapping(("column", "strict"), uuid_rule, ours="uuid-format-check"),
    "is_valid_country_code": FunctionMapping(
        ("column", "code_format", "case_sensitive"),
        code_rule(
            "country-code-check",
            {"alpha-2": "alpha-2", "alpha-3": "alpha-3", "numeric": "numeric"},
            "alpha-2",
        ),
        _CODES_NOTE,
        "country-code-check",
    ),
    "is_valid_currency_code": FunctionMapping(
        ("column", "code_format", "case_sensitive"),
        code_rule("currency-code-check", {"alphabetic": "alpha-3", "numeric": "numeric"}, "alphabetic"),
        _CODES_NOTE,
        "currency-code-check",
    ),
    "is_valid_language_code": FunctionMapping(
        ("column", "code_format", "case_sensitive"),
        code_rule("language-code-check", {"alpha-2": "alpha-2", "alpha-3": "alpha-3"}, "alpha-2"),
        _CODES_NOTE,
        "language-code-check",
    ),
    "is_valid_subdivision_code": FunctionMapping(
        ("column", "case_sensitive", "country_column"),
        subdivision_rule,
        _CODES_NOTE,
        "subdivision-code-check",
    ),
    "is_data_fresh": FunctionMapping(
        ("column", "max_age_minutes", "base_timestamp"), fresh_rule, ours="expression-check"
    ),
    "is_valid_json": FunctionMapping(
        ("column",),
        lambda a: {"check": "json-format-check", "columns": [a.column()]},
        "ours refuses duplicate keys and anything after the document, which DQX's parse may accept",
        "json-format-check",
    ),
    "has_json_keys": FunctionMapping(
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
    "is_ipv6_address_in_cidr": FunctionMapping(
        ("column", "cidr_block"),
        lambda a: {
            "check": "ipv6-in-cidr-check",
            "columns": [a.column()],
            "cidr-blocks": [a.need("cidr_block")],
        },
        _PATTERN_NOTE,
        "ipv6-in-cidr-check",
    ),
    "has_valid_json_schema": FunctionMapping(
        ("column", "schema"),
        lambda a: {"check": "json-schema-check", "columns": [a.column()], "schema": a.need("schema")},
        "the text must also be one complete JSON document (duplicate keys fail)",
        "json-schema-check",
    ),
    "has_no_outliers": FunctionMapping(
        ("column", "row_filter"),
        lambda a: (
            {"check": "mad-outlier-check", "column": a.column(), "k": 3.5}
            | ({"filter": a.get("row_filter")} if a.get("row_filter") else {})
        ),
        "ours uses the exact (interpolated) median, DQX percentile_approx: bounds can differ on even counts",
        "mad-outlier-check",
        dataset=True,
    ),
    "is_unique": FunctionMapping(
        ("columns", "nulls_distinct", "row_filter"), unique_rule, ours="unique-key-check", dataset=True
    ),
    "foreign_key": FunctionMapping(
        ("columns", "ref_columns", "ref_df_name", "ref_table", "negate", "row_filter", "null_safe"),
        foreign_key_rule,
        "a NULL key passes (null_safe: true is not honoured)",
        "foreign-key-row-check",
        dataset=True,
    ),
    "is_aggr_not_greater_than": FunctionMapping(
        AGGR_ARGS, aggr_rule("le"), _CLASSIC_NOTE, "aggregate-check / group-aggregate-check", True
    ),
    "is_aggr_not_less_than": FunctionMapping(
        AGGR_ARGS, aggr_rule("ge"), _CLASSIC_NOTE, "aggregate-check / group-aggregate-check", True
    ),
    "is_aggr_equal": FunctionMapping(
        (*AGGR_ARGS, "abs_tolerance", "rel_tolerance"),
        aggr_rule("eq"),
        _CLASSIC_NOTE,
        "aggregate-check / group-aggregate-check",
        True,
    ),
    "is_aggr_not_equal": FunctionMapping(
        (*AGGR_ARGS, "abs_tolerance", "rel_tolerance"),
        aggr_rule("ne"),
        _CLASSIC_NOTE,
        "aggregate-check / group-aggregate-check",
        True,
    ),
    "has_no_aggr_outliers": FunctionMapping(
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
        aggr_outliers_rule,
        "an anomaly-check on event-time windows: the gate's event-time must be time_column; each window is "
        "judged once the watermark closes it, its baseline uses the sample stddev (DQX stddev_pop), and week "
        "windows are 7 days from 1970-01-01 (a Thursday), not calendar weeks",
        "anomaly-check",
        True,
    ),
    "is_data_fresh_per_time_window": FunctionMapping(
        (
            "column",
            "window_minutes",
            "min_records_per_window",
            "lookback_windows",
            "row_filter",
            "curr_timestamp",
        ),
        fresh_windows_rule,
        "a window-scoped row-count-min-check: the gate's event-time must be column; every window is judged once "
        "the watermark closes it (lookback_windows is not needed); a window without any row is never judged",
        "row-count-min-check (scope: window)",
        True,
    ),
    "compare_datasets": FunctionMapping(
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
        compare_rule,
        "row by row: a row whose key is missing from the reference, matches several reference rows, or differs "
        "in a shared column fails; a row with a NULL key passes (DQX matches NULL keys null-safely)",
        "reference-match-check",
        True,
    ),
    "has_no_gaps_per_time_window": FunctionMapping(
        ("column", "window_minutes", "group_by", "trailing_gap", "curr_timestamp"),
        gaps_rule,
        ours="window-gaps-check",
        dataset=True,
    ),
    "aggr_matches_dataset": FunctionMapping(
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
        aggr_matches_rule,
        "the reference is a dataset given to the gate (ref_df_name), re-aggregated every batch; two "
        "aggregates of no values count as equal",
        "reference-aggregate-check",
        True,
    ),
    "sql_query": FunctionMapping(
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
        sql_query_rule,
        "the query runs on each micro-batch, not on the whole table; with merge_columns a key the query "
        "returns twice fails when either of its rows does",
        "sql-query-check",
        True,
    ),
    "has_valid_schema": FunctionMapping(
        ("expected_schema", "ref_df_name", "ref_table", "columns", "strict", "exclude_columns"),
        schema_rule,
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
