"""Catalog table names: a gate table, a Delta source or a reference dataset addressed by name.

A config writes a catalog table as ``{table: sales.orders_pass}`` (or ``catalog.schema.table``); inside the
config it is the string ``table:sales.orders_pass``, the one spelling every layer
reads through :func:`catalog_name`. A name is looked up in the Spark session's catalog (the session catalog:
Spark's metastore, Delta's catalog on top when the session has Delta's extension) and stands for the
table's location from then on: the gate reads every table's Delta log on the driver by location, and delta-rs
writes by location; Spark's writer creates a missing table and appends to it *by name*, so the catalog
knows every table the gate writes. See docs/deploy.md, "Catalog table names".
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "PREFIX",
    "catalog_name",
    "location_uri",
    "managed_location",
    "name_problem",
    "schema_of",
    "shown",
    "table_location",
]

#: How a catalog name is spelled inside a config (``table:sales.orders_pass``).
PREFIX = "table:"
_PART = r"(?:[A-Za-z_][A-Za-z0-9_]*|`[^`]+`)"
_NAME = re.compile(rf"^{_PART}(?:\.{_PART}){{0,2}}$")


def catalog_name(value: str | None) -> str | None:
    """The catalog table name ``value`` stands for, or None when it is a path or URI.

    Example:
        >>> catalog_name("table:sales.orders_pass"), catalog_name("/data/orders_pass")
        ('sales.orders_pass', None)
    """
    if value is None or not value.startswith(PREFIX):
        return None
    return value[len(PREFIX) :]


def shown(value: str) -> str:
    """A table as a person reads it: a catalog name says so, a path is itself.

    Example:
        >>> shown("table:sales.orders_pass"), shown("/data/orders_pass")
        ('sales.orders_pass (catalog)', '/data/orders_pass')
    """
    name = catalog_name(value)
    return value if name is None else f"{name} (catalog)"


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a table name (``table``, ``schema.table`` or ``catalog.schema.table``), or None.

    Example:
        >>> name_problem("sales.orders"), name_problem("sales/orders")
        (None, "'sales/orders' is not a table name: write table, schema.table or catalog.schema.table")
    """
    if _NAME.match(name):
        return None
    return f"{name!r} is not a table name: write table, schema.table or catalog.schema.table"


def schema_of(name: str) -> str | None:
    """The schema (database) part of ``name``, with its catalog when given; None for a bare table name.

    Example:
        >>> schema_of("sales.orders"), schema_of("main.sales.orders"), schema_of("orders")
        ('sales', 'main.sales', None)
    """
    parts = name.rsplit(".", 1)
    return parts[0] if len(parts) == 2 else None


def location_uri(location: str) -> str:
    """A catalog's location as the gate spells tables: a local path for ``file:`` locations.

    Example:
        >>> location_uri("file:/tmp/warehouse/sales.db/orders"), location_uri("s3a://lake/orders")
        ('/tmp/warehouse/sales.db/orders', 's3a://lake/orders')
    """
    if location.startswith("file:"):
        return unquote(urlparse(location).path)
    return location


def _described(spark: SparkSession, statement: str, key: str) -> str | None:
    for row in spark.sql(statement).collect():
        if str(row[0]).strip() == key:
            return str(row[1])
    return None


def table_location(spark: SparkSession, name: str) -> str | None:
    """Where catalog table ``name`` keeps its files (see :func:`location_uri`), or None when the catalog has
    no such table. Works without Delta's extension (the metastore knows the location of a Delta table)."""
    if not spark.catalog.tableExists(name):
        return None
    location = _described(spark, f"DESCRIBE TABLE EXTENDED {name}", "Location")
    return None if location is None else location_uri(location)


def managed_location(spark: SparkSession, name: str) -> str | None:
    """Where the session catalog puts a managed table ``name`` it creates (its schema's location and the
    table's name in lower case, as Spark's catalog does), or None when the schema does not exist."""
    schema = schema_of(name) or spark.catalog.currentDatabase()
    if not spark.catalog.databaseExists(schema):
        return None
    location = _described(spark, f"DESCRIBE SCHEMA EXTENDED {schema}", "Location")
    if location is None:
        return None
    table = name.rsplit(".", 1)[-1].strip("`").lower()
    return location_uri(location).rstrip("/") + "/" + table
