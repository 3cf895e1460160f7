"""Rules suggested from data: profile a sample in one pass, write a check set a person edits and validates.

:func:`profile` runs ONE aggregation over (a sample of) a DataFrame (and one more over the candidate keys, to
count their distinct values exactly): per column the NULL count, an
approximate distinct count (HLL), min and max (numbers, dates, timestamps, string lengths), up to
``max_values + 1`` distinct values, and for strings the share of values matching each known format (e-mail,
UUID, IPv4, ISO date, timestamp, URL, JSON) and ISO code list. :func:`suggest_checks` turns the profile into
check configs of this catalog, each with the observation it came from; :func:`render_yaml` writes them as
a YAML checks file with one comment per rule.

The suggestions describe the sample, not the truth: each says what it was derived from so a person can keep,
widen or drop it, and every one passes on the data it came from (the tests hold it to that), but for one
thing: a value set allows only the values the data supports (each seen in at least ``min_share`` of the rows,
and twice), and names the rarer ones it left out (``eur``, ``XXX``: the faults a sample holds), so the rows
holding those fail it.
Suggested bounds are written as ``warning`` so a new check set quarantines nothing until someone promotes
it; NULL checks and keys are ``critical``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import yaml
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from streaming_dq.checks.formats import EMAIL_PATTERN, UUID_PATTERN
from streaming_dq.checks.json_values import is_json
from streaming_dq.checks.network import IPV4_PATTERN
from streaming_dq.compat.spark import try_to_date
from streaming_dq.compat.versions import has
from streaming_dq.core.sql import col, quote

__all__ = ["ColumnProfile", "Suggestion", "profile", "render_yaml", "suggest_checks"]

#: String formats recognised, each as (check name, Spark predicate builder on the column).
_FORMATS: dict[str, Any] = {
    "email-format-check": lambda c: c.rlike(EMAIL_PATTERN),
    "uuid-format-check": lambda c: c.rlike(UUID_PATTERN),
    "ipv4-format-check": lambda c: c.rlike(IPV4_PATTERN),
    "url-format-check": lambda c: c.rlike(r"(?i)^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?([/?#]\S*)?$"),
    # documents, not bare numbers; is_json parses with try_parse_json (Spark 4.0+: not suggested on 3.5)
    **({"json-format-check": lambda c: is_json(c) & c.rlike(r"^\s*[\[{]")} if has("variant") else {}),
    "date-format-check": lambda c: try_to_date(c, "yyyy-MM-dd").isNotNull(),
    "timestamp-format-check": lambda c: F.try_to_timestamp(c, F.lit("yyyy-MM-dd HH:mm:ss")).isNotNull(),
}


@dataclass
class ColumnProfile:
    """What one pass saw of one column."""

    name: str
    kind: str  # numeric / string / temporal / boolean / array / other
    type_name: str
    rows: int
    nulls: int
    distinct: int  # approximate (HLL, ~5%)
    minimum: Any = None
    maximum: Any = None
    min_length: int | None = None
    max_length: int | None = None
    values: list[Any] | None = None  # the distinct values, when at most max_values
    counts: dict[Any, int] = field(default_factory=dict)  # rows per value in ``values``
    unique: bool = False  # every value distinct (counted exactly, for candidate keys only)
    formats: dict[str, int] = field(default_factory=dict)  # check name -> matching values
    codes: dict[str, int] = field(default_factory=dict)  # check name -> values in the code list

    @property
    def present(self) -> int:
        return self.rows - self.nulls


@dataclass(frozen=True)
class Suggestion:
    """One suggested check and the observation it was derived from."""

    config: dict[str, Any]
    reason: str


def _kind(dtype: T.DataType) -> str:
    if isinstance(dtype, T.NumericType):
        return "numeric"
    if isinstance(dtype, T.StringType):
        return "string"
    if isinstance(dtype, T.DateType | T.TimestampType | T.TimestampNTZType):
        return "temporal"
    if isinstance(dtype, T.BooleanType):
        return "boolean"
    if isinstance(dtype, T.ArrayType):
        return "array"
    return "other"


def _code_lists() -> dict[str, frozenset[str]]:
    from streaming_dq.checks.codes import country_codes, currency_codes

    return {"country-code-check": country_codes("alpha-2"), "currency-code-check": currency_codes("alpha-3")}


#: Columns a source adds that are not the data's: Spark's malformed-record column and the gate's own.
INTERNAL_PREFIXES = ("__dq", "_dq_")
DEFAULT_SKIPPED = ("_corrupt_record",)


def profile(
    df: DataFrame,
    *,
    sample_rows: int | None = 100_000,
    max_values: int = 20,
    skip: Sequence[str] = DEFAULT_SKIPPED,
) -> list[ColumnProfile]:
    """Profile (the first ``sample_rows`` rows of) ``df`` in one Spark job, and one more over the candidate
    keys and the value sets (exact distinct counts, rows per value).

    Args:
        df: The data.
        sample_rows: Rows to look at (None: all of them).
        max_values: Columns with at most this many distinct values get their value set.
        skip: Columns that are not data (a source's malformed-record and unknown-fields columns); columns
            named ``_dq_*`` are never profiled.
    """
    data = df.limit(sample_rows) if sample_rows else df
    fields = [
        f for f in data.schema.fields if not f.name.startswith(INTERNAL_PREFIXES) and f.name not in skip
    ]
    codes = _code_lists()
    aggs = [F.count(F.lit(1)).alias("__rows")]
    for i, f in enumerate(fields):
        c, kind = col(f.name), _kind(f.dataType)
        aggs += [F.count_if(c.isNull()).alias(f"n{i}"), F.approx_count_distinct(c).alias(f"d{i}")]
        if kind in ("numeric", "temporal"):
            aggs += [F.min(c).alias(f"lo{i}"), F.max(c).alias(f"hi{i}")]
        if kind in ("numeric", "string", "temporal", "boolean"):
            aggs.append(F.slice(F.collect_set(c), 1, max_values + 1).alias(f"v{i}"))
        if kind == "string":
            aggs += [F.min(F.length(c)).alias(f"ll{i}"), F.max(F.length(c)).alias(f"lh{i}")]
            aggs += [F.count_if(pred(c)).alias(f"f{i}_{k}") for k, pred in enumerate(_FORMATS.values())]
            aggs += [
                F.count_if(
                    F.expr(f"{quote(f.name)} IN ({', '.join(repr(x) for x in sorted(values))})")
                ).alias(f"c{i}_{k}")
                for k, values in enumerate(codes.values())
            ]
    row = data.agg(*aggs).first()
    assert row is not None
    rows = int(row["__rows"])
    out = []
    for i, f in enumerate(fields):
        kind = _kind(f.dataType)
        p = ColumnProfile(f.name, kind, f.dataType.simpleString(), rows, int(row[f"n{i}"]), int(row[f"d{i}"]))
        if kind in ("numeric", "temporal"):
            p.minimum, p.maximum = row[f"lo{i}"], row[f"hi{i}"]
        if f"v{i}" in row.asDict():
            values = row[f"v{i}"]
            p.values = sorted(values, key=str) if values is not None and len(values) <= max_values else None
        if kind == "string":
            p.min_length, p.max_length = row[f"ll{i}"], row[f"lh{i}"]
            p.formats = {name: int(row[f"f{i}_{k}"]) for k, name in enumerate(_FORMATS)}
            p.codes = {name: int(row[f"c{i}_{k}"]) for k, name in enumerate(codes)}
        out.append(p)
    # Candidate keys (no NULL, ~every value distinct, not floating point) are counted exactly in one more
    # job over those columns only: the HLL count alone suggested a key that had duplicates.
    candidates = [
        p
        for p, f in zip(out, fields, strict=True)
        if p.nulls == 0
        and rows > 0
        and p.distinct >= 0.97 * rows
        and not isinstance(f.dataType, T.FloatType | T.DoubleType)
        and p.kind in ("numeric", "string", "temporal")
    ]
    sets = [p for p in out if p.values and p.kind in ("string", "numeric")]
    if candidates or sets:
        exact = data.agg(
            F.lit(0).alias("__none"),
            *[F.count_distinct(col(p.name)).alias(f"k{i}") for i, p in enumerate(candidates)],
            *[
                F.count_if(col(p.name) == F.lit(v)).alias(f"s{i}_{k}")
                for i, p in enumerate(sets)
                for k, v in enumerate(p.values or ())
            ],
        ).first()
        assert exact is not None
        for i, p in enumerate(candidates):
            p.unique = int(exact[f"k{i}"]) == rows
        for i, p in enumerate(sets):
            p.counts = {v: int(exact[f"s{i}_{k}"]) for k, v in enumerate(p.values or ())}
    return out


def _fmt(n: int) -> str:
    return f"{n:,}"


def _outward(value: Any, up: bool) -> Any:
    """A numeric bound rounded outward to two significant digits' grid, so it does not sit on one row."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if value == 0:
        return 0
    step = 10 ** max(math.floor(math.log10(abs(value))) - 1, 0)
    rounded = (math.ceil(value / step) if up else math.floor(value / step)) * step
    return int(rounded) if isinstance(value, int) or float(rounded).is_integer() else rounded


def suggest_checks(
    profiles: Sequence[ColumnProfile],
    *,
    max_values: int = 20,
    min_rows_for_sets: int = 30,
    min_share: float = 0.01,
) -> list[Suggestion]:
    """Check configs derived from ``profiles`` (see the module docstring for what each rule comes from).

    A value set allows the values seen in at least ``min_share`` of the non-NULL rows (and at least twice):
    rarer ones are left out and named in its reason.
    """
    out: list[Suggestion] = []
    for p in profiles:
        slug = p.name.lower().replace(" ", "_").replace(".", "_")
        if p.rows == 0:
            continue
        if p.nulls == 0:
            out.append(
                Suggestion(
                    {"check": "null-check", "check-id": f"{slug}-present", "columns": [p.name]},
                    f"no NULL in {_fmt(p.rows)} rows",
                )
            )
        if p.present == 0:
            continue
        share = f"{_fmt(p.present)} non-NULL values"
        if p.unique and p.rows >= min_rows_for_sets:
            out.append(
                Suggestion(
                    {"check": "unique-key-check", "check-id": f"{slug}-unique", "columns": [p.name]},
                    f"{_fmt(p.rows)} distinct values in {_fmt(p.rows)} rows: a candidate key",
                )
            )
        if p.kind == "numeric" and p.minimum is not None:
            lo, hi = _outward(p.minimum, up=False), _outward(p.maximum, up=True)
            out.append(
                Suggestion(
                    {
                        "check": "numeric-between-check",
                        "check-id": f"{slug}-range",
                        "columns": [p.name],
                        "min-value": lo,
                        "max-value": hi,
                        "inclusive": [True, True],
                        "severity": "warning",
                    },
                    f"values from {p.minimum} to {p.maximum} in {share}; bounds rounded outward",
                )
            )
        if p.kind == "temporal" and p.maximum is not None and _in_past(p.maximum):
            out.append(
                Suggestion(
                    {
                        "check": "not-in-future-check",
                        "check-id": f"{slug}-not-future",
                        "columns": [p.name],
                        "severity": "warning",
                    },
                    f"latest value {p.maximum} lies in the past",
                )
            )
        if p.kind == "string":
            found = next((name for name, n in p.formats.items() if n == p.present), None)
            code = next((name for name, n in p.codes.items() if n == p.present), None)
            if found is not None:
                out.append(
                    Suggestion(
                        {"check": found, "check-id": f"{slug}-format", "columns": [p.name]},
                        f"all {share} match the {found.removesuffix('-format-check')} form",
                    )
                )
            elif code is not None and p.distinct > 1:
                out.append(
                    Suggestion(
                        {"check": code, "check-id": f"{slug}-code", "columns": [p.name]},
                        f"all {share} are {code.removesuffix('-code-check')} codes",
                    )
                )
            if p.min_length is not None and found is None:
                out.append(
                    Suggestion(
                        {
                            "check": "string-length-between-check",
                            "check-id": f"{slug}-length",
                            "column": p.name,
                            "min-length": p.min_length,
                            "max-length": p.max_length,
                            "severity": "warning",
                        },
                        f"lengths from {p.min_length} to {p.max_length} characters in {share}",
                    )
                )
            if p.min_length == 0:
                pass  # empty strings are present: no empty-check
            elif p.min_length is not None:
                out.append(
                    Suggestion(
                        {"check": "empty-check", "check-id": f"{slug}-not-empty", "columns": [p.name]},
                        f"no empty string in {share}",
                    )
                )
        if p.values is not None and p.kind in ("string", "numeric") and p.present >= min_rows_for_sets:
            found_set = _value_set(p, slug, share, max_values, min_share)
            if found_set is not None:
                out.append(found_set)
    return out


def _value_set(
    p: ColumnProfile, slug: str, share: str, max_values: int, min_share: float
) -> Suggestion | None:
    """An ``is-contained-in-check`` of the values the data supports, or None when fewer than two are."""
    values = p.values or []
    counts = p.counts or {v: p.present for v in values}  # without counts every value counts as supported
    floor = max(2, math.ceil(min_share * p.present))
    allowed = [v for v in values if counts.get(v, 0) >= floor]
    rare = [v for v in values if counts.get(v, 0) < floor]
    if not 1 < len(allowed) <= max_values or len(allowed) >= p.present / 2:
        return None
    reason = f"{len(allowed)} distinct values in {share}"
    if rare:
        left = ", ".join(
            f"{v} ({_fmt(counts.get(v, 0))} {'row' if counts.get(v, 0) == 1 else 'rows'})" for v in rare
        )
        reason += f"; left out, each in fewer than {_fmt(floor)} rows: {left}"
    config = {
        "check": "is-contained-in-check",
        "check-id": f"{slug}-known-values",
        "allowed-values": {p.name: allowed},
        "severity": "warning",
    }
    return Suggestion(config, reason)


def _shown(value: Any) -> str:
    """A value as a reason names it: quoted when it is empty or has spaces at its ends."""
    if isinstance(value, str) and (not value or value != value.strip()):
        return repr(value)
    return str(value)


def _in_past(value: Any) -> bool:
    now = datetime.now()
    if isinstance(value, datetime):
        return value.replace(tzinfo=None) <= now
    if isinstance(value, date):
        return value <= now.date()
    return False


def render_yaml(suggestions: Sequence[Suggestion], *, source: str, rows: int) -> str:
    """A YAML checks file (``checks: [...]``), one comment per rule saying what it was derived from."""
    lines = [
        f"# Checks suggested by `streaming-dq suggest` from {_fmt(rows)} rows of {source}.",
        "# Each rule says what it was derived from: keep, widen or drop it, then `streaming-dq validate` this file.",
        "# Bounds and value sets are warnings; promote them to critical once they hold for your data.",
        "checks:",
    ]
    for s in suggestions:
        lines.append(f"  # {s.reason}")
        text = yaml.safe_dump(
            _plain(s.config), default_flow_style=True, sort_keys=False, width=10_000
        ).strip()
        lines.append(f"  - {text}")
    return "\n".join(lines) + "\n"


def _plain(value: Any) -> Any:
    """Values YAML writes and reads back unchanged (dates as ISO text, decimals as floats)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if hasattr(value, "is_finite"):  # Decimal
        return float(value)
    return value
