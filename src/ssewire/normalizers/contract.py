"""The provider contract: what every normaliser is, holds and answers, and the one way a normaliser hands its
stream to another.

A normaliser turns one stream's framed events into :class:`~ssewire.Unified` events, holding that stream's state
(one instance per stream): :meth:`Normalizer.normalize` takes the events of one chunk (the hot path: the stream
glue calls it once per chunk), and calling it on one event is ``normalize((ev,))``; the stream glue
(:class:`~ssewire.StreamDecoder`), the tap, resume and the result builder read only what this contract names.

What a provider module writes: :meth:`Normalizer.payload` (one decoded payload -> its events) and these class
attributes; everything else here is machinery it inherits.

- ``provider``: the registry name (``"openai"``, ``"anthropic"`` ...; the registry takes it from the class);
  ``terminal``: the name of the event that ends a complete stream, for the truncation message.
- ``rules``: its :class:`Recognition` subclass, the rules the registry asks before any stream exists, apart from
  the stream behaviour: :meth:`Recognition.claims` -- whether a decoded payload is this provider's
  (auto-detection and the routing of xAI / OpenAI streams consult it, in the registry's order);
  :meth:`Recognition.claims_error` -- the same for a bare error payload, which any provider could have sent;
  :meth:`Recognition.usage_from` -- the provider's usage object as a :class:`~ssewire.Usage` (``None`` when the
  object is not this provider's shape); :meth:`Recognition.meta_from` -- the response id and model a payload
  names. ``names_response_id`` / ``names_model``: False for a provider that never names one (Ollama no id, Cohere
  no model), so nothing waits for it.
- ``stops``: the provider's stop reasons -> unified ones, read by :meth:`Normalizer.stop_for` (with the one
  client-call rule, :func:`.common.client_stop`).
- ``delta_rule`` (optional, for speed): the compiled delta reader's rule for the plainest payloads; the shared
  :meth:`Normalizer.normalize` reads by each instance's own copy while :meth:`Normalizer.reads_deltas`, with
  ``delta_notes`` / :meth:`Normalizer.absorb` for the state those payloads set and ``_reader_calls`` (the
  ``open`` dict of its :class:`~.tool_calls.CallTable`) for argument deltas.

State (read by the glue; written only by the normaliser itself):

- ``done``: the stream needs no truncation error (its terminal event, or an in-stream error, arrived);
  ``finished``: its terminal event arrived;
- ``usage``: the provider's latest usage object (a dict, cumulative where the provider is);
- ``response_id``, ``model``: what the stream says it is (``None`` until it says); ``last_sequence``: the
  provider's ordering cursor (OpenAI ``sequence_number``), for resume.

Into an accumulator: :meth:`Normalizer.normalize_into` gives the events of a chunk straight to an
:class:`~ssewire.Accumulator` (what ``collect()`` and the tap need); where the compiled delta reader runs, the text of
text and reasoning deltas goes to it without an event being made at all.

End of stream: :meth:`Normalizer.finish` returns what the stream still owes: nothing when ``done``, else one
``stream_truncated`` error listing :meth:`Normalizer.incomplete_tool_calls` (calls never closed get no
``tool_call_done``).

Delegation: a :class:`DelegatingNormalizer` may set ``delegate`` to another normaliser (xAI per endpoint,
OpenAI to its Chat Completions twin, Gemini to the Interactions normaliser, ``auto`` once detected). From then on
every piece of state above is the delegate's, so the glue always sees one state; while the delegate is a
``fast_delegates``, its fast paths read the events the delegating normaliser would only route to it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Generic, Mapping, Optional, Sequence, TypeVar, Union

from .._json import FIRST_ERRORS, TOO_DEEP_MESSAGE, Text, loads_first, loads_retry
from ..events import LazyPayload, SSEEvent, Unified, Utf8Event, new_done, new_event
from ..usage import Usage, usage_counts
from ._fast import typed
from ._fast.utf8 import LARGE
from .common import client_stop, error_object, error_payload, too_deep_event, truncated_event, with_incomplete
from .tool_calls import CallTable, OpenCall, closes_calls

if TYPE_CHECKING:
    from ..result import Accumulator as Sink
    from ._fast.typed import TakeDeltas

__all__ = ["DelegatingNormalizer", "Normalizer", "Recognition", "not_a_payload", "payload_with_text"]

_NOT_JSON = object()
_SELECTED: Any = None  # (the selected module of ssewire._decoding's twins: imported on first use)


def payload_with_text(normalizer: Normalizer, obj: dict[str, Any], event: Optional[str], data: Any) -> list[Unified]:
    """``normalizer.payload(obj, event)`` with the payload's text ``data`` at hand as ``normalizer._data`` (see
    :attr:`Normalizer.reads_text`)."""
    normalizer._data = data
    try:
        return normalizer.payload(obj, event)
    finally:
        normalizer._data = None


def not_a_payload(obj: Any) -> TypeError:
    """The error of a :meth:`Normalizer.payload` given anything but a dict (``raise not_a_payload(obj)``): what a
    payload is read with, dict's own methods, takes nothing else (compiled, they would fail with a SystemError)."""
    return TypeError(f"a payload is a dict, not {type(obj).__name__}")


def _twin_of(accumulator: Any) -> Any:
    """The module of ``ssewire._decoding``'s twins whose accumulator ``accumulator`` is (None: the selected one),
    where the normaliser's reading loop lives beside the accumulator it feeds (it imports this module: imported
    here on first use). The Python twin is looked up, never imported: an accumulator can only be its instance once
    something imported it (importing it costs a process ~10 ms: batch workers, the command line)."""
    global _SELECTED
    python = sys.modules.get("ssewire._decoding_py")
    if python is not None and type(accumulator) is python.Accumulator:
        return python
    if _SELECTED is None:
        from .. import _decoding

        _SELECTED = _decoding
    return _SELECTED


def _retry_loads(data: Text) -> Any:
    """The second step of :func:`ssewire._json.loads` after ``loads_first`` rejected ``data``: the decoded value,
    ``_TOO_DEEP`` (valid JSON nested deeper than the decoders read), or ``_NOT_JSON``."""
    if loads_retry is None:
        return _NOT_JSON
    try:
        return loads_retry(data)
    except ValueError as exc:
        return _TOO_DEEP if str(exc) == TOO_DEEP_MESSAGE else _NOT_JSON


_TOO_DEEP = object()


class Recognition:
    """A provider's recognition rules: how the registry (auto-detection, bare errors, ``Usage.from_raw``, the result
    builder's metadata) recognises its payloads before any stream of it exists. Class methods only, no state; each
    provider module writes one subclass, which its normaliser names as ``rules`` (a provider with the same rules
    names the same class, one without any names none: every rule then recognises nothing)."""

    #: The registry name of the provider the rules recognise (the ``source`` of the usage they read).
    provider: ClassVar[str] = ""

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """True when the decoded payload ``obj`` (with SSE event name ``event``) is one this provider sends."""
        return False

    @classmethod
    def claims_error(cls, obj: dict[str, Any]) -> bool:
        """True when an error payload that no provider claims has this provider's error shape."""
        return False

    @classmethod
    def streams_on(cls, obj: dict[str, Any]) -> bool:
        """True when a body that is only the JSON object ``obj`` is the first chunk of a stream cut after it (it says
        more follows), never a whole, non-streaming response."""
        return False

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """The :class:`~ssewire.Usage` this provider's usage object describes; ``None`` for another shape."""
        return None

    @classmethod
    def audio(cls, raw: dict[str, Any]) -> tuple[int, int, int]:
        """The audio in a usage object this provider read, billed at rates of its own: prompt audio tokens, those
        of them read from a cache, generated audio tokens (each a share of the usage's input, cached input and
        output counts); none unless the provider says."""
        return (0, 0, 0)

    @classmethod
    def media(cls, raw: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
        """Every modality billed at rates of its own in a usage object this provider read, by name (``audio``,
        ``image``, ``video``): as :meth:`audio` counts audio, each a share of the input, cached input and output
        counts; the audio of :meth:`audio` only, unless the provider says."""
        return {"audio": cls.audio(raw)}

    @classmethod
    def billed(cls, usage: Usage) -> Usage:
        """The counts this provider bills for ``usage`` (one it read), where they are not the ones its usage object
        says were used (what a price is computed from): ``usage`` itself unless the provider says otherwise."""
        return usage

    @classmethod
    def counted(
        cls,
        raw: dict[str, Any],
        partial: bool,
        input_tokens: Optional[int],
        output_tokens: Optional[int],
        cached: Optional[int] = None,
        written: Optional[int] = None,
    ) -> Usage:
        """The :class:`~ssewire.Usage` of a provider that reports no reasoning count (``source``: this provider;
        ``None``: a count it does not report)."""
        return usage_counts(input_tokens, output_tokens, cached, written, None, raw, partial, cls.provider)

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """``(response id, model)`` named by one payload of this provider (``None`` where it names none)."""
        return None, None


class Normalizer:
    """Base class of every provider normaliser (see the module docstring for the contract).

    Decodes each event's JSON and hands dicts to :meth:`payload`; non-JSON data becomes ``raw`` (never an
    exception) and ``[DONE]`` goes to :meth:`sentinel`.
    """

    provider: ClassVar[str] = ""
    #: Human name of the terminal event, for the truncation message.
    terminal: ClassVar[str] = "terminal event"
    #: Whether the provider's payloads name a response id, and a model (False: never).
    names_response_id: ClassVar[bool] = True
    names_model: ClassVar[bool] = True
    #: The provider's stop reasons -> unified stop reasons, read by :meth:`stop_for` (a value not in it: ``other``).
    stops: ClassVar[Mapping[str, str]] = {}
    #: The compiled delta reader's rule for the provider's plainest payloads (:func:`._fast.typed.delta_rule`; None:
    #: every payload is decoded); :meth:`normalize` reads by the instance's own copy, ``_delta_rule``, so that what
    #: the reader learns of one stream stays with that stream.
    delta_rule: ClassVar[Any] = None
    #: How many notes the rule reports (its ``notes``): the reader reports them in ``_notes`` (two items per note),
    #: which :meth:`absorb` reads after each run of payloads the reader took.
    delta_notes: ClassVar[int] = 0
    #: Whether :meth:`reads_deltas` can turn False within a batch (it is then asked after each decoded event).
    reading_can_stop: ClassVar[bool] = False
    #: Whether it can turn False only at an event that makes a ``done`` or no event (it is then asked only after
    #: those).
    stops_reading_at_done: ClassVar[bool] = False
    #: Whether the typed fast path (:attr:`fast`) takes payloads the delta rule does not describe. False: it reads
    #: only the rule's shape, so a payload the compiled reader declined goes straight to the full decode (a typed
    #: decode that fails costs more than the full one), but one it left for its size (over
    #: ``typed.READER_MAX_CHARS`` characters: the fast path reads a large payload with less memory).
    fast_beyond_rule: ClassVar[bool] = True
    #: The provider's recognition rules (:class:`Recognition`), apart from its stream behaviour.
    rules: ClassVar[type[Recognition]] = Recognition
    #: Whether :class:`~ssewire.StreamDecoder` normalises a stream's first event before the rest of its chunk: what
    #: that payload says decides how the rest is read (a chat stream's id and model, an Ollama endpoint, the
    #: delegate whose reader takes the rest). False where the rest is read alike either way.
    first_event_alone: ClassVar[bool] = True
    #: Whether the class reads a batch with :meth:`Normalizer.normalize` itself (it does not override it): then
    #: :meth:`normalize_into` does what that does, without its call (set for every subclass).
    _reads_own: ClassVar[bool] = True
    #: Whether the class gives events to an accumulator as :meth:`normalize_into` does (it does not override it).
    _own_into: ClassVar[bool] = True
    #: Whether the class reads a chunk of deltas as :meth:`read_deltas_into` does (it does not override it).
    _own_deltas: ClassVar[bool] = True
    #: Whether the class decodes a framed event as :meth:`decoded` does (it does not override it): the reading
    #: loops then take its common path in compiled code (``ssewire._decoding``'s ``decode_event``).
    _own_decoded: ClassVar[bool] = True
    #: Whether the class is a :class:`DelegatingNormalizer` that reads a batch and a chunk of deltas as that class
    #: does (it overrides neither :meth:`normalize` nor :meth:`read_deltas_into`): with no delegate yet, it reads
    #: them as :class:`Normalizer` does (set for every subclass of :class:`DelegatingNormalizer`).
    _delegating: ClassVar[bool] = False
    #: Whether :meth:`payload` reads its payload's text too: the full decode (here or compiled) then sets ``_data``
    #: to it (a ``str``, or the UTF-8 of a payload held as such) while :meth:`payload` runs (None otherwise, and for
    #: a payload decoded without a member: see :meth:`held_skip`).
    reads_text: ClassVar[bool] = False
    _data: Union[str, bytes, None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._reads_own = cls.normalize is Normalizer.normalize
        cls._own_into = cls.normalize_into is Normalizer.normalize_into
        cls._own_deltas = cls.read_deltas_into is Normalizer.read_deltas_into
        cls._own_decoded = cls.decoded is Normalizer.decoded

    # The stream's state, each at its start value (the class's) until first set: a normaliser is made for each
    # stream, and setting what most streams never change would cost more than reading it.
    #: True once the terminal event (or an in-stream error) was seen.
    done: bool = False
    #: True once the terminal event was seen.
    finished: bool = False
    #: The best usage object seen so far.
    usage: Optional[dict[str, Any]] = None
    #: The response (message, interaction) id, and the model, the stream names.
    response_id: Optional[str] = None
    model: Optional[str] = None
    #: The last ordering cursor seen.
    last_sequence: Optional[int] = None
    _into: Optional[Sink] = None  # the accumulator normalize_into() is feeding, for normalize_reading()
    #: The open tool calls by key, for a rule that reads argument deltas (None: it reads none).
    _reader_calls: Optional[dict[Any, OpenCall]] = None

    def __init__(self) -> None:
        """The machinery's own per-stream state: the delta reader and its copy of the rule (what it learns of this
        stream stays with this stream: ``typed.own_rule``)."""
        self._take: Optional[TakeDeltas] = typed.take_deltas  # the compiled delta reader, or None
        rule, notes = self.delta_rule, self.delta_notes
        self._delta_rule: Any = None if rule is None else rule.fresh()
        self._notes: Optional[list[Any]] = [None, None] * notes if notes else None

    # -- per event --------------------------------------------------------------------------------------------

    @property
    def fast(self) -> Optional[Callable[[SSEEvent], Optional[list[Unified]]]]:
        """The typed fast path (see :mod:`.typed`): ``fast(ev)`` gives the events of the payloads it owns and None
        for any other; None when typed decoding is off or the provider has none. A property: a bound method kept
        on the instance would be a reference cycle, holding every finished normaliser until the collector runs."""
        return None

    def __call__(self, ev: SSEEvent) -> list[Unified]:
        """The events of one framed event (``normalize((ev,))``)."""
        return self.normalize((ev,))

    def frame(self, message: Union[str, bytes, bytearray, dict[str, Any]]) -> list[Unified]:
        """The events of one message framed by the caller (a WebSocket frame, an event an SDK already decoded):
        its JSON text or bytes, or the decoded object. :class:`~ssewire.StreamDecoder` gives it the dicts it is
        fed in place of byte chunks."""
        if isinstance(message, dict):
            return self.payload(message)
        text = message.decode("utf-8", "replace") if isinstance(message, (bytes, bytearray)) else message
        return self(SSEEvent(None, text))

    def normalize(self, events: Sequence[SSEEvent]) -> list[Unified]:
        """The events of several framed events, in order: what :class:`~ssewire.StreamDecoder` calls once per
        chunk (the hot path). While :meth:`reads_deltas`, the payloads the :attr:`delta_rule` describes are read by
        the compiled delta reader (:meth:`normalize_reading`); every other event takes the typed fast path when it
        owns the payload, else :meth:`decoded`. The result is always the concatenation of :meth:`decoded` over the
        events."""
        out: list[Unified] = _twin_of(self._into).normalize_events(self, events)  # (its one home, compiled)
        return out

    def settled(self) -> Optional[Normalizer]:
        """The normaliser that reads every later event of this stream in this one's place (same events, same state:
        what :class:`~ssewire.StreamDecoder` hands the bulk of a stream to): this one; None while that is not
        known yet."""
        return self

    def reads_deltas(self) -> bool:
        """Whether the compiled delta reader may take the stream's payloads now (a payload it takes must change no
        state but what its notes and ``_reader_calls`` carry). Always, unless a provider says otherwise."""
        return True

    def absorb(self) -> None:
        """Keep the state the payloads the reader took set, from ``_notes`` (called after each run of them)."""

    def _normalize_decoding(self, events: Sequence[SSEEvent]) -> list[Unified]:
        """:meth:`normalize` without the delta reader: the typed fast path where it owns a payload, else
        :meth:`decoded` (``ssewire._decoding``'s ``normalize_decoding``)."""
        out: list[Unified] = _twin_of(None).normalize_decoding(self, events)
        return out

    def normalize_into(self, events: Sequence[SSEEvent], accumulator: Sink) -> None:
        """Give the events of several framed events to ``accumulator`` (an :class:`~ssewire.Accumulator`), in order:
        what :meth:`normalize` returns, except that the compiled delta reader hands it the text of text and
        reasoning deltas without making their events (once it has the stream's id and model)."""
        _twin_of(accumulator).normalize_into(self, events, accumulator)  # (the loop's one home, compiled)

    def read_deltas_into(self, events: list[SSEEvent], accumulator: Sink) -> int:
        """How many of ``events``, from the first, the compiled delta reader took now, given to ``accumulator`` as
        :meth:`normalize_into` gives them (the events it makes, the text of text deltas in the accumulator's sink):
        a chunk of deltas, the bulk of a stream, read without the rest of the reading path. 0 where the reader
        reads none of them now; the events from the one returned go to :meth:`normalize_into`."""
        taken: int = _twin_of(accumulator).read_deltas_into(self, events, accumulator)  # (its one home, compiled)
        return taken

    def normalize_reading(
        self,
        events: Sequence[SSEEvent],
        reader: Normalizer,
        still_reading: Optional[Callable[[], bool]] = None,
    ) -> list[Unified]:
        """:meth:`normalize` with the compiled delta reader of ``reader`` (this normaliser, or the delegate whose
        fast paths read its events): the events its rule describes are made by its ``_take`` (see :mod:`.typed`)
        without decoding their payloads, every other event by the typed fast path (:attr:`fast`; where
        ``reader.fast_beyond_rule`` is False, only for a payload too large for the reader) or :meth:`decoded`, in
        order. After each run of events the reader took, ``reader.absorb()`` keeps the state their payloads set
        (from its ``_notes``); argument deltas continue ``reader._reader_calls``. ``still_reading()``: asked after
        each decoded event whether the rule still applies (when it no longer does, the rest of the batch goes
        through :meth:`normalize`). Under :meth:`normalize_into`, every run and every decoded event goes to the
        accumulator as it is made (the text of a run through its sink) and the result is empty."""
        out: list[Unified] = _twin_of(self._into).normalize_reading(self, events, reader, still_reading)
        return out

    def stop_for(self, raw_stop: Optional[str], client_calls: bool) -> str:
        """The unified stop reason of a response the provider stopped with ``raw_stop``: its value in :attr:`stops`
        (``other`` when not there; ``end`` when ``None``, the provider named none), ``tool_use`` when that is
        ``end`` after client calls (:func:`.common.client_stop`)."""
        return client_stop("end" if raw_stop is None else self.stops.get(raw_stop, "other"), client_calls)

    def done_events(
        self, obj: Any, stop: str, raw_stop: Optional[str], calls: Optional[CallTable] = None
    ) -> list[Unified]:
        """The stream's one ``done`` (``stop`` unified, ``raw_stop`` the provider's), after closing the ``calls``
        still open unless ``stop`` cut the response off; the stream is finished."""
        out: list[Unified] = []
        if calls is not None and calls.open and closes_calls(stop):
            out += calls.close_all(obj)
        self.finished = self.done = True
        out.append(new_done(stop, raw_stop, obj))
        return out

    #: Whether an error event named the calls left open (see :meth:`incomplete_for_error`).
    _incomplete_told: bool = False  # (the class's until the first error sets the instance's)

    def incomplete_for_error(self) -> list[dict[str, Any]]:
        """The calls left open, for the error event that ends the stream: the first error names them, a later one
        none (each call is reported incomplete once, and a stream of many error payloads with many calls open costs
        one list, not one per error)."""
        if self._incomplete_told:
            return []
        self._incomplete_told = True
        return self.incomplete_tool_calls()

    def error_events(self, obj: dict[str, Any]) -> list[Unified]:
        """An in-stream error payload: its ``error`` event, carrying the best usage so far (as a truncation would)
        and the calls it left open; it ends the stream."""
        self.done = True
        usage = dict(self.usage) if self.usage else None
        payload = with_incomplete(error_payload(error_object(obj)), self.incomplete_for_error())
        return [Unified("error", error=payload, usage=usage, raw=obj)]

    def decoded(self, ev: SSEEvent) -> list[Unified]:
        """The events of one framed event by the full JSON decode: dicts go to :meth:`payload`, ``[DONE]`` to
        :meth:`sentinel`, anything else becomes ``raw``. A :class:`~ssewire.events.Utf8Event` is decoded from its
        UTF-8 (its text is never built), and it and a large ASCII payload (its own UTF-8) without the member
        :meth:`held_skip` names where that member is there."""
        utf8 = ev.utf8 if type(ev) is Utf8Event else None
        if utf8 is not None:
            data: Union[str, bytes] = utf8
        else:
            data = ev.data
            if data == "[DONE]":
                return self.sentinel(ev)
        if (utf8 is not None or (len(data) >= LARGE and data.isascii())) and typed.without_member is not None:
            skip = self.held_skip(ev.event)
            for path in skip if type(skip) is tuple else () if skip is None else (skip,):
                trimmed = typed.without_member(data, path)
                if trimmed is not None:
                    return self._decoded_without(ev, data, trimmed)
        try:
            obj = loads_first(data)
        except FIRST_ERRORS:
            obj = _retry_loads(data)
            if obj is _NOT_JSON:
                return self.not_json(ev)
            if obj is _TOO_DEEP:
                return [too_deep_event(ev)]
        if type(obj) is not dict:
            return [new_event("raw", {"event": ev.event, "data": obj})]
        if self.reads_text:
            return payload_with_text(self, obj, ev.event, data)
        return self.payload(obj, ev.event)

    def not_json(self, ev: SSEEvent) -> list[Unified]:
        """The events of a framed event whose data is no JSON (a payload cut by the end of the body, a server's
        own text): one ``raw`` event."""
        return [new_event("raw", {"event": ev.event, "data": ev.data})]

    def held_skip(self, event: Optional[str] = None) -> Any:
        """The member a large payload (held as UTF-8, or ASCII; its SSE event name ``event``) may be decoded without
        now (a ``typed.member_path``: one :meth:`payload` never reads, and the bulk of such payloads), or a tuple of
        them (the first that is there), or None (the whole payload is decoded)."""
        return None

    def _decoded_without(self, ev: SSEEvent, utf8: Union[str, bytes], trimmed: bytes) -> list[Unified]:
        """:meth:`decoded` of a large event (its UTF-8 or ASCII text ``utf8``) from ``trimmed``, that text without
        the :meth:`held_skip` member: the events of that payload, whose ``raw`` is the whole payload (decoded when
        read)."""
        try:
            obj = loads_first(trimmed)  # (the payload's own text, but a member written as null: valid JSON)
        except FIRST_ERRORS:  # (a number out of the fast decoder's range, a lone surrogate ...: as decoded() reads it)
            obj = _retry_loads(trimmed)
            if obj is _NOT_JSON:
                return self.not_json(ev)
            if obj is _TOO_DEEP:
                return [too_deep_event(ev)]
        if type(obj) is not dict:
            return [new_event("raw", {"event": ev.event, "data": obj})]
        out = self.payload(obj, ev.event)
        raw = LazyPayload(utf8)
        for event in out:
            if event._raw is obj:
                event._raw = raw
        return out

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one decoded payload (``event`` is the SSE event name, when the framing had one)."""
        raise NotImplementedError

    def sentinel(self, ev: SSEEvent) -> list[Unified]:
        """The ``[DONE]`` sentinel: swallowed unless a subclass gives it meaning."""
        return []

    # -- end of stream ----------------------------------------------------------------------------------------

    def flush(self) -> list[Unified]:
        """Events still owed at end of stream (none by default; never a ``tool_call_done``). Subclasses override."""
        return []

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls open now (started, never closed by the provider), as ``{"id", "name",
        "arguments_raw"}``. Subclasses that track calls override."""
        return []

    def expected_terminal(self) -> str:
        """What the truncation error names as the missing terminal event."""
        return self.terminal

    def finish(self, detail: str = "") -> list[Unified]:
        """End of stream: :meth:`flush`, then a ``stream_truncated`` error (listing the calls left open) unless the
        terminal event was seen. ``detail`` says how the stream ended, for the error message."""
        out = self.flush()
        if not self.done:
            self.done = True
            out.append(
                truncated_event(
                    self.provider, self.expected_terminal(), self.usage, self.incomplete_tool_calls(), detail
                )
            )
        return out


_T = TypeVar("_T")


class _Delegated(Generic[_T]):
    """One piece of contract state on a :class:`DelegatingNormalizer`: read from the delegate once there is one,
    else from the normaliser's own ``_<name>``. Writes go to the own ``_<name>``, or (``write_through``) to the
    delegate once there is one: ``done``, ``finished`` and ``usage`` are the stream's, whoever sets them."""

    def __init__(self, doc: str, write_through: bool = False) -> None:
        self.__doc__ = f"{doc} (the delegate's, when there is one)"
        self.write_through = write_through
        self.name = self.own = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.own = name, "_" + name

    def __get__(self, obj: Any, owner: Optional[type] = None) -> _T:
        if obj is None:
            return self  # type: ignore[return-value]  # the descriptor itself, looked up on the class
        delegate = obj.delegate
        value: _T = getattr(obj, self.own) if delegate is None else getattr(delegate, self.name)
        return value

    def __set__(self, obj: Any, value: _T) -> None:
        delegate = obj.delegate
        if self.write_through and delegate is not None:
            setattr(delegate, self.name, value)
        else:
            setattr(obj, self.own, value)


class DelegatingNormalizer(Normalizer):
    """A normaliser that may hand its stream to another one (``delegate``). Until it does, its state is its own
    (subclasses write ``_done``, ``_usage`` ... directly on hot paths); once a delegate is set, ``done``,
    ``finished``, ``usage``, ``response_id``, ``model``, ``last_sequence``, the open calls and the expected
    terminal event are the delegate's.

    While the delegate is an instance of one of :attr:`fast_delegates`, its fast paths (typed fast path, compiled
    delta reader) read this normaliser's events, the rest go through this normaliser's :meth:`payload` (its
    routing); before, its own."""

    #: The delegate classes whose fast paths take this normaliser's events while one of them is the delegate (the
    #: payloads those paths own need no routing); empty: only this normaliser's own.
    fast_delegates: ClassVar[tuple[type[Normalizer], ...]] = ()
    #: Whether the delegate can change within a stream: each decoded event then checks it is still the one whose
    #: fast paths read the batch (when it changed, the rest of the batch is read by the new one's).
    delegate_changes: ClassVar[bool] = False

    # Its own state, each at its start value (the class's) until first set (no delegate yet).
    delegate: Optional[Normalizer] = None
    _done = False
    _finished = False
    _usage: Optional[dict[str, Any]] = None
    _response_id: Optional[str] = None
    _model: Optional[str] = None
    _last_sequence: Optional[int] = None
    _reading_with: Optional[Normalizer] = None  # the delegate whose reader reads the batch now

    done = _Delegated[bool]("True once the terminal event (or an in-stream error) was seen.", write_through=True)
    finished = _Delegated[bool]("True once the terminal event was seen.", write_through=True)
    usage = _Delegated[Optional[dict[str, Any]]]("The best usage object seen so far.", write_through=True)
    response_id = _Delegated[Optional[str]]("The response (message, interaction) id.")
    model = _Delegated[Optional[str]]("The model the stream names.")
    last_sequence = _Delegated[Optional[int]]("The last ordering cursor seen.")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = DelegatingNormalizer
        cls._delegating = cls.normalize is own.normalize and cls.read_deltas_into is own.read_deltas_into

    def _followed(self) -> Optional[Normalizer]:
        """The delegate, when its fast paths read this normaliser's events."""
        delegate = self.delegate
        return delegate if delegate is not None and type(delegate) in self.fast_delegates else None

    def normalize(self, events: Sequence[SSEEvent]) -> list[Unified]:
        """:meth:`Normalizer.normalize` by the followed delegate's delta reader and typed fast path (see
        :attr:`fast_delegates`), routing every other event through this normaliser; else by its own."""
        out: list[Unified] = _twin_of(self._into).delegated_normalize(self, events)  # (its one home, compiled)
        return out

    def read_deltas_into(self, events: list[SSEEvent], accumulator: Sink) -> int:
        """:meth:`Normalizer.read_deltas_into` by the followed delegate's delta reader, or this normaliser's before
        there is one (as :meth:`normalize` reads them); 0 for a subclass that reads its events its own way."""
        if type(self).normalize is not DelegatingNormalizer.normalize:
            return 0
        taken: int = _twin_of(accumulator).delegated_deltas_into(self, events, accumulator)  # (its one home)
        return taken

    def _still_reading(self) -> bool:
        """Whether the delegate whose reader reads the batch is still the delegate, and still reads deltas."""
        reader = self._reading_with
        return reader is not None and self.delegate is reader and (not reader.reading_can_stop or reader.reads_deltas())

    @property
    def fast(self) -> Optional[Callable[[SSEEvent], Optional[list[Unified]]]]:
        """The followed delegate's typed fast path (see :attr:`fast_delegates`); checked per event when the delegate
        can change (:attr:`delegate_changes`)."""
        if not self.fast_delegates:
            return None
        if self.delegate_changes:
            return self._fast_if_followed
        delegate = self._followed()
        return None if delegate is None else delegate.fast

    def _fast_if_followed(self, ev: SSEEvent) -> Optional[list[Unified]]:
        delegate = self._followed()
        if delegate is None:
            return None
        fast = delegate.fast
        return None if fast is None else fast(ev)

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The delegate's open calls."""
        return [] if self.delegate is None else self.delegate.incomplete_tool_calls()

    def expected_terminal(self) -> str:
        """The delegate's terminal event, once there is a delegate."""
        return self.terminal if self.delegate is None else self.delegate.expected_terminal()


DelegatingNormalizer._delegating = True
