"""A ``profiles:`` list loaded (:func:`load_profiles`), and when it does not validate, said in the config's own
words: the field path with the YAML keys (``profiles[0].rules[1].metric-multiplier``) and a plain reason
(:func:`config_error`); the gate config's errors use the same path spelling (:func:`format_field_path`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from streaming_dq.exceptions import ConfigError, InvalidSeverityLevelError
from streaming_dq.profiles.config import (
    _PROFILE_TYPES,
    HolidayProfileConfig,
    ProfilesConfig,
    PublicHolidayProfileConfig,
    RecurringProfileConfig,
    RuleConfig,
    SelectorConfig,
)
from streaming_dq.profiles.profiles import Profile

__all__ = ["config_error", "format_field_path", "load_profiles"]


_ALIASES = {
    name: info.alias
    for model in (
        SelectorConfig,
        RuleConfig,
        HolidayProfileConfig,
        RecurringProfileConfig,
        PublicHolidayProfileConfig,
    )
    for name, info in model.model_fields.items()
    if info.alias
}


def format_field_path(loc: Sequence[str | int]) -> str:
    """Format a pydantic error location as a config field path with the YAML key names.

    The tag pydantic inserts after a discriminated profile (``holiday``/``recurring``) is dropped and field
    names are shown by their kebab-case alias.

    Example:
        >>> format_field_path(("profiles", 0, "holiday", "rules", 1, "metric_multiplier"))
        'profiles[0].rules[1].metric-multiplier'
    """
    path = ""
    previous: str | int | None = None
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not (isinstance(previous, int) and part in _PROFILE_TYPES):
            path += f"{'.' if path else ''}{_ALIASES.get(part, part)}"
        previous = part
    return path


def _describe(error: ErrorDetails) -> tuple[str, str]:
    """Return the field path and the plain reason of one pydantic error."""
    loc = tuple(error["loc"])
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        tag = (error.get("ctx") or {}).get("tag")
        got = "it is missing" if tag is None else f"got {tag!r}"
        return format_field_path(
            (*loc, "type")
        ), f"type must be one of {', '.join(sorted(_PROFILE_TYPES))}; {got}"
    cause = (error.get("ctx") or {}).get("error")
    reason = cause.reason if isinstance(cause, ConfigError) else error["msg"].removeprefix("Value error, ")
    return format_field_path(loc), reason


def config_error(exc: ValidationError, source: str | None) -> ConfigError:
    """One ConfigError for a profiles block pydantic refused: the first problem's field path and reason, and how
    many more there are."""
    errors = exc.errors()
    field_path, reason = _describe(errors[0])
    if len(errors) > 1:
        others = "; ".join("{}: {}".format(*_describe(e)) for e in errors[1:])
        reason = f"{reason} (and {len(errors) - 1} more: {others})"
    cause = (errors[0].get("ctx") or {}).get("error")
    kind = InvalidSeverityLevelError if isinstance(cause, InvalidSeverityLevelError) else ConfigError
    return kind(reason, source=source, field_path=field_path)


def load_profiles(raw: Sequence[dict[str, Any]], *, source: str | None = None) -> list[Profile]:
    """Validate the items of a ``profiles:`` list and return the profile objects, in order.

    The caller's dicts are not modified.

    Args:
        raw: The parsed ``profiles:`` list (e.g. from ``yaml.safe_load``).
        source: Where the list came from (a file name), named in errors.

    Raises:
        InvalidSeverityLevelError: a rule's severity is neither ``critical`` nor ``warning``.
        ConfigError: any other invalid entry; ``field_path`` names it, e.g. ``profiles[0].end-date``.

    Example:
        >>> [p.name for p in load_profiles([{"type": "holiday", "name": "Xmas",
        ...     "start-date": "2025-12-20", "end-date": "2026-01-05",
        ...     "rules": [{"select": {"tag": "xmas"}, "metric-multiplier": 2.0}]}])]
        ['Xmas']
    """
    try:
        config = ProfilesConfig.model_validate({"profiles": raw})
    except ValidationError as exc:
        raise config_error(exc, source) from None
    return config.to_profiles()
