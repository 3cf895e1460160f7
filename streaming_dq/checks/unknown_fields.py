"""``unknown-fields``: the built-in check on the fields a source's schema does not declare.

A source that detects undeclared fields (line-delimited JSON, a CSV file's header, a Kafka JSON value: see
``SourceSection.detects_unknown_fields``) keeps them, with their values, as a JSON object in its
unknown-fields column; this check fails a row where that column is set: at ``warning`` severity under
``unknown-fields: warn`` (the row passes, counted as warned), at the first fail level under ``quarantine``.
"""

from __future__ import annotations

from collections.abc import Sequence

from streaming_dq.checks.null import NotNullCheck
from streaming_dq.checks.wording import violations_sentence
from streaming_dq.core.severity import Severity

__all__ = ["UNKNOWN_FIELDS_CHECK_ID", "UnknownFieldsCheck", "unknown_fields_check"]

#: The check-id of the built-in check on undeclared fields.
UNKNOWN_FIELDS_CHECK_ID = "unknown-fields"


class UnknownFieldsCheck(NotNullCheck):
    """Fails a row whose unknown-fields column holds keys the source schema does not declare."""

    check_type = "unknown-fields"  # its own name in results and `_dq_errors`, not the parent's

    def __init__(self, column: str, severity: Severity) -> None:
        super().__init__(UNKNOWN_FIELDS_CHECK_ID, [column], severity)

    def violation_details(self, violations: int, total: int) -> str:
        return violations_sentence(
            self.columns, violations, total, "row with undeclared fields", "rows with undeclared fields"
        )


def unknown_fields_check(column: str, policy: str, fail_levels: Sequence[Severity]) -> UnknownFieldsCheck:
    """The built-in check on ``column`` under the ``unknown-fields`` ``policy`` (``warn`` or ``quarantine``)."""
    severity = fail_levels[0] if policy == "quarantine" else Severity.WARNING
    return UnknownFieldsCheck(column, severity)
