"""Turning pydantic validation errors into ConfigErrors that name the file and the field path."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from streaming_dq.exceptions import ConfigError
from streaming_dq.profiles.loading import format_field_path


def format_loc(loc: Sequence[int | str], prefix: str = "") -> str:
    """``("checks", 2, "min-value")`` -> ``checks[2].min-value``."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


class ConfigErrors(ConfigError):
    """Several config problems at once; ``errors`` lists each with its field path."""

    def __init__(self, errors: Sequence[ConfigError], *, source: str | None = None) -> None:
        self.errors = list(errors)
        lines = "\n".join(f"  {e}" for e in self.errors)
        super().__init__(f"{len(self.errors)} problem(s):\n{lines}", source=None)
        self.source = source
        self.field_path = self.errors[0].field_path if self.errors else None


# --- pydantic errors --------------------------------------------------------------------------------------------


def _strip(tp: Any) -> Any:
    """``Annotated[X, ...]`` -> ``X``; ``X | None`` -> ``X``."""
    while True:
        if get_origin(tp) is Annotated:
            tp = get_args(tp)[0]
        elif get_origin(tp) in (Union, UnionType) and type(None) in get_args(tp):
            members = [a for a in get_args(tp) if a is not type(None)]
            tp = members[0] if len(members) == 1 else Union[tuple(members)]  # noqa: UP007
        else:
            return tp


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _descend(tp: Any, part: str | int) -> Any:
    """The type found at ``part`` inside ``tp`` (a model field, a list item, a dict value, a union tag)."""
    tp = _strip(tp)
    origin = get_origin(tp)
    if origin in (list, tuple, set, frozenset):
        return get_args(tp)[0] if isinstance(part, int) else None
    if origin is dict:
        return get_args(tp)[1]
    if origin in (Union, UnionType):
        for member in map(_strip, get_args(tp)):
            fields = getattr(member, "model_fields", {}).values()
            if any(get_origin(f.annotation) is Literal and part in get_args(f.annotation) for f in fields):
                return member
        return None
    if _is_model(tp):
        for name, info in tp.model_fields.items():
            if part in (name, info.alias):
                return info.annotation
    return None


def _allowed_keys(model: type[BaseModel] | None, loc: Sequence[str | int]) -> list[str]:
    tp: Any = model
    for part in loc:
        if tp is None:
            return []
        tp = _descend(tp, part)
    tp = _strip(tp)
    if not _is_model(tp):
        return []
    return [info.alias or name for name, info in tp.model_fields.items()]


def _unknown_key(key: object, allowed: list[str]) -> str:
    close = difflib.get_close_matches(str(key), allowed, n=1)
    if close:
        return f"unknown key {key!r} (did you mean {close[0]!r}?)"
    return f"unknown key {key!r}" + (f"; allowed: {', '.join(allowed)}" if allowed else "")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(err: ErrorDetails, model: type[BaseModel] | None) -> tuple[tuple[str | int, ...], str]:
    """The location and plain-words reason of one pydantic error."""
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    kind, ctx, msg = err["type"], err.get("ctx") or {}, err["msg"]
    if kind == "extra_forbidden":
        return loc, _unknown_key(loc[-1], _allowed_keys(model, loc[:-1]))
    if kind == "missing":
        return loc, "missing required key"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        got = "it is missing" if ctx.get("tag") is None else f"got {ctx['tag']!r}"
        return (*loc, "type"), f"type must be one of {ctx.get('expected_tags', '?')}; {got}"
    cause = ctx.get("error")
    if isinstance(cause, ConfigError):
        if cause.field_path and not (loc and loc[-1] == cause.field_path):
            # a field's own validator names an item of it (``cidr-blocks[0]`` of ``cidr-blocks``): replace
            same_field = bool(loc) and isinstance(loc[-1], str) and cause.field_path.startswith(f"{loc[-1]}[")
            loc = (*loc[:-1], cause.field_path) if same_field else (*loc, cause.field_path)
        return loc, cause.reason
    reason = msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if reason.startswith("Input should be"):
        reason = f"expected {reason.removeprefix('Input should be ')}, got {_shown(err['input'])}"
    return loc, reason


_TYPE_TAGS = frozenset(
    {"int", "float", "decimal", "str", "bool", "date", "datetime", "time", "timedelta", "none"}
)


def _is_member_tag(part: object) -> bool:
    return isinstance(part, str) and (part in _TYPE_TAGS or "[" in part)


def _merge_union_members(errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """One error per value a union rejected (pydantic reports one per member: ``min-value.int``,
    ``min-value.float``, ``min-value.decimal``): ``expected a valid integer or a valid number ..., got 'abc'``."""
    groups: dict[tuple[Any, ...], list[ErrorDetails]] = {}
    for err in errors:
        key = tuple(err["loc"][:-1]) if err["loc"] and _is_member_tag(err["loc"][-1]) else (*err["loc"], "")
        groups.setdefault(key, []).append(err)
    merged: list[ErrorDetails] = []
    for key, members in groups.items():
        if len(members) < 2 or key[-1:] == ("",):
            merged += members
            continue
        wanted = []
        for m in members:
            text = str(m["msg"]).removeprefix("Input should be ").split(",")[0]
            if text not in wanted:
                wanted.append(text)
        first = members[0]
        merged.append(
            ErrorDetails(
                type="union_members",
                loc=key,
                msg=f"Input should be {' or '.join(wanted)}",
                input=first["input"],
            )
        )
    return merged


def pydantic_problems(
    exc: ValidationError, *, source: str | None, prefix: str = "", model: type[BaseModel] | None = None
) -> list[ConfigError]:
    """One ConfigError per pydantic error, with the YAML field path and a plain reason.

    Args:
        exc: The validation error.
        source: The file, named in each error.
        prefix: The path of the validated value inside the file, e.g. ``checks[3]``.
        model: The validated model, used to suggest the intended key for an unknown one.
    """
    problems = []
    for err in _merge_union_members(exc.errors(include_url=False)):
        loc, reason = _describe(err, model)
        path = format_field_path(loc)
        if prefix:
            path = f"{prefix}{'' if path.startswith('[') or not path else '.'}{path}"
        problems.append(ConfigError(reason, source=source, field_path=path or None))
    return problems
