"""Loading a gate config file: YAML, ``${ENV}`` expansion, validation of every section, resolved paths.

What :func:`load_gate_config` does, in order:

1. Reads the YAML with a safe loader that also refuses a key written twice in one mapping.
2. Expands variables in every string value: ``${NAME}`` is the environment variable ``NAME``,
   ``${NAME:-default}`` falls back to ``default`` when it is unset or empty, ``$${`` writes a literal ``${``,
   and ``${CONFIG_DIR}`` is the absolute folder of the config file. An unset variable without a default is
   an error.
3. Validates the sections (:class:`~streaming_dq.config.gate_config.GateConfig`), every check through the
   check factory and every profile, then what ties them together: checked columns exist in
   ``source.schema``, integrity checks name a configured reference dataset, profile rules select some
   check, profiles have an event-time column.
4. Resolves relative paths (``source.path``, ``checkpoint``, ``targets.*``, ``reference-datasets.*.path``)
   against the folder of the config file, not the working directory, so a job runs the same from anywhere;
   ``~`` is expanded and URIs (``s3a://``, ``abfss://``, ``file:/``) are left as written.

Every problem found is reported, not only the first: one :class:`~streaming_dq.exceptions.ConfigError`, or a
:class:`~streaming_dq.config.errors.ConfigErrors` listing them, each naming the file and the field path
(``orders.yaml: checks[2].min-value: ...``).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from streaming_dq.config.check_set import CheckSet
from streaming_dq.config.errors import ConfigErrors, format_loc
from streaming_dq.config.factory import CheckFactory
from streaming_dq.config.gate_config import TIME_TYPES, GateConfig
from streaming_dq.config.registry import CheckConfigRegistry
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.base_config import BaseCheckConfig
from streaming_dq.exceptions import ConfigError, UnknownCheckTypeError
from streaming_dq.profiles.config import format_field_path
from streaming_dq.profiles.selectors import CheckTarget

__all__ = [
    "BuiltCheck",
    "CheckFile",
    "build_checks",
    "expand_env",
    "inspect_gate_config",
    "load_check_file",
    "load_gate_config",
    "pydantic_problems",
    "read_yaml",
    "resolve_path",
]

# --- YAML ------------------------------------------------------------------------------------------------------


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that repeats a key (the last one would silently win).

    Dates stay strings (``2025-12-20``): the models parse them, so a bad date is reported with its field path
    instead of failing the whole file.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: let PyYAML report it
                continue
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
        return super().construct_mapping(node, deep=deep)


_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def read_yaml(path: str | Path) -> Any:
    """Parse a YAML file safely.

    Raises:
        ConfigError: the file cannot be read, is not valid YAML, or repeats a key (field path ``line N``).
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("no such file", source=source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the file: {exc}", source=source) from None
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass: safe
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}" if mark is not None else None
        reason = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
        raise ConfigError(f"invalid YAML: {reason}", source=source, field_path=where) from None
    except (yaml.YAMLError, ValueError) as exc:
        raise ConfigError(f"invalid YAML: {exc}", source=source) from None


# --- ${ENV} ------------------------------------------------------------------------------------------------------

_VARIABLE = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}")


def expand_env(
    data: Any, *, variables: Mapping[str, str], source: str | None = None, loc: tuple[str | int, ...] = ()
) -> tuple[Any, list[ConfigError]]:
    """Expand ``${NAME}``/``${NAME:-default}`` in every string value of ``data`` (keys are left alone).

    Returns:
        The expanded copy, and one error per variable that is unset and has no default (left unexpanded).

    Example:
        >>> expand_env({"path": "${ROOT:-/data}/x"}, variables={})
        ({'path': '/data/x'}, [])
    """
    if isinstance(data, Mapping):
        out: dict[Any, Any] = {}
        problems: list[ConfigError] = []
        for key, value in data.items():
            out[key], found = expand_env(value, variables=variables, source=source, loc=(*loc, str(key)))
            problems += found
        return out, problems
    if isinstance(data, list):
        items = [expand_env(v, variables=variables, source=source, loc=(*loc, i)) for i, v in enumerate(data)]
        return [v for v, _ in items], [p for _, found in items for p in found]
    if not isinstance(data, str):
        return data, []
    missing: list[ConfigError] = []

    def substitute(match: re.Match[str]) -> str:
        escaped, name, has_default, default = match.groups()
        if escaped:
            return match.group(0)[1:]
        value = variables.get(name)
        if value:
            return value
        if has_default:
            return default
        reason = f"environment variable {name!r} is not set (write ${{{name}:-default}} to give a default)"
        missing.append(ConfigError(reason, source=source, field_path=format_loc(loc) or None))
        return match.group(0)

    return _VARIABLE.sub(substitute, data), missing


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
    for err in exc.errors(include_url=False):
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


def build_checks(
    raws: Sequence[Any], *, source: str | None = None, prefix: str = "checks"
) -> tuple[list[BuiltCheck], list[ConfigError]]:
    """Build every check of ``raws`` through the factory, collecting every problem instead of stopping.

    Returns:
        The checks that are valid, and one error per problem (``checks[2].min-value: ...``), duplicate
        check ids included.
    """
    built: list[BuiltCheck] = []
    problems: list[ConfigError] = []
    first_use: dict[str, int] = {}
    for index, raw in enumerate(raws):
        where = f"{prefix}[{index}]"
        one, found = _build_one(raw, where, source)
        problems += found
        if one is None:
            continue
        check_id = one.check.check_id
        if check_id in first_use:
            reason = (
                f"duplicate check-id {check_id!r} (also {prefix}[{first_use[check_id]}]); ids must be unique"
            )
            problems.append(ConfigError(reason, source=source, field_path=f"{where}.check-id"))
            continue
        first_use[check_id] = index
        built.append(BuiltCheck(index, one.config, one.check))
    return built, problems


# --- what ties the sections together -------------------------------------------------------------------------

_COLUMN_FIELDS = ("column", "columns", "subset_columns", "allowed_values")


def _column_refs(built: BuiltCheck) -> list[tuple[str, str]]:
    """``(field path inside the check, column)`` for every source column a check's parameters name."""
    refs = []
    fields = type(built.config).model_fields
    for name in _COLUMN_FIELDS:
        if name not in fields:
            continue
        key, value = fields[name].alias or name, getattr(built.config, name)
        if isinstance(value, str):
            refs.append((key, value))
        elif isinstance(value, Mapping):
            refs += [(f"{key}.{column}", str(column)) for column in value]
        elif isinstance(value, list | tuple):
            refs += [(f"{key}[{i}]", c) for i, c in enumerate(value) if isinstance(c, str)]
    return refs


def _cross_problems(
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
    if columns is not None:
        known = {**columns, config.source.malformed_column: "string"}
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


# --- paths ------------------------------------------------------------------------------------------------------

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")


def resolve_path(path: str, base: Path) -> str:
    """``path`` made absolute against ``base`` (the config file's folder); URIs are returned unchanged.

    Example:
        >>> resolve_path("tables/pass", Path("/jobs/orders"))
        '/jobs/orders/tables/pass'
        >>> resolve_path("s3a://bucket/pass", Path("/jobs/orders"))
        's3a://bucket/pass'
    """
    if _URI.match(path):
        return path
    return os.path.normpath(base / Path(path).expanduser())


def _resolve_paths(config: GateConfig, base: Path) -> GateConfig:
    def resolve(path: str | None) -> str | None:
        return None if path is None else resolve_path(path, base)

    t = config.targets
    targets = t.model_copy(
        update={
            "pass_table": resolve(t.pass_table),
            "quarantine": resolve(t.quarantine),
            "results": resolve(t.results),
            "metrics": resolve(t.metrics),
        }
    )
    references = {
        name: ref.model_copy(update={"path": resolve(ref.path)})
        for name, ref in config.reference_datasets.items()
    }
    return config.model_copy(
        update={
            "source": config.source.model_copy(update={"path": resolve(config.source.path)}),
            "checkpoint": resolve(config.checkpoint),
            "targets": targets,
            "reference_datasets": references,
        }
    )


# --- entry points -----------------------------------------------------------------------------------------------


def inspect_gate_config(path: str | Path) -> tuple[GateConfig | None, list[ConfigError]]:
    """Load a gate config and return every problem found instead of raising.

    Returns:
        The config with expanded variables and absolute paths (None when there is any problem), and the
        problems, each naming the file and the field path.
    """
    source = str(path)
    try:
        data = read_yaml(path)
    except ConfigError as exc:
        return None, [exc]
    if not isinstance(data, Mapping):
        return None, [
            ConfigError("a gate config must be a mapping with gate, source, ... keys", source=source)
        ]
    base = Path(path).resolve().parent
    data, problems = expand_env(data, variables={**os.environ, "CONFIG_DIR": str(base)}, source=source)
    built: list[BuiltCheck] = []
    check_problems: list[ConfigError] = []
    if isinstance(data.get("checks"), list):
        built, check_problems = build_checks(data["checks"], source=source)
    config: GateConfig | None = None
    try:
        config = _resolve_paths(GateConfig.model_validate(data), base).with_source_file(source)
    except ValidationError as exc:
        problems += pydantic_problems(exc, source=source, model=GateConfig)
    problems += check_problems
    if config is not None:
        problems += _cross_problems(config, built, source, all_built=not check_problems)
    return (None if problems else config), problems


def _raise(problems: list[ConfigError], source: str) -> None:
    if len(problems) == 1:
        raise problems[0]
    raise ConfigErrors(problems, source=source)


def load_gate_config(path: str | Path) -> GateConfig:
    """Load and validate a gate config file (see the module docstring for the rules).

    Raises:
        ConfigError: one problem; ``source`` is the file and ``field_path`` the field.
        ConfigErrors: several problems; ``errors`` lists each.

    Example:
        >>> config = load_gate_config("jobs/orders/orders.yaml")  # doctest: +SKIP
        >>> config.gate.name, len(config.check_set())  # doctest: +SKIP
        ('orders', 9)
    """
    config, problems = inspect_gate_config(path)
    if problems or config is None:
        _raise(problems, str(path))
    assert config is not None
    return config


@dataclass(frozen=True)
class CheckFile:
    """What ``streaming-dq check`` validates with: the checks, and the gate config when the file is one."""

    check_set: CheckSet
    config: GateConfig | None = None


def load_check_file(path: str | Path) -> CheckFile:
    """Load a gate config, or a checks file (a list of checks or SparkDQ's ``{checks: [...]}``).

    Raises:
        ConfigError: one problem (file and field path named).
        ConfigErrors: several problems.
    """
    source = str(path)
    data = read_yaml(path)
    if isinstance(data, Mapping) and "gate" in data:
        config = load_gate_config(path)
        return CheckFile(config.check_set(), config)
    if isinstance(data, Mapping):
        extra = [k for k in data if k != "checks"]
        if extra or "checks" not in data:
            reason = (
                "a checks file is a list of checks or a mapping with only 'checks' (a gate config has 'gate')"
            )
            raise ConfigError(reason, source=source, field_path=str(extra[0]) if extra else None)
        data = data["checks"]
    if not isinstance(data, list) or not data:
        raise ConfigError("expected a non-empty list of checks", source=source, field_path="checks")
    built, problems = build_checks(data, source=source)
    if problems:
        _raise(problems, source)
    return CheckFile(CheckSet(b.check for b in built))
