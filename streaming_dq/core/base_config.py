"""Pydantic base configs that bind a declarative check definition to its implementation class."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from streaming_dq.core.alerting import AlertThreshold
from streaming_dq.core.base_check import BaseAggregateCheck, BaseCheck, BaseRowCheck, ObservableAggregateCheck
from streaming_dq.core.scope import WindowScope
from streaming_dq.core.severity import Severity, normalize_severity
from streaming_dq.core.tolerance import Tolerance
from streaming_dq.exceptions import ConfigError, ConfigTypeError


def kebab(name: str) -> str:
    """``min_value`` -> ``min-value``: the alias every config field is known by in YAML."""
    return name.replace("_", "-")


class BaseCheckConfig(BaseModel):
    """Fields every check config has. Subclasses set ``check_class`` and add one field per parameter.

    Binding a config to a check class of the wrong shape (a row config pointing at an aggregate check), or
    forgetting ``check_class``, raises TypeError when the module defining the config is imported.
    """

    model_config = ConfigDict(
        alias_generator=kebab,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        arbitrary_types_allowed=True,
    )

    check_class: ClassVar[type[BaseCheck]]
    #: The registered name (``null-check``), set by ``@register_check_config``.
    check_name: ClassVar[str] = ""
    _expected_base: ClassVar[type[BaseCheck]] = BaseCheck
    _abstract: ClassVar[bool] = True

    check_id: str = Field(min_length=1)
    severity: Severity = Severity.CRITICAL
    tags: tuple[str, ...] = ()
    group: str | None = None
    scope: WindowScope | None = None
    #: Row checks only: a Spark SQL predicate selecting the rows the check judges (the others pass it).
    filter: str | None = None
    #: Row checks only: failing rows the batch tolerates before the check fails the batch.
    tolerance: Tolerance | None = None
    #: Row checks only: the share of rows it may flag before the shipped alert rule pages (``{max-share: 1%}``).
    alert: AlertThreshold | None = None

    @field_validator("severity", mode="before")
    @classmethod
    def _normalise_severity(cls, value: Any) -> Severity:
        return normalize_severity(value)

    @model_validator(mode="after")
    def _scope_needs_an_observable_check(self) -> BaseCheckConfig:
        check_class = type(self).__dict__.get("check_class") or getattr(type(self), "check_class", None)
        if self.scope is not None and not (
            isinstance(check_class, type) and issubclass(check_class, ObservableAggregateCheck)
        ):
            raise ConfigError("only observable aggregate checks can be window-scoped", field_path="scope")
        is_row = isinstance(check_class, type) and issubclass(check_class, BaseRowCheck)
        for name in ("filter", "tolerance", "alert"):
            if getattr(self, name) is not None and not is_row:
                raise ConfigError(
                    f"only row checks take a {name} (an aggregate check judges the whole batch)",
                    field_path=name,
                )
        return self

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if cls.__dict__.get("_abstract", False):
            return
        check_class = cls.__dict__.get("check_class")
        if check_class is None:
            raise ConfigTypeError(f"{cls.__name__} must set check_class")
        expected = cls._expected_base
        if not (isinstance(check_class, type) and issubclass(check_class, expected)):
            raise ConfigTypeError(
                f"{cls.__name__}.check_class={getattr(check_class, '__name__', check_class)!r} "
                f"must be a subclass of {expected.__name__}"
            )

    def check_parameters(self) -> dict[str, Any]:
        """The constructor keyword arguments of the check (everything but the identity fields)."""
        return {name: getattr(self, name) for name in type(self).model_fields}

    def to_check(self) -> BaseCheck:
        """Build the validated check instance."""
        params = self.check_parameters()
        return self.check_class(**params)


class BaseRowCheckConfig(BaseCheckConfig):
    """Base of configs for row-level checks."""

    _expected_base: ClassVar[type[BaseCheck]] = BaseRowCheck
    _abstract: ClassVar[bool] = True


class BaseAggregateCheckConfig(BaseCheckConfig):
    """Base of configs for aggregate checks."""

    _expected_base: ClassVar[type[BaseCheck]] = BaseAggregateCheck
    _abstract: ClassVar[bool] = True
