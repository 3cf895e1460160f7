"""Protobuf messages framed by a schema registry (``value.format: protobuf-registry``): the schemas on the
driver, the decoding on the executors.

Spark's own ``from_protobuf`` lives in the spark-protobuf JAR, which the package repositories this project
installs from do not serve; the messages are decoded by Python's protobuf runtime instead, in an Arrow-batched
Python UDF on the executors (``useArrow``), with the reader's message class built once per worker from the
descriptors shipped with the function.

A registry gives a Protobuf schema as ``.proto`` text (Confluent's registry) or as the base64 of a serialized
``FileDescriptorProto`` (what Confluent's serializers register, and Apicurio keeps as given): both become a
``FileDescriptorSet`` here (``.proto`` text compiled by ``grpc_tools.protoc``, an install of
``streaming-dq[protobuf]``). Imports of Google's well-known types are resolved; other imports (schema
references) are not read yet.

Rows are read as the reader's message (``proto-file``, or the registry subject's version) whatever schema
version wrote them: Protobuf's own evolution (fields matched by number; unknown fields skipped, missing ones at
their defaults). A writer schema is refused when it has no top-level message of that name, or a field number
of another type. Types: the scalars (``uint64``/``fixed64`` as ``DECIMAL(20,0)``, the other integers as
``INT``/``BIGINT``), enums as their names, ``bytes`` as ``BINARY``, messages as structs, repeated fields as
arrays, maps as maps; a field with presence that is unset is NULL, one without presence reads its default.
"""

from __future__ import annotations

import base64
import binascii
import subprocess
import sys
import tempfile
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from streaming_dq.exceptions import ConfigError, StreamingDQError

__all__ = [
    "ProtobufSchemaError",
    "descriptor_set",
    "field_conflict",
    "index_prefix",
    "message_decoder",
    "message_names",
    "spark_type",
]

#: The column of the decoded struct that says whether the bytes parsed.
PARSED = "_dq_parsed"


class ProtobufSchemaError(StreamingDQError, ValueError):
    """A Protobuf schema this gate cannot read (not a .proto or a descriptor, an import it cannot resolve)."""


def descriptor_set(text: str) -> bytes:
    """A registry's or a file's Protobuf schema as a serialized ``FileDescriptorSet`` (its imports first).

    Raises:
        ProtobufSchemaError: neither a descriptor nor .proto text that compiles.
    """
    from google.protobuf import descriptor_pb2

    proto = _as_descriptor(text)
    if proto is None:
        return _compiled(text)
    files = [_well_known(dependency) for dependency in proto.dependency]
    return descriptor_pb2.FileDescriptorSet(file=[*files, proto]).SerializeToString()


def _as_descriptor(text: str) -> Any | None:
    """The ``FileDescriptorProto`` whose base64 ``text`` is (None: it is not one)."""
    from google.protobuf import descriptor_pb2
    from google.protobuf.message import DecodeError

    stripped = text.strip()
    if not stripped or "{" in stripped or " " in stripped:  # .proto text has braces and spaces
        return None
    try:
        proto = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(stripped, validate=True))
    except (binascii.Error, ValueError, DecodeError):
        return None
    return proto if proto.message_type else None


def _well_known(name: str) -> Any:
    from google.protobuf import descriptor_pb2, descriptor_pool

    try:
        found = descriptor_pool.Default().FindFileByName(name)
    except KeyError:
        raise ProtobufSchemaError(f"imports {name}, a schema reference this gate does not read yet") from None
    proto = descriptor_pb2.FileDescriptorProto()
    found.CopyToProto(proto)
    return proto


def _compiled(text: str) -> bytes:
    """``.proto`` text compiled by protoc (``grpc_tools``), with Google's well-known types on its path."""
    try:
        import grpc_tools
    except ImportError:
        raise ConfigError(
            "the registry gives Protobuf schemas as .proto text: reading them needs grpcio-tools "
            "(pip install 'streaming-dq[protobuf]')",
            field_path="source.value.format",
        ) from None
    includes = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as folder:
        source, out = Path(folder) / "schema.proto", Path(folder) / "schema.desc"
        source.write_text(text, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"-I{folder}", f"-I{includes}",
             f"--descriptor_set_out={out}", "--include_imports", str(source)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["protoc failed"])[-1]
            raise ProtobufSchemaError(f"not a Protobuf schema protoc compiles: {last}")
        return out.read_bytes()


def _main_file(descriptors: bytes) -> Any:
    from google.protobuf import descriptor_pb2

    return descriptor_pb2.FileDescriptorSet.FromString(descriptors).file[-1]


def message_names(descriptors: bytes) -> list[str]:
    """The full names of the main file's top-level messages, in their order (the registry's indexes)."""
    main = _main_file(descriptors)
    prefix = f"{main.package}." if main.package else ""
    return [prefix + m.name for m in main.message_type]


def index_prefix(descriptors: bytes, message: str) -> bytes | None:
    """The message-index bytes Confluent's framing puts before a ``message`` of this schema (None: the schema
    has no top-level message of that name): ``00`` for the first, else the zig-zag varints of ``[1, k]``."""
    names = message_names(descriptors)
    if message not in names:
        return None
    k = names.index(message)
    return b"\x00" if k == 0 else _varint(2) + _varint(2 * k)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


@lru_cache(maxsize=64)
def _message_class(descriptors: bytes, message: str) -> Any:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(descriptors).file:
        pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(message))


def field_conflict(writer: bytes, reader: bytes, message: str) -> str | None:
    """Why ``message`` written with ``writer`` cannot be read as ``reader`` (None: it can): a field number
    whose type differs (fields matched by number, as on the wire)."""
    if index_prefix(writer, message) is None:
        return f"no top-level message {message}"
    wrote = {f.number: f for f in _message_class(writer, message).DESCRIPTOR.fields}
    for field in _message_class(reader, message).DESCRIPTOR.fields:
        other = wrote.get(field.number)
        if other is not None and (other.type, _repeated(other)) != (field.type, _repeated(field)):
            return f"field {field.number} ({field.name}) has another type in the writer schema"
    return None


def _repeated(field: Any) -> bool:
    return bool(field.is_repeated)  # protobuf 6+; FieldDescriptor.label is gone


def spark_type(descriptors: bytes, message: str) -> T.StructType:
    """The Spark struct the rows of ``message`` are (see the module for the types)."""
    return _struct_of(_message_class(descriptors, message).DESCRIPTOR, ())


def _struct_of(descriptor: Any, seen: tuple[str, ...]) -> T.StructType:
    if descriptor.full_name in seen:
        raise ProtobufSchemaError(f"message {descriptor.full_name} contains itself: not read as a row")
    inner = (*seen, descriptor.full_name)
    return T.StructType([T.StructField(f.name, _field_type(f, inner)) for f in descriptor.fields])


def _field_type(field: Any, seen: tuple[str, ...]) -> T.DataType:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        key, value = field.message_type.fields_by_name["key"], field.message_type.fields_by_name["value"]
        return T.MapType(_scalar_type(key, seen), _scalar_type(value, seen))
    kind = _scalar_type(field, seen)
    return T.ArrayType(kind) if _repeated(field) else kind


def _scalar_type(field: Any, seen: tuple[str, ...]) -> T.DataType:
    f = field
    types: dict[int, T.DataType] = {
        f.TYPE_DOUBLE: T.DoubleType(), f.TYPE_FLOAT: T.FloatType(), f.TYPE_BOOL: T.BooleanType(),
        f.TYPE_STRING: T.StringType(), f.TYPE_BYTES: T.BinaryType(), f.TYPE_ENUM: T.StringType(),
        f.TYPE_INT32: T.IntegerType(), f.TYPE_SINT32: T.IntegerType(), f.TYPE_SFIXED32: T.IntegerType(),
        f.TYPE_UINT32: T.LongType(), f.TYPE_FIXED32: T.LongType(), f.TYPE_INT64: T.LongType(),
        f.TYPE_SINT64: T.LongType(), f.TYPE_SFIXED64: T.LongType(),
        f.TYPE_UINT64: T.DecimalType(20, 0), f.TYPE_FIXED64: T.DecimalType(20, 0),
    }  # fmt: skip
    if field.type == f.TYPE_MESSAGE:
        return _struct_of(field.message_type, seen)
    if field.type not in types:
        raise ProtobufSchemaError(f"field {field.name}: a proto2 group is not read as a column")
    return types[field.type]


def _value(field: Any, value: Any) -> Any:
    if field.type == field.TYPE_MESSAGE:
        return _row(value)
    if field.type == field.TYPE_ENUM:
        known = field.enum_type.values_by_number.get(value)
        return known.name if known is not None else str(value)
    if field.type in (field.TYPE_UINT64, field.TYPE_FIXED64):
        return Decimal(value)
    return value


def _row(message: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            entry_value = field.message_type.fields_by_name["value"]
            out[field.name] = {k: _value(entry_value, v) for k, v in value.items()}
        elif _repeated(field):
            out[field.name] = [_value(field, v) for v in value]
        elif field.has_presence and not message.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = _value(field, value)
    return out


def message_decoder(descriptors: bytes, message: str) -> tuple[Callable[[Column], Column], T.StructType]:
    """A column function that decodes bytes as ``message`` on the executors, and the struct it gives: the
    message's fields and :data:`PARSED` (False for bytes that are not such a message; NULL for NULL bytes)."""
    fields = spark_type(descriptors, message)
    struct = T.StructType([*fields.fields, T.StructField(PARSED, T.BooleanType())])
    empty = dict.fromkeys(fields.fieldNames())

    def decode(payload: bytes | None) -> dict[str, Any] | None:
        from google.protobuf.message import DecodeError

        if payload is None:
            return None
        parsed = _message_class(descriptors, message)()
        try:
            parsed.ParseFromString(bytes(payload))
        except (DecodeError, ValueError, RuntimeError):
            return {**empty, PARSED: False}
        return {**_row(parsed), PARSED: True}

    udf = F.udf(decode, struct, useArrow=True)
    return udf, fields
