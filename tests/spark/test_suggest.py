"""`streaming-dq suggest`: rules derived from a sample in one pass, each with its reason, that the sample passes."""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from streaming_dq import BatchDQEngine
from streaming_dq.cli.main import app
from streaming_dq.config.loader import load_check_file
from streaming_dq.suggest import profile, suggest_checks

pytestmark = pytest.mark.spark

SCHEMA = "id int, email string, status string, amount double, country string, created timestamp, note string, payload string"


def orders(n: int = 400, seed: int = 7) -> list[tuple]:
    rng = random.Random(seed)
    t0 = datetime(2025, 3, 1)
    return [
        (
            i,
            f"user{i}@example.com",
            rng.choice(["new", "paid", "shipped"]),
            round(rng.uniform(1, 480), 2),
            rng.choice(["DE", "FR", "US", "JP"]),
            t0 + timedelta(minutes=i),
            None if i % 5 == 0 else rng.choice(["", "gift", "fragile item"]),
            f'{{"order": {i}}}',
        )
        for i in range(n)
    ]


def test_suggest_writes_a_check_set_the_sample_passes(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "orders"
    df = spark.createDataFrame(orders(), SCHEMA)
    df.coalesce(1).write.parquet(str(data))
    out = tmp_path / "checks.yaml"
    result = CliRunner().invoke(app, ["suggest", "--data", str(data), "--format", "parquet", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "from 400 rows to" in result.output
    text = out.read_text()
    checks = {c["check-id"]: c for c in yaml.safe_load(text)["checks"]}
    assert {
        "id-present",
        "id-unique",
        "email-format",
        "status-known-values",
        "country-code",
        "amount-range",
        "created-not-future",
        "payload-format",
    } <= set(checks)
    assert "note-present" not in checks and "note-not-empty" not in checks  # NULLs and empty strings seen
    assert checks["status-known-values"]["allowed-values"] == {"status": ["new", "paid", "shipped"]}
    assert checks["amount-range"]["min-value"] <= 1 and checks["amount-range"]["max-value"] >= 480
    assert checks["payload-format"]["check"] == "json-format-check"
    # every rule has its reason on the line above it
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("  - "):
            assert lines[i - 1].startswith("  # "), line
    assert "# no NULL in 400 rows" in text and "a candidate key" in text

    loaded = load_check_file(out)  # the file validates as it is
    outcome = BatchDQEngine(loaded.check_set, fail_levels=["critical", "warning"]).run_batch(df)
    failed = [(r["id"], [e["check-id"] for e in r["_dq_errors"]]) for r in outcome.fail_df().collect()]
    assert failed == []  # a rule derived from the data accepts the data
    assert all(a.status == "passed" for a in outcome.outcome.aggregate_results)


def test_the_profile_sees_nulls_lengths_formats_and_values(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(orders(60), SCHEMA)
    profiles = {p.name: p for p in profile(df, max_values=5)}
    assert profiles["id"].unique and not profiles["amount"].unique
    note, email, status = profiles["note"], profiles["email"], profiles["status"]
    assert note.nulls == 12 and note.min_length == 0 and note.max_length == len("fragile item")
    assert email.formats["email-format-check"] == 60 and email.values is None  # 60 distinct > 5
    assert status.values == ["new", "paid", "shipped"]
    assert profiles["country"].codes["country-code-check"] == 60
    suggestions = suggest_checks(list(profiles.values()), max_values=5)
    assert all(s.reason for s in suggestions)
    empty = suggest_checks(profile(df.limit(0)))
    assert empty == []


def test_suggest_from_a_gate_config_reads_typed_columns_skips_internal_ones_and_names_rare_values(
    spark, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """#42: suggest on the orders job typed `amount` and `order_ts` as strings, suggested checks on Spark's
    `_corrupt_record`, and allowed `currency: [BTC, EUR, GBP, USD, XXX, eur]`."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from jobs_support import make_orders_job

    config, _ = make_orders_job(tmp_path, batches=3, rows=400, seed=3)
    out = tmp_path / "checks.yaml"
    result = CliRunner().invoke(app, ["suggest", "--config", str(config), "-o", str(out)])  # data: its source
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    checks = {c["check-id"]: c for c in yaml.safe_load(text)["checks"]}
    assert not [c for c in checks if "corrupt" in c], sorted(checks)
    assert checks["amount-range"]["check"] == "numeric-between-check"  # typed by the config's schema
    assert "order_ts-not-future" in checks
    allowed = checks["currency-known-values"]["allowed-values"]["currency"]
    assert set(allowed) <= {"EUR", "GBP", "USD", "CHF", "SEK", "PLN", "DKK"}, allowed  # only real currencies
    lines = text.splitlines()
    reason = lines[next(i for i, line in enumerate(lines) if "currency-known-values" in line) - 1]
    assert re.search(r"; left out, each in fewer than \d+ rows: .*(XXX|eur|BTC) \(\d+ rows?\)", reason), (
        reason
    )
