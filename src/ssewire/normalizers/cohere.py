"""Cohere v2 chat streams (``/v2/chat``, SSE: ``event:`` + ``data:`` blocks, then ``data: [DONE]``) -> Unified.

Contract (one instance per stream; every event made from a payload carries ``raw``; the ``message-start`` ``id`` is
the response id, Cohere names no model in the stream):

- ``content-delta`` -> ``text_delta`` for ``delta.message.content.text``, ``reasoning_delta`` for ``.thinking``
  (non-empty strings only, otherwise ``raw``); ``content-start`` / ``content-end``, ``message-start``,
  ``citation-end`` and unknown events -> ``raw``.
- ``citation-start`` -> ``raw`` carrying its citation (``delta.message.citations``) as one ``citation``
  :class:`~ssewire.citations.Citation` per source (:func:`cohere_citations`): ``cited_text`` its ``text`` (the
  answer's words), ``start`` / ``end`` (characters), ``url`` / ``title`` the source document's (or tool output's)
  fields of those names, ``raw`` the citation object.
- ``tool-plan-delta`` -> ``raw``: the tool plan is the model's announcement of the calls it is about to make, not
  its reasoning (Cohere streams thinking as ``content`` of type ``thinking``); its text stays in ``raw``.
- Tool calls are keyed by ``index``: ``tool-call-start`` (``delta.message.tool_calls`` with ``id`` and
  ``function.name``) -> ``tool_call_start`` (and a ``tool_call_delta`` when it already carries arguments), each
  non-empty ``tool-call-delta`` ``function.arguments`` -> ``tool_call_delta``, ``tool-call-end`` ->
  ``tool_call_done``. A call started at an index still open closes that call first.
- ``message-end`` -> ``usage`` (``delta.usage``: ``tokens`` are what the model used, ``billed_units`` what Cohere
  bills; both stay in ``raw``) then ``done``: ``raw_stop_reason`` = ``delta.finish_reason``; COMPLETE -> end
  (tool_use when client calls were made), TOOL_CALL -> tool_use, MAX_TOKENS -> max_tokens, STOP_SEQUENCE ->
  stop_sequence, ERROR -> failed, TIMEOUT -> incomplete, anything else -> other. Calls still open close unless the
  response was cut off. ``[DONE]`` after it means nothing.
- ``{"type": "error", ...}`` (or an SSE ``error`` event) -> ``error`` with the usage seen so far; it ends the stream.
- Usage: ``tokens.input_tokens`` is every prompt token (``cached_tokens`` among them), ``tokens.output_tokens`` every
  generated one; no reasoning count.
"""

from __future__ import annotations

from typing import Any, Optional

from ..citations import Citation
from ..events import Unified, new_event, new_usage
from ..usage import Usage, count
from ._fast import typed
from .common import key_of, str_or
from .contract import Normalizer, Recognition, not_a_payload
from .tool_calls import CallIds, CallTable, OpenCall

__all__ = ["COHERE_EVENTS", "COHERE_STOP", "CohereNormalizer", "CohereRules", "cohere_citations"]

#: Cohere ``finish_reason`` -> unified stop reason (anything else maps to ``other``).
COHERE_STOP: dict[str, str] = {
    "COMPLETE": "end",
    "TOOL_CALL": "tool_use",
    "MAX_TOKENS": "max_tokens",
    "STOP_SEQUENCE": "stop_sequence",
    "ERROR": "failed",
    "TIMEOUT": "incomplete",
}
#: The event types of a v2 chat stream.
COHERE_EVENTS = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
        "debug",
    }
)


_MESSAGE = ("delta", "message")
#: The events read without a decode: a ``content-delta`` whose ``content`` has a non-empty string ``text`` or
#: ``thinking`` (not both), a ``tool-call-delta`` with a non-empty string ``arguments`` for the open call at its
#: ``index``, and the events that are only ever ``raw`` (``content-start`` / ``content-end``, ``tool-plan-delta``,
#: ``citation-end``).
_DELTA_RULE = typed.delta_rule(
    (
        ("type",),
        (*_MESSAGE, "content", "text"),
        (*_MESSAGE, "content", "thinking"),
        (*_MESSAGE, "tool_calls", "function", "arguments"),
        ("index",),
    ),
    {
        "content-delta": ("content-delta", ((None, ((1, "text_delta"), (2, "reasoning_delta"))),)),
        "tool-call-delta": ("tool-call-delta", ((None, ((3, "tool_call_delta"),)),)),
        **{name: (name, ((None, ()),)) for name in ("content-start", "content-end", "tool-plan-delta", "citation-end")},
    },
    type_path=0,
    key_path=4,
    by_type=True,  # (the full decode dispatches on the payload's type)
)


def _message(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj["delta"]["message"]`` (an empty dict when the payload has none)."""
    delta = dict.get(obj, "delta")
    message = dict.get(delta, "message") if type(delta) is dict else None
    return message if type(message) is dict else {}


def cohere_citations(citation: dict[str, Any]) -> list[Citation]:
    """A ``citation-start`` citation (``start``, ``end``, ``text``, ``sources``) as one ``Citation`` per source
    (one without a source when it names none): ``cited_text`` its ``text`` (the answer's words), the span its
    ``start`` / ``end`` (characters), ``url`` / ``title`` the source's ``document`` (or ``tool_output``) ``url`` /
    ``title`` fields where they are strings, ``raw`` the citation object."""
    start, end, text = citation.get("start"), citation.get("end"), citation.get("text")
    start = start if type(start) is int else None
    end = end if type(end) is int else None
    text = text if type(text) is str else None
    sources = citation.get("sources")
    out: list[Citation] = []
    for source in sources if type(sources) is list else ():
        if type(source) is not dict:
            continue
        fields = source.get("document", source.get("tool_output"))
        fields = fields if type(fields) is dict else {}
        url, title = fields.get("url"), fields.get("title")
        out.append(
            Citation(
                "citation",
                url if type(url) is str else None,
                title if type(title) is str else None,
                text,
                start,
                end,
                citation,
            )
        )
    return out or [Citation("citation", None, None, text, start, end, citation)]


class CohereRules(Recognition):
    """How the registry recognises Cohere v2 chat payloads, usage objects and metadata."""

    provider = "cohere"

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """v2 chat events: a ``type`` that is one of :data:`COHERE_EVENTS`."""
        kind = obj.get("type")
        return (kind if type(kind) is str else event) in COHERE_EVENTS

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """``tokens`` (what the model used; ``billed_units`` only in ``raw``) and ``cached_tokens``."""
        tokens = raw.get("tokens")
        if type(tokens) is not dict and type(raw.get("billed_units")) is not dict:
            return None
        tokens = tokens if type(tokens) is dict else {}
        used = (count(tokens.get("input_tokens")), count(tokens.get("output_tokens")))
        return cls.counted(raw, partial, *used, count(raw.get("cached_tokens")))

    @classmethod
    def billed(cls, usage: Usage) -> Usage:
        """``billed_units`` where the usage object has them: ``tokens`` also counts what Cohere adds to the prompt
        and the tool plan, which it does not bill (nor does it bill cache reads apart)."""
        raw = usage.raw
        if type(raw) is not dict:
            return usage
        units = raw.get("billed_units")
        if type(units) is not dict:
            return usage
        return cls.counted(raw, usage.partial, count(units.get("input_tokens")), count(units.get("output_tokens")), 0)

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """``message-start``'s ``id``; no model is named."""
        return str_or(obj.get("id"), None) if obj.get("type") == "message-start" else None, None


class CohereNormalizer(Normalizer):
    """v2 chat events -> Unified (see the module docstring for the full contract)."""

    provider = "cohere"
    terminal = "message-end"
    rules = CohereRules
    stops = COHERE_STOP
    names_model = False  # the stream never names its model: nothing waits for it
    delta_rule = _DELTA_RULE  # text, thinking and argument deltas, and the events that are only raw
    first_event_alone = False  # (the rest of a first chunk is read alike either way)

    # The stream's state, each at its start value (the class's) until first set (see ``Normalizer``).
    _client_calls = False

    def __init__(self) -> None:
        super().__init__()
        self._calls = CallTable()  # open tool calls by index
        self._ids = CallIds()
        self._reader_calls = self._calls.open

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one event."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        kind = dict.get(obj, "type")
        if type(kind) is not str:
            kind = event
        if kind == "content-delta":
            content = dict.get(_message(obj), "content")
            if type(content) is dict:
                text = dict.get(content, "text")
                if type(text) is str and text:
                    return [new_event("text_delta", obj, text)]
                thinking = dict.get(content, "thinking")
                if type(thinking) is str and thinking:
                    return [new_event("reasoning_delta", obj, thinking)]
            return [new_event("raw", obj)]
        if kind == "tool-call-start":
            return self._call_start(obj)
        if kind == "tool-call-delta":
            return self._call_delta(obj)
        if kind == "tool-call-end":
            call = self._calls.pop(key_of(dict.get(obj, "index")))
            return [new_event("raw", obj)] if call is None else [call.close(obj)]
        if kind == "citation-start":
            cited = dict.get(_message(obj), "citations")  # one citation object (a list of them is read too)
            raw_event = new_event("raw", obj)
            found = [
                c
                for item in (cited if type(cited) is list else [cited])
                if type(item) is dict
                for c in cohere_citations(item)
            ]
            if found:
                raw_event.citations = found
            return [raw_event]
        if kind == "message-start":
            self.response_id = str_or(dict.get(obj, "id"), self.response_id)
        elif kind == "message-end":
            return self._message_end(obj)
        elif kind == "error":
            return self.error_events(obj)
        return [new_event("raw", obj)]

    def _call_start(self, obj: dict[str, Any]) -> list[Unified]:
        index = key_of(dict.get(obj, "index"))
        out = self._calls.close_at(index, obj)  # a new call at an index whose call is still open
        call_obj = dict.get(_message(obj), "tool_calls")
        if type(call_obj) is not dict:
            out.append(new_event("raw", obj))
            return out
        function = dict.get(call_obj, "function")
        function = function if type(function) is dict else {}
        name = dict.get(function, "name")
        call = OpenCall(self._ids.take(dict.get(call_obj, "id")), name if type(name) is str else None)
        self._client_calls = True
        out.append(self._calls.start(index, call, obj))
        arguments = dict.get(function, "arguments")
        if type(arguments) is str and arguments:
            out.append(call.delta(arguments, obj))
        return out

    def _call_delta(self, obj: dict[str, Any]) -> list[Unified]:
        call = self._calls.get(key_of(dict.get(obj, "index")))
        call_obj = dict.get(_message(obj), "tool_calls")
        function = dict.get(call_obj, "function") if type(call_obj) is dict else None
        arguments = dict.get(function, "arguments") if type(function) is dict else None
        if call is None or type(arguments) is not str or not arguments:
            return [new_event("raw", obj)]
        return [call.delta(arguments, obj)]

    def _message_end(self, obj: dict[str, Any]) -> list[Unified]:
        if self.finished:
            return [new_event("raw", obj)]
        delta = dict.get(obj, "delta")
        delta = delta if type(delta) is dict else {}
        out: list[Unified] = []
        usage = dict.get(delta, "usage")
        if type(usage) is dict:
            self.usage = usage
            out.append(new_usage(usage, obj))
        reason = dict.get(delta, "finish_reason")
        raw_stop = reason if type(reason) is str else None
        return out + self.done_events(obj, self.stop_for(raw_stop, self._client_calls), raw_stop, self._calls)

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The calls still open (never ended)."""
        return self._calls.incomplete()
