"""BatchValidationResult: the annotated DataFrame, its views, the summary and the report."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streaming_dq.core.results import AggregateCheckResult

if TYPE_CHECKING:
    from streaming_dq.engine.decision import BatchDecision
    from streaming_dq.engine.report import ValidationReport

PASSED_COLUMN = "_dq_passed"
ERRORS_COLUMN = "_dq_errors"
TIMESTAMP_COLUMN = "_dq_validation_ts"


@dataclass(frozen=True)
class ValidationSummary:
    """Counts of one validation run.

    ``pass_rate`` is passed/total rounded to 2 decimals (0.0 on empty input); ``all_passed`` is decided from
    the counts, so 999 passed rows of 1000 is not "all passed" even though the rate rounds to 1.0.
    """

    total_records: int
    passed_records: int
    failed_records: int
    warning_records: int
    pass_rate: float
    timestamp: datetime

    @property
    def all_passed(self) -> bool:
        return self.failed_records == 0

    def __str__(self) -> str:
        return (
            f"{self.total_records} rows: {self.passed_records} passed, {self.failed_records} failed, "
            f"{self.warning_records} warned (pass rate {self.pass_rate:.2f})"
        )


@dataclass(frozen=True)
class BatchValidationResult:
    """The outcome of ``BatchDQEngine.run_batch``.

    ``df`` is the lazy annotated DataFrame (input columns + ``_dq_passed``, ``_dq_errors``,
    ``_dq_validation_ts``). The counts behind :meth:`summary` and the aggregate results were computed in the
    run's single aggregation pass, so :meth:`summary` and :meth:`report` run no Spark job. Each ``*_df()`` view
    is lazy; cache ``df`` when deriving several of them.
    """

    df: DataFrame
    aggregate_results: tuple[AggregateCheckResult, ...]
    input_columns: list[str]
    timestamp: datetime
    outcome: BatchDecision

    def pass_df(self) -> DataFrame:
        """Rows that passed, with exactly the input columns (round-trips to the source schema)."""
        return self.df.filter(F.col(PASSED_COLUMN)).select(*[F.col(f"`{c}`") for c in self.input_columns])

    def fail_df(self) -> DataFrame:
        """Rows that failed, with ``_dq_errors``, ``_dq_passed`` and ``_dq_validation_ts``."""
        cols = [*[f"`{c}`" for c in self.input_columns], ERRORS_COLUMN, PASSED_COLUMN, TIMESTAMP_COLUMN]
        return self.df.filter(~F.col(PASSED_COLUMN)).select(*cols)

    def warn_df(self) -> DataFrame:
        """Passed rows that carry at least one warning in ``_dq_errors``."""
        has_warning = F.exists(F.col(ERRORS_COLUMN), lambda e: e["severity"] == F.lit("warning"))
        cols = [*[f"`{c}`" for c in self.input_columns], ERRORS_COLUMN, TIMESTAMP_COLUMN]
        return self.df.filter(F.col(PASSED_COLUMN) & has_warning).select(*cols)

    def summary(self) -> ValidationSummary:
        o = self.outcome
        total = o.total
        passed = o.passed_records
        return ValidationSummary(
            total_records=total,
            passed_records=passed,
            failed_records=total - passed,
            warning_records=o.warning_records,
            pass_rate=round(passed / total, 2) if total else 0.0,
            timestamp=self.timestamp,
        )

    def report(self) -> ValidationReport:
        from streaming_dq.engine.report import ValidationReport

        return ValidationReport.from_outcome(self.outcome)
