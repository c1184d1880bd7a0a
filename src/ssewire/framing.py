"""Framings: how a byte stream is cut into events. One registry entry per framing; adding a framing is one scanner
(compiled and twin) and one entry in :data:`FRAMINGS_BY_NAME`.

Every scanner follows :class:`Scanner`: ``feed(chunk)`` returns the events the chunk completes, ``close()`` the
rest at the end of the stream; memory is bounded by one event (``max_buffer``). An entry (:class:`Framing`) names
the framing, builds its scanner, lists the ``Content-Type`` media types that announce it, and says whether the
first bytes of a body are its own (``recognise``). :func:`make_scanner`, :class:`AutoScanner`,
:func:`framing_for_content_type` (the HTTP adapters) and the command line's ``--framing`` all come from here: this
module is their one home (no other module re-exports them).

A framing has one name (the one :data:`FRAMINGS` lists and a scanner's ``framing`` reports); wherever a name is
taken, ``-`` and ``_`` are the same letter (``json-array`` is ``json_array``, ``aws_eventstream`` is
``aws-eventstream``): :func:`framing_name` gives the one spelling, and is the only place that normalises it.
"""

from __future__ import annotations

import zlib
from typing import Callable, NamedTuple, Optional, Protocol, Union

from ._scan import EventStreamParser, JSONArrayStreamParser, NDJSONParser, SSEEvent, SSEParser
from ._scan.messages import start_overflow
from .errors import SSEBufferOverflowError, UnknownFramingError, chunk_type_error, unknown_name
from .limits import BOM, DEFAULT_MAX_BUFFER
from .names import FramingName

__all__ = [
    "FRAMINGS",
    "FRAMINGS_BY_NAME",
    "AutoScanner",
    "Framing",
    "Scanner",
    "framing_for_content_type",
    "framing_name",
    "framing_scanner",
    "make_scanner",
    "scanner_named",
]

Chunk = Union[bytes, bytearray, memoryview]
_WHITESPACE = b" \t\r\n"


def _skip_whitespace(data: bytes) -> bytes:
    """``data`` from its first byte that is not a space, tab, CR or LF (``b""`` when there is none)."""
    rest = data.lstrip()  # ASCII whitespace at C speed; it takes VT and FF too, which are content here
    skipped = len(data) - len(rest)
    if skipped and (data.find(b"\v", 0, skipped) >= 0 or data.find(b"\f", 0, skipped) >= 0):
        return data.lstrip(_WHITESPACE)
    return rest


#: While the head is shorter than this, the recognisers are asked again on every chunk.
_SHORT_HEAD = 64


class Scanner(Protocol):
    """What every framing's scanner does (both implementations, and :class:`AutoScanner`)."""

    def feed(self, data: Chunk) -> list[SSEEvent]:
        """The events ``data`` completes."""
        ...

    def close(self) -> list[SSEEvent]:
        """End of stream: the events still owed (or a typed error for a body cut short)."""
        ...


class Framing(NamedTuple):
    """One framing: ``name``; ``scanner(max_buffer)`` builds its scanner; ``content_types``: the media types that
    announce it; ``recognise(head)``: given the first bytes that are not whitespace (after a BOM), True when they
    open this framing, False when they do not (for good: more bytes must not change it), None when more bytes are
    needed to tell. :class:`AutoScanner` asks again on every chunk while the head is shorter than 64 bytes, then
    only on a chunk where a line's content starts or ends (not on whitespace alone): a verdict that needs more
    than 64 bytes must follow from the first lines (so detection stays linear in the size of the head)."""

    name: str
    scanner: Callable[[int], Scanner]
    content_types: tuple[str, ...]
    recognise: Callable[[bytes], Optional[bool]]


def _json_array(head: bytes) -> Optional[bool]:
    return head[:1] == b"["


def _json_lines(head: bytes) -> Optional[bool]:
    """A line that opens with a brace (an SSE line starts with a field name or a colon), then another such line. One
    JSON object alone is a response that was not streamed (or an error body): not taken as a stream of one line."""
    if head[:1] != b"{":
        return False
    ends = [at for at in (head.find(b"\n"), head.find(b"\r")) if at >= 0]
    if not ends:
        return None
    rest = head[min(ends) + 1 :].lstrip(_WHITESPACE)
    return None if not rest else rest[:1] == b"{"


def _event_stream_prelude(head: bytes) -> Optional[bool]:
    """A binary prelude: a total length below 32 MiB (so a first byte of 0 or 1, which no text framing starts
    with), then the headers length and the CRC32 of those eight bytes."""
    if head[0] > 1:
        return False
    if len(head) < 12:
        return None
    return zlib.crc32(head[:8]) == int.from_bytes(head[8:12], "big")


def _anything(head: bytes) -> Optional[bool]:
    return True


#: Every framing, in the order auto-detection asks them (the last, SSE, takes whatever no other recognises).
FRAMINGS_BY_NAME: dict[str, Framing] = {
    framing.name: framing
    for framing in (
        Framing("aws-eventstream", EventStreamParser, ("application/vnd.amazon.eventstream",), _event_stream_prelude),
        Framing("json_array", JSONArrayStreamParser, (), _json_array),
        Framing(
            "ndjson",
            NDJSONParser,
            ("application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines"),
            _json_lines,
        ),
        Framing("sse", SSEParser, ("text/event-stream",), _anything),
    )
}


#: The registry and :func:`_remake_verdicts` of it (every first byte but ``{``, 0 and 1 decides: SSE, a JSON array);
#: annotated before the function that rebinds it (PyPy's rule).
_first_byte_verdicts: tuple[dict[str, Framing], tuple[Optional[str], ...]] = ({}, ())


def _recognised(head: bytes) -> Optional[str]:
    """The framing the registered recognisers, asked in order, say ``head`` opens (None: more bytes needed)."""
    for framing in FRAMINGS_BY_NAME.values():
        verdict = framing.recognise(head)
        if verdict is None:
            return None
        if verdict:
            return framing.name
    return _DEFAULT


def _remake_verdicts() -> tuple[Optional[str], ...]:
    """For each first byte, the framing a head that starts with it opens, where that byte alone decides it (None
    where more bytes may): a recogniser's True or False is final (see :class:`Framing`), so the verdicts on the
    one-byte head hold for every longer one. Kept with the registry they were made from (then, one item per
    framing: a registry grown in place is told by its length)."""
    global _first_byte_verdicts
    verdicts = (*(_recognised(bytes((first,))) for first in range(256)), *FRAMINGS_BY_NAME)
    _first_byte_verdicts = (FRAMINGS_BY_NAME, verdicts)
    return verdicts


#: Every name ``framing=`` takes: ``auto`` (recognised from the first bytes), then each registered framing.
FRAMINGS: tuple[str, ...] = ("auto", *FRAMINGS_BY_NAME)
_DEFAULT: FramingName = "sse"
_remake_verdicts()


#: Media types that say "JSON" without saying how it is streamed (Gemini's array; Ollama's NDJSON from some hosts):
#: the first bytes tell.
_SOME_JSON = ("application/json",)


def framing_for_content_type(content_type: Optional[str]) -> FramingName:
    """The framing a ``Content-Type`` announces (``application/x-ndjson``: NDJSON; ``application/json``: ``auto``,
    a streamed array or JSON lines, told apart by the first bytes); ``sse`` for any other or none."""
    if content_type:
        media = content_type.partition(";")[0].strip().lower()
        if media in _SOME_JSON:
            return "auto"
        for framing in FRAMINGS_BY_NAME.values():
            if media in framing.content_types:
                return framing.name  # type: ignore[return-value]
    return _DEFAULT


class AutoScanner:
    """Recognises the framing from the first bytes that are not whitespace (after a BOM), asking each registered
    framing in order, then behaves as that framing's scanner, which is then given every byte held so far, as they
    came (so the events and errors are those of that framing named). Until then the start of the body is held,
    bounded by ``max_buffer`` (:class:`~ssewire.SSEBufferOverflowError` past it, leading whitespace included), and read
    in time linear in its size: each chunk's bytes are looked at once to find where the head starts and whether a
    line's content started or ended; the recognisers are asked again only when a chunk does one of those (or
    while the head is under :data:`_SHORT_HEAD` bytes), see :class:`Framing`. An error is kept: every later call
    raises it again."""

    __slots__ = ("_body", "_error", "_head", "_held", "_in_line", "_max_buffer", "framing", "inner")

    def __init__(self, max_buffer: int = DEFAULT_MAX_BUFFER) -> None:
        self._max_buffer = max_buffer
        self._held = bytearray()  # every byte so far, while the framing is undecided
        self._body = -1  # where the body starts in _held: 3 past a BOM, else 0 (-1: the BOM check needs more)
        self._head = -1  # where the head (the first byte that is not whitespace) is in _held (-1: not yet)
        self._in_line = True  # the last line of the head has content (not only whitespace) so far
        self._error: Optional[SSEBufferOverflowError] = None
        self.inner: Optional[Scanner] = None
        #: The framing recognised (None until it is).
        self.framing: Optional[str] = None

    @property
    def last_event_id(self) -> Optional[str]:
        """The SSE scanner's last event ID (None for other framings or before the framing is known)."""
        return getattr(self.inner, "last_event_id", None)

    def feed(self, data: Chunk) -> list[SSEEvent]:
        """Scan one chunk (see the chosen scanner's ``feed``)."""
        if self.inner is not None:
            return self.inner.feed(data)
        if self._error is not None:
            raise self._error
        if isinstance(data, (str, int)):
            raise chunk_type_error(data)
        try:
            piece = data if type(data) is bytes else bytes(data)
        except TypeError:
            raise chunk_type_error(data) from None
        if self._body < 0 and not self._held:  # the body's first bytes: most often they say it at once
            name = self._first_verdict(piece)
            if name is not None:
                return self._start(name, piece)
        held = self._held
        held += piece
        if self._new_bytes(piece):
            name = self._recognise(bytes(held[self._head :]))
            if name is not None:
                return self._start(name)
        if len(held) > self._max_buffer:
            self._error = start_overflow(self._max_buffer)
            self._held = bytearray()
            raise self._error
        return []

    def _first_verdict(self, piece: bytes) -> Optional[str]:
        """The framing the body's first bytes ``piece`` show (the recognisers are asked on them as :meth:`_new_bytes`
        would: always, once the head has started); None to take the general path (a BOM or whitespace only, or
        more bytes needed)."""
        if len(piece) < 3 and BOM.startswith(piece):
            return None
        head = _skip_whitespace(piece[3:] if piece.startswith(BOM) else piece)
        return self._recognise(head) if head else None

    def _new_bytes(self, piece: bytes) -> bool:
        """Take note of ``piece`` (just added to ``_held``): where the body and the head start, whether the head's
        last line has content. True when the recognisers must be asked (again). Looks at ``piece`` only."""
        held = self._held
        if self._body < 0:
            if len(held) < 3 and BOM.startswith(held):
                return False
            self._body = 3 if held.startswith(BOM) else 0
            piece = bytes(held[self._body :])  # the body so far (at most 3 bytes more than piece)
        if self._head < 0:
            head = _skip_whitespace(piece)
            if not head:
                return False
            self._head = len(held) - len(head)
            piece = head
            self._in_line = False  # the head's first byte starts a line's content (below)
        ask = len(held) - self._head <= _SHORT_HEAD
        end = max(piece.rfind(b"\n"), piece.rfind(b"\r"))
        if self._in_line:
            ask = ask or end >= 0  # a line with content ended
        else:
            ask = ask or bool(_skip_whitespace(piece))  # a line's content started
        if end >= 0:
            self._in_line = bool(_skip_whitespace(piece[end + 1 :]))
        elif not self._in_line:
            self._in_line = bool(_skip_whitespace(piece))
        return ask

    @staticmethod
    def _recognise(head: bytes) -> Optional[str]:
        """The framing ``head`` (the body so far from its first byte that is not whitespace) opens, or None when
        more bytes are needed: told by its first byte where that alone decides (see :func:`_by_first_byte`)."""
        registry, verdicts = _first_byte_verdicts
        if registry is not FRAMINGS_BY_NAME or len(verdicts) != 256 + len(registry):  # (a registry replaced, grown)
            verdicts = _remake_verdicts()
        name = verdicts[head[0]]
        return name if name is not None else _recognised(head)

    def _start(self, name: str, first: Optional[bytes] = None) -> list[SSEEvent]:
        """Build ``name``'s scanner and give it what was held (``first``: the body's first bytes, held by none)."""
        self.framing = name
        self.inner = FRAMINGS_BY_NAME[name].scanner(self._max_buffer)
        if first is not None:
            return self.inner.feed(first)
        held, self._held = self._held, bytearray()
        return self.inner.feed(held) if held else []

    def close(self) -> list[SSEEvent]:
        """End of stream (a body that never showed its framing is read as SSE)."""
        events: list[SSEEvent] = []
        if self.inner is None:
            if self._error is not None:
                raise self._error
            events = self._start(_DEFAULT)  # the events of the bytes held so far, then the end's
        assert self.inner is not None
        return events + self.inner.close() if events else self.inner.close()


def framing_scanner(scanner: Scanner) -> Scanner:
    """The scanner that frames the body now: an :class:`AutoScanner`'s scanner once it recognised the framing (its
    ``feed`` is the auto scanner's from then on), else ``scanner`` itself."""
    if type(scanner) is AutoScanner and scanner.inner is not None:
        return scanner.inner
    return scanner


def framing_name(name: object) -> FramingName:
    """The one spelling of the framing ``name`` names: ``auto`` or a registered name, with ``-`` and ``_`` taken as
    the same (``"json-array"`` gives ``"json_array"``); :class:`~ssewire.errors.UnknownFramingError` (a
    ``ValueError``) for anything else."""
    if isinstance(name, str):
        if name == "auto" or name in FRAMINGS_BY_NAME:
            return name  # type: ignore[return-value]
        folded = name.replace("_", "-")
        for known in FRAMINGS_BY_NAME:
            if known.replace("_", "-") == folded:
                return known  # type: ignore[return-value]
    raise UnknownFramingError(unknown_name("framing", name, FRAMINGS))


def make_scanner(framing: FramingName = "sse", *, max_buffer: int = DEFAULT_MAX_BUFFER) -> Scanner:
    """A scanner for ``framing`` (a name of :data:`FRAMINGS`, spelt either way: see :func:`framing_name`;
    ``"auto"`` recognises it from the first bytes); :class:`~ssewire.errors.UnknownFramingError` (a
    ``ValueError``) for anything else."""
    return scanner_named(framing_name(framing), max_buffer=max_buffer)


def scanner_named(name: FramingName, *, max_buffer: int) -> Scanner:
    """A scanner for ``name`` as :func:`framing_name` spells it (``auto`` or a registered name)."""
    framing = FRAMINGS_BY_NAME.get(name)
    return AutoScanner(max_buffer) if framing is None else framing.scanner(max_buffer)
