"""What a body that holds no stream looks like, in words: for messages that say what went wrong.

:func:`describe_body` looks at the first bytes of a body (a few KiB is plenty) and names what it is: empty, an
HTML page, a JSON object or value (a non-streaming response), binary data, or text without any event.
"""

from __future__ import annotations

import json
from typing import Optional

from ..limits import BOM

__all__ = ["describe_body", "starts_a_stream"]

#: How an SSE line starts: a field name and its colon, or a comment.
_SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":", b"data\n", b"data\r")


def describe_body(head: bytes) -> str:
    """A short phrase for what ``head`` (the start of a body) is, e.g. ``"a JSON object, not a stream (a
    non-streaming response body?)"``."""
    text = head[3:] if head.startswith(BOM) else head
    stripped = text.lstrip()
    if not stripped:
        return "empty" if not text else "only whitespace"
    if _looks_binary(stripped):
        return "binary data, not a text stream (compressed, or not a response body?)"
    lower = stripped[:512].lower()
    if lower.startswith((b"<!doctype html", b"<html", b"<head", b"<body")) or b"<html" in lower:
        return "an HTML page, not a stream (an error page from a proxy or the API?)"
    if lower.startswith(b"<"):
        return "XML or markup, not a stream"
    first = stripped[:1]
    if first in (b"{", b"["):
        kind = "a JSON object" if first == b"{" else "a JSON array"
        if first == b"{" and _whole_json(stripped):
            return f"{kind}, not a stream (a non-streaming response body? ask for stream=true)"
        return f"{kind}, not a stream"
    return "text without any Server-Sent Events 'data:' field"


def starts_a_stream(head: bytes, framing: Optional[str] = None) -> bool:
    """Whether ``head`` (a body in which no event was completed) is the start of a stream of ``framing`` (None:
    any) cut inside its first event -- an SSE field, or the start of a JSON element that never ended -- rather than
    a body that holds no stream at all (empty, markup, binary, a whole non-streaming JSON value, other text)."""
    text = head[3:] if head.startswith(BOM) else head
    stripped = text.lstrip()
    if not stripped or _looks_binary(stripped):
        return False
    if framing in (None, "sse") and stripped.startswith(_SSE_FIELDS):
        return True
    json_framing = framing in (None, "ndjson", "json_array")
    return json_framing and stripped[:1] in (b"{", b"[") and not _whole_json(stripped)


def _looks_binary(data: bytes) -> bool:
    sample = data[:512]
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 3  # a character cut at the end of the sample is still text
    controls = sum(1 for b in sample if b < 9 or 13 < b < 32)
    return controls > len(sample) // 10


def _whole_json(data: bytes) -> bool:
    """Whether ``data`` is one whole JSON value (nesting too deep to decode is not: never a RecursionError)."""
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True
