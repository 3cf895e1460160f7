"""Looking up check configs by name (``null-check``): the built-in catalog is imported first.

The table itself and the decorator that fills it live in :mod:`streaming_dq.core.registry`.
"""

from __future__ import annotations

from streaming_dq.core.base_config import BaseCheckConfig
from streaming_dq.core.registry import RegisteredChecks, register_check_config
from streaming_dq.exceptions import UnknownCheckTypeError

__all__ = ["CheckConfigRegistry", "load_builtin_checks", "register_check_config"]


class CheckConfigRegistry:
    """Maps check names to their config classes, the built-in catalog included; a name registers once."""

    @classmethod
    def register(cls, name: str, config_class: type[BaseCheckConfig]) -> None:
        RegisteredChecks.register(name, config_class)

    @classmethod
    def get(cls, name: str) -> type[BaseCheckConfig]:
        load_builtin_checks()
        try:
            return RegisteredChecks.table()[name]
        except KeyError:
            raise UnknownCheckTypeError(
                f"unknown check {name!r}; registered checks: {', '.join(sorted(RegisteredChecks.table()))}",
                field_path="check",
            ) from None

    @classmethod
    def names(cls) -> list[str]:
        load_builtin_checks()
        return sorted(RegisteredChecks.table())

    @classmethod
    def items(cls) -> list[tuple[str, type[BaseCheckConfig]]]:
        load_builtin_checks()
        return sorted(RegisteredChecks.table().items())


def load_builtin_checks() -> None:
    """Import the built-in catalog so its checks are registered (idempotent)."""
    import streaming_dq.checks  # noqa: F401
