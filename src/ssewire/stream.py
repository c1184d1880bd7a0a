"""Byte chunks in, unified events out: the glue between a scanner and a normaliser.

Every function here is a generator (or consumes one) with backpressure: the next chunk is pulled from the
caller's iterable only when the consumer asks for the next event, and memory is bounded by one event.
"""

from __future__ import annotations

from typing import AsyncIterable, AsyncIterator, Iterable, Iterator, Optional, Union

from ._scanner import JSONArrayStreamParser, SSEEvent, SSEParser
from .errors import StreamTruncated
from .events import Unified
from .normalizers._base import Normalizer, truncated_event
from .normalizers.registry import normalizer_for

__all__ = [
    "FRAMINGS",
    "StreamDecoder",
    "aiter_events",
    "aiter_unified",
    "collect_text",
    "iter_events",
    "iter_unified",
    "make_scanner",
    "parse_sse_bytes",
]

Chunk = Union[bytes, bytearray, memoryview]
Scanner = Union[SSEParser, JSONArrayStreamParser]

#: The framings a stream can have.
FRAMINGS = ("sse", "json_array")
DEFAULT_MAX_BUFFER = 8 * 1024 * 1024


def make_scanner(framing: str = "sse", max_buffer: int = DEFAULT_MAX_BUFFER) -> Scanner:
    """A scanner for ``framing`` (``"sse"`` or ``"json_array"``); ``ValueError`` for anything else."""
    if framing == "sse":
        return SSEParser(max_buffer)
    if framing == "json_array":
        return JSONArrayStreamParser(max_buffer)
    raise ValueError(f"unknown framing {framing!r}; expected 'sse' or 'json_array'")


def parse_sse_bytes(data: bytes, chunk_size: Optional[int] = None) -> list[SSEEvent]:
    """Every event of a whole recorded SSE stream, fed at once or in ``chunk_size`` pieces."""
    parser = SSEParser()
    out: list[SSEEvent] = []
    if chunk_size:
        view = memoryview(data)
        for start in range(0, len(data), chunk_size):
            out += parser.feed(view[start : start + chunk_size])
    else:
        out += parser.feed(data)
    out += parser.close()
    return out


def iter_events(chunks: Iterable[Chunk], framing: str = "sse", max_buffer: int = DEFAULT_MAX_BUFFER) -> Iterator[SSEEvent]:
    """Framed events from byte chunks. Raises the scanner's typed errors (``StreamTruncated`` for a JSON-array
    body that ends early, ``FramingError``, ``SSEBufferOverflow``)."""
    scanner = make_scanner(framing, max_buffer)
    for chunk in chunks:
        yield from scanner.feed(chunk)
    yield from scanner.close()


class StreamDecoder:
    """Push-style pipeline for one stream: byte chunks in (``feed``), unified events out.

    ``feed(chunk)`` returns the events the chunk completes; ``close()`` returns the rest: the scanner's last
    events, calls left open, and a ``stream_truncated`` error when the terminal event never came (carrying the
    best usage seen). Framing errors and over-large events raise their typed exceptions. Memory: one event.
    """

    __slots__ = ("normalizer", "scanner")

    def __init__(
        self,
        provider: Union[str, Normalizer],
        framing: str = "sse",
        max_buffer: int = DEFAULT_MAX_BUFFER,
    ) -> None:
        self.normalizer = normalizer_for(provider) if isinstance(provider, str) else provider
        self.scanner = make_scanner(framing, max_buffer)

    def feed(self, chunk: Chunk) -> list[Unified]:
        """Unified events completed by ``chunk``."""
        events = self.scanner.feed(chunk)
        if not events:
            return []
        normalizer = self.normalizer
        if len(events) == 1:
            return normalizer(events[0])
        out: list[Unified] = []
        for event in events:
            out += normalizer(event)
        return out

    def close(self) -> list[Unified]:
        """End of stream: the remaining events, ending in ``stream_truncated`` when the stream was cut short."""
        normalizer = self.normalizer
        try:
            tail = self.scanner.close()
        except StreamTruncated as exc:
            out = normalizer.flush()
            if not normalizer.done:
                normalizer.done = True
                error = truncated_event(normalizer.provider, normalizer.terminal, normalizer.usage)
                error.error["message"] += f": {exc}"  # type: ignore[index]
                out.append(error)
            return out
        out = []
        for event in tail:
            out += normalizer(event)
        out += normalizer.finish()
        return out


def iter_unified(
    chunks: Iterable[Chunk],
    provider: Union[str, Normalizer],
    framing: str = "sse",
    *,
    max_buffer: int = DEFAULT_MAX_BUFFER,
) -> Iterator[Unified]:
    """Unified events from the byte chunks of one HTTP body (any chunking).

    ``provider`` is a name for :func:`~ssewire.normalizer_for` or a normaliser instance. A stream that ends
    without its terminal event ends with an ``error`` event of type ``stream_truncated`` (carrying the best
    usage seen), never silently. Framing errors and over-large events raise their typed exceptions. The next
    chunk is pulled only once every event of the previous one has been consumed.
    """
    decoder = StreamDecoder(provider, framing, max_buffer)
    feed = decoder.feed
    for chunk in chunks:
        yield from feed(chunk)
    yield from decoder.close()


async def aiter_unified(
    chunks: AsyncIterable[Chunk],
    provider: Union[str, Normalizer],
    framing: str = "sse",
    *,
    max_buffer: int = DEFAULT_MAX_BUFFER,
) -> AsyncIterator[Unified]:
    """The async twin of :func:`iter_unified`: the same events from an async iterable of byte chunks."""
    decoder = StreamDecoder(provider, framing, max_buffer)
    feed = decoder.feed
    async for chunk in chunks:
        for event in feed(chunk):
            yield event
    for event in decoder.close():
        yield event


async def aiter_events(
    chunks: AsyncIterable[Chunk], framing: str = "sse", max_buffer: int = DEFAULT_MAX_BUFFER
) -> AsyncIterator[SSEEvent]:
    """The async twin of :func:`iter_events`."""
    scanner = make_scanner(framing, max_buffer)
    async for chunk in chunks:
        for event in scanner.feed(chunk):
            yield event
    for event in scanner.close():
        yield event


def collect_text(events: Iterable[Unified]) -> str:
    """All ``text_delta`` text, concatenated."""
    return "".join([e.text for e in events if e.type == "text_delta"])
