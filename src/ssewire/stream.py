"""Byte chunks in, unified events out: the glue between a scanner and a normaliser.

Every iterator here pulls with backpressure: the next chunk is pulled from the caller's iterable only when the
consumer asks for the next event, and memory is bounded by one event.
"""

from __future__ import annotations

import inspect
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Optional,
    Union,
)

from ._json import loads
from ._scan import SSEEvent, SSEParser
from ._scan.sniff import describe_body, starts_a_stream
from .content_encoding import BodyDecoder
from .errors import BodyTooLarge, StreamTruncatedError, chunk_type_error, not_one_chunk
from .events import Unified
from .framing import FRAMINGS_BY_NAME, Chunk, framing_name, framing_scanner, make_scanner, scanner_named
from .limits import DEFAULT_MAX_BUFFER, DEFAULT_MAX_INFLATED
from .names import FramingName, ProviderName
from .normalizers.contract import Normalizer
from .normalizers.providers import wrong_provider
from .normalizers.registry import PROVIDERS, normalizer_for
from .partial_json import parse_partial_json
from .resume import ReplayFilter, ResumeCursor, is_number_id, recent_id_window
from .transport import is_transport_error

if TYPE_CHECKING:
    from .result import Accumulator

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

#: What the unified iterators take: byte chunks of a body, or events an SDK already decoded (dicts, e.g. boto3's
#: Bedrock events), each given to the normaliser's ``frame()``.
Piece = Union[Chunk, dict[str, Any]]

_HEAD = 64 * 1024  # bytes of a body kept until its first event, to say what it is when none comes
#: Characters of a body's first event kept to its end to tell a wrong provider (a payload's members that say whose
#: it is come first in every provider's payloads; a larger first event is kept cut: see ``_keep_first``).
_FIRST_KEPT = 8 * 1024
_COMPRESSED_FIRST = (0x1F, 0x78)  # the first byte of a gzip and of a zlib stream (see content_encoding)


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


class StreamDecoder:
    """Push-style pipeline for one stream: byte chunks in (``feed``), unified events out.

    ``feed(chunk)`` returns the events the chunk completes; ``close()`` returns the rest: the scanner's last
    events and a ``stream_truncated`` error when the terminal event never came (carrying the best usage seen and
    the tool calls left open). Where the named provider does not read the stream at all (its first payload is
    another provider's), that error is ``wrong_provider`` instead, naming the provider auto-detection recognises:
    retrying will not help. A body that held no event at all is looked at once more: a JSON error object (an HTTP
    error body read as a stream) becomes the provider's ``error`` event, anything else a ``not_a_stream`` error
    that says what the body is. Framing errors and over-large events raise their typed exceptions.

    A compressed body is inflated first: ``content_encoding`` is the body's ``Content-Encoding`` (``None``: gzip and
    zlib-wrapped deflate are recognised by their first bytes), and its inflated size is bounded by ``max_inflated``
    (:class:`~ssewire.errors.BodyTooLarge` past it). Memory: one event (and the first 64 KiB of a body until its
    first event).
    """

    __slots__ = (
        "_body",
        "_first",
        "_first_cut",
        "_framing",
        "_head",
        "_ids",
        "_inflated",
        "_max_buffer",
        "_max_inflated",
        "_plain",
        "_reader",
        "_replay",
        "_runs",
        "_scan",
        "_sequence",
        "_sniff",
        "normalizer",
        "scanner",
    )

    def __init__(
        self,
        provider: Union[ProviderName, Normalizer],
        framing: FramingName = "auto",
        *,
        max_buffer: int = DEFAULT_MAX_BUFFER,
        content_encoding: Optional[str] = None,
        max_inflated: int = DEFAULT_MAX_INFLATED,
    ) -> None:
        if isinstance(provider, str):
            cls = PROVIDERS.get(provider)
            self.normalizer = normalizer_for(provider) if cls is None else cls()  # (an unknown name: its error)
        else:
            self.normalizer = provider
        if framing not in FRAMINGS_BY_NAME:  # (a registered name needs no spelling check)
            framing = framing_name(framing)
        self._framing = framing
        self.scanner = scanner_named(framing, max_buffer=max_buffer)
        self._max_buffer = max_buffer
        self._sequence: Optional[int] = None  # last sequence number delivered
        self._ids: Optional[list[str]] = None  # recent non-numeric event ids (made at the first), for a reconnect
        self._replay: Optional[ReplayFilter] = None
        #: The body's first bytes until its first event (an empty bytes until a chunk without an event comes).
        self._head: Union[bytes, bytearray, None] = b""
        #: The body's first event (its data cut to _FIRST_KEPT characters: memory stays one event), to tell a
        #: wrong provider at the end; whether it was cut.
        self._first: Optional[SSEEvent] = None
        self._first_cut = False
        #: True until the first bytes say whether a body of no stated encoding is compressed (no decoder before).
        self._sniff = content_encoding is None
        self._body: Optional[BodyDecoder] = None  # None: bytes as they come
        if content_encoding is not None:
            body = BodyDecoder(content_encoding)  # UnsupportedEncodingError for br, zstd ...
            self._body = None if body.encoding == "identity" else body
        self._inflated = 0
        self._max_inflated = max_inflated
        #: True once bytes go straight from the scanner to the normaliser: the body's first event came (no head to
        #: keep), its encoding is known and not compressed, no replayed events to drop (see :meth:`_replan`).
        self._plain = False
        #: Whether the last chunk on the plain path gave only deltas: the next starts with the delta reader's run
        #: (see _normalize_into), the rest of the reading path only for what it leaves.
        self._runs = False
        #: On the plain path: the feed of the scanner that frames the body (an auto scanner's, once it recognised
        #: the framing), and the normaliser that reads every event in the named one's place (see
        #: :meth:`~ssewire.normalizers.contract.Normalizer.settled`; None until it is known).
        self._scan: Callable[[Chunk], list[SSEEvent]]  # (set by _replan, with _plain)
        self._reader = self.normalizer.settled()

    def _replan(self) -> None:
        """Whether a chunk can take the plain path now (see ``_plain``), and what frames it there."""
        plain = self._plain = self._head is None and not self._sniff and self._body is None and self._replay is None
        if plain:
            self._scan = framing_scanner(self.scanner).feed

    def _sniffed(self, chunk: Chunk) -> bool:
        """Whether ``chunk``, a body's first non-empty bytes of no stated encoding, may start a compressed body:
        only then is a :class:`BodyDecoder` made to tell (gzip and zlib start with bytes no text stream does)."""
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise chunk_type_error(chunk)
        if not chunk:
            return False
        self._sniff = False
        if chunk[0] in _COMPRESSED_FIRST:
            self._body = BodyDecoder(None)
            return True
        return False

    def _inflate(self, chunk: Chunk) -> Iterator[bytes]:
        """The bytes of ``chunk`` once the body's encoding is undone (in pieces of at most 64 KiB), counted
        against ``max_inflated``; a body that turns out not to be compressed is passed on as it is from then on."""
        body = self._body
        assert body is not None
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise chunk_type_error(chunk)
        for piece in body.decode(chunk):
            if body.encoding == "identity":  # sniffed: not compressed
                self._body = None
                self._replan()
                yield piece
                continue
            self._inflated += len(piece)
            if self._inflated > self._max_inflated:
                raise BodyTooLarge(
                    f"the {body.encoding} body inflates to more than max_inflated={self._max_inflated} bytes"
                )
            yield piece

    def feed(self, chunk: Piece) -> list[Unified]:
        """Unified events completed by ``chunk`` (a dict: one event an SDK already decoded, given to the
        normaliser's ``frame()``, e.g. boto3's Bedrock event dicts)."""
        if self._plain and not isinstance(chunk, dict):  # the bulk of a stream
            events = self._scan(chunk)
            return self._normalize(events) if events else []
        if isinstance(chunk, dict):
            self._head = None
            self._replan()
            return self.normalizer.frame(chunk)
        if self._sniff and not self._sniffed(chunk):
            return self._feed_bytes(chunk) if chunk else []
        if self._body is not None:
            out: list[Unified] = []
            for piece in self._inflate(chunk):
                out += self._feed_bytes(piece)
            return out
        return self._feed_bytes(chunk)

    def _feed_bytes(self, chunk: Chunk) -> list[Unified]:
        first = self._head is not None
        events = self._framed(chunk)
        if first and len(events) > 1 and self.normalizer.first_event_alone:  # the first event alone (see feed_into)
            return self._normalize(events[:1]) + self._normalize(events[1:])
        return self._normalize(events) if events else []

    def _normalize(self, events: list[SSEEvent]) -> list[Unified]:
        out = (self._reader or self._settled()).normalize(events)
        if out:
            sequence, last_id = out[-1].sequence, events[-1].id
            if sequence is not None or last_id is not None:
                self._delivered(sequence, last_id)
        return out

    def feed_into(self, chunk: Piece, accumulator: Accumulator) -> None:
        """Give the unified events completed by ``chunk`` to ``accumulator``: what ``accumulator.take(feed(chunk))``
        does, without making the events it does not need (see :meth:`Normalizer.normalize_into`)."""
        if self._plain and not isinstance(chunk, dict):  # the bulk of a stream
            events = self._scan(chunk)
            if events:
                self._normalize_into(events, accumulator)
            return
        if isinstance(chunk, dict):
            self._head = None
            self._replan()
            normalizer = self.normalizer
            accumulator.adopt_meta(None, None)  # as for bytes: the id and model are the normaliser's
            accumulator.take(normalizer.frame(chunk))
            accumulator.adopt_meta(normalizer.response_id, normalizer.model)
            return
        if self._sniff and not self._sniffed(chunk):
            if chunk:
                self._feed_bytes_into(chunk, accumulator)
            return
        if self._body is not None:
            for piece in self._inflate(chunk):
                self._feed_bytes_into(piece, accumulator)
            return
        self._feed_bytes_into(chunk, accumulator)

    def _feed_bytes_into(self, chunk: Chunk, accumulator: Accumulator) -> None:
        first = self._head is not None
        events = self._framed(chunk)
        if not events:
            return
        if first:
            accumulator.adopt_meta(None, None)  # the id and model come from the normaliser, not from every payload
            if len(events) > 1 and self.normalizer.first_event_alone:
                # The stream's first event alone, then the rest: what it names (the API, the stream's id and model)
                # lets the rest of the same chunk take the compiled delta reader (a stored body is a single chunk).
                before = accumulator.events
                normalizer = self.normalizer
                normalizer.normalize_into(events[:1], accumulator)
                if accumulator.events > before:
                    sequence, first_id = normalizer.last_sequence, events[0].id
                    if sequence is not None or first_id is not None:
                        self._delivered(sequence, first_id)
                events = events[1:]
        self._normalize_into(events, accumulator)

    def _settled(self) -> Normalizer:
        """The normaliser that reads the stream's events now: the one :meth:`Normalizer.settled` names (kept once
        known), else the named one."""
        normalizer = self.normalizer
        reader = self._reader = normalizer.settled()
        return normalizer if reader is None else reader

    def _normalize_into(self, events: list[SSEEvent], accumulator: Accumulator) -> None:
        before = accumulator.events
        normalizer = self._reader or self._settled()
        if self._runs:  # the last chunk was deltas only: this one starts with the delta reader's run
            taken = normalizer.read_deltas_into(events, accumulator)  # (a chunk of deltas ends here)
            if taken < len(events):
                self._runs = False
                normalizer.normalize_into(events[taken:] if taken else events, accumulator)
        else:
            deltas = accumulator.deltas
            normalizer.normalize_into(events, accumulator)
            self._runs = accumulator.deltas - deltas == len(events)
        if accumulator.events > before:
            sequence, last_id = normalizer.last_sequence, events[-1].id
            if sequence is not None or last_id is not None:
                self._delivered(sequence, last_id)
        if not accumulator.has_meta:
            accumulator.adopt_meta(normalizer.response_id, normalizer.model)

    def close_into(self, accumulator: Accumulator) -> None:
        """End of stream into ``accumulator``: ``accumulator.take(close())``, and the stream's id and model as the
        normaliser read them."""
        out = self.close()
        if out:
            accumulator.take(out)
        if not accumulator.has_meta:
            accumulator.adopt_meta(self.normalizer.response_id, self.normalizer.model)

    def _framed(self, chunk: Chunk) -> list[SSEEvent]:
        """The framed events ``chunk`` completes (replays of a resumed stream dropped); keeps the body's head."""
        events = self.scanner.feed(chunk)
        head = self._head
        if head is not None:
            if events:
                self._head = None
                self._keep_first(events[0])
                self._replan()
            elif len(head) < _HEAD:
                if type(head) is not bytearray:
                    head = self._head = bytearray()
                head += chunk[: _HEAD - len(head)]
        if events and self._replay is not None:
            events = self._drop_replays(events)
        return events

    def _keep_first(self, event: SSEEvent) -> None:
        """Keep the body's first event for :meth:`_told_apart`: as it is, or the start of a larger one's data (its
        first :data:`_FIRST_KEPT` characters; a held event's from its UTF-8, whose text is never built here)."""
        utf8 = getattr(event, "utf8", None)  # (a held event whose text was not read: see Utf8Event)
        if utf8 is not None:
            self._first, self._first_cut = SSEEvent(event.event, utf8[:_FIRST_KEPT].decode("utf-8", "ignore")), True
        elif len(event.data) > _FIRST_KEPT:
            self._first, self._first_cut = SSEEvent(event.event, event.data[:_FIRST_KEPT]), True
        else:
            self._first = event

    def _delivered(self, sequence: Optional[int], last_id: Optional[str]) -> None:
        """Events were delivered, the last with SSE id ``last_id``, ``sequence`` the last sequence number: keep
        where the stream stands for a reconnect (the recent ids for replay detection; a number id is not kept,
        the replay filter compares those as numbers)."""
        if sequence is not None:
            self._sequence = sequence
        if last_id is None or is_number_id(last_id):
            return
        ids = self._ids
        if ids is None:
            self._ids = [last_id]
        elif ids[-1] != last_id:
            ids.append(last_id)
            if len(ids) > recent_id_window():
                del ids[: len(ids) // 2]

    def _drop_replays(self, events: list[SSEEvent]) -> list[SSEEvent]:
        replay = self._replay
        assert replay is not None
        kept = [event for event in events if not replay.is_replay(event)]
        if not replay.armed:
            self._replay = None
            self._replan()
        return kept

    def cursor(self) -> ResumeCursor:
        """Where the stream stands now: what to reconnect with (see :class:`~ssewire.resume.ResumeCursor`)."""
        normalizer = self.normalizer
        last_event_id = getattr(self.scanner, "last_event_id", None)  # SSE only: a JSON array has no event ids
        return ResumeCursor(normalizer.provider, normalizer.response_id, self._sequence, last_event_id)

    def reconnect(self) -> ResumeCursor:
        """Start reading a new connection for the same stream: a fresh scanner, the same normaliser (so open
        tool calls and usage carry on), and the events the new connection replays dropped. Returns the cursor
        to resume from."""
        cursor = self.cursor()
        self.scanner = make_scanner(self._framing, max_buffer=self._max_buffer)
        self._replay = ReplayFilter(cursor, self._ids)
        if not self._replay.armed:
            self._replay = None
        self._replan()
        return cursor

    def close(self) -> list[Unified]:
        """End of stream: the remaining events, ending in ``stream_truncated`` when the stream was cut short
        (``wrong_provider`` when the named provider never read it, ``not_a_stream`` when it held no event)."""
        normalizer = self.normalizer
        if self._body is not None:
            held = self._body.flush()  # a body too short to tell whether it was compressed
            self._body = None
            self._replan()
            out = self._feed_bytes(held) if held else []
        else:
            out = []
        framing = getattr(self.scanner, "framing", None) if self._framing == "auto" else self._framing
        try:
            tail = self.scanner.close()  # (auto: reads a body whose framing never showed as SSE)
        except StreamTruncatedError as exc:
            return self._told_apart(out + normalizer.finish(str(exc)))
        if not tail and self._head is not None:
            return self._no_events(bytes(self._head), framing)
        if tail:
            out += normalizer.normalize(tail)
        out += normalizer.finish()
        if out and out[-1].type == "error" and self._first is not None:  # (a stream that ended well: nothing to tell)
            return self._told_apart(out)
        return out

    def _told_apart(self, out: list[Unified]) -> list[Unified]:
        """``out`` with its ``stream_truncated`` error made ``wrong_provider`` when the stream's first payload is
        a provider's that the named normaliser does not read (a stream read as the wrong API is no dropped
        connection: retrying would never end)."""
        first = self._first
        if first is None or not out or out[-1].type != "error":
            return out
        error = out[-1].error
        if error is None or error.get("type") != "stream_truncated":
            return out
        try:
            obj = loads(first.data)
        except ValueError:
            if not self._first_cut:
                return out
            obj = parse_partial_json(first.data)  # the start of a large payload: its members so far
        named = self.normalizer.provider
        detected = wrong_provider(named, obj, first.event) if type(obj) is dict else None
        if detected is not None:
            error["type"] = "wrong_provider"
            error["detected_provider"] = detected
            error["message"] = (
                f"provider={named!r} does not read this stream: its payloads are {detected}'s "
                f"(read it with provider={detected!r}, or 'auto')"
            )
        return out

    def _no_events(self, head: bytes, framing: Optional[str]) -> list[Unified]:
        """End of a body in which no event was found (``framing``: the one it had, None where none showed): its
        JSON error object, a truncation when it is a stream cut inside its first event, else ``not_a_stream``
        saying what it is."""
        normalizer = self.normalizer
        self._head = None
        text = head.decode("utf-8", "replace").lstrip("\ufeff")
        try:
            obj = loads(text) if len(head) < _HEAD else None
        except ValueError:
            obj = None
        out = []
        if type(obj) is dict and obj.get("error") is not None:
            out = normalizer(SSEEvent("message", text))
            if normalizer.done:
                return out + normalizer.finish()
        out += normalizer.finish()  # what the normaliser still owes (auto: the error payloads it held)
        error = out[-1].error if out and out[-1].type == "error" else None
        cut = starts_a_stream(head, framing)  # the start of an event, cut before it ended
        message = f"{normalizer.provider}: the body holds no stream: it is {describe_body(head)}"
        if error is None:  # a normaliser that owes nothing at the end (a Realtime session) still read no stream
            if not cut:
                out.append(Unified("error", error={"type": "not_a_stream", "message": message}))
        elif error.get("type") == "stream_truncated":
            if cut:
                error["message"] += ": it ended inside its first event"
            else:  # there was never a stream
                error["type"], error["message"] = "not_a_stream", message
        return out


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


class UnifiedEvents(Iterator[Unified]):
    """The iterator :func:`iter_unified` returns (a generator underneath, made on first use; ``close()`` ends
    it). :meth:`collect_into` reads the whole stream into an accumulator instead, a chunk at a time, and then no
    generator is made at all."""

    __slots__ = ("_args", "_events")

    def __init__(
        self,
        chunks: Iterable[Piece],
        provider: Union[ProviderName, Normalizer],
        framing: FramingName,
        max_buffer: int,
        content_encoding: Optional[str] = None,
        max_inflated: int = DEFAULT_MAX_INFLATED,
    ) -> None:
        self._args = (chunks, provider, framing, max_buffer, content_encoding, max_inflated)
        self._events: Optional[Generator[Unified, None, None]] = None  # made on first use

    def _generator(self) -> Generator[Unified, None, None]:
        events = self._events
        if events is None:
            events = self._events = self._generate()
        return events

    def _decoder(self) -> StreamDecoder:
        chunks, provider, framing, max_buffer, content_encoding, max_inflated = self._args
        if isinstance(chunks, (bytes, bytearray, memoryview, str)):
            not_one_chunk(chunks, "iter_unified")
        return StreamDecoder(
            provider, framing, max_buffer=max_buffer, content_encoding=content_encoding, max_inflated=max_inflated
        )

    def _generate(self) -> Generator[Unified, None, None]:
        chunks = self._args[0]
        decoder = self._decoder()
        feed = decoder.feed
        for chunk in chunks:
            yield from feed(chunk)
        yield from decoder.close()

    def __iter__(self) -> Iterator[Unified]:
        return self._generator()

    def __next__(self) -> Unified:
        return next(self._generator())

    def close(self) -> None:
        """Stop: no more events are read."""
        self._generator().close()

    def collect_into(self, accumulator: Accumulator) -> bool:
        """Give every event of the stream to ``accumulator`` (as :meth:`StreamDecoder.feed_into` does, chunk by
        chunk) and return True; False, reading nothing, once events have been read from this iterator."""
        events = self._events
        if events is not None:
            if inspect.getgeneratorstate(events) != inspect.GEN_CREATED:
                return False
            events.close()  # read here, never by the generator
        else:
            self._events = _READ  # read here: the iterator is spent
        chunks = self._args[0]
        decoder = self._decoder()
        feed = decoder.feed_into
        for chunk in chunks:
            feed(chunk, accumulator)
        decoder.close_into(accumulator)
        return True


def _spent() -> Generator[Unified, None, None]:
    yield from ()


_READ = _spent()  # the generator of an iterator collect_into() read: closed, it yields nothing
_READ.close()


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
    and those of httpx (``TransportError``), aiohttp (``ClientError``) and requests (``ConnectionError``,
    ``ChunkedEncodingError``) unless ``reconnect_on`` names the exception types instead. When the stream cannot
    be resumed it ends with the ``stream_truncated`` error, as :func:`iter_unified`.
    """
    decoder = StreamDecoder(provider, framing, max_buffer=max_buffer)
    cursor: Optional[ResumeCursor] = None
    reconnects = 0
    while True:
        try:
            chunks = open_stream(cursor)
            not_one_chunk(chunks, "open_stream")
            for chunk in chunks:
                yield from decoder.feed(chunk)
        except Exception as exc:
            if not _reconnects_on(exc, reconnect_on):
                raise
        cursor = _next_connection(decoder, reconnects, max_reconnects)
        if cursor is None:
            break
        reconnects += 1
    yield from decoder.close()


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
        try:
            async for chunk in open_stream(cursor):
                for event in decoder.feed(chunk):
                    yield event
        except Exception as exc:
            if not _reconnects_on(exc, reconnect_on):
                raise
        cursor = _next_connection(decoder, reconnects, max_reconnects)
        if cursor is None:
            break
        reconnects += 1
    for event in decoder.close():
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
    feed = decoder.feed
    async for chunk in chunks:
        for event in feed(chunk):
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
