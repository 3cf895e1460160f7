"""CheckSet: the ordered, id-unique collection of checks one validation run uses."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from streaming_dq.config.errors import ConfigErrors
from streaming_dq.core.base_check import BaseAggregateCheck, BaseCheck, BaseRowCheck
from streaming_dq.core.base_config import BaseCheckConfig
from streaming_dq.core.modes import Dialect
from streaming_dq.exceptions import ConfigError, DuplicateCheckIdError

_log = logging.getLogger("streaming_dq.config")


class CheckSet:
    """An ordered set of checks with unique ``check_id`` values.

    Example:
        >>> cs = CheckSet().add_checks_from_dicts([
        ...     {"check": "null-check", "check-id": "id-present", "columns": ["id"]},
        ... ])
        >>> [c.check_id for c in cs]
        ['id-present']
    """

    def __init__(self, checks: Iterable[BaseCheck] = ()) -> None:
        self._checks: list[BaseCheck] = []
        for check in checks:
            self._append(check)

    def _append(self, check: BaseCheck) -> None:
        if any(c.check_id == check.check_id for c in self._checks):
            raise DuplicateCheckIdError(check.check_id)
        self._checks.append(check)

    def add_check(self, check: BaseCheckConfig | BaseCheck) -> CheckSet:
        """Add a typed config (or a ready check instance). Chainable."""
        self._append(check.to_check() if isinstance(check, BaseCheckConfig) else check)
        return self

    def add_checks_from_dicts(
        self,
        raws: Iterable[Mapping[str, Any]],
        *,
        source: str | None = None,
        prefix: str = "checks",
        dialect: Dialect = "auto",
    ) -> CheckSet:
        """Add checks from raw dicts; errors name ``source`` and the field path (``checks[2].min-value``).

        A list in DQX's rule format (detected, or ``dialect="dqx"``) is translated first
        (:mod:`streaming_dq.config.dqx`); its notes on approximations are logged as warnings.
        """
        from streaming_dq.config.building import build_checks

        notes: list[str] = []
        built, problems = build_checks(list(raws), source=source, prefix=prefix, dialect=dialect, notes=notes)
        for note in notes:
            _log.warning("%s: %s", source or "checks", note)
        for one in built:
            try:
                self._append(one.check)
            except DuplicateCheckIdError as exc:  # an id the set already held before these
                where = f"{prefix}[{one.index}].check-id"
                problems.append(ConfigError(exc.reason, source=source, field_path=where))
        if len(problems) == 1:
            raise problems[0]
        if problems:
            raise ConfigErrors(problems, source=source)
        return self

    @classmethod
    def from_dicts(
        cls, raws: Iterable[Mapping[str, Any]], *, source: str | None = None, dialect: Dialect = "auto"
    ) -> CheckSet:
        """A CheckSet of checks in our format or DQX's (see :meth:`add_checks_from_dicts`)."""
        return cls().add_checks_from_dicts(raws, source=source, dialect=dialect)

    @classmethod
    def from_yaml(cls, path: str | Path) -> CheckSet:
        """Load a YAML file holding a list of checks, or a mapping with a ``checks:`` list (SparkDQ's form)."""
        from streaming_dq.config.yaml_reader import read_yaml

        source = str(path)
        data = read_yaml(path)
        dialect: Dialect = "auto"
        if isinstance(data, Mapping):
            if "checks" not in data:
                raise ConfigError("expected a list of checks or a mapping with a 'checks' key", source=source)
            dialect = _dialect(data.get("dialect", "auto"), source)
            data = data["checks"]
        if not isinstance(data, list):
            raise ConfigError("'checks' must be a list", source=source, field_path="checks")
        return cls().add_checks_from_dicts(data, source=source, dialect=dialect)

    def get_row_checks(self) -> list[BaseRowCheck]:
        return [c for c in self._checks if isinstance(c, BaseRowCheck)]

    def get_aggregate_checks(self) -> list[BaseAggregateCheck]:
        return [c for c in self._checks if isinstance(c, BaseAggregateCheck)]

    @property
    def checks(self) -> list[BaseCheck]:
        return list(self._checks)

    def __iter__(self) -> Iterator[BaseCheck]:
        return iter(self._checks)

    def __len__(self) -> int:
        return len(self._checks)

    def __repr__(self) -> str:
        return f"CheckSet({[c.check_id for c in self._checks]})"


def _dialect(value: Any, source: str | None) -> Dialect:
    if value not in ("auto", "native", "dqx"):
        raise ConfigError(
            f"dialect must be auto, native or dqx, not {value!r}", source=source, field_path="dialect"
        )
    return value
