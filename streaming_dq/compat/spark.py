"""pyspark's APIs as the package uses them, the same on every supported Spark (3.5 to 4.3), classic and Connect.

Each function is the one place a difference between versions is bridged; the rest of the package imports these
and never a private pyspark function or a py4j handle of its own:

* :func:`to_arrow` - ``DataFrame.toArrow`` (4.0+); on 3.5 the Arrow collect ``toPandas`` uses (classic) or the
  Connect client's Arrow table;
* :func:`from_arrow` - ``createDataFrame`` of an Arrow table (4.0+); on 3.5 from the table's rows (maps as
  dicts), with its Spark schema given;
* :func:`parse_ddl` - ``DataType.fromDDL`` (4.0+); on 3.5 the session's DDL parser (classic: the JVM's, Connect:
  an analyze request);
* :func:`arrow_schema`, :func:`spark_schema`, :func:`spark_type` - pyspark's Spark <-> Arrow type mapping (the
  one ``toArrow`` and ``createDataFrame`` use, so types agree with the rows), whose private signatures differ
  between versions (``timezone=`` is 4.2+; ``prefer_timestamp_ntz`` defaults to False before 4.2, True since:
  here it is always given);
* :func:`try_to_date` (4.1), :func:`is_valid_utf8` (4.0) - built on older Spark from functions it has (the
  same answers: a date read through ``try_to_timestamp``; UTF-8 validity as "the bytes survive a decode and
  encode unchanged");
* :func:`json_values_type` - what ``from_json`` reads a JSON object's values as, intact: VARIANT (4.0+); on
  3.5 each value's JSON text (a string: a number or an object comes back quoted);
* :func:`jvm_session`, :func:`jvm`, :func:`same_session` - the py4j handles of classic Spark, None under
  Connect (which has no JVM in the client): the caller says what it does then.

Example:
    >>> import pyarrow as pa
    >>> spark_type(pa.int64())
    LongType()
"""

from __future__ import annotations

import inspect
from functools import cache
from typing import TYPE_CHECKING, Any

from streaming_dq.compat.versions import has

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

__all__ = [
    "arrow_schema",
    "from_arrow",
    "is_remote",
    "is_valid_utf8",
    "json_values_type",
    "jvm",
    "jvm_session",
    "parse_ddl",
    "same_session",
    "spark_schema",
    "spark_type",
    "to_arrow",
    "try_to_date",
]


def is_remote() -> bool:
    """Whether this process is a Spark Connect client (no SparkContext, no JVM handles)."""
    from pyspark.sql.utils import is_remote as remote

    return bool(remote())


def to_arrow(df: DataFrame) -> pa.Table:
    """Every row of ``df`` as one Arrow table, in one Spark job (observations on ``df`` are filled by it)."""
    if has("to_arrow"):
        return df.toArrow()
    frame: Any = df  # the 3.5 forms are private, and typed for the newest pyspark
    if is_remote():  # Spark Connect 3.5: the client's own Arrow result
        client = frame._session.client
        table: pa.Table = client.to_table(frame._plan.to_proto(client))[0]
        return table
    batches = frame._collect_as_arrow()  # classic 3.5: what toPandas(arrow) collects
    if batches:
        import pyarrow as pa

        return pa.Table.from_batches(batches)
    return arrow_schema(df.schema).empty_table()


def from_arrow(spark: SparkSession, table: pa.Table, schema: StructType | None = None) -> DataFrame:
    """A DataFrame of a driver-side Arrow table (``schema``: its Spark schema, default from the table's)."""
    schema = schema if schema is not None else spark_schema(table.schema)
    if table.num_rows == 0:  # pyspark cannot build a frame from an Arrow table with no chunks
        return spark.createDataFrame([], schema=schema)
    if has("create_from_arrow"):
        return spark.createDataFrame(table, schema=schema)
    return spark.createDataFrame(table.to_pylist(maps_as_pydicts="strict"), schema=schema)


def parse_ddl(ddl: str) -> DataType:
    """A DDL text (``a INT, b STRING``, ``array<int>``) as a Spark type; needs an active session on 3.5."""
    from pyspark.sql import types as T

    if has("ddl_schema"):
        return T.DataType.fromDDL(ddl)
    if is_remote():
        from pyspark.sql.connect.session import SparkSession as RemoteSession

        session: Any = RemoteSession.active()
        parsed: DataType = session.client._analyze(method="ddl_parse", ddl_string=ddl).parsed
        return parsed
    return T._parse_datatype_string(ddl)


@cache
def _to_arrow_schema_options() -> dict[str, Any]:
    from pyspark.sql.pandas.types import to_arrow_schema

    accepted = inspect.signature(to_arrow_schema).parameters
    return {"timezone": "UTC"} if "timezone" in accepted else {}  # before 4.2: UTC always


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema pyspark gives ``schema``'s rows (timestamps in UTC)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, **_to_arrow_schema_options())


def spark_schema(schema: pa.Schema, *, prefer_timestamp_ntz: bool = True) -> StructType:
    """The Spark schema of Arrow ``schema`` (a timestamp without a zone: TIMESTAMP_NTZ, unless told)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema, prefer_timestamp_ntz=prefer_timestamp_ntz)


def spark_type(arrow: pa.DataType, *, prefer_timestamp_ntz: bool = True) -> DataType:
    """The Spark type of Arrow type ``arrow``."""
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(arrow, prefer_timestamp_ntz=prefer_timestamp_ntz)


def jvm_session(spark: SparkSession | None) -> Any | None:
    """The JVM ``SparkSession`` behind ``spark`` (classic), or None (no session, or Spark Connect)."""
    if spark is None or is_remote():
        return None
    return getattr(spark, "_jsparkSession", None)


def jvm(spark: SparkSession | None) -> Any | None:
    """The py4j JVM view of ``spark``'s driver (classic), or None (no session, or Spark Connect)."""
    if spark is None or is_remote():
        return None
    return getattr(spark, "_jvm", None)


def same_session(a: SparkSession, b: SparkSession) -> bool:
    """Whether two classic sessions are one JVM session (a streaming query's batches get a clone)."""
    ja, jb = jvm_session(a), jvm_session(b)
    if ja is None or jb is None:
        return a is b
    return bool(ja.equals(jb))


def try_to_date(value: Column, fmt: str) -> Column:
    """The date ``value`` reads as under the datetime pattern ``fmt``, NULL where it does not."""
    from pyspark.sql import functions as F

    if has("try_to_date"):
        return F.try_to_date(value, fmt)
    return F.to_date(F.try_to_timestamp(value, F.lit(fmt)))


def is_valid_utf8(text: Column) -> Column:
    """Whether the string ``text`` (e.g. bytes cast to string) holds valid UTF-8; NULL stays NULL."""
    from pyspark.sql import functions as F

    if has("is_valid_utf8"):
        return F.is_valid_utf8(text)
    # 3.5: decoding replaces an invalid byte sequence with U+FFFD, so re-encoding changes the bytes
    return text.cast("binary") == F.encode(text, "UTF-8")


def json_values_type() -> str:
    """The ``map<string, ...>`` type that reads every value of a JSON object without losing it."""
    return "map<string,variant>" if has("variant") else "map<string,string>"
