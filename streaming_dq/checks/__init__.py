"""The built-in check catalog. Importing this package registers every built-in check.

One family per module: ``null``, ``numeric``, ``temporal`` (date/timestamp), ``strings``, ``contained``,
``comparison``, ``expression``, ``count``, ``completeness``, ``uniqueness``, ``schema``, ``freshness``,
``integrity``, ``metric`` and ``anomaly`` (a window's metric against its own history). docs/checks.md lists every registered check.
"""

from streaming_dq.checks import (  # noqa: F401
    anomaly,
    comparison,
    completeness,
    contained,
    count,
    expression,
    freshness,
    integrity,
    metric,
    null,
    numeric,
    schema,
    strings,
    temporal,
    uniqueness,
)
