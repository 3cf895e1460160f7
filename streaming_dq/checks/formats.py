"""Well-formed strings: ``string-case-check``, ``email-format-check``, ``url-format-check``,
``uuid-format-check``, ``json-format-check``, ``json-keys-check``, ``ipv4-format-check``,
``ipv6-format-check``, ``ipv4-in-cidr-check``, ``ipv6-in-cidr-check``, ``json-schema-check``.

Each check fails a row when a value of any of its ``columns`` is not of its form; what a form admits is said
exactly in the check's docstring (and in docs/checks.md), because "valid e-mail" means different things to
different tools. The rules are Spark expressions (regular expressions, Spark's own JSON parser): no Python
runs per row.

NULL semantics: NULL passes unless ``treat-null-as-failure: true``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from functools import reduce
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator
from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.checks.value_rule import ValueRuleCheck, ValueRuleConfig
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col, quote
from streaming_dq.exceptions import ConfigError

#: One decimal octet, 0-255, without leading zeros (as Python's ``ipaddress`` reads it).
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])"
IPV4_PATTERN = rf"^{_OCTET}(\.{_OCTET}){{3}}$"
_H = "[0-9a-fA-F]{1,4}"
#: The eight-hextet forms with at most one ``::`` (the embedded-IPv4 forms are rewritten into these first).
_IPV6_HEX = (
    "^("
    + "|".join(
        [
            f"({_H}:){{7}}{_H}",
            f"({_H}:){{1,7}}:",
            f"({_H}:){{1,6}}:{_H}",
            f"({_H}:){{1,5}}(:{_H}){{1,2}}",
            f"({_H}:){{1,4}}(:{_H}){{1,3}}",
            f"({_H}:){{1,3}}(:{_H}){{1,4}}",
            f"({_H}:){{1,2}}(:{_H}){{1,5}}",
            f"{_H}:(:{_H}){{1,6}}",
            f":((:{_H}){{1,7}}|:)",
        ]
    )
    + ")$"
)

#: The letter case a column must be in.
LetterCase = Literal["upper", "lower"]
_IPV4_TAIL = rf":{_OCTET}(\.{_OCTET}){{3}}$"
_LABEL = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
EMAIL_PATTERN = rf"^{_ATOM}(\.{_ATOM})*@({_LABEL}\.)+[A-Za-z]{{2,63}}$"
_PORT = "(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}|0)"
UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"


def is_json(value: Column) -> Column:
    """True when ``value`` is one complete JSON document (Spark's variant parser; duplicate keys refused).

    Spark's parser stops after the first value (``{"a":1} x`` would parse), so the text is parsed as the
    only element of an array: anything after the first value makes that array invalid or longer than one.
    """
    wrapped = F.concat(F.lit("["), value, F.lit("]"))
    return F.try_parse_json(wrapped).isNotNull() & (F.json_array_length(wrapped) == 1)


class StringCaseCheck(ValueRuleCheck):
    """Fails a row when a value of ``columns`` is not all upper case (``case: upper``) or lower case.

    A value is in upper case when upper-casing it changes nothing (digits and punctuation are in both cases).
    """

    column_kind: ClassVar[str | None] = "string"

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        case: LetterCase,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        if case not in ("upper", "lower"):
            raise ConfigError(f"case must be upper or lower, not {case!r}", field_path="case")
        self.case = case

    def bad(self, value: Column) -> Column:
        return value != (F.upper(value) if self.case == "upper" else F.lower(value))

    def rule_text(self) -> str:
        return f"not in {self.case} case"


class _PatternCheck(ValueRuleCheck):
    column_kind: ClassVar[str | None] = "string"
    pattern: ClassVar[str]
    what: ClassVar[str]

    def bad(self, value: Column) -> Column:
        return ~value.rlike(self.pattern)

    def rule_text(self) -> str:
        return f"not {self.what}"


class EmailFormatCheck(_PatternCheck):
    """Fails a row when a value is not an e-mail address of the common form ``local@domain.tld``.

    The local part is dot-separated atoms of letters, digits and ``!#$%&'*+/=?^_`{|}~-`` (no quoted local
    parts, no comments); the domain is dot-separated labels of letters, digits and inner hyphens (at most 63
    characters each) ending in a top-level domain of 2-63 letters (no IP literals). Case does not matter.
    """

    pattern = EMAIL_PATTERN
    what = "an e-mail address"


class UuidFormatCheck(_PatternCheck):
    """Fails a row when a value is not a UUID in its canonical text form (8-4-4-4-12 hex digits, any case)."""

    pattern = UUID_PATTERN
    what = "a UUID"


class Ipv4FormatCheck(_PatternCheck):
    """Fails a row when a value is not a dotted-decimal IPv4 address (four octets 0-255, no leading zeros)."""

    pattern = IPV4_PATTERN
    what = "an IPv4 address"


def is_ipv6(value: Column) -> Column:
    """True for an IPv6 address: eight hextets, ``::`` once at most, an IPv4 tail allowed; no zone id."""
    hex_only = F.regexp_replace(value, _IPV4_TAIL, ":0:0")  # a dotted tail stands for two hextets
    return hex_only.rlike(_IPV6_HEX)


class Ipv6FormatCheck(ValueRuleCheck):
    """Fails a row when a value is not an IPv6 address in text form (RFC 4291 2.2: full, ``::``-compressed or
    with an IPv4 tail such as ``::ffff:192.0.2.1``). A zone id (``fe80::1%eth0``) or brackets fail.
    """

    column_kind: ClassVar[str | None] = "string"

    def bad(self, value: Column) -> Column:
        return ~is_ipv6(value)

    def rule_text(self) -> str:
        return "not an IPv6 address"


class UrlFormatCheck(ValueRuleCheck):
    """Fails a row when a value is not an absolute URL ``scheme://host[:port][/path][?query][#fragment]``.

    ``schemes`` (default ``http`` and ``https``, any case) are the schemes allowed; the host is a domain name
    (dot-separated labels, a single label such as ``localhost`` too) or an IPv4 address; the port 0-65535;
    what follows the host starts with ``/``, ``?`` or ``#`` and has no whitespace. Credentials
    (``user@host``) and IPv6 hosts are not admitted.
    """

    column_kind: ClassVar[str | None] = "string"

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        schemes: Sequence[str] = ("http", "https"),
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        bad = [
            s for s in schemes if not s or not s[0].isalpha() or not all(c.isalnum() or c in "+-." for c in s)
        ]
        if not schemes or bad:
            raise ConfigError(
                f"schemes must be URL schemes such as https, not {list(schemes)!r}", field_path="schemes"
            )
        self.schemes = [s.lower() for s in schemes]

    @property
    def pattern(self) -> str:
        schemes = "|".join(s.replace("+", r"\+").replace(".", r"\.") for s in self.schemes)
        host = rf"({_LABEL}(\.{_LABEL})*)"
        return rf"(?i)^({schemes})://{host}(:{_PORT})?([/?#]\S*)?$"

    def bad(self, value: Column) -> Column:
        return ~value.rlike(self.pattern)

    def rule_text(self) -> str:
        return f"not a {'/'.join(self.schemes)} URL"


class JsonFormatCheck(ValueRuleCheck):
    """Fails a row when a value is not one complete JSON document (RFC 8259: an object, array, string,
    number, ``true``, ``false`` or ``null``, surrounding whitespace allowed). An object with a key twice fails
    (Spark's JSON parser refuses it); ``NaN``, single quotes and trailing commas fail.
    """

    column_kind: ClassVar[str | None] = "string"

    def bad(self, value: Column) -> Column:
        return ~is_json(value)

    def rule_text(self) -> str:
        return "not a JSON document"


class JsonKeysCheck(ValueRuleCheck):
    """Fails a row when a value is not a JSON object with every one of ``keys`` at its top level.

    With ``require-all: false`` one of the keys is enough. A value that is not JSON, or JSON that is not an
    object, fails.
    """

    column_kind: ClassVar[str | None] = "string"

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        keys: Sequence[str],
        require_all: bool = True,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        if not keys:
            raise ConfigError("keys must name at least one key", field_path="keys")
        self.keys = list(keys)
        self.require_all = require_all

    def bad(self, value: Column) -> Column:
        found = F.json_object_keys(value)
        has = [F.array_contains(found, F.lit(k)) for k in self.keys]
        present = reduce((lambda a, b: a & b) if self.require_all else (lambda a, b: a | b), has)
        return ~(is_json(value) & found.isNotNull() & F.coalesce(present, F.lit(False)))

    def rule_text(self) -> str:
        which = "all of" if self.require_all else "any of"
        return f"not a JSON object with {which} the keys {', '.join(self.keys)}"


class _CidrCheck(ValueRuleCheck):
    """A value must be an address inside one of ``cidr_blocks`` (parsed by :meth:`network` at build time)."""

    column_kind: ClassVar[str | None] = "string"

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        cidr_blocks: Sequence[str],
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        self.cidr_blocks = list(cidr_blocks)
        self._networks = [self.network(b, i) for i, b in enumerate(self.cidr_blocks)]
        if not self._networks:
            raise ConfigError("cidr-blocks must name at least one block", field_path="cidr-blocks")

    @staticmethod
    def network(block: str, index: int) -> Any:
        raise NotImplementedError


class Ipv4InCidrCheck(_CidrCheck):
    """Fails a row when a value is not an IPv4 address inside one of ``cidr-blocks`` (``10.0.0.0/8``).

    A value that is not an IPv4 address (see ``ipv4-format-check``) fails. Blocks with host bits set
    (``10.0.0.1/8``) are a config error.
    """

    @staticmethod
    def network(block: str, index: int) -> Any:
        return _ipv4_network(block, index)

    def bad(self, value: Column) -> Column:
        parts = F.split(value, r"\.")
        address = reduce(
            lambda acc, i: acc * 256 + parts.getItem(i).try_cast("bigint"),
            range(1, 4),
            parts.getItem(0).try_cast("bigint"),
        )
        inside = [
            F.shiftright(address, 32 - net.prefixlen) == int(net.network_address) >> (32 - net.prefixlen)
            for net in self._networks
        ]
        return ~(value.rlike(IPV4_PATTERN) & reduce(lambda a, b: a | b, inside))

    def rule_text(self) -> str:
        return f"not an IPv4 address in {', '.join(self.cidr_blocks)}"


def ipv6_hex(sql_value: str) -> str:
    """SQL turning an IPv6 address (``sql_value``, valid per :func:`is_ipv6`) into its 32 hex digits.

    The dotted IPv4 tail becomes two hextets, ``::`` the missing zero groups, every group four digits.
    """
    tail = r"'^(.*):([0-9]+)\\.([0-9]+)\\.([0-9]+)\\.([0-9]+)$'"
    hextet = "lpad(lower(hex(CAST(regexp_extract({v}, {t}, {a}) AS INT) * 256 + CAST(regexp_extract({v}, {t}, {b}) AS INT))), 4, '0')"
    v = sql_value
    dotted = (
        f"concat(regexp_extract({v}, {tail}, 1), ':', {hextet.format(v=v, t=tail, a=2, b=3)}, ':', "
        f"{hextet.format(v=v, t=tail, a=4, b=5)})"
    )
    text = f"lower(CASE WHEN {v} RLIKE {tail} THEN {dotted} ELSE {v} END)"
    halves = f"split({text}, '::')"
    head = f"CASE WHEN element_at({halves}, 1) = '' THEN array() ELSE split(element_at({halves}, 1), ':') END"
    rest = (
        f"CASE WHEN size({halves}) < 2 OR element_at({halves}, 2) = '' THEN array() "
        f"ELSE split(element_at({halves}, 2), ':') END"
    )
    pad = "transform({g}, x -> lpad(x, 4, '0'))"
    return (
        f"concat(array_join({pad.format(g=head)}, ''), repeat('0000', 8 - size({head}) - size({rest})), "
        f"array_join({pad.format(g=rest)}, ''))"
    )


class Ipv6InCidrCheck(_CidrCheck):
    """Fails a row when a value is not an IPv6 address inside one of ``cidr-blocks`` (``2001:db8::/32``).

    A value that is not an IPv6 address (see ``ipv6-format-check``) fails. The address is expanded to its 32
    hex digits in Spark SQL and its first ``prefix`` bits compared with the block's; no UDF.
    """

    @staticmethod
    def network(block: str, index: int) -> Any:
        return _ipv6_network(block, index)

    def bad_named(self, name: str) -> Column:
        full = ipv6_hex(quote(name))
        inside = []
        for net in self._networks:
            digits = f"{int(net.network_address):032x}"
            whole, bits = divmod(net.prefixlen, 4)
            terms = [f"substr({full}, 1, {whole}) = '{digits[:whole]}'"] if whole else ["true"]
            if bits:
                nibble = int(digits[whole], 16) >> (4 - bits)
                terms.append(
                    f"shiftright(CAST(conv(substr({full}, {whole + 1}, 1), 16, 10) AS INT), {4 - bits}) = {nibble}"
                )
            inside.append("(" + " AND ".join(terms) + ")")
        return ~(is_ipv6(col(name)) & F.expr(" OR ".join(inside)))

    def bad(self, value: Column) -> Column:  # pragma: no cover - the engine calls bad_named
        raise NotImplementedError("ipv6-in-cidr-check builds its rule from the column name")

    def rule_text(self) -> str:
        return f"not an IPv6 address in {', '.join(self.cidr_blocks)}"


def _ipv6_network(block: str, index: int) -> ipaddress.IPv6Network:
    try:
        return ipaddress.IPv6Network(block)
    except ValueError as exc:
        raise ConfigError(
            f"not an IPv6 CIDR block {block!r}: {exc}", field_path=f"cidr-blocks[{index}]"
        ) from None


class JsonSchemaCheck(ValueRuleCheck):
    """Fails a row when a value is not a JSON object conforming to ``schema`` (Spark DDL, e.g.
    ``id INT NOT NULL, tags ARRAY<STRING>``): Spark's JSON reader must read it into that struct without a
    type mismatch (``{"id": "x"}`` for an INT fails, a number for a STRING field is read as its text), and
    every top-level ``NOT NULL`` field must be present and not null. Other keys are allowed. The text must
    also be one complete JSON document (as ``json-format-check``).
    """

    column_kind: ClassVar[str | None] = "string"

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        schema: str,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        if not schema or not schema.strip():
            raise ConfigError(
                "schema must be Spark DDL, e.g. 'id INT NOT NULL, name STRING'", field_path="schema"
            )
        self.schema = schema
        from pyspark.sql import SparkSession

        if SparkSession.getActiveSession() is not None:
            self._struct()  # a schema Spark cannot parse is a config error now, not in the first batch

    def _struct(self) -> Any:
        from pyspark.sql import types as T

        try:
            struct = T.StructType.fromDDL(self.schema)
        except Exception as exc:
            raise ConfigError(
                f"cannot read schema {self.schema!r} as Spark DDL: {exc}", field_path="schema"
            ) from None
        if not isinstance(struct, T.StructType):
            raise ConfigError(f"schema {self.schema!r} is not a list of fields", field_path="schema")
        return struct

    def bad(self, value: Column) -> Column:
        from pyspark.sql import types as T

        struct = self._struct()
        corrupt = "__dq_corrupt_record"
        parsed = F.from_json(
            value,
            T.StructType([*struct.fields, T.StructField(corrupt, T.StringType(), True)]),
            {"columnNameOfCorruptRecord": corrupt, "mode": "PERMISSIVE"},
        )
        ok = is_json(value) & parsed.isNotNull() & parsed.getField(corrupt).isNull()
        for f in struct.fields:
            if not f.nullable:
                ok = ok & parsed.getField(f.name).isNotNull()
        return ~ok

    def rule_text(self) -> str:
        return f"not a JSON object of {self.schema}"


def _ipv4_network(block: str, index: int) -> ipaddress.IPv4Network:
    try:
        return ipaddress.IPv4Network(block)
    except ValueError as exc:
        raise ConfigError(
            f"not an IPv4 CIDR block {block!r}: {exc}", field_path=f"cidr-blocks[{index}]"
        ) from None


@register_check_config(check_name="string-case-check")
class StringCaseCheckConfig(ValueRuleConfig):
    """``{check: string-case-check, check-id, columns: [...], case: upper | lower}``."""

    check_class: ClassVar[type[BaseCheck]] = StringCaseCheck
    case: LetterCase


@register_check_config(check_name="email-format-check")
class EmailFormatCheckConfig(ValueRuleConfig):
    """``{check: email-format-check, check-id, columns: [...]}``."""

    check_class: ClassVar[type[BaseCheck]] = EmailFormatCheck


@register_check_config(check_name="uuid-format-check")
class UuidFormatCheckConfig(ValueRuleConfig):
    """``{check: uuid-format-check, check-id, columns: [...]}``."""

    check_class: ClassVar[type[BaseCheck]] = UuidFormatCheck


@register_check_config(check_name="ipv4-format-check")
class Ipv4FormatCheckConfig(ValueRuleConfig):
    """``{check: ipv4-format-check, check-id, columns: [...]}``."""

    check_class: ClassVar[type[BaseCheck]] = Ipv4FormatCheck


@register_check_config(check_name="ipv6-format-check")
class Ipv6FormatCheckConfig(ValueRuleConfig):
    """``{check: ipv6-format-check, check-id, columns: [...]}``."""

    check_class: ClassVar[type[BaseCheck]] = Ipv6FormatCheck


@register_check_config(check_name="url-format-check")
class UrlFormatCheckConfig(ValueRuleConfig):
    """``{check: url-format-check, check-id, columns: [...], schemes?: [http, https]}``."""

    check_class: ClassVar[type[BaseCheck]] = UrlFormatCheck
    schemes: list[str] = Field(default_factory=lambda: ["http", "https"], min_length=1)


@register_check_config(check_name="json-format-check")
class JsonFormatCheckConfig(ValueRuleConfig):
    """``{check: json-format-check, check-id, columns: [...]}``."""

    check_class: ClassVar[type[BaseCheck]] = JsonFormatCheck


@register_check_config(check_name="json-keys-check")
class JsonKeysCheckConfig(ValueRuleConfig):
    """``{check: json-keys-check, check-id, columns: [...], keys: [...], require-all?: true}``."""

    check_class: ClassVar[type[BaseCheck]] = JsonKeysCheck
    keys: list[str] = Field(min_length=1)
    require_all: bool = True


class _CidrConfig(ValueRuleConfig):
    """``cidr-blocks``, each read by the check's network parser (a bad block names its index)."""

    _abstract: ClassVar[bool] = True
    cidr_blocks: list[str] = Field(min_length=1)

    @classmethod
    def _network(cls, block: str, index: int) -> object:
        raise NotImplementedError

    @field_validator("cidr_blocks")
    @classmethod
    def _blocks(cls, blocks: list[str]) -> list[str]:
        for i, block in enumerate(blocks):
            cls._network(block, i)
        return blocks


@register_check_config(check_name="ipv4-in-cidr-check")
class Ipv4InCidrCheckConfig(_CidrConfig):
    """``{check: ipv4-in-cidr-check, check-id, columns: [...], cidr-blocks: [10.0.0.0/8, ...]}``."""

    check_class: ClassVar[type[BaseCheck]] = Ipv4InCidrCheck

    @classmethod
    def _network(cls, block: str, index: int) -> object:
        return _ipv4_network(block, index)


@register_check_config(check_name="ipv6-in-cidr-check")
class Ipv6InCidrCheckConfig(_CidrConfig):
    """``{check: ipv6-in-cidr-check, check-id, columns: [...], cidr-blocks: [2001:db8::/32, ...]}``."""

    check_class: ClassVar[type[BaseCheck]] = Ipv6InCidrCheck

    @classmethod
    def _network(cls, block: str, index: int) -> object:
        return _ipv6_network(block, index)


@register_check_config(check_name="json-schema-check")
class JsonSchemaCheckConfig(ValueRuleConfig):
    """``{check: json-schema-check, check-id, columns: [...], schema: "id INT NOT NULL, name STRING"}``."""

    check_class: ClassVar[type[BaseCheck]] = JsonSchemaCheck
    schema_: str = Field(alias="schema", min_length=1)

    def check_parameters(self) -> dict[str, Any]:
        params = super().check_parameters()
        params["schema"] = params.pop("schema_")
        return params
