"""The landing data of ``streaming-dq demo``: five days of web-shop orders with realistic faults.

Orders land as JSON-lines files, ``batches_per_day`` files per day from Thu 18 to Mon 22 December 2025
(Europe/Berlin), plus a customers CSV the foreign-key check reads. What goes wrong, on purpose:

* single faults on about 10% of the orders: a missing order id, timestamp or customer, a negative or a huge
  amount, an unknown currency or status, a customer id that is not in the reference, and producer retries
  that send an order twice (a duplicate key): the first retry of each file after a day's first is an order of
  the day's previous file, so it arrives in a later micro-batch than its original;
* one malformed line per file (a record cut off mid-way, or an amount written as text);
* the Christmas break: from Sat 20 December the shop gets far fewer orders (the volume drop the Christmas
  profile allows for), and Sun 21 is quieter than even the profile allows;
* a schema drift: from Sun 21 the producer (version 2) sends a new ``coupon_code`` field.

The same arguments always write the same bytes (``random.Random(seed)``; no clock).

Example:
    >>> plan = DemoPlan(rows=600, batches_per_day=2)
    >>> write_customers(tmp / "reference" / "customers.csv", plan)  # doctest: +SKIP
    >>> files = write_landing(tmp / "landing", plan, plan.days[:3])  # doctest: +SKIP
"""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from streaming_dq.devtools.landing import write_landing_file

__all__ = ["DemoDay", "DemoPlan", "LandingFile", "write_customers", "write_landing"]

ZONE = ZoneInfo("Europe/Berlin")
FIRST_DAY = date(2025, 12, 18)
#: Orders of each demo day, as a share of a regular day: the Christmas break starts on Sat 20 December.
VOLUME = (1.0, 1.05, 0.45, 0.3, 0.5)
#: The day producer version 2 (with ``coupon_code``) goes live.
DRIFT_DAY = date(2025, 12, 21)

CURRENCIES = ("EUR", "EUR", "EUR", "EUR", "USD", "GBP")
STATUSES = ("placed", "paid", "paid", "shipped", "shipped", "cancelled")
COUPONS = ("XMAS25", "GIFT10", "FREESHIP")
COUNTRIES = ("DE", "DE", "AT", "CH", "FR", "NL", "PL")
NAMES = ("Ada", "Ben", "Chloé", "Dmitri", "Eva", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Katya", "Lars")

#: ``(cumulative probability, fault)``; an order gets at most one fault.
FAULTS = (
    (0.008, "missing order id"),
    (0.013, "missing timestamp"),
    (0.023, "missing customer"),
    (0.033, "negative amount"),
    (0.048, "huge amount"),
    (0.058, "unknown currency"),
    (0.063, "unknown status"),
    (0.083, "unknown customer"),
    (0.095, "duplicate order id"),
)


@dataclass(frozen=True)
class DemoDay:
    """One demo day: its date, how many orders it gets, and whether producer version 2 sends them."""

    day: date
    orders: int

    @property
    def holiday(self) -> bool:
        """True from the first day of the Christmas profile (Sat 20 December) on."""
        return self.day >= date(2025, 12, 20)

    @property
    def producer_v2(self) -> bool:
        """True when the orders carry the ``coupon_code`` field (the schema drift)."""
        return self.day >= DRIFT_DAY


@dataclass(frozen=True)
class DemoPlan:
    """How much data the demo writes.

    Attributes:
        rows: Orders on a regular day; the Christmas days get a share of it (:data:`VOLUME`).
        batches_per_day: Landing files (micro-batches) per day.
        customers: Customers in the reference CSV.
        seed: The random seed.
    """

    rows: int = 600
    batches_per_day: int = 2
    customers: int = 250
    seed: int = 7

    @property
    def days(self) -> tuple[DemoDay, ...]:
        """The five demo days, 18 to 22 December 2025."""
        return tuple(
            DemoDay(FIRST_DAY + timedelta(days=i), max(2 * self.batches_per_day, round(self.rows * share)))
            for i, share in enumerate(VOLUME)
        )

    @property
    def rows_per_batch(self) -> int:
        """Lines in one landing file of a regular day."""
        return self.rows // self.batches_per_day


@dataclass(frozen=True)
class LandingFile:
    """One landing file as written: its path, day, line count and the faults it carries."""

    path: Path
    day: date
    lines: int
    malformed: int
    faults: Counter[str] = field(default_factory=Counter)


def customer_id(n: int) -> str:
    """The id of customer ``n`` (``C00042``)."""
    return f"C{n:05d}"


def write_customers(path: Path, plan: DemoPlan) -> None:
    """Write the customers reference CSV (``customer_id,name,country,signup_date``)."""
    rng = random.Random(plan.seed + 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["customer_id", "name", "country", "signup_date"])
        for n in range(1, plan.customers + 1):
            signup = date(2021, 1, 1) + timedelta(days=rng.randrange(1700))
            writer.writerow([customer_id(n), rng.choice(NAMES), rng.choice(COUNTRIES), signup.isoformat()])


def _order(rng: random.Random, order_id: str, ts: datetime, plan: DemoPlan, v2: bool) -> dict[str, object]:
    items = rng.randint(1, 5)
    order: dict[str, object] = {
        "order_id": order_id,
        "order_ts": ts.isoformat(timespec="seconds"),
        "customer_id": customer_id(rng.randint(1, plan.customers)),
        "amount": round(items * rng.uniform(6.0, 160.0), 2),
        "currency": rng.choice(CURRENCIES),
        "status": rng.choice(STATUSES),
        "items": items,
    }
    if v2:
        order["coupon_code"] = rng.choice(COUPONS) if rng.random() < 0.3 else None
    return order


def _damage(rng: random.Random, order: dict[str, object]) -> str | None:
    """Maybe break ``order`` in one realistic way; return the fault's name (None: the order stays clean)."""
    roll = rng.random()
    fault = next((name for limit, name in FAULTS if roll < limit), None)
    if fault == "missing order id":
        order["order_id"] = None
    elif fault == "missing timestamp":
        order["order_ts"] = None
    elif fault == "missing customer":
        order["customer_id"] = None
    elif fault == "negative amount":
        order["amount"] = -round(rng.uniform(1, 60), 2)
    elif fault == "huge amount":
        order["amount"] = round(rng.uniform(2_500, 9_000), 2)
    elif fault == "unknown currency":
        order["currency"] = rng.choice(("BTC", "eur", "XXX"))
    elif fault == "unknown status":
        order["status"] = rng.choice(("lost", "PAID", ""))
    elif fault == "unknown customer":
        order["customer_id"] = customer_id(90_000 + rng.randrange(9_999))
    return fault


def _malformed(rng: random.Random, order: dict[str, object]) -> str:
    """A line Spark's JSON reader cannot parse: cut off mid-record, or an amount written as text."""
    text = json.dumps(order, ensure_ascii=False)
    if rng.random() < 0.5:
        return text[: rng.randrange(20, len(text) - 10)]
    return text.replace(f'"amount": {order["amount"]}', f'"amount": "{order["amount"]} EUR"')


def _times(rng: random.Random, day: date, slot: int, slots: int, count: int) -> list[datetime]:
    """``count`` sorted order times in slot ``slot`` of ``slots`` equal parts of ``day`` (Berlin time)."""
    start = datetime.combine(day, time(), ZONE) + timedelta(hours=24 * slot / slots)
    span = int(86_400 / slots)
    return sorted(start + timedelta(seconds=rng.randrange(span)) for _ in range(count))


def _file_lines(
    rng: random.Random, plan: DemoPlan, day: DemoDay, slot: int, count: int, earlier: Sequence[str] = ()
) -> tuple[list[str], Counter[str], list[str]]:
    """A file's lines, its faults, and the orders it sent intact (``earlier``: those of the day's previous file,
    which its first retry repeats)."""
    faults: Counter[str] = Counter()
    lines: list[str] = []
    malformed_at = rng.randrange(count)
    sent: list[str] = []
    retried_earlier = not earlier
    for i, ts in enumerate(_times(rng, day.day, slot, plan.batches_per_day, count)):
        order_id = f"ORD-{day.day:%m%d}-{slot}-{i:05d}"
        order = _order(rng, order_id, ts, plan, day.producer_v2)
        if i == malformed_at:
            lines.append(_malformed(rng, order))
            continue
        fault = _damage(rng, order)
        if fault == "duplicate order id" and not retried_earlier:
            lines.append(
                rng.choice(list(earlier))
            )  # a retry of the previous file's order: a later micro-batch
            retried_earlier = True
        elif fault == "duplicate order id" and sent:
            lines.append(rng.choice(sent))  # a producer retry: the same record sent twice
        else:
            lines.append(json.dumps(order, ensure_ascii=False))
            fault = None if fault == "duplicate order id" else fault
        if fault is None:
            sent.append(lines[-1])
        else:
            faults[fault] += 1
    return lines, faults, sent


def write_landing(folder: Path, plan: DemoPlan, days: Sequence[DemoDay]) -> list[LandingFile]:
    """Write the landing files of ``days`` into ``folder``, one file per batch, each renamed into place.

    Spark lists a file only after the atomic rename, so a half-written file is never read. The random
    stream of a day depends only on the seed and the date, so writing the days in two steps (before and
    after the schema drift) gives the same files as writing them at once.

    Returns:
        The files written, in order.
    """
    folder.mkdir(parents=True, exist_ok=True)
    written: list[LandingFile] = []
    for day in days:
        rng = random.Random(plan.seed * 100_000 + day.day.toordinal())
        base, extra = divmod(day.orders, plan.batches_per_day)
        earlier: list[str] = []
        for slot in range(plan.batches_per_day):
            count = base + (1 if slot < extra else 0)
            lines, faults, earlier = _file_lines(rng, plan, day, slot, count, earlier)
            path = folder / f"orders-{day.day:%Y%m%d}-{slot:02d}.json"
            write_landing_file(path, lines)
            written.append(LandingFile(path, day.day, len(lines), 1, faults))
    return written
