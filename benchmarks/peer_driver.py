"""Run ONE tool on one batch and print its timings as one JSON line (a subprocess of ``benchmarks.peers``).

``python benchmarks/peer_driver.py --tool sparkdq --data batch.parquet --checks 20 --reps 2 --out DIR``

Runs in the tool's own virtual environment, so it imports only pyspark, pyarrow, deltalake, the tool, and
``benchmarks.rules`` (found through the repository root on ``sys.path``). Each repetition reads the Parquet
batch afresh and does the tool's equivalent of the gate's work; one untimed warm-up run comes first.

Work per tool (``work`` in the output):

* ``split+write``: validate, then write the passing and the failing rows to two Delta tables with delta-rs
  (the same writer as the gate) and read the summary: ``streaming_dq-gate``, ``streaming_dq-engine``,
  ``sparkdq``, ``naive``, ``dqx``.
* ``validate``: validate and collect the per-check results only (the tool has no row split):
  ``streaming_dq-validate``, ``cuallee``, ``gx``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.rules import Rule, aggregate_ok, any_failed, row_predicate, rule_mix, to_check_dict  # noqa: E402

SPARKDQ_NAMES = [
    "null-check",
    "numeric-between-check",
    "regex-match-check",
    "is-contained-in-check",
    "string-length-between-check",
    "row-count-min-check",
    "completeness-ratio-check",
    "row-count-between-check",
]


def build_spark() -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("streaming-dq-peer")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def to_arrow(df: Any) -> Any:
    """``toArrow()`` (pyspark 4) or the Arrow batches behind ``toPandas`` (pyspark 3.5)."""
    import pyarrow as pa

    if hasattr(df, "toArrow"):
        return df.toArrow()
    return pa.Table.from_batches(df._collect_as_arrow(), schema=None)


def write(df: Any, path: Path) -> int:
    from deltalake import write_deltalake

    table = to_arrow(df)
    write_deltalake(str(path), table, mode="append")
    return int(table.num_rows)


def compatible_checks(n: int) -> list[dict[str, Any]]:
    """The rule mix as SparkDQ-compatible configs (a mean check becomes a row-count-between check)."""
    return [to_check_dict(r, SPARKDQ_NAMES) for r in rule_mix(n)]


# -- tools ---------------------------------------------------------------------------------------------------


def sd_gate(spark: Any, n: int) -> Callable[[Any, Path, int], dict[str, Any]]:
    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.sink import QualityGate

    checks = CheckSet.from_dicts(compatible_checks(n))

    def run(df: Any, out: Path, rep: int) -> dict[str, Any]:
        gate = QualityGate(
            "peer-bench",
            checks,
            pass_table=str(out / "pass"),
            quarantine_table=str(out / "fail"),
            writer="delta-rs",
        )
        gate(df, 0)
        return {}

    return run


def sd_engine(spark: Any, n: int) -> Callable[[Any, Path, int], dict[str, Any]]:
    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.engine.batch import BatchDQEngine

    engine = BatchDQEngine(CheckSet.from_dicts(compatible_checks(n)))

    def run(df: Any, out: Path, rep: int) -> dict[str, Any]:
        result = engine.run_batch(df)
        passed = write(result.pass_df(), out / "pass")
        failed = write(result.fail_df(), out / "fail")
        summary = result.summary()
        return {"pass_rows": passed, "fail_rows": failed, "summary_failed": summary.failed_records}

    return run


def sd_validate(spark: Any, n: int) -> Callable[[Any, Path, int], dict[str, Any]]:
    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.engine.batch import BatchDQEngine

    engine = BatchDQEngine(CheckSet.from_dicts(compatible_checks(n)))

    def run(df: Any, out: Path, rep: int) -> dict[str, Any]:
        result = engine.run_batch(df)
        summary = result.summary()
        return {"summary_failed": summary.failed_records}

    return run


def sparkdq(spark: Any, n: int) -> Callable[[Any, Path, int], dict[str, Any]]:
    from sparkdq.engine import BatchDQEngine
    from sparkdq.management import CheckSet

    check_set = CheckSet()
    check_set.add_checks_from_dicts(compatible_checks(n))
    engine = BatchDQEngine(check_set)

    def run(df: Any, out: Path, rep: int) -> dict[str, Any]:
        result = engine.run_batch(df)
        passed = write(result.pass_df(), out / "pass")
        failed = write(result.fail_df(), out / "fail")
        summary = result.summary()
        return {"pass_rows": passed, "fail_rows": failed, "summary_failed": summary.failed_records}

    return run


def naive(spark: Any, n: int) -> Callable[[Any, Path, int], dict[str, Any]]:
    """One Spark action per rule, then the two filtered views written: what a hand-rolled validator does."""
    rules = rule_mix(n)

    def run(df: Any, out: Path, rep: int) -> dict[str, Any]:
        violations = {}
        for rule in rules:
            if rule.is_row:
                violations[rule.rule_id] = df.filter(row_predicate(rule)).count()
            else:
                violations[rule.rule_id] = 0 if aggregate_ok(rule, df) else 1
        failed = any_failed(rules)
        passed_rows = write(df.filter(~failed), out / "pass")
        failed_rows = write(df.filter(failed), out / "fail")
        return {"pass_rows": passed_rows, "fail_rows": failed_rows}

    return run


def cuallee(spark: Any, n: int) -> Callable[[Any, Path, int], dict[str, Any]]:
    from cuallee import Check, CheckLevel

    def build() -> Any:
        check = Check(CheckLevel.WARNING, "bench")
        for rule in rule_mix(n):
            _cuallee_rule(check, rule)
        return check

    def run(df: Any, out: Path, rep: int) -> dict[str, Any]:
        rows = build().validate(df).collect()
        return {"results": len(rows)}

    return run


def _cuallee_rule(check: Any, rule: Rule) -> None:
    c, p = rule.column, rule.params
    if rule.kind == "not_null":
        check.is_complete(c)
    elif rule.kind == "between":
        check.is_between(c, (p["min"], p["max"]))
    elif rule.kind == "regex":
        check.has_pattern(c, p["pattern"])
    elif rule.kind == "in_set":
        check.is_contained_in(c, tuple(p["values"]))
    elif rule.kind == "str_len":
        check.satisfies(c, f"length({c}) between {p['min']} and {p['max']}")
    elif rule.kind == "completeness":
        check.is_complete(c, pct=p["min_ratio"])
    elif rule.kind == "mean_between":
        check.has_mean(c, (p["min"] + p["max"]) / 2)
    elif rule.kind == "row_count_min":
        pass  # cuallee reports the row count with every result; it has no row-count rule


def gx(spark: Any, n: int) -> Callable[[Any, Path, int], dict[str, Any]]:
    import great_expectations as gx_

    context = gx_.get_context(mode="ephemeral")
    asset = context.data_sources.add_spark(name="bench").add_dataframe_asset(name="orders")
    definition = asset.add_batch_definition_whole_dataframe("batch")
    suite = context.suites.add(gx_.ExpectationSuite(name="bench"))
    for rule in rule_mix(n):
        suite.add_expectation(_gx_expectation(gx_.expectations, rule))

    def run(df: Any, out: Path, rep: int) -> dict[str, Any]:
        batch = definition.get_batch(batch_parameters={"dataframe": df})
        result = batch.validate(suite)
        return {"results": len(result.results)}

    return run


def _gx_expectation(E: Any, rule: Rule) -> Any:
    c, p = rule.column, rule.params
    if rule.kind == "not_null":
        return E.ExpectColumnValuesToNotBeNull(column=c)
    if rule.kind == "between":
        return E.ExpectColumnValuesToBeBetween(column=c, min_value=p["min"], max_value=p["max"])
    if rule.kind == "regex":
        return E.ExpectColumnValuesToMatchRegex(column=c, regex=p["pattern"])
    if rule.kind == "in_set":
        return E.ExpectColumnValuesToBeInSet(column=c, value_set=p["values"])
    if rule.kind == "str_len":
        return E.ExpectColumnValueLengthsToBeBetween(column=c, min_value=p["min"], max_value=p["max"])
    if rule.kind == "completeness":
        return E.ExpectColumnValuesToNotBeNull(column=c, mostly=p["min_ratio"])
    if rule.kind == "mean_between":
        return E.ExpectColumnMeanToBeBetween(column=c, min_value=p["min"], max_value=p["max"])
    return E.ExpectTableRowCountToBeBetween(min_value=p["min"])


def dqx(spark: Any, n: int) -> Callable[[Any, Path, int], dict[str, Any]]:
    from unittest.mock import MagicMock

    from databricks.labs.dqx.engine import DQEngine
    from databricks.sdk import WorkspaceClient

    # DQEngine verifies workspace connectivity when it is built (``ws.clusters.select_spark_version()``);
    # there is no Databricks workspace here, so it gets a mocked client, as DQX's own docs do for local runs.
    engine = DQEngine(MagicMock(spec=WorkspaceClient), spark=spark)
    checks = [_dqx_check(r) for r in rule_mix(n)]

    def run(df: Any, out: Path, rep: int) -> dict[str, Any]:
        valid, invalid = engine.apply_checks_by_metadata_and_split(df, checks)
        return {"pass_rows": write(valid, out / "pass"), "fail_rows": write(invalid, out / "fail")}

    return run


def _dqx_check(rule: Rule) -> dict[str, Any]:
    c, p = rule.column, rule.params
    fn: str
    args: dict[str, Any]
    if rule.kind == "not_null":
        fn, args = "is_not_null", {"column": c}
    elif rule.kind == "between":
        fn, args = "is_in_range", {"column": c, "min_limit": p["min"], "max_limit": p["max"]}
    elif rule.kind == "regex":
        fn, args = "regex_match", {"column": c, "regex": p["pattern"]}
    elif rule.kind == "in_set":
        fn, args = "is_in_list", {"column": c, "allowed": [f"'{v}'" for v in p["values"]]}
    elif rule.kind == "str_len":
        fn, args = (
            "sql_expression",
            {"expression": f"{c} IS NULL OR length({c}) BETWEEN {p['min']} AND {p['max']}"},
        )
    elif rule.kind == "row_count_min":
        fn, args = "is_aggr_not_less_than", {"column": "*", "aggr_type": "count", "limit": p["min"]}
    elif rule.kind == "completeness":
        fn, args = "is_aggr_not_less_than", {"column": c, "aggr_type": "count", "limit": 0}
    else:
        fn, args = "is_aggr_not_greater_than", {"column": c, "aggr_type": "avg", "limit": p["max"]}
    return {"name": rule.rule_id, "criticality": "error", "check": {"function": fn, "arguments": args}}


TOOLS: dict[str, Callable[[Any, int], Callable[[Any, Path, int], dict[str, Any]]]] = {
    "streaming_dq-gate": sd_gate,
    "streaming_dq-engine": sd_engine,
    "streaming_dq-validate": sd_validate,
    "sparkdq": sparkdq,
    "naive": naive,
    "cuallee": cuallee,
    "gx": gx,
    "dqx": dqx,
}


def versions(tool: str) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for dist in (
        "pyspark",
        "deltalake",
        "pyarrow",
        "sparkdq",
        "cuallee",
        "great-expectations",
        "databricks-labs-dqx",
    ):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            continue
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--tool", required=True, choices=sorted(TOOLS))
    p.add_argument("--data", required=True, type=Path)
    p.add_argument("--checks", type=int, default=20)
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--out", required=True, type=Path)
    args = p.parse_args(argv)
    report: dict[str, Any] = {"tool": args.tool, "versions": versions(args.tool), "ok": False}
    stage = "setup"
    try:
        spark = build_spark()
        fn = TOOLS[args.tool](spark, args.checks)
        seconds = []
        for rep in range(-1, args.reps):
            stage = "warm-up" if rep < 0 else f"repetition {rep}"
            out = args.out / f"rep{rep + 1}"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            df = spark.read.parquet(str(args.data))
            started = time.perf_counter()
            info = fn(df, out, rep)
            elapsed = time.perf_counter() - started
            if rep >= 0:
                seconds.append(elapsed)
            report["info"] = info
            shutil.rmtree(out, ignore_errors=True)
        report.update(ok=True, seconds=seconds)
    except BaseException as exc:
        report["error"] = f"{stage}: {type(exc).__name__}: {exc}".strip()[:2000]
        report["traceback"] = traceback.format_exc()[-4000:]
    print("PEER-RESULT " + json.dumps(report, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
