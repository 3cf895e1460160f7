"""The one YAML reader of every config file (gate configs, checks files, SparkDQ's and DQX's rule files).

Safe (no Python objects), strict (a mapping that repeats a key is an error: the last one would silently
win), and dates left as strings, so the models parse them and a bad date is reported with its field path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from streaming_dq.exceptions import ConfigError

__all__ = ["read_yaml"]


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that repeats a key (the last one would silently win).

    Dates stay strings (``2025-12-20``): the models parse them, so a bad date is reported with its field path
    instead of failing the whole file.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
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


def _at(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _where(exc: yaml.MarkedYAMLError) -> str | None:
    """Where PyYAML noticed the problem (``line 3, column 7``)."""
    mark = exc.problem_mark or exc.context_mark
    return _at(mark) if mark is not None else None


def _yaml_reason(exc: yaml.MarkedYAMLError) -> str:
    """The problem, and where the construct it broke began: PyYAML notices an unclosed ``{`` or quote on a
    later line than the one to mend (#42: the error pointed one line late), so both places are named."""
    reason = exc.problem or "invalid YAML"
    context, started = exc.context, exc.context_mark
    if (
        context
        and started is not None
        and exc.problem_mark is not None
        and started.line != exc.problem_mark.line
    ):
        return f"{reason} ({context} that starts at {_at(started)})"
    return f"{context} {reason}" if context else reason


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
    return parse_yaml(text, source)


def parse_yaml(text: str, source: str) -> Any:
    """Parse YAML text read from ``source`` (named in errors) as :func:`read_yaml` does."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass: safe
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(
            f"invalid YAML: {_yaml_reason(exc)}", source=source, field_path=_where(exc)
        ) from None
    except (yaml.YAMLError, ValueError) as exc:
        raise ConfigError(f"invalid YAML: {exc}", source=source) from None
