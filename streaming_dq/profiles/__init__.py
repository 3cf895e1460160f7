"""Profiles: rules that disable checks, scale metrics or change severity on some calendar dates.

A profile is judged on each row's **event date** in the gate's time zone, never on the wall clock. See
``docs/profiles.md`` for the model, the semantics and the YAML config.

Example:
    >>> from datetime import date
    >>> from streaming_dq.profiles import CheckTarget, HolidayProfile, check, resolve_overrides, tag
    >>> christmas = HolidayProfile(
    ...     name="Christmas 2025",
    ...     start_date=date(2025, 12, 20),
    ...     end_date=date(2026, 1, 5),
    ...     rules=[tag("xmas").set(metric_multiplier=2.0), check("Volume").disable()],
    ... )
    >>> orders = CheckTarget("orders-min", tags=frozenset({"xmas"}))
    >>> resolve_overrides(orders, [christmas], date(2025, 12, 24))
    ResolvedOverrides(disabled=False, metric_multiplier=2.0, severity=None, profiles=('Christmas 2025',),
                      keep_in_baseline=False)
"""

from streaming_dq.profiles.config import (
    HolidayProfileConfig,
    ProfileConfig,
    ProfileList,
    ProfilesConfig,
    PublicHolidayProfileConfig,
    RecurringProfileConfig,
    RuleConfig,
    SelectorConfig,
)
from streaming_dq.profiles.event_time import event_date, event_date_column, time_zone
from streaming_dq.profiles.loading import load_profiles
from streaming_dq.profiles.profiles import HolidayProfile, Profile, RecurringProfile
from streaming_dq.profiles.public_holidays import DateSetProfile, PublicHolidayProfile, expand_profiles
from streaming_dq.profiles.regimes import (
    NO_PROFILE,
    Regime,
    enumerate_regimes,
    regime_column,
    regime_from_mask,
    regime_of,
)
from streaming_dq.profiles.resolution import (
    DEFAULT_OVERRIDES,
    ResolvedOverrides,
    resolve_for_regime,
    resolve_overrides,
)
from streaming_dq.profiles.rules import Rule, RuleBuilder, assertion, check, check_id, tag
from streaming_dq.profiles.selectors import (
    CheckIdSelector,
    CheckTarget,
    GroupSelector,
    Selector,
    TagSelector,
)

__all__ = [
    "DEFAULT_OVERRIDES",
    "NO_PROFILE",
    "CheckIdSelector",
    "CheckTarget",
    "DateSetProfile",
    "GroupSelector",
    "HolidayProfile",
    "HolidayProfileConfig",
    "Profile",
    "ProfileConfig",
    "ProfileList",
    "ProfilesConfig",
    "PublicHolidayProfile",
    "PublicHolidayProfileConfig",
    "RecurringProfile",
    "RecurringProfileConfig",
    "Regime",
    "ResolvedOverrides",
    "Rule",
    "RuleBuilder",
    "RuleConfig",
    "Selector",
    "SelectorConfig",
    "TagSelector",
    "assertion",
    "check",
    "check_id",
    "enumerate_regimes",
    "event_date",
    "event_date_column",
    "expand_profiles",
    "load_profiles",
    "regime_column",
    "regime_from_mask",
    "regime_of",
    "resolve_for_regime",
    "resolve_overrides",
    "tag",
    "time_zone",
]
