"""The check contracts: identity and severity, and the two evaluation shapes (per row, per dataset)."""

from __future__ import annotations

import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from streaming_dq.compat.versions import missing
from streaming_dq.core.alerting import AlertThreshold
from streaming_dq.core.references import reference_dataset
from streaming_dq.core.results import AggregateCheckResult, AggregateEvaluationResult
from streaming_dq.core.severity import Severity, normalize_severity
from streaming_dq.core.tolerance import Tolerance
from streaming_dq.exceptions import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from streaming_dq.core.scope import WindowScope
    from streaming_dq.states.spec import StateSpec

_NOT_PARAMETERS = frozenset({"self", "check_id", "severity", "tags", "group", "scope", "filter", "tolerance"})


class BaseCheck(ABC):
    """What every check has: an id unique within its CheckSet, a severity, optional tags and a group.

    Every constructor argument that should appear in reports must be stored as an attribute of the same name:
    :meth:`description` reads the parameters from the constructor signature.
    """

    #: The registered config name (``null-check`` ...), set by ``@register_check_config``.
    check_type: ClassVar[str] = ""
    #: The kind of column the check's ``columns``/``column`` must be (``numeric``, ``string``, ``temporal``),
    #: or None for any type (see :mod:`streaming_dq.core.column_types`).
    column_kind: ClassVar[str | None] = None
    #: A Spark capability the check needs that older supported versions lack (a key of
    #: :data:`streaming_dq.compat.versions.FEATURES`); ``validate`` and ``run`` refuse the check without it.
    spark_feature: ClassVar[str | None] = None

    def __init__(
        self,
        check_id: str,
        severity: Severity | str = Severity.CRITICAL,
        *,
        tags: Iterable[str] = (),
        group: str | None = None,
        scope: WindowScope | None = None,
        filter: str | None = None,
        tolerance: Tolerance | Mapping[str, Any] | None = None,
        alert: AlertThreshold | Mapping[str, Any] | None = None,
    ) -> None:
        if not check_id or not isinstance(check_id, str):
            raise ConfigError("check_id must be a non-empty string", field_path="check-id")
        if self.spark_feature is not None:
            refused = missing(
                self.spark_feature, what=f"{self.check_type or type(self).__name__} ({check_id!r})"
            )
            if refused:
                raise ConfigError(refused, field_path="check")
        self.check_id = check_id
        self.severity = normalize_severity(severity)
        #: The share of rows the check may flag before the shipped alert rule pages (None: no such alert).
        self.alert = (
            alert
            if alert is None or isinstance(alert, AlertThreshold)
            else AlertThreshold.model_validate(alert)
        )
        self.tags: frozenset[str] = frozenset(tags)
        self.group = group
        if scope is not None and not isinstance(self, ObservableAggregateCheck):
            raise ConfigError(f"check {check_id!r}: only observable aggregate checks can have a window scope")
        self.scope = scope
        if (filter is not None or tolerance is not None) and not isinstance(self, BaseRowCheck):
            which = "filter" if filter is not None else "tolerance"
            raise ConfigError(f"check {check_id!r}: only row checks take a {which}", field_path=which)
        if filter is not None:
            from streaming_dq.core.sql import check_sql_expression

            check_sql_expression(filter, check_id=check_id, field="filter")
        #: A Spark SQL predicate: the check judges only the rows where it holds (the others pass it).
        self.filter = filter
        #: How many failing rows the batch tolerates before the check fails it (row checks only).
        self.tolerance: Tolerance | None = (
            tolerance
            if tolerance is None or isinstance(tolerance, Tolerance)
            else Tolerance.model_validate(tolerance)
        )

    @property
    def name(self) -> str:
        """The check's name as configs spell it (``null-check``), used as ``check`` in every result and in
        ``_dq_errors`` (#42: one vocabulary; SparkDQ wrote the class name there); the class name for a check
        no config registers."""
        return self.check_type or type(self).__name__

    def description(self) -> dict[str, Any]:
        """``{check, check-id, severity, parameters}`` (and ``filter``, ``tolerance`` when set) for reports."""
        out: dict[str, Any] = {
            "check": self.name,
            "check-id": self.check_id,
            "severity": self.severity.value,
            "parameters": self._parameters(),
        }
        if self.filter is not None:
            out["filter"] = self.filter
        if self.tolerance is not None:
            out["tolerance"] = self.tolerance.model_dump(by_alias=True, exclude_none=True, mode="json")
        return out

    def _parameters(self) -> dict[str, Any]:
        params: dict[str, Any] = {}
        # the constructor's parameters, and its parents' while it passes **kw on to them
        for klass in type(self).__mro__:
            init = klass.__dict__.get("__init__")
            if init is None or klass is BaseCheck or klass is object:
                continue
            signature = inspect.signature(init).parameters
            for pname in signature:
                if pname in _NOT_PARAMETERS or pname in params or not hasattr(self, pname):
                    continue
                value = getattr(self, pname)
                params[pname] = list(value) if isinstance(value, tuple | frozenset) else value
            if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.values()):
                break
        return params

    def __repr__(self) -> str:
        return f"{self.name}(check_id={self.check_id!r}, severity={self.severity.value!r})"


class BaseRowCheck(BaseCheck):
    """A check with one verdict per row.

    Subclasses implement :meth:`failure_condition` (a lazy boolean expression, True = the row failed). The
    verdict is never NULL: :meth:`validate` turns a NULL condition into False (passed), so each check states
    what a NULL input means through its condition. Checks that need a join override :meth:`validate`.
    """

    def failure_condition(self, df: DataFrame) -> Column:
        """The lazy predicate that is True when a row fails."""
        raise NotImplementedError(f"{self.name} must implement failure_condition() or validate()")

    def applies(self) -> Column:
        """True on the rows the check judges: where its ``filter`` holds (never NULL), or every row."""
        from pyspark.sql import functions as F

        return F.lit(True) if self.filter is None else F.coalesce(F.expr(self.filter), F.lit(False))

    def filtered(self, failed: Column) -> Column:
        """``failed`` restricted to the rows the check's ``filter`` holds for (a NULL filter: not judged).

        The engine applies it to every row check's verdict, whichever way the verdict was computed
        (:meth:`failure_condition` or an overridden :meth:`validate`). A check that compares rows with each
        other (``unique-key-check``) also compares only the rows :meth:`applies` to.
        """
        return failed if self.filter is None else failed & self.applies()

    @property
    def result_column(self) -> str:
        """The default (internal) name of this check's result column."""
        return f"__dq_check__{self.check_id}"

    def validate(self, df: DataFrame, column: str | None = None) -> DataFrame:
        """Return ``df`` with one boolean column added (True = failed). Pure and lazy: no Spark action."""
        from pyspark.sql import functions as F

        return df.withColumn(
            column or self.result_column, self.filtered(F.coalesce(self.failure_condition(df), F.lit(False)))
        )

    def violation_details(self, violations: int, total: int) -> str:
        """A plain-words sentence for the report."""
        pct = 100.0 * violations / total if total else 0.0
        what = self._subject()
        if violations == 0:
            return f"All rows pass on {what}"
        return f"{what[0].upper()}{what[1:]} has {violations} violating rows ({pct:.2f}%)"

    def _subject(self) -> str:
        cols = getattr(self, "columns", None) or ([self.column] if hasattr(self, "column") else [])
        if not cols:
            return f"check {self.check_id!r}"
        if len(cols) == 1:
            return f"column '{cols[0]}'"
        return f"columns '{', '.join(cols)}'"


class BaseAggregateCheck(BaseCheck):
    """A check with one verdict per dataset.

    ``evaluate(df)`` wraps :meth:`_evaluate_logic`, which raises NotImplementedError (rather than being
    abstract) so that a classic check that forgets it fails loudly while observable checks inherit a default.
    """

    def evaluate(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateCheckResult:
        return self.wrap(self.evaluate_frame(df, multiplier=multiplier), multiplier=multiplier)

    def evaluate_frame(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        """The check's raw verdict over ``df`` (Spark jobs of its own: a classic check's groupBy, join ...)."""
        return self._evaluate_logic(df, multiplier=multiplier)

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        raise NotImplementedError(f"{self.name} must implement _evaluate_logic()")

    def wrap(
        self,
        outcome: AggregateEvaluationResult,
        *,
        severity: Severity | None = None,
        multiplier: float = 1.0,
        profiles: tuple[str, ...] = (),
        regime: tuple[str, ...] = (),
        regime_mask: int = 0,
    ) -> AggregateCheckResult:
        return AggregateCheckResult(
            check=self.name,
            check_id=self.check_id,
            severity=severity or self.severity,
            parameters=self._parameters(),
            result=outcome,
            status="passed" if outcome.passed else "failed",
            check_type=self.check_type,
            multiplier=multiplier,
            profiles=profiles,
            regime=regime,
            regime_mask=regime_mask,
        )

    def skipped(
        self,
        *,
        severity: Severity | None = None,
        profiles: tuple[str, ...] = (),
        regime: tuple[str, ...] = (),
    ) -> AggregateCheckResult:
        """The result of a check a profile disabled: reported, never failing."""
        return AggregateCheckResult(
            check=self.name,
            check_id=self.check_id,
            severity=severity or self.severity,
            parameters=self._parameters(),
            result=AggregateEvaluationResult(True, {"skipped": True}),
            status="skipped",
            check_type=self.check_type,
            profiles=profiles,
            regime=regime,
        )

    def details(self, result: AggregateCheckResult) -> str:
        """A plain-words sentence for the report."""
        m = result.metrics
        if result.status == "skipped":
            return f"Skipped: disabled by profile(s) {', '.join(result.profiles) or '-'}"
        if "value" in m:
            adj = m.get("adjusted")
            shown = (
                f"{m['value']}"
                if adj is None or adj == m["value"]
                else f"{m['value']} (x{m.get('multiplier')} = {adj})"
            )
            return f"{self.metric_label()} is {shown}; expected {self.expectation()}"
        return ", ".join(f"{k}={v}" for k, v in m.items())

    def metric_label(self) -> str:
        return "metric"

    def expectation(self) -> str:
        return "the check to pass"


class ObservableAggregateCheck(BaseAggregateCheck):
    """An aggregate check computed from mergeable states in the engine's single aggregation pass.

    Subclasses declare :meth:`state_specs` and decide from states in :meth:`metric_value` and :meth:`accepts`.
    The profile multiplier scales the metric value before :meth:`accepts` compares it.
    """

    @abstractmethod
    def state_specs(self) -> dict[str, StateSpec]:
        """The states this check needs, keyed by a name unique within the check."""

    @abstractmethod
    def metric_value(self, states: Mapping[str, Any]) -> float | None:
        """The check's metric from resolved states (None: undefined, e.g. a mean of no rows)."""

    @abstractmethod
    def accepts(self, value: float | None) -> bool:
        """Whether the (multiplier-adjusted) metric passes."""

    def aggregations(self) -> dict[str, Column]:
        """The Spark aggregate columns of all states, keyed ``<state>.<component>``."""
        out: dict[str, Column] = {}
        for sname, spec in self.state_specs().items():
            for comp, col in spec.aggregations().items():
                out[f"{sname}.{comp}"] = col
        return out

    def decode_states(self, results: Mapping[str, Any]) -> dict[str, Any]:
        """Turn ``<state>.<component>`` values (as from :meth:`aggregations`) into state objects."""
        states = {}
        for sname, spec in self.state_specs().items():
            prefix = f"{sname}."
            states[sname] = spec.decode(
                {k[len(prefix) :]: v for k, v in results.items() if k.startswith(prefix)}
            )
        return states

    def evaluate_states(
        self, states: Mapping[str, Any], *, multiplier: float = 1.0
    ) -> AggregateEvaluationResult:
        """Decide from states; the metric is scaled by ``multiplier`` before the threshold comparison."""
        raw = self.metric_value(states)
        adjusted = raw * multiplier if raw is not None and not math.isnan(raw) else raw
        metrics: dict[str, Any] = {"value": raw, "multiplier": multiplier, "adjusted": adjusted}
        return AggregateEvaluationResult(self.accepts(adjusted), metrics)

    def _evaluate_from_agg_results(
        self, results: Mapping[str, Any], *, multiplier: float = 1.0
    ) -> AggregateEvaluationResult:
        return self.evaluate_states(self.decode_states(results), multiplier=multiplier)

    def _evaluate_logic(self, df: DataFrame, *, multiplier: float = 1.0) -> AggregateEvaluationResult:
        aggs = self.aggregations()
        row = df.agg(*[c.alias(f"m{i}") for i, c in enumerate(aggs.values())]).first()
        values = {k: row[f"m{i}"] if row is not None else None for i, k in enumerate(aggs)}
        return self._evaluate_from_agg_results(values, multiplier=multiplier)


class IntegrityCheckMixin:
    """A check that reads named reference data: the run's, never its own (see :mod:`~streaming_dq.core.references`)."""

    def get_reference_df(self, name: str) -> DataFrame:
        """The run's reference dataset ``name``.

        Raises:
            MissingReferenceDatasetError: The run did not supply it.
        """
        return reference_dataset(name)


@runtime_checkable
class HistoryJudged(Protocol):
    """A window-scoped check judged against its own history (an anomaly check), as the window accumulator
    asks it: how far back its baseline reaches, and the verdict of a window from the closed windows before.

    The accumulator keeps each such check's closed windows (``HistoryPoint`` values) within ``lookback``;
    ``judge`` returns a verdict with ``status``, ``expected``, ``low``, ``high``, ``score``, ``history`` and
    ``reason`` (``AnomalyVerdict``).
    """

    lookback: timedelta

    def judge(
        self, observed: float | None, history: Sequence[Any], start: datetime, *, timezone: str
    ) -> Any: ...
