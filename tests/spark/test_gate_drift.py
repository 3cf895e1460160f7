"""Schema drift detection and policy (pure pyarrow: no JVM), and option validation of the gate."""

from __future__ import annotations

import pyarrow as pa
import pytest

from streaming_dq.config.check_set import CheckSet
from streaming_dq.exceptions import ConfigError
from streaming_dq.sink import QualityGate, SchemaDrift, detect_drift, drift_action

TABLE = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")), ("note", pa.string())])


def test_no_drift_ignores_nullability_order_and_string_or_timestamp_flavours():
    batch = pa.schema(
        [
            pa.field("note", pa.large_string()),
            pa.field("id", pa.int64(), nullable=False),
            pa.field("ts", pa.timestamp("us", tz="Europe/Berlin")),
        ]
    )
    assert detect_drift(TABLE, batch) == SchemaDrift()
    assert drift_action(SchemaDrift(), "stop") == "proceed"


def test_drift_lists_added_missing_and_changed_columns():
    batch = pa.schema([("id", pa.string()), ("ts", pa.timestamp("us", tz="UTC")), ("coupon", pa.string())])
    drift = detect_drift(TABLE, batch)
    assert drift == SchemaDrift(added=("coupon",), missing=("note",), changed=(("id", "int64", "string"),))
    assert drift.describe() == "added ['coupon']; missing ['note']; type of id changed int64 -> string"


ADDED = SchemaDrift(added=("coupon",))
MISSING = SchemaDrift(missing=("note",))
CHANGED = SchemaDrift(changed=(("id", "int64", "string"),))


@pytest.mark.parametrize(
    ("drift", "policy", "action"),
    [
        (ADDED, None, "merge"),
        (MISSING, None, "quarantine"),
        (CHANGED, None, "quarantine"),
        (ADDED, "merge", "merge"),
        (MISSING, "merge", "merge"),
        (CHANGED, "merge", "quarantine"),
        (ADDED, "quarantine", "quarantine"),
        (MISSING, "stop", "stop"),
    ],
)
def test_drift_policy_table(drift, policy, action):
    assert drift_action(drift, policy) == action


@pytest.mark.parametrize(
    ("option", "value", "field_path"),
    [
        ("writer", "jdbc", "targets.writer"),
        ("schema_drift", "ignore", "schema-drift"),
        ("on_aggregate_failure", "drop", "on-aggregate-failure"),
        ("timezone", "Mars/Olympus", "timezone"),
    ],
)
def test_bad_options_are_config_errors_naming_the_field(option, value, field_path):
    with pytest.raises(ConfigError) as info:
        QualityGate("g", CheckSet(), pass_table="/tmp/p", quarantine_table="/tmp/q", **{option: value})
    assert info.value.field_path == field_path
