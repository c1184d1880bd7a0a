"""Byte chunks in, unified events out: the glue between a scanner and a normaliser.

Every iterator here pulls with backpressure: the next chunk is pulled from the caller's iterable only when the
consumer asks for the next event, and memory is bounded by one event.
"""

from __future__ import annotations

from typing import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Optional,
    Union,
)

from ._decoding import Piece, StreamDecoder, UnifiedEvents
from ._scan import SSEEvent, SSEParser
from .errors import not_one_chunk
from .events import Unified
from .framing import Chunk, make_scanner
from .limits import DEFAULT_MAX_BUFFER, DEFAULT_MAX_INFLATED
from .names import FramingName, ProviderName
from .normalizers.contract import Normalizer
from .resume import ResumeCursor
from .transport import connection_lost, is_transport_error

__all__ = [
    "StreamDecoder",
    "UnifiedEvents",
    "aiter_events",
    "aiter_resumable",
    "aiter_unified",
    "collect_text",
    "iter_events",
    "iter_resumable",
    "iter_unified",
    "parse_sse_bytes",
]


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


def iter_events(
    chunks: Iterable[Chunk], framing: FramingName = "auto", *, max_buffer: int = DEFAULT_MAX_BUFFER
) -> Iterator[SSEEvent]:
    """Framed events from byte chunks. Raises the scanner's typed errors (``StreamTruncatedError`` for a JSON-array
    body that ends early, ``FramingError``, ``SSEBufferOverflowError``)."""
    not_one_chunk(chunks, "iter_events")
    scanner = make_scanner(framing, max_buffer=max_buffer)
    for chunk in chunks:
        yield from scanner.feed(chunk)
    yield from scanner.close()


def iter_unified(
    chunks: Iterable[Piece],
    provider: Union[ProviderName, Normalizer],
    framing: FramingName = "auto",
    *,
    max_buffer: int = DEFAULT_MAX_BUFFER,
    content_encoding: Optional[str] = None,
    max_inflated: int = DEFAULT_MAX_INFLATED,
) -> UnifiedEvents:
    """Unified events from the byte chunks of one HTTP body (any chunking).

    ``provider`` is a name for :func:`~ssewire.normalizer_for` or a normaliser instance. A stream that ends
    without its terminal event ends with an ``error`` event of type ``stream_truncated`` (carrying the best
    usage seen), never silently; ``wrong_provider`` when ``provider`` does not read the stream at all,
    ``not_a_stream`` for a body without any event (see :class:`StreamDecoder`). A gzip or deflate body is
    inflated (``content_encoding``, ``max_inflated``: as :class:`StreamDecoder`). Framing errors and over-large
    events raise their typed exceptions. The next chunk is pulled only once every event of the previous one has
    been consumed. Nothing is read until the first event is asked for; :func:`~ssewire.collect` of an iterator
    nothing has been read from reads the chunks itself, straight into its result.
    """
    return UnifiedEvents(chunks, provider, framing, max_buffer, content_encoding, max_inflated)


def _reconnects_on(exc: BaseException, reconnect_on: Optional[tuple[type[BaseException], ...]]) -> bool:
    return isinstance(exc, reconnect_on) if reconnect_on is not None else is_transport_error(exc)


def _next_connection(decoder: StreamDecoder, reconnects: int, max_reconnects: int) -> Optional[ResumeCursor]:
    """After a connection ended: the cursor to reopen the stream from, or None when it is complete, cannot
    resume, or has been reopened ``max_reconnects`` times."""
    if decoder.normalizer.done or reconnects >= max_reconnects or not decoder.cursor().resumable:
        return None
    return decoder.reconnect()


def iter_resumable(
    open_stream: Callable[[Optional[ResumeCursor]], Iterable[Chunk]],
    provider: Union[ProviderName, Normalizer],
    framing: FramingName = "auto",
    *,
    max_reconnects: int = 3,
    reconnect_on: Optional[tuple[type[BaseException], ...]] = None,
    max_buffer: int = DEFAULT_MAX_BUFFER,
) -> Iterator[Unified]:
    """Unified events of a stream that is reopened where it stopped when its connection drops.

    ``open_stream(cursor)`` returns the byte chunks of a connection: ``cursor`` is None the first time, then the
    :class:`~ssewire.resume.ResumeCursor` to resume from (``cursor.query_params()``). A connection that raises a
    transport error, or ends before the terminal event, is reopened up to ``max_reconnects`` times while the
    stream has a cursor (a sequence number or an event id); replayed events are dropped, so each event is seen
    once, and a tool call cut by the drop is closed by the resumed connection. Transport errors are ``OSError``
    and those of httpx (``TransportError``), aiohttp (``ClientConnectionError``, ``ClientPayloadError``) and
    requests (``ConnectionError``, ``ChunkedEncodingError``; see :mod:`ssewire.transport`) unless ``reconnect_on``
    names the exception types instead. When the stream cannot be resumed it ends with the ``stream_truncated``
    error, as :func:`iter_unified`; after a dropped connection, as :func:`ssewire.adapters.iter_response` ends
    (the event the drop cut discarded, the error naming the transport error). Each connection's iterable is
    closed when it ends and when this iterator is closed.
    """
    decoder = StreamDecoder(provider, framing, max_buffer=max_buffer)
    cursor: Optional[ResumeCursor] = None
    reconnects = 0
    while True:
        lost: Optional[BaseException] = None
        chunks: Iterable[Chunk] = ()
        try:
            chunks = open_stream(cursor)
            not_one_chunk(chunks, "open_stream")
            for chunk in chunks:
                yield from decoder.events(chunk)
            if not decoder.normalizer.done:
                yield from decoder.ended()  # (its last event, when only the blank line after it is missing)
        except Exception as exc:
            if not _reconnects_on(exc, reconnect_on):
                raise
            lost = exc
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        cursor = _next_connection(decoder, reconnects, max_reconnects)
        if cursor is None:
            break
        reconnects += 1
    yield from decoder.close() if lost is None else connection_lost(decoder, lost)


async def aiter_resumable(
    open_stream: Callable[[Optional[ResumeCursor]], AsyncIterable[Chunk]],
    provider: Union[ProviderName, Normalizer],
    framing: FramingName = "auto",
    *,
    max_reconnects: int = 3,
    reconnect_on: Optional[tuple[type[BaseException], ...]] = None,
    max_buffer: int = DEFAULT_MAX_BUFFER,
) -> AsyncIterator[Unified]:
    """The async twin of :func:`iter_resumable`: ``open_stream(cursor)`` returns an async iterable of byte chunks
    (e.g. an async generator reading an httpx ``AsyncClient`` or aiohttp response)."""
    decoder = StreamDecoder(provider, framing, max_buffer=max_buffer)
    cursor: Optional[ResumeCursor] = None
    reconnects = 0
    while True:
        lost: Optional[BaseException] = None
        chunks: Optional[AsyncIterable[Chunk]] = None
        try:
            chunks = open_stream(cursor)
            async for chunk in chunks:
                for event in decoder.events(chunk):
                    yield event
            if not decoder.normalizer.done:
                for event in decoder.ended():
                    yield event
        except Exception as exc:
            if not _reconnects_on(exc, reconnect_on):
                raise
            lost = exc
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()  # (the connection released now, not when the loop finalises the generator)
        cursor = _next_connection(decoder, reconnects, max_reconnects)
        if cursor is None:
            break
        reconnects += 1
    for event in decoder.close() if lost is None else connection_lost(decoder, lost):
        yield event


async def aiter_unified(
    chunks: AsyncIterable[Piece],
    provider: Union[ProviderName, Normalizer],
    framing: FramingName = "auto",
    *,
    max_buffer: int = DEFAULT_MAX_BUFFER,
    content_encoding: Optional[str] = None,
    max_inflated: int = DEFAULT_MAX_INFLATED,
) -> AsyncIterator[Unified]:
    """The async twin of :func:`iter_unified`: the same events from an async iterable of byte chunks."""
    not_one_chunk(chunks, "aiter_unified")
    decoder = StreamDecoder(
        provider, framing, max_buffer=max_buffer, content_encoding=content_encoding, max_inflated=max_inflated
    )
    events = decoder.events
    async for chunk in chunks:
        for event in events(chunk):
            yield event
    for event in decoder.close():
        yield event


async def aiter_events(
    chunks: AsyncIterable[Chunk], framing: FramingName = "auto", *, max_buffer: int = DEFAULT_MAX_BUFFER
) -> AsyncIterator[SSEEvent]:
    """The async twin of :func:`iter_events`."""
    not_one_chunk(chunks, "aiter_events")
    scanner = make_scanner(framing, max_buffer=max_buffer)
    async for chunk in chunks:
        for event in scanner.feed(chunk):
            yield event
    for event in scanner.close():
        yield event


def collect_text(events: Iterable[Unified]) -> str:
    """All ``text_delta`` text, concatenated."""
    return "".join([e.text for e in events if e.type == "text_delta"])
