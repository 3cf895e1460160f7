"""Event dates: the calendar date of an event in the gate's time zone, which is what profiles are judged on.

Profiles follow the data's event time, never the wall clock of the machine that processes it: a replay of
last December applies last December's holidays, and a batch processed just after midnight holding events of
the previous day is judged by the previous day.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from streaming_dq.exceptions import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import Column

_SECONDS_PER_DAY = 86_400


def time_zone(name: str) -> ZoneInfo:
    """Return the IANA time zone ``name`` (e.g. ``"Europe/Berlin"``, ``"UTC"``).

    Raises:
        ConfigError: ``name`` is not a known IANA time zone (field path ``timezone``).

    Example:
        >>> time_zone("Europe/Berlin").key
        'Europe/Berlin'
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise ConfigError(
            f"unknown time zone {name!r}: expected an IANA name", field_path="timezone"
        ) from None


def event_date(ts: datetime, timezone: str) -> date:
    """Return the calendar date of the instant ``ts`` in ``timezone``. A naive ``ts`` is read as UTC.

    Raises:
        ConfigError: ``timezone`` is not a known IANA time zone.

    Example:
        >>> event_date(datetime(2025, 12, 19, 23, 30, tzinfo=UTC), "Europe/Berlin")
        datetime.date(2025, 12, 20)
    """
    zone = time_zone(timezone)
    instant = ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)
    return instant.astimezone(zone).date()


def event_date_column(ts_col: Column, timezone: str) -> Column:
    """Return the calendar date, in ``timezone``, of each row's event timestamp (NULL stays NULL).

    ``ts_col`` is a ``TimestampType`` column (an instant). The local wall-clock time is
    ``from_utc_timestamp(ts, timezone)``; its date is taken from its epoch seconds rather than with
    ``to_date``, because ``to_date`` of a timestamp reads it in the *session* time zone: this way the result
    does not depend on ``spark.sql.session.timeZone`` (the project runs its sessions in UTC anyway, where both
    ways agree). A ``TIMESTAMP_NTZ`` column is first read as an instant in the session time zone by Spark.

    Raises:
        ConfigError: ``timezone`` is not a known IANA time zone.

    Example:
        >>> df.withColumn("_dq_event_date", event_date_column(F.col("ts"), "Europe/Berlin"))  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    zone = time_zone(timezone).key
    local_seconds = F.unix_seconds(F.from_utc_timestamp(ts_col, zone))
    return F.date_from_unix_date(F.floor(local_seconds / _SECONDS_PER_DAY).cast("int"))
