"""Selects the scanner implementation at import: compiled ``scanner_c`` when available, else the twin ``scanner_py``.

``SSEWIRE_NO_EXTENSIONS=1`` (or ``true``; ``0``, ``false`` and empty mean off) forces the twin; interpreters other
than CPython always get it. ``IMPLEMENTATION`` says which one is active: ``"cython"`` or ``"python"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._config import no_extensions, twin

__all__ = [
    "IMPLEMENTATION",
    "NO_EXTENSIONS",
    "EventStreamMessage",
    "EventStreamParser",
    "JSONArrayStreamParser",
    "NDJSONParser",
    "SSEEvent",
    "SSEParser",
    "Utf8Event",
]

NO_EXTENSIONS = no_extensions()


if TYPE_CHECKING:  # what type checkers see: the twin's classes, whose stubs the compiled module matches
    from .scanner_py import (
        EventStreamMessage,
        EventStreamParser,
        JSONArrayStreamParser,
        NDJSONParser,
        SSEEvent,
        SSEParser,
        Utf8Event,
    )

    IMPLEMENTATION = "python"
else:
    _module, IMPLEMENTATION = twin(__name__, "scanner")  # the compiled module unless switched off or not built
    globals().update(
        {name: getattr(_module, name) for name in __all__ if name not in ("IMPLEMENTATION", "NO_EXTENSIONS")}
    )
