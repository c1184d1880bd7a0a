"""Selects the scanner implementation at import: compiled ``scanner_c`` when available, else the twin ``scanner_py``.

``SSEWIRE_NO_EXTENSIONS=1`` (or ``true``; ``0``, ``false`` and empty mean off) forces the twin; interpreters other
than CPython always get it. ``IMPLEMENTATION`` says which one is active: ``"cython"`` or ``"python"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._config import no_extensions

__all__ = [
    "IMPLEMENTATION",
    "NO_EXTENSIONS",
    "EventStreamMessage",
    "EventStreamParser",
    "JSONArrayStreamParser",
    "NDJSONParser",
    "SSEEvent",
    "SSEParser",
]

NO_EXTENSIONS = no_extensions()

if TYPE_CHECKING or NO_EXTENSIONS:
    from .scanner_py import (
        EventStreamMessage,
        EventStreamParser,
        JSONArrayStreamParser,
        NDJSONParser,
        SSEEvent,
        SSEParser,
    )

    IMPLEMENTATION = "python"
else:
    try:
        from .scanner_c import (
            EventStreamMessage,
            EventStreamParser,
            JSONArrayStreamParser,
            NDJSONParser,
            SSEEvent,
            SSEParser,
        )

        IMPLEMENTATION = "cython"
    except ImportError:  # no compiled module for this platform: the twin behaves identically
        from .scanner_py import (
            EventStreamMessage,
            EventStreamParser,
            JSONArrayStreamParser,
            NDJSONParser,
            SSEEvent,
            SSEParser,
        )

        IMPLEMENTATION = "python"
