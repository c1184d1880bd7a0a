# cython: annotation_typing=False, boundscheck=True, wraparound=True, cdivision=False
"""The per-stream machinery, written once and run twice (compiled as ``_decoding_c`` from this source, with the C
types of ``_decoding_c.pxd``; :mod:`ssewire._decoding` selects at import): :class:`StreamDecoder` (byte chunks in,
unified events out, or straight into an accumulator), :class:`UnifiedEvents` (what ``iter_unified`` returns),
:class:`Accumulator` (unified events in, the :class:`~ssewire.StreamResult` out), the normaliser's reading loop
(``normalize_into``, ``normalize_reading``, ``read_deltas_into``: the one home of the ``Normalizer`` methods of those
names) and :class:`StreamTap` (the gateway's tap, with its :class:`TapMetrics`). Compiled together, their calls into
one another are C calls and their state typed slots; their public homes are :mod:`ssewire.stream`,
:mod:`ssewire.result` and :mod:`ssewire.tap`."""

from __future__ import annotations

import json as _json
import time
from typing import TYPE_CHECKING, Any, Callable, Generator, Iterable, Iterator, Optional, Sequence, Union

from ._json import FIRST_ERRORS, loads, loads_first
from ._scan import SSEEvent
from ._scan.chunks import WINDOW, windows
from ._scan.sniff import describe_body, starts_a_stream
from .content_encoding import BodyDecoder, UnsupportedEncodingError
from .errors import BodyTooLarge, SSEwireError, StreamTruncatedError, chunk_type_error, error_type, not_one_chunk
from .events import LazyPayload, Unified, Utf8Event
from .framing import FRAMINGS_BY_NAME, Chunk, framing_name, framing_scanner, make_scanner, scanner_named
from .limits import DEFAULT_MAX_BUFFER, DEFAULT_MAX_INFLATED
from .names import FramingName, ProviderName
from .normalizers._fast import typed as _typed
from .normalizers._fast.typed import READER_MAX_CHARS as _READER_MAX_CHARS
from .normalizers._fast.typed import TextSink
from .normalizers._fast.typed import take_texts as _take_texts
from .normalizers._fast.utf8 import LARGE as _LARGE
from .normalizers.contract import DelegatingNormalizer, Normalizer, payload_with_text
from .normalizers.providers import ENTRIES, streams_on, wrong_provider
from .normalizers.registry import PROVIDERS, normalizer_for
from .normalizers.tool_calls import decode_arguments
from .partial_json import parse_partial_json
from .result import StreamResult, ToolCall  # (first: result imports this module's selector at its end)
from .resume import ReplayFilter, ResumeCursor, id_key, is_number_id, recent_id_window
from .usage import Usage

if TYPE_CHECKING:
    from ._decoding import Piece

__all__: list[str] = [
    "Accumulator",
    "StreamDecoder",
    "UnifiedEvents",
    "collect",
    "delegated_deltas_into",
    "delegated_normalize",
    "normalize_decoding",
    "normalize_events",
    "normalize_into",
    "normalize_reading",
    "read_deltas_into",
    "read_run",
    "service_tier",
    "StreamTap",
    "TapMetrics",
    "PARSE_EVERY",
    "PARSE_FROM",
]

_TEXTS = frozenset({"text_delta", "reasoning_delta"})
_JOIN_EVERY = 4096  # deltas held as separate strings before they are joined into one
_HEAD = 64 * 1024  # bytes of a body kept until its first event, to say what it is when none comes
#: Characters of a body's first event kept to its end to tell a wrong provider (a payload's members that say whose
#: it is come first in every provider's payloads; a larger first event is kept cut: see ``_keep_first``).
_FIRST_KEPT = 8 * 1024
_UNASKED = object()  # (normalize_reading: the typed fast path not asked for yet)
_COMPRESSED_FIRST = (0x1F, 0x78)  # the first byte of a gzip and of a zlib stream (see content_encoding)


class Accumulator:
    """Feeds on unified events (``add``) and builds the :class:`StreamResult` (``result``)."""

    __slots__ = (
        "_calls",
        "_done",
        "_meta_found",
        "_meta_reader",
        "_order",
        "_parts",
        "_reasoning",
        "_result",
        "_sink",
        "_text",
        "_usage",
        "deltas",
        "events",
        "has_meta",
    )

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        #: Text and reasoning joined so far: every _JOIN_EVERY deltas are joined into one string (the deltas'
        #: objects cost ~60 bytes each; the text alone, ~its length).
        self._parts: tuple[list[str], list[str]] = ([], [])
        self._calls: dict[Optional[str], ToolCall] = {}
        self._order: list[ToolCall] = []
        self._result = StreamResult()
        self._usage: Optional[dict[str, Any]] = None  # the provider's latest usage object
        self._done = False
        self._meta_found = False
        self._meta_reader: Optional[type[Normalizer]] = None  # the provider whose payloads name the id and model
        self._sink: Any = None  # the compiled reader's TextSink, made when a normaliser first asks (text_sink)
        #: True once the result has both the response id and the model: :meth:`adopt_meta` has nothing left to take.
        self.has_meta = False
        #: How many events were taken, and how many of them were deltas (text, reasoning, a tool call's start or
        #: arguments), counting the ones a normaliser handed over as text only (:meth:`text_sink`).
        self.events = 0
        self.deltas = 0

    def _call(self, event: Unified) -> ToolCall:
        call = self._calls.get(event.tool_call_id)
        if call is None:
            call = ToolCall(event.tool_call_id, event.tool_name, server=event.server, complete=False)
            self._calls[event.tool_call_id] = call
            self._order.append(call)
            if self._sink is not None:
                self._sinks_fragments(call)
        elif call.name is None and event.tool_name is not None:
            call.name = event.tool_name
            if self._sink is not None:
                self._sinks_fragments(call)
        return call

    def _sinks_fragments(self, call: ToolCall) -> None:
        """Let the reader's sink take ``call``'s argument fragments (into its ``_fragments``) instead of their events,
        once the call has a string id and a name (a delta event would tell nothing more then)."""
        if type(call.id) is str and call.name is not None and not call.complete:
            self._sink.fragments[call.id] = call._fragments

    def add(self, event: Unified) -> None:
        """Take one event into the result."""
        kind = event.type
        self.events += 1
        if not self._meta_found and event.raw is not None:
            self._meta(event.raw)
        sequence = event.sequence
        if sequence is not None:
            self._result.last_sequence = sequence
        if kind == "raw":  # (the most common event a decoded payload makes)
            pass
        elif kind == "text_delta":
            self.deltas += 1
            self._text.append(event.text)
            if len(self._text) >= _JOIN_EVERY:
                self._compact()
        elif kind == "reasoning_delta":
            self.deltas += 1
            self._reasoning.append(event.text)
            if len(self._reasoning) >= _JOIN_EVERY:
                self._compact()
        elif kind == "tool_call_delta":
            self.deltas += 1
            if event.arguments_delta:
                self._call(event)._fragments.append(event.arguments_delta)
            else:
                self._call(event)
        elif kind == "tool_call_start":
            self.deltas += 1
            call = self._calls.get(event.tool_call_id)
            if call is not None and call.complete:  # a new call under a finished one's id: both are kept
                del self._calls[event.tool_call_id]
            self._call(event)
        else:
            self._add_other(kind, event)
        if event.signature is not None:
            self._result.signatures.append(event.signature)
        if event.citations:
            self._result.citations += event.citations
        if event.encrypted_reasoning is not None:
            self._result.encrypted_reasoning.append(event.encrypted_reasoning)

    def _add_other(self, kind: str, event: Unified) -> None:
        """:meth:`add` for the kinds of event that come once or a few times a stream."""
        result = self._result
        if kind == "tool_call_done":
            call = self._call(event)
            if call.complete:  # a second done for a closed call: the provider's own result re-marked who ran it
                call.server = call.server or event.server
                return
            if event.arguments is not None or event.arguments_error is not None:
                # the normaliser's verdict; arguments_raw is None where the provider sent an object
                call.arguments = event.arguments
                call.arguments_raw = event.arguments_raw
                call.arguments_error = event.arguments_error
            else:  # a done event built by hand: decode what arrived
                if event.arguments_raw is not None:
                    call.arguments_raw = event.arguments_raw
                elif call._fragments:
                    call.arguments_raw = "".join(call._fragments)
                call.arguments, call.arguments_error = decode_arguments(call.arguments_raw)
            call._fragments = []
            call.complete = True
            call.server = call.server or event.server
            if self._sink is not None:
                self._sink.fragments.pop(call.id, None)  # (a fragment after its done takes the event path)
        elif kind == "usage":
            if event.usage is not None:
                self._usage = event.usage
                tier = service_tier(_tier_payload(event), event.usage)
                if tier is not None:
                    result.service_tier = tier
        elif kind == "done":
            self._done = True
            result.stop_reason = event.stop_reason
            result.raw_stop_reason = event.raw_stop_reason
        elif kind == "error":
            if result.error is None:
                result.error = event.error
            if event.usage is not None and self._usage is None:
                self._usage = event.usage

    def extend(self, events: Iterable[Unified]) -> Accumulator:
        """``add`` every event; returns self."""
        self.take(events)
        return self

    def take(self, events: Iterable[Unified]) -> None:
        """``add`` every event. Plain text and reasoning deltas (the bulk of a stream, once the response id and
        model are known) are taken inline, exactly as :meth:`add` takes them: in compiled code where it is
        built."""
        if type(events) is list and len(events) <= 1:  # one event (a decoded one, in a run of the reader): add
            if events:
                self.add(events[0])
            return
        inline = 0  # (self.add is called as such: compiled, a bound method kept in a local is a Python call each time)
        if _take_texts is not None and type(events) is list:
            index, end = 0, len(events)
            while index < end:
                if self._meta_found and events[index].type in _TEXTS:  # a run of deltas starts here
                    after, sequence = _take_texts(events, index, self._text, self._reasoning)
                    if after > index:
                        inline += after - index
                        if sequence is not None:
                            self._result.last_sequence = sequence
                        index = after
                        if index == end:
                            break
                self.add(events[index])
                index += 1
        else:
            text, reasoning = self._text.append, self._reasoning.append
            result = self._result
            for event in events:
                kind = event.type
                if self._meta_found and event.signature is None and kind in _TEXTS:
                    sequence = event.sequence
                    if sequence is not None:
                        result.last_sequence = sequence
                    (text if kind == "text_delta" else reasoning)(event.text)
                    inline += 1
                else:
                    self.add(event)
        self.events += inline
        self.deltas += inline
        if len(self._text) >= _JOIN_EVERY or len(self._reasoning) >= _JOIN_EVERY:
            self._compact()

    def _compact(self) -> None:
        """Join the text and reasoning deltas taken so far once there are many (the lists keep their identity:
        the compiled reader's sink appends to them)."""
        for pieces, joined in zip((self._text, self._reasoning), self._parts):
            if len(pieces) >= _JOIN_EVERY:
                joined.append("".join(pieces))
                pieces.clear()

    def adopt_meta(self, response_id: Optional[str], model: Optional[str]) -> None:
        """Take the stream's id and model from its normaliser (``StreamDecoder`` calls this after each chunk)
        instead of looking for them in every event's payload: from now on no payload is searched. The first id
        and model the normaliser names are the stream's (normalisers keep the first they read)."""
        result = self._result
        if result.response_id is None:
            result.response_id = response_id
        if result.model is None:
            result.model = model
        self._meta_found = True
        self.has_meta = result.response_id is not None and result.model is not None

    def text_sink(self) -> Any:
        """Where a normaliser may put the text of plain text and reasoning deltas instead of making their events
        (a ``TextSink`` of the compiled delta reader), once the response id and model are known; None before, and
        where the reader is not built. What it put there is counted by :meth:`take_run`."""
        if not self._meta_found or TextSink is None:
            return None
        sink = self._sink
        if sink is None:
            sink = self._sink = TextSink(self._text, self._reasoning)
            for call in self._order:  # (calls started before)
                self._sinks_fragments(call)
        return sink

    def take_run(self, events: list[Unified], sink: Any) -> None:
        """:meth:`take` the events a run of the delta reader made, then what it put in ``sink`` (its text is in
        place already: its count, and its last sequence number, the latest of the run)."""
        if events:
            self.take(events)
        if sink is not None:
            if sink.sequence is not None:
                self._result.last_sequence = sink.sequence
                sink.sequence = None
            if sink.taken:
                self.events += sink.taken
                self.deltas += sink.taken
                sink.taken = 0
                if len(self._text) >= _JOIN_EVERY or len(self._reasoning) >= _JOIN_EVERY:
                    self._compact()

    def _meta(self, raw: Any) -> None:
        """Response id and model from the first payloads that name them, as their provider reads them (events
        taken without their normaliser: see the module docstring)."""
        if not isinstance(raw, dict):
            return
        reader = self._meta_reader
        if reader is None:
            reader = self._meta_reader = _claimant(raw)
            if reader is None:  # a payload no provider claims (a bare error): it names nothing
                return
        result = self._result
        response_id, model = reader.rules.meta_from(raw)
        if result.response_id is None and response_id is not None:
            result.response_id = response_id
        if result.model is None and model is not None:
            result.model = model
        self.has_meta = result.response_id is not None and result.model is not None
        self._meta_found = (result.response_id is not None or not reader.names_response_id) and (
            result.model is not None or not reader.names_model
        )

    @property
    def done(self) -> bool:
        """Whether the stream's ``done`` event was taken."""
        return self._done

    @property
    def result(self) -> StreamResult:
        """The result so far (text joined now). Calls the provider closed are in ``tool_calls``; calls never
        closed are in ``incomplete_tool_calls`` (``arguments`` None, ``arguments_raw`` the text that arrived).
        ``usage`` is ``partial`` unless the stream delivered its terminal ``done``."""
        result = self._result
        text, reasoning = self._parts
        result.text = "".join(text + self._text) if text else "".join(self._text)
        result.reasoning = "".join(reasoning + self._reasoning) if reasoning else "".join(self._reasoning)
        order = self._order
        if order:
            result.tool_calls = [call for call in order if call.complete]
            incomplete = [call for call in order if not call.complete]
            for call in incomplete:
                call.arguments_raw = "".join(call._fragments)
            result.incomplete_tool_calls = incomplete
        else:  # a fresh list each time, as when there are calls
            result.tool_calls, result.incomplete_tool_calls = [], []
        if self._usage is not None:
            result.usage = Usage.from_raw(self._usage, partial=not self._done or result.error is not None)
        return result


def service_tier(payload: Any, usage: dict[str, Any]) -> Optional[str]:
    """The service tier a usage-carrying payload names: in the usage object (Anthropic), on the payload (Chat
    Completions chunks), on its ``response`` (Responses) or as Bedrock's ``serviceTier`` (a string or
    ``{"type": ...}``); None when none does."""
    for holder in (usage, payload, payload.get("response") if isinstance(payload, dict) else None):
        if isinstance(holder, dict):
            tier = holder.get("service_tier", holder.get("serviceTier"))
            if isinstance(tier, dict):
                tier = tier.get("type")
            if type(tier) is str and tier:
                return tier
    return None


def _tier_payload(event: Unified) -> Any:
    """What :func:`service_tier` reads of a usage event's payload: its ``raw``, or where that is still undecoded
    (a fast path read only the members it needed, a Responses terminal event among them: the whole output again),
    only its tier members (``typed.service_tier_members``), so the payload is never built for them."""
    raw = event._raw
    members = _typed.service_tier_members
    if type(raw) is LazyPayload and members is not None and not raw.decoded:
        try:
            return members(raw.text)
        except _typed.DECODE_ERRORS:
            pass  # (a payload whose members it cannot tell apart: the full decode says)
    return event.raw


def _claimant(obj: dict[str, Any]) -> Optional[type[Normalizer]]:
    """The normaliser class that claims payload ``obj`` (the detectable providers, in the registry's order), as
    :func:`ssewire.normalizers.providers.meta_from` picks it; None when none does."""
    for entry in _DETECTABLE:
        if entry.cls.rules.claims(obj):
            return entry.cls
    return None


_DETECTABLE = tuple(entry for entry in ENTRIES if entry.detect)


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
        "_encoding",
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
        "_run_id",
        "_run_length",
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
        #: The SSE id of the last events delivered and how many delivered in a row carried it (the event that set
        #: it and those after it that inherit it), so that a reconnect drops as replays only that many of them.
        self._run_id: Optional[str] = None
        self._run_length = 0
        #: The body's first bytes until its first event (an empty bytes until a chunk without an event comes).
        self._head: Union[bytes, bytearray, None] = b""
        #: The body's first event (its data cut to _FIRST_KEPT characters: memory stays one event), to tell a
        #: wrong provider at the end; whether it was cut.
        self._first: Optional[SSEEvent] = None
        self._first_cut = False
        self._encoding = content_encoding  # as stated, for each connection (see reconnect)
        self._start_body()
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

    def _start_body(self) -> None:
        """A body's encoding state at its first byte: sniffed when none was stated (gzip and zlib start with bytes
        no text stream does), else the stated one's decoder (UnsupportedEncodingError for br, zstd ...)."""
        encoding = self._encoding
        #: True until the first bytes say whether a body of no stated encoding is compressed (no decoder before).
        self._sniff = encoding is None
        self._body: Optional[BodyDecoder] = None  # None: bytes as they come
        if encoding is not None:
            body = BodyDecoder(encoding)
            self._body = None if body.encoding == "identity" else body
        self._inflated = 0

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

    def stepped(self, chunk: Piece) -> bool:
        """Whether :meth:`events` reads ``chunk`` in steps (see :meth:`feed_steps`): a chunk over
        :data:`~ssewire._scan.chunks.WINDOW` bytes, a chunk of a compressed body (or of one that may be), a chunk
        that is not ``bytes``."""
        if type(chunk) is not bytes:
            return type(chunk) is not dict
        if len(chunk) > WINDOW or self._body is not None:
            return True
        return self._sniff and len(chunk) > 0 and chunk[0] in _COMPRESSED_FIRST

    def feed_steps(self, chunk: Piece) -> Iterator[list[Unified]]:
        """:meth:`feed` of ``chunk`` in steps, the events of each as a list (joined, they are what ``feed`` gives):
        windows of at most :data:`~ssewire._scan.chunks.WINDOW` bytes, and of a compressed body each 64 KiB it
        inflates to; so the events held at once are those of one step, never those of a whole chunk (a 100 MB
        stored body given as one chunk, or a small gzip chunk that inflates to a hundred times its size)."""
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            yield self.feed(chunk)  # (a dict: one decoded event; anything else: the typed error)
            return
        for window in windows(chunk):
            if self._body is not None or (self._sniff and self._sniffed(window)):
                for piece in self._inflate(window):
                    yield self._feed_bytes(piece)
            else:
                yield self.feed(window)

    def events(self, chunk: Piece) -> Iterable[Unified]:
        """The events of ``chunk``: :meth:`feed`'s list, or where :meth:`stepped` says so, an iterator over the
        events of :meth:`feed_steps` (memory: one step's events)."""
        if self.stepped(chunk):
            return _joined(self.feed_steps(chunk))
        return self.feed(chunk)

    def _feed_bytes(self, chunk: Chunk) -> list[Unified]:
        first = self._head is not None
        events = self._framed(chunk)
        if first and len(events) > 1 and self.normalizer.first_event_alone:  # the first event alone (see feed_into)
            return self._normalize(events[:1]) + self._normalize(events[1:])
        return self._normalize(events) if events else []

    def _normalize(self, events: list[SSEEvent]) -> list[Unified]:
        if events[-1].id is not None or self._run_id is not None:
            self._count_ids(events)
        out = _normalize_events(self._reader or self._settled(), events)
        if out:
            sequence = out[-1].sequence
            if sequence is not None:
                self._sequence = sequence  # the last sequence number delivered
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
                if events[0].id is not None or self._run_id is not None:
                    self._count_ids(events[:1])
                _normalize_batch(normalizer, events[:1], accumulator)
                if accumulator.events > before:
                    sequence = normalizer.last_sequence
                    if sequence is not None:
                        self._sequence = sequence
                events = events[1:]
        self._normalize_into(events, accumulator)

    def _settled(self) -> Normalizer:
        """The normaliser that reads the stream's events now: the one :meth:`Normalizer.settled` names (kept once
        known), else the named one."""
        normalizer = self.normalizer
        reader = self._reader = normalizer.settled()
        return normalizer if reader is None else reader

    def _normalize_into(self, events: list[SSEEvent], accumulator: Accumulator) -> None:
        if events[-1].id is not None or self._run_id is not None:
            self._count_ids(events)
        before = accumulator.events
        normalizer = self._reader or self._settled()
        if self._runs:  # the last chunk was deltas only: this one starts with the delta reader's run
            taken = _read_deltas(normalizer, events, accumulator)  # (a chunk of deltas ends here)
            if taken < len(events):
                self._runs = False
                _normalize_batch(normalizer, events[taken:] if taken else events, accumulator)
        else:
            deltas = accumulator.deltas
            _normalize_batch(normalizer, events, accumulator)
            self._runs = accumulator.deltas - deltas == len(events)
        if accumulator.events > before:
            sequence = normalizer.last_sequence
            if sequence is not None:
                self._sequence = sequence
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
                if not isinstance(chunk, (bytes, bytearray, memoryview)):  # (what the scanner only held so far)
                    raise chunk_type_error(chunk)
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

    def _count_ids(self, events: list[SSEEvent]) -> None:
        """``events`` (not empty) are being delivered: keep the stream's last SSE id, how many delivered events in a
        row carried it, and the recent ids that are not numbers (the replay filter compares number ids as numbers).
        Events with no id (none set on this connection yet) carry the stream's last one, as a browser's
        ``EventSource`` keeps it across reconnections."""
        last = events[-1].id
        if last is None:
            self._run_length += len(events)
            return
        index = len(events) - 1
        while index > 0 and events[index - 1].id == last:
            index -= 1
        if index == 0 and self._run_id == last:
            self._run_length += len(events)
        else:
            self._run_id = last
            self._run_length = len(events) - index
        ids = self._ids
        for position in range(index + 1):  # (the events of the last run carry its id: the first of them is enough)
            event_id = events[position].id
            if event_id and not is_number_id(event_id):
                key = id_key(event_id)  # (a long one by its digest: memory stays one event's)
                if ids is not None and ids[-1] == key:
                    continue
                if ids is None:
                    ids = self._ids = []
                ids.append(key)
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
        # The SSE id of the last event delivered, on this connection or an earlier one (not the scanner's: it also
        # moves on events a replay filter dropped, and on an id with no event); an empty id is none (WHATWG: no
        # Last-Event-ID header). Else the event id an Interactions stream's payloads carry (Gemini's event_id).
        last_event_id = self._run_id
        if last_event_id:
            return ResumeCursor(
                normalizer.provider, normalizer.response_id, self._sequence, last_event_id, self._run_length
            )
        payload_id = getattr(self._reader or normalizer, "last_event_id", None)  # (auto: the provider's normaliser)
        return ResumeCursor(
            normalizer.provider, normalizer.response_id, self._sequence, payload_id if payload_id else None
        )

    def reconnect(self) -> ResumeCursor:
        """Start reading a new connection for the same stream: a fresh scanner, the same normaliser (so open
        tool calls and usage carry on), and the events the new connection replays dropped. Returns the cursor
        to resume from."""
        cursor = self.cursor()
        self.scanner = make_scanner(self._framing, max_buffer=self._max_buffer)
        self._start_body()  # (a new body: compressed anew, its inflated size counted anew)
        self._replay = ReplayFilter(cursor, self._ids)
        if not self._replay.armed:
            self._replay = None
        self._replan()
        return cursor

    def ended(self) -> list[Unified]:
        """A connection's body ended without an error, before the stream's terminal event (see
        :func:`~ssewire.stream.iter_resumable`): an SSE event whose last line came but not the blank line after it
        is read now, as :meth:`close` would read it (a server that leaves that line out); an event cut inside a
        line is not (nor a compressed body's). The stream may go on in a new connection (:meth:`reconnect`)."""
        framing = self._framing if self._framing != "auto" else getattr(self.scanner, "framing", None)
        if framing != "sse" or self._body is not None:
            return []
        events = self._framed(b"\r\n")  # (a blank line: it ends a line the body ended, and dispatches)
        return self._normalize(events) if events else []

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
        if type(obj) is dict and obj.get("error") is None and obj.get("object") == "error" and "message" in obj:
            # the error object unwrapped, as vLLM's OpenAI server (and others modelled on it) answers: wrapped
            obj = {"error": {key: value for key, value in obj.items() if key != "object"}}
            text = _json.dumps(obj)
        if type(obj) is dict and obj.get("error") is not None:
            out = normalizer(SSEEvent("message", text))
            if normalizer.done:
                return out + normalizer.finish()
        elif type(obj) is dict and _streams_on(normalizer, obj):  # a stream cut after its first chunk: read, cut
            return normalizer(SSEEvent("message", text)) + normalizer.finish()
        out += normalizer.finish()  # what the normaliser still owes (auto: the error payloads it held)
        error = out[-1].error if out and out[-1].type == "error" else None
        cut = starts_a_stream(head, framing)  # the start of an event, cut before it ended
        message = f"{normalizer.provider}: the body holds no stream: it is {describe_body(head)}"
        if error is None:  # a normaliser that owes nothing at the end (a Realtime session) still read no stream
            if not cut:
                out.append(Unified("error", error={"type": "not_a_stream", "message": message}))
            else:  # (cut inside its first event: what came says nothing of what was sent, never a clean end)
                cut_message = f"{normalizer.provider}: the stream ended inside its first event"
                error = {"type": "stream_truncated", "message": cut_message, "incomplete_tool_calls": []}
                out.append(Unified("error", error=error))
        elif error.get("type") == "stream_truncated":
            if cut:
                error["message"] += ": it ended inside its first event"
            else:  # there was never a stream
                error["type"], error["message"] = "not_a_stream", message
        return out


def _streams_on(normalizer: Normalizer, obj: dict[str, Any]) -> bool:
    """Whether a body that is only ``obj`` is a stream cut after its first chunk, as the normaliser reading it says
    (``auto``: as any provider's rules say); another provider's chunk stays no stream of this one."""
    if normalizer.provider == "auto":
        return streams_on(obj)
    return normalizer.rules.streams_on(obj)


class UnifiedEvents:
    """The iterator :func:`~ssewire.iter_unified` returns (a generator underneath, made on first use; ``close()``
    ends it). :meth:`collect_into` reads the whole stream into an accumulator instead, a chunk at a time, and then
    no generator is made at all."""

    __slots__ = (
        "_chunks",
        "_content_encoding",
        "_events",
        "_framing",
        "_max_buffer",
        "_max_inflated",
        "_provider",
        "_started",
    )

    def __init__(
        self,
        chunks: Iterable[Piece],
        provider: Union[ProviderName, Normalizer],
        framing: FramingName,
        max_buffer: int,
        content_encoding: Optional[str] = None,
        max_inflated: int = DEFAULT_MAX_INFLATED,
    ) -> None:
        self._chunks = chunks
        self._provider = provider
        self._framing = framing
        self._max_buffer = max_buffer
        self._content_encoding = content_encoding
        self._max_inflated = max_inflated
        self._events: Optional[Generator[Unified, None, None]] = None  # made on first use
        self._started = False  # whether events were read (by the generator, or by collect_into)

    def _generator(self) -> Generator[Unified, None, None]:
        events = self._events
        if events is None:
            events = self._events = self._generate()
        return events

    def _decoder(self) -> StreamDecoder:
        chunks = self._chunks
        if isinstance(chunks, (bytes, bytearray, memoryview, str)):
            not_one_chunk(chunks, "iter_unified")
        return StreamDecoder(
            self._provider,
            self._framing,
            max_buffer=self._max_buffer,
            content_encoding=self._content_encoding,
            max_inflated=self._max_inflated,
        )

    def _generate(self) -> Generator[Unified, None, None]:
        self._started = True  # (the body runs at the first next(): until then collect_into may still read)
        decoder = self._decoder()
        for chunk in self._chunks:
            yield from decoder.events(chunk)
        yield from decoder.close()

    def __iter__(self) -> Iterator[Unified]:
        return self._generator()

    def __next__(self) -> Unified:
        return next(self._generator())

    def close(self) -> None:
        """Stop: no more events are read."""
        self._started = True
        self._generator().close()

    def collect_into(self, accumulator: Accumulator) -> bool:
        """Give every event of the stream to ``accumulator`` (as :meth:`StreamDecoder.feed_into` does, chunk by
        chunk) and return True; False, reading nothing, once events have been read from this iterator."""
        if self._started:
            return False
        self._started = True  # read here: the iterator is spent
        if self._events is None:
            self._events = _SPENT
        else:
            self._events.close()  # (made, never started: it reads nothing now)
        decoder = self._decoder()
        for chunk in self._chunks:
            decoder.feed_into(chunk, accumulator)
        decoder.close_into(accumulator)
        return True


# -- the normaliser's reading loop, beside the accumulator it feeds ---------------------------------------------------


def _joined(steps: Iterator[list[Unified]]) -> Iterator[Unified]:
    """The events of each step, in order."""
    for events in steps:
        yield from events


def normalize_events(normalizer: Normalizer, events: Sequence[SSEEvent]) -> list[Unified]:
    """:meth:`Normalizer.normalize <ssewire.normalizers.contract.Normalizer.normalize>` (its one home: the method
    calls this): the events of several framed events, by the delta reader while it reads the stream's deltas."""
    take, rule = normalizer._take, normalizer._delta_rule
    if take is None or rule is None or not normalizer.reads_deltas():
        return normalize_decoding(normalizer, events)
    still = normalizer.reads_deltas if normalizer.reading_can_stop else None
    return _reading(normalizer, events, normalizer, still, take, rule)


def delegated_normalize(normalizer: DelegatingNormalizer, events: Sequence[SSEEvent]) -> list[Unified]:
    """:meth:`DelegatingNormalizer.normalize <ssewire.normalizers.contract.DelegatingNormalizer.normalize>` (its one
    home: the method calls this, the reading loops here call it in its place): by the followed delegate's delta
    reader and typed fast path, routing every other event through ``normalizer``; before there is one, as
    :func:`normalize_events` reads."""
    delegate = normalizer._followed()
    if delegate is None:
        return normalize_events(normalizer, events)
    take, rule = delegate._take, delegate._delta_rule
    if take is None or rule is None or not delegate.reads_deltas():
        return normalize_decoding(normalizer, events)
    normalizer._reading_with = delegate
    still = normalizer._still_reading if normalizer.delegate_changes or delegate.reading_can_stop else None
    return _reading(normalizer, events, delegate, still, take, rule)


def delegated_deltas_into(normalizer: DelegatingNormalizer, events: list[SSEEvent], accumulator: Accumulator) -> int:
    """:meth:`DelegatingNormalizer.read_deltas_into
    <ssewire.normalizers.contract.DelegatingNormalizer.read_deltas_into>` (its one home): how many of ``events``, from
    the first, the followed delegate's delta reader (before there is one, ``normalizer``'s) took now."""
    delegate = normalizer._followed()
    reader = normalizer if delegate is None else delegate
    take, rule = reader._take, reader._delta_rule
    if take is None or rule is None or not reader.reads_deltas():
        return 0
    return read_run(reader, events, accumulator, take, rule)


def _normalize_events(normalizer: Normalizer, events: list[SSEEvent]) -> list[Unified]:
    """``normalizer.normalize(events)``: by :func:`normalize_events` here unless its class reads its events its own
    way (a delegating normaliser's own way is :func:`delegated_normalize`, here)."""
    if normalizer._reads_own:
        return normalize_events(normalizer, events)
    if normalizer._delegating:
        return delegated_normalize(normalizer, events)  # type: ignore[arg-type]
    out: list[Unified] = normalizer.normalize(events)
    return out


def normalize_into(normalizer: Normalizer, events: Sequence[SSEEvent], accumulator: Accumulator) -> None:
    """:meth:`Normalizer.normalize_into <ssewire.normalizers.contract.Normalizer.normalize_into>` (its one home: the
    method calls this): the events of ``events`` given to ``accumulator``."""
    normalizer._into = accumulator
    try:
        if normalizer._delegating:
            out = delegated_normalize(normalizer, events)  # type: ignore[arg-type]
        elif not normalizer._reads_own:
            out = normalizer.normalize(events)
        else:
            take, rule = normalizer._take, normalizer._delta_rule
            if take is not None and rule is not None and normalizer.reads_deltas():
                still = normalizer.reads_deltas if normalizer.reading_can_stop else None
                out = _reading(normalizer, events, normalizer, still, take, rule)
            else:  # (what normalize() does, without its call)
                out = normalize_decoding(normalizer, events)
    finally:
        normalizer._into = None
    if out:
        if len(out) == 1:
            accumulator.add(out[0])
        else:
            accumulator.take(out)


def _normalize_batch(normalizer: Normalizer, events: list[SSEEvent], accumulator: Accumulator) -> None:
    """``normalizer.normalize_into(events, accumulator)``: by :func:`normalize_into` here unless its class reads
    into an accumulator its own way."""
    if normalizer._own_into:
        normalize_into(normalizer, events, accumulator)
    else:
        normalizer.normalize_into(events, accumulator)


def read_deltas_into(normalizer: Normalizer, events: list[SSEEvent], accumulator: Accumulator) -> int:
    """:meth:`Normalizer.read_deltas_into <ssewire.normalizers.contract.Normalizer.read_deltas_into>` (its one home):
    how many of ``events``, from the first, the normaliser's delta reader took now, into ``accumulator``."""
    if normalizer._reads_own:
        take, rule = normalizer._take, normalizer._delta_rule
        if take is not None and rule is not None and normalizer.reads_deltas():
            return read_run(normalizer, events, accumulator, take, rule)
    return 0


def read_run(
    reader: Normalizer, events: list[SSEEvent], accumulator: Accumulator, take: Any = None, rule: Any = None
) -> int:
    """How many of ``events``, from the first, ``reader``'s delta reader took, given to ``accumulator`` (the events
    it made, the text of the text deltas in its sink). ``take`` and ``rule``: the reader's ``_take`` and
    ``_delta_rule``, where the caller read them already (None: read here)."""
    if take is None:
        take, rule = reader._take, reader._delta_rule
    assert take is not None
    sink = accumulator._sink or accumulator.text_sink()
    out: list[Unified] = []
    notes = reader._notes
    taken: int = take(events, 0, rule, out, reader._reader_calls, notes, sink)
    if taken:
        if notes is not None:
            reader.absorb()
        accumulator.take_run(out, sink)
    return taken


def _read_deltas(normalizer: Normalizer, events: list[SSEEvent], accumulator: Accumulator) -> int:
    """``normalizer.read_deltas_into(events, accumulator)``: by :func:`read_deltas_into` here unless its class reads
    deltas its own way."""
    if normalizer._own_deltas:
        return read_deltas_into(normalizer, events, accumulator)
    if normalizer._delegating:
        return delegated_deltas_into(normalizer, events, accumulator)  # type: ignore[arg-type]
    taken: int = normalizer.read_deltas_into(events, accumulator)
    return taken


def decode_event(normalizer: Normalizer, ev: SSEEvent) -> list[Unified]:
    """``normalizer.decoded(ev)`` where its class does not override it, its common path here (compiled): a payload
    of fewer than ``LARGE`` characters that the fast decoder reads as an object goes to ``payload``, ``[DONE]`` to
    ``sentinel``; any other event (held as UTF-8, large, no JSON, no object) to ``decoded`` itself."""
    if not normalizer._own_decoded or type(ev) is Utf8Event:
        return normalizer.decoded(ev)
    data = ev.data
    if len(data) >= _LARGE:
        return normalizer.decoded(ev)
    if data == "[DONE]":
        return normalizer.sentinel(ev)
    try:
        obj = loads_first(data)
    except FIRST_ERRORS:
        return normalizer.decoded(ev)
    if type(obj) is not dict:
        return normalizer.decoded(ev)
    if normalizer.reads_text:
        return payload_with_text(normalizer, obj, ev.event, data)
    return normalizer.payload(obj, ev.event)


def normalize_decoding(normalizer: Normalizer, events: Sequence[SSEEvent]) -> list[Unified]:
    """:meth:`Normalizer._normalize_decoding <ssewire.normalizers.contract.Normalizer._normalize_decoding>` (its one
    home)."""
    out: list[Unified] = []
    fast = normalizer.fast
    if fast is None:
        for ev in events:
            out += decode_event(normalizer, ev)
        return out
    for ev in events:
        got = fast(ev)
        out += decode_event(normalizer, ev) if got is None else got
    return out


def normalize_reading(
    normalizer: Normalizer,
    events: Sequence[SSEEvent],
    reader: Normalizer,
    still_reading: Optional[Callable[[], bool]] = None,
) -> list[Unified]:
    """:meth:`Normalizer.normalize_reading <ssewire.normalizers.contract.Normalizer.normalize_reading>` (its one
    home)."""
    return _reading(normalizer, events, reader, still_reading, reader._take, reader._delta_rule)


def _reading(
    normalizer: Normalizer,
    events: Sequence[SSEEvent],
    reader: Normalizer,
    still_reading: Optional[Callable[[], bool]],
    take: Any,
    rule: Any,
) -> list[Unified]:
    """:func:`normalize_reading` with the reader's ``_take`` and ``_delta_rule`` as its callers read them."""
    calls, notes = reader._reader_calls, reader._notes
    assert take is not None
    batch = events if type(events) is list else list(events)
    out: list[Unified] = []
    into: Optional[Accumulator] = normalizer._into
    sink = None if into is None else into._sink or into.text_sink()  # (None until it knows the id and model)
    index = take(batch, 0, rule, out, calls, notes, sink)
    end = len(batch)
    if index:  # (a chunk of deltas only, the bulk of a stream, ends here)
        if notes is not None:
            reader.absorb()
        if into is not None:
            into.take_run(out, sink)
            out = []
        if index >= end:
            return out
    fast: Any = _UNASKED  # the typed fast path, asked for at the first event it may read
    fast_from = 0 if reader.fast_beyond_rule else _READER_MAX_CHARS
    at_done = reader.stops_reading_at_done  # (still_reading asked only after an event that made a done, or none)
    while True:
        if index >= end:
            return out
        event = batch[index]
        index += 1
        if fast_from and type(event) is not Utf8Event and len(event.data) < fast_from:
            got = None  # (declined by the reader: the full decode; the fast path reads a held event's UTF-8)
        else:
            if fast is _UNASKED:
                fast = normalizer.fast
            got = None if fast is None else fast(event)
        made = decode_event(normalizer, event) if got is None else got
        if into is None:
            out += made
        elif made:
            if len(made) == 1:  # (most decoded events make one)
                into.add(made[0])
            else:
                into.take(made)
        if (
            still_reading is not None and (not at_done or not made or made[-1].type == "done") and not still_reading()
        ):  # the rest by what reads the stream now
            if index < end:
                out += normalizer.normalize(batch[index:])
            return out
        if index >= end:
            return out
        after = take(batch, index, rule, out, calls, notes, sink)
        if after > index:
            index = after
            if notes is not None:
                reader.absorb()
            if into is not None:
                into.take_run(out, sink)
                out = []


def _spent() -> Generator[Unified, None, None]:
    yield from ()


_SPENT = _spent()  # the generator of an iterator collect_into() read: closed, it yields nothing
_SPENT.close()


def collect(events: Iterable[Unified]) -> StreamResult:
    """Consume ``events`` and return the finished :class:`StreamResult`."""
    accumulator = Accumulator()
    if type(events) is UnifiedEvents:  # iter_unified(): the events of each chunk go straight in
        if events.collect_into(accumulator):
            return accumulator.result
    else:
        into = getattr(events, "collect_into", None)
        if into is not None and into(accumulator):
            return accumulator.result
    accumulator.take(events)
    return accumulator.result


# -- the gateway's tap (public home: ssewire.tap) ----------------------------------------------------------------------

_MAX_GAPS = 65536  # gaps kept for percentiles; beyond that every other one is dropped
#: A tap parses the chunks it noted once it holds this many, or this many bytes of them (see the module docstring).
PARSE_EVERY = 16
PARSE_FROM = 8 * 1024


def _percentile(ordered: list[float], q: float) -> Optional[float]:
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class TapMetrics:
    """What a tapped stream did. Times are seconds from the tap's start (its creation, or ``started=``: a reading of
    its clock taken earlier, such as when the request was sent), each None until it
    happened: the first byte, the first event (of any kind), the first content (the first text, reasoning or
    tool-call delta: keep-alive comments, pings, ``response.created``, role-only chunks and other ``raw`` events
    are not content), the terminal event, the stream's end however it ended (its terminal event, else the close of a
    stream that failed or was cut). ``gaps`` are between chunks that carried content."""

    __slots__ = (
        "bytes",
        "chunks",
        "done_at",
        "ended_at",
        "events",
        "first_byte_at",
        "first_event_at",
        "first_token_at",
        "gaps",
        "last_delta_at",
    )

    def __init__(self) -> None:
        self.bytes = 0
        self.chunks = 0
        self.events = 0
        self.first_byte_at: Optional[float] = None
        self.first_event_at: Optional[float] = None
        self.first_token_at: Optional[float] = None
        self.last_delta_at: Optional[float] = None
        self.done_at: Optional[float] = None
        self.ended_at: Optional[float] = None
        self.gaps: list[float] = []

    @property
    def time_to_first_byte(self) -> Optional[float]:
        """Seconds until the first byte of the body."""
        return self.first_byte_at

    @property
    def time_to_first_event(self) -> Optional[float]:
        """Seconds until the first event of any kind (a ping or ``response.created`` counts)."""
        return self.first_event_at

    @property
    def time_to_first_content(self) -> Optional[float]:
        """Seconds until the first text, reasoning or tool-call delta: what users wait for."""
        return self.first_token_at

    @property
    def time_to_first_token(self) -> Optional[float]:
        """:attr:`time_to_first_content` (its older name)."""
        return self.first_token_at

    @property
    def time_to_done(self) -> Optional[float]:
        """Seconds until the stream's terminal event (None if it never came)."""
        return self.done_at

    @property
    def time_to_end(self) -> Optional[float]:
        """Seconds until the stream ended: its terminal event, else (a stream that failed or was cut) the tap's
        close; None before either. A failed operation's duration."""
        return self.done_at if self.done_at is not None else self.ended_at

    def gap_stats(self) -> dict[str, Optional[float]]:
        """``max``, ``p50`` and ``p95`` of the gaps between deltas (None without two delta chunks)."""
        ordered = sorted(self.gaps)
        return {
            "max": ordered[-1] if ordered else None,
            "p50": _percentile(ordered, 0.50),
            "p95": _percentile(ordered, 0.95),
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything as a JSON-ready dict."""
        return {
            "bytes": self.bytes,
            "chunks": self.chunks,
            "events": self.events,
            "time_to_first_byte": self.first_byte_at,
            "time_to_first_event": self.first_event_at,
            "time_to_first_content": self.first_token_at,
            "time_to_first_token": self.first_token_at,
            "time_to_done": self.done_at,
            "time_to_end": self.time_to_end,
            "gaps": self.gap_stats(),
        }


class StreamTap:
    """Watches one stream that is forwarded unchanged (see the module docstring)."""

    __slots__ = (
        "_accumulator",
        "_clock",
        "_decoder",
        "_failure",
        "_final",
        "_metrics",
        "_noted",
        "_noted_bytes",
        "_started",
        "closed",
    )

    def __init__(
        self,
        provider: Union[ProviderName, Normalizer] = "auto",
        framing: FramingName = "auto",
        *,
        max_buffer: int = DEFAULT_MAX_BUFFER,
        clock: Callable[[], float] = time.monotonic,
        content_encoding: Optional[str] = None,
        started: Optional[float] = None,
        max_inflated: int = DEFAULT_MAX_INFLATED,
    ) -> None:
        self._accumulator = Accumulator()
        self._clock = clock
        self._started = clock() if started is None else started
        self._metrics = TapMetrics()
        self._failure: Optional[Exception] = None  # why parsing stopped (the bytes kept flowing)
        self._final: Optional[StreamResult] = None  # the result, once closed (nothing changes it after close)
        self._noted: list[tuple[float, Chunk]] = []  # chunks not parsed yet, with the time each came
        self._noted_bytes = 0
        self.closed = False
        self._decoder: Optional[StreamDecoder] = None
        try:
            self._decoder = StreamDecoder(
                provider, framing, max_buffer=max_buffer, content_encoding=content_encoding, max_inflated=max_inflated
            )
        except UnsupportedEncodingError as exc:  # an encoding it cannot read: forwarding goes on, parsing does not
            self._fail(exc)

    def feed(self, chunk: Chunk) -> None:
        """Observe one upstream chunk. Returns nothing; the chunk is never modified (see the module docstring for
        when it is parsed)."""
        if self.closed:
            raise SSEwireError("StreamTap.feed() called after close()")
        size = len(chunk) if type(chunk) is not memoryview else chunk.nbytes  # (a memoryview's items may be wider)
        if self._decoder is None:  # (parsing stopped: only the bytes are counted)
            metrics = self._metrics
            metrics.bytes += size
            metrics.chunks += 1
            return
        noted = self._noted
        noted.append((self._clock() - self._started, chunk))  # (counted in the metrics when parsed)
        size = self._noted_bytes = self._noted_bytes + size
        # (a bytearray or memoryview is parsed now: its owner may reuse the buffer)
        if len(noted) >= PARSE_EVERY or size >= PARSE_FROM or type(chunk) is not bytes:
            self._parse_noted()

    def _parse_noted(self) -> None:
        """Parse the chunks noted, in order, each as if it were parsed when it came: its events into the result,
        their times (the chunk's) into the metrics. Parsing stops at a chunk that fails."""
        noted = self._noted
        self._noted = []
        decoder = self._decoder
        accumulator = self._accumulator
        metrics = self._metrics  # (each assigned alone: compiled, each keeps its type, and its calls are direct)
        metrics.bytes += self._noted_bytes
        metrics.chunks += len(noted)
        self._noted_bytes = 0
        if noted and metrics.first_byte_at is None:
            metrics.first_byte_at = noted[0][0]
        if decoder is None:
            return
        for now, chunk in noted:
            events, deltas = accumulator.events, accumulator.deltas
            try:
                decoder.feed_into(chunk, accumulator)  # (called as such: compiled, a direct call)
            except Exception as exc:  # nothing may reach the forwarding path
                self._fail(exc)
                self._observed(events, deltas, now)  # (the error event it recorded)
                return
            if accumulator.events > events:  # (a chunk that ends no event changes no metric but the bytes)
                if accumulator.deltas == deltas:
                    if metrics.first_event_at is not None and metrics.done_at is None:
                        metrics.events += accumulator.events - events  # a chunk of no content: only the count...
                        if accumulator.done:
                            metrics.done_at = now  # ... unless it ended the stream
                        continue
                else:
                    last = metrics.last_delta_at
                    if last is not None and not accumulator.done and metrics.done_at is None:
                        # the bulk of a stream, a chunk of deltas after the first: what _observed does with it
                        metrics.events += accumulator.events - events
                        gaps = metrics.gaps
                        gaps.append(now - last)
                        if len(gaps) >= _MAX_GAPS:
                            del gaps[::2]
                        metrics.last_delta_at = now
                        continue
                self._observed(events, deltas, now)

    @property
    def metrics(self) -> TapMetrics:
        """The stream's :class:`TapMetrics` so far (every chunk fed parsed first)."""
        if self._noted:
            self._parse_noted()
        return self._metrics

    @property
    def failure(self) -> Optional[Exception]:
        """Why parsing stopped (the bytes kept flowing), or None (every chunk fed parsed first)."""
        if self._noted:
            self._parse_noted()
        return self._failure

    def _observed(self, events: int, deltas: int, now: float) -> None:
        """The accumulator took events since it had taken ``events`` events, ``deltas`` of them deltas (deltas and
        the terminal event come only with events)."""
        metrics = self._metrics
        accumulator = self._accumulator
        if accumulator.events > events and metrics.first_event_at is None:
            metrics.first_event_at = now
        metrics.events += accumulator.events - events
        if accumulator.deltas > deltas:
            if metrics.first_token_at is None:
                metrics.first_token_at = now
            elif metrics.last_delta_at is not None:
                gaps = metrics.gaps
                gaps.append(now - metrics.last_delta_at)
                if len(gaps) >= _MAX_GAPS:
                    del gaps[::2]
            metrics.last_delta_at = now
        if metrics.done_at is None and accumulator.done:
            metrics.done_at = now

    def _fail(self, exc: Exception) -> None:
        """Stop parsing: record why (``failure`` and ``result.error``), with the calls left open as incomplete."""
        decoder = self._decoder
        self._failure = exc
        self._decoder = None
        incomplete = decoder.normalizer.incomplete_tool_calls() if decoder is not None else []
        error = {
            "type": error_type(exc),
            "message": f"the tap stopped parsing: {type(exc).__name__}: {exc}",
            "incomplete_tool_calls": incomplete,
        }
        self._accumulator.add(Unified("error", error=error))

    def close(self) -> StreamResult:
        """End of the upstream stream: finish parsing (a stream cut short records ``stream_truncated``)."""
        if not self.closed:
            if self._noted:
                self._parse_noted()
            self.closed = True
            decoder = self._decoder
            if decoder is not None:
                accumulator = self._accumulator
                events, deltas = accumulator.events, accumulator.deltas
                try:
                    decoder.close_into(accumulator)
                except Exception as exc:  # likewise
                    self._fail(exc)
                self._observed(events, deltas, self._clock() - self._started)
            metrics = self._metrics
            if metrics.ended_at is None:
                metrics.ended_at = self._clock() - self._started
            self._final = self._accumulator.result
        return self.result

    @property
    def result(self) -> StreamResult:
        """The stream's result so far (every chunk fed parsed first); once closed, the one result made then (a
        gateway reads it after closing the tap: its text is not joined again)."""
        final = self._final
        if final is not None:
            return final
        if self._noted:
            self._parse_noted()
        return self._accumulator.result
