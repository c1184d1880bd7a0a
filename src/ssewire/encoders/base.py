"""What every encoder shares: the walk over unified events, the open tool calls, usage, the stop-reason check and
the count of what the target could not carry.

An encoder turns one stream's :class:`~ssewire.Unified` events into one target API's wire bytes, incrementally:
:meth:`Encoder.encode` takes one event and returns the bytes it makes (often none), :meth:`Encoder.close` the bytes
that end the stream. A target module writes the ``on_*`` hooks (each returns text; the base encodes it once per
event) and its class attributes; the order of events, the bookkeeping of calls and the rules below are here.

- The target's opening (``on_start``) is written with the first event, so a client sees bytes as soon as the
  source says anything; the response id and model come from the options, else from ``source`` (the normaliser
  reading the stream, whose ``response_id`` / ``model`` are read when the opening is written), else are made up.
- A tool call's arguments reach the target as they arrive; a call the source sent whole (no fragments before its
  ``tool_call_done``) gets its arguments as one fragment first. Calls the provider ran itself (``server``) go to
  ``on_server_call``: written where the target has a shape for them, else counted in :attr:`Encoder.dropped`.
- ``usage`` events update the one :class:`~ssewire.Usage` written where the target puts usage (at the end).
- ``done`` ends the stream with the target's stop (``on_done``), written when the next event is not more content,
  or at :meth:`Encoder.close`: content after a stop (a second message in one stream) continues the one target
  response, as ``collect()`` reads such a stream. ``error`` writes the target's error shape (``on_error``) at once,
  before a stop the source sent just before it (clients stop reading at the target's end); a stop the source sends
  after it is still written where the target can say both. A stream that failed or was
  cut never ends as a clean stop, and its open calls are never closed: :meth:`Encoder.close` without a stop or an
  error writes a ``stream_truncated`` error. Nothing is written after the target's end.
- Memory: one event's text, the open calls' ids and names, and what the target itself repeats at its end (the
  Responses API's final ``response`` object holds the whole output: that target keeps it, no other does).
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from typing import Any, Callable, ClassVar, Iterator, Mapping, Optional, Union

from .._json import BACKEND, quote_utf8
from .._json import dumps as fast_dumps
from ..events import Unified
from ..normalizers._fast.typed import write_texts as _write_texts
from ..normalizers.common import client_stop
from ..normalizers.tool_calls import closes_calls
from ..usage import Usage

__all__ = [
    "HELD",
    "Call",
    "Dropped",
    "Encoder",
    "Pieces",
    "TextRun",
    "Writer",
    "arguments",
    "dumps",
    "error_parts",
    "quote",
    "quote_long",
    "quote_text",
    "url_citations",
    "utf8",
]

#: A string as a JSON string literal (quotes and escapes; non-ASCII kept): the C encoder ``json`` uses.
quote: Callable[[str], str] = json.encoder.encode_basestring
#: A value as compact JSON text (no spaces, non-ASCII kept), by the fastest encoder installed.
dumps = fast_dumps

#: Texts of at least this many characters are quoted by the fast encoder (see :func:`quote_text`).
LONG_TEXT = 64
#: :data:`quote` by the fast encoder (the same JSON string literal, lone surrogates included): about seven times
#: faster per character than the standard library's escaper, but dearer to call.
quote_long: Callable[[str], str] = quote if BACKEND == "json" else fast_dumps


def quote_text(text: str) -> str:
    """:data:`quote` for a text of any length (an argument fragment, a signature): :data:`quote_long` from
    :data:`LONG_TEXT` characters. The writers of text deltas, most of them a few characters, make the same choice
    inline (a call costs a short delta ~15%)."""
    return quote(text) if len(text) < LONG_TEXT else quote_long(text)


#: The stops that are no clean end: a target without its own value for one writes its error instead.
_NOT_CLEAN = frozenset({"failed", "cancelled"})
#: What a truncated source is reported as in every target's error shape.
TRUNCATED = {"type": "stream_truncated", "message": "the source stream ended before its terminal event"}


_ENCODER_CLASS: Optional[Callable[[str], type[Encoder]]] = None


def _registry() -> Callable[[str], type[Encoder]]:
    """:func:`ssewire.encoders.encoder_class`, imported on first use (the registry imports every target, each of
    which imports this module)."""
    global _ENCODER_CLASS
    if _ENCODER_CLASS is None:
        from . import encoder_class

        _ENCODER_CLASS = encoder_class
    return _ENCODER_CLASS


def utf8(text: str) -> bytes:
    """An encoder's text as UTF-8. A lone surrogate (a JSON payload may escape one: ``"\\ud800"``) can only be in a
    JSON string here, and is written back as that escape, never as an exception or invalid UTF-8."""
    return text.encode("utf-8", "backslashreplace")


#: ASCII runs of pieces made as UTF-8 of fewer bytes than this are written as text (see :meth:`Encoder.hold`).
HELD_FROM = 16 * 1024

#: An ASCII run of deltas written as UTF-8 of fewer bytes than this is written as text (see
#: :meth:`Encoder.write_all`).
RUN_HELD_FROM = 2048

#: The mark of a held piece (:meth:`Encoder.hold`) in an encoder's text: a NUL, which no target writes otherwise
#: (every value is JSON-quoted, and JSON escapes control characters).
HELD = "\x00"


#: :class:`Pieces` joins its pieces this many at a time.
PIECES_JOINED = 256


class Pieces(list[Union[str, bytes]]):
    """A text written in many small pieces, each either the text itself (a ``str``: what a writer of one delta
    appends) or, as ``bytes``, the UTF-8 of its JSON string literal without the quotes (what the run writer made of a
    run of deltas as it wrote them: JSON escapes one character at a time, so such pieces joined are the literal of
    their texts joined, and a run is never quoted again). A writer appends a piece and, when the list reaches
    ``limit``, calls :meth:`compact`, which makes the pieces since the last compaction one (a small object costs
    about 40 bytes beside its data, ten times a typical delta), so what is held stays near the text's own size;
    :meth:`take_quoted` (or :meth:`take_quoted_text`) gives the whole text's literal once and empties it. (The check
    is the writer's, inline: a method call per delta would cost more than the append.) ``limit`` is the class's
    until a compaction sets the instance's (no ``__init__``: made once per block or call, a third of the cost of
    one with it)."""

    limit = PIECES_JOINED

    def compact(self) -> None:
        start = self.limit - PIECES_JOINED
        texts = self[start:]
        if all(type(piece) is str for piece in texts):
            self[start:] = ["".join(texts)]  # type: ignore[arg-type]
        else:
            self[start:] = [_inner_utf8(texts)]
        self.limit = start + 1 + PIECES_JOINED

    def take_quoted(self) -> bytes:
        """The whole text as a JSON string literal in UTF-8 (what ``ssewire._json.quote_utf8`` makes of it), once,
        the whole text never joined as Python text: the pieces since the last compaction made one, then each text
        piece quoted by the fast encoder, and the pieces joined without their inner quotes (those quoted as they
        were written as they are)."""
        if len(self) > 1:
            self.compact()
        if len(self) == 1 and isinstance(self[0], str):
            quoted = quote_utf8(self[0])
        else:
            inner = [memoryview(quote_utf8(piece))[1:-1] if isinstance(piece, str) else piece for piece in self]
            quoted = b"".join([b'"', *inner, b'"'])
        self._empty()
        return quoted

    def take_quoted_text(self) -> str:
        """:meth:`take_quoted` as text (a lone surrogate, as ``quote`` leaves it, or as its escape): each run of
        text pieces joined and quoted, each run writer's piece decoded (UTF-8 with every lone surrogate escaped: it
        decodes), in order."""
        if all(type(piece) is str for piece in self):
            text = self[0] if len(self) == 1 else "".join(self)  # type: ignore[arg-type]
            self._empty()
            return quote_text(text)  # type: ignore[arg-type]
        out: list[str] = []
        texts: list[str] = []
        for piece in self:
            if type(piece) is str:
                texts.append(piece)
                continue
            if texts:
                out.append(quote_text("".join(texts))[1:-1])
                texts = []
            out.append(piece.decode())  # type: ignore[union-attr]
        if texts:
            out.append(quote_text("".join(texts))[1:-1])
        self._empty()
        return f'"{"".join(out)}"'

    def _empty(self) -> None:
        self.clear()
        if self.limit != PIECES_JOINED:  # (compacted: the class's limit again)
            self.limit = PIECES_JOINED


def _inner_utf8(pieces: list[Union[str, bytes]]) -> bytes:
    """The pieces of a :class:`Pieces` as the UTF-8 of their text's JSON string literal without the quotes: each
    run of ``str`` pieces joined and quoted once."""
    out: list[bytes] = []
    texts: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            texts.append(piece)
            continue
        if texts:
            out.append(quote_utf8("".join(texts))[1:-1])
            texts = []
        out.append(piece)
    if texts:
        out.append(quote_utf8("".join(texts))[1:-1])
    return out[0] if len(out) == 1 else b"".join(out)


#: The kinds of event about one tool call.
_CALL_KINDS = frozenset({"tool_call_start", "tool_call_delta", "tool_call_done"})

#: The kinds of event :meth:`Encoder.write_all` may write in runs.
_RUN_KINDS = frozenset({"text_delta", "reasoning_delta"})

#: How a target writes a run of deltas (see :meth:`Encoder.text_run`): ``(head, tail, parts, seq, seq_end)``.
TextRun = tuple[str, str, Optional["Pieces"], Optional[int], str]


class Dropped(Counter[str]):
    """:attr:`Encoder.dropped`: a count by kind that holds only kinds counted at least once (adding 0 leaves it as
    it was), so an encoder that dropped nothing has an empty, falsy one. Made empty (``Counter``'s own ``__init__``
    and ``__missing__`` are Python code: an encoder makes one in most streams it translates)."""

    def __init__(self) -> None:
        dict.__init__(self)

    def __missing__(self, kind: str) -> int:
        return 0

    def __setitem__(self, kind: str, count: int) -> None:
        if count:
            dict.__setitem__(self, kind, count)
        else:
            self.pop(kind, None)


class Call:
    """One tool call as the encoder wrote it: the source's id and name, the target's ``index`` (the call's place
    among the calls, or its block's place among the blocks), whether any argument text was written (``streamed``),
    the text written (``parts``, kept only by targets that repeat it at the end) and the signature it carried.
    ``opened``: its opening was written (a call that starts without its name waits for it, its fragments held in
    ``pending``: every target writes the name when a call opens)."""

    __slots__ = (
        "closed",
        "id",
        "index",
        "item_id",
        "name",
        "opened",
        "parts",
        "pending",
        "server",
        "signature",
        "streamed",
    )

    def __init__(self, call_id: str, name: Optional[str], index: int, server: bool) -> None:
        self.id = call_id
        self.name = name
        self.index = index
        self.server = server
        self.streamed = False
        self.closed = False  # its done was written
        self.opened = True
        self.pending: Optional[list[str]] = None
        self.parts = Pieces()
        self.signature: Optional[str] = None
        self.item_id = call_id


def _fill_marks(text: str, runs: Iterator[list[bytes]], out: list[bytes]) -> int:
    """Append ``text`` to ``out`` as UTF-8 with the next run of ``runs`` in the place of each :data:`HELD` mark in
    it (empty pieces left out); the number of marks. The marks are found with ``str.find`` (a byte search where
    the text is one byte a character): splitting the text looks at every character. A mark with no run left is
    counted and its place left empty (the caller compares the count)."""
    start = 0
    marks = 0
    mark = text.find(HELD)
    while mark >= 0:
        marks += 1
        if mark > start:
            out.append(utf8(text[start:mark]))
        run = next(runs, None)
        if run is not None:
            out += [piece for piece in run if piece]
        start = mark + 1
        mark = text.find(HELD, start)
    if start == 0:
        if text:
            out.append(utf8(text))
    elif start < len(text):
        out.append(utf8(text[start:]))
    return marks


class Writer:
    """What every encoder shares (the walk over events, the calls, usage, the stop check, :attr:`dropped`): each
    target's writer subclasses it, and its :class:`Encoder` subclasses both. Compiled, ``encoders/base.pxd``
    declares its state as C fields and its per-event methods as ``cpdef`` (a target's writer redeclares those it
    writes), so an event's dispatch and the state it reads are direct; the same source runs as Python."""

    #: The target's name (what ``to=`` takes).
    to: ClassVar[str] = ""
    #: The HTTP ``Content-Type`` of the target's stream, and any other headers its clients expect.
    content_type: ClassVar[str] = "text/event-stream"
    headers: ClassVar[Mapping[str, str]] = {}
    #: Unified stop reason -> the target's own value (``other`` for the rest; a target without ``failed`` or
    #: ``cancelled`` writes its error for them), and the target's reader's table back (to tell which stops the
    #: target cannot carry).
    stops: ClassVar[Mapping[str, str]] = {}
    reads_stop: ClassVar[Mapping[str, str]] = {}
    #: The id prefix of made-up response ids.
    id_prefix: ClassVar[str] = "resp_"
    #: Whether the target carries a signature on a tool call (else it goes to ``on_signature``), and whether it
    #: writes a call whole at its end (so a signature that comes after the call opened still rides on it).
    call_signatures: ClassVar[bool] = False
    signature_at_done: ClassVar[bool] = False
    #: Whether the target's usage has a member for the reasoning share and for cache writes.
    carries_reasoning_tokens: ClassVar[bool] = True
    carries_cache_writes: ClassVar[bool] = True
    #: Whether the target writes the reasoning count as a share of the output (so it cannot exceed it).
    reasoning_within_output: ClassVar[bool] = False
    #: Whether the target has a shape for calls the provider ran itself.
    carries_server_calls: ClassVar[bool] = False
    #: Whether what ends a failed stream (:meth:`on_close`) carries the usage (else a usage that came after the
    #: error, with no stop after it, is counted as dropped).
    usage_at_close: ClassVar[bool] = False
    #: Whether its whole response body (:meth:`render`) carries encrypted reasoning (else it is counted as dropped).
    carries_encrypted_reasoning: ClassVar[bool] = False

    def __init__(
        self,
        to: Optional[str] = None,
        *,
        model: Optional[str] = None,
        response_id: Optional[str] = None,
        created: Optional[int] = None,
        source: Any = None,
        **options: Any,
    ) -> None:
        if to is not None and to != self.to:
            raise ValueError(f"{type(self).__name__} writes {self.to!r}, not {to!r}")
        self.model = model
        self.response_id = response_id
        self.created = int(time.time()) if created is None else created
        self.source = source
        self.calls: dict[Optional[str], Call] = {}
        #: Runs of pieces a target made as UTF-8 (the Responses API's done events and final event, which repeat an
        #: item's or the whole output's text), each in the text where :data:`HELD` stands (:meth:`hold`).
        self.held: list[list[bytes]] = []
        # the stream's state (one encoder is made per stream)
        self._dropped: Optional[Dropped] = None  # made when first counted in (most streams drop nothing)
        self.usage: Optional[Usage] = None
        self.client_calls = 0  # client calls opened (written)
        self.started = False
        self.ended = False  # the target's stream is over: nothing more is written
        self.failed = False  # the target's error was written (the target may still write a stop after it)
        self.stop: Optional[str] = None  # the source's stop, not written yet (more content may follow it)
        self._went_on: Optional[str] = None  # a stop content came after (the end's, unless another comes)
        self._usage_late = False  # a usage came after the target's error was written
        self._flowing = False  # started, neither ended nor stopped: a delta is only its text
        #: Whether the target looks at ``raw`` events (:meth:`on_raw`): a source's blocks of its own API that no
        #: unified event carries, written as they came (every other target skips them).
        self.writes_raw = False
        self._init_state()
        if options:
            self._take_options(options)

    def _init_state(self) -> None:
        """Set the target's own state to its start (called by ``__init__``: one encoder is made per stream)."""

    def _take_options(self, options: dict[str, Any]) -> None:
        """Take the target's own options (``include_usage`` ...) from ``options`` (after :meth:`_init_state`); a
        ``TypeError`` for any other."""
        raise TypeError(f"the {self.to} encoder has no option {', '.join(sorted(options))}")

    @property
    def dropped(self) -> Counter[str]:
        """What the target could not carry, by kind (``server_tool_call``, ``citation``, ``signature``,
        ``encrypted_reasoning``, ``stop_reason``, ``reasoning_tokens``, ``cache_write_tokens``, ``usage``,
        ``arguments``): each occurrence counted once; a kind never counted is not there (empty: nothing lost)."""
        dropped = self._dropped
        if dropped is None:
            dropped = self._dropped = Dropped()
        return dropped

    # -- the walk ------------------------------------------------------------------------------------------------
    def encode(self, event: Unified) -> bytes:
        """The target's bytes for one event (``b""`` when it writes nothing yet)."""
        text = self.write(event)
        if self.held:
            return b"".join(self.pieces(text))
        return utf8(text) if text else b""

    def hold(self, pieces: list[bytes]) -> str:
        """Pieces made as UTF-8 (a text that repeats a whole item is up to four times its UTF-8 in memory), to be
        written in order where the :data:`HELD` mark this returns stands in the text (see :meth:`pieces`): kept as
        they are, so a text several events repeat is held once. ASCII pieces of fewer than :data:`HELD_FROM` bytes
        in all are returned as text instead (holding them would cost more than the copy); others of that size are
        held joined (as text they would be decoded only to be encoded again)."""
        if sum(map(len, pieces)) < HELD_FROM:
            data = b"".join(pieces)
            if data.isascii():  # (else decoding it would be undone by the encoding of the text it joins)
                return data.decode()
            pieces = [data]
        self.held.append(pieces)
        return HELD

    def pieces(self, text: str) -> list[bytes]:
        """``text`` (what :meth:`write` returned, for one event or joined for several) as the UTF-8 pieces to write,
        each held run of pieces in the place of its mark, in order; empty pieces left out."""
        held = self.held
        if not held:
            return [utf8(text)] if text else []
        self.held = []
        out: list[bytes] = []
        runs = iter(held)
        marks = _fill_marks(text, runs, out)
        if marks != len(held):  # (a mark lost or one in the text: a bug in a target)
            raise AssertionError(f"{len(held)} runs of pieces held, {marks} marks in the text")
        return out

    def pieces_each(self, texts: list[str]) -> list[bytes]:
        """:meth:`pieces` of the texts ``texts`` joined, each text encoded on its own, never joined as one: a text
        with one character past Latin-1 costs two or four bytes a character, and so would the whole join."""
        held = self.held
        if not held:
            return [utf8(text) for text in texts if text]
        self.held = []
        runs = iter(held)
        out: list[bytes] = []
        marks = 0
        for text in texts:
            marks += _fill_marks(text, runs, out)
        if marks != len(held):  # (a mark lost or one in the text: a bug in a target)
            raise AssertionError(f"{len(held)} runs of pieces held, {marks} marks in the texts")
        return out

    def write_all(self, events: list[Unified]) -> list[str]:
        """:meth:`write` of each event, in order: a run of text or reasoning deltas the target writes as
        :meth:`text_run` says is written in compiled code where it is built, straight into UTF-8 (the same bytes),
        and held (:meth:`pieces` gives it in the place of its :data:`HELD` mark); where another block is open (or
        none), :meth:`open_run` opens the run's block first."""
        if len(events) < 2:  # (a run of one costs more than its write)
            return [self.write(events[0])] if events else []
        if _write_texts is None:
            return [self.write(event) for event in events]
        out: list[str] = []  # (out.append called as such: compiled, a direct list append)
        index, end = 0, len(events)
        while index < end:
            event = events[index]
            kind = event.type
            if kind in _RUN_KINDS and self._flowing:
                run = self.text_run(kind)
                if run is None and event.text and event.signature is None and event.citations is None:
                    opened = self.open_run(kind)  # the block the delta goes to, opened as write() would open it
                    if opened is not None:
                        if opened:
                            out.append(opened)
                        run = self.text_run(kind)
                if run is not None:
                    head, tail, parts, seq, seq_end = run
                    data, after, written = _write_texts(events, index, kind, head, tail, parts, seq, seq_end)
                    if after > index:
                        if written:
                            if len(data) < RUN_HELD_FROM and data.isascii():
                                out.append(data.decode())  # (ASCII: decoded as a copy, joined with the rest)
                            else:
                                self.held.append([data])
                                out.append(HELD)
                            self.wrote_texts(written)
                        index = after
                        continue
            out.append(self.write(event))
            index += 1
        return out

    def text_run(self, kind: str) -> Optional[TextRun]:
        """How the target writes a ``kind`` delta (``text_delta`` or ``reasoning_delta``) now, where that is
        ``head + quoted text + tail`` (then, where ``seq`` is an int, the delta's sequence number, counting up from
        ``seq``, and ``seq_end``) and changes nothing but ``parts``, where the text is appended (None: kept
        nowhere) and the sequence number (see :meth:`wrote_texts`): ``(head, tail, parts, seq, seq_end)``; None
        where the next delta does more (opens a block ...), and in a target that says nothing (:meth:`write`
        writes each delta)."""
        return None

    def open_run(self, kind: str) -> Optional[str]:
        """Where :meth:`text_run` says None for a ``kind`` delta because another block is open (or none is): open
        the block that delta goes to, as writing it would (:meth:`on_text` / :meth:`on_reasoning` first open it),
        and return the text that did; None in a target that has no such step."""
        return None

    def wrote_texts(self, count: int) -> None:
        """``count`` deltas were written as :meth:`text_run` said (what a target counts, it counts here)."""

    def write(self, event: Unified) -> str:
        """:meth:`encode` as text (what :func:`ssewire.transcode` joins for a chunk's events, then gives to
        :meth:`pieces`); a piece the target made as UTF-8 is a :data:`HELD` mark in it."""
        if self._flowing and event.signature is None and event.citations is None:  # the bulk of a stream
            kind = event.type
            if kind == "text_delta":
                return self.on_text(event.text) if event.text else ""
            if kind == "reasoning_delta":
                return self.on_reasoning(event.text) if event.text else ""
            if kind == "raw" and event.encrypted_reasoning is None:
                return self.on_raw(event) if self.writes_raw else ""
            if kind == "tool_call_delta" and event.arguments_delta:
                call = self.calls.get(event.tool_call_id)
                if call is not None and call.opened:
                    return self._fragment(call, event.arguments_delta)
        return self._write(event)

    def _write(self, event: Unified) -> str:
        kind = event.type
        if kind == "usage":
            if event.usage is not None:
                before = self.usage
                self._take_usage(event.usage)
                if self.failed and self.usage is not before:
                    self._usage_late = True  # (after the target's error: written only by a stop, or at the close)
            return ""
        if self.ended:
            self._lost_after_end(event)
            return ""
        out = "" if self.started else self._start()
        if self.stop is not None and kind != "done" and kind != "raw" and kind != "error":
            # (an error after the stop is written first, the stop after it: clients stop reading at the target's
            # end, so an error written after it would reach none of them)
            self._went_on = self.stop  # the response goes on (a second message): one target response holds
            self.stop = None  # both, and ends with this stop unless another comes
            self._flowing = True
        if kind == "text_delta":
            out += self.on_text(event.text) if event.text else ""
        elif kind == "reasoning_delta":
            out += self.on_reasoning(event.text) if event.text else ""
        elif kind == "tool_call_start":
            out += self._start_call(event)[1]
        elif kind == "tool_call_delta":
            call, out_start = self._start_call(event)
            out += out_start
            if event.arguments_delta:
                out += self._fragment(call, event.arguments_delta)
        elif kind == "tool_call_done":
            out += self._done_call(event)
        elif kind == "done":
            self.stop = event.stop_reason or "other"  # written by the next event that is not more content, or close()
            self._flowing = False
        elif kind == "raw":
            if self.writes_raw:
                out += self.on_raw(event)
        elif kind == "error":
            if event.usage is not None and self.usage is None:
                self._take_usage(event.usage)
            if not self.failed:
                self.failed = True
                out += self.on_error(event.error or {"type": "error", "message": ""})
        if event.signature is not None and kind not in _CALL_KINDS:  # (a call's: written by _start_call)
            out += self.on_signature(event.signature)
        if event.citations:
            out += self.on_citations(event.citations)
        if event.encrypted_reasoning is not None:
            out += self.on_encrypted_reasoning(event.encrypted_reasoning)
        return out

    def close(self) -> bytes:
        """The bytes that end the stream: the target's stop when the source stopped, else (unless the source already
        reported an error) the target's error for a truncated stream: never a clean stop."""
        return b"".join(self.close_pieces())

    def close_pieces(self) -> list[bytes]:
        """:meth:`close` as the pieces it joins (a large end made as UTF-8 is not copied again)."""
        if self.ended:
            return []
        out = "" if self.started else self._start()
        if self.stop is None and not self.failed:
            self.stop = self._went_on  # (content after a stop: the stream ended as collect() reads it, with that stop)
        if self.stop is not None:
            out += self._end()  # (which counts what the usage loses)
        else:
            if not self.failed:
                self.failed = True
                out += self.on_error(dict(TRUNCATED))
            if not self.ended:  # (a target whose error is its terminal event ended with it)
                self.ended = True
                self._flowing = False
                out += self.on_close()
            if self._usage_late and not self.usage_at_close:
                self.dropped["usage"] += 1
            self._count_usage_drops()
        held = self.held_citations()  # (held for a stop or an error written before they came)
        if held:
            self.dropped["citation"] += held
        if self.signature_at_done:  # (a target that writes a call whole at its end wrote none of a call never closed)
            cut = sum(1 for call in self.calls.values() if not call.closed and not call.server)
            if cut:
                self.dropped["incomplete_tool_call"] += cut
        return self.pieces(out)

    def _lost_after_end(self, event: Unified) -> None:
        """Count what ``event``, which came after the target's end, carried that :attr:`dropped` counts."""
        if event.signature is not None:
            self.dropped["signature"] += 1
        if event.citations:
            self.dropped["citation"] += len(event.citations)
        if event.encrypted_reasoning is not None:
            self.dropped["encrypted_reasoning"] += 1

    def held_citations(self) -> int:
        """How many citations the target holds to write with its stop or error (none by default)."""
        return 0

    def _end(self) -> str:
        stop = self.stop or "other"
        self.stop = None
        self._flowing = False
        unfinished = self._unfinished_calls(stop) if self.calls else []
        if unfinished:  # a clean stop would have the target's readers close them as complete calls
            self.dropped["stop_reason"] += 1
            error = {
                "type": "incomplete_tool_calls",
                "message": f"the response stopped ({stop}) with tool calls never finished",
                "incomplete_tool_calls": [{"id": call.id, "name": call.name} for call in unfinished],
            }
            out = "" if self.failed else self.on_error(error)
            self.failed = self.ended = True
            self._count_usage_drops()
            return out + self.on_close()
        if stop in _NOT_CLEAN and stop not in self.stops:  # no such stop in the target: its error, never a clean one
            out = "" if self.failed else self.on_error({"type": stop, "message": f"the response {stop}"})
            self.failed = True
            self.ended = True
            self._count_usage_drops()
            return out + self.on_close()
        self.ended = True
        if self.usage is not None:
            self._count_usage_drops()
        return self.on_done(stop, self._target_stop(stop))

    def _unfinished_calls(self, stop: str) -> list[Call]:
        """The client calls written but never finished when the stream stops with ``stop``, where that stop has
        the target's readers close the calls still open (as complete calls, with what arguments came); none for
        a target that writes a call whole at its end (it wrote none of them)."""
        if self.signature_at_done or not closes_calls(stop):
            return []
        return [call for call in self.calls.values() if not call.closed and not call.server]

    def _start(self) -> str:
        self.started = True
        self._flowing = True
        self._start_meta()
        return self.on_start()

    def _start_meta(self) -> None:
        """The response id and model: given, else the source's, else made up."""
        source = self.source
        if self.response_id is None:
            got = getattr(source, "response_id", None)
            self.response_id = got if isinstance(got, str) else self.id_prefix + os.urandom(12).hex()
        if self.model is None:
            got = getattr(source, "model", None)
            self.model = got if isinstance(got, str) else "unknown"

    def _start_call(self, event: Unified) -> tuple[Call, str]:
        """The call ``event`` is about, and the text that opened it (``""`` when it was already open).
        The signature an event of the call carries is written once: on the call where the target carries one
        there (a client call's, or any call's in a target with server calls, when the call opens), else by
        :meth:`on_signature` (a reasoning signature's place, or counted as dropped)."""
        call = self.calls.get(event.tool_call_id)
        if call is not None and call.closed and event.type == "tool_call_start":
            call = None  # a new call under a finished one's id: written as the new call it is
        if call is not None:
            opening = ""
            if call.name is None and event.tool_name is not None:
                call.name = event.tool_name
            if not call.opened and (call.name is not None or event.type == "tool_call_done"):
                opening = self._open_call(call)  # (its name came, or it ends without one: written as it is)
            signature = event.signature
            if signature is None or signature == call.signature:
                return call, opening
            call.signature = signature
            if self.signature_at_done and self._carries_signature_of(call):  # (the call is written at its end)
                return call, opening
            return call, opening + self.on_signature(signature)  # (the call's opening, its place for one, is written)
        call_id = event.tool_call_id if event.tool_call_id is not None else f"call_{len(self.calls)}"
        server = bool(event.server)
        call = Call(call_id, event.tool_name, 0, server)
        call.signature = event.signature
        self.calls[event.tool_call_id] = call
        out = ""
        if call.signature is not None and not self._carries_signature_of(call):
            out = self.on_signature(call.signature)
        if call.name is None and event.type != "tool_call_done":  # its name may come with its next fragment
            call.opened = False
            return call, out
        return call, out + self._open_call(call)

    def _open_call(self, call: Call) -> str:
        """Write ``call``'s opening (a client call's ``index``: its place among the client calls opened, in the
        order they open), then the fragments it held while it waited for its name."""
        call.opened = True
        if call.server:
            out = self.on_server_call(call)
        else:
            call.index = self.client_calls
            self.client_calls += 1
            out = self.on_call_start(call)
        pending = call.pending
        if pending:
            call.pending = None
            for text in pending:
                out += self._fragment(call, text)
        return out

    def _carries_signature_of(self, call: Call) -> bool:
        """Whether the target writes ``call``'s signature on the call itself."""
        return self.call_signatures and (not call.server or self.carries_server_calls)

    def _fragment(self, call: Call, text: str) -> str:
        call.streamed = True
        if not call.opened:  # (held until its name comes)
            if call.pending is None:
                call.pending = []
            call.pending.append(text)
            return ""
        if call.server:
            return self.on_server_arguments(call, text)
        return self.on_call_arguments(call, text)

    def _done_call(self, event: Unified) -> str:
        call, out = self._start_call(event)
        call.closed = True
        if not call.streamed:  # sent whole: its arguments as one fragment
            whole = event.arguments_raw
            if whole is None:
                whole = dumps(event.arguments) if event.arguments is not None else ""
            if whole:
                out += self._fragment(call, whole)
        if call.server:
            return out + self.on_server_done(call, event)
        return out + self.on_call_done(call, event)

    def _take_usage(self, raw: dict[str, Any]) -> None:
        """The source's usage object ``raw`` as the :class:`~ssewire.Usage` written at the end: read by the source
        provider's own rules, else (another shape, or no source) as :meth:`Usage.from_raw` reads it; an object no
        provider recognises leaves the usage as it was."""
        read = getattr(getattr(self.source, "rules", None), "usage_from", None)  # (None: the registry's reading)
        usage = read(raw, False) if read is not None and type(raw) is dict else None
        if usage is None:
            usage = Usage.from_raw(raw)
        if usage.source is not None:
            self.usage = usage

    def _target_stop(self, stop: str) -> str:
        """The target's stop value for a unified one; counted in ``dropped`` when the target's reader would not
        read it back as the same unified reason."""
        native = self.stops.get(stop, self.stops.get("other", "other"))
        written = self.client_calls
        if self.signature_at_done and self.calls:  # (a stream's calls written whole at their end: the finished ones)
            written = self._finished_client_calls()
        back = client_stop(self.reads_stop.get(native, "other"), written > 0)
        if back != stop:
            self.dropped["stop_reason"] += 1
        return native

    def _finished_client_calls(self) -> int:
        return sum(1 for call in self.calls.values() if call.closed and not call.server)

    def _count_usage_drops(self) -> None:
        """At the end: count the usage counts the target has no member for (those the source reported non-zero)."""
        usage = self.usage
        if usage is None:
            return
        reasoning = usage.reasoning_tokens
        if reasoning and (
            not self.carries_reasoning_tokens
            or (self.reasoning_within_output and reasoning > (usage.output_tokens or 0))
        ):
            self.dropped["reasoning_tokens"] += 1
        if not self.carries_cache_writes and usage.cache_write_tokens:
            self.dropped["cache_write_tokens"] += 1

    # -- a whole response -----------------------------------------------------------------------------------------
    def render(self, result: Any) -> dict[str, Any]:
        """The target's non-streaming response body for a finished :class:`~ssewire.StreamResult` (what a gateway
        answers ``stream: false`` with from a streaming upstream): its text, reasoning, closed calls (incomplete
        ones never), stop and usage. A result that ended in an error (a truncated stream included) gives the
        target's error body instead: answer it with an error status. What the body cannot carry is counted in
        :attr:`dropped` as the stream would count it (an error body carries none of the signatures, citations,
        encrypted reasoning, server calls and usage: each is counted; no body carries the incomplete calls)."""
        if self.response_id is None:
            self.response_id = result.response_id
        if self.model is None:
            self.model = result.model
        self._start_meta()
        self.usage = result.usage if result.usage is not None and result.usage.source is not None else None
        self.client_calls = len(result.client_tool_calls)
        self.dropped["incomplete_tool_call"] += len(result.incomplete_tool_calls)  # (no body has a place for them)
        error = result.error
        stop = result.stop_reason or "other"
        if error is None and stop in _NOT_CLEAN and stop not in self.stops:
            error = {"type": stop, "message": f"the response {stop}"}
        if error is not None:
            dropped = self.dropped
            dropped["signature"] += len(result.signatures)
            dropped["citation"] += len(result.citations)
            dropped["encrypted_reasoning"] += len(result.encrypted_reasoning)
            dropped["server_tool_call"] += len(result.server_tool_calls)
            dropped["usage"] += int(self.usage is not None)
            return self.error_body(error)
        if not self.carries_server_calls:
            self.dropped["server_tool_call"] += len(result.server_tool_calls)
        if not self.carries_encrypted_reasoning:
            self.dropped["encrypted_reasoning"] += len(result.encrypted_reasoning)
        self._count_usage_drops()
        return self.body(result, self._target_stop(stop))

    def body(self, result: Any, native: str) -> dict[str, Any]:
        """The target's response body (``native``: the target's stop value)."""
        raise NotImplementedError

    def error_body(self, error: Mapping[str, Any]) -> dict[str, Any]:
        """The target's error response body."""
        raise NotImplementedError

    # -- what a target writes ------------------------------------------------------------------------------------
    def on_start(self) -> str:
        """The target's opening (the response's id, model and creation time are known)."""
        return ""

    def on_text(self, text: str) -> str:
        raise NotImplementedError

    def on_reasoning(self, text: str) -> str:
        raise NotImplementedError

    def on_call_start(self, call: Call) -> str:
        raise NotImplementedError

    def on_call_arguments(self, call: Call, text: str) -> str:
        raise NotImplementedError

    def on_call_done(self, call: Call, event: Unified) -> str:
        raise NotImplementedError

    def on_server_call(self, call: Call) -> str:
        """A call the provider runs itself: counted as dropped unless the target has a shape for it."""
        self.dropped["server_tool_call"] += 1
        return ""

    def on_server_arguments(self, call: Call, text: str) -> str:
        return ""

    def on_server_done(self, call: Call, event: Unified) -> str:
        return ""

    def on_signature(self, signature: str) -> str:
        """A reasoning signature not carried by a call: counted as dropped unless the target carries it."""
        self.dropped["signature"] += 1
        return ""

    def on_encrypted_reasoning(self, secret: str) -> str:
        """A reasoning item's encrypted reasoning: counted as dropped unless the target carries it."""
        self.dropped["encrypted_reasoning"] += 1
        return ""

    def on_raw(self, event: Unified) -> str:
        """A ``raw`` event, in a target that :attr:`writes_raw`: what it writes of it."""
        return ""

    def on_citations(self, citations: list[Any]) -> str:
        """Citations: counted as dropped unless the target carries them."""
        self.dropped["citation"] += len(citations)
        return ""

    def on_done(self, stop: str, native: str) -> str:
        raise NotImplementedError

    def on_error(self, error: Mapping[str, Any]) -> str:
        """The target's error (a target whose error is its terminal event sets ``ended``)."""
        raise NotImplementedError

    def on_close(self) -> str:
        """What ends a stream that failed without a stop (after :meth:`on_error`)."""
        return ""


class Encoder(Writer):
    """Unified events in, one target's wire bytes out (see the module docstring for the contract): ``Encoder(to,
    ...)`` makes the encoder of target ``to`` (see :data:`ssewire.encoders.ENCODERS`), an instance of that target's
    own class (a subclass of this one and of the target's writer), which takes no ``to``.

    Options every target takes: ``model`` and ``response_id`` (else the source's, else made up), ``created``
    (Unix seconds; else now) and ``source`` (the normaliser reading the stream, for its id and model); a target's
    own (``include_usage`` ...) are its class's, and any other is a ``TypeError``.
    """

    __slots__ = ()

    def __new__(cls, to: Optional[str] = None, **options: Any) -> Encoder:
        if cls is Encoder:
            if to is None:
                raise TypeError("Encoder() needs the target: Encoder(to, ...)")
            cls = _registry()(to)
        make = _MAKERS.get(cls)
        if make is None:  # (the first writer in its MRO makes one: compiled, only a writer's own __new__ may)
            writer = next(base for base in cls.__mro__ if issubclass(base, Writer) and not issubclass(base, Encoder))
            make = _MAKERS[cls] = writer.__new__
        return make(cls)


#: Each encoder class's allocator (its writer's ``__new__``).
_MAKERS: dict[type, Callable[[type], Any]] = {}


def url_citations(encoder: Writer, citations: list[Any]) -> list[Any]:
    """The citations of ``citations`` that name a URL (what every target that carries citations can say); the
    others are counted in ``encoder.dropped``."""
    kept = [c for c in citations if isinstance(getattr(c, "url", None), str)]
    if len(kept) < len(citations):
        encoder.dropped["citation"] += len(citations) - len(kept)
    return kept


def arguments(call: Any) -> str:
    """A closed :class:`~ssewire.ToolCall`'s argument string: the one the provider sent, else its arguments as
    compact JSON."""
    if call.arguments_raw is not None:
        return str(call.arguments_raw)
    return dumps(call.arguments if call.arguments is not None else {})


def error_parts(error: Mapping[str, Any]) -> tuple[str, str]:
    """``(type, message)`` of a unified error dict (both strings)."""
    kind = error.get("type")
    message = error.get("message")
    return (kind if isinstance(kind, str) else "error"), (message if isinstance(message, str) else "")
