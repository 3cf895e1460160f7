"""Turning pydantic validation errors into ConfigErrors that name the file and the field path."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from streaming_dq.exceptions import ConfigError


def format_loc(loc: Sequence[int | str], prefix: str = "") -> str:
    """``("checks", 2, "min-value")`` -> ``checks[2].min-value``."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def config_errors(exc: ValidationError, *, source: str | None, prefix: str = "") -> list[ConfigError]:
    """One ConfigError per problem pydantic found, each with its field path."""
    out = []
    for err in exc.errors(include_url=False):
        loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        out.append(ConfigError(str(err["msg"]), source=source, field_path=format_loc(loc, prefix)))
    return out


class ConfigErrors(ConfigError):
    """Several config problems at once; ``errors`` lists each with its field path."""

    def __init__(self, errors: Sequence[ConfigError], *, source: str | None = None) -> None:
        self.errors = list(errors)
        lines = "\n".join(f"  {e}" for e in self.errors)
        super().__init__(f"{len(self.errors)} problem(s):\n{lines}", source=None)
        self.source = source
        self.field_path = self.errors[0].field_path if self.errors else None


def raise_config_error(exc: ValidationError, *, source: str | None, prefix: str = "") -> None:
    errors = config_errors(exc, source=source, prefix=prefix)
    if len(errors) == 1:
        raise errors[0] from None
    raise ConfigErrors(errors, source=source) from None
