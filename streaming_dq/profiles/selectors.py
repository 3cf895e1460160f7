"""Selectors: which checks a profile rule applies to.

A selector looks at a :class:`CheckTarget` (a check's id, group and tags) and answers yes or no. The engine
builds one target per check; selectors never see the check object itself, so they stay pure and hashable.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from streaming_dq.exceptions import ConfigError


def _require_name(value: object, what: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{what} must be a non-empty string, got {value!r}", field_path=what)


@dataclass(frozen=True)
class CheckTarget:
    """What a selector may look at: the identity of one check.

    Attributes:
        check_id: The check's id, unique within its CheckSet.
        group: The name of the group (a "check" in the dqx vocabulary) the check belongs to, if any.
        tags: The check's tags.

    Example:
        >>> CheckTarget("orders-min", group="Volume", tags=frozenset({"xmas"}))
        CheckTarget(check_id='orders-min', group='Volume', tags=frozenset({'xmas'}))
    """

    check_id: str
    group: str | None = None
    tags: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if not isinstance(self.tags, frozenset):
            object.__setattr__(self, "tags", frozenset(self.tags))

    @classmethod
    def from_check(cls, check: object) -> CheckTarget:
        """Build the target of a check object from its ``check_id``, ``group`` and ``tags`` attributes.

        A missing ``group`` means no group; missing or ``None`` ``tags`` means no tags.

        Example:
            >>> class Check:
            ...     check_id = "orders-min"
            ...     tags = ["xmas"]
            >>> CheckTarget.from_check(Check())
            CheckTarget(check_id='orders-min', group=None, tags=frozenset({'xmas'}))
        """
        tags: Iterable[str] | None = getattr(check, "tags", None)
        return cls(
            check_id=str(getattr(check, "check_id")),  # noqa: B009 - a clear AttributeError is the intent
            group=getattr(check, "group", None),
            tags=frozenset(tags or ()),
        )


@dataclass(frozen=True)
class CheckIdSelector:
    """Selects the one check with this ``check_id``.

    Example:
        >>> CheckIdSelector("orders-min").matches(CheckTarget("orders-min"))
        True
    """

    check_id: str

    def __post_init__(self) -> None:
        _require_name(self.check_id, "check-id")

    def matches(self, target: CheckTarget) -> bool:
        """Return whether ``target`` is the selected check."""
        return target.check_id == self.check_id


@dataclass(frozen=True)
class GroupSelector:
    """Selects every check of a group, or, with ``check_id``, one check of that group.

    Example:
        >>> GroupSelector("Volume").matches(CheckTarget("orders-min", group="Volume"))
        True
        >>> GroupSelector("Volume", "other").matches(CheckTarget("orders-min", group="Volume"))
        False
    """

    group: str
    check_id: str | None = None

    def __post_init__(self) -> None:
        _require_name(self.group, "check")
        if self.check_id is not None:
            _require_name(self.check_id, "check-id")

    def matches(self, target: CheckTarget) -> bool:
        """Return whether ``target`` belongs to the group (and is the named check, when one is named)."""
        if target.group != self.group:
            return False
        return self.check_id is None or target.check_id == self.check_id


@dataclass(frozen=True)
class TagSelector:
    """Selects every check carrying ``tag``.

    Example:
        >>> TagSelector("xmas").matches(CheckTarget("orders-min", tags=frozenset({"xmas"})))
        True
    """

    tag: str

    def __post_init__(self) -> None:
        _require_name(self.tag, "tag")

    def matches(self, target: CheckTarget) -> bool:
        """Return whether ``target`` carries the tag."""
        return self.tag in target.tags


Selector = CheckIdSelector | GroupSelector | TagSelector
"""Any of the selectors a :class:`~streaming_dq.profiles.rules.Rule` accepts."""

SELECTOR_TYPES: tuple[type, ...] = (CheckIdSelector, GroupSelector, TagSelector)
