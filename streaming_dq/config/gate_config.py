"""The YAML config of a whole gate job: pydantic models of its sections, and the JSON Schema for editors.

A gate config names the source stream, the gate, its targets, its checks and profiles, the Prometheus
endpoint and the Spark session:

```yaml
gate: {name: orders, event-time: order_ts, timezone: UTC}
source:
  format: json
  path: data/landing/orders
  schema: "order_id STRING, order_ts TIMESTAMP, customer_id STRING, amount DOUBLE"
  max-files-per-trigger: 1
  trigger: available-now            # or {processing-time: "10 seconds"}
checkpoint: data/state/orders
targets: {pass: data/tables/orders_pass, quarantine: data/tables/orders_quarantine}
checks:
  - {check: null-check, check-id: order-id-present, columns: [order_id]}
```

Keys are kebab-case (the snake_case field names are accepted too) and unknown keys are errors, so a typo
never silently changes what runs. The ``checks:`` items are validated by the check factory (see
:func:`streaming_dq.config.loader.load_gate_config`), the ``profiles:`` items by
:mod:`streaming_dq.profiles.config`. Load files with :func:`~streaming_dq.config.loader.load_gate_config`,
which also expands ``${ENV}`` variables and resolves relative paths against the config file's folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BeforeValidator,
    Field,
    PrivateAttr,
)

from streaming_dq.config.check_set import CheckSet
from streaming_dq.config.fields import (
    NonEmpty,
    OptionValue,
    Section,
    Trigger,
)
from streaming_dq.config.sections import (
    ContractSection,
    GateSection,
    LineageSection,
    MaintenanceSection,
    MetricsSection,
    ReferenceDatasetConfig,
    SparkSection,
    TargetsSection,
)
from streaming_dq.config.source_model import (
    SourceSection,
)
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.modes import (
    AggregateFailurePolicy,
    Dialect,
    DriftPolicy,
)
from streaming_dq.core.severity import Severity, normalize_severity
from streaming_dq.exceptions import ConfigError
from streaming_dq.profiles.config import ProfileList
from streaming_dq.profiles.profiles import Profile
from streaming_dq.tables.storage import merged

if TYPE_CHECKING:
    from streaming_dq.tables import DeltaTarget

__all__ = ["GateConfig", "gate_config_json_schema"]


def _fail_level(value: object) -> Severity:
    try:
        return normalize_severity(value)  # type: ignore[arg-type]
    except ConfigError as exc:
        raise ConfigError(exc.reason) from None


class GateConfig(Section):
    """A whole gate job, as written in its YAML file.

    Paths are the ones written in the file until :func:`~streaming_dq.config.loader.load_gate_config`
    resolves them; ``source_file`` names the file the config came from (None when built in code).

    Example:
        >>> config = GateConfig.model_validate({
        ...     "gate": {"name": "orders"},
        ...     "source": {"format": "parquet", "path": "landing"},
        ...     "checkpoint": "state",
        ...     "targets": {"pass": "pass", "quarantine": "quarantine"},
        ...     "checks": [{"check": "null-check", "check-id": "id", "columns": ["id"]}],
        ... })
        >>> config.source.trigger.available_now
        True
    """

    gate: GateSection
    source: SourceSection
    checkpoint: NonEmpty = Field(
        description="Folder of the streaming checkpoint; relative to the config file."
    )
    targets: TargetsSection
    fail_levels: Annotated[list[Annotated[Severity, BeforeValidator(_fail_level)]], Field(min_length=1)] = (
        Field(
            default_factory=lambda: [Severity.CRITICAL],
            description="Severities whose failures quarantine a row.",
        )
    )
    on_aggregate_failure: AggregateFailurePolicy = "quarantine-batch"
    schema_drift: DriftPolicy | None = Field(
        default=None, description="null: merge added nullable columns, quarantine incompatible changes."
    )
    reference_datasets: dict[str, ReferenceDatasetConfig] = Field(default_factory=dict)
    profiles: ProfileList = Field(default_factory=list)
    metrics: MetricsSection = Field(default_factory=MetricsSection)
    lineage: LineageSection | None = Field(
        default=None, description="OpenLineage events per micro-batch and closed window; none without it."
    )
    maintenance: MaintenanceSection | None = None
    spark: SparkSection = Field(default_factory=SparkSection)
    checks: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Check definitions: {check: <name>, check-id: ..., <parameters>}, or DQX rules "
        "(at least one, unless a contract gives the checks).",
    )
    contract: ContractSection | None = Field(
        default=None,
        description="An ODCS data contract whose rules run as checks, beside or instead of checks.",
    )
    dialect: Dialect = Field(
        default="auto",
        description="The format of checks: detected (auto), ours (native) or DQX's rules (dqx).",
    )
    storage_options: dict[str, OptionValue] = Field(
        default_factory=dict,
        description="Object-store options for every table, source and reference of the gate (a section's "
        "own storage-options override them key by key); write secrets as ${ENV}.",
    )

    _source_file: str | None = PrivateAttr(default=None)
    #: The checks built when the file was validated (``load_gate_config``), so a job never builds them twice.
    _built: tuple[BaseCheck, ...] | None = PrivateAttr(default=None)
    _notes: tuple[str, ...] = PrivateAttr(default=())
    #: What ``contract:`` became when the file was validated (``streaming_dq.config.odcs.ContractMapping``).
    _contract: Any = PrivateAttr(default=None)
    #: Where the catalog keeps the tables named ``table:NAME`` (:mod:`streaming_dq.config.catalog`).
    _locations: dict[str, str] | None = PrivateAttr(default=None)

    @property
    def source_file(self) -> str | None:
        """The YAML file this config was loaded from, named in errors."""
        return self._source_file

    def with_source_file(self, source_file: str | None) -> GateConfig:
        """Return a copy of this config marked as loaded from ``source_file``."""
        marked = self.model_copy()
        marked._source_file = source_file
        return marked

    @property
    def catalog_pending(self) -> bool:
        """Whether the config names catalog tables nobody has looked up yet
        (:func:`~streaming_dq.config.catalog.resolve_catalog_tables`)."""
        from streaming_dq.tables.catalog import catalog_name

        if self._locations is not None:
            return False
        values = [*self.targets.paths().values(), self.source.path]
        values += [r.path for r in self.reference_datasets.values()]
        return any(catalog_name(v) is not None for v in values)

    def with_catalog_locations(self, locations: dict[str, str]) -> GateConfig:
        """Return a copy whose catalog-named tables are at ``locations`` (by name)."""
        marked = self.model_copy()
        marked._locations = dict(locations)
        return marked

    def with_built_checks(self, checks: Sequence[BaseCheck], notes: Sequence[str]) -> GateConfig:
        """Return a copy that holds the checks built (and the DQX translation's notes) while validating."""
        marked = self.model_copy()
        marked._built, marked._notes = tuple(checks), tuple(notes)
        return marked

    def with_contract(self, mapping: Any) -> GateConfig:
        """Return a copy that holds what its contract became (None: no contract)."""
        marked = self.model_copy()
        marked._contract = mapping
        return marked

    @property
    def contract_mapping(self) -> Any:
        """The contract's rules and the check each became (``ContractMapping``; None without a contract)."""
        return self._contract

    @property
    def translation_notes(self) -> tuple[str, ...]:
        """What a DQX translation of ``checks:`` approximates (empty for our own format, or before loading)."""
        return self._notes

    def check_set(self) -> CheckSet:
        """Build the :class:`~streaming_dq.config.check_set.CheckSet` of ``checks:`` (and the built-in
        ``unknown-fields`` check when the source detects undeclared fields).

        Raises:
            ConfigError: a check is invalid (the field path names it, e.g. ``checks[2].min-value``).
        """
        from streaming_dq.checks.unknown_fields import unknown_fields_check

        if self._built is not None:
            checks = CheckSet(list(self._built))
        else:
            checks = CheckSet().add_checks_from_dicts(
                self.checks, source=self.source_file, dialect=self.dialect
            )
        if not self.source.detects_unknown_fields:
            return checks
        column, policy = self.source.unknown_fields_column, self.source.unknown_fields
        return checks.add_check(unknown_fields_check(column, policy, list(self.fail_levels)))

    def table(self, role: str) -> DeltaTarget:
        """The configured table ``role`` (``pass``, ``quarantine``, ``results``, ``metrics``) with its storage
        options (the gate-wide ones under ``targets.storage-options``).

        Raises:
            KeyError: ``role`` is not configured.
        """
        from streaming_dq.tables import DeltaTarget
        from streaming_dq.tables.catalog import catalog_name

        value = self.targets.paths()[role]
        name = catalog_name(value)
        return DeltaTarget(
            (self._locations or {}).get(name, value) if name is not None else value,
            merged(self.storage_options, self.targets.storage_options),
            name=name,
        )

    def tables(self) -> dict[str, DeltaTarget]:
        """Every configured table by its config key, with its storage options."""
        return {role: self.table(role) for role in self.targets.paths()}

    def source_storage_options(self) -> dict[str, str]:
        """The storage options of the source's location (the gate-wide ones under its own)."""
        return merged(self.storage_options, self.source.storage_options)

    def reference_storage_options(self, name: str) -> dict[str, str]:
        """The storage options of reference dataset ``name`` (the gate-wide ones under its own)."""
        return merged(self.storage_options, self.reference_datasets[name].storage_options)

    def profile_objects(self) -> list[Profile]:
        """The profile objects of ``profiles:``, in config order (a public-holiday calendar as one per holiday)."""
        from streaming_dq.profiles.public_holidays import expand_profiles

        return expand_profiles([p.to_profile() for p in self.profiles])

    def with_trigger(self, trigger: Trigger) -> GateConfig:
        """Return a copy whose source uses ``trigger`` (the CLI's ``--available-now``)."""
        source = self.source.model_copy(update={"trigger": trigger})
        return self.model_copy(update={"source": source}).with_source_file(self.source_file)


def gate_config_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a gate config file, with one schema per registered check.

    Editors use it for completion and inline errors (e.g. ``# yaml-language-server: $schema=...``).
    ``checks:`` items are a ``oneOf`` over the registered checks, told apart by their ``check`` name.

    Example:
        >>> schema = gate_config_json_schema()
        >>> schema["properties"]["gate"]["$ref"]
        '#/$defs/GateSection'
    """
    from streaming_dq.config.registry import CheckConfigRegistry

    schema = GateConfig.model_json_schema(by_alias=True)
    defs = schema.setdefault("$defs", {})
    variants = []
    for name, config_class in CheckConfigRegistry.items():
        check_schema = config_class.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
        defs.update(check_schema.pop("$defs", {}))
        check_schema["properties"] = {"check": {"const": name}, **check_schema.get("properties", {})}
        check_schema["required"] = ["check", *check_schema.get("required", [])]
        check_schema["title"] = name
        key = f"check-{name}"
        defs[key] = check_schema
        variants.append({"$ref": f"#/$defs/{key}"})
    schema["properties"]["checks"]["items"] = {"oneOf": variants}
    # at least one check, from checks: or from a contract: (the loader says so by name when neither gives one)
    schema["anyOf"] = [{"required": ["checks"]}, {"required": ["contract"]}]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": "streaming-dq gate config",
    }
