"""Typed exceptions raised by ssewire.

Every exception derives from :class:`SSEwireError`, itself a :class:`ValueError`, so callers can catch the
whole family with one ``except`` and code that already catches ``ValueError`` keeps working. Errors of another
kind derive from that kind too: :class:`ChunkTypeError` and :class:`UnsupportedResponseError` are also
``TypeError``, :class:`ParserBusyError` is also ``RuntimeError``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

__all__ = [
    "BodyTooLarge",
    "ChunkTypeError",
    "DetectionError",
    "FramingError",
    "ParserBusyError",
    "ResponseStatusError",
    "SSEBufferOverflow",
    "SSEBufferOverflowError",
    "SSEwireError",
    "StreamTruncated",
    "StreamTruncatedError",
    "UnknownFramingError",
    "UnknownProviderError",
    "UnsupportedResponseError",
    "chunk_type_error",
    "error_type",
    "not_one_chunk",
    "unknown_name",
]


class SSEwireError(ValueError):
    """Base class of every error ssewire raises."""


class SSEBufferOverflowError(SSEwireError):
    """One pending event (a line, or the data of one event, or one JSON-array element) exceeds ``max_buffer``."""


#: The name before 0.2 (the same class).
SSEBufferOverflow = SSEBufferOverflowError


class BodyTooLarge(SSEwireError):
    """A compressed body inflates to more than its bound (``max_inflated``): a decompression bomb, or a body that
    is not one stream."""


class FramingError(SSEwireError):
    """The byte stream does not have the framing it was declared to have (e.g. a JSON-array body that is not an
    array, holds a non-object element or has data after its closing ``]``)."""


class StreamTruncatedError(SSEwireError):
    """The stream ended before its framing was complete (inside a JSON-array element or before the closing ``]``)."""


#: The name before 0.2 (the same class).
StreamTruncated = StreamTruncatedError


class ResponseStatusError(SSEwireError):
    """An HTTP response that is not a 2xx stream: ``status_code`` and ``body`` (the error body, read with a size
    bound, as text) say what the server answered instead."""

    def __init__(self, status_code: int, body: str, message: str = "") -> None:
        self.status_code = status_code
        self.body = body
        super().__init__(message or f"HTTP {status_code}: {body[:200]}")


class DetectionError(SSEwireError):
    """``provider="auto"`` met a payload that belongs to no known provider: it never guesses."""


class ChunkTypeError(SSEwireError, TypeError):
    """A chunk that is not bytes-like (``str`` from ``iter_text()``, an ``int`` from iterating one ``bytes``
    object ...), or one ``bytes`` object where an iterable of chunks was expected. The message says what to pass."""


class UnknownProviderError(SSEwireError):
    """A provider name :func:`~ssewire.normalizer_for` does not know (the message lists the names and suggests
    the closest one)."""


class UnknownFramingError(SSEwireError):
    """A framing name the scanners do not know (the message lists the names and suggests the closest one)."""


class UnsupportedResponseError(SSEwireError, TypeError):
    """An object the HTTP adapters cannot read: not an httpx, aiohttp or requests response, or a sync response
    given to an async reader (and the reverse)."""


class ParserBusyError(SSEwireError, RuntimeError):
    """A scanner fed (or closed) while it is already feeding: one parser belongs to one stream and one thread."""


def chunk_type_error(chunk: Any) -> ChunkTypeError:
    """The error for a chunk that is not bytes-like, saying what to pass instead."""
    if isinstance(chunk, str):
        return ChunkTypeError(
            "chunks must be bytes, not str: pass the raw body (httpx: response.iter_bytes(), not iter_text(); "
            "requests: iter_content(), not iter_lines(decode_unicode=True)), or encode the text first"
        )
    if isinstance(chunk, int):
        return ChunkTypeError(
            "chunks must be bytes-like, not int: pass an iterable of byte chunks (e.g. [body] or "
            "response.iter_bytes()), not one bytes object"
        )
    return ChunkTypeError(f"chunks must be bytes-like (bytes, bytearray, memoryview), not {type(chunk).__name__}")


def not_one_chunk(chunks: Any, function: str) -> None:
    """Raise :class:`ChunkTypeError` when ``chunks`` is one bytes-like or str object instead of an iterable of
    chunks (iterating it would give ints or characters)."""
    if isinstance(chunks, (bytes, bytearray, memoryview)):
        raise ChunkTypeError(
            f"{function}() takes an iterable of byte chunks, not one {type(chunks).__name__} object: "
            f"pass [data] (or the response's iter_bytes())"
        )
    if isinstance(chunks, str):
        raise ChunkTypeError(f"{function}() takes an iterable of byte chunks, not a str: pass [text.encode()]")


def unknown_name(kind: str, name: Any, known: Iterable[str]) -> str:
    """The message for an unknown provider or framing ``name``: what is accepted, and the closest match."""
    choices = sorted(known)
    message = f"unknown {kind} {name!r}; expected one of: {', '.join(choices)}"
    if isinstance(name, str):
        close = difflib.get_close_matches(name.lower().replace("_", "-"), choices, n=1, cutoff=0.5)
        close = close or difflib.get_close_matches(name.lower(), choices, n=1, cutoff=0.5)
        if close:
            message += f" (did you mean {close[0]!r}?)"
    return message


_ERROR_TYPES = {
    "FramingError": "framing_error",
    "SSEBufferOverflowError": "buffer_overflow",
    "BodyTooLarge": "body_too_large",
    "UnsupportedEncodingError": "unsupported_encoding",
    "StreamTruncatedError": "stream_truncated",
    "DetectionError": "detection_error",
    "ResponseStatusError": "http_status",
}


def error_type(exc: BaseException) -> str:
    """A short snake-case type for an exception, for ``error["type"]`` fields (``framing_error``,
    ``buffer_overflow``, ``detection_error`` ...; ``parse_error`` for anything else)."""
    for cls in type(exc).__mro__:
        kind = _ERROR_TYPES.get(cls.__name__)
        if kind is not None:
            return kind
    return "parse_error"
