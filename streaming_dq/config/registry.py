"""The process-wide table from check names (``null-check``) to config classes."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

from streaming_dq.core.base_config import BaseCheckConfig
from streaming_dq.exceptions import ConfigError, UnknownCheckTypeError

C = TypeVar("C", bound=type[BaseCheckConfig])


class CheckConfigRegistry:
    """Maps check names to their config classes; a name can be registered once."""

    _registry: ClassVar[dict[str, type[BaseCheckConfig]]] = {}

    @classmethod
    def register(cls, name: str, config_class: type[BaseCheckConfig]) -> None:
        if name in cls._registry:
            raise ConfigError(
                f"check name {name!r} is already registered to {cls._registry[name].__name__}; "
                f"cannot register {config_class.__name__}"
            )
        cls._registry[name] = config_class

    @classmethod
    def get(cls, name: str) -> type[BaseCheckConfig]:
        load_builtin_checks()
        try:
            return cls._registry[name]
        except KeyError:
            raise UnknownCheckTypeError(
                f"unknown check {name!r}; registered checks: {', '.join(sorted(cls._registry))}",
                field_path="check",
            ) from None

    @classmethod
    def names(cls) -> list[str]:
        load_builtin_checks()
        return sorted(cls._registry)

    @classmethod
    def items(cls) -> list[tuple[str, type[BaseCheckConfig]]]:
        load_builtin_checks()
        return sorted(cls._registry.items())


def register_check_config(check_name: str) -> Callable[[C], C]:
    """Class decorator registering a config under ``check_name`` (refuses duplicates with ValueError).

    Example:
        >>> @register_check_config(check_name="my-check")  # doctest: +SKIP
        ... class MyCheckConfig(BaseRowCheckConfig): ...
    """

    def decorate(config_class: C) -> C:
        CheckConfigRegistry.register(check_name, config_class)
        config_class.check_name = check_name
        config_class.check_class.check_type = check_name
        return config_class

    return decorate


def load_builtin_checks() -> None:
    """Import the built-in catalog so its checks are registered (idempotent)."""
    import streaming_dq.checks  # noqa: F401
