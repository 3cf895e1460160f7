"""Result values of aggregate checks. Data-quality failures are values, not exceptions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from streaming_dq.core.severity import Severity

AggregateStatus = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class AggregateEvaluationResult:
    """The raw outcome of an aggregate check: a verdict and the metrics it was decided from."""

    passed: bool
    metrics: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "metrics": dict(self.metrics)}


@dataclass(frozen=True)
class AggregateCheckResult:
    """An aggregate check's verdict with its identity, as reported.

    Attributes:
        check: The implementing class name.
        check_id: The check's id.
        severity: The effective severity (after profile overrides).
        parameters: The check's parameters, from its constructor signature.
        result: The verdict and metrics.
        status: ``passed``, ``failed`` or ``skipped`` (disabled by a profile).
        multiplier: The profile multiplier applied to the metric before comparison.
        profiles: Names of the profiles whose rules applied.
        regime: Names of all profiles active for the rows this verdict covers.
        regime_mask: The engine's internal id of that regime (0: no profile active).
    """

    check: str
    check_id: str
    severity: Severity
    parameters: dict[str, Any]
    result: AggregateEvaluationResult
    status: AggregateStatus = "passed"
    check_type: str = ""
    multiplier: float = 1.0
    profiles: tuple[str, ...] = ()
    regime: tuple[str, ...] = ()
    regime_mask: int = 0

    @property
    def passed(self) -> bool:
        return self.status != "failed"

    @property
    def metrics(self) -> dict[str, Any]:
        return self.result.metrics

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "check-id": self.check_id,
            "severity": self.severity.value,
            "parameters": self.parameters,
            "result": self.result.to_dict(),
            "status": self.status,
        }
