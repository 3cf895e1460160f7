"""Shared shape of the min / max / between row checks (numeric, date and timestamp families).

A bound check looks at each of its ``columns`` and fails a row when ANY of them is out of bounds. Bounds are
exclusive unless ``inclusive`` says otherwise, exactly as in SparkDQ (``inclusive: false`` for min/max,
``inclusive: [false, false]`` for between).

NULL semantics: a NULL value is "not applicable" and passes, unless ``treat_null_as_failure`` is set. A
non-NULL value that cannot be read as the family's type (e.g. the text ``"soon"`` in a date check) fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from functools import reduce
from typing import Any, ClassVar

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streaming_dq.checks.wording import number, violations_sentence
from streaming_dq.core.base_check import BaseRowCheck
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col, quote, try_cast

BoundValue = int | float | Decimal | str


class BoundCheck(BaseRowCheck):
    """Base of the bound checks: reads each column as :attr:`read_as` and applies :meth:`outside`."""

    #: Spark type the columns and bounds are read as (None: numeric, compared as they are).
    read_as: ClassVar[str | None] = None
    columns: list[str]
    treat_null_as_failure: bool

    def _init_bounds(self, columns: Sequence[str], treat_null_as_failure: bool) -> None:
        self.columns = list(columns)
        self.treat_null_as_failure = treat_null_as_failure

    def literal(self, bound: BoundValue) -> Column:
        """The bound as a Spark literal of the family's type."""
        return F.lit(bound) if self.read_as is None else F.lit(bound).cast(self.read_as)

    def outside(self, value: Column) -> Column:
        """True when a (non-NULL, readable) value is out of bounds."""
        raise NotImplementedError

    def condition_text(self) -> str:
        """The failing condition in words, e.g. ``< 0``."""
        raise NotImplementedError

    def failure_condition(self, df: DataFrame) -> Column:
        terms = []
        for name in self.columns:
            raw = col(name)
            if self.read_as is None:
                terms.append(
                    F.when(raw.isNull(), F.lit(self.treat_null_as_failure)).otherwise(self.outside(raw))
                )
                continue
            value = try_cast(quote(name), self.read_as)
            terms.append(
                F.when(raw.isNull(), F.lit(self.treat_null_as_failure))
                .when(value.isNull(), F.lit(True))  # present but unreadable as the family's type
                .otherwise(self.outside(value))
            )
        return reduce(lambda a, b: a | b, terms)

    def violation_details(self, violations: int, total: int) -> str:
        cond = self.condition_text()
        if self.read_as is not None:
            cond += f" or not a {self.read_as}"
        if self.treat_null_as_failure:
            cond += " or NULL"
        if len(self.columns) == 1:
            return violations_sentence(self.columns, violations, total, f"value {cond}", f"values {cond}")
        return violations_sentence(
            self.columns, violations, total, f"row with a value {cond}", f"rows with a value {cond}"
        )


def _show(bound: BoundValue) -> str:
    return number(bound) if isinstance(bound, int | float) else str(bound)


class MinBoundCheck(BoundCheck):
    """Fails a row when a value is below ``min_value`` (or equal to it, unless ``inclusive``)."""

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        min_value: BoundValue,
        inclusive: bool = False,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self._init_bounds(columns, treat_null_as_failure)
        self.min_value = min_value
        self.inclusive = inclusive

    def outside(self, value: Column) -> Column:
        bound = self.literal(self.min_value)
        return value < bound if self.inclusive else value <= bound

    def condition_text(self) -> str:
        return f"{'<' if self.inclusive else '<='} {_show(self.min_value)}"


class MaxBoundCheck(BoundCheck):
    """Fails a row when a value is above ``max_value`` (or equal to it, unless ``inclusive``)."""

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        max_value: BoundValue,
        inclusive: bool = False,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self._init_bounds(columns, treat_null_as_failure)
        self.max_value = max_value
        self.inclusive = inclusive

    def outside(self, value: Column) -> Column:
        bound = self.literal(self.max_value)
        return value > bound if self.inclusive else value >= bound

    def condition_text(self) -> str:
        return f"{'>' if self.inclusive else '>='} {_show(self.max_value)}"


class BetweenBoundCheck(BoundCheck):
    """Fails a row when a value lies outside ``min_value`` .. ``max_value``.

    ``inclusive`` is a pair: whether ``min_value`` and ``max_value`` themselves are allowed.
    """

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        min_value: BoundValue,
        max_value: BoundValue,
        inclusive: tuple[bool, bool] = (False, False),
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, severity, **kw)
        self._init_bounds(columns, treat_null_as_failure)
        self.min_value = min_value
        self.max_value = max_value
        self.inclusive = (bool(inclusive[0]), bool(inclusive[1]))

    def outside(self, value: Column) -> Column:
        lo, hi = self.literal(self.min_value), self.literal(self.max_value)
        low = value < lo if self.inclusive[0] else value <= lo
        high = value > hi if self.inclusive[1] else value >= hi
        return low | high

    def condition_text(self) -> str:
        left = "[" if self.inclusive[0] else "("
        right = "]" if self.inclusive[1] else ")"
        return f"outside {left}{_show(self.min_value)}, {_show(self.max_value)}{right}"
