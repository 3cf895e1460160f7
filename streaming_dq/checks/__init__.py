"""The built-in check catalog. Importing this package registers every built-in check.

One family per module: ``null``, ``numeric``, ``temporal`` (date/timestamp), ``strings``, ``contained``,
``comparison``, ``expression``, ``count``, ``completeness``, ``uniqueness``, ``schema``, ``freshness``,
``integrity`` (with ``reference_aggregate``), ``metric``, ``anomaly`` (a window's metric against its own history), ``emptiness``,
``formats`` (e-mail, URL, UUID, letter case), ``network`` (IP addresses, CIDR blocks), ``json_values`` (JSON text), ``equality``, ``recency`` (date formats, the clock) and
``codes`` (ISO country, currency, language codes) and ``aggregate`` (any curated aggregate, per batch or
per group), ``outliers`` (values far from the batch's median) and ``gaps`` (empty time windows within a batch), ``statistics`` (variance, correlation, quantiles and
compliance, mergeable), ``distribution`` (value shares, entropy, distinct-value sets), ``query`` (a SQL query over the batch), ``rows_where`` (the rows a
predicate holds for, counted or as a percent), ``sql_metric`` (one value a query computes), ``conversion`` (text that must cast to a type) and
``sequences`` (values that only grow or shrink along an order). docs/checks.md lists every registered check.
"""

from streaming_dq.checks import (  # noqa: F401
    aggregate,
    anomaly,
    codes,
    comparison,
    completeness,
    contained,
    conversion,
    count,
    distribution,
    emptiness,
    equality,
    expression,
    formats,
    freshness,
    gaps,
    integrity,
    json_values,
    metric,
    network,
    null,
    numeric,
    outliers,
    query,
    recency,
    reference_aggregate,
    rows_where,
    schema,
    sequences,
    sql_metric,
    statistics,
    strings,
    temporal,
    uniqueness,
)
