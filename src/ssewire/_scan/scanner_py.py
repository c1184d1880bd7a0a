"""Pure-Python scanners: the reference twin of the compiled ``_scanner_c`` (identical behaviour, event for event).

``SSEParser`` frames Server-Sent Events (WHATWG HTML 9.2.6); ``JSONArrayStreamParser`` cuts Gemini's streamed
JSON array into its top-level objects. Both take bytes-like chunks of any size and split, return the events each
chunk completes, and keep at most one pending event in memory (``max_buffer`` bounds it; larger raises
:class:`~ssewire.SSEBufferOverflow`). Large chunks are processed in windows, so a 100 MB chunk never gets copied
whole. An error found after some events were completed in the same call is raised by the next call instead, so
the good events are not lost; a parser that raised stays failed.
"""

from __future__ import annotations

import json
import re
import struct
import zlib
from operator import attrgetter, methodcaller
from typing import Any, Callable, ClassVar, Optional, Sequence, Union

from ..errors import SSEwireError
from ..limits import BOM as _BOM
from ..limits import DEFAULT_MAX_BUFFER
from . import messages
from .chunks import windows
from .utf8_event import LARGE_DATA, held_utf8, utf8_event_type

__all__ = [
    "DEFAULT_MAX_BUFFER",
    "EventStreamMessage",
    "EventStreamParser",
    "JSONArrayStreamParser",
    "NDJSONParser",
    "SSEEvent",
    "SSEParser",
    "Utf8Event",
]

BytesLike = Union[bytes, bytearray, memoryview]

#: The vector instructions this implementation's scanners use: none (the compiled twin says "sse2"/"avx2").
SIMD = "none"


def _select_simd(allow_avx2: bool) -> str:
    """As the compiled module's (tests switch its AVX2 loops off); the twin has no vector loops."""
    return SIMD


#: A longer event name is decoded each time, never kept (memory: one event's).
_NAME_CACHED_UP_TO = 128


class SSEEvent:
    """One dispatched Server-Sent Event (or one JSON-array element, with ``event=None``).

    ``event`` is the event type (``"message"`` when the block set none), ``data`` the data lines joined by
    ``"\\n"``, ``id`` the last event ID at dispatch (``None`` until the stream set one) and ``retry`` the
    reconnection time in milliseconds last set by the stream (``None`` until set).
    """

    __slots__ = ("data", "event", "id", "retry")

    def __init__(
        self,
        event: Optional[str] = "message",
        data: str = "",
        id: Optional[str] = None,  # noqa: A002 - the SSE field is called id
        retry: Optional[int] = None,
    ) -> None:
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry

    def json(self) -> Any:
        """``data`` decoded as JSON, or ``None`` when it is not valid JSON (e.g. the ``[DONE]`` sentinel)."""
        try:
            return json.loads(self.data)
        except (ValueError, RecursionError):
            return None

    def _key(self) -> tuple[Optional[str], str, Optional[str], Optional[int]]:
        return (self.event, self.data, self.id, self.retry)

    # Equality and hash of this class and of EventStreamMessage, in one place: a class's _compared gives what == and
    # != compare, taken from self and from the other object alike (AttributeError: NotImplemented), its _hashed what
    # the hash is of.
    _compared: ClassVar[Callable[[object], Any]] = attrgetter("event", "data", "id", "retry")
    _hashed: ClassVar[Callable[[object], Any]] = _compared

    def __eq__(self, other: object) -> bool:
        compared = type(self)._compared
        try:
            return compared(self) == compared(other)  # type: ignore[no-any-return]
        except AttributeError:
            return NotImplemented

    def __hash__(self) -> int:
        return hash(type(self)._hashed(self))

    def __repr__(self) -> str:
        return f"SSEEvent(event={self.event!r}, data={self.data!r}, id={self.id!r}, retry={self.retry!r})"


def _feed(parser: Any, data: BytesLike) -> list[SSEEvent]:
    """``feed()`` as both scanners do it: a failed parser stays failed, a closed one refuses more, the chunk is
    scanned window by window, and events completed before an error are returned (the error comes next call)."""
    if parser._error is not None:
        raise parser._error
    if parser._closed:
        raise messages.fed_after_close()
    if parser._busy:
        raise messages.reentered(parser)
    out: list[SSEEvent] = []
    parser._busy = True
    try:
        for window in windows(data):
            parser.bytes_fed += len(window)
            parser._scan(window, out)
    except SSEwireError as exc:
        parser._fail(exc)
        if out:
            return out
        raise
    finally:
        parser._busy = False
    return out


def _check_idle(parser: Any, method: str) -> None:
    """The one-stream-one-thread guard of ``__init__`` and ``close()`` (as the compiled scanners')."""
    if getattr(parser, "_busy", False):
        raise messages.busy(parser, method)


def _start(parser: Any, max_buffer: int) -> None:
    """``__init__``'s common part, as the compiled scanners': check and set ``max_buffer``, zero the counters,
    clear the end state (refused while the parser is feeding)."""
    if type(max_buffer) is not int or max_buffer <= 0:  # (a float, even inf or nan, a str, a bool: no limit)
        raise messages.bad_max_buffer(max_buffer)
    _check_idle(parser, "__init__")
    parser._busy = False
    parser.max_buffer = max_buffer
    parser.events_parsed = 0
    parser.bytes_fed = 0
    parser._error = None
    parser._closed = False


def _closing(parser: Any) -> bool:
    """``close()``'s common start, as the compiled scanners': re-raise a failure; False when already closed;
    refuse while feeding; else mark closed."""
    if parser._error is not None:
        raise parser._error
    if parser._closed:
        return False
    _check_idle(parser, "close")
    parser._closed = True
    return True


def _lines_start(parser: Any, chunk: bytes) -> Optional[bytes]:
    """What of a (non-empty) chunk a line scanner reads: without the LF of a CRLF split across chunks, and, at stream
    start, past a BOM (the bytes held in ``parser._tail`` first); None while the stream start could still be a BOM
    (kept in ``parser._tail``). Sets ``_started`` once the start is known; the caller then drops what it held."""
    if parser._skip_lf:
        parser._skip_lf = False
        if chunk[0] == 0x0A:
            chunk = chunk[1:]
    if parser._started:
        return chunk
    head = bytes(parser._tail) + chunk
    if len(head) < 3 and _BOM.startswith(head):
        parser._tail = bytearray(head)  # could still be a BOM: wait for more
        return None
    parser._started = True
    return head[3:] if head.startswith(_BOM) else head


def _take_lines(
    parser: Any, lines: Sequence[Union[bytes, bytearray]], rest: bytes, ended_in_cr: bool, out: list[SSEEvent]
) -> None:
    """Give each complete line of a chunk to ``parser._line``, then hold ``rest``, the start of the next line (checked
    after the lines: the events they finish are returned before its error), or, when the chunk ended in a CR, skip
    an LF that starts the next chunk."""
    line = parser._line
    for raw in lines:
        line(raw, out)
    if rest:
        parser._hold(rest)
    elif ended_in_cr:
        parser._skip_lf = True


def _split_lines(block: Union[bytes, bytearray]) -> list[Union[bytes, bytearray]]:
    """``block.splitlines()`` (CR, LF or CRLF; ``block`` ends with a line end) at memchr speed while the lines are
    long; once they turn out short (``splitlines()`` is then faster) the rest is left to ``splitlines()``."""
    lines: list[Union[bytes, bytearray]] = []
    pos, n = 0, len(block)
    find = block.find
    cr = find(b"\r")
    lf = find(b"\n")
    while pos < n:
        if 0 <= cr < pos:
            cr = find(b"\r", pos)
        if 0 <= lf < pos:
            lf = find(b"\n", pos)
        if cr < 0 or 0 <= lf < cr:
            lines.append(block[pos:lf])
            pos = lf + 1
        else:
            lines.append(block[pos:cr])
            pos = cr + 2 if lf == cr + 1 else cr + 1
        if len(lines) >= 4 and pos < n and pos < 256 * len(lines):
            lines += block[pos:].splitlines()
            break
    return lines


#: Data values an SSE event holds as they came before they are folded into one (:func:`_fold`).
_DATA_SLOTS = 64
_FOLD_BATCH = 1024


#: An event whose data is held as its UTF-8 bytes until read (a large non-ASCII event: see ``utf8_event``).
Utf8Event = utf8_event_type(SSEEvent)


class _Folded(bytearray):
    """The joined data of an event's first data lines, grown in place by :func:`_fold`."""

    __slots__ = ()


def _fold(data: list[Union[bytes, bytearray]]) -> None:
    """Make ``data`` (an event's data values) one value, their join (a :class:`_Folded` that later folds grow in
    place), so an event of many data lines holds about its data's bytes (at most ``max_buffer``) plus the values
    of one window: not a list slot per line, nor, at dispatch, a buffer per line for ``join`` (it joins at most
    ``_FOLD_BATCH`` values at a time)."""
    first = data[0]
    if type(first) is not _Folded:
        first = _Folded(first)
    for at in range(1, len(data), _FOLD_BATCH):
        first += b"\n"
        first += b"\n".join(data[at : at + _FOLD_BATCH])
    del data[1:]
    data[0] = first


class _Scanner:
    """What the twin's scanners share, as the compiled ``_Scanner``: ``max_buffer``, the counters and the end state
    (set by :func:`_start`), and ``feed()`` (:func:`_feed`). Subclasses implement ``_scan`` and ``_fail``."""

    __slots__ = ("_busy", "_closed", "_error", "bytes_fed", "events_parsed", "max_buffer")

    max_buffer: int
    events_parsed: int
    bytes_fed: int
    _busy: bool
    _closed: bool
    _error: Optional[SSEwireError]

    def feed(self, data: BytesLike) -> list[SSEEvent]:
        """Scan one chunk; return the events it completes."""
        return _feed(self, data)


class SSEParser(_Scanner):
    """Incremental Server-Sent-Events parser (WHATWG HTML 9.2.6).

    ``feed(chunk)`` -> list of :class:`SSEEvent` completed by the chunk; ``close()`` -> the events the end of
    the stream completes. Lines end in CRLF, LF or a lone CR (a CRLF split across chunks counts once); a leading
    BOM is dropped once; UTF-8 is decoded per event (invalid bytes become U+FFFD). Blocks without ``data`` dispatch
    nothing but still commit ``id``. ``last_event_id`` and ``retry`` expose the stream state for reconnection.

    ``max_buffer`` bounds one event: no single line and no event's joined data may exceed it. With
    ``flush_incomplete`` (default) ``close()`` dispatches a last event that lacks its blank line; without it that
    event is discarded, as the specification says.
    """

    __slots__ = (
        "_data",
        "_data_size",
        "_event",
        "_held",
        "_id",
        "_names",
        "_parts",
        "_skip_lf",
        "_started",
        "_tail",
        "flush_incomplete",
        "last_event_id",
        "retry",
    )

    def __init__(self, max_buffer: int = DEFAULT_MAX_BUFFER, *, flush_incomplete: bool = True) -> None:
        _start(self, max_buffer)
        self.flush_incomplete = flush_incomplete
        self.last_event_id: Optional[str] = None
        self.retry: Optional[int] = None
        # the unterminated last line: its big pieces as they came (no copy), small ones gathered in _tail (which at
        # stream start also holds a possible BOM prefix); _held is their total size
        self._parts: list[Union[bytes, bytearray]] = []
        self._tail = bytearray()
        self._held = 0
        self._data: list[Union[bytes, bytearray]] = []  # data values of the event being read (see _fold)
        self._data_size = -1  # bytes of the joined data so far (-1: no data line yet)
        self._event: Optional[bytes] = None  # event type of the event being read
        self._id: Optional[str] = None  # the last event ID buffer
        self._started = False  # the BOM check is done
        self._skip_lf = False  # the previous chunk ended in CR: an LF right after it belongs to it
        self._names: dict[bytes, str] = {}  # decoded event types, reused

    def close(self) -> list[SSEEvent]:
        """End of stream: the pending line and event, dispatched when ``flush_incomplete`` (else discarded)."""
        if not _closing(self):
            return []
        out: list[SSEEvent] = []
        if not self.flush_incomplete:
            self._drop_line()
            self._reset_event()
            return out
        tail = bytes(self._take_line(b""))
        if not self._started and tail.startswith(_BOM):
            tail = tail[3:]
        self._started = True
        try:
            if tail:
                self._line(tail, out)
            self._line(b"", out)
        except SSEwireError as exc:
            self._fail(exc)
            if out:
                return out
            raise
        return out

    def _fail(self, exc: SSEwireError) -> None:
        self._error = exc
        self._drop_line()
        self._reset_event()

    def _hold(self, piece: Union[bytes, bytearray]) -> None:
        """Keep ``piece`` (no line end in it) as the continuation of the pending line, within ``max_buffer``."""
        held = self._held + len(piece)
        if held > self.max_buffer:
            raise messages.overflow("a line", self.max_buffer)
        self._held = held
        if len(piece) < 4096:
            self._tail += piece
            return
        if self._tail:
            self._parts.append(self._tail)
            self._tail = bytearray()
        self._parts.append(piece)  # bytes (the windows are never the caller's mutable buffers): no copy

    def _take_line(self, last: Union[bytes, bytearray]) -> Union[bytes, bytearray]:
        """The pending line completed by ``last``, and the pending state cleared."""
        parts = self._parts
        if parts:
            if self._tail:
                parts.append(self._tail)
            parts.append(last)
            line: Union[bytes, bytearray] = b"".join(parts)
        else:
            line = self._tail
            line += last
        self._drop_line()
        return line

    def _drop_line(self) -> None:
        self._parts = []
        self._tail = bytearray()
        self._held = 0

    def _reset_event(self) -> None:
        self._data = []
        self._data_size = -1
        self._event = None

    def _scan(self, chunk: bytes, out: list[SSEEvent]) -> None:
        if not chunk:
            return
        if len(self._data) >= _DATA_SLOTS:  # (also the lines completed by chunks that ended mid-line: see below)
            _fold(self._data)
        started = self._started
        rest = _lines_start(self, chunk)
        if rest is None:
            self._held = len(self._tail)
            return
        chunk = rest
        if not started:
            self._drop_line()
        if self._held:
            chunk = self._finish_line(chunk, out)
            if not chunk:
                return
        lf = chunk.rfind(b"\n")
        cr = chunk.rfind(b"\r")
        end = lf if lf > cr else cr
        if end < 0:
            self._hold(chunk)
            return
        block = chunk[: end + 1] if end + 1 < len(chunk) else chunk
        # splitlines() tests every byte; find/split run at memchr speed: use them for LF-only blocks and for blocks
        # of long lines (e.g. one large CRLF-framed event). The block always ends with its terminator.
        lines: Sequence[Union[bytes, bytearray]]
        if b"\r" not in block:
            lines = block.split(b"\n")
            lines.pop()
        elif len(block) > 4096:
            lines = _split_lines(block)
        else:
            lines = block.splitlines()
        _take_lines(self, lines, chunk[end + 1 :], end == cr, out)
        if len(self._data) >= _DATA_SLOTS:
            _fold(self._data)  # many data lines (checked per window, not per line: the list holds one window's)

    def _finish_line(self, chunk: bytes, out: list[SSEEvent]) -> bytes:
        """Complete the pending line with the start of ``chunk`` when it holds the line's end; return the rest of
        ``chunk`` (empty when it all went to the pending line). Only ``chunk`` is searched, never what was held."""
        lf = chunk.find(b"\n")
        cr = chunk.find(b"\r", 0, lf if lf >= 0 else len(chunk))
        end = cr if cr >= 0 else lf
        if end < 0:
            self._hold(chunk)
            return b""
        if self._held + end > self.max_buffer:
            raise messages.overflow("a line", self.max_buffer)
        first = self._parts[0] if self._parts else b""
        if first[:5] == b"data:" and len(first) > 5:
            # a long data line: drop the field name before joining, so the value is not copied twice
            self._parts[0] = first[6:] if first[5] == 0x20 else first[5:]
            self._add_data(self._take_line(chunk[:end]))
        else:
            self._line(self._take_line(chunk[:end]), out)
        if end == cr:
            if end + 1 == len(chunk):
                self._skip_lf = True
                return b""
            if chunk[end + 1] == 0x0A:
                end += 1
        return chunk[end + 1 :]

    def _line(self, raw: Union[bytes, bytearray], out: list[SSEEvent]) -> None:
        if not raw:
            self._dispatch(out)
            return
        if len(raw) > self.max_buffer:
            raise messages.overflow("a line", self.max_buffer)
        if raw.startswith(b"data:"):
            value = raw[6:] if raw[5:6] == b" " else raw[5:]
            self._add_data(value)
            return
        colon = raw.find(b":")
        if colon == 0:
            return  # comment
        if colon < 0:
            name, value = raw, b""
        else:
            name = raw[:colon]
            value = raw[colon + 2 :] if raw[colon + 1 : colon + 2] == b" " else raw[colon + 1 :]
        if name == b"event":
            self._event = bytes(value)  # a dict key later (lines can be bytearray slices)
        elif name == b"data":
            self._add_data(value)
        elif name == b"id":
            if b"\x00" not in value:
                self._id = value.decode("utf-8", "replace")
        elif name == b"retry":
            # ASCII digits only; absurdly long values (over 18 significant digits) are ignored too
            if value and value.isdigit() and len(value.lstrip(b"0")) <= 18:
                self.retry = int(value)
        # any other field is ignored

    def _add_data(self, value: Union[bytes, bytearray]) -> None:
        size = self._data_size + 1 + len(value)
        if size > self.max_buffer:
            raise messages.overflow("the data of one event", self.max_buffer)
        self._data_size = size
        self._data.append(value)

    def _dispatch(self, out: list[SSEEvent]) -> None:
        self.last_event_id = self._id
        if self._data_size < 0:
            self._event = None
            return
        data = self._data
        if len(data) == 1:
            joined = data[0]
        elif type(data[0]) is _Folded:
            _fold(data)
            joined = data[0]
        else:
            joined = b"\n".join(data)
        name = self._event
        if name is None or not name:
            event_type = "message"
        else:
            event_type = self._names.get(name)  # type: ignore[assignment]
            if event_type is None:
                event_type = name.decode("utf-8", "replace")
                if len(self._names) < 64 and len(name) <= _NAME_CACHED_UP_TO:  # (as the compiled cache keeps)
                    self._names[name] = event_type
        if len(joined) >= LARGE_DATA and held_utf8(joined):  # held as its UTF-8 until read (see utf8_event)
            out.append(Utf8Event(event_type, bytes(joined), self._id, self.retry))
        else:
            out.append(SSEEvent(event_type, joined.decode("utf-8", "replace"), self._id, self.retry))
        self.events_parsed += 1
        self._data = []
        self._data_size = -1
        self._event = None


class NDJSONParser(_Scanner):
    """Incremental scanner for newline-delimited JSON (NDJSON, JSON Lines: Ollama, recorded WebSocket sessions).

    ``feed(chunk)`` -> one ``SSEEvent(event=None, data=<line text>)`` per line the chunk completes that is not
    blank. A line ends in LF, CRLF or a lone CR (a CRLF split across chunks counts once); lines of only spaces and
    tabs are skipped; a leading BOM is dropped; UTF-8 is decoded per line (invalid bytes become U+FFFD). The line
    is not parsed here: a line that is not JSON reaches the normaliser, which makes it ``raw``. ``close()`` gives a
    last line that lacks its line end. ``max_buffer`` bounds one line (:class:`~ssewire.SSEBufferOverflow`).
    """

    __slots__ = (
        "_skip_lf",
        "_started",
        "_tail",
    )

    def __init__(self, max_buffer: int = DEFAULT_MAX_BUFFER) -> None:
        _start(self, max_buffer)
        self._tail = bytearray()  # the unterminated last line (at stream start: a possible BOM prefix)
        self._started = False  # the BOM check is done
        self._skip_lf = False  # the previous chunk ended in CR: an LF right after it belongs to it

    def close(self) -> list[SSEEvent]:
        """End of stream: the last line, when it lacks its line end."""
        if not _closing(self):
            return []
        tail = bytes(self._tail)
        self._tail = bytearray()
        if not self._started and tail.startswith(_BOM):
            tail = tail[3:]
        self._started = True
        out: list[SSEEvent] = []
        self._line(tail, out)
        return out

    def _fail(self, exc: SSEwireError) -> None:
        self._error = exc
        self._tail = bytearray()

    def _hold(self, piece: Union[bytes, bytearray]) -> None:
        """Keep ``piece`` (no line end in it) as the continuation of the pending line, within ``max_buffer``."""
        if len(self._tail) + len(piece) > self.max_buffer:
            raise messages.overflow("a line", self.max_buffer)
        self._tail += piece

    def _scan(self, chunk: bytes, out: list[SSEEvent]) -> None:
        if not chunk:
            return
        started = self._started
        rest = _lines_start(self, chunk)
        if rest is None:
            return
        chunk = rest
        if not started:
            self._tail = bytearray()
        lf = chunk.rfind(b"\n")
        cr = chunk.rfind(b"\r")
        end = lf if lf > cr else cr
        if end < 0:
            self._hold(chunk)
            return
        block = chunk[: end + 1]
        if self._tail:  # the pending line ends in this chunk: finished in its own buffer, never copied whole
            lf_at, cr_at = block.find(b"\n"), block.find(b"\r")
            first = lf_at if cr_at < 0 or 0 <= lf_at < cr_at else cr_at
            self._tail += block[:first]
            line, self._tail = self._tail, bytearray()
            self._line(line, out)  # (its size is checked with the line's)
            del line
            block = block[first + (2 if first == cr_at and block[first + 1 : first + 2] == b"\n" else 1) :]
        lines = block.split(b"\n")[:-1] if cr < 0 else block.splitlines()
        _take_lines(self, lines, chunk[end + 1 :], end == cr, out)

    def _line(self, raw: Union[bytes, bytearray], out: list[SSEEvent]) -> None:
        if len(raw) > self.max_buffer:
            raise messages.overflow("a line", self.max_buffer)
        if raw.strip(b" \t"):
            out.append(SSEEvent(None, raw.decode("utf-8", "replace")))
            self.events_parsed += 1


# JSON-array scanner states
_BEFORE = 0  # before the opening "["
_FIRST = 1  # after "[": an object or "]"
_INSIDE = 2  # inside a top-level object
_AFTER = 3  # after an object: "," or "]"
_NEXT = 4  # after ",": an object
_END = 5  # after the closing "]": only whitespace

_WS = b" \t\r\n"
_STRUCTURAL = re.compile(rb'["{}\[\]]')
_NON_WS = re.compile(rb"[^ \t\r\n]")


class JSONArrayStreamParser(_Scanner):
    """Incremental scanner for a streamed JSON array of objects (Gemini ``streamGenerateContent`` without
    ``alt=sse``).

    ``feed(chunk)`` -> one ``SSEEvent(event=None, data=<object text>)`` per top-level object that the chunk
    closes, the object's exact text from ``{`` to its matching ``}``. Strings (with escapes) are skipped, so
    braces inside them do not count. Any whitespace and one comma may separate objects; a leading BOM is allowed.
    A body that is not an array, a non-object element or data after the closing ``]`` raises
    :class:`~ssewire.FramingError`; ``close()`` raises :class:`~ssewire.StreamTruncated` if the body ended
    before the closing ``]``. ``max_buffer`` bounds one element.
    """

    __slots__ = (
        "_depth",
        "_esc",
        "_head",
        "_in_str",
        "_pending",
        "_started",
        "_state",
    )

    def __init__(self, max_buffer: int = DEFAULT_MAX_BUFFER) -> None:
        _start(self, max_buffer)
        self._state = _BEFORE
        self._depth = 0
        self._in_str = False
        self._esc = False
        self._pending = bytearray()  # bytes of the element being read (from its "{")
        self._started = False
        self._head = b""  # stream start held back while it could be a BOM

    @property
    def finished(self) -> bool:
        """True once the closing ``]`` has been seen."""
        return self._state == _END

    def _fail(self, exc: SSEwireError) -> None:
        self._error = exc
        self._pending = bytearray()

    def close(self) -> list[SSEEvent]:
        """End of body: ``StreamTruncated`` unless the closing ``]`` was seen."""
        if not _closing(self):
            return []
        if self._state != _END:
            self._error = messages.json_array_truncated(self._state == _INSIDE)
            self._pending = bytearray()
            raise self._error
        return []

    def _scan(self, chunk: bytes, out: list[SSEEvent]) -> None:
        if not self._started:
            head = self._head + chunk
            if len(head) < 3 and _BOM.startswith(head):
                self._head = head
                return
            self._started = True
            self._head = b""
            chunk = head[3:] if head.startswith(_BOM) else head
        n = len(chunk)
        pos = 0
        max_buffer = self.max_buffer
        while pos < n:
            state = self._state
            if state != _INSIDE:
                m = _NON_WS.search(chunk, pos)
                if m is None:
                    return
                pos = m.start()
                c = chunk[pos]
                if state == _BEFORE:
                    if c != 0x5B:  # "["
                        raise messages.not_a_json_array(chunk[pos:])
                    self._state = _FIRST
                elif state == _FIRST or state == _NEXT:
                    if c == 0x7B:  # "{"
                        self._state = _INSIDE
                        self._depth = 0
                        self._pending = bytearray()
                        continue
                    if c == 0x5D and state == _FIRST:  # "]" closes an empty array
                        self._state = _END
                    else:
                        raise messages.element_not_an_object(chunk[pos:])
                elif state == _AFTER:
                    if c == 0x2C:  # ","
                        self._state = _NEXT
                    elif c == 0x5D:  # "]"
                        self._state = _END
                    else:
                        raise messages.no_separator(chunk[pos:])
                else:  # _END
                    raise messages.data_after_the_end(chunk[pos:])
                pos += 1
                continue
            start = pos
            end = self._scan_element(chunk, pos, n)
            if end < 0:  # the element continues in the next chunk
                if len(self._pending) + (n - start) > max_buffer:
                    raise messages.overflow("a JSON array element", max_buffer)
                self._pending += chunk[start:] if start else chunk
                return
            if self._pending:
                if len(self._pending) + (end - start) > max_buffer:
                    raise messages.overflow("a JSON array element", max_buffer)
                self._pending += chunk[start:end]  # (finished in its own buffer, never copied whole)
                element: Union[bytes, bytearray] = self._pending
                self._pending = bytearray()
            else:
                if end - start > max_buffer:
                    raise messages.overflow("a JSON array element", max_buffer)
                element = chunk[start:end]
            out.append(SSEEvent(None, element.decode("utf-8", "replace")))
            self.events_parsed += 1
            self._state = _AFTER
            pos = end

    def _scan_element(self, chunk: bytes, pos: int, n: int) -> int:
        """Advance through an element from ``pos``; return the offset just past its closing brace, or -1."""
        depth = self._depth
        find = chunk.find
        search = _STRUCTURAL.search
        while True:
            if self._in_str:
                if self._esc:
                    self._esc = False
                    pos += 1
                    if pos >= n:
                        break
                quote = find(b'"', pos)
                if quote < 0:
                    # the string goes on; remember whether the chunk ends in an unfinished escape
                    k = n
                    while k > pos and chunk[k - 1] == 0x5C:
                        k -= 1
                    self._esc = (n - k) % 2 == 1
                    break
                k = quote
                while k > pos and chunk[k - 1] == 0x5C:
                    k -= 1
                pos = quote + 1
                if (quote - k) % 2 == 0:
                    self._in_str = False
                continue
            m = search(chunk, pos)
            if m is None:
                break
            pos = m.end()
            c = chunk[pos - 1]
            if c == 0x22:
                self._in_str = True
            elif c == 0x7B or c == 0x5B:
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    self._depth = 0
                    return pos
        self._depth = depth
        return -1


# --- AWS event-stream ---------------------------------------------------------------------------------------------

#: The event-stream limits (as botocore's): headers of at most 128 KiB, a payload of at most 16 MiB.
MAX_HEADERS_LENGTH = 128 * 1024
MAX_PAYLOAD_LENGTH = 16 * 1024 * 1024
_PRELUDE = struct.Struct(">III")
_PRELUDE_LENGTH = 12
#: The integer header types: byte, short, integer, long and timestamp (milliseconds since the epoch).
_INTS = {
    2: struct.Struct(">b"),
    3: struct.Struct(">h"),
    4: struct.Struct(">i"),
    5: struct.Struct(">q"),
    8: struct.Struct(">q"),
}
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_BLOCK_SLOTS = 8  # header blocks kept parsed
_BLOCK_MAX = 256  # the longest header block kept
#: The header that names the event, per ``:message-type`` (``event`` when the message has none).
_NAME_HEADER = {"event": ":event-type", "exception": ":exception-type", "error": ":error-code"}


class EventStreamMessage(SSEEvent):
    """One AWS event-stream message (``application/vnd.amazon.eventstream``).

    ``headers``: every header, by name (``bool``, ``int`` for the byte/short/integer/long/timestamp types,
    ``bytes`` for byte arrays and UUIDs, ``str`` for strings); ``message_type``: the ``:message-type`` header
    (``event``, ``exception`` or ``error``; ``None`` when absent); ``content_type``: ``:content-type``;
    ``payload``: the payload's bytes; ``data``: the payload as text (invalid UTF-8 replaced); ``event``: the
    ``:event-type`` of an event, the ``:exception-type`` of an exception, the ``:error-code`` of an error.
    ``id`` and ``retry`` are always ``None``.
    """

    __slots__ = ("content_type", "headers", "message_type", "payload")

    def __init__(
        self,
        event: Optional[str] = None,
        data: str = "",
        headers: Optional[dict[str, Any]] = None,
        payload: bytes = b"",
        message_type: Optional[str] = None,
        content_type: Optional[str] = None,
    ) -> None:
        super().__init__(event, data, None, None)
        self.headers = {} if headers is None else headers
        self.payload = payload
        self.message_type = message_type
        self.content_type = content_type

    def _message_key(self) -> tuple[Any, ...]:
        return (self.event, self.data, self.message_type, self.content_type, self.headers, self.payload)

    # either implementation's message has _message_key; headers (a dict) are not hashed
    _compared: ClassVar[Callable[[object], Any]] = methodcaller("_message_key")
    _hashed: ClassVar[Callable[[object], Any]] = attrgetter("event", "data", "message_type", "payload")

    def __repr__(self) -> str:
        return (
            f"EventStreamMessage(event={self.event!r}, message_type={self.message_type!r}, "
            f"content_type={self.content_type!r}, data={self.data!r})"
        )


class EventStreamParser(_Scanner):
    """Incremental AWS event-stream parser (Bedrock's ``application/vnd.amazon.eventstream``).

    ``feed(chunk)`` -> one :class:`EventStreamMessage` per message the chunk completes. Each message is a prelude
    (total length, headers length, prelude CRC32), typed headers, the payload and a message CRC32, all big-endian;
    both CRCs are checked. A CRC mismatch, a corrupt length, headers that overrun their length, a header type that
    does not exist or a header given twice raise :class:`~ssewire.FramingError` naming the message's offset in the
    stream. Memory is bounded by one message: headers of at most 128 KiB, a payload of at most 16 MiB
    (``FramingError`` beyond), and a whole message of at most ``max_buffer`` bytes (``SSEBufferOverflow``).
    ``close()`` raises :class:`~ssewire.StreamTruncated` when the body ends inside a message.
    """

    __slots__ = ("_blocks", "_offset", "_pending", "_strings", "_total")

    def __init__(self, max_buffer: int = DEFAULT_MAX_BUFFER) -> None:
        _start(self, max_buffer)
        self._pending = bytearray()  # the start of a message that continues in the next chunk
        self._total = 0  # that message's total length, once its prelude is read (0 until then)
        self._offset = 0  # the stream offset of the message being read
        self._strings: dict[bytes, str] = {}  # decoded header names and string values, reused
        self._blocks: dict[bytes, tuple[dict[str, Any], Optional[str], Optional[str], Optional[str]]] = {}

    def close(self) -> list[SSEEvent]:
        """End of stream: nothing is owed; a message cut short raises :class:`~ssewire.StreamTruncated`."""
        if not _closing(self):
            return []
        have = len(self._pending)
        if have:
            self._fail(messages.message_truncated(self._offset, have, self._total, _PRELUDE_LENGTH))
            raise self._error  # type: ignore[misc]
        return []

    def _fail(self, exc: SSEwireError) -> None:
        self._error = exc
        self._pending = bytearray()
        self._total = 0

    def _scan(self, chunk: bytes, out: list[SSEEvent]) -> None:
        n = len(chunk)
        pos = self._complete(chunk, out) if self._pending else 0
        while n - pos >= _PRELUDE_LENGTH:
            total = self._prelude(chunk, pos)
            if n - pos < total:
                self._total = total
                break
            self._message(chunk, pos, total, out)
            pos += total
        if pos < n:
            self._pending = bytearray(chunk[pos:])

    def _complete(self, chunk: bytes, out: list[SSEEvent]) -> int:
        """Add to the pending message the bytes of ``chunk`` it still needs; emit it once whole. Returns how much of
        ``chunk`` was used (all of it while the message is still incomplete)."""
        pending = self._pending
        pos = 0
        if not self._total:
            pos = _PRELUDE_LENGTH - len(pending)
            pending += chunk[:pos]
            if len(pending) < _PRELUDE_LENGTH:
                return len(chunk)
            self._total = self._prelude(pending, 0)
        need = self._total - len(pending)
        pending += chunk[pos : pos + need]
        if len(pending) < self._total:
            return len(chunk)
        self._message(pending, 0, self._total, out)
        self._pending = bytearray()
        self._total = 0
        return pos + need

    def _prelude(self, buf: Union[bytes, bytearray], pos: int) -> int:
        """Check the prelude at ``pos`` (its CRC, the lengths, the limits); return the message's total length."""
        total, headers, crc = _PRELUDE.unpack_from(buf, pos)
        computed = zlib.crc32(buf[pos : pos + 8])
        offset = self._offset
        if computed != crc:
            raise messages.prelude_crc_mismatch(offset, computed, crc)
        if total < _PRELUDE_LENGTH + 4 or headers > total - _PRELUDE_LENGTH - 4:
            raise messages.corrupt_length(offset, total, headers)
        if headers > MAX_HEADERS_LENGTH:
            raise messages.headers_too_long(offset, headers, MAX_HEADERS_LENGTH)
        if total - headers - _PRELUDE_LENGTH - 4 > MAX_PAYLOAD_LENGTH:
            raise messages.payload_too_long(offset, total - headers - _PRELUDE_LENGTH - 4, MAX_PAYLOAD_LENGTH)
        if total > self.max_buffer:
            raise messages.overflow("an event-stream message", self.max_buffer)
        return int(total)

    def _message(self, buf: Union[bytes, bytearray], pos: int, total: int, out: list[SSEEvent]) -> None:
        """The whole message at ``buf[pos:pos + total]`` (prelude already checked): check its CRC, read its headers,
        append its event."""
        end = pos + total
        offset = self._offset
        with memoryview(buf) as view:
            computed = zlib.crc32(view[pos : end - 4])
        (crc,) = _U32.unpack_from(buf, end - 4)
        if computed != crc:
            raise messages.message_crc_mismatch(offset, computed, crc)
        (length,) = _U32.unpack_from(buf, pos + 4)
        start = pos + _PRELUDE_LENGTH
        headers, event, message_type, content_type = self._described(buf, start, start + length)
        payload = bytes(buf[start + length : end - 4])
        out.append(
            EventStreamMessage(
                event, payload.decode("utf-8", "replace"), dict(headers), payload, message_type, content_type
            )
        )
        self.events_parsed += 1
        self._offset += total

    def _described(
        self, buf: Union[bytes, bytearray], pos: int, end: int
    ) -> tuple[dict[str, Any], Optional[str], Optional[str], Optional[str]]:
        """``(headers, event, message_type, content_type)`` of the header block ``buf[pos:end]``: the last few blocks
        are kept, as a stream repeats the same few (only ``:event-type`` changes); the caller copies ``headers``."""
        key = bytes(buf[pos:end]) if end - pos <= _BLOCK_MAX else None
        described = self._blocks.get(key) if key is not None else None
        if described is not None:
            return described
        headers = self._headers(buf, pos, end)
        message_type = headers.get(":message-type")
        if type(message_type) is not str:
            message_type = None
        event = headers.get(_NAME_HEADER.get(message_type or "event", ":event-type"))
        content_type = headers.get(":content-type")
        described = (
            headers,
            event if type(event) is str else None,
            message_type,
            content_type if type(content_type) is str else None,
        )
        if key is not None:
            if len(self._blocks) >= _BLOCK_SLOTS:
                del self._blocks[next(iter(self._blocks))]
            self._blocks[key] = described
        return described

    def _headers(self, buf: Union[bytes, bytearray], pos: int, end: int) -> dict[str, Any]:
        """The headers in ``buf[pos:end]``, by name."""
        headers: dict[str, Any] = {}
        while pos < end:
            size = buf[pos]
            pos += 1
            if pos + size + 1 > end:
                raise messages.headers_overrun(self._offset)
            name = self._string(buf[pos : pos + size])
            kind = buf[pos + size]
            pos += size + 1
            value: Any
            if kind == 0 or kind == 1:
                value = kind == 0
            elif kind in _INTS:
                unpack = _INTS[kind]
                if pos + unpack.size > end:
                    raise messages.headers_overrun(self._offset)
                (value,) = unpack.unpack_from(buf, pos)
                pos += unpack.size
            elif kind == 6 or kind == 7:
                if pos + 2 > end:
                    raise messages.headers_overrun(self._offset)
                (size,) = _U16.unpack_from(buf, pos)
                pos += 2
                if pos + size > end:
                    raise messages.headers_overrun(self._offset)
                value = bytes(buf[pos : pos + size]) if kind == 6 else self._string(buf[pos : pos + size])
                pos += size
            elif kind == 9:
                if pos + 16 > end:
                    raise messages.headers_overrun(self._offset)
                value = bytes(buf[pos : pos + 16])
                pos += 16
            else:
                raise messages.header_type_unknown(self._offset, name, kind)
            if name in headers:
                raise messages.header_twice(self._offset, name)
            headers[name] = value
        return headers

    def _string(self, raw: Union[bytes, bytearray]) -> str:
        """``raw`` decoded as UTF-8 (invalid bytes replaced); short ones cached, as header names and values
        repeat in every message."""
        strings = self._strings
        key = bytes(raw)
        text = strings.get(key)
        if text is None:
            text = key.decode("utf-8", "replace")
            if len(key) <= 64:
                if len(strings) >= 256:
                    strings.clear()
                strings[key] = text
        return text
