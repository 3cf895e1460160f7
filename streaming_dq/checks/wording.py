"""Plain-words phrasing shared by the catalog's report details.

Numbers are shown the way a person writes them: a whole number without ``.0``, a fraction with at most four
decimals, a share of rows as a percentage with two.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from streaming_dq.core.base_check import BaseAggregateCheck

if TYPE_CHECKING:
    from streaming_dq.core.results import AggregateCheckResult


def number(value: Any) -> str:
    """``1000.0`` -> ``1000``, ``0.833333`` -> ``0.8333``, ``None`` -> ``undefined``.

    Example:
        >>> number(1000.0), number(0.8333333), number(None)
        ('1000', '0.8333', 'undefined')
    """
    if value is None:
        return "undefined"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(round(value, 4))
    return str(value)


def percent(part: int, total: int) -> str:
    """``part`` of ``total`` as a percentage with two decimals (0.00% of nothing)."""
    return f"{100.0 * part / total if total else 0.0:.2f}%"


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """``1 row``, ``3 rows``, ``no rows``."""
    word = singular if n == 1 else plural_form or f"{singular}s"
    return f"{n if n else 'no'} {word}"


def subject(columns: Sequence[str]) -> str:
    """``Column 'a'`` or ``Columns 'a, b'``."""
    if len(columns) == 1:
        return f"Column '{columns[0]}'"
    return f"Columns '{', '.join(columns)}'"


def violations_sentence(
    columns: Sequence[str], violations: int, total: int, singular: str, plural_form: str | None = None
) -> str:
    """``Column 'temperature' has 12 null values (0.40%)`` / ``Columns 'a, b' have no duplicate rows``."""
    verb = "has" if len(columns) == 1 else "have"
    share = f" ({percent(violations, total)})" if violations else ""
    return f"{subject(columns)} {verb} {plural(violations, singular, plural_form)}{share}"


class MetricDetails(BaseAggregateCheck):
    """Report wording for aggregate checks with a scalar metric: ``<label> is <value>; expected <bound>``.

    Values are shown with :func:`number`; a profile multiplier other than 1 is shown as ``(x2 = 240)``.
    """

    def details(self, result: AggregateCheckResult) -> str:
        m = result.metrics
        if result.status == "skipped" or "value" not in m:
            return super().details(result)
        shown = number(m["value"])
        multiplier = m.get("multiplier", 1.0)
        if multiplier not in (None, 1, 1.0) and m.get("adjusted") is not None:
            shown += f" (x{number(multiplier)} = {number(m['adjusted'])})"
        return f"{self.metric_label()} is {shown}; expected {self.expectation()}"
