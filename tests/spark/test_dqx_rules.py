"""DQX-format rules load unchanged and decide what DQX's documentation says, row by row.

tests/data/dqx/all_core_functions.yaml holds one or more rules for every DQX function we map, in DQX's own
format. Each is translated (:mod:`streaming_dq.config.dqx`) and run as the checks of a real gate on a stream
of a hand-made batch; ``EXPECTED`` states, per rule and in plain Python, which rows DQX's documented semantics
fail (the oracle is DQX's definition, not our implementation), compared with each quarantined row's reasons.
"""

from __future__ import annotations

import json
import statistics
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from streaming_dq import CheckSet
from streaming_dq.config.dqx import FUNCTIONS, UNSUPPORTED, translate
from streaming_dq.exceptions import ConfigError

pytestmark = pytest.mark.spark

RULES = Path(__file__).resolve().parents[1] / "data" / "dqx" / "all_core_functions.yaml"
SCHEMA = (
    "rk int, id int, name string, email string, amount double, qty int, country string, currency string, grp string, "
    "legacy string, ts timestamp, d date, d_text string, ts_text string, tags array<string>, ip string, "
    "ip6 string, code string, lang string, region string, payload string"
)
NOW = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
TODAY = NOW.date()
UUID = "123e4567-e89b-12d3-a456-426614174000"
BASE: dict[str, Any] = {
    "name": "Alice",
    "email": "alice@example.com",
    "amount": 10.0,
    "qty": 1,
    "country": "DE",
    "currency": "EUR",
    "grp": "a",
    "legacy": None,
    "ts": NOW - timedelta(days=1),
    "d": TODAY - timedelta(days=40),
    "d_text": "2024-01-05",
    "ts_text": "2024-01-05 10:00:00",
    "tags": ["x"],
    "ip": "10.1.2.3",
    "ip6": "2001:db8::1",
    "code": UUID,
    "lang": "de",
    "region": "DE-BY",
    "payload": '{"id": 1}',
}
#: One change from BASE per row (row 0 is BASE itself).
CHANGES: list[dict[str, Any]] = [
    {},
    {"name": None, "email": "  "},
    {"name": "   ", "legacy": "x", "grp": None},
    {"name": "bob test", "country": "de", "currency": "usd", "qty": 0, "amount": -5.0},
    {"email": "not-an-email", "qty": 13, "amount": 2000.0, "grp": "B"},
    {"ts": NOW + timedelta(hours=2), "d": TODAY - timedelta(days=10), "tags": []},
    {"ts": NOW + timedelta(days=3), "d_text": "2024-1-5", "ts_text": "soon", "tags": None},
    {"ip": "256.1.1.1", "ip6": "1::2::3", "code": "00000000-0000-0000-0000-000000000000"},
    {"ip": "192.168.0.1", "code": "not-a-uuid", "lang": "xx", "region": "US-XX", "country": "XX"},
    {"payload": '{"a": 1}', "currency": "GBP", "amount": 550.0, "qty": 12, "grp": "b"},
    {"payload": "{oops", "grp": "zzz", "legacy": ""},
    {"ts": NOW - timedelta(days=400), "qty": None, "amount": 10.4},
    {"id": 0, "grp": "a", "qty": None},  # id 0 again: not unique
    {},  # two clean rows: they pass every error-level rule
    {"qty": 2, "amount": 20.0},
]
REFERENCE = ["DE", "XX"]  # the foreign-key rule's reference dataset ("countries")


def rows() -> list[dict[str, Any]]:
    out = []
    for i, change in enumerate(CHANGES):
        out.append({"rk": i, "id": i, **BASE, **change})
    return out


def _valid_ipv4(v: str) -> bool:
    parts = v.split(".")
    return len(parts) == 4 and all(p.isdigit() and str(int(p)) == p and int(p) <= 255 for p in parts)


def _json(v: str) -> Any:
    try:
        return json.loads(v)
    except ValueError:
        return None


def _dup(
    rs: list[dict[str, Any]], keys: tuple[str, ...], where: Any = lambda r: True, nulls: bool = True
) -> Any:
    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(r[k] for k in keys)

    chosen = [r for r in rs if where(r)]
    return lambda r: (
        where(r)
        and (not nulls or all(r[k] is not None for k in keys))
        and sum(1 for o in chosen if key(o) == key(r)) > 1
    )


ALL = rows()


def _day(ts: datetime) -> int:
    return int((ts - datetime(1970, 1, 1)).total_seconds() // 86400)


DAYS = {_day(r["ts"]) for r in ALL}
MEDIAN = statistics.median(r["amount"] for r in ALL)
MAD = statistics.median(abs(r["amount"] - MEDIAN) for r in ALL)
#: DQX's documented semantics, rule by rule: True = DQX reports the row.
EXPECTED: dict[str, Any] = {
    "is_not_null_id": lambda r: r["id"] is None,
    "is_not_null_name": lambda r: r["name"] is None,
    "qty_must_be_null": lambda r: r["legacy"] is not None,
    "is_not_empty_name": lambda r: r["name"] is not None and r["name"].strip() == "",
    "is_not_null_and_not_empty_email": lambda r: r["email"] is None or r["email"] == "",
    "is_empty_legacy": lambda r: r["legacy"] not in (None, ""),
    "is_null_or_empty_legacy": lambda r: r["legacy"] not in (None, ""),
    "has_valid_string_case_country": lambda r: (
        r["country"] is not None and r["country"] != r["country"].upper()
    ),
    "is_in_list_currency": lambda r: r["amount"] > 0 and r["currency"] not in (None, "EUR", "USD"),
    "is_not_null_and_is_in_list_grp": lambda r: r["grp"] is None or r["grp"].lower() not in ("a", "b"),
    "is_not_in_list_qty": lambda r: r["qty"] in (0, 13),
    "amount_covers_qty": lambda r: r["qty"] is not None and not r["amount"] >= r["qty"],
    "sql_expression_qty_10": lambda r: r["qty"] is not None and r["qty"] > 10,
    # DQX: fails when date(d) >= date(ts) - days, i.e. passes only when d is MORE than `days` before ts
    "is_older_than_col2_for_n_days_d": lambda r: r["d"] >= (r["ts"].date() - timedelta(days=1)),
    "is_older_than_n_days_d": lambda r: r["d"] >= TODAY - timedelta(days=30),
    "is_not_in_future_ts": lambda r: r["ts"] > NOW + timedelta(seconds=3600),
    "is_not_in_near_future_ts": lambda r: NOW < r["ts"] < NOW + timedelta(seconds=86400),
    "is_equal_to_qty": lambda r: r["qty"] is not None and r["qty"] != 1,
    "is_equal_to_amount": lambda r: abs(r["amount"] - 10) > 0.5,
    "is_not_equal_to_grp": lambda r: r["grp"] == "zzz",
    "is_not_less_than_amount": lambda r: r["amount"] < 0,
    "is_not_greater_than_amount": lambda r: r["qty"] is not None and r["amount"] > r["qty"] * 100,
    "is_in_range_qty": lambda r: r["qty"] is not None and not 1 <= r["qty"] <= 12,
    "is_not_in_range_amount": lambda r: 500 <= r["amount"] <= 600,
    "regex_match_name": lambda r: r["name"] is not None and not r["name"][:1].isupper(),
    "regex_match_name_2": lambda r: r["name"] is not None and "test" in r["name"],
    "is_not_null_and_not_empty_array_tags": lambda r: not r["tags"],
    "is_valid_date_d_text": lambda r: r["d_text"] != "2024-01-05",
    "is_valid_timestamp_ts_text": lambda r: r["ts_text"] == "soon",
    "is_valid_ipv4_address_ip": lambda r: not _valid_ipv4(r["ip"]),
    "is_valid_ipv6_address_ip6": lambda r: r["ip6"] == "1::2::3",
    "is_ipv4_address_in_cidr_ip": lambda r: not (_valid_ipv4(r["ip"]) and r["ip"].startswith("10.")),
    "is_valid_email_email": lambda r: r["email"] is not None and "@" not in r["email"],
    "is_valid_uuid_code": lambda r: r["code"] == "not-a-uuid",
    "is_valid_uuid_code_2": lambda r: r["code"] != UUID,  # strict: the Nil UUID fails too
    "is_valid_country_code_country": lambda r: r["country"] not in ("DE",),
    "is_valid_currency_code_currency": lambda r: False,  # EUR, usd (case-insensitive), GBP are all codes
    "is_valid_language_code_lang": lambda r: r["lang"] == "xx",
    "is_valid_subdivision_code_region": lambda r: r["region"] == "US-XX",
    "is_data_fresh_ts": lambda r: r["ts"] < NOW - timedelta(minutes=525600),
    "is_valid_json_payload": lambda r: _json(r["payload"]) is None,
    "has_json_keys_payload": lambda r: (
        not isinstance(_json(r["payload"]), dict) or "id" not in _json(r["payload"])
    ),
    "is_unique_id": _dup(ALL, ("id",)),
    "is_unique_qty_grp": _dup(ALL, ("qty", "grp"), where=lambda r: r["grp"] == "a", nulls=False),
    "foreign_key_country": lambda r: r["country"] not in REFERENCE,
    "is_aggr_not_greater_than": lambda r: sum(1 for o in ALL if o["grp"] == r["grp"]) > 3,
    "is_ipv6_address_in_cidr_ip6": lambda r: r["ip6"] == "1::2::3",  # every valid one is 2001:db8::1
    "has_valid_json_schema_payload": lambda r: (
        not isinstance(_json(r["payload"]), dict) or not isinstance(_json(r["payload"]).get("id"), int)
    ),
    "has_no_outliers_amount": lambda r: abs(r["amount"] - MEDIAN) > 3.5 * MAD,
    # the reference (countries) shares no column with the batch but its key: only a missing key fails
    "compare_datasets_country": lambda r: r["country"] not in REFERENCE,
    # grp a's amounts sum to the reference's; grp b's do not; the others are missing from it
    "aggr_matches_dataset_amount": lambda r: r["grp"] != "a",
    "sql_query": lambda r: r["qty"] is not None and r["qty"] > 10,
    # the rows of the last present UTC day before a day without rows
    "has_no_gaps_per_time_window_ts": lambda r: _day(r["ts"]) + 1 not in DAYS and _day(r["ts"]) < max(DAYS),
}
#: The dataset-level rules without group-by: DQX fails every row of the batch or none.
BATCH_EXPECTED = {
    "is_aggr_not_less_than_amount": sum(r["amount"] for r in ALL) / len(ALL) >= 0,
    "is_aggr_equal_qty": abs(max(r["qty"] for r in ALL if r["grp"] == "b" and r["qty"] is not None) - 12)
    <= 1,
    "is_aggr_not_equal_amount": True,  # the median amount (10) is not 0
    "has_valid_schema": True,  # id int and name string are there (not strict)
}


@pytest.fixture(scope="module")
def batch(spark):  # type: ignore[no-untyped-def]
    data = [tuple(r[f.split()[0]] for f in SCHEMA.split(", ")) for r in ALL]
    totals = [("a", r["amount"]) for r in ALL if r["grp"] == "a"] + [("b", 12345.0)]
    return spark.createDataFrame(data, SCHEMA), {
        "countries": spark.createDataFrame([(c,) for c in REFERENCE], "code string"),
        "group_totals": spark.createDataFrame(totals, "grp string, amount double"),
    }


def test_the_rule_file_covers_every_mapped_function_and_every_rule_has_an_expectation() -> None:
    rules = yaml.safe_load(RULES.read_text())
    windowed = yaml.safe_load(
        (RULES.parent / "window_functions.yaml").read_text()
    )  # tests/unit/test_dqx_config.py
    assert {r["check"]["function"] for r in [*rules, *windowed]} == set(FUNCTIONS)
    ids = {c["check-id"] for _, c in translate(rules).checks}
    assert ids == set(EXPECTED) | set(BATCH_EXPECTED)
    # not vacuous: most row rules report some rows and pass others
    mixed = [k for k, f in EXPECTED.items() if 0 < sum(bool(f(r)) for r in ALL) < len(ALL)]
    assert len(mixed) >= len(EXPECTED) - 3, sorted(set(EXPECTED) - set(mixed))


def test_dqx_rules_decide_what_dqx_documents_row_by_row_through_a_stream(
    spark, batch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The rule file as the checks of a real gate on a stream: every row lands once, and each row's reasons
    in the quarantine table are exactly the rules DQX's documentation says it breaks (warn rules are a fail
    level here, so every firing rule is listed); the dataset rules' verdicts are read from the results table."""
    from deltalake import DeltaTable

    from streaming_dq import QualityGate

    df, refs = batch
    source = tmp_path / "landing"
    df.coalesce(1).write.parquet(str(source))
    checks = CheckSet.from_yaml(RULES)
    gate = QualityGate(
        "dqx",
        checks,
        pass_table=str(tmp_path / "pass"),
        quarantine_table=str(tmp_path / "quarantine"),
        results_table=str(tmp_path / "results"),
        reference_datasets=refs,
        fail_levels=["critical", "warning"],
    )
    stream = spark.readStream.schema(df.schema).parquet(str(source))
    gate.start(
        stream, checkpoint_location=str(tmp_path / "cp"), trigger={"availableNow": True}
    ).awaitTermination()
    passed = DeltaTable(str(tmp_path / "pass")).to_pyarrow_table().column("rk").to_pylist()
    quarantined = DeltaTable(str(tmp_path / "quarantine")).to_pyarrow_table().to_pylist()
    assert sorted(passed + [r["rk"] for r in quarantined]) == [r["rk"] for r in ALL]  # every row exactly once
    fired = {r["rk"]: {e["check-id"] for e in r["_dq_errors"]} for r in quarantined}
    wrong = {}
    for check_id, oracle in EXPECTED.items():
        for row in ALL:
            if (check_id in fired.get(row["rk"], set())) != bool(oracle(row)):
                wrong.setdefault(check_id, []).append(row["rk"])
    assert not wrong
    assert set(passed) == {r["rk"] for r in ALL if not any(f(r) for f in EXPECTED.values())}
    results = DeltaTable(str(tmp_path / "results")).to_pyarrow_table().to_pylist()
    status = {r["check_id"]: r["status"] == "passed" for r in results if r["check_id"] in BATCH_EXPECTED}
    assert status == BATCH_EXPECTED

    severities = {c.check_id: c.severity.value for c in checks}
    assert severities["is_not_null_id"] == "critical" and severities["qty_must_be_null"] == "warning"
    tagged = next(c for c in checks if c.check_id == "amount_covers_qty")
    assert tagged.tags == frozenset({"owner=billing", "severity_hint=high"})


@pytest.mark.parametrize(
    ("rule", "field", "message"),
    [
        (
            {"check": {"function": "is_not_nul", "arguments": {"column": "a"}}},
            "checks[0].check.function",
            "did you mean 'is_not_null'",
        ),
        (
            {"check": {"function": "is_valid_national_id", "arguments": {"column": "a"}}},
            "checks[0].check.function",
            "no counterpart yet",
        ),
        (
            {"check": {"function": "is_not_null", "arguments": {"col": "a"}}},
            "checks[0].check.arguments.col",
            "unknown argument",
        ),
        (
            {"check": {"function": "is_in_range", "arguments": {"column": "a", "min_limit": 1}}},
            "checks[0].check.arguments.max_limit",
            "missing argument",
        ),
        (
            {"criticality": "fatal", "check": {"function": "is_not_null", "arguments": {"column": "a"}}},
            "checks[0].criticality",
            "error or warn",
        ),
        (
            {"check": {"function": "is_not_null", "arguments": {"column": "a.b"}}},
            "checks[0].check.arguments.column",
            "not a plain column",
        ),
        (
            {"check": {"function": "is_not_null", "for_each": ["a"]}},
            "checks[0].check.for_each",
            "did you mean 'for_each_column'",
        ),
    ],
)
def test_a_rule_that_cannot_be_translated_names_its_field(
    rule: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        CheckSet.from_dicts([{"criticality": "error", **rule}], source="dqx.yaml")
    assert info.value.field_path == field and info.value.source == "dqx.yaml"


def test_mixing_dialects_is_refused_and_every_unsupported_function_says_what_to_use() -> None:
    with pytest.raises(ConfigError, match="mixes DQX rules") as info:
        CheckSet.from_dicts(
            [
                {"criticality": "error", "check": {"function": "is_not_null", "arguments": {"column": "a"}}},
                {"check": "null-check", "check-id": "x", "columns": ["a"]},
            ]
        )
    assert info.value.field_path == "checks[1]"
    assert not set(UNSUPPORTED) & set(FUNCTIONS)
    assert all(text for text in UNSUPPORTED.values())
