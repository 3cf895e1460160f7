"""Turns raw dicts (from YAML or JSON) into validated checks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from streaming_dq.config.registry import CheckConfigRegistry
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.base_config import BaseCheckConfig
from streaming_dq.core.severity import normalize_severity
from streaming_dq.exceptions import MissingCheckTypeError


class CheckFactory:
    """Builds checks from dicts such as ``{"check": "null-check", "check-id": "id", "columns": ["id"]}``."""

    @staticmethod
    def config_from_dict(raw: Mapping[str, Any]) -> BaseCheckConfig:
        """Validate a dict into its config model, without mutating the dict.

        Raises:
            MissingCheckTypeError: no ``check`` key.
            UnknownCheckTypeError: the name is not registered.
            InvalidSeverityLevelError: a bad severity.
            pydantic.ValidationError: bad parameters.
        """
        if not isinstance(raw, Mapping):
            raise MissingCheckTypeError(f"a check must be a mapping, got {type(raw).__name__}")
        if "check" not in raw:
            raise MissingCheckTypeError("missing 'check' key naming the check type (e.g. check: null-check)")
        params = {k: v for k, v in raw.items() if k != "check"}
        if "severity" in params:
            params["severity"] = normalize_severity(params["severity"])
        config_class = CheckConfigRegistry.get(str(raw["check"]))
        return config_class.model_validate(params)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> BaseCheck:
        return cls.config_from_dict(raw).to_check()

    @classmethod
    def from_list(cls, raws: Iterable[Mapping[str, Any]]) -> list[BaseCheck]:
        return [cls.from_dict(r) for r in raws]
