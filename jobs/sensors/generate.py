"""Write landing files for the sensors job: weather-station readings as JSON lines, with realistic faults.

    python jobs/sensors/generate.py --out jobs/sensors/data --batches 6 --rows 400 --seed 11

Writes ``OUT/landing/readings/readings-<seed>-<n>.json`` (one file per micro-batch, ``--rows`` lines each)
and ``OUT/reference/stations.csv``. Every station reports every 10 minutes; a file holds consecutive
reporting rounds. The same arguments always write the same bytes. Faults, at about these rates: a dropped
humidity value (4%), a sensor error sentinel for temperature (-999.9, 1%), humidity above 100% (1%), a
pressure of 0 (1%), an impossible wind speed (1%), a retransmitted reading (same station and time, 2%), an
unknown station (1%), a missing station or timestamp (0.5% each), and two malformed lines per file.

Readings start at ``--start`` (default 2025-11-01T00:00Z; ``now`` puts the last reading at about the current
time, so the freshness check of ``sensors.yaml`` passes).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streaming_dq.devtools.landing import write_landing_file

HERE = Path(__file__).resolve().parent
INTERVAL = timedelta(minutes=10)
REGIONS = ("North Sea coast", "Alpine foothills", "Rhine valley", "Baltic coast", "Central uplands")


@dataclass
class Summary:
    """What was written."""

    files: list[str] = field(default_factory=list)
    records: int = 0
    malformed: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    stations: int = 0

    def count(self, fault: str) -> None:
        self.faults[fault] = self.faults.get(fault, 0) + 1


@dataclass(frozen=True)
class Station:
    station_id: str
    region: str
    elevation_m: int
    base_temp_c: float


def make_stations(count: int) -> list[Station]:
    """The station network; it depends on ``count`` only, not on the seed."""
    rng = random.Random(count)
    return [
        Station(f"WS-{n:03d}", rng.choice(REGIONS), rng.randrange(0, 1800, 10), rng.uniform(2.0, 14.0))
        for n in range(1, count + 1)
    ]


def write_stations(path: Path, stations: list[Station]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["station_id", "region", "elevation_m"])
        for s in stations:
            writer.writerow([s.station_id, s.region, s.elevation_m])


def reading(rng: random.Random, station: Station, ts: datetime) -> dict[str, object]:
    """A plausible reading: a daily temperature cycle, humidity against it, sea-level pressure."""
    hour = ts.hour + ts.minute / 60
    temp = station.base_temp_c + 5 * math.sin((hour - 9) / 24 * 2 * math.pi) + rng.gauss(0, 0.6)
    return {
        "station_id": station.station_id,
        "observed_at": ts.isoformat().replace("+00:00", "Z"),
        "temperature_c": round(temp - station.elevation_m / 150, 1),
        "humidity_pct": round(
            min(100.0, max(5.0, 75 - 2.2 * (temp - station.base_temp_c) + rng.gauss(0, 4))), 1
        ),
        "pressure_hpa": round(1013.25 + rng.gauss(0, 8.0), 1),  # reduced to sea level, as networks report it
        "wind_speed_ms": round(abs(rng.gauss(4.0, 2.5)), 1),
    }


#: (cumulative probability, fault): a reading gets at most one fault.
FAULTS = (
    (0.040, "humidity_dropped"),
    (0.050, "temperature_sentinel"),
    (0.060, "humidity_over_100"),
    (0.070, "pressure_zero"),
    (0.080, "wind_impossible"),
    (0.100, "retransmitted"),
    (0.110, "unknown_station"),
    (0.115, "missing_station"),
    (0.120, "missing_timestamp"),
)


def add_fault(
    rng: random.Random, row: dict[str, object], sent: list[dict[str, object]], summary: Summary
) -> None:
    """Maybe damage ``row`` in one realistic way (most readings stay clean)."""
    roll = rng.random()
    fault = next((name for threshold, name in FAULTS if roll < threshold), None)
    if fault is None or (fault == "retransmitted" and not sent):
        return
    if fault == "humidity_dropped":
        row["humidity_pct"] = None
    elif fault == "temperature_sentinel":
        row["temperature_c"] = -999.9
    elif fault == "humidity_over_100":
        row["humidity_pct"] = round(rng.uniform(100.5, 140.0), 1)
    elif fault == "pressure_zero":
        row["pressure_hpa"] = 0.0
    elif fault == "wind_impossible":
        row["wind_speed_ms"] = rng.choice((-1.0, round(rng.uniform(90, 200), 1)))
    elif fault == "retransmitted":
        earlier = rng.choice(sent)
        row["station_id"], row["observed_at"] = earlier["station_id"], earlier["observed_at"]
    elif fault == "unknown_station":
        row["station_id"] = f"WS-9{rng.randrange(100):02d}"
    elif fault == "missing_station":
        row["station_id"] = None
    else:
        row["observed_at"] = None
    summary.count(fault)


def malformed_line(rng: random.Random, row: dict[str, object]) -> str:
    """A line Spark's JSON reader cannot parse: cut off by a dropped connection, or a unit in a number."""
    text = json.dumps(row)
    if rng.random() < 0.5:
        return text[: rng.randrange(10, len(text) - 5)]
    return text.replace(
        f'"wind_speed_ms": {row["wind_speed_ms"]}', f'"wind_speed_ms": "{row["wind_speed_ms"]} m/s"'
    )


def generate(
    out: Path, *, batches: int, rows: int, seed: int, start: datetime, stations: int = 20
) -> Summary:
    """Write ``batches`` files of ``rows`` lines under ``out/landing/readings`` and the stations CSV."""
    rng = random.Random(seed)
    network = make_stations(stations)
    summary = Summary(stations=stations)
    write_stations(out / "reference" / "stations.csv", network)
    landing = out / "landing" / "readings"
    landing.mkdir(parents=True, exist_ok=True)
    tick = 0
    for batch in range(batches):
        malformed_at = set(rng.sample(range(rows), min(2, rows)))
        lines: list[str] = []
        sent: list[dict[str, object]] = []
        for i in range(rows):
            station = network[tick % len(network)]
            ts = start + INTERVAL * (tick // len(network))
            tick += 1
            row = reading(rng, station, ts)
            if i in malformed_at:
                lines.append(malformed_line(rng, row))
                summary.malformed += 1
                continue
            add_fault(rng, row, sent, summary)
            sent.append(row)
            lines.append(json.dumps(row))
        path = landing / f"readings-{seed}-{batch:05d}.json"
        write_landing_file(path, lines)
        summary.files.append(str(path))
        summary.records += len(lines)
    return summary


def parse_start(text: str, *, batches: int, rows: int, stations: int) -> datetime:
    """``text`` as a UTC time; ``now`` is chosen so that the last reading is about the current time."""
    if text != "now":
        moment = datetime.fromisoformat(text)
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    now -= timedelta(minutes=now.minute % 10)
    return now - INTERVAL * ((batches * rows - 1) // stations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=HERE / "data", help="output folder (default: %(default)s)"
    )
    parser.add_argument("--batches", type=int, default=6, help="landing files to write (default: 6)")
    parser.add_argument("--rows", type=int, default=400, help="lines per file (default: 400)")
    parser.add_argument("--seed", type=int, default=11, help="random seed (default: 11)")
    parser.add_argument("--stations", type=int, default=20, help="stations in the network (default: 20)")
    parser.add_argument(
        "--start",
        default="2025-11-01T00:00:00+00:00",
        help="first reading time, ISO or 'now' (default: %(default)s)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    if args.batches < 1 or args.rows < 3 or args.stations < 1:
        parser.error("--batches and --stations must be >= 1, --rows >= 3")
    summary = generate(
        args.out,
        batches=args.batches,
        rows=args.rows,
        seed=args.seed,
        start=parse_start(args.start, batches=args.batches, rows=args.rows, stations=args.stations),
        stations=args.stations,
    )
    if args.json:
        print(json.dumps(asdict(summary), indent=2))
        return
    faults = ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in sorted(summary.faults.items()))
    print(
        f"wrote {len(summary.files)} files, {summary.records} records ({summary.malformed} malformed) to {args.out}"
    )
    print(f"faults: {faults}")


if __name__ == "__main__":
    main()
