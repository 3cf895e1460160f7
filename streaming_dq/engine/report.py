"""A plain-text report of a validation run: PASSED / FAILED / SKIPPED sections with plain-words details."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from streaming_dq.core.base_check import BaseAggregateCheck

if TYPE_CHECKING:
    from streaming_dq.engine.decision import BatchDecision

ReportStatus = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class ReportLine:
    check_id: str
    check_type: str
    severity: str
    status: ReportStatus
    details: str


@dataclass(frozen=True)
class ValidationReport:
    """One line per check, in declaration order."""

    lines: tuple[ReportLine, ...]

    @classmethod
    def from_outcome(cls, outcome: BatchDecision) -> ValidationReport:
        lines: list[ReportLine] = []
        for r in outcome.row_results:
            details = (
                f"Skipped: disabled by profile(s) {', '.join(r.profiles) or '-'}"
                if r.status == "skipped"
                else r.check.violation_details(r.violations, r.total)  # type: ignore[attr-defined]
            )
            if r.regime:
                details += f" [profiles: {', '.join(r.regime)}]"
            lines.append(ReportLine(r.check.check_id, r.check_type, r.severity.value, r.status, details))  # type: ignore[arg-type]
        for a in outcome.aggregate_results:
            check = _find_check(outcome, a.check_id)
            details = check.details(a) if check is not None else str(a.metrics)
            if a.regime:
                details += f" [profiles: {', '.join(a.regime)}]"
            lines.append(ReportLine(a.check_id, a.check_type, a.severity.value, a.status, details))
        return cls(tuple(lines))

    @property
    def passed(self) -> list[ReportLine]:
        return [line for line in self.lines if line.status == "passed"]

    @property
    def failed(self) -> list[ReportLine]:
        return [line for line in self.lines if line.status == "failed"]

    @property
    def skipped(self) -> list[ReportLine]:
        return [line for line in self.lines if line.status == "skipped"]

    @property
    def all_passed(self) -> bool:
        return not self.failed

    def __str__(self) -> str:
        out = [f"Validation Report: {len(self.passed)} passed, {len(self.failed)} failed", "-" * 50]
        for title, mark, lines in (
            ("PASSED:", "✓", self.passed),
            ("FAILED:", "✗", self.failed),
            ("SKIPPED:", "-", self.skipped),
        ):
            if not lines:
                continue
            out.append(title)
            for line in lines:
                sev = f" ({line.severity})" if line.status == "failed" else ""
                out.append(f"{mark} {line.check_id}{sev}")
                out.append(f"  Details: {line.details}")
            out.append("")
        return "\n".join(out).rstrip() + "\n"


def _find_check(outcome: BatchDecision, check_id: str) -> BaseAggregateCheck | None:
    check = outcome.checks_by_id.get(check_id)
    return check if isinstance(check, BaseAggregateCheck) else None
