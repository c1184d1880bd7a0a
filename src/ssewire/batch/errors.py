"""The one exception of ``ssewire batch``'s modules: what the user asked cannot be done (exit status 2)."""

from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(Exception):
    """A missing input, a column that is not there, an unknown output format, pyarrow missing for Parquet ...: the
    message says what and what to do instead; ``ssewire batch`` prints it and exits with status 2."""
