"""The ``profiles:`` section of a gate config: pydantic models, and their conversion to profile objects.

```yaml
profiles:
  - type: holiday
    name: Christmas 2025
    start-date: 2025-12-20
    end-date: 2026-01-05
    rules:
      - {select: {tag: xmas}, metric-multiplier: 2.0}
      - {select: {check: Volume}, disable: true}
  - type: recurring
    name: Weekends
    weekdays: [sat, sun]
    rules: [{select: {check-id: orders-min}, severity: warning}]
```

Keys are kebab-case (snake_case names are accepted too); unknown keys are errors. :func:`~streaming_dq.profiles.loading.load_profiles`
turns a validation error into a :class:`~streaming_dq.exceptions.ConfigError` naming the source and the
field path, e.g. ``profiles[0].rules[1].metric-multiplier``.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from streaming_dq.core.severity import Severity, normalize_severity
from streaming_dq.exceptions import ConfigError, InvalidSeverityLevelError
from streaming_dq.profiles.profiles import (
    HolidayProfile,
    Profile,
    RecurringProfile,
    parse_month_day,
    parse_weekdays,
)
from streaming_dq.profiles.public_holidays import (
    PublicHolidayProfile,
    check_country,
    check_subdivision,
    expand_profiles,
    holiday_names,
    pick_holidays,
)
from streaming_dq.profiles.rules import Rule
from streaming_dq.profiles.selectors import CheckIdSelector, GroupSelector, Selector, TagSelector

__all__ = [
    "HolidayProfileConfig",
    "ProfileConfig",
    "ProfileList",
    "ProfilesConfig",
    "RecurringProfileConfig",
    "RuleConfig",
    "SelectorConfig",
]

_PROFILE_TYPES = frozenset({"holiday", "recurring", "public-holidays"})


def _calendar_date(value: object) -> object:
    """Accept a ``date`` (YAML's unquoted ``2025-12-20``) or an ISO ``"YYYY-MM-DD"`` string, nothing else."""
    if isinstance(value, datetime):
        raise ConfigError(f"expected a calendar date, got the timestamp {value.isoformat()}")
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ConfigError(f"expected a date like 2025-12-20, got {value!r}")


def _month_day(value: object) -> str:
    month, day = parse_month_day(value)
    return f"{month:02d}-{day:02d}"


def _severity(value: object) -> Severity | None:
    if value is None:
        return None
    if not isinstance(value, Severity | str):
        raise InvalidSeverityLevelError(f"invalid severity {value!r}: expected critical or warning")
    return normalize_severity(value)


Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
CalendarDate = Annotated[date, BeforeValidator(_calendar_date)]
MonthDay = Annotated[str, BeforeValidator(_month_day)]
Multiplier = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]
SeverityOverride = Annotated[Severity | None, BeforeValidator(_severity)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class SelectorConfig(_Model):
    """``select:`` of a rule: exactly one of ``{tag: T}``, ``{check: G}``, ``{check: G, check-id: C}``,
    ``{check-id: C}``.

    Example:
        >>> SelectorConfig.model_validate({"check": "Volume", "check-id": "orders-min"}).to_selector()
        GroupSelector(group='Volume', check_id='orders-min')
    """

    tag: Name | None = None
    check: Name | None = None
    check_id: Name | None = Field(default=None, alias="check-id")

    @model_validator(mode="after")
    def _one_kind(self) -> SelectorConfig:
        kinds = sum(v is not None for v in (self.tag, self.check or self.check_id))
        if kinds != 1:
            raise ConfigError(
                "select needs exactly one of {tag: T}, {check: G}, {check: G, check-id: C} or {check-id: C}",
                field_path="tag" if self.tag is not None else None,
            )
        return self

    def to_selector(self) -> Selector:
        """Return the selector this config describes."""
        if self.tag is not None:
            return TagSelector(self.tag)
        if self.check is not None:
            return GroupSelector(self.check, self.check_id)
        assert self.check_id is not None  # guaranteed by _one_kind
        return CheckIdSelector(self.check_id)


class RuleConfig(_Model):
    """One rule: ``{select: ..., disable: bool, metric-multiplier: float > 0, severity: critical|warning,
    keep-in-baseline: bool}``.

    Example:
        >>> RuleConfig.model_validate({"select": {"tag": "xmas"}, "metric-multiplier": 2}).to_rule()
        Rule(selector=TagSelector(tag='xmas'), disabled=False, metric_multiplier=2.0, severity=None,
             keep_in_baseline=False)
    """

    select: SelectorConfig
    disable: StrictBool = False
    metric_multiplier: Multiplier = Field(default=1.0, alias="metric-multiplier")
    severity: SeverityOverride = None
    keep_in_baseline: StrictBool = Field(default=False, alias="keep-in-baseline")

    def to_rule(self) -> Rule:
        """Return the rule this config describes."""
        return Rule(
            self.select.to_selector(),
            self.disable,
            self.metric_multiplier,
            self.severity,
            self.keep_in_baseline,
        )


class HolidayProfileConfig(_Model):
    """``type: holiday``: active from ``start-date`` to ``end-date``, both included.

    Example:
        >>> HolidayProfileConfig.model_validate(
        ...     {"type": "holiday", "name": "Xmas", "start-date": "2025-12-20", "end-date": "2026-01-05"}
        ... ).to_profile().end_date
        datetime.date(2026, 1, 5)
    """

    type: Literal["holiday"]
    name: Name
    start_date: CalendarDate = Field(alias="start-date")
    end_date: CalendarDate = Field(alias="end-date")
    rules: list[RuleConfig] = Field(default_factory=list)

    @field_validator("end_date")
    @classmethod
    def _not_before_start(cls, end: date, info: ValidationInfo) -> date:
        start = info.data.get("start_date")
        if start is not None and end < start:
            raise ConfigError(f"end date {end} is before start date {start}")
        return end

    def to_profile(self) -> HolidayProfile:
        """Return the :class:`HolidayProfile` this config describes."""
        return HolidayProfile(self.name, self.start_date, self.end_date, [r.to_rule() for r in self.rules])


class RecurringProfileConfig(_Model):
    """``type: recurring``: the same month-days every year (may wrap over new year) and/or given weekdays.

    Example:
        >>> RecurringProfileConfig.model_validate(
        ...     {"type": "recurring", "name": "Xmas", "month-day-start": "12-24", "month-day-end": "01-01"}
        ... ).to_profile().wraps
        True
    """

    type: Literal["recurring"]
    name: Name
    month_day_start: MonthDay | None = Field(default=None, alias="month-day-start")
    month_day_end: MonthDay | None = Field(default=None, alias="month-day-end", validate_default=True)
    weekdays: Annotated[tuple[str, ...], BeforeValidator(parse_weekdays)] | None = None
    rules: list[RuleConfig] = Field(default_factory=list)

    @field_validator("month_day_end")
    @classmethod
    def _both_ends(cls, end: str | None, info: ValidationInfo) -> str | None:
        if "month_day_start" not in info.data:  # the start itself is invalid: reported there
            return end
        if (info.data["month_day_start"] is None) != (end is None):
            raise ConfigError("a month-day range needs both month-day-start and month-day-end")
        return end

    @model_validator(mode="after")
    def _range_or_weekdays(self) -> RecurringProfileConfig:
        if self.month_day_start is None and self.weekdays is None:
            raise ConfigError(
                "a recurring profile needs month-day-start/month-day-end, weekdays, or both",
                field_path="weekdays",
            )
        return self

    def to_profile(self) -> RecurringProfile:
        """Return the :class:`RecurringProfile` this config describes."""
        return RecurringProfile(
            self.name,
            self.month_day_start,
            self.month_day_end,
            self.weekdays,
            [r.to_rule() for r in self.rules],
        )


class PublicHolidayProfileConfig(_Model):
    """``type: public-holidays``: a country's (and subdivision's) public holidays in every year, from the
    ``holidays`` package; each holiday shows under its own name (``US holidays: Thanksgiving Day``).

    Example:
        >>> PublicHolidayProfileConfig.model_validate(
        ...     {"type": "public-holidays", "name": "US holidays", "country": "US", "holidays": ["Thanksgiving"]}
        ... ).to_profile().holidays
        ('Thanksgiving Day',)
    """

    type: Literal["public-holidays"]
    name: Name
    country: Name
    subdivision: Name | None = None
    observed: StrictBool = True
    holidays: list[Name] | None = Field(
        default=None, description="Holiday names (a unique part is enough); all when omitted."
    )
    days_before: int = Field(default=0, ge=0, le=31, alias="days-before")
    days_after: int = Field(default=0, ge=0, le=31, alias="days-after")
    rules: list[RuleConfig] = Field(default_factory=list)

    @field_validator("country")
    @classmethod
    def _known_country(cls, value: str) -> str:
        return check_country(value)

    @field_validator("subdivision")
    @classmethod
    def _known_subdivision(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None or "country" not in info.data:
            return value
        return check_subdivision(info.data["country"], value)

    @field_validator("holidays")
    @classmethod
    def _known_holidays(cls, value: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if value is None or "country" not in info.data or "subdivision" not in info.data:
            return value
        known = holiday_names(info.data["country"], info.data["subdivision"], info.data.get("observed", True))
        try:
            return pick_holidays(value, known)
        except ConfigError as exc:  # the message names the holiday; the path is this field
            raise ConfigError(exc.reason) from None

    def to_profile(self) -> PublicHolidayProfile:
        """Return the :class:`PublicHolidayProfile` this config describes (``expand()`` it for the gate)."""
        return PublicHolidayProfile(
            self.name,
            country=self.country,
            subdivision=self.subdivision,
            holidays=self.holidays,
            days_before=self.days_before,
            days_after=self.days_after,
            observed=self.observed,
            rules=[r.to_rule() for r in self.rules],
        )


ProfileConfig = Annotated[
    HolidayProfileConfig | RecurringProfileConfig | PublicHolidayProfileConfig, Field(discriminator="type")
]
"""One item of ``profiles:``, chosen by its ``type`` key."""


def _unique_names(profiles: list[Any]) -> list[Any]:
    seen: dict[str, int] = {}
    for index, profile in enumerate(profiles):
        if profile.name in seen:
            first = seen[profile.name]
            raise ConfigError(
                f"duplicate profile name {profile.name!r} (profiles[{first}] and profiles[{index}])"
            )
        seen[profile.name] = index
    return profiles


ProfileList = Annotated[list[ProfileConfig], AfterValidator(_unique_names)]
"""The ``profiles:`` list, names unique; embed as ``profiles: ProfileList = []`` in a gate config model."""


class ProfilesConfig(_Model):
    """A config holding a ``profiles:`` list.

    Example:
        >>> weekends = {"type": "recurring", "name": "Weekends", "weekdays": ["sat", "sun"]}
        >>> ProfilesConfig.model_validate({"profiles": [weekends]}).to_profiles()[0].weekdays
        ('sat', 'sun')
    """

    profiles: ProfileList = Field(default_factory=list)

    def to_profiles(self) -> list[Profile]:
        """Return the profile objects, in config order (a public-holiday calendar as one per holiday)."""
        return expand_profiles([p.to_profile() for p in self.profiles])
