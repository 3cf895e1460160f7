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
