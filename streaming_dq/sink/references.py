"""Reference datasets for integrity checks: static DataFrames, or specs re-read on a refresh interval.

A dimension table that grows while the stream runs (new customers ...) must be seen by later batches, so
a :class:`ReferenceSpec` is re-read every batch by default (``refresh_seconds=0``); reading is lazy (no
Spark job) when the spec gives a schema, so a re-read costs a file listing, not a scan.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from streaming_dq.exceptions import MissingReferenceDatasetError
from streaming_dq.tables.catalog import catalog_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from streaming_dq.config.gate_config import GateConfig


class ReferenceDatasetUnavailableError(MissingReferenceDatasetError):
    """A reference dataset's spec could not be read (no such path, unreadable format ...).

    Attributes:
        name: The dataset's name.
        path: Where it was looked for.
        reason: What went wrong.
    """

    def __init__(self, name: str, path: str, reason: str) -> None:
        super().__init__(name)
        self.path = path
        self.reason = reason
        self.args = (f"reference dataset {name!r} cannot be read from {path}: {reason}",)


@dataclass(frozen=True)
class ReferenceSpec:
    """A reference dataset read with Spark (or delta-rs for ``delta`` without the Delta JARs).

    Attributes:
        format: A Spark source format: ``csv``, ``json``, ``parquet``, ``delta`` ...
        path: Where the data is.
        schema: A DDL schema; without one Spark infers it, which costs a job per read.
        options: Reader options (``{"header": "true"}`` ...).
        refresh_seconds: Re-read the data when it is older than this; 0 re-reads it every batch.
        storage_options: Object-store options for delta-rs (:mod:`streaming_dq.tables.storage`); never shown.

    Example:
        >>> ReferenceSpec("csv", "/data/customers", schema="customer_id STRING", options={"header": "true"})
        ReferenceSpec(format='csv', path='/data/customers', schema='customer_id STRING', options={'header': 'true'}, refresh_seconds=0.0)
    """

    format: str
    path: str
    schema: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    refresh_seconds: float = 0.0
    storage_options: Mapping[str, str] = field(default_factory=dict, repr=False)

    def load(self, spark: SparkSession) -> DataFrame:
        """Read the dataset (lazily when a schema is given)."""
        if self.format == "delta":
            from streaming_dq.tables.spark import has_delta_extension, read_with_delta_rs

            if not has_delta_extension(spark):
                return read_with_delta_rs(
                    spark, self.path, {**self.options, **self.storage_options}, schema=self.schema
                )
        name = catalog_name(self.path)
        if name is not None:  # by name: the catalog's table (delta-rs reads it by its location instead)
            return spark.read.options(**self.options).table(name)
        from streaming_dq.tables.storage import spark_uri

        reader = spark.read.format(self.format).options(**self.options)
        if self.schema:
            reader = reader.schema(self.schema)
        return reader.load(
            spark_uri(self.path)
        )  # s3:// is S3A's to Spark, as for the source and tables (#42)


class ReferenceResolver:
    """Hands the gate its reference DataFrames for a batch, re-reading specs whose data is stale.

    Args:
        datasets: Name to static DataFrame or :class:`ReferenceSpec`.
        clock: Monotonic seconds (injectable for tests).
    """

    def __init__(
        self,
        datasets: Mapping[str, DataFrame | ReferenceSpec] | None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.datasets = dict(datasets or {})
        self._clock = clock
        self._cache: dict[str, tuple[float, DataFrame]] = {}

    def resolve(self, spark: SparkSession) -> dict[str, DataFrame]:
        """Every dataset as a DataFrame, specs read (again) when stale.

        Raises:
            ReferenceDatasetUnavailableError: A spec's data cannot be read.
        """
        return {name: self._get(name, value, spark) for name, value in self.datasets.items()}

    def _get(self, name: str, value: DataFrame | ReferenceSpec, spark: SparkSession) -> DataFrame:
        if not isinstance(value, ReferenceSpec):
            return value
        now = self._clock()
        cached = self._cache.get(name)
        if cached is not None and value.refresh_seconds > 0 and now - cached[0] < value.refresh_seconds:
            return cached[1]
        try:
            df = value.load(spark)
        except Exception as exc:  # AnalysisException, TableNotFoundError, OSError ...
            raise ReferenceDatasetUnavailableError(name, value.path, _first_line(exc)) from exc
        self._cache[name] = (now, df)
        return df


def _first_line(exc: BaseException) -> str:
    """The first line that says why: a JVM error's own message (``No FileSystem for scheme "s3"``), not py4j's
    ``An error occurred while calling o633.load.`` (#42)."""
    java = getattr(exc, "java_exception", None)
    text = str(java if java is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def reference_specs(config: GateConfig) -> dict[str, ReferenceSpec]:
    """The reference datasets a gate config names, each re-read on its own schedule."""
    return {
        name: ReferenceSpec(
            r.format,
            r.path,
            r.schema_,
            dict(r.options),
            r.refresh_seconds,
            config.reference_storage_options(name),
        )
        for name, r in config.reference_datasets.items()
    }
