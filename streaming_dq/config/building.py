"""Building checks from config items, in our format or DQX's: every check through the factory, every problem
collected with its field path instead of stopping at the first (:func:`build_checks`)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from streaming_dq.config.errors import ConfigErrors, pydantic_problems
from streaming_dq.config.factory import CheckFactory
from streaming_dq.config.registry import CheckConfigRegistry
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.base_config import BaseCheckConfig
from streaming_dq.core.modes import Dialect
from streaming_dq.exceptions import ConfigError, DuplicateCheckIdError, UnknownCheckTypeError

__all__ = ["BuiltCheck", "build_checks", "build_one", "dialect_items"]


@dataclass(frozen=True)
class BuiltCheck:
    """A check built from ``checks[index]``: its validated config and the check instance."""

    index: int
    config: BaseCheckConfig
    check: BaseCheck
    #: Where the check was written, when not ``checks[index]`` (a contract's rule: ``contract.schema[0]...``).
    where: str | None = None

    @property
    def place(self) -> str:
        return self.where or f"checks[{self.index}]"


def _join(prefix: str, path: str | None) -> str:
    return f"{prefix}.{path}" if path else prefix


def _config_class(raw: Any) -> type[BaseCheckConfig] | None:
    try:
        return CheckConfigRegistry.get(str(raw["check"]))
    except (KeyError, TypeError, UnknownCheckTypeError):
        return None


def build_one(raw: Any, where: str, source: str | None) -> tuple[BuiltCheck | None, list[ConfigError]]:
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
        one, found = build_one(raw, where, source)
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
