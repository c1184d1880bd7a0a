"""Typed exceptions raised by ssewire.

Every exception derives from :class:`SSEwireError`, itself a :class:`ValueError`, so callers can catch the
whole family with one ``except`` and code that already catches ``ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = ["FramingError", "SSEBufferOverflow", "SSEwireError", "StreamTruncated"]


class SSEwireError(ValueError):
    """Base class of every error ssewire raises."""


class SSEBufferOverflow(SSEwireError):
    """One pending event (a line, or the data of one event, or one JSON-array element) exceeds ``max_buffer``."""


class FramingError(SSEwireError):
    """The byte stream does not have the framing it was declared to have (e.g. a JSON-array body that is not an
    array, holds a non-object element or has data after its closing ``]``)."""


class StreamTruncated(SSEwireError):
    """The stream ended before its framing was complete (inside a JSON-array element or before the closing ``]``)."""
