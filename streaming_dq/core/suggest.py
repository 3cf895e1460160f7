"""Close matches for a name the user mistyped, in the words every error message of the project uses."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(value: str, choices: Iterable[str], *, n: int = 3, cutoff: float = 0.5) -> str:
    """``"; did you mean 'a' or 'b'?"`` for the close matches of ``value`` among ``choices``, or ``""``.

    Example:
        >>> did_you_mean("Thanksgivng", ["Thanksgiving Day", "Labor Day"])
        "; did you mean 'Thanksgiving Day'?"
        >>> did_you_mean("xyz", ["Labor Day"])
        ''
    """
    near = difflib.get_close_matches(value, list(choices), n=n, cutoff=cutoff)
    return f"; did you mean {' or '.join(repr(m) for m in near)}?" if near else ""
