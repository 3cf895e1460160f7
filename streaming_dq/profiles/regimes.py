"""Regimes: the sets of profiles that can be active together, as bitmasks.

The engine judges every row under the profiles active on the row's own event date, in one Spark pass. It tags
each row with a *regime mask* (:func:`regime_column`; bit ``i`` set = ``profiles[i]`` active) and, knowing in
advance every mask that can occur (:func:`enumerate_regimes`), builds one override expression per regime
instead of one per date. Mask 0 (no profile active) always exists: it is also the regime of a NULL date.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from itertools import pairwise
from typing import TYPE_CHECKING

from streaming_dq.exceptions import ConfigError
from streaming_dq.profiles.profiles import HolidayProfile, Profile, RecurringProfile

if TYPE_CHECKING:
    from pyspark.sql import Column

_MAX_PROFILES = 63  # the mask is a Spark bigint
# Any run of this many days holds every (month, day, weekday), Feb 29 included: the longest wait between two
# occurrences of one combination is 14609 days (Feb 29 on a given weekday, across a skipped century leap year).
# tests/unit/test_profiles_regimes.py recomputes it over a whole 400-year Gregorian cycle.
ALL_WEEKDAY_DATES_WITHIN_DAYS = 14_609
_FIRST_DAY = date.min.toordinal()
_END_DAY = date.max.toordinal() + 1
# Every (month, day) of a leap year, in calendar order; a date's row in the recurring table.
_MONTH_DAYS: tuple[tuple[int, int], ...] = tuple(
    (d.month, d.day) for d in (date.fromordinal(date(2000, 1, 1).toordinal() + i) for i in range(366))
)
_MONTH_DAY_INDEX = {md: i for i, md in enumerate(_MONTH_DAYS)}


@dataclass(frozen=True)
class Regime:
    """One combination of active profiles.

    Attributes:
        mask: Bit ``i`` is set when ``profiles[i]`` (of the list the regime was computed for) is active.
        profiles: The names of the active profiles, in list order.

    Example:
        >>> Regime(0b101, ("Christmas", "Weekends"))
        Regime(mask=5, profiles=('Christmas', 'Weekends'))
    """

    mask: int
    profiles: tuple[str, ...] = ()


NO_PROFILE = Regime(0, ())
"""The regime of a date on which no profile is active, and of a NULL date."""


def regime_from_mask(profiles: Sequence[Profile], mask: int) -> Regime:
    """Return the :class:`Regime` of ``mask`` with the names of its profiles.

    Raises:
        ValueError: ``mask`` is negative or has a bit set beyond the last profile.

    Example:
        >>> regime_from_mask([RecurringProfile("Weekends", weekdays=["sat", "sun"])], 1)
        Regime(mask=1, profiles=('Weekends',))
    """
    if mask < 0 or mask >> len(profiles):
        raise ConfigError(f"regime mask {mask:#b} does not fit {len(profiles)} profiles")
    return Regime(mask, tuple(p.name for i, p in enumerate(profiles) if mask >> i & 1))


def active_profiles(profiles: Sequence[Profile], regime: Regime) -> list[Profile]:
    """Return the profiles of ``regime``, in list order.

    Raises:
        ValueError: the mask has a bit set beyond the last profile.
    """
    regime_from_mask(profiles, regime.mask)
    return [p for i, p in enumerate(profiles) if regime.mask >> i & 1]


def regime_of(profiles: Sequence[Profile], target_date: date | None) -> Regime:
    """Return the regime of ``target_date``: which profiles are active on it. ``None`` is :data:`NO_PROFILE`.

    Example:
        >>> weekends = RecurringProfile("Weekends", weekdays=["sat", "sun"])
        >>> regime_of([weekends], date(2025, 12, 20))
        Regime(mask=1, profiles=('Weekends',))
        >>> regime_of([weekends], None)
        Regime(mask=0, profiles=())
    """
    if target_date is None:
        return NO_PROFILE
    mask = sum(1 << i for i, p in enumerate(profiles) if p.is_active(target_date))
    return regime_from_mask(profiles, mask)


def enumerate_regimes(profiles: Sequence[Profile]) -> tuple[Regime, ...]:
    """Return every regime that occurs on some date, mask 0 first, then by ascending mask.

    Exact for :class:`HolidayProfile` and :class:`RecurringProfile` over the whole ``datetime.date`` range:
    holiday bounds cut the calendar into segments with a constant holiday set; a segment of at least 14609 days
    meets every (month, day, weekday) a recurring profile can look at, any shorter one is scanned day by day. Another
    profile type is known only through ``is_active``, so then every date from 1970 (or a year before the
    earliest holiday) to 2100 (or a year after the latest holiday) is scanned, and only that window is exact.

    Example:
        >>> from datetime import date
        >>> xmas = HolidayProfile("Christmas 2025", date(2025, 12, 20), date(2026, 1, 5))
        >>> weekends = RecurringProfile("Weekends", weekdays=["sat", "sun"])
        >>> [r.mask for r in enumerate_regimes([xmas, weekends])]
        [0, 1, 2, 3]
    """
    if len(profiles) > _MAX_PROFILES:
        raise ConfigError(f"at most {_MAX_PROFILES} profiles are supported, got {len(profiles)}")
    if all(isinstance(p, HolidayProfile | RecurringProfile) for p in profiles):
        masks = _calendar_masks(profiles)
    else:
        masks = _scanned_masks(profiles)
    masks.add(0)
    return tuple(regime_from_mask(profiles, m) for m in sorted(masks))


def _holiday_bounds(profiles: Sequence[Profile]) -> list[tuple[int, int, int]]:
    """Return ``(bit, first day, day after the last)`` ordinals of every holiday profile."""
    return [
        (1 << i, p.start_date.toordinal(), p.end_date.toordinal() + 1)
        for i, p in enumerate(profiles)
        if isinstance(p, HolidayProfile)
    ]


def _recurring_table(profiles: Sequence[Profile]) -> list[list[int]]:
    """Return ``table[month-day index][weekday]``: the mask of the recurring profiles active there."""
    table = [[0] * 7 for _ in _MONTH_DAYS]
    for i, profile in enumerate(profiles):
        if not isinstance(profile, RecurringProfile):
            continue
        weekdays = sorted(profile.active_weekdays)
        for row, (month, day) in zip(table, _MONTH_DAYS, strict=True):
            if profile.is_month_day_active(month, day):
                for weekday in weekdays:
                    row[weekday] |= 1 << i
    return table


def _calendar_masks(profiles: Sequence[Profile]) -> set[int]:
    holidays = _holiday_bounds(profiles)
    table = _recurring_table(profiles)
    every_recurring = {mask for row in table for mask in row}
    cuts = sorted({_FIRST_DAY, _END_DAY} | {b for _, s, e in holidays for b in (s, e)})
    masks: set[int] = set()
    for first, end in pairwise(cuts):
        holiday_mask = sum(bit for bit, start, stop in holidays if start <= first < stop)
        if every_recurring == {0}:
            masks.add(holiday_mask)
        elif end - first >= ALL_WEEKDAY_DATES_WITHIN_DAYS:
            masks.update(holiday_mask | m for m in every_recurring)
        else:
            masks.update(holiday_mask | _table_mask(table, day) for day in _days(first, end))
    return masks


def _days(first: int, end: int) -> Iterable[date]:
    return (date.fromordinal(day) for day in range(first, end))


def _table_mask(table: list[list[int]], day: date) -> int:
    return table[_MONTH_DAY_INDEX[(day.month, day.day)]][day.weekday()]


def _scanned_masks(profiles: Sequence[Profile]) -> set[int]:
    holidays = _holiday_bounds(profiles)
    first = min([date(1970, 1, 1).toordinal()] + [start - 366 for _, start, _ in holidays])
    end = max([date(2101, 1, 1).toordinal()] + [stop + 366 for _, _, stop in holidays])
    first, end = max(first, _FIRST_DAY), min(end, _END_DAY)
    return {regime_of(profiles, day).mask for day in _days(first, end)}


def regime_column(profiles: Sequence[Profile], date_col: Column) -> Column:
    """Return the regime mask of each row's date as a non-NULL integer column (0 for a NULL date).

    The mask is ``sum(when(active_i, 1 << i))`` over ``profiles`` and agrees with :func:`regime_of`. It is an
    ``int`` for up to 31 profiles, a ``bigint`` beyond. Building it needs an active SparkContext. The bits of
    date-set profiles (a public-holiday calendar's holidays) come from one table look-up per row
    (:func:`date_set_mask_column`), not from one date-set test per holiday.

    Raises:
        ValueError: more than 63 profiles.

    Example:
        >>> df.withColumn("_dq_regime", regime_column(profiles, F.col("event_date")))  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    from streaming_dq.profiles.public_holidays import DateSetProfile

    if len(profiles) > _MAX_PROFILES:
        raise ConfigError(f"at most {_MAX_PROFILES} profiles are supported, got {len(profiles)}")
    date_sets = {i: p.dates for i, p in enumerate(profiles) if isinstance(p, DateSetProfile)}
    table = date_set_mask_column(date_sets, date_col)
    mask = F.lit(0) if table is None else table
    for i, profile in enumerate(profiles):
        if table is None or i not in date_sets:
            mask = mask + F.when(profile.active_column(date_col), F.lit(1 << i)).otherwise(F.lit(0))
    return mask


#: The byte table of :func:`date_set_mask_column` holds an index below 128 (one UTF-8 byte per day).
_MAX_TABLE_MASKS = 128


def date_set_mask_column(date_sets: dict[int, frozenset[date]], date_col: Column) -> Column | None:
    """The bits of the date-set profiles ``{bit: dates}`` active on each row's date, by one table look-up.

    The days from the first to the last date of any set are a byte string with one byte per day: the index
    of that day's mask among the distinct masks. A row reads its day's byte (``substring`` of a binary
    literal: constant time) and the mask at that index; a day outside the table, or a NULL date, has none.
    Before this, each holiday was a ``date IN (...)`` over its 130 years of dates, evaluated per row and per
    holiday, and the plan carried every date as text: a US calendar made every batch 3-5x slower.

    Returns None when there is no date set, or more distinct masks than one byte can index (the caller then
    tests each set on its own).
    """
    from pyspark.sql import functions as F

    days = {d.toordinal() for dates in date_sets.values() for d in dates}
    if not days:
        return None
    first, last = min(days), max(days)
    by_day = [0] * (last - first + 1)
    for bit, dates in date_sets.items():
        for d in dates:
            by_day[d.toordinal() - first] |= 1 << bit
    masks = sorted(set(by_day) | {0})
    if len(masks) > _MAX_TABLE_MASKS:
        return None
    index = {m: i for i, m in enumerate(masks)}
    table = bytes(index[m] for m in by_day)
    offset = F.unix_date(date_col) - F.lit(date.fromordinal(first).toordinal() - _EPOCH_ORDINAL)
    byte = F.lit(table).substr(
        offset + F.lit(1), F.lit(1)
    )  # Column positions: F.substring takes them from 4.0
    at = F.ascii(byte.cast("string")) + F.lit(1)
    inside = (offset >= F.lit(0)) & (offset < F.lit(len(table)))
    return F.when(inside, F.element_at(F.array(*[F.lit(m) for m in masks]), at)).otherwise(F.lit(0))


_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
