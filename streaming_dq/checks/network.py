"""IP addresses: ``ipv4-format-check``, ``ipv6-format-check``, ``ipv4-in-cidr-check``, ``ipv6-in-cidr-check``.

What a form admits is said exactly in each check's docstring (and in docs/checks.md); Python's ``ipaddress``
is the reference the patterns are tested against. The rules are Spark expressions: no Python runs per row.

NULL semantics: NULL passes unless ``treat-null-as-failure: true``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from functools import reduce
from typing import Any, ClassVar

from pydantic import Field, field_validator
from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.checks.formats import PatternCheck
from streaming_dq.checks.value_rule import ValueRuleCheck, ValueRuleConfig
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import col, quote, try_cast
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


_IPV4_TAIL = rf":{_OCTET}(\.{_OCTET}){{3}}$"


class Ipv4FormatCheck(PatternCheck):
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

    def bad_named(self, name: str) -> Column:
        value = col(name)
        octets = [try_cast(f"split({quote(name)}, '[.]')[{i}]", "bigint") for i in range(4)]
        address = reduce(lambda acc, octet: acc * 256 + octet, octets[1:], octets[0])
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


def _ipv4_network(block: str, index: int) -> ipaddress.IPv4Network:
    try:
        return ipaddress.IPv4Network(block)
    except ValueError as exc:
        raise ConfigError(
            f"not an IPv4 CIDR block {block!r}: {exc}", field_path=f"cidr-blocks[{index}]"
        ) from None


@register_check_config(check_name="ipv4-format-check")
class Ipv4FormatCheckConfig(ValueRuleConfig):
    """``{check: ipv4-format-check, check-id, columns: [...]}``."""

    check_class: ClassVar[type[BaseCheck]] = Ipv4FormatCheck


@register_check_config(check_name="ipv6-format-check")
class Ipv6FormatCheckConfig(ValueRuleConfig):
    """``{check: ipv6-format-check, check-id, columns: [...]}``."""

    check_class: ClassVar[type[BaseCheck]] = Ipv6FormatCheck


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
