"""The value-rule row checks (empty values, formats, equality, the clock, ISO codes) against plain Python.

Like tests/spark/test_checks_rows.py: one hypothesis example is a DataFrame drawn from corpora of valid and
invalid values (NULLs included) plus drawn parameters; every check runs on it at once through BatchDQEngine
and each row's verdict is compared with an oracle written in plain Python without the check's regular
expressions (``ipaddress``, ``json``, ``uuid``, ``datetime``, ``pycountry``, hand-written parsers). A third of
the checks also carry a drawn ``filter``, whose oracle is applied on top.
"""

from __future__ import annotations

import ipaddress
import json
import re
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pycountry
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streaming_dq import BatchDQEngine, CheckSet
from streaming_dq.config.factory import CheckFactory
from streaming_dq.exceptions import ConfigError

pytestmark = pytest.mark.spark

SCHEMA = "id int, a int, b double, s string, t string, h int, d date, arr array<int>"
DAY0 = date(2024, 1, 1)

EMAILS = [
    "a@b.co",
    "first.last+tag@example.com",
    "x_y@sub.domain.org",
    "UPPER@EXAMPLE.COM",
    "o'neil@example.ie",
    "a@b",
    "a@@b.com",
    ".a@b.com",
    "a.@b.com",
    "a..b@c.com",
    "a@-b.com",
    "a@b-.com",
    "a b@c.com",
    "@b.com",
    "a@b.c",
    "a@b.c1",
    "a@b..com",
]
URLS = [
    "http://example.com",
    "https://a.b.c/path?q=1#f",
    "HTTPS://EXAMPLE.COM:8080/",
    "http://localhost",
    "http://10.0.0.1:65535/x",
    "https://example.com?x",
    "ftp://example.com/file",
    "http://",
    "http://exa mple.com",
    "http://example.com:65536",
    "http://example.com:080",
    "http://-a.com",
    "example.com",
    "http://example.com/ space",
    "http://user@example.com",
    "http://a..b",
]
UUIDS = [
    "123e4567-e89b-12d3-a456-426614174000",
    "123E4567-E89B-12D3-A456-426614174000",
    "00000000-0000-0000-0000-000000000000",
    "123e4567-e89b-12d3-a456-42661417400",
    "123e4567e89b12d3a456426614174000",
    "{123e4567-e89b-12d3-a456-426614174000}",
    "g23e4567-e89b-12d3-a456-426614174000",
]
JSONS = [
    '{"a":1}',
    "[1,2]",
    "1",
    '"x"',
    "null",
    ' {"a":1} ',
    "{'a':1}",
    '{"a":1,}',
    "NaN",
    '{"a":1}{"b":2}',
    '{"a":1} x',
    '{"a":1,"a":2}',
    "01",
    '{"a":{"k":1}}',
    "tru",
    '{"k":1,"j":2}',
    '{"j":null}',
    "1,2",
    "[]",
    "{}",
    '{"id": 7}',
    '{"id": "7"}',
    '{"id": 1.5}',
    '{"id": null}',
    '{"id": 99999999999}',
    '{"k": "x", "id": 2}',
]
IPS = [
    "0.0.0.0",
    "255.255.255.255",
    "192.168.1.1",
    "10.1.2.3",
    "10.200.0.9",
    "172.16.5.4",
    "256.1.1.1",
    "01.2.3.4",
    "1.2.3",
    "1.2.3.4.5",
    " 1.2.3.4",
    "::",
    "::1",
    "2001:db8::1",
    "2001:0db8:0000:0000:0000:ff00:0042:8329",
    "::ffff:192.0.2.1",
    "1:2:3:4:5:6:1.2.3.4",
    "1:2:3:4:5:6:7:8:9",
    "2001:db8:::1",
    "fe80::1%eth0",
    "12345::1",
    "1::2::3",
    "1:2:3:4:5:6:7::",
    "::1.2.3.04",
    "[::1]",
    ":1:2",
    "1:2:3:4:5:6:7:1.2.3.4",
    "::ffff:1.2.3",
]
CODES = ["DE", "de", "DEU", "276", "US-NY", "XX", "EUR", "eur", "en", "deu", "US-XX", "DE-BY", "xx", "004"]
DATES = [
    "2024-01-05",
    "2024-1-5",
    "2024-02-30",
    "2024-02-29",
    "2023-02-29",
    "2024-01-05 10:00:00",
    "2024-01-05 25:00:00",
    "2024-01-05 23:59:60",
    "05/01/2024",
    "2024-01-05T10:00:00",
]
WORDS = ["ABC", "abc", "Abc", "123", "", " ", "\t", "ÉTÉ", "été", "a"]
CORPUS = EMAILS + URLS + UUIDS + JSONS + IPS + CODES + DATES + WORDS
FILTERS = {
    "a >= 0": lambda r: r["a"] is not None and r["a"] >= 0,
    "s <> 'a'": lambda r: r["s"] not in (None, "a"),
}

Row = dict[str, Any]
Oracle = Callable[[Row], bool]


def nullable(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


ROW = st.tuples(
    nullable(st.integers(-3, 3)),
    nullable(st.integers(-30, 30).map(lambda v: v / 10)),
    nullable(st.sampled_from(WORDS)),
    nullable(st.sampled_from(CORPUS)),
    nullable(st.integers(-72, 72)),  # hours from now (the row's timestamp is now + h hours + 30 minutes)
    nullable(st.integers(-40, 40).map(lambda n: DAY0 + timedelta(days=n))),
    nullable(st.lists(nullable(st.integers(0, 3)), max_size=2)),
)
PARAMS = st.fixed_dictionaries(
    {
        "treat": st.booleans(),
        "trim": st.booleans(),
        "case": st.sampled_from(["upper", "lower"]),
        "places": st.integers(0, 2),
        "range": st.tuples(st.integers(-3, 3), st.integers(-3, 3)).map(sorted),
        "incl": st.tuples(st.booleans(), st.booleans()),
        "equal": st.integers(-3, 3),
        "hours": st.integers(1, 48),
        "days": st.integers(0, 3),
        "keys": st.sampled_from([["a"], ["k", "j"], ["j"]]),
        "all": st.booleans(),
        "blocks": st.sampled_from([["10.0.0.0/8"], ["192.168.0.0/16", "172.16.0.0/12"], ["0.0.0.0/0"]]),
        "blocks6": st.sampled_from(
            [["2001:db8::/32"], ["::/0"], ["::ffff:0:0/96", "fe80::/10"], ["2001:db8::/33"]]
        ),
        "json_schema": st.sampled_from(["id INT NOT NULL", "k INT, id INT"]),
        "standard": st.sampled_from(["alpha-2", "alpha-3", "numeric"]),
        "ignore": st.booleans(),
        "filtered": st.sets(st.integers(0, 40), max_size=14),
        "filter": st.sampled_from(sorted(FILTERS)),
    }
)


# -- oracles written without the checks' regular expressions --------------------------------------------------

ATOM_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-")
LABEL_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
WHITESPACE = set(" \t\n\x0b\f\r")  # what Java's \s matches


def label_ok(label: str) -> bool:
    return 0 < len(label) <= 63 and set(label) <= LABEL_CHARS and label[0] != "-" and label[-1] != "-"


def is_email(v: str) -> bool:
    if v.count("@") != 1:
        return False
    local, domain = v.split("@")
    atoms, labels = local.split("."), domain.split(".")
    if not all(a and set(a) <= ATOM_CHARS for a in atoms) or len(labels) < 2:
        return False
    tld = labels[-1]
    return all(label_ok(x) for x in labels[:-1]) and 2 <= len(tld) <= 63 and tld.isascii() and tld.isalpha()


def is_url(v: str, schemes: list[str]) -> bool:
    scheme, sep, rest = v.partition("://")
    if not sep or scheme.lower() not in schemes:
        return False
    cut = min([i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0], default=len(rest))
    hostport, tail = rest[:cut], rest[cut:]
    if set(tail) & WHITESPACE:
        return False
    host, colon, port = hostport.partition(":")
    if colon and not (port.isdigit() and str(int(port)) == port and int(port) <= 65535):
        return False
    return all(label_ok(x) for x in host.split("."))


def is_uuid(v: str) -> bool:
    try:
        return len(v) == 36 and str(uuid.UUID(v)) == v.lower()
    except ValueError:
        return False


def parse_json(v: str) -> Any:
    """The parsed document, or raise ValueError (duplicate keys and NaN/Infinity refused, as Spark does)."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            raise ValueError("duplicate key")
        return dict(items)

    def constant(name: str) -> Any:
        raise ValueError(name)

    return json.loads(v, object_pairs_hook=pairs, parse_constant=constant)


def is_json(v: str) -> bool:
    try:
        parse_json(v)
        return True
    except ValueError:
        return False


def has_keys(v: str, keys: list[str], require_all: bool) -> bool:
    try:
        doc = parse_json(v)
    except ValueError:
        return False
    if not isinstance(doc, dict):
        return False
    return all(k in doc for k in keys) if require_all else any(k in doc for k in keys)


def ip(v: str, version: int) -> Any:
    try:
        address = ipaddress.ip_address(v)
    except ValueError:
        return None
    return address if address.version == version and "%" not in v else None


def conforms(v: str, schema: str) -> bool:
    """Spark's reading of ``schema`` (INT fields) from a JSON object, with DQX-like NOT NULL presence."""
    try:
        doc = parse_json(v)
    except ValueError:
        return False
    if not isinstance(doc, dict):
        return False
    fields = [f.split() for f in schema.split(", ")]
    for name, _type, *not_null in fields:
        value = doc.get(name)
        if value is None:
            if not_null:
                return False
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value < 2**31:
            return False
    return True


def strict_date(v: str, with_time: bool) -> bool:
    shape = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}" if with_time else r"\d{4}-\d{2}-\d{2}"
    if not re.fullmatch(shape, v):
        return False
    try:
        datetime.strptime(v, "%Y-%m-%d %H:%M:%S" if with_time else "%Y-%m-%d")
        return True
    except ValueError:
        return False


def guard(value: Any, treat: bool, fails: Callable[[Any], bool]) -> bool:
    return treat if value is None else bool(fails(value))


def cases(p: dict[str, Any], now: datetime) -> list[tuple[dict[str, Any], Oracle]]:
    t = p["treat"]
    lo, hi = p["range"]
    incl = tuple(p["incl"])
    hours, days = p["hours"], p["days"]
    today = now.date()

    def ts(r: Row) -> datetime | None:
        return None if r["h"] is None else now + timedelta(hours=r["h"], minutes=30)

    def empty(v: str) -> bool:
        return (v.strip(" \t\n\x0b\f\r") if p["trim"] else v) == ""

    def inside(v: float) -> bool:
        left = v >= lo if incl[0] else v > lo
        right = v <= hi if incl[1] else v < hi
        return left and right

    nets = [ipaddress.ip_network(b) for b in p["blocks"]]
    nets6 = [ipaddress.ip_network(b) for b in p["blocks6"]]
    countries = {getattr(c, p["standard"].replace("-", "_")) for c in pycountry.countries}
    currencies = {c.alpha_3 for c in pycountry.currencies}
    languages = {x.alpha_2 for x in pycountry.languages if hasattr(x, "alpha_2")}
    subdivisions = {s.code for s in pycountry.subdivisions if s.country_code == "US"}

    def code(v: str, codes: set[str]) -> bool:
        return (v.upper() in {c.upper() for c in codes}) if p["ignore"] else v in codes

    def newer(r: Row, reference: date | None) -> bool:
        if r["d"] is None:
            return t
        if reference is None:
            return t
        return (reference - r["d"]).days < days

    return [
        (
            {"check": "empty-check", "columns": ["s"], "trim": p["trim"]},
            lambda r: r["s"] is not None and empty(r["s"]),
        ),
        (
            {"check": "null-or-empty-check", "columns": ["s", "t"], "trim": p["trim"]},
            lambda r: any(r[c] is None or empty(r[c]) for c in ("s", "t")),
        ),
        (
            {"check": "empty-array-check", "columns": ["arr"], "treat-null-as-failure": t},
            lambda r: guard(r["arr"], t, lambda v: len(v) == 0),
        ),
        ({"check": "null-or-empty-array-check", "columns": ["arr"]}, lambda r: not r["arr"]),
        (
            {"check": "string-case-check", "columns": ["s"], "case": p["case"], "treat-null-as-failure": t},
            lambda r: guard(r["s"], t, lambda v: v != (v.upper() if p["case"] == "upper" else v.lower())),
        ),
        (
            {"check": "email-format-check", "columns": ["t"]},
            lambda r: guard(r["t"], False, lambda v: not is_email(v)),
        ),
        (
            {"check": "url-format-check", "columns": ["t"], "treat-null-as-failure": t},
            lambda r: guard(r["t"], t, lambda v: not is_url(v, ["http", "https"])),
        ),
        (
            {"check": "url-format-check", "columns": ["t"], "schemes": ["ftp"]},
            lambda r: guard(r["t"], False, lambda v: not is_url(v, ["ftp"])),
        ),
        (
            {"check": "uuid-format-check", "columns": ["t"]},
            lambda r: guard(r["t"], False, lambda v: not is_uuid(v)),
        ),
        (
            {"check": "json-format-check", "columns": ["t"], "treat-null-as-failure": t},
            lambda r: guard(r["t"], t, lambda v: not is_json(v)),
        ),
        (
            {"check": "json-keys-check", "columns": ["t"], "keys": p["keys"], "require-all": p["all"]},
            lambda r: guard(r["t"], False, lambda v: not has_keys(v, p["keys"], p["all"])),
        ),
        (
            {"check": "ipv4-format-check", "columns": ["t"]},
            lambda r: guard(r["t"], False, lambda v: ip(v, 4) is None),
        ),
        (
            {"check": "ipv6-format-check", "columns": ["t"]},
            lambda r: guard(r["t"], False, lambda v: ip(v, 6) is None),
        ),
        (
            {"check": "ipv4-in-cidr-check", "columns": ["t"], "cidr-blocks": p["blocks"]},
            lambda r: guard(
                r["t"], False, lambda v: (a := ip(v, 4)) is None or not any(a in n for n in nets)
            ),
        ),
        (
            {"check": "ipv6-in-cidr-check", "columns": ["t"], "cidr-blocks": p["blocks6"]},
            lambda r: guard(
                r["t"], False, lambda v: (a := ip(v, 6)) is None or not any(a in n for n in nets6)
            ),
        ),
        (
            {"check": "json-schema-check", "columns": ["t"], "schema": p["json_schema"]},
            lambda r: guard(r["t"], False, lambda v: not conforms(v, p["json_schema"])),
        ),
        (
            {"check": "equal-to-check", "columns": ["a"], "value": p["equal"], "treat-null-as-failure": t},
            lambda r: guard(r["a"], t, lambda v: v != p["equal"]),
        ),
        (
            {"check": "equal-to-check", "columns": ["b"], "expression": "a / 10"},
            lambda r: r["b"] is not None and r["a"] is not None and r["b"] != r["a"] / 10,
        ),
        (
            {"check": "not-equal-to-check", "columns": ["s"], "value": "a"},
            lambda r: guard(r["s"], False, lambda v: v == "a"),
        ),
        (
            {
                "check": "numeric-not-between-check",
                "columns": ["a", "b"],
                "min-value": lo,
                "max-value": hi,
                "inclusive": list(incl),
            },
            lambda r: any(guard(r[c], False, inside) for c in ("a", "b")),
        ),
        (
            {"check": "decimal-places-check", "columns": ["b"], "max-places": p["places"]},
            lambda r: guard(
                r["b"], False, lambda v: p["places"] == 0 and round(v * 10) % 10 != 0
            ),  # b: tenths
        ),
        (
            {"check": "date-format-check", "columns": ["t"], "treat-null-as-failure": t},
            lambda r: guard(r["t"], t, lambda v: not strict_date(v, False)),
        ),
        (
            {"check": "timestamp-format-check", "columns": ["t"]},
            lambda r: guard(r["t"], False, lambda v: not strict_date(v, True)),
        ),
        (
            {"check": "date-format-check", "columns": ["t"], "format": "dd/MM/yyyy"},
            lambda r: guard(r["t"], False, lambda v: v != "05/01/2024"),  # the corpus's only such date
        ),
        (
            {"check": "not-in-future-check", "columns": ["ts2"], "treat-null-as-failure": t},
            lambda r: guard(ts(r), t, lambda v: v > now),
        ),
        (
            {"check": "not-in-future-check", "columns": ["ts2"], "offset": f"{hours} hours"},
            lambda r: guard(ts(r), False, lambda v: v > now + timedelta(hours=hours)),
        ),
        (
            {"check": "not-in-near-future-check", "columns": ["ts2"], "offset": f"{hours} hours"},
            lambda r: guard(ts(r), False, lambda v: now < v < now + timedelta(hours=hours)),
        ),
        (
            {"check": "older-than-check", "columns": ["ts2"], "days": days},
            lambda r: guard(ts(r), False, lambda v: (today - v.date()).days < days),
        ),
        (
            {
                "check": "older-than-check",
                "columns": ["d"],
                "days": days,
                "than-column": "ts2",
                "treat-null-as-failure": t,
            },
            lambda r: newer(r, None if ts(r) is None else ts(r).date()),  # type: ignore[union-attr]
        ),
        (
            {
                "check": "country-code-check",
                "columns": ["t"],
                "standard": p["standard"],
                "ignore-case": p["ignore"],
            },
            lambda r: guard(r["t"], False, lambda v: not code(v, countries)),
        ),
        (
            {"check": "currency-code-check", "columns": ["t"], "ignore-case": p["ignore"]},
            lambda r: guard(r["t"], False, lambda v: not code(v, currencies)),
        ),
        (
            {"check": "language-code-check", "columns": ["t"], "treat-null-as-failure": t},
            lambda r: guard(r["t"], t, lambda v: v not in languages),
        ),
        (
            {"check": "subdivision-code-check", "columns": ["t"], "country": "US"},
            lambda r: guard(r["t"], False, lambda v: v not in subdivisions),
        ),
    ]


NEW_ROW_CHECK_NAMES = {
    "empty-check",
    "null-or-empty-check",
    "empty-array-check",
    "null-or-empty-array-check",
    "string-case-check",
    "email-format-check",
    "url-format-check",
    "uuid-format-check",
    "json-format-check",
    "json-keys-check",
    "ipv4-format-check",
    "ipv6-format-check",
    "ipv4-in-cidr-check",
    "ipv6-in-cidr-check",
    "json-schema-check",
    "equal-to-check",
    "not-equal-to-check",
    "numeric-not-between-check",
    "decimal-places-check",
    "date-format-check",
    "timestamp-format-check",
    "not-in-future-check",
    "not-in-near-future-check",
    "older-than-check",
    "country-code-check",
    "currency-code-check",
    "language-code-check",
    "subdivision-code-check",
}


@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(raw_rows=st.lists(ROW, max_size=60), params=PARAMS)
def test_value_rule_checks_match_their_oracles_with_and_without_a_filter(spark, raw_rows, params) -> None:  # type: ignore[no-untyped-def]
    now = datetime.now(UTC).replace(tzinfo=None)
    rows: list[Row] = []
    # every corpus value once (so each check meets valid and invalid values), then the drawn rows
    fixed = [
        (
            (k % 7) - 3,
            ((k % 61) - 30) / 10,
            WORDS[k % len(WORDS)],
            v,
            (k * 7 % 145) - 72,
            DAY0 + timedelta(days=(k % 81) - 40),
            [[], [1], None, [None]][k % 4],
        )
        for k, v in enumerate(CORPUS)
    ]
    for i, (a, b, s, t, h, d, arr) in enumerate([*fixed, *raw_rows]):
        rows.append({"id": i, "a": a, "b": b, "s": s, "t": t, "h": h, "d": d, "arr": arr})
    pairs = cases(params, now)
    configs = []
    for i, (cfg, oracle) in enumerate(pairs):
        if i in params["filtered"]:
            text = params["filter"]
            holds = FILTERS[text]
            cfg = {**cfg, "filter": text}
            pairs[i] = (cfg, lambda r, o=oracle, f=holds: f(r) and o(r))
        configs.append({**cfg, "check-id": f"c{i}-{cfg['check']}"})
    checks = [CheckFactory.from_dict(c) for c in configs]
    assert {c.check_type for c in checks} == NEW_ROW_CHECK_NAMES

    data = [(r["id"], r["a"], r["b"], r["s"], r["t"], r["h"], r["d"], r["arr"]) for r in rows]
    df = spark.createDataFrame(data, SCHEMA)
    start = now.replace(tzinfo=UTC).timestamp()
    df = df.selectExpr("*", f"timestamp_seconds({start} + h * 3600 + 1800) AS ts2")
    result = BatchDQEngine(CheckSet(checks)).run_batch(df)
    collected = result.df.select("id", "_dq_passed", "_dq_errors").collect()
    assert len(collected) == len(rows)
    fired = {r["id"]: {e["check-id"] for e in r["_dq_errors"]} for r in collected}
    wrong: dict[str, list[Row]] = {}
    for check, (_, oracle) in zip(checks, pairs, strict=True):
        for row in rows:
            if (check.check_id in fired[row["id"]]) != oracle(row):
                wrong.setdefault(check.check_id, []).append(row)
    assert not wrong, {k: v[:3] for k, v in wrong.items()}
    # not vacuous: most checks both pass and fail rows of this example
    mixed = [c for c in checks if 0 < sum(c.check_id in f for f in fired.values()) < len(rows)]
    assert len(mixed) >= len(checks) // 2, [c.check_id for c in checks if c not in mixed]
    expected_fail = {row["id"] for row in rows if any(oracle(row) for _, oracle in pairs)}
    assert {r["id"] for r in collected if not r["_dq_passed"]} == expected_fail


def test_the_corpus_has_valid_and_invalid_values_for_every_format() -> None:
    # a corpus whose values all pass (or all fail) a check would make its oracle comparison vacuous
    for name, values, ok in [
        ("email", EMAILS, is_email),
        ("url", URLS, lambda v: is_url(v, ["http", "https"])),
        ("uuid", UUIDS, is_uuid),
        ("json", JSONS, is_json),
        ("ipv4", IPS, lambda v: ip(v, 4) is not None),
        ("ipv6", IPS, lambda v: ip(v, 6) is not None),
        ("date", DATES, lambda v: strict_date(v, False)),
        ("timestamp", DATES, lambda v: strict_date(v, True)),
    ]:
        verdicts = {bool(ok(v)) for v in values}
        assert verdicts == {True, False}, name


def test_config_errors_of_the_value_rule_checks_name_the_field() -> None:
    def error(raw: dict[str, Any]) -> ConfigError:
        with pytest.raises(ConfigError) as info:
            CheckSet.from_dicts([{"check-id": "x", **raw}])
        return info.value

    host_bits = error({"check": "ipv4-in-cidr-check", "columns": ["ip"], "cidr-blocks": ["10.0.0.1/8"]})
    assert host_bits.field_path == "checks[0].cidr-blocks[0]" and "'10.0.0.1/8'" in str(host_bits)
    assert "exactly one of value" in str(error({"check": "equal-to-check", "columns": ["a"]}))
    assert "exactly one of value" in str(
        error({"check": "equal-to-check", "columns": ["a"], "value": 1, "expression": "b"})
    )
    wrong_country = error({"check": "subdivision-code-check", "columns": ["c"], "country": "UX"})
    assert wrong_country.field_path == "checks[0].country" and "did you mean" in str(wrong_country)
    assert error({"check": "not-in-near-future-check", "columns": ["t"], "offset": "soon"}).field_path == (
        "checks[0].offset"
    )
    assert "case" in str(error({"check": "string-case-check", "columns": ["s"], "case": "title"}))
