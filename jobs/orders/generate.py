"""Write landing files for the orders job: JSON lines with realistic faults, and the customers reference.

    python jobs/orders/generate.py --out jobs/orders/data --batches 5 --rows 500 --seed 7

Writes ``OUT/landing/orders/orders-<seed>-<n>.json`` (one file per micro-batch and day) and
``OUT/reference/customers.csv``. The same arguments always write the same bytes. Faults, at about these
rates: a missing order id, timestamp or customer (1% each), a negative amount (1%), a very large amount
(2%), an unknown currency or status (1% each), an unknown customer (2%), a repeated order id inside a file
(1%), and two malformed lines per file (cut-off JSON, a text amount). Every line is one record: the gate must
account for each, malformed lines included (they go to quarantine).

Each file holds one day of orders, starting at ``--start`` (default 2025-12-18, so the Christmas profile of
``orders.yaml`` is active from the third file on). A day has ``--rows`` lines, except the second day (an
outage: 40%) and Christmas days (half the orders), so the daily volume check fails on the low day and passes
on the holiday days thanks to the profile's multiplier. Run it again with another ``--seed`` to land more files;
customers do not depend on the seed, so the reference stays valid.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streaming_dq.devtools.landing import write_landing_file

HERE = Path(__file__).resolve().parent
CURRENCIES = ("EUR", "EUR", "EUR", "USD", "GBP")
STATUSES = ("placed", "placed", "paid", "paid", "shipped", "cancelled")
CHANNELS = ("web", "web", "app", "store")
COUNTRIES = ("DE", "FR", "NL", "AT", "BE", "IT", "ES")
FIRST_NAMES = ("Ada", "Ben", "Chloé", "Dmitri", "Eva", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Katya")
LAST_NAMES = ("Müller", "Dubois", "de Vries", "Rossi", "García", "Novak", "Schmidt", "Laurent", "Jansen")


@dataclass
class Summary:
    """What was written."""

    files: list[str] = field(default_factory=list)
    records: int = 0
    malformed: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    customers: int = 0

    def count(self, fault: str) -> None:
        self.faults[fault] = self.faults.get(fault, 0) + 1


def customer_id(n: int) -> str:
    return f"C{n:05d}"


def write_customers(path: Path, count: int) -> None:
    """The reference dataset: ``count`` customers, independent of the seed."""
    rng = random.Random(count)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["customer_id", "name", "country", "signup_date"])
        for n in range(1, count + 1):
            name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
            signup = datetime(2021, 1, 1) + timedelta(days=rng.randrange(1500))
            writer.writerow([customer_id(n), name, rng.choice(COUNTRIES), signup.date().isoformat()])


def clean_order(rng: random.Random, order_no: int, ts: datetime, customers: int) -> dict[str, object]:
    items = rng.randint(1, 6)
    return {
        "order_id": f"ORD-{order_no:08d}",
        "order_ts": ts.isoformat().replace("+00:00", "Z"),
        "customer_id": customer_id(rng.randint(1, customers)),
        "amount": round(items * rng.uniform(4.0, 180.0), 2),
        "currency": rng.choice(CURRENCIES),
        "status": rng.choice(STATUSES),
        "channel": rng.choice(CHANNELS),
        "items": items,
    }


#: (cumulative probability, fault): an order gets at most one fault.
FAULTS = (
    (0.01, "missing_order_id"),
    (0.02, "missing_order_ts"),
    (0.03, "missing_customer"),
    (0.04, "negative_amount"),
    (0.06, "large_amount"),
    (0.07, "unknown_currency"),
    (0.08, "unknown_status"),
    (0.10, "unknown_customer"),
    (0.11, "duplicate_order_id"),
)


def add_fault(rng: random.Random, order: dict[str, object], seen_ids: list[str], summary: Summary) -> None:
    """Maybe damage ``order`` in one realistic way (most orders stay clean)."""
    roll = rng.random()
    fault = next((name for threshold, name in FAULTS if roll < threshold), None)
    if fault is None or (fault == "duplicate_order_id" and not seen_ids):
        return
    if fault == "missing_order_id":
        order["order_id"] = None
    elif fault == "missing_order_ts":
        order["order_ts"] = None
    elif fault == "missing_customer":
        order["customer_id"] = None
    elif fault == "negative_amount":
        order["amount"] = -round(rng.uniform(1, 50), 2)
    elif fault == "large_amount":
        order["amount"] = round(rng.uniform(5_001, 25_000), 2)
    elif fault == "unknown_currency":
        order["currency"] = rng.choice(("XXX", "eur", "BTC"))
    elif fault == "unknown_status":
        order["status"] = rng.choice(("lost", "PAID", ""))
    elif fault == "unknown_customer":
        order["customer_id"] = f"C9{rng.randrange(10_000):04d}"
    else:
        order["order_id"] = rng.choice(seen_ids)
    summary.count(fault)


def malformed_line(rng: random.Random, order: dict[str, object]) -> str:
    """A line Spark's JSON reader cannot parse: cut off mid-record, or an amount written as text."""
    text = json.dumps(order, ensure_ascii=False)
    if rng.random() < 0.5:
        return text[: rng.randrange(10, len(text) - 5)]
    return text.replace(f'"amount": {order["amount"]}', f'"amount": "{order["amount"]} EUR"')


def generate(
    out: Path, *, batches: int, rows: int, seed: int, start: datetime, customers: int = 200
) -> Summary:
    """Write ``batches`` files of ``rows`` lines under ``out/landing/orders`` and the customers CSV."""
    rng = random.Random(seed)
    summary = Summary(customers=customers)
    write_customers(out / "reference" / "customers.csv", customers)
    landing = out / "landing" / "orders"
    landing.mkdir(parents=True, exist_ok=True)
    for batch in range(batches):
        day = start + timedelta(days=batch)
        count = day_volume(day, rows, low_day=batch == 1)
        times = sorted(day + timedelta(seconds=rng.randrange(86_400)) for _ in range(count))
        malformed_at = set(rng.sample(range(count), min(2, count)))
        lines: list[str] = []
        seen_ids: list[str] = []
        for i, ts in enumerate(times):
            order = clean_order(rng, seed * 10_000_000 + batch * 100_000 + i, ts, customers)
            if i in malformed_at:
                lines.append(malformed_line(rng, order))
                summary.malformed += 1
                continue
            add_fault(rng, order, seen_ids, summary)
            if isinstance(order["order_id"], str):
                seen_ids.append(order["order_id"])
            lines.append(json.dumps(order, ensure_ascii=False))
        path = landing / f"orders-{seed}-{batch:05d}.json"
        write_landing_file(path, lines)
        summary.files.append(str(path))
        summary.records += len(lines)
    return summary


def day_volume(day: datetime, rows: int, *, low_day: bool) -> int:
    """Orders on ``day``: half during Christmas (Dec 20 - Jan 5), 40% on the low day (an outage), else ``rows``."""
    christmas = (day.month, day.day) >= (12, 20) or (day.month, day.day) <= (1, 5)
    if christmas:
        return max(1, rows // 2)
    if low_day:
        return max(1, rows * 2 // 5)
    return rows


def parse_start(text: str) -> datetime:
    if text == "now":
        return datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=HERE / "data", help="output folder (default: %(default)s)"
    )
    parser.add_argument("--batches", type=int, default=5, help="landing files to write (default: 5)")
    parser.add_argument("--rows", type=int, default=500, help="lines per file (default: 500)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default: 7)")
    parser.add_argument(
        "--customers", type=int, default=200, help="customers in the reference (default: 200)"
    )
    parser.add_argument(
        "--start", default="2025-12-18", help="first day, ISO date or 'now' (default: 2025-12-18)"
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    if args.batches < 1 or args.rows < 3:
        parser.error("--batches must be >= 1 and --rows >= 3")
    summary = generate(
        args.out,
        batches=args.batches,
        rows=args.rows,
        seed=args.seed,
        start=parse_start(args.start),
        customers=args.customers,
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
