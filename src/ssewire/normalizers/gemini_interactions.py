"""Gemini Interactions API stream (``POST /v1beta/interactions`` with ``stream: true``) -> :class:`Unified` events.

The event type is the payload's ``event_type`` (else the SSE event name); the older names ``content.start`` /
``content.delta`` / ``content.stop``, ``interaction.start`` and ``interaction.complete`` are accepted as aliases.

- ``interaction.created`` / ``status_update`` / ``in_progress`` -> ``raw`` (``interaction_id`` kept).
- ``step.start``: ``function_call`` -> ``tool_call_start`` (id = step id), the one client call; every other
  ``*_call`` step (``google_search_call``, ``url_context_call``, ``code_execution_call``, ``mcp_server_tool_call``,
  ``file_search_call``, ``google_maps_call`` ...: Gemini runs it, its ``*_result`` step follows in the same
  stream) -> ``tool_call_start`` with ``server=True``, named by the step's ``name`` else its type; any other step
  (``*_result``, ``model_output``, ``thought`` ...) -> ``raw``, carrying the citations of the annotations its
  content brings whole. A step's non-empty ``signature`` rides on that event.
- ``step.delta``: ``text`` -> ``text_delta``; ``thought_summary`` -> ``reasoning_delta`` (``content.text``);
  ``thought_signature`` -> ``raw`` with ``signature``; ``arguments_delta`` -> ``tool_call_delta``;
  ``text_annotation_delta`` -> ``raw`` with its ``annotations`` as citations; others -> ``raw``. The pre-rename
  whole-call deltas: ``function_call`` opens a client call, another ``*_call`` with an ``id`` a server call.
- Citations (:func:`annotation_citations`): one per ``url_citation`` / ``file_citation`` / ``place_citation``
  annotation -- ``url`` its ``url`` / ``document_uri``, ``title`` its ``title`` / ``file_name`` / ``name``, span
  ``start_index`` / ``end_index`` (UTF-8 bytes), ``raw`` the annotation; ``word_info`` cites nothing. Each is
  given once per stream.
- ``step.stop`` of a call step -> ``tool_call_done`` (arguments parsed from the accumulated deltas, with
  ``arguments_raw`` that string, else the step's ``arguments`` object); other steps -> ``raw``.
- ``interaction.completed`` -> open calls closed (unless the interaction is ``incomplete`` / ``failed`` /
  ``cancelled``: then they stay incomplete, never ``tool_call_done``), ``usage`` (``interaction.usage``
  verbatim) and one ``done``
  (``completed`` -> ``end``, or ``tool_use`` after client calls; ``requires_action`` -> ``tool_use``;
  ``incomplete`` / ``failed`` / ``cancelled`` as named; anything else -> ``other``). A later, changed usage gets
  another ``usage`` event.
- ``error`` -> ``error`` (``done`` set; calls still open are listed in its ``incomplete_tool_calls``);
  ``event: done`` / ``data: [DONE]`` -> nothing.

Attributes for resume and replay: ``interaction_id``, ``last_event_index`` (last step index),
``last_event_id`` (last ``event_id``, the resume cursor), ``last_signature``, ``model_version``, ``usage``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Optional, Union

from ..citations import Citation
from ..events import Unified, new_done, new_event, new_tool_event, new_usage
from ..usage import Usage, count, usage_counts
from ._fast import typed
from .common import error_payload, id_and_model, str_or, with_incomplete
from .contract import Normalizer, Recognition, not_a_payload
from .tool_calls import CallIds, closes_calls, compact_json, done_event, incomplete_entry

__all__ = [
    "INTERACTION_STOP",
    "STEP_EVENTS",
    "GeminiInteractionsNormalizer",
    "GeminiInteractionsRules",
    "annotation_citations",
    "is_interaction_event",
    "thought_usage",
]

#: SSE event names of the Interactions API's steps and their content.
STEP_EVENTS = frozenset({"step.start", "step.delta", "step.stop", "content.start", "content.delta", "content.stop"})


def is_interaction_event(event: Optional[str]) -> bool:
    """True for an SSE event name only the Interactions API sends (``interaction.*`` and the step events)."""
    return event is not None and (event in STEP_EVENTS or event.startswith("interaction."))


_ALIASES = {
    "content.start": "step.start",
    "content.delta": "step.delta",
    "content.stop": "step.stop",
    "interaction.start": "interaction.created",
    "interaction.complete": "interaction.completed",
}
_META_EVENTS = frozenset({"interaction.created", "interaction.status_update", "interaction.in_progress"})
#: Interaction ``status`` -> unified stop reason (anything else maps to ``other``).
INTERACTION_STOP: dict[str, str] = {
    "completed": "end",
    "requires_action": "tool_use",
    "incomplete": "incomplete",
    "budget_exceeded": "max_tokens",  # (stopped at its budget: what came is cut)
    "requires_continuation": "incomplete",  # (stopped before completion; a later request continues it)
    "failed": "failed",
    "cancelled": "cancelled",
}

_CLIENT, _SERVER, _OTHER = 0, 1, 2

StepKey = Union[int, str]


def thought_usage(
    raw: dict[str, Any],
    partial: bool,
    source: str,
    prompt: str,
    tool_prompt: str,
    output: str,
    thoughts: str,
    cached: str,
) -> Usage:
    """Gemini's counts (generateContent, Live and Interactions name them differently): tool-use prompt tokens
    are input, thoughts are output and reasoning."""
    reasoning = count(raw.get(thoughts))
    return usage_counts(
        count(raw.get(prompt)) + count(raw.get(tool_prompt)),
        count(raw.get(output)) + reasoning,
        count(raw.get(cached)),
        0,  # (no cache writes)
        reasoning,
        raw,
        partial,
        source,
    )


#: The events read without a decode: a ``step.delta`` (or its older name, ``content.delta``), named so by its SSE
#: event and its ``event_type``, whose ``delta`` is a ``text`` delta with a non-empty string ``text`` (any other
#: event is left at the cost of a lookup of its name). What it sets is reported in notes: the resume cursor,
#: ``event_id`` (a string) and ``index`` (an int).
_DELTA_RULE = typed.delta_rule(
    (("event_type",), ("delta", "type"), ("delta", "text"), ("event_id",), ("index",)),
    {name: (name, (("text", ((2, "text_delta"),)),)) for name in ("step.delta", "content.delta")},
    type_path=0,
    tag_path=1,
    notes=((3, "string"), (4, "int")),
)


def _text(value: Any) -> Optional[str]:
    """``value`` when it is a non-empty string, else None."""
    return value if type(value) is str and value else None


def annotation_citations(annotations: Any) -> list[Citation]:
    """One citation per annotation of a text (``url_citation``, ``file_citation``, ``place_citation``; the
    pre-rename ``{start_index, end_index, source}`` too): ``kind`` its ``type`` (``"annotation"`` without one),
    ``url`` its ``url`` or ``document_uri`` (else a ``source`` that is a URL), ``title`` its ``title``,
    ``file_name`` or ``name``, the span its ``start_index`` / ``end_index`` (UTF-8 bytes). Annotations that cite
    nothing (``word_info``: transcription timings) are left out."""
    out: list[Citation] = []
    for note in annotations if type(annotations) is list else ():
        if type(note) is not dict:
            continue
        kind = note.get("type")
        if kind is not None and not (type(kind) is str and kind.endswith("_citation")):
            continue
        url = str_or(note.get("url"), None) or str_or(note.get("document_uri"), None)
        source = note.get("source")
        if url is None and type(source) is str and "://" in source:
            url = source
        title = str_or(note.get("title"), None) or str_or(note.get("file_name"), None) or str_or(note.get("name"), None)
        start, end = note.get("start_index"), note.get("end_index")
        start = start if type(start) is int else (0 if type(end) is int else None)  # proto3 JSON drops a 0
        out.append(Citation(kind or "annotation", url, title, None, start, end if type(end) is int else None, note))
    return out


def _content_annotations(step: dict[str, Any]) -> list[Any]:
    """The annotations a step brings whole: its own (a pre-rename text content) and its ``content`` items'."""
    found: list[Any] = []
    own = step.get("annotations")
    if type(own) is list:
        found += own
    content = step.get("content")
    for item in content if type(content) is list else ():
        if type(item) is dict and type(item.get("annotations")) is list:
            found += item["annotations"]
    return found


class _Step:
    """One started step: its kind (client call, server call, other), call id and name, streamed argument
    fragments and the ``arguments`` object the step (or a delta) carried."""

    __slots__ = ("arguments", "fragments", "id", "kind", "name")

    def __init__(
        self, kind: int, call_id: Optional[str] = None, name: Optional[str] = None, arguments: Any = None
    ) -> None:
        self.kind = kind
        self.id = call_id
        self.name = name
        self.fragments: list[str] = []
        self.arguments = arguments


class GeminiInteractionsRules(Recognition):
    """How the registry recognises Gemini Interactions payloads, usage objects and metadata."""

    provider = "gemini"

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """Interactions events: an ``event_type`` that names one (``interaction.*``, the step events, ``error``; not
        Cohere v1's ``stream-start`` / ``text-generation``), or an Interactions SSE event name."""
        kind = obj.get("event_type")
        if type(kind) is str and (kind == "error" or is_interaction_event(kind)):
            return True
        return is_interaction_event(event)

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """``interaction.usage``: ``total_*_tokens`` counts, tool-use input and thoughts output as for Gemini."""
        if "total_input_tokens" not in raw and "total_output_tokens" not in raw:
            return None
        return thought_usage(
            raw, partial, cls.provider, "total_input_tokens", "total_tool_use_tokens", "total_output_tokens",
            "total_thought_tokens", "total_cached_tokens",
        )  # fmt: skip

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """The ``interaction``'s ``id`` and ``model``."""
        interaction = obj.get("interaction")
        if type(interaction) is not dict:
            return str_or(obj.get("interaction_id"), None), None
        return id_and_model(interaction)


class GeminiInteractionsNormalizer(Normalizer):
    """Gemini Interactions API events -> unified events (one instance per stream)."""

    provider: ClassVar[str] = "gemini"
    terminal: ClassVar[str] = "interaction.completed"
    rules = GeminiInteractionsRules
    stops = INTERACTION_STOP
    delta_rule = _DELTA_RULE  # text deltas
    delta_notes = 2  # what they set: event_id, index (see _DELTA_RULE)

    # The stream's state, each at its start value (the class's) until first set (see ``Normalizer``).
    #: The interaction's ``status``, the last thought signature, and the resume cursor: the last step ``index``
    #: and ``event_id`` seen.
    status: Optional[str] = None
    last_signature: Optional[str] = None
    last_event_index: Optional[int] = None
    last_event_id: Optional[str] = None
    _current: Optional[StepKey] = None
    _anonymous = 0
    _sent_usage: Optional[dict[str, Any]] = None
    _client_calls = False

    def __init__(self) -> None:
        super().__init__()
        self._steps: dict[StepKey, _Step] = {}
        self._ids = CallIds()
        self._cited: set[tuple[Any, ...]] = set()  # the citations given so far (each comes once)

    @property
    def interaction_id(self) -> Optional[str]:
        """The interaction id (the contract's ``response_id``)."""
        return self.response_id

    @property
    def model_version(self) -> Optional[str]:
        """The interaction's ``model`` (the contract's ``model``; kept under Gemini's name)."""
        return self.model

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one Interactions event payload."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        kind = dict.get(obj, "event_type")
        if type(kind) is not str:
            kind = event or ""
        kind = _ALIASES.get(kind, kind)
        value = dict.get(obj, "event_id")
        if type(value) is str:
            self.last_event_id = value
        index = dict.get(obj, "index")
        if type(index) is int:
            self.last_event_index = index
        else:
            index = None
        if kind == "step.delta":
            return self._delta(obj, index)
        if kind == "step.start":
            return self._start(obj, index)
        if kind == "step.stop":
            return self._stop(obj, index)
        if kind in _META_EVENTS:
            self._meta(obj)
            return [new_event("raw", obj)]
        if kind == "interaction.completed":
            return self._completed(obj)
        if kind == "error":
            self.done = True
            inner = dict.get(obj, "error")
            usage = None if self.usage is None else dict(self.usage)
            payload = with_incomplete(error_payload(inner if inner is not None else obj), self.incomplete_for_error())
            return [Unified("error", error=payload, usage=usage, raw=obj)]
        if kind == "done":
            return []
        self._meta(obj)
        return [new_event("raw", obj)]

    def absorb(self) -> None:
        """What the text deltas the reader took set, from its notes: the last ``event_id`` and ``index``."""
        notes = self._notes
        if notes is None:
            return
        event_id, index = notes[:2]
        if event_id is not None:
            self.last_event_id = event_id
        if index is not None:
            self.last_event_index = index
        notes[0] = notes[1] = None

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """Call steps that never got their ``step.stop``, in start order."""
        return [
            incomplete_entry(step.id, step.name, "".join(step.fragments))
            for step in self._steps.values()
            if step.kind != _OTHER
        ]

    # -- helpers ------------------------------------------------------------------------------------------------

    def _meta(self, obj: dict[str, Any]) -> None:
        """Keep the interaction id, model and status of interaction-level events."""
        interaction = dict.get(obj, "interaction")
        if isinstance(interaction, dict):
            self.response_id = str_or(dict.get(interaction, "id"), self.response_id)
            self.model = str_or(dict.get(interaction, "model"), self.model)
            self.status = str_or(dict.get(interaction, "status"), self.status)
        self.response_id = str_or(dict.get(obj, "interaction_id"), self.response_id)
        self.status = str_or(dict.get(obj, "status"), self.status)

    def _key(self, index: Optional[int]) -> Optional[StepKey]:
        """The step an event belongs to: its ``index``, else the step started last."""
        return index if index is not None else self._current

    def _start(self, obj: dict[str, Any], index: Optional[int]) -> list[Unified]:
        """``step.start``: a call step opens a tool call (``server`` for ``*_call`` steps), others are raw."""
        step = dict.get(obj, "step")
        if not isinstance(step, dict):
            step = dict.get(obj, "content")  # the pre-rename content.start shape
        if not isinstance(step, dict):
            return [new_event("raw", obj)]
        key: StepKey
        if index is not None:
            key = index
        else:
            self._anonymous += 1
            key = f"_{self._anonymous}"
        out: list[Unified] = []
        if key in self._steps:  # a step index reused before its stop: close the old one first
            out += self._close(key, obj)
        self._current = key
        signature = _text(dict.get(step, "signature"))
        if signature is not None:
            self.last_signature = signature
        stype = dict.get(step, "type")
        if stype == "function_call":
            self._client_calls = True
            call = _Step(
                _CLIENT,
                self._ids.take(dict.get(step, "id")),
                _text(dict.get(step, "name")),
                dict.get(step, "arguments"),
            )
            self._steps[key] = call
            start = new_tool_event("tool_call_start", call.id, call.name, obj)
            start.signature = signature
            out.append(start)
        elif type(stype) is str and stype.endswith("_call"):
            call = _Step(
                _SERVER,
                self._ids.take(dict.get(step, "id")),
                _text(dict.get(step, "name")) or stype,
                dict.get(step, "arguments"),
            )
            self._steps[key] = call
            start = new_tool_event("tool_call_start", call.id, call.name, obj, "", None, True)
            start.signature = signature
            out.append(start)
        else:
            self._steps[key] = _Step(_OTHER)
            out.append(self._cited_raw(obj, _content_annotations(step), signature))
        return out

    def _cited_raw(self, obj: dict[str, Any], annotations: list[Any], signature: Optional[str] = None) -> Unified:
        """The ``raw`` event of ``obj``, carrying the citations of ``annotations`` not given before."""
        event = new_event("raw", obj, "", None, signature)
        fresh = []
        for citation in annotation_citations(annotations):
            key = (citation.kind, citation.url, citation.title, citation.start, citation.end)
            if key not in self._cited:
                self._cited.add(key)
                fresh.append(citation)
        if fresh:
            event.citations = fresh
        return event

    def _delta(self, obj: dict[str, Any], index: Optional[int]) -> list[Unified]:
        """``step.delta``: text, reasoning, signature or argument fragment; anything else raw."""
        delta = dict.get(obj, "delta")
        if not isinstance(delta, dict):
            return [new_event("raw", obj)]
        dtype = dict.get(delta, "type")
        if dtype == "text":
            text = _text(dict.get(delta, "text"))
            return [new_event("text_delta", obj, text) if text else new_event("raw", obj)]
        if dtype == "thought_summary" or dtype == "thought":
            content = dict.get(delta, "content")
            text = _text(dict.get(content, "text") if isinstance(content, dict) else dict.get(delta, "text"))
            signature = _text(dict.get(delta, "signature"))
            if signature is not None:
                self.last_signature = signature
            if text:
                return [new_event("reasoning_delta", obj, text, None, signature)]
            return [new_event("raw", obj, "", None, signature)]
        if dtype == "thought_signature":
            signature = _text(dict.get(delta, "signature"))
            if signature is not None:
                self.last_signature = signature
            return [new_event("raw", obj, "", None, signature)]
        if dtype == "text_annotation_delta":
            return [self._cited_raw(obj, dict.get(delta, "annotations") or [])]
        key = self._key(index)
        step = self._steps.get(key) if key is not None else None
        if dtype == "arguments_delta":
            fragment = dict.get(delta, "arguments")
            if step is None or step.kind == _OTHER or type(fragment) is not str:
                return [new_event("raw", obj)]
            step.fragments.append(fragment)
            return [new_tool_event("tool_call_delta", step.id, step.name, obj, fragment, None, step.kind == _SERVER)]
        if dtype == "function_call":  # the pre-rename shape: a whole call in one content.delta
            return self._legacy_call(obj, delta, key, step, _CLIENT)
        if (
            type(dtype) is str
            and dtype.endswith("_call")
            and _text(dict.get(delta, "id")) is not None
            and (step is None or step.kind != _SERVER)
        ):  # the pre-rename shape of a server call (search, code execution ...): whole, with its id
            return self._legacy_call(obj, delta, key, step, _SERVER)
        if step is not None and step.kind == _SERVER and isinstance(dict.get(delta, "arguments"), dict):
            step.arguments = delta["arguments"]
        signature = _text(dict.get(delta, "signature"))  # (a server call's delta may carry one)
        if signature is not None:
            self.last_signature = signature
        return [new_event("raw", obj, "", None, signature)]

    def _legacy_call(
        self, obj: dict[str, Any], delta: dict[str, Any], key: Optional[StepKey], step: Optional[_Step], kind: int
    ) -> list[Unified]:
        """A pre-rename call delta (``function_call``: ``kind`` client; another ``*_call``: server, named by its
        type): the whole call at once (opens the step when needed)."""
        out: list[Unified] = []
        server = kind == _SERVER
        if step is None or step.kind != kind:
            if key is None:
                self._anonymous += 1
                key = self._current = f"_{self._anonymous}"
            if not server:
                self._client_calls = True
            name = _text(dict.get(delta, "name")) or (dict.get(delta, "type") if server else None)
            step = self._steps[key] = _Step(kind, self._ids.take(dict.get(delta, "id")), name)
            out.append(new_tool_event("tool_call_start", step.id, step.name, obj, "", None, server))
        arguments = dict.get(delta, "arguments")
        if type(arguments) is str:
            step.fragments.append(arguments)
            text = arguments
        elif isinstance(arguments, dict):
            step.arguments = arguments
            text = compact_json(arguments)
        else:
            text = ""
        out.append(new_tool_event("tool_call_delta", step.id, step.name, obj, text, None, server))
        return out

    def _stop(self, obj: dict[str, Any], index: Optional[int]) -> list[Unified]:
        """``step.stop``: ``tool_call_done`` for call steps, raw otherwise."""
        key = self._key(index)
        if key is None or key not in self._steps:
            return [new_event("raw", obj)]
        final = dict.get(obj, "step")
        step = self._steps[key]
        if isinstance(final, dict) and step.kind != _OTHER and "arguments" in final:
            step.arguments = final["arguments"]
        return self._close(key, obj)

    def _close(self, key: StepKey, obj: Optional[dict[str, Any]]) -> list[Unified]:
        """The event that ends step ``key`` (``tool_call_done`` for calls, ``raw`` otherwise)."""
        step = self._steps.pop(key)
        if step.kind == _OTHER:
            return [new_event("raw", obj)] if obj is not None else []
        server = step.kind == _SERVER
        if step.fragments:
            text: Optional[str] = "".join(step.fragments)
        elif type(step.arguments) is str:
            text = step.arguments
        else:
            return [done_event(step.id, step.name, obj, value=step.arguments, server=server)]
        return [done_event(step.id, step.name, obj, text=text, server=server)]

    def _close_all(self, obj: Optional[dict[str, Any]]) -> list[Unified]:
        """``tool_call_done`` for every call step still open, in start order; other open steps are dropped."""
        out: list[Unified] = []
        for key in [k for k, s in self._steps.items() if s.kind != _OTHER]:
            out += self._close(key, obj)
        self._steps.clear()
        return out

    def _completed(self, obj: dict[str, Any]) -> list[Unified]:
        """``interaction.completed``: open calls closed, then usage and the one ``done``."""
        self._meta(obj)
        interaction = obj.get("interaction")
        status = interaction.get("status") if isinstance(interaction, dict) else None
        status = status if type(status) is str else None
        stop = self.stop_for(status, self._client_calls)
        out = self._close_all(obj) if closes_calls(stop) else []
        usage = interaction.get("usage") if isinstance(interaction, dict) else None
        if isinstance(usage, dict):
            self.usage = usage
        if not self.finished:
            if self.usage is not None:
                self._sent_usage = self.usage
                out.append(new_usage(dict(self.usage), obj))
            out.append(new_done(stop, status, obj))
            self.finished = self.done = True
        elif self.usage is not None and self.usage != self._sent_usage:
            self._sent_usage = self.usage
            out.append(new_usage(dict(self.usage), obj))
        if not out:
            out.append(new_event("raw", obj))
        return out
