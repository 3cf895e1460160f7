"""Every error the library raises on purpose is a StreamingDQError (and the builtin it refines)."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

from streaming_dq.config.check_set import CheckSet
from streaming_dq.core.scope import parse_window
from streaming_dq.exceptions import ConfigError, ConfigTypeError, InternalError, StreamingDQError
from streaming_dq.profiles import RecurringProfile

PACKAGE = Path(__file__).resolve().parents[2] / "streaming_dq"
#: Raised by abstract methods and the like: the builtin is the contract there.
ALLOWED = {"NotImplementedError", "StopIteration", "AttributeError", "SystemExit", "KeyboardInterrupt"}
BUILTIN_ERRORS = {
    name for name in dir(builtins) if isinstance(getattr(builtins, name), type)
    and issubclass(getattr(builtins, name), BaseException)
}  # fmt: skip


def raised_builtins() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name) and target.id in BUILTIN_ERRORS - ALLOWED:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: raise {target.id}")
    return found


def test_no_module_raises_a_bare_builtin_error() -> None:
    assert raised_builtins() == []


def test_the_refined_errors_are_still_their_builtins() -> None:
    assert issubclass(ConfigError, ValueError) and issubclass(ConfigTypeError, TypeError)
    assert issubclass(ConfigTypeError, ConfigError) and issubclass(InternalError, RuntimeError)


@pytest.mark.parametrize(
    "make",
    [
        lambda: parse_window("1 dya"),
        lambda: RecurringProfile("x", weekdays=["funday"]),
        lambda: CheckSet.from_dicts(
            [
                {
                    "check": "numeric-between-check",
                    "check-id": "a",
                    "columns": ["x"],
                    "min-value": 5,
                    "max-value": 1,
                }
            ]
        ),
    ],
)
def test_user_mistakes_in_the_python_api_are_streaming_dq_errors(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(StreamingDQError):
        make()


def _config_errors_without_a_path(decorator: str) -> list[str]:
    """``raise ConfigError(...)`` calls without ``field_path=`` inside functions decorated with ``decorator``."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for func in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(func, ast.FunctionDef):
                continue
            if not any(decorator in ast.unparse(d) for d in func.decorator_list):
                continue
            for node in ast.walk(func):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "ConfigError"
                ) and not any(k.arg == "field_path" for k in node.keywords):
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def test_a_model_validator_names_the_field_it_refuses() -> None:
    """pydantic locates a model validator's error at the model, not at a field: the error must name it."""
    assert _config_errors_without_a_path("model_validator") == []


def test_a_refused_field_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        CheckSet.from_dicts(
            [{"check": "row-count-between-check", "check-id": "n", "min-count": 5, "max-count": 1}]
        )
    assert info.value.field_path == "checks[0].max-count"
