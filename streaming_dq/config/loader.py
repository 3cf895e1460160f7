"""Loading a gate config file: YAML, ``${ENV}`` expansion, validation of every section, resolved paths.

What :func:`load_gate_config` does, in order:

1. Reads the YAML with a safe loader that also refuses a key written twice in one mapping.
2. Expands variables in every string value: ``${NAME}`` is the environment variable ``NAME``,
   ``${NAME:-default}`` falls back to ``default`` when it is unset or empty, ``$${`` writes a literal ``${``,
   and ``${CONFIG_DIR}`` is the absolute folder of the config file. An unset variable without a default is
   an error.
3. Validates the sections (:class:`~streaming_dq.config.gate_config.GateConfig`), every check through the
   check factory and every profile, then what ties them together: checked columns exist in
   ``source.schema``, integrity checks name a configured reference dataset, profile rules select some
   check, profiles have an event-time column.
4. Resolves relative paths (``source.path``, ``checkpoint``, ``targets.*``, ``reference-datasets.*.path``)
   against the folder of the config file, not the working directory, so a job runs the same from anywhere;
   ``~`` is expanded and URIs (``s3a://``, ``abfss://``, ``file:/``) are left as written.

Every problem found is reported, not only the first: one :class:`~streaming_dq.exceptions.ConfigError`, or a
:class:`~streaming_dq.config.errors.ConfigErrors` listing them, each naming the file and the field path
(``orders.yaml: checks[2].min-value: ...``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from streaming_dq.config.building import BuiltCheck, build_checks
from streaming_dq.config.check_set import CheckSet
from streaming_dq.config.dqx import is_dqx_rules
from streaming_dq.config.errors import ConfigErrors, format_loc, pydantic_problems
from streaming_dq.config.gate_config import GateConfig
from streaming_dq.config.validation import cross_problems
from streaming_dq.config.yaml_reader import read_yaml
from streaming_dq.core.modes import Dialect
from streaming_dq.exceptions import ConfigError
from streaming_dq.tables.catalog import catalog_name

__all__ = [
    "CheckFile",
    "expand_env",
    "inspect_gate_config",
    "load_check_file",
    "load_gate_config",
    "resolve_path",
]

# --- ${ENV} ------------------------------------------------------------------------------------------------------

_VARIABLE = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}")


def expand_env(
    data: Any, *, variables: Mapping[str, str], source: str | None = None, loc: tuple[str | int, ...] = ()
) -> tuple[Any, list[ConfigError]]:
    """Expand ``${NAME}``/``${NAME:-default}`` in every string value of ``data`` (keys are left alone).

    Returns:
        The expanded copy, and one error per variable that is unset and has no default (left unexpanded).

    Example:
        >>> expand_env({"path": "${ROOT:-/data}/x"}, variables={})
        ({'path': '/data/x'}, [])
    """
    if isinstance(data, Mapping):
        out: dict[Any, Any] = {}
        problems: list[ConfigError] = []
        for key, value in data.items():
            out[key], found = expand_env(value, variables=variables, source=source, loc=(*loc, str(key)))
            problems += found
        return out, problems
    if isinstance(data, list):
        items = [expand_env(v, variables=variables, source=source, loc=(*loc, i)) for i, v in enumerate(data)]
        return [v for v, _ in items], [p for _, found in items for p in found]
    if not isinstance(data, str):
        return data, []
    missing: list[ConfigError] = []

    def substitute(match: re.Match[str]) -> str:
        escaped, name, has_default, default = match.groups()
        if escaped:
            return match.group(0)[1:]
        value = variables.get(name)
        if value:
            return value
        if has_default:
            return default
        reason = f"environment variable {name!r} is not set" + _unset_hint(name, loc)
        missing.append(ConfigError(reason, source=source, field_path=format_loc(loc) or None))
        return match.group(0)

    return _VARIABLE.sub(substitute, data), missing


#: Config fields that hold a secret wherever they are (a lineage API key, a registry's password or token).
SECRET_FIELDS = frozenset({"api-key", "password", "bearer-token"})


def _unset_hint(name: str, loc: tuple[str | int, ...]) -> str:
    """What to do about an unset variable: a default, unless the field holds a secret, which must come from
    the job's environment and never be written into the file (#42: the hint suggested writing a default)."""
    from streaming_dq.tables.storage import SHOWN_KEYS

    if ("storage-options" in loc and str(loc[-1]).lower() not in SHOWN_KEYS) or str(loc[-1]) in SECRET_FIELDS:
        return f": it holds a secret, so set {name} in the job's environment (never a default in the file)"
    return f" (write ${{{name}:-default}} to give a default)"


# --- paths ------------------------------------------------------------------------------------------------------

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")


def resolve_path(path: str, base: Path) -> str:
    """``path`` made absolute against ``base`` (the config file's folder); URIs are returned unchanged.

    Example:
        >>> resolve_path("tables/pass", Path("/jobs/orders"))
        '/jobs/orders/tables/pass'
        >>> resolve_path("s3a://bucket/pass", Path("/jobs/orders"))
        's3a://bucket/pass'
        >>> resolve_path("table:sales.orders_pass", Path("/jobs/orders"))
        'table:sales.orders_pass'
    """
    if _URI.match(path) or catalog_name(path) is not None:
        return path
    return os.path.normpath(base / Path(path).expanduser())


def _resolve_paths(config: GateConfig, base: Path) -> GateConfig:
    def resolve(path: str | None) -> str | None:
        return None if path is None else resolve_path(path, base)

    t = config.targets
    targets = t.model_copy(
        update={
            "pass_table": resolve(t.pass_table),
            "quarantine": resolve(t.quarantine),
            "results": resolve(t.results),
            "metrics": resolve(t.metrics),
            "keys": resolve(t.keys),
        }
    )
    references = {
        name: ref.model_copy(update={"path": resolve(ref.path)})
        for name, ref in config.reference_datasets.items()
    }
    return config.model_copy(
        update={
            "source": config.source.model_copy(
                update={
                    "path": resolve(config.source.path),
                    **{
                        part: payload.model_copy(
                            update={
                                "avro_schema_file": resolve(payload.avro_schema_file),
                                "proto_file": resolve(payload.proto_file),
                                "registry": payload.registry
                                and payload.registry.model_copy(
                                    update={
                                        f: resolve(getattr(payload.registry, f))
                                        for f in ("ca_file", "cert_file", "key_file")
                                    }
                                ),
                            }
                        )
                        for part, payload in (("value", config.source.value), ("key", config.source.key))
                        if payload is not None
                    },
                }
            ),
            "checkpoint": resolve(config.checkpoint),
            "contract": config.contract
            and config.contract.model_copy(update={"path": resolve(config.contract.path)}),
            "targets": targets,
            "lineage": _resolve_lineage(config, resolve),
            "reference_datasets": references,
            "spark": config.spark.model_copy(update={"conf": _metastore_conf(config.spark.conf, base)}),
        }
    )


def _resolve_lineage(config: GateConfig, resolve: Any) -> Any:
    """``lineage`` with a file transport's path made absolute (None: no lineage)."""
    lineage = config.lineage
    if lineage is None or lineage.transport.path is None:
        return lineage
    transport = lineage.transport.model_copy(update={"path": resolve(lineage.transport.path)})
    return lineage.model_copy(update={"transport": transport})


#: The Spark settings that place the session catalog's warehouse and its embedded (Derby) metastore.
WAREHOUSE_DIR, METASTORE_URL = "spark.sql.warehouse.dir", "spark.hadoop.javax.jdo.option.ConnectionURL"


def _metastore_conf(conf: Mapping[str, Any], base: Path) -> dict[str, Any]:
    """``spark.conf`` with the warehouse and the embedded metastore of a Hive session catalog placed beside the
    config, as its other relative paths are: Spark would put them in the current folder, so the same config
    run from another folder would find an empty catalog (#42). Paths the config gives are resolved the same
    way; a metastore URL it gives is kept."""
    resolved = dict(conf)
    warehouse = resolved.get(WAREHOUSE_DIR)
    if isinstance(warehouse, str):
        resolved[WAREHOUSE_DIR] = resolve_path(warehouse, base)
    if str(resolved.get("spark.sql.catalogImplementation", "")).lower() != "hive":
        return resolved
    resolved.setdefault(WAREHOUSE_DIR, str(base / "spark-warehouse"))
    resolved.setdefault(METASTORE_URL, f"jdbc:derby:;databaseName={base / 'metastore_db'};create=true")
    return resolved


# --- entry points -----------------------------------------------------------------------------------------------


def inspect_gate_config(path: str | Path) -> tuple[GateConfig | None, list[ConfigError]]:
    """Load a gate config and return every problem found instead of raising.

    Returns:
        The config with expanded variables and absolute paths (None when there is any problem), and the
        problems, each naming the file and the field path.
    """
    source = str(path)
    try:
        data = read_yaml(path)
    except ConfigError as exc:
        return None, [exc]
    if not isinstance(data, Mapping):
        return None, [
            ConfigError("a gate config must be a mapping with gate, source, ... keys", source=source)
        ]
    base = Path(path).resolve().parent
    data, problems = expand_env(data, variables={**os.environ, "CONFIG_DIR": str(base)}, source=source)
    built: list[BuiltCheck] = []
    check_problems: list[ConfigError] = []
    notes: list[str] = []
    if isinstance(data.get("checks"), list):
        dialect = data.get("dialect", "auto")
        built, check_problems = build_checks(
            data["checks"],
            source=source,
            dialect=dialect if dialect in ("native", "dqx") else "auto",
            notes=notes,
        )
    config: GateConfig | None = None
    try:
        config = _resolve_paths(GateConfig.model_validate(data), base).with_source_file(source)
    except ValidationError as exc:
        problems += pydantic_problems(exc, source=source, model=GateConfig)
    problems += check_problems
    mapping = None
    if config is not None and config.contract is not None:
        from streaming_dq.config.odcs import contract_checks

        taken = {b.check.check_id: f"checks[{b.index}]" for b in built}
        from streaming_dq.tables.storage import merged

        store = merged(config.storage_options, config.contract.storage_options)
        mapping, from_contract, contract_problems = contract_checks(
            config.contract.path, config.contract.options(), taken, store
        )
        check_problems += contract_problems
        problems += contract_problems
        built += from_contract
    if config is not None and not built and not check_problems:
        problems.append(
            ConfigError(
                "give at least one check, or a contract: whose rules are the checks",
                source=source,
                field_path="checks",
            )
        )
    if config is not None:
        problems += cross_problems(config, built, source, all_built=not check_problems)
    if problems or config is None:
        return None, problems
    return config.with_built_checks([b.check for b in built], notes).with_contract(mapping), problems


def _raise(problems: list[ConfigError], source: str) -> None:
    if len(problems) == 1:
        raise problems[0]
    raise ConfigErrors(problems, source=source)


def load_gate_config(path: str | Path) -> GateConfig:
    """Load and validate a gate config file (see the module docstring for the rules).

    Raises:
        ConfigError: one problem; ``source`` is the file and ``field_path`` the field.
        ConfigErrors: several problems; ``errors`` lists each.

    Example:
        >>> config = load_gate_config("jobs/orders/orders.yaml")  # doctest: +SKIP
        >>> config.gate.name, len(config.check_set())  # doctest: +SKIP
        ('orders', 9)
    """
    config, problems = inspect_gate_config(path)
    if problems or config is None:
        _raise(problems, str(path))
    assert config is not None
    return config


@dataclass(frozen=True)
class CheckFile:
    """What ``streaming-dq check`` validates with: the checks, and the gate config when the file is one."""

    check_set: CheckSet
    config: GateConfig | None = None
    #: What a DQX translation approximates (empty for our own format).
    notes: tuple[str, ...] = ()
    #: ``native`` or ``dqx``: the format the checks were written in.
    dialect: str = "native"


def load_check_file(path: str | Path) -> CheckFile:
    """Load a gate config, or a checks file (a list of checks or SparkDQ's ``{checks: [...]}``).

    Raises:
        ConfigError: one problem (file and field path named).
        ConfigErrors: several problems.
    """
    source = str(path)
    data = read_yaml(path)
    notes: list[str] = []
    if isinstance(data, Mapping) and "gate" in data:
        config = load_gate_config(path)
        checks = config.checks
        if config.dialect == "dqx" or (config.dialect == "auto" and is_dqx_rules(checks)):
            return CheckFile(config.check_set(), config, config.translation_notes, "dqx")
        return CheckFile(config.check_set(), config)
    dialect: Dialect = "auto"
    if isinstance(data, Mapping):
        extra = [k for k in data if k not in ("checks", "dialect")]
        if extra or "checks" not in data:
            reason = (
                "a checks file is a list of checks or a mapping with 'checks' and optionally 'dialect' "
                "(a gate config has 'gate')"
            )
            raise ConfigError(reason, source=source, field_path=str(extra[0]) if extra else None)
        given = data.get("dialect", "auto")
        if given not in ("auto", "native", "dqx"):
            raise ConfigError(
                f"dialect must be auto, native or dqx, not {given!r}", source=source, field_path="dialect"
            )
        dialect = given
        data = data["checks"]
    if not isinstance(data, list) or not data:
        raise ConfigError("expected a non-empty list of checks", source=source, field_path="checks")
    built, problems = build_checks(data, source=source, dialect=dialect, notes=notes)
    if problems:
        _raise(problems, source)
    is_dqx = dialect == "dqx" or (dialect == "auto" and is_dqx_rules(data))
    return CheckFile(
        CheckSet(b.check for b in built), notes=tuple(notes), dialect="dqx" if is_dqx else "native"
    )
