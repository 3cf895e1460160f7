"""The built-in check catalog. Importing this package registers every built-in check."""

from streaming_dq.checks import count, null  # noqa: F401
