"""streaming_dq: a data-quality gate for Spark Structured Streaming.

Example:
    >>> from streaming_dq import BatchDQEngine, CheckSet
    >>> checks = CheckSet.from_dicts([{"check": "null-check", "check-id": "id", "columns": ["id"]}])
    >>> engine = BatchDQEngine(checks)
"""

# ruff: noqa: E402 - the check of the pyspark beside the package runs before anything else imports pyspark
from streaming_dq.compat.versions import check_at_import

check_at_import()

from streaming_dq.config.check_set import CheckSet
from streaming_dq.config.factory import CheckFactory
from streaming_dq.config.registry import CheckConfigRegistry
from streaming_dq.core.base_check import (
    BaseAggregateCheck,
    BaseCheck,
    BaseRowCheck,
    IntegrityCheckMixin,
    ObservableAggregateCheck,
)
from streaming_dq.core.base_config import BaseAggregateCheckConfig, BaseCheckConfig, BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.results import AggregateCheckResult, AggregateEvaluationResult
from streaming_dq.core.severity import Severity, normalize_severity
from streaming_dq.engine.batch import BatchDQEngine
from streaming_dq.engine.report import ValidationReport
from streaming_dq.engine.result import BatchValidationResult, ValidationSummary
from streaming_dq.sink import QualityGate, ReferenceSpec

__all__ = [
    "AggregateCheckResult",
    "AggregateEvaluationResult",
    "BaseAggregateCheck",
    "BaseAggregateCheckConfig",
    "BaseCheck",
    "BaseCheckConfig",
    "BaseRowCheck",
    "BaseRowCheckConfig",
    "BatchDQEngine",
    "BatchValidationResult",
    "CheckConfigRegistry",
    "CheckFactory",
    "CheckSet",
    "IntegrityCheckMixin",
    "ObservableAggregateCheck",
    "QualityGate",
    "ReferenceSpec",
    "Severity",
    "ValidationReport",
    "ValidationSummary",
    "normalize_severity",
    "register_check_config",
]
