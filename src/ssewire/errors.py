"""Typed exceptions raised by ssewire.

Every exception derives from :class:`SSEwireError`, itself a :class:`ValueError`, so callers can catch the
whole family with one ``except`` and code that already catches ``ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "DetectionError",
    "FramingError",
    "ResponseStatusError",
    "SSEBufferOverflow",
    "SSEwireError",
    "StreamTruncated",
]


class SSEwireError(ValueError):
    """Base class of every error ssewire raises."""


class SSEBufferOverflow(SSEwireError):
    """One pending event (a line, or the data of one event, or one JSON-array element) exceeds ``max_buffer``."""


class FramingError(SSEwireError):
    """The byte stream does not have the framing it was declared to have (e.g. a JSON-array body that is not an
    array, holds a non-object element or has data after its closing ``]``)."""


class StreamTruncated(SSEwireError):
    """The stream ended before its framing was complete (inside a JSON-array element or before the closing ``]``)."""


class ResponseStatusError(SSEwireError):
    """An HTTP response that is not a 2xx stream: ``status_code`` and ``body`` (the error body, read with a size
    bound, as text) say what the server answered instead."""

    def __init__(self, status_code: int, body: str, message: str = "") -> None:
        self.status_code = status_code
        self.body = body
        super().__init__(message or f"HTTP {status_code}: {body[:200]}")


class DetectionError(SSEwireError):
    """``provider="auto"`` met a payload that belongs to no known provider: it never guesses."""
