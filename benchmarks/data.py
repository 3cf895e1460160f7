"""Deterministic order-like batches, written once as Parquet under ``benchmarks/.work/``.

Each batch is one Parquet file (several row groups, so both local cores share the scan). A few percent of the
rows carry faults the rule mix catches: NULL ids and emails, negative or missing amounts, out-of-range
quantities, unknown currencies and statuses, e-mail addresses and SKUs that violate their pattern.

Only numpy and pyarrow are used here, so peer virtual environments can import this module too.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

CURRENCIES = ["EUR", "USD", "GBP", "CHF"]
STATUSES = ["NEW", "PAID", "SHIPPED", "CANCELLED"]
COUNTRIES = ["DE", "FR", "NL", "US", "GB", "CH", "IT", "ES"]
EPOCH_US = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds
FORMAT_VERSION = 1


def schema() -> pa.Schema:
    """The Arrow schema of every batch (all fields nullable, timestamps tz-aware UTC)."""
    ts = pa.timestamp("us", tz="UTC")
    return pa.schema(
        [
            ("order_id", pa.int64()),
            ("customer_id", pa.int64()),
            ("amount", pa.float64()),
            ("quantity", pa.int32()),
            ("discount", pa.float64()),
            ("currency", pa.string()),
            ("status", pa.string()),
            ("country", pa.string()),
            ("email", pa.string()),
            ("sku", pa.string()),
            ("created_at", ts),
            ("event_time", ts),
        ]
    )


def make_batch(rows: int, batch_index: int, *, seed: int = 20261129) -> pa.Table:
    """One deterministic batch of ``rows`` order rows (same arguments, same bytes)."""
    rng = np.random.default_rng([seed, rows, batch_index])
    ids = np.arange(rows, dtype=np.int64) + batch_index * rows

    def fault(p: float) -> np.ndarray:
        return rng.random(rows) < p

    customer = rng.integers(1, 50_000, rows, dtype=np.int64)
    amount = np.round(rng.gamma(2.0, 60.0, rows), 2)
    amount[fault(0.005)] *= -1
    quantity = rng.integers(1, 20, rows, dtype=np.int32)
    quantity[fault(0.004)] = 0
    discount = np.round(rng.random(rows) * 0.5, 3)
    discount[fault(0.002)] = 1.5
    currency = _pick([*CURRENCIES, "XXX"], np.where(fault(0.004), 4, rng.integers(0, 4, rows)))
    status = _pick([*STATUSES, "UNKNOWN"], np.where(fault(0.003), 4, rng.integers(0, 4, rows)))
    country = _pick([*COUNTRIES, "ZZZ"], np.where(fault(0.003), 8, rng.integers(0, 8, rows)))
    id_text = pc.cast(pa.array(ids), pa.string())
    email = pc.binary_join_element_wise("user", id_text, "@shop.example.com", "")
    bad_email = fault(0.01)
    email = pc.if_else(
        pa.array(bad_email), pc.binary_join_element_wise("user ", id_text, " at shop", ""), email
    )
    sku_num = pc.utf8_lpad(pc.cast(pa.array(rng.integers(0, 1_000_000, rows)), pa.string()), 6, "0")
    sku = pc.binary_join_element_wise("SKU-", sku_num, "")
    sku = pc.if_else(pa.array(fault(0.004)), pc.binary_join_element_wise("SKU-", sku_num, "X", ""), sku)
    created = EPOCH_US + batch_index * 3_600_000_000 + rng.integers(0, 3_600_000_000, rows)
    event = created - rng.integers(0, 600_000_000, rows)
    columns = {
        "order_id": pa.array(ids),
        "customer_id": pa.array(customer, mask=fault(0.01)),
        "amount": pa.array(amount, mask=fault(0.005)),
        "quantity": pa.array(quantity),
        "discount": pa.array(discount),
        "currency": currency,
        "status": status,
        "country": country,
        "email": pc.if_else(pa.array(fault(0.005)), pa.scalar(None, pa.string()), email),
        "sku": sku,
        "created_at": pa.array(created, pa.timestamp("us", tz="UTC")),
        "event_time": pa.array(event, pa.timestamp("us", tz="UTC")),
    }
    return pa.table(columns, schema=schema())


def _pick(values: list[str], indices: np.ndarray) -> pa.Array:
    return pa.array(values, pa.string()).take(pa.array(indices))


def ensure_dataset(root: Path, rows: int, batches: int) -> Path:
    """Write ``batches`` files of ``rows`` rows under ``root/rows-<rows>`` once; return the folder."""
    folder = root / f"rows-{rows}"
    marker = folder / "_dataset.json"
    spec = {"rows": rows, "batches": batches, "format": FORMAT_VERSION}
    if marker.exists() and json.loads(marker.read_text()) == spec:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.parquet"):
        old.unlink()
    row_group = max(1_000, rows // 8)
    for i in range(batches):
        pq.write_table(make_batch(rows, i), folder / f"batch-{i:04d}.parquet", row_group_size=row_group)
    marker.write_text(json.dumps(spec))
    return folder
