"""Produce card-payment events to a Kafka topic for the payments_kafka job, with realistic faults.

    python jobs/payments_kafka/generate.py --bootstrap 127.0.0.1:9092 --topic payments --messages 2000 --seed 3

Every message is a JSON object keyed by its payment id (so one payment's events stay in one partition):
``payment_id, merchant_id, amount, currency, card_country, status, paid_at``. Faults, at about these rates:
a missing payment id or merchant (1% each), a negative or zero amount (1%), an unknown currency (1%), an
event time two days late (1%), a field the schema does not declare (``risk_score``, 2%); and, per 500
messages, one of each undecodable message: cut-off JSON, bytes that are not UTF-8, an empty value and a NULL
value (a tombstone). The gate must account for every message: undecodable ones go to quarantine with their
offsets. The same arguments always produce the same messages (event times start at ``--start``).
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

CURRENCIES = ("EUR", "EUR", "EUR", "USD", "GBP", "CHF")
COUNTRIES = ("DE", "FR", "NL", "AT", "US", "GB", "CH")
STATUSES = ("authorized", "authorized", "captured", "captured", "captured", "refunded")
UNDECODABLE = (b'{"payment_id": "P-cut", "amount": 12.', b"\xff\xfe\x00\x81 not utf-8", b"", None)


@dataclass
class Summary:
    """What was produced."""

    messages: int = 0
    undecodable: int = 0
    faults: dict[str, int] = field(default_factory=dict)

    def count(self, fault: str) -> None:
        self.faults[fault] = self.faults.get(fault, 0) + 1


def payments(
    count: int, seed: int, start: datetime
) -> tuple[list[tuple[bytes | None, bytes | None]], Summary]:
    """``count`` (key, value) messages and what is wrong with them; deterministic."""
    rng = random.Random(seed)
    summary = Summary()
    out: list[tuple[bytes | None, bytes | None]] = []
    for n in range(count):
        if n % 500 in (101, 223, 347, 461):
            value = UNDECODABLE[(n % 500 > 101) + (n % 500 > 223) + (n % 500 > 347)]
            out.append((f"P-{seed}-{n}".encode(), value))
            summary.undecodable += 1
            continue
        event: dict[str, Any] = {
            "payment_id": f"P-{seed}-{n:07d}",
            "merchant_id": f"M{rng.randrange(1, 400):04d}",
            "amount": round(rng.lognormvariate(3.2, 1.0), 2),
            "currency": rng.choice(CURRENCIES),
            "card_country": rng.choice(COUNTRIES),
            "status": rng.choice(STATUSES),
            "paid_at": (start + timedelta(seconds=15 * n)).isoformat().replace("+00:00", "Z"),
        }
        roll = rng.random()
        for fault, rate in (("missing-payment-id", 0.01), ("missing-merchant", 0.01), ("bad-amount", 0.01),
                            ("unknown-currency", 0.01), ("late", 0.01), ("undeclared-field", 0.02)):  # fmt: skip
            if roll < rate:
                summary.count(fault)
                _apply(event, fault, rng)
                break
            roll -= rate
        key = event["payment_id"] or f"missing-{n}"
        out.append((key.encode(), json.dumps(event, ensure_ascii=False).encode()))
    summary.messages = count
    return out, summary


def _apply(event: dict[str, Any], fault: str, rng: random.Random) -> None:
    if fault == "missing-payment-id":
        event["payment_id"] = None
    elif fault == "missing-merchant":
        del event["merchant_id"]
    elif fault == "bad-amount":
        event["amount"] = rng.choice((0.0, -event["amount"]))
    elif fault == "unknown-currency":
        event["currency"] = "XXX"
    elif fault == "late":
        paid = datetime.fromisoformat(event["paid_at"].replace("Z", "+00:00"))
        event["paid_at"] = (paid - timedelta(days=2)).isoformat().replace("+00:00", "Z")
    elif fault == "undeclared-field":
        event["risk_score"] = round(rng.random(), 3)


def produce(
    bootstrap: str, topic: str, count: int, *, seed: int = 3, start: datetime | None = None
) -> Summary:
    """Produce the messages to ``topic`` and wait until the broker has them all."""
    from confluent_kafka import Producer

    messages, summary = payments(count, seed, start or datetime(2025, 12, 22, 8, tzinfo=UTC))
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "enable.idempotence": True})
    for key, value in messages:
        producer.produce(topic, key=key, value=value)
        producer.poll(0)
    left = producer.flush(60)
    if left:
        raise RuntimeError(f"{left} messages were not delivered to {bootstrap}")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", required=True, help="host:port of a broker")
    parser.add_argument("--topic", default="payments")
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    summary = produce(args.bootstrap, args.topic, args.messages, seed=args.seed)
    print(json.dumps(asdict(summary)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
