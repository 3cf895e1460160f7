"""Standard codes: ``country-code-check`` (ISO 3166-1), ``subdivision-code-check`` (ISO 3166-2),
``currency-code-check`` (ISO 4217), ``language-code-check`` (ISO 639); ``luhn-check`` (the mod-10 check digit
of card numbers and IMEIs).

The code lists come from the ``pycountry`` package's copy of the ISO tables (Debian's iso-codes), read
once when the check is built, so they are as current as the installed ``pycountry``; they are matched in a
hash set (Spark's ``InSet``), whatever their size. Codes are compared as written: ``de`` is not ``DE``
unless ``ignore-case: true``.

NULL semantics: NULL passes unless ``treat-null-as-failure: true``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, ClassVar, Literal

from pydantic import Field
from pyspark.sql import Column
from pyspark.sql import functions as F

from streaming_dq.checks.value_rule import ValueRuleCheck, ValueRuleConfig
from streaming_dq.core.base_check import BaseCheck
from streaming_dq.core.registry import register_check_config
from streaming_dq.core.severity import Severity
from streaming_dq.core.sql import quote
from streaming_dq.core.suggest import did_you_mean
from streaming_dq.exceptions import ConfigError

CountryStandard = Literal["alpha-2", "alpha-3", "numeric"]
LanguageStandard = Literal["alpha-2", "alpha-3"]
CurrencyStandard = Literal["alpha-3", "numeric"]


@cache
def country_codes(standard: CountryStandard = "alpha-2") -> frozenset[str]:
    """ISO 3166-1 codes of every country pycountry knows: ``DE`` / ``DEU`` / ``276``."""
    import pycountry

    attr = standard.replace("-", "_")
    return frozenset(getattr(c, attr) for c in pycountry.countries)


@cache
def subdivision_codes(country: str | None = None) -> frozenset[str]:
    """ISO 3166-2 codes (``US-NY``), of one country's subdivisions when ``country`` (alpha-2) is given."""
    import pycountry

    return frozenset(s.code for s in pycountry.subdivisions if country is None or s.country_code == country)


@cache
def currency_codes(standard: CurrencyStandard = "alpha-3") -> frozenset[str]:
    """ISO 4217 codes of the current currencies: alphabetic (``EUR``) or ``numeric`` (``978``, as text)."""
    import pycountry

    return frozenset(c.alpha_3 if standard == "alpha-3" else c.numeric for c in pycountry.currencies)


@cache
def language_codes(standard: LanguageStandard = "alpha-2") -> frozenset[str]:
    """ISO 639-1 two-letter codes (``de``), or ISO 639-3 three-letter codes (``deu``) with ``alpha-3``."""
    import pycountry

    attr = standard.replace("-", "_")
    return frozenset(getattr(x, attr) for x in pycountry.languages if hasattr(x, attr))


class _CodeCheck(ValueRuleCheck):
    column_kind: ClassVar[str | None] = "string"
    what: ClassVar[str]

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        ignore_case: bool = False,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        self.ignore_case = ignore_case

    def codes(self) -> frozenset[str]:
        raise NotImplementedError

    def bad(self, value: Column) -> Column:
        if self.ignore_case:
            return ~F.upper(value).isin(sorted({c.upper() for c in self.codes()}))
        return ~value.isin(sorted(self.codes()))

    def bad_named(self, name: str) -> Column:
        # One SQL text instead of one py4j literal per code (5,046 subdivisions took 4 s to build); Spark's
        # optimizer turns the IN list into a hash set (InSet) either way.
        codes = sorted({c.upper() for c in self.codes()} if self.ignore_case else self.codes())
        subject = f"upper({quote(name)})" if self.ignore_case else quote(name)
        listed = ", ".join("'" + c.replace("\\", "\\\\").replace("'", "\\'") + "'" for c in codes)
        return F.expr(f"NOT ({subject} IN ({listed}))")

    def rule_text(self) -> str:
        return f"not {self.what}"


class CountryCodeCheck(_CodeCheck):
    """Fails a row when a value of ``columns`` is not an ISO 3166-1 country code of ``standard``
    (``alpha-2`` by default: ``DE``; ``alpha-3``: ``DEU``; ``numeric``: ``276``, three digits as text)."""

    def __init__(
        self, check_id: str, columns: Sequence[str], standard: CountryStandard = "alpha-2", **kw: Any
    ):
        super().__init__(check_id, columns, **kw)
        self.standard = standard

    def codes(self) -> frozenset[str]:
        return country_codes(self.standard)

    @property
    def what(self) -> str:  # type: ignore[override]
        return f"an ISO 3166-1 {self.standard} country code"


class SubdivisionCodeCheck(_CodeCheck):
    """Fails a row when a value of ``columns`` is not an ISO 3166-2 subdivision code (``US-NY``, ``DE-BY``),
    of ``country`` (an alpha-2 code) when given."""

    def __init__(self, check_id: str, columns: Sequence[str], country: str | None = None, **kw: Any):
        super().__init__(check_id, columns, **kw)
        if country is not None and country not in country_codes("alpha-2"):
            hint = did_you_mean(country.upper(), country_codes("alpha-2"))
            raise ConfigError(f"unknown ISO 3166-1 alpha-2 country {country!r}{hint}", field_path="country")
        self.country = country

    def codes(self) -> frozenset[str]:
        return subdivision_codes(self.country)

    @property
    def what(self) -> str:  # type: ignore[override]
        of = f" of {self.country}" if self.country else ""
        return f"an ISO 3166-2 subdivision code{of}"


class CurrencyCodeCheck(_CodeCheck):
    """Fails a row when a value of ``columns`` is not an ISO 4217 currency code of ``standard``
    (``alpha-3`` by default: ``EUR``; ``numeric``: ``978``, three digits as text)."""

    def __init__(
        self, check_id: str, columns: Sequence[str], standard: CurrencyStandard = "alpha-3", **kw: Any
    ) -> None:
        super().__init__(check_id, columns, **kw)
        self.standard = standard

    def codes(self) -> frozenset[str]:
        return currency_codes(self.standard)

    @property
    def what(self) -> str:  # type: ignore[override]
        return f"an ISO 4217 {self.standard} currency code"


class LanguageCodeCheck(_CodeCheck):
    """Fails a row when a value of ``columns`` is not an ISO 639 language code of ``standard``
    (``alpha-2`` by default, ISO 639-1: ``de``; ``alpha-3``, ISO 639-3: ``deu``)."""

    def __init__(
        self, check_id: str, columns: Sequence[str], standard: LanguageStandard = "alpha-2", **kw: Any
    ):
        super().__init__(check_id, columns, **kw)
        self.standard = standard

    def codes(self) -> frozenset[str]:
        return language_codes(self.standard)

    @property
    def what(self) -> str:  # type: ignore[override]
        return f"an ISO 639 {self.standard} language code"


class _CodeConfig(ValueRuleConfig):
    _abstract: ClassVar[bool] = True
    ignore_case: bool = False


@register_check_config(check_name="country-code-check")
class CountryCodeCheckConfig(_CodeConfig):
    """``{check: country-code-check, check-id, columns: [...], standard?: alpha-2 | alpha-3 | numeric}``."""

    check_class: ClassVar[type[BaseCheck]] = CountryCodeCheck
    standard: CountryStandard = "alpha-2"


@register_check_config(check_name="subdivision-code-check")
class SubdivisionCodeCheckConfig(_CodeConfig):
    """``{check: subdivision-code-check, check-id, columns: [...], country?: US}``."""

    check_class: ClassVar[type[BaseCheck]] = SubdivisionCodeCheck
    country: str | None = Field(default=None, min_length=2, max_length=2)


@register_check_config(check_name="currency-code-check")
class CurrencyCodeCheckConfig(_CodeConfig):
    """``{check: currency-code-check, check-id, columns: [...], standard?: alpha-3 | numeric}``."""

    check_class: ClassVar[type[BaseCheck]] = CurrencyCodeCheck
    standard: CurrencyStandard = "alpha-3"


@register_check_config(check_name="language-code-check")
class LanguageCodeCheckConfig(_CodeConfig):
    """``{check: language-code-check, check-id, columns: [...], standard?: alpha-2 | alpha-3}``."""

    check_class: ClassVar[type[BaseCheck]] = LanguageCodeCheck
    standard: LanguageStandard = "alpha-2"


#: Characters a card or account number may be written with between its digits.
_SEPARATORS = "[ -]"


class LuhnCheck(ValueRuleCheck):
    """Fails a row when a value of ``columns`` is not a number passing the Luhn (mod 10) checksum: payment
    card numbers, IMEIs, many national and account ids.

    Spaces and dashes between digits are ignored (``4111 1111 1111 1111``); anything else, fewer than
    ``min-length`` or more than ``max-length`` digits (2 and 19 by default: the lengths of card numbers), or a
    wrong check digit fails. Numeric columns are judged by their digits. Computed in Spark SQL (a fold over
    the digits), no UDF.
    """

    def __init__(
        self,
        check_id: str,
        columns: Sequence[str],
        min_length: int = 2,
        max_length: int = 19,
        treat_null_as_failure: bool = False,
        severity: Severity = Severity.CRITICAL,
        **kw: Any,
    ) -> None:
        super().__init__(check_id, columns, treat_null_as_failure, severity, **kw)
        if not 1 <= min_length <= max_length:
            raise ConfigError("need 1 <= min-length <= max-length", field_path="min-length")
        self.min_length, self.max_length = int(min_length), int(max_length)

    def bad_named(self, name: str) -> Column:
        digits = f"regexp_replace(CAST({quote(name)} AS STRING), '{_SEPARATORS}', '')"
        # from the right: every second digit doubled, minus 9 when above 9; the sum must end in 0
        total = (
            f"aggregate(transform(reverse(split({digits}, '')), (c, i) -> "
            "CASE WHEN i % 2 = 1 THEN CAST(c AS INT) * 2 - IF(CAST(c AS INT) > 4, 9, 0) ELSE CAST(c AS INT) END),"
            " 0, (acc, d) -> acc + d)"
        )
        shape = f"{digits} RLIKE '^[0-9]{{{self.min_length},{self.max_length}}}$'"
        return F.expr(f"NOT ({shape} AND {total} % 10 = 0)")

    def bad(self, value: Column) -> Column:  # pragma: no cover - bad_named builds the rule
        raise NotImplementedError

    def rule_text(self) -> str:
        return "failing the Luhn checksum"


@register_check_config(check_name="luhn-check")
class LuhnCheckConfig(ValueRuleConfig):
    """``{check: luhn-check, check-id, columns: [...], min-length?: 2, max-length?: 19}``."""

    check_class: ClassVar[type[BaseCheck]] = LuhnCheck
    min_length: int = Field(default=2, ge=1)
    max_length: int = Field(default=19, ge=1)
