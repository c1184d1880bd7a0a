"""The finished result of a stream, built incrementally from unified events.

``Accumulator().add(event)`` for each :class:`~ssewire.Unified` event, then ``.result`` gives a
:class:`StreamResult`. Building is linear in the stream: text parts and argument fragments are joined once.

The response id and model are the normaliser's (:meth:`Accumulator.adopt_meta`: ``collect(iter_unified(...))``, the
tap and the batch rows read them so). Events handed over without their normaliser (a plain list) are read for them
instead, by the provider whose payload the first recognised one is: recognition runs until a provider claims a
payload, then only that provider's ``meta_from`` reads the next ones, until the id and model are known.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable, Optional

from .citations import Citation
from .events import Unified
from .normalizers._fast.typed import TextSink
from .normalizers._fast.typed import take_texts as _take_texts
from .normalizers.contract import Normalizer
from .normalizers.providers import ENTRIES
from .normalizers.tool_calls import decode_arguments
from .usage import Usage

if TYPE_CHECKING:
    from .cost import Cost

__all__ = ["DELTA_KINDS", "Accumulator", "StreamResult", "ToolCall", "collect"]

_TEXTS = frozenset({"text_delta", "reasoning_delta"})
_JOIN_EVERY = 4096  # deltas held as separate strings before they are joined into one

#: The events that carry a piece of the answer (what time-to-first-token and the gaps between tokens measure).
DELTA_KINDS = frozenset({"text_delta", "reasoning_delta", "tool_call_start", "tool_call_delta"})


class ToolCall:
    """One tool call: ``arguments`` parsed, ``arguments_raw`` the JSON string they came from (``None`` where the
    provider sent an object), ``server`` True when the provider executed it itself.

    A call whose argument string is not a JSON object has ``arguments`` None and ``arguments_error`` saying why.
    An incomplete call (never closed by the provider) has ``complete`` False, ``arguments`` None and
    ``arguments_raw`` the text that arrived.
    """

    __slots__ = ("_fragments", "arguments", "arguments_error", "arguments_raw", "complete", "id", "name", "server")

    def __init__(
        self,
        id: Optional[str],  # noqa: A002
        name: Optional[str],
        arguments: Optional[dict[str, Any]] = None,
        arguments_raw: Optional[str] = None,
        server: bool = False,
        *,
        arguments_error: Optional[str] = None,
        complete: bool = True,
    ) -> None:
        self.id = id
        self.name = name
        self.arguments = arguments
        self.arguments_raw = arguments_raw
        self.server = server
        self.arguments_error = arguments_error
        self.complete = complete
        self._fragments: list[str] = []

    def _key(self) -> tuple[Any, ...]:
        return (
            self.id,
            self.name,
            self.arguments,
            self.arguments_raw,
            self.server,
            self.arguments_error,
            self.complete,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolCall):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        """The call as a JSON-ready dict."""
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "arguments_raw": self.arguments_raw,
            "arguments_error": self.arguments_error,
            "server": self.server,
            "complete": self.complete,
        }

    def __repr__(self) -> str:
        extra = "" if self.arguments_error is None else f", arguments_error={self.arguments_error!r}"
        extra += "" if self.complete else ", complete=False"
        return (
            f"ToolCall(id={self.id!r}, name={self.name!r}, arguments={self.arguments!r}, "
            f"arguments_raw={self.arguments_raw!r}, server={self.server!r}{extra})"
        )


class StreamResult:
    """Everything a stream said, in one object."""

    __slots__ = (
        "citations",
        "encrypted_reasoning",
        "error",
        "incomplete_tool_calls",
        "last_sequence",
        "model",
        "raw_stop_reason",
        "reasoning",
        "response_id",
        "service_tier",
        "signatures",
        "stop_reason",
        "text",
        "tool_calls",
        "usage",
    )

    def __init__(self) -> None:
        self.text = ""
        self.reasoning = ""
        self.tool_calls: list[ToolCall] = []  # closed by the provider (``tool_call_done``), in start order
        self.incomplete_tool_calls: list[ToolCall] = []  # started, never closed: never run these
        self.stop_reason: Optional[str] = None
        self.raw_stop_reason: Optional[str] = None
        self.usage: Optional[Usage] = None
        self.error: Optional[dict[str, Any]] = None
        self.signatures: list[str] = []
        #: each finished reasoning item's encrypted reasoning (the Responses API's ``encrypted_content``), in order:
        #: what a client sends back to continue the reasoning
        self.encrypted_reasoning: list[str] = []
        self.citations: list[Citation] = []  # every provider's citations, in stream order (see ssewire.citations)
        self.response_id: Optional[str] = None
        self.model: Optional[str] = None
        self.last_sequence: Optional[int] = None  # resume cursor: the last sequence_number seen
        self.service_tier: Optional[str] = None  # the tier the provider says served the request (it sets prices)

    @property
    def client_tool_calls(self) -> list[ToolCall]:
        """Closed calls the client must execute (``server`` false); incomplete calls are never among them."""
        return [c for c in self.tool_calls if not c.server]

    @property
    def server_tool_calls(self) -> list[ToolCall]:
        """Calls the provider executed itself."""
        return [c for c in self.tool_calls if c.server]

    @property
    def usage_provenance(self) -> str:
        """``"reported"`` (the provider's final usage), ``"partial"`` (the best seen before the stream was cut) or
        ``"absent"`` (the stream reported none)."""
        return "absent" if self.usage is None else self.usage.provenance

    @property
    def cost(self) -> Optional[float]:
        """The cost the provider reported in the stream's usage (see :attr:`Usage.cost`), else None. The whole
        cost, computed from a price table and checked against this figure, is :meth:`price`'s."""
        return None if self.usage is None else self.usage.cost

    def price(
        self,
        model: Optional[str] = None,
        provider: Optional[str] = None,
        at: Optional[datetime] = None,
        *,
        strict: bool = False,
    ) -> Optional[Cost]:
        """What the stream cost, component by component in exact USD: :func:`ssewire.cost.price` of this result
        (the price table is the extra ``prices``; without it only a provider-reported figure is known). None when
        the stream cannot be priced (``strict=True``: :class:`~ssewire.cost.Unpriced` says why)."""
        from .cost import price

        return price(self, model, provider, at, strict=strict)

    @property
    def last_signature(self) -> Optional[str]:
        """The most recent reasoning signature, or None."""
        return self.signatures[-1] if self.signatures else None

    def to_dict(self, *, with_raw: bool = True) -> dict[str, Any]:
        """The result as a JSON-ready dict: every field, calls and citations as dicts, ``usage`` as
        :meth:`Usage.to_dict` (``raw`` usage and citation objects left out unless ``with_raw``)."""
        usage = None if self.usage is None else self.usage.to_dict()
        if usage is not None and not with_raw:
            del usage["raw"]
        return {
            "text": self.text,
            "reasoning": self.reasoning,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "incomplete_tool_calls": [call.to_dict() for call in self.incomplete_tool_calls],
            "stop_reason": self.stop_reason,
            "raw_stop_reason": self.raw_stop_reason,
            "usage": usage,
            "usage_provenance": self.usage_provenance,
            "cost": self.cost,
            "error": self.error,
            "signatures": list(self.signatures),
            "encrypted_reasoning": list(self.encrypted_reasoning),
            "citations": [citation.to_dict(with_raw=with_raw) for citation in self.citations],
            "response_id": self.response_id,
            "model": self.model,
            "last_sequence": self.last_sequence,
            "service_tier": self.service_tier,
        }

    def __repr__(self) -> str:
        return (
            f"StreamResult(text={self.text!r}, reasoning={self.reasoning!r}, tool_calls={self.tool_calls!r}, "
            f"stop_reason={self.stop_reason!r}, raw_stop_reason={self.raw_stop_reason!r}, usage={self.usage!r}, "
            f"error={self.error!r})"
        )


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
                tier = service_tier(event.raw, event.usage)
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
        add = self.add
        inline = 0
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
                add(events[index])
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
                    add(event)
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


def _claimant(obj: dict[str, Any]) -> Optional[type[Normalizer]]:
    """The normaliser class that claims payload ``obj`` (the detectable providers, in the registry's order), as
    :func:`ssewire.normalizers.providers.meta_from` picks it; None when none does."""
    for entry in _DETECTABLE:
        if entry.cls.rules.claims(obj):
            return entry.cls
    return None


_DETECTABLE = tuple(entry for entry in ENTRIES if entry.detect)


def collect(events: Iterable[Unified]) -> StreamResult:
    """Consume ``events`` and return the finished :class:`StreamResult`."""
    accumulator = Accumulator()
    into = getattr(events, "collect_into", None)  # iter_unified(): the events of each chunk go straight in
    if into is not None and into(accumulator):
        return accumulator.result
    accumulator.take(events)
    return accumulator.result
