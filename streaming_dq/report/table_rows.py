"""What the pass and quarantine tables hold, for the report: rows per day of their own event time, the
quarantine's rows by state and reason with samples, and the rows quarantined as keys seen in an earlier batch.
Read with delta-rs one record batch at a time (memory holds the tallies, the samples and one record batch)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.compute as pc

from streaming_dq.checks.stream_keys import FIRST_SEEN_COLUMN
from streaming_dq.exceptions import ConfigError
from streaming_dq.release.browse import masked, row_states
from streaming_dq.report.data import DayRows, QuarantineReason, QuarantineSummary, Repeat, ReportOptions

if TYPE_CHECKING:
    from streaming_dq.tables import DeltaTarget

__all__ = ["quarantine_summary", "rows_by_day", "timestamp_literal"]


def timestamp_literal(t: datetime) -> str:
    """A UTC timestamp literal DataFusion compares with a ``timestamp[us, UTC]`` column."""
    return f"arrow_cast('{t.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%f')}', 'Timestamp(Microsecond, Some(\"UTC\"))')"


def rows_by_day(
    passed: DeltaTarget,
    quarantined: DeltaTarget | None,
    gate: str,
    event_time: str,
    zone: ZoneInfo,
    since: datetime | None,
) -> list[DayRows]:
    """Rows per day of their own event time (in ``zone``), counted in the pass and quarantine tables one record
    batch of the event-time column at a time; with ``since``, the days from its day on (a pass table records
    no validation time). Rows without an event time are one entry with day None."""
    from deltalake import DeltaTable

    from streaming_dq.tables.reading import sql_literal
    from streaming_dq.tables.storage import delta_rs_options

    def count(target: DeltaTarget, predicate: str | None) -> Counter[date | None]:
        table = DeltaTable(target.uri, storage_options=delta_rs_options(target.storage_options) or None)
        tally: Counter[date | None] = Counter()
        for batch in pa.RecordBatchReader.from_stream(table.scan(columns=[event_time], predicate=predicate)):
            values = batch.column(0)
            if pa.types.is_timestamp(values.type):
                local = values.cast(pa.timestamp("us", tz="UTC")).cast(pa.timestamp("us", tz=zone.key))
                days = pc.strftime(local, format="%Y-%m-%d")
            else:
                days = values.cast(pa.date32()).cast(pa.string())
            if since is not None:
                cut = pa.scalar(since.astimezone(zone).strftime("%Y-%m-%d"))
                days = days.filter(pc.fill_null(pc.greater_equal(days, cut), True))
            for day, n in zip(*_value_counts(days), strict=True):
                tally[date.fromisoformat(day) if day is not None else None] += n
        return tally

    tally = count(passed, None)
    rows = count(quarantined, f"_dq_gate = {sql_literal(gate)}") if quarantined is not None else Counter()
    days = sorted(set(tally) | set(rows), key=lambda d: (d is None, d or date.min))
    return [DayRows(d, tally[d], rows[d]) for d in days]


def _value_counts(values: pa.Array) -> tuple[list[str | None], list[int]]:
    counted = pc.value_counts(values)
    return counted.field("values").to_pylist(), counted.field("counts").to_pylist()


def quarantine_summary(target: DeltaTarget, gate: str, options: ReportOptions) -> QuarantineSummary:
    """The quarantine table's rows of ``gate`` (validated since ``options.since``): by state, the top reasons
    with a few sample rows each, one record batch at a time."""
    from deltalake import DeltaTable

    from streaming_dq.engine.result import ERRORS_COLUMN
    from streaming_dq.sink.schemas import GATE_COLUMN, RAW_COLUMN, VALIDATION_TS_COLUMN
    from streaming_dq.tables.reading import sql_literal
    from streaming_dq.tables.storage import delta_rs_options

    table = DeltaTable(target.uri, storage_options=delta_rs_options(target.storage_options) or None)
    schema = pa.schema(table.schema().to_arrow())
    unknown = [c for c in options.mask if c not in schema.names]
    if unknown:
        raise ConfigError(f"the quarantine table has no column {unknown[0]!r} to mask", field_path="--mask")
    predicate = f"{GATE_COLUMN} = {sql_literal(gate)}"
    if options.since is not None:
        predicate += f" AND {VALIDATION_TS_COLUMN} >= {timestamp_literal(options.since)}"
    states: Counter[str] = Counter()
    counts: Counter[tuple[str, str, str]] = Counter()
    samples: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    hide = (*options.mask, RAW_COLUMN) if options.mask else ()
    total = 0
    repeats: list[Repeat] = []
    in_batch = 0
    for record_batch in pa.RecordBatchReader.from_stream(table.scan(predicate=predicate)):
        if not record_batch.num_rows:
            continue
        part = (
            pa.Table.from_batches([record_batch]).select(schema.names).cast(schema)
        )  # scans yield view types
        total += part.num_rows
        states.update(row_states(part))
        if FIRST_SEEN_COLUMN in schema.names:
            found, here = _repeats(part, hide)
            repeats.extend(found)
            in_batch += here
        errors = part.column(ERRORS_COLUMN).combine_chunks()
        flat = pc.list_flatten(errors)
        parents = pc.list_parent_indices(errors).to_pylist()
        ids = pc.struct_field(flat, "check-id").to_pylist()
        types = pc.struct_field(flat, "check").to_pylist()
        severities = pc.struct_field(flat, "severity").to_pylist()
        wanted: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
        for parent, reason in zip(parents, zip(ids, types, severities, strict=True), strict=True):
            counts[reason] += 1
            if len(samples[reason]) < options.samples:
                wanted[parent].append(reason)
        if wanted:
            rows = masked(part.take(sorted(wanted)).to_pylist(), hide)
            for index, row in zip(sorted(wanted), rows, strict=True):
                for reason in wanted[index]:
                    if len(samples[reason]) < options.samples:
                        samples[reason].append(row)
    ranked = counts.most_common()
    reasons = [QuarantineReason(i, t, s, n, samples[(i, t, s)]) for (i, t, s), n in ranked[: options.top]]
    return QuarantineSummary(
        rows=total,
        states={s: states.get(s, 0) for s in ("quarantined", "released", "discarded")},
        reasons=reasons,
        other_reasons=len(ranked) - len(reasons),
        columns=schema.names,
        masked=list(options.mask),
        repeats=sorted(repeats, key=lambda r: (r.batch_id, r.key), reverse=True)[: options.top],
        repeats_total=len(repeats),
        repeats_in_batch=in_batch,
    )


def _repeats(part: pa.Table, hide: Sequence[str]) -> tuple[list[Repeat], int]:
    """The rows of ``part`` whose first-seen pointer names an earlier batch, and how many name their own."""
    from streaming_dq.sink.schemas import BATCH_ID_COLUMN

    found: list[Repeat] = []
    here = 0
    masked_keys = bool(hide)  # a key holds column values: a report that masks columns shows no key
    for batch_id, pointers in zip(
        part.column(BATCH_ID_COLUMN).to_pylist(), part.column(FIRST_SEEN_COLUMN).to_pylist(), strict=True
    ):
        for p in pointers or ():
            if p["late"]:
                continue
            if p["batch_id"] == batch_id:  # seen earlier in its own micro-batch
                here += 1
                continue
            found.append(
                Repeat(p["check_id"], "***" if masked_keys else p["key"], batch_id, p["batch_id"],
                       p["event_time"], p["origin"])
            )  # fmt: skip
    return found, here
