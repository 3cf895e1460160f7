"""A config's catalog table names looked up in the Spark session's catalog, once, before any batch.

Every ``table:NAME`` of a config (:mod:`streaming_dq.tables.catalog`) is answered here: a target the catalog
has stands for its location from then on; a target it lacks is created by name by Spark's writer (at the
location the session catalog gives a managed table), and refused in one line with delta-rs, which writes by
location and cannot register a table; a Delta source or reference dataset must exist. Without Delta's
extension in the session a reference table is read by its location with delta-rs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streaming_dq.config.errors import ConfigErrors
from streaming_dq.config.gate_config import GateConfig
from streaming_dq.exceptions import ConfigError
from streaming_dq.tables.catalog import catalog_name, managed_location, schema_of, table_location

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["resolve_catalog_tables"]


def resolve_catalog_tables(config: GateConfig, spark: SparkSession) -> GateConfig:
    """``config`` with every catalog name answered by ``spark``'s catalog (unchanged without names).

    Raises:
        ConfigError: a source or reference table is not in the catalog; a target table is not, and the
            writer is delta-rs; the schema of a target Spark's writer would create is not. One line each,
            naming the config field.
    """
    if not config.catalog_pending:
        return config
    from streaming_dq.tables.spark import has_delta_extension

    delta = has_delta_extension(spark)
    creates = config.targets.writer == "spark" or (config.targets.writer == "auto" and delta)
    problems: list[tuple[str, str]] = []
    locations: dict[str, str] = {}
    for role, value in config.targets.paths().items():
        name = catalog_name(value)
        if name is None:
            continue
        location = table_location(spark, name)
        if location is None and not creates:
            problems.append(
                (
                    f"targets.{role}",
                    f"table {name} is not in the catalog, and delta-rs writes by location and cannot add a table "
                    f"to a catalog: create it (CREATE TABLE {name} (...) USING DELTA), write with "
                    "targets.writer: spark, or give its path",
                )
            )
        elif location is None:
            location = managed_location(spark, name)
            if location is None:
                schema = schema_of(name) or "the current schema"
                problems.append(
                    (
                        f"targets.{role}",
                        f"schema {schema} of table {name} is not in the catalog: create it first (CREATE SCHEMA {schema})",
                    )
                )
        if location is not None:
            locations[name] = location
    source = catalog_name(config.source.path)
    if source is not None and not spark.catalog.tableExists(source):
        problems.append(("source.table", f"table {source} is not in the catalog"))
    references = {}
    for key, reference in config.reference_datasets.items():
        name = catalog_name(reference.path)
        if name is None:
            continue
        location = table_location(spark, name)
        if location is None:
            problems.append((f"reference-datasets.{key}.table", f"table {name} is not in the catalog"))
        elif not delta:  # read by location with delta-rs (see ReferenceSpec.load)
            references[key] = reference.model_copy(update={"path": location})
    errors = [ConfigError(reason, source=config.source_file, field_path=f) for f, reason in problems]
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ConfigErrors(errors, source=config.source_file)
    resolved = config.model_copy(
        update={"reference_datasets": {**config.reference_datasets, **references}}
    ).with_source_file(config.source_file)
    return resolved.with_catalog_locations(locations)
