"""The benchmark's rule mix, in a tool-neutral form, and its translations.

A :class:`Rule` names what is checked (``not_null``, ``between``, ``regex`` ...) and with which parameters.
:func:`rule_mix` picks the first ``n`` rules of a fixed cycle (7 row rules, 3 observable aggregates per ten;
one regex per ten), varying columns and constants between cycles so that no two predicates are identical except
the regexes, which alternate between two (the e-mail pattern on even cycles, the SKU pattern on odd ones).
:func:`to_check_dict` gives the streaming_dq (SparkDQ-compatible) config, :func:`row_predicate` the Spark
column the hand-written floor and the naive validator use (True = the row fails, never NULL; NULL semantics
follow streaming_dq's catalog: only ``not_null`` fails a NULL).

Imports only pyspark (lazily), so the peer drivers in other virtual environments can use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal[
    "not_null",
    "between",
    "regex",
    "in_set",
    "str_len",
    "row_count_min",
    "completeness",
    "mean_between",
]
ROW_KINDS = frozenset({"not_null", "between", "regex", "in_set", "str_len"})

STATUSES = ["NEW", "PAID", "SHIPPED", "CANCELLED"]
COUNTRIES = ["DE", "FR", "NL", "US", "GB", "CH", "IT", "ES"]
EMAIL_PATTERN = r"^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$"
SKU_PATTERN = r"^SKU-[0-9]{6}$"


@dataclass(frozen=True)
class Rule:
    """One check, tool-neutral."""

    rule_id: str
    kind: Kind
    column: str | None = None
    params: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def is_row(self) -> bool:
        return self.kind in ROW_KINDS


def _cycle(c: int) -> list[Rule]:
    """Ten rules; cycle ``c`` shifts constants so predicates differ between cycles."""
    even = c % 2 == 0
    return [
        Rule(f"not-null-{c}", "not_null", ["customer_id", "order_id", "email", "sku", "currency"][c % 5]),
        Rule(f"amount-range-{c}", "between", "amount", {"min": 0.0, "max": 10_000.0 + 1_000 * c}),
        Rule(
            f"pattern-{c}",
            "regex",
            "email" if even else "sku",
            {"pattern": EMAIL_PATTERN if even else SKU_PATTERN},
        ),
        Rule(
            f"currency-known-{c}", "in_set", "currency", {"values": ["EUR", "USD", "GBP", "CHF", f"C{c:02d}"]}
        ),
        Rule(f"row-count-{c}", "row_count_min", None, {"min": 1 + c}),
        Rule(f"sku-length-{c}", "str_len", "sku", {"min": 10 - c % 2, "max": 10 + c}),
        Rule(
            f"complete-{c}",
            "completeness",
            ["customer_id", "email", "amount", "order_id", "sku"][c % 5],
            {"min_ratio": 0.9 - 0.01 * c},
        ),
        Rule(f"quantity-range-{c}", "between", "quantity", {"min": 1, "max": 100 + c}),
        Rule(
            f"status-known-{c}",
            "in_set",
            "status" if even else "country",
            {"values": [*STATUSES, f"S{c}"] if even else [*COUNTRIES, f"Z{c}"]},
        ),
        Rule(f"mean-amount-{c}", "mean_between", "amount", {"min": 0.0, "max": 10_000.0 + c}),
    ]


def rule_mix(n: int) -> list[Rule]:
    """The first ``n`` rules of the cycle (n=1: one NULL check; n=5 includes a regex and an aggregate)."""
    rules: list[Rule] = []
    c = 0
    while len(rules) < n:
        rules.extend(_cycle(c))
        c += 1
    return rules[:n]


# -- streaming_dq / SparkDQ configs ------------------------------------------------------------------------


def to_check_dict(rule: Rule, available: Iterable[str] | None = None) -> dict[str, Any]:
    """The streaming_dq config for ``rule`` (SparkDQ's check names and kebab-case parameters).

    ``mean_between`` becomes a ``mean-check`` when the catalog has one, else ``row-count-between-check``.
    """
    names = set(available) if available is not None else None
    p, cid = rule.params, rule.rule_id
    if rule.kind == "not_null":
        return {"check": "null-check", "check-id": cid, "columns": [rule.column]}
    if rule.kind == "between":
        return {
            "check": "numeric-between-check",
            "check-id": cid,
            "columns": [rule.column],
            "min-value": p["min"],
            "max-value": p["max"],
            "inclusive": [True, True],
        }
    if rule.kind == "regex":
        return {"check": "regex-match-check", "check-id": cid, "column": rule.column, "pattern": p["pattern"]}
    if rule.kind == "in_set":
        return {
            "check": "is-contained-in-check",
            "check-id": cid,
            "allowed-values": {rule.column: p["values"]},
        }
    if rule.kind == "str_len":
        return {
            "check": "string-length-between-check",
            "check-id": cid,
            "column": rule.column,
            "min-length": p["min"],
            "max-length": p["max"],
        }
    if rule.kind == "row_count_min":
        return {"check": "row-count-min-check", "check-id": cid, "min-count": p["min"]}
    if rule.kind == "completeness":
        return {
            "check": "completeness-ratio-check",
            "check-id": cid,
            "column": rule.column,
            "min-ratio": p["min_ratio"],
        }
    if rule.kind == "mean_between":
        if names is None or "mean-check" in names:
            return {
                "check": "mean-check",
                "check-id": cid,
                "column": rule.column,
                "between": [p["min"], p["max"]],
            }
        return {"check": "row-count-between-check", "check-id": cid, "min-count": 1, "max-count": 10**12}
    raise ValueError(f"unknown rule kind {rule.kind!r}")


# -- Spark predicates (floor, naive validator) -------------------------------------------------------------


def row_predicate(rule: Rule) -> Any:
    """A never-NULL Spark column, True when the row fails ``rule`` (row rules only)."""
    from pyspark.sql import functions as F

    c = F.col(rule.column) if rule.column else None
    p = rule.params
    builders: dict[str, Callable[[], Any]] = {
        "not_null": lambda: c.isNull(),
        "between": lambda: (c < p["min"]) | (c > p["max"]),
        "regex": lambda: ~c.rlike(p["pattern"]),
        "in_set": lambda: ~c.isin(p["values"]),
        "str_len": lambda: (F.length(c) < p["min"]) | (F.length(c) > p["max"]),
    }
    expr = builders[rule.kind]()
    return expr if rule.kind == "not_null" else F.coalesce(expr, F.lit(False))


def any_failed(rules: Iterable[Rule]) -> Any:
    """One boolean column: True when any row rule fails."""
    from functools import reduce

    from pyspark.sql import functions as F

    preds = [row_predicate(r) for r in rules if r.is_row]
    return reduce(lambda a, b: a | b, preds) if preds else F.lit(False)


def aggregate_ok(rule: Rule, df: Any) -> bool:
    """Evaluate an aggregate rule with its own Spark action (the naive validator's way)."""
    from pyspark.sql import functions as F

    p = rule.params
    if rule.kind == "row_count_min":
        return df.count() >= p["min"]
    if rule.kind == "completeness":
        row = df.agg(F.count(F.lit(1)).alias("n"), F.count(F.col(rule.column)).alias("nn")).first()
        return row["n"] == 0 or row["nn"] / row["n"] >= p["min_ratio"]
    if rule.kind == "mean_between":
        mean = df.agg(F.avg(F.col(rule.column)).alias("m")).first()["m"]
        return mean is None or p["min"] <= mean <= p["max"]
    raise ValueError(f"{rule.kind} is not an aggregate rule")
