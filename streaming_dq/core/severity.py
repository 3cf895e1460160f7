"""Check severities and their normalisation."""

from __future__ import annotations

from enum import StrEnum

from streaming_dq.exceptions import InvalidSeverityLevelError


class Severity(StrEnum):
    """How a failed check is treated: ``CRITICAL`` (default) fails rows, ``WARNING`` only warns."""

    CRITICAL = "critical"
    WARNING = "warning"


def normalize_severity(value: Severity | str) -> Severity:
    """Return the :class:`Severity` for an enum member or a case-insensitive name.

    Raises:
        InvalidSeverityLevelError: ``value`` is neither ``critical`` nor ``warning``.

    Example:
        >>> normalize_severity("Warning")
        <Severity.WARNING: 'warning'>
    """
    if isinstance(value, Severity):
        return value
    if isinstance(value, str):
        try:
            return Severity(value.strip().lower())
        except ValueError:
            pass
    raise InvalidSeverityLevelError(
        f"invalid severity {value!r}: expected one of {', '.join(s.value for s in Severity)}",
        field_path="severity",
    )
