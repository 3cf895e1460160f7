"""Tolerances of row checks: how many failing rows a batch may have before the check fails the batch.

A row check without a tolerance reports ``failed`` as soon as one row fires. With
``tolerance: {max-fail-rate: 0.01}`` or ``tolerance: {max-fail-count: 5}`` its rows are still routed as its
severity says (quarantined at a fail level, warned otherwise), and the check's verdict on the batch is
``passed`` while the failing rows stay within the tolerance. Above it the check fails the batch like a failed
aggregate check of the tolerance's severity (the check's own unless ``severity`` is given): at a fail level
every row of the batch goes to quarantine with the check in its reasons (or the gate stops, under
``on-aggregate-failure: stop``); at a warning level every passing row carries it as a warning.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from streaming_dq.core.severity import Severity, normalize_severity
from streaming_dq.exceptions import ConfigError

__all__ = ["Tolerance"]


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class Tolerance(BaseModel):
    """``{max-fail-rate: 0.01}`` (a share of the batch's rows the check judged) or ``{max-fail-count: 5}``.

    Both may be given: the batch fails the check when either is exceeded. A rate is a share of the batch's
    rows (of the rows under the check's override group when profiles split the batch), also for a check with
    a ``filter``: the filter narrows which rows can fail, not what the rate is a share of. Both bounds are
    inclusive: ``max-fail-count: 5`` tolerates five failing rows, not six.

    Example:
        >>> t = Tolerance(max_fail_rate=0.01)
        >>> t.exceeded(1, 100), t.exceeded(2, 100)
        (False, True)
        >>> t.describe()
        'at most 1% of the rows'
    """

    model_config = ConfigDict(alias_generator=_kebab, populate_by_name=True, extra="forbid", frozen=True)

    max_fail_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    max_fail_count: int | None = Field(default=None, ge=0)
    severity: Severity | None = None

    @field_validator("severity", mode="before")
    @classmethod
    def _normalise_severity(cls, value: Any) -> Severity | None:
        return None if value is None else normalize_severity(value)

    @model_validator(mode="after")
    def _one_bound(self) -> Tolerance:
        if self.max_fail_rate is None and self.max_fail_count is None:
            raise ConfigError("tolerance needs max-fail-rate or max-fail-count", field_path="max-fail-rate")
        return self

    def exceeded(self, violations: int, judged: int) -> bool:
        """Whether ``violations`` failing rows among ``judged`` rows are more than the tolerance allows."""
        if self.max_fail_count is not None and violations > self.max_fail_count:
            return True
        # Compared as integers (violations > rate * judged loses nothing to floating point for counts < 2^53).
        return self.max_fail_rate is not None and judged > 0 and violations > self.max_fail_rate * judged

    def describe(self) -> str:
        """The tolerance in words: ``at most 1% of the rows``, ``at most 5 rows``."""
        parts = []
        if self.max_fail_rate is not None:
            parts.append(f"{self.max_fail_rate * 100:g}% of the rows")
        if self.max_fail_count is not None:
            parts.append(f"{self.max_fail_count} row{'' if self.max_fail_count == 1 else 's'}")
        return "at most " + " and ".join(parts)
