"""A plain-text report of a validation run: PASSED / FAILED / SKIPPED sections with plain-words details."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from streaming_dq.core.base_check import BaseAggregateCheck

if TYPE_CHECKING:
    from streaming_dq.engine.decision import BatchDecision

ReportStatus = Literal["passed", "failed", "skipped", "not-judged"]

#: The report line of the malformed-record guard (rows the source could not parse).
MALFORMED_LINE_ID = "malformed-record"
_NOT_JUDGED = (
    "Not judged from one batch: a window-scoped check judges whole event-time windows across batches "
    "(the gate's metrics table; `streaming-dq metrics --window ...`)"
)


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
        if outcome.malformed is not None:
            n, total = outcome.malformed, outcome.total
            share = f" ({n / total:.2%})" if n and total else ""
            details = f"{n} of {total} rows could not be parsed{share}" if n else "No malformed rows"
            lines.append(
                ReportLine(
                    MALFORMED_LINE_ID, "malformed-record", "critical", "failed" if n else "passed", details
                )
            )
        for r in outcome.row_results:
            details = (
                f"Skipped: disabled by profile(s) {', '.join(r.profiles) or '-'}"
                if r.status == "skipped"
                else r.check.violation_details(r.violations, r.total)
            )
            if r.status != "skipped" and r.check.tolerance is not None:
                verdict = "exceeded" if r.status == "failed" else "within"
                details += f"; {verdict} the tolerance of {r.check.tolerance.describe()}"
            if r.regime:
                details += f" [profiles: {', '.join(r.regime)}]"
            lines.append(ReportLine(r.check.check_id, r.check_type, r.severity.value, r.status, details))  # type: ignore[arg-type]
        for a in outcome.aggregate_results:
            check = _find_check(outcome, a.check_id)
            details = check.details(a) if check is not None else str(a.metrics)
            if a.regime:
                details += f" [profiles: {', '.join(a.regime)}]"
            lines.append(ReportLine(a.check_id, a.check_type, a.severity.value, a.status, details))
        for check_id in outcome.window_checks:
            scoped = outcome.checks_by_id.get(check_id)
            check_type = scoped.check_type if scoped is not None else "window"
            severity = scoped.severity.value if scoped is not None else "critical"
            lines.append(ReportLine(check_id, check_type, severity, "not-judged", _NOT_JUDGED))
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
    def not_judged(self) -> list[ReportLine]:
        return [line for line in self.lines if line.status == "not-judged"]

    @property
    def all_passed(self) -> bool:
        return not self.failed

    def __str__(self) -> str:
        out = [f"Validation Report: {len(self.passed)} passed, {len(self.failed)} failed", "-" * 50]
        for title, mark, lines in (
            ("PASSED:", "✓", self.passed),
            ("FAILED:", "✗", self.failed),
            ("SKIPPED:", "-", self.skipped),
            ("NOT JUDGED HERE:", "?", self.not_judged),
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
