# cython: annotation_typing=False, boundscheck=True, wraparound=True
"""Bedrock's ``chunk`` messages unwrapped into the Anthropic events they carry, without decoding the wrapper.

The one source of both implementations: this module is the pure-Python one, and the build compiles this same file
as ``bedrock_chunks_c`` (with the C types declared in ``bedrock_chunks_c.pxd``), as aiohttp builds
``_websocket/reader_c`` from ``reader_py``. :mod:`.bedrock_chunks` picks the one in use. Written so that Cython
compiles it to plain C calls: one operation per line on typed locals (see the ``.pxd``); both give the same
results on every input (tests/normalizers/test_bedrock_chunks.py).
"""

from __future__ import annotations

from binascii import a2b_base64
from typing import TYPE_CHECKING, Callable, Optional

if TYPE_CHECKING:
    from ...events import SSEEvent

__all__ = ["type_of", "unwrap_chunks"]

# The constants are C values in the compiled module (the .pxd declares them): read them from this one.

#: How Bedrock writes a ``chunk`` message's payload: ``{"bytes":"<base64>", "p": ...}``.
CHUNK_PREFIX = '{"bytes":"'
#: How Bedrock writes the Anthropic event inside: ``{"type":"content_block_delta",...``.
TYPE_PREFIX = '{"type":"'
#: The member of the last event that carries InvokeModel's metrics (it takes the full decode).
METRICS = "amazon-bedrock-invocationMetrics"
#: The ``:message-type`` values of a failed stream.
FAILED = ("exception", "error")


def type_of(text: str) -> Optional[str]:
    """The ``type`` an Anthropic event's text opens with (``{"type":"content_block_delta",...``: how Bedrock writes
    them), as the SSE event name the Messages stream would carry; None for another layout (then it is decoded)."""
    if not text.startswith(TYPE_PREFIX):
        return None
    opened = len(TYPE_PREFIX)
    end = text.find('"', opened)
    if end > 0:
        return text[opened:end]
    return None


def unwrap_chunks(
    events: list[SSEEvent], start: int, out: list[SSEEvent], make_event: Callable[[Optional[str], str], SSEEvent]
) -> int:
    """From ``events[start]`` on, each ``chunk`` message whose payload is ``{"bytes":"<base64>", ...}`` becomes
    ``make_event(type, text)`` in ``out`` (``text``: the decoded event, ``type``: what its text opens
    ``{"type":"...`` with, else None). Stops at the first event that is not such a chunk, an exception or error
    message, a payload that is not a str, bytes that are not base64, or an event naming
    ``amazon-bedrock-invocationMetrics``; returns its index."""
    index = start
    end = len(events)
    size = len(CHUNK_PREFIX)
    while index < end:
        ev = events[index]
        if ev.event != "chunk" or getattr(ev, "message_type", None) in FAILED:
            break
        value = ev.data
        if type(value) is not str:
            break
        data = value
        if not data.startswith(CHUNK_PREFIX):
            break
        close = data.find('"', size)
        if close < 0 or close + 1 >= len(data) or data[close + 1] not in ",}" or data.find("\\", size, close) >= 0:
            break  # (a string with JSON escapes is left to the full decode)
        try:
            raw = a2b_base64(data[size:close])
        except ValueError:  # binascii.Error, or a str that is not ASCII
            break
        text = raw.decode("utf-8", "replace")
        if METRICS in text:
            break
        out.append(make_event(type_of(text), text))
        index += 1
    return index
