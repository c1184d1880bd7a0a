"""Selects the scanner implementation at import: compiled ``_scanner_c`` when available, else the Python twin.

``SSEWIRE_NO_EXTENSIONS=1`` (or ``true``; ``0``, ``false`` and empty mean off) forces the twin; interpreters other
than CPython always get it. ``IMPLEMENTATION`` says which one is active: ``"cython"`` or ``"python"``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ._env import env_flag

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

NO_EXTENSIONS = env_flag("SSEWIRE_NO_EXTENSIONS") or sys.implementation.name != "cpython"

if TYPE_CHECKING or NO_EXTENSIONS:
    from ._scanner_py import (
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
        from ._scanner_c import (
            EventStreamMessage,
            EventStreamParser,
            JSONArrayStreamParser,
            NDJSONParser,
            SSEEvent,
            SSEParser,
        )

        IMPLEMENTATION = "cython"
    except ImportError:  # no compiled module for this platform: the twin behaves identically
        from ._scanner_py import (
            EventStreamMessage,
            EventStreamParser,
            JSONArrayStreamParser,
            NDJSONParser,
            SSEEvent,
            SSEParser,
        )

        IMPLEMENTATION = "python"
