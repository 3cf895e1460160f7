"""Where check configs register: the process-wide table from check names (``null-check``) to config classes.

The catalog (``streaming_dq.checks``) registers into it with :func:`register_check_config` when it is
imported; lookups go through :class:`streaming_dq.config.registry.CheckConfigRegistry`, which imports the
catalog first. This module imports nothing of either, so the catalog never needs the config layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

from streaming_dq.core.base_config import BaseCheckConfig
from streaming_dq.exceptions import ConfigError

C = TypeVar("C", bound=type[BaseCheckConfig])


class RegisteredChecks:
    """The registered config classes by check name; a name can be registered once."""

    _table: ClassVar[dict[str, type[BaseCheckConfig]]] = {}

    @classmethod
    def register(cls, name: str, config_class: type[BaseCheckConfig]) -> None:
        if name in cls._table:
            raise ConfigError(
                f"check name {name!r} is already registered to {cls._table[name].__name__}; "
                f"cannot register {config_class.__name__}"
            )
        cls._table[name] = config_class

    @classmethod
    def table(cls) -> dict[str, type[BaseCheckConfig]]:
        """What is registered so far (the catalog only once something imported it)."""
        return cls._table


def register_check_config(check_name: str) -> Callable[[C], C]:
    """Class decorator registering a config under ``check_name`` (refuses duplicates with ConfigError).

    Example:
        >>> @register_check_config(check_name="my-check")  # doctest: +SKIP
        ... class MyCheckConfig(BaseRowCheckConfig): ...
    """

    def decorate(config_class: C) -> C:
        RegisteredChecks.register(check_name, config_class)
        config_class.check_name = check_name
        config_class.check_class.check_type = check_name
        return config_class

    return decorate
