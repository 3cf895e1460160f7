"""Shared helpers of the gate tests (no tests here): landing files, streams through a gate, table reads."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from streaming_dq.config.check_set import CheckSet
from streaming_dq.core.outcome import BatchOutcome
from streaming_dq.sink import QualityGate, with_corrupt_record_column
from streaming_dq.tables import read_table

SCHEMA = "id BIGINT, amount DOUBLE, ts TIMESTAMP, note STRING"

BASE_CHECKS: list[dict[str, Any]] = [
    {"check": "null-check", "check-id": "id-present", "columns": ["id"]},
    {"check": "null-check", "check-id": "amount-present", "columns": ["amount"]},
    {"check": "null-check", "check-id": "note-present", "columns": ["note"], "severity": "warning"},
    {"check": "row-count-min-check", "check-id": "not-empty", "min-count": 1, "severity": "warning"},
]


def row(
    i: int, *, amount: float | None = 1.0, note: str | None = "ok", ts: str | None = "auto"
) -> dict[str, Any]:
    """One input record; ``ts="auto"`` gives a distinct timestamp on 2025-03-01."""
    stamp = f"2025-03-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z" if ts == "auto" else ts
    return {"id": i, "amount": amount, "ts": stamp, "note": note}


def land(directory: Path, name: str, records: Iterable[Mapping[str, Any] | str]) -> Path:
    """Write one JSON-lines file (a string is written verbatim: a malformed line)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class Recorder:
    """A metrics sink that remembers what the gate reported."""

    def __init__(self) -> None:
        self.batches: list[BatchOutcome] = []
        self.failures: list[tuple[int, BaseException]] = []
        self.windows: list[Any] = []

    def record_batch(self, outcome: BatchOutcome) -> None:
        self.batches.append(outcome)

    def record_failure(self, batch_id: int, error: BaseException) -> None:
        self.failures.append((batch_id, error))

    def record_windows(self, windows: Any) -> None:
        self.windows.extend(windows)

    def total(self, field: str) -> int:
        return sum(getattr(o, field) for o in self.batches if o.status == "committed")


def make_gate(
    tmp: Path, checks: Sequence[Mapping[str, Any]] | CheckSet = BASE_CHECKS, **kw: Any
) -> QualityGate:
    kw.setdefault("pass_table", str(tmp / "pass"))
    kw.setdefault("quarantine_table", str(tmp / "quarantine"))
    kw.setdefault("results_table", str(tmp / "results"))
    kw.setdefault("metrics", Recorder())
    kw.setdefault("writer", "delta-rs")
    check_set = checks if isinstance(checks, CheckSet) else CheckSet.from_dicts(checks)
    return QualityGate(kw.pop("name", "orders"), check_set, **kw)


def stream(spark: Any, landing: Path, schema: str = SCHEMA, *, corrupt: bool = True, **options: str) -> Any:
    """A JSON file stream over ``landing`` (with the corrupt-record column unless ``corrupt=False``)."""
    struct = with_corrupt_record_column(schema) if corrupt else schema
    reader = spark.readStream.format("json").schema(struct)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(landing))


def run(gate: QualityGate, sdf: Any, checkpoint: Path, timeout: float = 120) -> Any:
    """Drain the stream with ``availableNow``; returns the finished query (raises what the query raised)."""
    query = gate.start(sdf, checkpoint_location=str(checkpoint), trigger={"availableNow": True})
    query.awaitTermination(timeout)
    if query.isActive:
        query.stop()
        raise AssertionError("stream did not finish in time")
    exc = query.exception()
    if exc is not None:
        raise exc
    return query


def table(path: Path | str) -> pa.Table:
    return read_table(str(path))


def ids(path: Path | str) -> list[int]:
    """Ids of a table's rows (quarantine rows of a drifted batch are read from their JSON in ``_dq_raw``)."""
    t = table(path)
    out = []
    for rid, raw in zip(
        t.column("id").to_pylist(),
        t.column("_dq_raw").to_pylist() if "_dq_raw" in t.column_names else [None] * t.num_rows,
        strict=True,
    ):
        if rid is None and raw is not None:
            rid = _json_id(raw)
        out.append(rid)
    return out


def _json_id(raw: str) -> Any:
    try:
        return json.loads(raw).get("id")
    except (ValueError, AttributeError):
        return None  # a malformed record's raw text


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def batch_writers(table: Path) -> dict[int, str]:
    """Which engine committed each batch to a Delta table, from its log: the version of each commit's app
    transaction -> ``delta-rs`` or ``Apache-Spark`` (the product part of the commit's ``engineInfo``)."""
    found: dict[int, str] = {}
    for log in sorted((table / "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
        engine = next(a["commitInfo"].get("engineInfo", "") for a in actions if "commitInfo" in a)
        for action in actions:
            if "txn" in action:
                found[int(action["txn"]["version"])] = engine.split("/")[0].split(":")[0]
    return found
