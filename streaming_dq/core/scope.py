"""Window scopes: ``scope: {window: 1 day}`` makes an observable aggregate check judge event-time windows."""

from __future__ import annotations

import re
from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field, field_validator

from streaming_dq.exceptions import ConfigError

_UNITS = {
    "second": 1,
    "seconds": 1,
    "minute": 60,
    "minutes": 60,
    "hour": 3600,
    "hours": 3600,
    "day": 86400,
    "days": 86400,
    "s": 1,
    "sec": 1,
    "secs": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "d": 86400,
}
_PATTERN = re.compile(r"^\s*(\d+)\s*([a-z]+)\s*$")


def parse_window(text: str) -> timedelta:
    """``"1 day"`` -> ``timedelta(days=1)``; units: seconds, minutes, hours, days.

    Raises:
        ValueError: not ``<positive integer> <unit>`` or a window that does not divide a day evenly
            (windows are aligned to local midnight).
    """
    m = _PATTERN.match(text.lower())
    if not m or m.group(2) not in _UNITS or int(m.group(1)) <= 0:
        raise ConfigError(f"invalid window {text!r}: expected e.g. '1 hour', '15 minutes', '1 day'")
    seconds = int(m.group(1)) * _UNITS[m.group(2)]
    if seconds < 86400 and 86400 % seconds:
        raise ConfigError(f"window {text!r} must divide a day evenly (windows are aligned to local midnight)")
    if seconds > 86400 and seconds % 86400:
        raise ConfigError(f"window {text!r}: windows longer than a day must be whole days")
    return timedelta(seconds=seconds)


def parse_duration(text: str, *, bare_seconds: bool = False) -> timedelta:
    """``"2 hours"`` -> ``timedelta(hours=2)``; ``"0 seconds"`` is allowed (unlike a window size). The one
    duration grammar of configs and command lines: ``90d``, ``5s``, ``15 min``, ``2 hours`` all parse.

    Example:
        >>> parse_duration("90d"), parse_duration("15 min"), parse_duration("300", bare_seconds=True)
        (datetime.timedelta(days=90), datetime.timedelta(seconds=900), datetime.timedelta(seconds=300))

    Args:
        text: ``<integer> <unit>``, the space optional.
        bare_seconds: Also take a bare integer, as seconds (a command line's ``--timeout 300``).

    Raises:
        ConfigError: not ``<integer> <unit>`` with unit s/sec/seconds, m/min/minutes, h/hours or d/days.
    """
    if bare_seconds and text.strip().isdigit():
        return timedelta(seconds=int(text))
    m = _PATTERN.match(text.lower())
    if not m or m.group(2) not in _UNITS:
        raise ConfigError(
            f"invalid duration {text!r}: expected e.g. '0s', '90 seconds', '15 min', '2 hours', '90d'"
        )
    return timedelta(seconds=int(m.group(1)) * _UNITS[m.group(2)])


class WindowScope(BaseModel):
    """The event-time window a check is judged over.

    Attributes:
        window: Tumbling window size, e.g. ``1 day``, aligned to local midnight in ``gate.timezone``.
    """

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    window: str = Field(description="Tumbling event-time window, e.g. '1 hour' or '1 day'.")

    @field_validator("window")
    @classmethod
    def _valid(cls, value: str) -> str:
        parse_window(value)
        return value.strip()

    @property
    def size(self) -> timedelta:
        return parse_window(self.window)
