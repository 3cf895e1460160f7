"""A row check's alerting threshold: the share of rows it may flag before the shipped rule pages.

``alert: {max-share: 1%}`` on a row check (or under ``gate:`` for every row check without its own) is exported
as ``streaming_dq_check_alert_max_share{gate, check}``; the shipped rule ``StreamingDQCheckViolationShareHigh``
(deploy/prometheus/alerts.yml) compares each such check's share of violating rows over 15 minutes with it and
fires when the share stays above it for 15 minutes. A check without a threshold exports no such series and the
rule never fires for it (the gate-wide quarantine-ratio alert still covers it). The sustain time is the rule's
``for``, one constant for every check (Prometheus cannot read it from a series): edit the rule to change it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from streaming_dq.exceptions import ConfigError

__all__ = ["AlertThreshold", "share"]


def share(value: Any, field: str = "max-share") -> float:
    """A share of rows from ``0.01``, ``1%`` or ``"0.5 %"``: more than 0, at most 1."""
    if isinstance(value, bool):
        raise ConfigError(f"{field} must be a share such as 1% or 0.01, not {value!r}", field_path=field)
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text[:-1].strip()) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise ConfigError(
                f"{field} must be a share such as 1% or 0.01, not {value!r}", field_path=field
            ) from None
    elif isinstance(value, int | float):
        number = float(value)
    else:
        raise ConfigError(f"{field} must be a share such as 1% or 0.01, not {value!r}", field_path=field)
    if not 0 < number <= 1:
        raise ConfigError(f"{field} must be more than 0% and at most 100%, not {value!r}", field_path=field)
    return number


class AlertThreshold(BaseModel):
    """``{max-share: 1%}``: page when more than this share of the gate's rows violate the check (see the module).

    Example:
        >>> AlertThreshold.model_validate({"max-share": "2.5%"}).max_share
        0.025
    """

    model_config = ConfigDict(alias_generator=lambda n: n.replace("_", "-"), populate_by_name=True,
                              extra="forbid", frozen=True)  # fmt: skip

    max_share: float

    @field_validator("max_share", mode="before")
    @classmethod
    def _share(cls, value: Any) -> float:
        return share(value)
