"""Core contracts that need no JVM: severity, configs, registry, factory, CheckSet."""

from __future__ import annotations

from typing import ClassVar

import pytest
from pydantic import ValidationError

from streaming_dq import (
    BaseAggregateCheckConfig,
    BaseCheck,
    BaseRowCheckConfig,
    CheckFactory,
    CheckSet,
    Severity,
    normalize_severity,
    register_check_config,
)
from streaming_dq.checks.count import RowCountMinCheck
from streaming_dq.checks.null import NullCheck, NullCheckConfig
from streaming_dq.exceptions import (
    ConfigError,
    DuplicateCheckIdError,
    InvalidSeverityLevelError,
    MissingCheckTypeError,
    UnknownCheckTypeError,
)


@pytest.mark.parametrize("value", ["critical", "CRITICAL", " Critical ", Severity.CRITICAL])
def test_normalize_severity_accepts_enum_and_any_case(value: object) -> None:
    assert normalize_severity(value) is Severity.CRITICAL  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["fatal", "", None, 3])
def test_normalize_severity_rejects_other_values(value: object) -> None:
    with pytest.raises(InvalidSeverityLevelError, match="invalid severity"):
        normalize_severity(value)  # type: ignore[arg-type]


def test_description_reads_parameters_from_the_constructor() -> None:
    check = RowCountMinCheck("rows", min_count=5, severity=Severity.WARNING)
    assert check.description() == {
        "check": "row-count-min-check",  # the config's name (#42), not the class name
        "check-id": "rows",
        "severity": "warning",
        "parameters": {"min_count": 5},
    }


def test_config_accepts_kebab_aliases_and_python_names() -> None:
    by_alias = NullCheckConfig.model_validate({"check-id": "a", "columns": ["x"]})
    by_name = NullCheckConfig(check_id="a", columns=["x"])
    assert by_alias == by_name
    check = by_alias.to_check()
    assert isinstance(check, NullCheck)
    assert (check.check_id, check.columns, check.severity) == ("a", ["x"], Severity.CRITICAL)


def test_config_bound_to_the_wrong_base_class_fails_at_definition() -> None:
    with pytest.raises(TypeError, match="must be a subclass of BaseAggregateCheck"):

        class WrongConfig(BaseAggregateCheckConfig):
            check_class: ClassVar[type[BaseCheck]] = NullCheck


def test_config_without_check_class_fails_at_definition() -> None:
    with pytest.raises(TypeError, match="must set check_class"):

        class NoClassConfig(BaseRowCheckConfig):
            pass


def test_registry_refuses_a_duplicate_name() -> None:
    with pytest.raises(ValueError, match="already registered"):

        @register_check_config(check_name="null-check")
        class AnotherNullConfig(BaseRowCheckConfig):
            check_class: ClassVar[type[BaseCheck]] = NullCheck


def test_factory_requires_a_check_key() -> None:
    with pytest.raises(MissingCheckTypeError, match="missing 'check' key"):
        CheckFactory.from_dict({"check-id": "a", "columns": ["x"]})


def test_factory_rejects_an_unknown_check_name() -> None:
    with pytest.raises(UnknownCheckTypeError, match="unknown check 'nul-check'"):
        CheckFactory.from_dict({"check": "nul-check", "check-id": "a"})


def test_factory_normalizes_severity_without_mutating_the_callers_dict() -> None:
    raw = {"check": "null-check", "check-id": "a", "columns": ["x"], "severity": "WARNING"}
    snapshot = dict(raw)
    check = CheckFactory.from_dict(raw)
    assert check.severity is Severity.WARNING
    assert raw == snapshot


def test_factory_rejects_a_bad_severity() -> None:
    with pytest.raises(InvalidSeverityLevelError):
        CheckFactory.from_dict({"check": "null-check", "check-id": "a", "columns": ["x"], "severity": "loud"})


def test_factory_raises_validation_error_on_bad_parameters() -> None:
    with pytest.raises(ValidationError, match="columns"):
        CheckFactory.from_dict({"check": "null-check", "check-id": "a", "columns": []})


def test_checkset_refuses_a_duplicate_check_id_naming_it() -> None:
    cs = CheckSet().add_check(NullCheckConfig(check_id="dup", columns=["x"]))
    with pytest.raises(DuplicateCheckIdError, match="'dup'"):
        cs.add_check(NullCheckConfig(check_id="dup", columns=["y"]))


def test_checkset_splits_row_and_aggregate_checks_in_order() -> None:
    cs = CheckSet.from_dicts(
        [
            {"check": "null-check", "check-id": "a", "columns": ["x"]},
            {"check": "row-count-min-check", "check-id": "b", "min-count": 1},
            {"check": "null-check", "check-id": "c", "columns": ["y"], "tags": ["t"], "group": "g"},
        ]
    )
    assert [c.check_id for c in cs.get_row_checks()] == ["a", "c"]
    assert [c.check_id for c in cs.get_aggregate_checks()] == ["b"]
    assert cs.checks[2].tags == frozenset({"t"}) and cs.checks[2].group == "g"


def test_from_yaml_loads_a_sparkdq_style_list_and_names_file_and_field_on_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "checks.yaml"
    good.write_text(
        "checks:\n"
        "  - check: null-check\n    check-id: id-present\n    columns: [id]\n    severity: critical\n"
        "  - check: row-count-between-check\n    check-id: volume\n    min-count: 1\n    max-count: 10\n"
    )
    assert [c.check_id for c in CheckSet.from_yaml(good)] == ["id-present", "volume"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("- check: row-count-min-check\n  check-id: volume\n  min-count: -3\n")
    with pytest.raises(ConfigError) as info:
        CheckSet.from_yaml(bad)
    assert info.value.source == str(bad)
    assert info.value.field_path == "checks[0].min-count"


def test_from_yaml_names_the_duplicate_check_id_field(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "dup.yaml"
    path.write_text(
        "- {check: null-check, check-id: a, columns: [x]}\n- {check: null-check, check-id: a, columns: [y]}\n"
    )
    with pytest.raises(ConfigError, match="duplicate check-id 'a'") as info:
        CheckSet.from_yaml(path)
    assert info.value.field_path == "checks[1].check-id"
