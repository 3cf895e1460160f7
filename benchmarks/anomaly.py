"""``python -m benchmarks.anomaly [--seed N] [--days 365]``: precision and recall of each anomaly band.

A generated year of daily order counts with a weekly pattern (quiet weekends, a busy Friday), a slow trend,
+-4% noise, US public holidays at 35% of the usual volume, and planted anomalies (spikes x1.7 and drops x0.45
on days drawn at random, never on or right after a holiday). The rows go through the gate's window accumulator
(the decision the gate makes when a day closes, without Spark: rows as Arrow event times, 7 days per batch)
once per band (``relative: 0.2``, ``stddevs: 3``, ``mad: 3.5``; ``baseline: {windows: 4, season: weekly}``),
with ``min-width`` 0 and 0.1, without and with a public-holiday profile that disables the check on the
holidays. A day counts as flagged
when its verdict is ``failed``; precision = planted among flagged, recall = flagged among planted.

Writes ``benchmarks/results/anomaly.json`` and prints a table (docs/anomaly.md quotes it).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa

from streaming_dq.checks.anomaly import AnomalyCheck
from streaming_dq.core.outcome import WindowOutcome
from streaming_dq.core.scope import WindowScope
from streaming_dq.metrics.accumulator import WindowAccumulator
from streaming_dq.metrics.calendar import UTC_MICROS, max_event_time
from streaming_dq.metrics.window_states import EVENT_TIME_COLUMN, batch_window_states
from streaming_dq.profiles import check_id
from streaming_dq.profiles.public_holidays import PublicHolidayProfile, expand_profiles

RESULTS = Path(__file__).with_name("results")
#: Mon..Sun volume of an ordinary week.
WEEKLY = (100, 104, 108, 112, 135, 70, 45)
BANDS = {"relative": 0.2, "stddevs": 3.0, "mad": 3.5}
#: Without a floor, and with the band at least +-10% of the expected value wide.
MIN_WIDTHS = (0.0, 0.1)
CHECK_ID = "daily-orders"


@dataclass
class Year:
    """A generated year of daily counts: what was planted where."""

    start: date
    counts: dict[date, int]
    spikes: set[date] = field(default_factory=set)
    drops: set[date] = field(default_factory=set)
    holidays: set[date] = field(default_factory=set)

    @property
    def planted(self) -> set[date]:
        return self.spikes | self.drops


def generate_year(
    seed: int = 1, *, days: int = 365, start: date = date(2025, 1, 6), anomalies: int = 12
) -> Year:
    """A year of daily counts (see the module docs); the same seed gives the same year."""
    import holidays as holiday_calendars

    rng = random.Random(seed)
    calendar = holiday_calendars.country_holidays("US", years=range(start.year, start.year + 2))
    dates = [start + timedelta(days=i) for i in range(days)]
    year = Year(start, {}, holidays={d for d in dates if d in calendar})
    near_holiday = {d + timedelta(days=k) for d in year.holidays for k in (-1, 0, 1)}
    candidates = [d for d in dates[35:] if d not in near_holiday]  # after 5 weeks of history
    planted = sorted(rng.sample(candidates, anomalies))
    year.spikes = set(planted[::2])
    year.drops = set(planted[1::2])
    for i, d in enumerate(dates):
        level = WEEKLY[d.weekday()] * (1 + 0.3 * i / days)
        level *= 1 + rng.uniform(-0.04, 0.04)
        if d in year.holidays:
            level *= 0.35
        if d in year.spikes:
            level *= 1.7
        if d in year.drops:
            level *= 0.45
        year.counts[d] = max(round(level), 0)
    return year


def anomaly_check(band: str, width: float, **options: Any) -> AnomalyCheck:
    return AnomalyCheck(
        CHECK_ID,
        metric="row-count",
        scope=WindowScope(window="1 day"),
        windows=4,
        season="weekly",
        band=band,  # type: ignore[arg-type]
        width=width,
        **options,
    )


def holiday_profile() -> list[object]:
    """US public holidays disable the check (and keep those days out of later baselines)."""
    return expand_profiles(
        [PublicHolidayProfile("US holidays", country="US", rules=[check_id(CHECK_ID).disable()])]
    )


def day_rows(day: date, count: int) -> list[datetime]:
    """``count`` event times spread over the day (UTC)."""
    midnight = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return [midnight + timedelta(seconds=(k + 0.5) * 86400 / max(count, 1)) for k in range(count)]


def batches(year: Year, days_per_batch: int) -> list[list[datetime]]:
    """The year's rows in batches of ``days_per_batch`` days, then one row the day after to close the last."""
    days = sorted(year.counts)
    out = [
        [t for d in days[i : i + days_per_batch] for t in day_rows(d, year.counts[d])]
        for i in range(0, len(days), days_per_batch)
    ]
    last = days[-1] + timedelta(days=1)
    out.append([datetime(last.year, last.month, last.day, 0, 1, tzinfo=UTC)])
    return out


def feed(acc: WindowAccumulator, batch_id: int, times: Sequence[datetime]) -> list[WindowOutcome]:
    """One batch through the accumulator; its final verdicts."""
    table = pa.table({EVENT_TIME_COLUMN: pa.array(times, UTC_MICROS)})
    states = batch_window_states(list(acc.checks.values()), table, timezone=acc.timezone)
    return list(acc.update(batch_id, states, max_event_time(table.column(EVENT_TIME_COLUMN))).closed)


def run_year(
    year: Year, check: AnomalyCheck, *, profiles: Sequence[object] = (), days_per_batch: int = 7
) -> dict[date, WindowOutcome]:
    """Every day's final verdict."""
    acc = WindowAccumulator("bench", [check], profiles=profiles, timezone="UTC")
    verdicts: dict[date, WindowOutcome] = {}
    for batch_id, times in enumerate(batches(year, days_per_batch)):
        for w in feed(acc, batch_id, times):
            verdicts[w.window_start.date()] = w
    return verdicts


def score(year: Year, verdicts: dict[date, WindowOutcome]) -> dict[str, Any]:
    flagged = {d for d, w in verdicts.items() if w.status == "failed"}
    hits = flagged & year.planted
    return {
        "flagged": len(flagged),
        "planted": len(year.planted),
        "true_positives": len(hits),
        "precision": len(hits) / len(flagged) if flagged else 1.0,
        "recall": len(hits) / len(year.planted) if year.planted else 1.0,
        "flagged_holidays": len(flagged & year.holidays),
        "skipped": sum(1 for w in verdicts.values() if w.status == "skipped"),
    }


def stream_year(
    year: Year, check: AnomalyCheck, workdir: Path, *, restart_after: int, days_per_file: int = 14
) -> dict[str, Any]:
    """The year through a real gate on Spark: one landing file per ``days_per_file`` days (a micro-batch each),
    the public-holiday profile, a metrics and a results table, and a new gate object (a restarted job) after
    ``restart_after`` files. Returns the day -> (status, expected) of the results table and timings."""
    import json as json_lib
    import os
    import shutil

    from benchmarks.harness import build_spark
    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.sink import QualityGate, with_corrupt_record_column
    from streaming_dq.tables import read_table

    shutil.rmtree(workdir, ignore_errors=True)
    landing = workdir / "landing"
    landing.mkdir(parents=True)
    spark = build_spark("streaming-dq-anomaly-year")
    checks = CheckSet([check])
    profiles = [PublicHolidayProfile("US holidays", country="US", rules=[check_id(CHECK_ID).disable()])]
    days = sorted(year.counts)
    groups = [days[i : i + days_per_file] for i in range(0, len(days), days_per_file)]
    schema = with_corrupt_record_column("id BIGINT, ts TIMESTAMP")

    def land(k: int) -> None:
        stamps = [t for d in groups[k] for t in day_rows(d, year.counts[d])]
        if k == len(groups) - 1:  # one row the day after the last closes the last day
            last = days[-1] + timedelta(days=1)
            stamps.append(datetime(last.year, last.month, last.day, 0, 1, tzinfo=UTC))
        path = landing / f"part-{k:03d}.json"
        lines = (json_lib.dumps({"id": k * 100_000 + i, "ts": t.isoformat()}) for i, t in enumerate(stamps))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.utime(path, (1_700_000_000 + k, 1_700_000_000 + k))

    def run(files: range) -> float:
        for k in files:
            land(k)
        gate = QualityGate(
            "year", checks, pass_table=str(workdir / "pass"), quarantine_table=str(workdir / "quarantine"),
            results_table=str(workdir / "results"), metrics_table=str(workdir / "metrics"), writer="delta-rs",
            routing="driver", event_time="ts", timezone="UTC", profiles=profiles,
        )  # fmt: skip
        source = (
            spark.readStream.format("json")
            .schema(schema)
            .option("maxFilesPerTrigger", "1")
            .load(str(landing))
        )
        began = time.perf_counter()
        query = gate.start(source, checkpoint_location=str(workdir / "chk"), trigger={"availableNow": True})
        query.awaitTermination()
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))
        return time.perf_counter() - began

    first = run(range(restart_after))
    second = run(range(restart_after, len(groups)))
    results = read_table(str(workdir / "results")).to_pylist()
    verdicts = {
        r["window_start"].date(): (r["status"], r["expected_value"])
        for r in sorted(results, key=lambda r: r["batch_id"])
        if r["kind"] == "window" and r["status"] != "provisional"
    }
    spark.stop()
    return {"verdicts": verdicts, "batches": len(groups), "seconds": [round(first, 1), round(second, 1)]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument(
        "--stream",
        action="store_true",
        help="also run the year through a real gate on Spark, restarted mid-year",
    )
    args = parser.parse_args(argv)
    year = generate_year(args.seed, days=args.days)
    if args.stream:
        return _stream(year, args.seed)
    rows: list[dict[str, Any]] = []
    for band, width in BANDS.items():
        for min_width in MIN_WIDTHS:
            for with_profile in (False, True):
                began = time.perf_counter()
                check = anomaly_check(band, width, min_width=min_width)
                verdicts = run_year(year, check, profiles=holiday_profile() if with_profile else ())
                rows.append(
                    {"band": f"{band}: {width:g}", "min_width": min_width, "holiday_profile": with_profile,
                     **score(year, verdicts), "seconds": round(time.perf_counter() - began, 3)}
                )  # fmt: skip
    print(
        f"{args.days} days, {len(year.planted)} planted anomalies, {len(year.holidays)} US holidays, seed {args.seed}"
    )
    print(
        f"{'band':<16}{'min-width':>9}  {'holidays':<11}{'flagged':>8}{'hits':>6}{'precision':>11}{'recall':>8}"
        f"{'holidays flagged':>18}"
    )
    for r in rows:
        print(
            f"{r['band']:<16}{r['min_width']:>9g}  {'profile' if r['holiday_profile'] else 'none':<11}{r['flagged']:>8}"
            f"{r['true_positives']:>6}{r['precision']:>11.2f}{r['recall']:>8.2f}{r['flagged_holidays']:>18}"
        )
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "anomaly.json"
    out.write_text(json.dumps({"seed": args.seed, "days": args.days, "rows": rows}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


def _stream(year: Year, seed: int) -> int:
    """``--stream``: the year through the gate, compared day by day with the accumulator alone."""
    check = anomaly_check("relative", 0.2)
    streamed = stream_year(year, check, RESULTS.parent / ".work" / "anomaly-year", restart_after=13)
    reference = run_year(year, anomaly_check("relative", 0.2), profiles=holiday_profile())
    alone = {d: (w.status, w.expected_value) for d, w in reference.items()}
    flagged = {d for d, (status, _) in streamed["verdicts"].items() if status == "failed"}
    report = {
        "seed": seed, "days": len(year.counts), "batches": streamed["batches"], "restart_after_batches": 13,
        "judged_days": len(streamed["verdicts"]), "same_verdicts_as_the_accumulator": streamed["verdicts"] == alone,
        "flagged": len(flagged), "planted": len(year.planted), "true_positives": len(flagged & year.planted),
        "flagged_holidays": len(flagged & year.holidays), "seconds_before_and_after_restart": streamed["seconds"],
    }  # fmt: skip
    print(json.dumps(report, indent=2))
    (RESULTS / "anomaly-stream.json").write_text(json.dumps(report, indent=2) + "\n")
    return 0 if report["same_verdicts_as_the_accumulator"] and flagged == year.planted else 1


if __name__ == "__main__":
    raise SystemExit(main())
