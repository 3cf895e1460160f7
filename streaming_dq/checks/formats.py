"""Well-formed strings: ``string-case-check``, ``email-format-check``, ``url-format-check``,
``uuid-format-check`` (IP addresses: :mod:`~streaming_dq.checks.network`; JSON text:
:mod:`~streaming_dq.checks.json_values`).

Each check fails a row when a value of any of its ``columns`` is not of its form; what a form admits is said
exactly in the check's docstring (and in docs/checks.md), because "valid e-mail" means different things to
different tools. The rules are Spark expressions (regular expressions, Spark's own JSON parser): no Python
runs per row.

NULL semantics: NULL passes unless ``treat-null-as-failure: true``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field
from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.checks.value_rule import ValueRuleCheck, ValueRuleConfig
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.exceptions import ConfigError

#: The letter case a column must be in.
LetterCase = Literal["upper", "lower"]


_LABEL = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"


_ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"


EMAIL_PATTERN = rf"^{_ATOM}(\.{_ATOM})*@({_LABEL}\.)+[A-Za-z]{{2,63}}$"


_PORT = "(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}|0)"


UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"


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


class PatternCheck(ValueRuleCheck):
    column_kind: ClassVar[str | None] = "string"
    pattern: ClassVar[str]
    what: ClassVar[str]

    def bad(self, value: Column) -> Column:
        return ~value.rlike(self.pattern)

    def rule_text(self) -> str:
        return f"not {self.what}"


class EmailFormatCheck(PatternCheck):
    """Fails a row when a value is not an e-mail address of the common form ``local@domain.tld``.

    The local part is dot-separated atoms of letters, digits and ``!#$%&'*+/=?^_`{|}~-`` (no quoted local
    parts, no comments); the domain is dot-separated labels of letters, digits and inner hyphens (at most 63
    characters each) ending in a top-level domain of 2-63 letters (no IP literals). Case does not matter.
    """

    pattern = EMAIL_PATTERN
    what = "an e-mail address"


class UuidFormatCheck(PatternCheck):
    """Fails a row when a value is not a UUID in its canonical text form (8-4-4-4-12 hex digits, any case)."""

    pattern = UUID_PATTERN
    what = "a UUID"


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


@register_check_config(check_name="url-format-check")
class UrlFormatCheckConfig(ValueRuleConfig):
    """``{check: url-format-check, check-id, columns: [...], schemes?: [http, https]}``."""

    check_class: ClassVar[type[BaseCheck]] = UrlFormatCheck
    schemes: list[str] = Field(default_factory=lambda: ["http", "https"], min_length=1)
