"""Validating the parts of a gate config and reporting every problem, each with its YAML field path.

* :func:`pydantic_problems`: a pydantic ``ValidationError`` as one :class:`~streaming_dq.exceptions.ConfigError`
  per problem, with kebab-case paths (``profiles[0].rules[1].metric-multiplier``) and plain reasons (an
  unknown key suggests the one that was probably meant).
* :func:`build_checks`: every check through the check factory, collecting problems instead of stopping at the
  first.
* :func:`cross_problems`: what ties the sections together (columns in the source schema, reference datasets,
  profile selectors, event time, distinct targets).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from streaming_dq.checks.unknown_fields import UNKNOWN_FIELDS_CHECK_ID
from streaming_dq.config.dqx import Dialect
from streaming_dq.config.errors import ConfigErrors
from streaming_dq.config.factory import CheckFactory
from streaming_dq.config.gate_config import TIME_TYPES, GateConfig
from streaming_dq.config.registry import CheckConfigRegistry
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.base_config import BaseCheckConfig
from streaming_dq.core.column_types import column_type_problems
from streaming_dq.exceptions import ConfigError, DuplicateCheckIdError, UnknownCheckTypeError
from streaming_dq.profiles.config import format_field_path
from streaming_dq.profiles.selectors import CheckTarget

__all__ = ["BuiltCheck", "build_checks", "cross_problems", "pydantic_problems"]


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
            loc = (*loc, cause.field_path)
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


# --- checks -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuiltCheck:
    """A check built from ``checks[index]``: its validated config and the check instance."""

    index: int
    config: BaseCheckConfig
    check: BaseCheck


def _join(prefix: str, path: str | None) -> str:
    return f"{prefix}.{path}" if path else prefix


def _config_class(raw: Any) -> type[BaseCheckConfig] | None:
    try:
        return CheckConfigRegistry.get(str(raw["check"]))
    except (KeyError, TypeError, UnknownCheckTypeError):
        return None


def _build_one(raw: Any, where: str, source: str | None) -> tuple[BuiltCheck | None, list[ConfigError]]:
    try:
        config = CheckFactory.config_from_dict(raw)
        return BuiltCheck(-1, config, config.to_check()), []
    except ValidationError as exc:
        return None, pydantic_problems(exc, source=source, prefix=where, model=_config_class(raw))
    except UnknownCheckTypeError:
        close = difflib.get_close_matches(str(raw["check"]), CheckConfigRegistry.names(), n=1)
        hint = f"did you mean {close[0]!r}?" if close else "run `streaming-dq schema` for the catalog"
        reason = f"unknown check {raw['check']!r} ({hint})"
        return None, [UnknownCheckTypeError(reason, source=source, field_path=f"{where}.check")]
    except ConfigError as exc:
        return None, [type(exc)(exc.reason, source=source, field_path=_join(where, exc.field_path))]
    except (TypeError, ValueError) as exc:  # a check constructor refusing its arguments
        return None, [ConfigError(str(exc), source=source, field_path=where)]


def dialect_items(
    raws: Sequence[Any], *, prefix: str = "checks", dialect: Dialect = "auto"
) -> tuple[list[tuple[int, Any]], list[str]]:
    """``(index in raws, check config)`` per check, translated from DQX's format when ``raws`` is in it.

    ``dialect: auto`` detects DQX rules (``criticality``, ``check: {function}``); ``dqx`` requires them.

    Returns:
        The configs with the index of the item each came from (a DQX rule with ``for_each_column`` gives
        several with one index), and the translation's notes on approximations.

    Raises:
        ConfigError: a DQX rule cannot be translated, or the list mixes the dialects.
    """
    from streaming_dq.config.dqx import is_dqx_rules, translate

    if dialect == "dqx" or (dialect == "auto" and is_dqx_rules(raws)):
        translation = translate(raws, prefix=prefix)
        return list(translation.checks), translation.notes
    return list(enumerate(raws)), []


def build_checks(
    raws: Sequence[Any],
    *,
    source: str | None = None,
    prefix: str = "checks",
    dialect: Dialect = "auto",
    notes: list[str] | None = None,
) -> tuple[list[BuiltCheck], list[ConfigError]]:
    """Build every check of ``raws`` through the factory, collecting every problem instead of stopping.

    Args:
        raws: The ``checks:`` items, in our format or DQX's (see :func:`dialect_items`).
        source: The file, named in errors.
        prefix: The field path of the list.
        dialect: ``auto``, ``native`` or ``dqx``.
        notes: Receives the DQX translation's notes on approximations, when given.

    Returns:
        The checks that are valid, and one error per problem (``checks[2].min-value: ...``), duplicate
        check ids included.
    """
    built: list[BuiltCheck] = []
    problems: list[ConfigError] = []
    first_use: dict[str, str] = {}
    try:
        items, found_notes = dialect_items(raws, prefix=prefix, dialect=dialect)
    except ConfigError as exc:
        errors = exc.errors if isinstance(exc, ConfigErrors) else [exc]
        return [], [type(e)(e.reason, source=source, field_path=e.field_path) for e in errors]
    if notes is not None:
        notes.extend(found_notes)
    for index, raw in items:
        where = f"{prefix}[{index}]"
        one, found = _build_one(raw, where, source)
        problems += found
        if one is None:
            continue
        check_id = one.check.check_id
        if check_id in first_use:
            reason = f"duplicate check-id {check_id!r} (also {first_use[check_id]}); ids must be unique"
            problems.append(
                DuplicateCheckIdError(check_id, reason=reason, source=source, field_path=f"{where}.check-id")
            )
            continue
        first_use[check_id] = where
        built.append(BuiltCheck(index, one.config, one.check))
    return built, problems


# --- what ties the sections together -------------------------------------------------------------------------

_COLUMN_FIELDS = ("column", "columns", "subset_columns", "allowed_values", "than_column", "group_by")


def _column_refs(built: BuiltCheck) -> list[tuple[str, str]]:
    """``(field path inside the check, column)`` for every source column a check's parameters name."""
    refs = []
    fields = type(built.config).model_fields
    for name in _COLUMN_FIELDS:
        if name not in fields:
            continue
        if name == "column" and getattr(built.check, "column", "") is None:
            continue  # the check reads no column by it ('*' for count, count-if's predicate)
        key, value = fields[name].alias or name, getattr(built.config, name)
        if isinstance(value, str):
            refs.append((key, value))
        elif isinstance(value, Mapping):
            refs += [(f"{key}.{column}", str(column)) for column in value]
        elif isinstance(value, list | tuple):
            refs += [(f"{key}[{i}]", c) for i, c in enumerate(value) if isinstance(c, str)]
    return refs


def _unknown_fields_problems(config: GateConfig, built: list[BuiltCheck]) -> list[tuple[str, str]]:
    source, problems = config.source, []
    why_not = source.unknown_fields_detection()
    if why_not is not None and "unknown_fields" in source.model_fields_set:
        problems.append(
            ("source.unknown-fields", f"{why_not}: undeclared fields cannot be detected; use ignore")
        )
    if not source.detects_unknown_fields:
        return problems
    if source.unknown_fields_column in (source.columns() or {}):
        problems.append(
            ("source.unknown-fields-column", f"column {source.unknown_fields_column!r} is in source.schema")
        )
    problems += [
        (
            f"checks[{b.index}].check-id",
            f"{UNKNOWN_FIELDS_CHECK_ID!r} is the built-in check on undeclared fields",
        )
        for b in built
        if b.check.check_id == UNKNOWN_FIELDS_CHECK_ID
    ]
    return problems


def cross_problems(
    config: GateConfig, built: list[BuiltCheck], source: str | None, *, all_built: bool
) -> list[ConfigError]:
    """Problems between sections: columns, reference datasets, profile selectors, event time, targets."""
    problems: list[tuple[str, str]] = []
    columns = config.source.columns()
    if config.source.format in ("json", "csv") and columns is None:
        problems.append(("source.schema", f"a {config.source.format} stream needs a schema (Spark DDL)"))
    event_time = config.gate.event_time
    if config.profiles and event_time is None:
        problems.append(("profiles", "profiles are chosen from each row's event time: set gate.event-time"))
    problems += _unknown_fields_problems(config, built)
    if columns is not None:
        known = {**columns, config.source.malformed_column: "string"}
        if config.source.detects_unknown_fields:
            known[config.source.unknown_fields_column] = "string"
        if event_time is not None and event_time not in known:
            problems.append(("gate.event-time", f"column {event_time!r} is not in source.schema"))
        elif event_time is not None and known[event_time] not in TIME_TYPES:
            problems.append(
                ("gate.event-time", f"column {event_time!r} is {known[event_time]}, not a timestamp")
            )
        for b in built:
            problems += [
                (f"checks[{b.index}].{path}", f"column {column!r} is not in source.schema")
                for path, column in _column_refs(b)
                if column not in known
            ]
            problems += [
                (f"checks[{b.index}].{path}", f"{reason} (source.schema)")
                for _, path, reason in column_type_problems([b.check], known, missing=False)
            ]
    for b in built:
        if getattr(b.check, "scope", None) is not None and event_time is None:
            problems.append((f"checks[{b.index}].scope", "a window-scoped check needs gate.event-time"))
        name = getattr(b.config, "reference_dataset", None)
        if isinstance(name, str) and name not in config.reference_datasets:
            available = ", ".join(config.reference_datasets) or "none configured"
            reason = f"reference dataset {name!r} is not in reference-datasets ({available})"
            problems.append((f"checks[{b.index}].reference-dataset", reason))
    if all_built:
        targets = [CheckTarget.from_check(b.check) for b in built]
        for p, profile in enumerate(config.profiles):
            for r, rule in enumerate(profile.rules):
                if not any(rule.to_rule().selector.matches(t) for t in targets):
                    problems.append((f"profiles[{p}].rules[{r}].select", "selects no configured check"))
    paths: dict[str, str] = {}
    for key, path in config.targets.paths().items():
        if path in paths:
            problems.append((f"targets.{key}", f"same table as targets.{paths[path]}"))
        paths.setdefault(path, key)
    return [ConfigError(reason, source=source, field_path=path) for path, reason in problems]
