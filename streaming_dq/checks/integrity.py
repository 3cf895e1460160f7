"""Referential-integrity checks against a named reference dataset supplied per run.

* ``foreign-key-check`` (aggregate): passes when every non-NULL ``column`` value exists in
  ``reference-dataset``.``reference-column``.
* ``foreign-key-row-check`` (row): marks each row whose non-NULL key is absent from the reference.
* ``reference-match-check`` (row): marks each row that is missing from the reference (by its key) or whose
  compared columns differ from the reference row's (DQX's ``compare_datasets`` row by row).

Both join on a broadcast, de-duplicated projection of the reference key (cast to the key's type first), so
duplicate reference keys never duplicate rows. A reference dataset missing from the run raises
MissingReferenceDatasetError; a missing reference column raises CheckEvaluationError.

NULL semantics: a NULL key passes (it refers to nothing; pair with ``null-check`` to require it).
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any, ClassVar

from pydantic import Field
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from streaming_dq.checks.wording import MetricDetails, violations_sentence
from streaming_dq.core.base_check import BaseAggregateCheck, BaseCheck, BaseRowCheck, IntegrityCheckMixin
from streaming_dq.core.base_config import BaseAggregateCheckConfig, BaseRowCheckConfig
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.results import AggregateEvaluationResult
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col, quote, try_cast
from streaming_dq.exceptions import CheckEvaluationError, ConfigError


class _ForeignKey(IntegrityCheckMixin):
    check_id: str
    column: str
    reference_dataset: str
    reference_column: str

    def _set_reference(self, column: str, reference_dataset: str, reference_column: str) -> None:
        self.column = column
        self.reference_dataset = reference_dataset
        self.reference_column = reference_column

    @property
    def key_alias(self) -> str:
        """The internal name of the joined reference key (never a data column's name)."""
        return "__dq_fk_" + hashlib.sha1(self.check_id.encode()).hexdigest()[:12]

    def reference_keys(self, df: DataFrame) -> DataFrame:
        """The distinct non-NULL reference keys, cast to the type of ``df[column]``, marked for broadcast.

        Raises:
            MissingReferenceDatasetError: The reference dataset was not supplied.
            CheckEvaluationError: The reference dataset has no ``reference_column``.
        """
        ref = self.get_reference_df(self.reference_dataset)
        if self.reference_column not in ref.columns:
            raise CheckEvaluationError(
                self.check_id,
                f"reference dataset {self.reference_dataset!r} has no column {self.reference_column!r} "
                f"(columns: {', '.join(ref.columns)})",
            )
        key_type = df.schema[self.column].dataType
        keys = ref.select(try_cast(quote(self.reference_column), key_type).alias(self.key_alias))
        return F.broadcast(keys.where(F.col(self.key_alias).isNotNull()).distinct())

    def joined(self, df: DataFrame) -> DataFrame:
        """``df`` with the matching reference key (NULL when absent), one output row per input row."""
        return df.join(self.reference_keys(df), col(self.column) == F.col(self.key_alias), "left")


class ForeignKeyCheck(MetricDetails, _ForeignKey, BaseAggregateCheck):
    """Passes when every non-NULL ``column`` value exists in the reference column.

    The metric is the number of rows whose key is missing (the profile multiplier scales it).

    NULL semantics: a NULL key passes.

    Example:
        >>> ForeignKeyCheck("known-customer", "customer_id", "customers", "id")  # doctest: +SKIP
    """

    def __init__(
        self,
        check_id: str,
        column: str,
        reference_dataset: str,
        reference_column: str,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self._set_reference(column, reference_dataset, reference_column)

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        joined = self.joined(df.select(col(self.column)))
        missing = col(self.column).isNotNull() & F.col(self.key_alias).isNull()
        row = joined.agg(F.count("*").alias("rows"), F.count_if(missing).alias("missing")).first()
        rows, absent = (int(row["rows"] or 0), int(row["missing"] or 0)) if row else (0, 0)
        metrics = {
            "value": absent,
            "multiplier": multiplier,
            "adjusted": absent * multiplier,
            "row_count": rows,
            "missing_ratio": absent / rows if rows else None,
        }
        return AggregateEvaluationResult(absent == 0, metrics)

    def metric_label(self) -> str:
        return f"Rows whose '{self.column}' is not in {self.reference_dataset}.{self.reference_column}"

    def expectation(self) -> str:
        return "0"


class ForeignKeyRowCheck(_ForeignKey, BaseRowCheck):
    """Marks each row whose non-NULL ``column`` value is absent from the reference column.

    NULL semantics: a NULL key passes.
    """

    def __init__(
        self,
        check_id: str,
        column: str,
        reference_dataset: str,
        reference_column: str,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self._set_reference(column, reference_dataset, reference_column)

    def validate(self, df: DataFrame, column: str | None = None) -> DataFrame:
        """Add the verdict column (True = key absent). Lazy: a broadcast left join, no Spark action."""
        absent = col(self.column).isNotNull() & F.col(self.key_alias).isNull()
        return self.joined(df).withColumn(column or self.result_column, absent).drop(self.key_alias)

    def violation_details(self, violations: int, total: int) -> str:
        where = f"{self.reference_dataset}.{self.reference_column}"
        return violations_sentence(
            [self.column], violations, total, f"value missing from {where}", f"values missing from {where}"
        )


@register_check_config(check_name="foreign-key-check")
class ForeignKeyCheckConfig(BaseAggregateCheckConfig):
    """``{check: foreign-key-check, check-id, column, reference-dataset, reference-column}``."""

    check_class: ClassVar[type[BaseCheck]] = ForeignKeyCheck
    column: str = Field(min_length=1)
    reference_dataset: str = Field(min_length=1)
    reference_column: str = Field(min_length=1)


@register_check_config(check_name="foreign-key-row-check")
class ForeignKeyRowCheckConfig(BaseRowCheckConfig):
    """``{check: foreign-key-row-check, check-id, column, reference-dataset, reference-column}``."""

    check_class: ClassVar[type[BaseCheck]] = ForeignKeyRowCheck
    column: str = Field(min_length=1)
    reference_dataset: str = Field(min_length=1)
    reference_column: str = Field(min_length=1)


class ReferenceMatchCheck(IntegrityCheckMixin, BaseRowCheck):
    """Fails a row whose key (``columns``) has no row in ``reference-dataset``, or whose ``compare-columns``
    differ from that reference row's (NULL equals NULL), or whose key matches several reference rows.

    The reference is joined once per batch (left join on its key, aggregated to one row per key first, so a
    reference never multiplies rows); ``reference-columns`` names its key columns when they differ.
    Numbers within ``abs-tolerance`` of each other count as equal. Without ``compare-columns`` every column the
    batch and the reference share (keys and ``exclude-columns`` aside) is compared.

    NULL semantics: a row with a NULL in its key passes (it identifies nothing), unless
    ``treat-null-as-failure: true``.
    """

    def __init__(
        self,
        check_id: str,
        columns: list[str],
        reference_dataset: str,
        compare_columns: list[str] | None = None,
        reference_columns: list[str] | None = None,
        exclude_columns: list[str] | None = None,
        abs_tolerance: float = 0.0,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        if reference_columns is not None and len(reference_columns) != len(columns):
            raise ConfigError(
                "reference-columns must name as many columns as columns", field_path="reference-columns"
            )
        self.columns = list(columns)
        self.reference_dataset = reference_dataset
        self.compare_columns = list(compare_columns) if compare_columns is not None else None
        self.reference_columns = list(reference_columns or columns)
        self.exclude_columns = list(exclude_columns or [])
        self.abs_tolerance = float(abs_tolerance)
        self.treat_null_as_failure = treat_null_as_failure

    @property
    def _prefix(self) -> str:
        return "__dq_ref_" + hashlib.sha1(self.check_id.encode()).hexdigest()[:10]

    def validate(self, df: DataFrame, column: str | None = None) -> DataFrame:
        ref = self.get_reference_df(self.reference_dataset)
        skip = {*self.columns, *self.reference_columns, *self.exclude_columns}
        compare = (
            self.compare_columns
            if self.compare_columns is not None
            else [c for c in df.columns if c in ref.columns and c not in skip and not c.startswith("__dq")]
        )
        missing = [c for c in [*self.reference_columns, *compare] if c not in ref.columns]
        if missing:
            raise CheckEvaluationError(
                self.check_id,
                f"reference dataset {self.reference_dataset!r} has no column(s) {', '.join(missing)} "
                f"(columns: {', '.join(ref.columns)})",
            )
        p = self._prefix
        keys = [f"{p}_k{i}" for i in range(len(self.columns))]
        vals = [f"{p}_v{i}" for i in range(len(compare))]
        per_key = ref.groupBy(
            *[
                try_cast(quote(r), df.schema[c].dataType).alias(k)
                for r, c, k in zip(self.reference_columns, self.columns, keys, strict=True)
            ]
        ).agg(
            F.count(F.lit(1)).alias(f"{p}_n"),
            *[
                try_cast(f"first({quote(c)})", df.schema[c].dataType).alias(v)
                for c, v in zip(compare, vals, strict=True)
            ],
        )
        on = [col(c) == F.col(k) for c, k in zip(self.columns, keys, strict=True)]
        joined = df.join(per_key, on=on, how="left")
        differs = [
            self._differs(col(c), F.col(v), numeric=isinstance(df.schema[c].dataType, T.NumericType))
            for c, v in zip(compare, vals, strict=True)
        ]
        any_differs = functools.reduce(lambda a, b: a | b, differs, F.lit(False))
        has_null = functools.reduce(lambda a, b: a | b, [col(c).isNull() for c in self.columns])
        verdict = (
            F.when(has_null, F.lit(self.treat_null_as_failure))
            .when(F.col(f"{p}_n").isNull(), F.lit(True))  # no reference row
            .when(F.col(f"{p}_n") > 1, F.lit(True))  # several: which one would be right?
            .otherwise(any_differs)
        )
        return joined.withColumn(column or self.result_column, verdict).drop(*keys, *vals, f"{p}_n")

    def _differs(self, a: Any, b: Any, *, numeric: bool) -> Any:
        if self.abs_tolerance and numeric:
            near = F.abs(a - b) <= self.abs_tolerance
            return ~(a.eqNullSafe(b) | F.coalesce(near, F.lit(False)))
        return ~a.eqNullSafe(b)

    def violation_details(self, violations: int, total: int) -> str:
        what = f"row that is missing from {self.reference_dataset} or differs from it"
        return violations_sentence(
            self.columns,
            violations,
            total,
            what,
            what.replace("row that is", "rows that are").replace("differs", "differ"),
        )


@register_check_config(check_name="reference-match-check")
class ReferenceMatchCheckConfig(BaseRowCheckConfig):
    """``{check: reference-match-check, check-id, columns: [key...], reference-dataset, compare-columns?,
    reference-columns?, exclude-columns?, abs-tolerance?: 0, treat-null-as-failure?}``."""

    check_class: ClassVar[type[BaseCheck]] = ReferenceMatchCheck
    columns: list[str] = Field(min_length=1)
    reference_dataset: str = Field(min_length=1)
    compare_columns: list[str] | None = None
    reference_columns: list[str] | None = None
    exclude_columns: list[str] | None = None
    abs_tolerance: float = Field(default=0.0, ge=0)
    treat_null_as_failure: bool = False
