"""OpenAI Realtime API server events (WebSocket; also Azure OpenAI and xAI's Realtime-compatible API) -> Unified.

No byte framing: feed each WebSocket frame with :meth:`~.contract.Normalizer.frame` (text, bytes or the decoded
dict), or a recorded session saved one frame per line through ``iter_unified(lines, "openai-realtime",
framing="ndjson")``. A session holds many responses, so ``done`` is per response (the GA event names and the beta
ones are both read):

- ``response.output_text.delta`` / ``response.text.delta`` -> ``text_delta``.
- ``response.output_audio_transcript.delta`` / ``response.audio_transcript.delta`` (what the model said aloud)
  -> ``raw`` by default, so ``text`` is only what it wrote; ``OpenAIRealtimeNormalizer(transcripts_as_text=True)``
  makes them ``text_delta``. Audio chunks, the user's own speech (``conversation.item.input_audio_transcription.*``),
  session, conversation, buffer and rate-limit events -> ``raw``.
- Function calls, keyed by ``item_id``: ``response.output_item.added`` with a ``function_call`` item ->
  ``tool_call_start`` (id: its ``call_id``); ``response.function_call_arguments.delta`` -> ``tool_call_delta``;
  ``response.function_call_arguments.done`` (or the item's ``response.output_item.done``) -> ``tool_call_done``
  with the provider's final ``arguments``.
- MCP: an ``mcp_approval_request`` item is a client call (id: the item id; the client answers it), closed by its
  ``output_item.done``; ``mcp_call`` (its ``response.mcp_call_arguments.delta`` / ``.done``) and ``mcp_list_tools``
  items are calls OpenAI runs (``server``).
- A call item done with ``status: "incomplete"`` never gets ``tool_call_done``.
- ``response.done`` -> ``usage`` (``response.usage``: cached, text and audio token details) and that response's
  ``done``: ``status`` completed -> end (tool_use when it made client calls), incomplete -> max_tokens (or refusal
  for a ``content_filter`` reason), cancelled, failed; ``raw_stop_reason`` is the status. A call still open then is
  closed unless the response was cut off; one it cut off (or one left open by a response that never ended before
  the next began) stays incomplete: no later response closes it.
- ``error`` -> ``error`` (the session goes on: a later response still gets its ``done``).

A session that ends in the middle of a response ends with the ``stream_truncated`` error from
:meth:`~.contract.Normalizer.finish`.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from ..events import SSEEvent, Unified, new_done, new_event, new_usage
from ._fast import typed
from .common import error_object, error_payload, str_or
from .contract import Normalizer, Recognition, not_a_payload
from .tool_calls import CallTable, OpenCall, closes_calls

__all__ = ["REALTIME_STOP", "OpenAIRealtimeNormalizer", "RealtimeRules"]

#: ``response.status`` -> unified stop reason (anything else maps to ``other``).
REALTIME_STOP: dict[str, str] = {
    "completed": "end",
    "incomplete": "max_tokens",
    "cancelled": "cancelled",
    "failed": "failed",
}
_TEXT = ("response.output_text.delta", "response.text.delta")
#: Event type prefixes only a Realtime session sends.
_SESSION_EVENTS = (
    "session.",
    "conversation.item.",  # (not any "conversation.": Mistral's Conversations API names its events so)
    "conversation.created",
    "input_audio_buffer.",
    "output_audio_buffer.",
    "rate_limits.",
    "transcription_session.",
)
_TRANSCRIPT = ("response.output_audio_transcript.delta", "response.audio_transcript.delta")
#: The model's audio, base64 (the bulk of a voice session's bytes): only ever ``raw``.
_AUDIO = ("response.output_audio.delta", "response.audio.delta")


def _delta_rule(transcripts_as_text: bool) -> Any:
    """The events read without a decode (a session names no SSE events: the payload's ``type`` names the case): a
    text delta with a non-empty string ``delta`` (a transcript delta too when ``transcripts_as_text``), and the
    events that are only ever ``raw``: audio deltas (read in place at any size: their data is never built) and, by
    default, transcript deltas."""
    texts = (*_TEXT, *_TRANSCRIPT) if transcripts_as_text else _TEXT
    raw = _AUDIO if transcripts_as_text else (*_AUDIO, *_TRANSCRIPT)
    return typed.delta_rule(
        (("type",), ("delta",)),
        {
            **{name: (name, ((None, ((1, "text_delta"),)),)) for name in texts},
            **{name: (name, ((None, ()),)) for name in raw},
        },
        type_path=0,
        by_type=True,
    )


_DELTA_RULE = _delta_rule(False)
_TRANSCRIPTS_RULE = _delta_rule(True)


#: Output items that are tool calls -> whether the provider runs them itself (``server``): a ``function_call`` and an
#: ``mcp_approval_request`` (the client answers it before the MCP tool runs) are the client's; an ``mcp_call`` and an
#: ``mcp_list_tools`` run on OpenAI's side.
_CALL_ITEMS: dict[str, bool] = {
    "function_call": False,
    "mcp_approval_request": False,
    "mcp_call": True,
    "mcp_list_tools": True,
}


def _key(item_id: Any, call_id: Any) -> Optional[str]:
    """What a function call is keyed by: its item id, else its call id (None when it has neither)."""
    if type(item_id) is str:
        return item_id
    return call_id if type(call_id) is str else None


class RealtimeRules(Recognition):
    """How the registry recognises OpenAI Realtime payloads, usage objects and metadata."""

    provider = "openai-realtime"

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """Session, conversation, audio buffer and rate-limit events; ``response.*`` and ``error`` events with an
        ``event_id`` and no ``sequence_number`` (the Responses API numbers its events and names none)."""
        kind = obj.get("type")
        if type(kind) is not str:
            return False
        if kind.startswith(_SESSION_EVENTS):
            return True
        return (kind == "error" or kind.startswith("response.")) and "event_id" in obj and "sequence_number" not in obj

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """``response.id`` (``response.created`` / ``response.done``); the model of ``session.created``."""
        response, session = obj.get("response"), obj.get("session")
        model = session.get("model") if type(session) is dict else None
        return str_or(response.get("id") if type(response) is dict else None, None), str_or(model, None)


class OpenAIRealtimeNormalizer(Normalizer):
    """One Realtime session's server events -> Unified (see the module docstring)."""

    provider = "openai-realtime"
    terminal = "response.done"
    rules = RealtimeRules
    stops = REALTIME_STOP
    delta_rule = _DELTA_RULE

    def __init__(self, transcripts_as_text: bool = False) -> None:
        super().__init__()
        self.done = True  # no response is open before the model answers
        self.transcripts_as_text = transcripts_as_text
        if transcripts_as_text and self._delta_rule is not None:
            self._delta_rule = typed.own_rule(_TRANSCRIPTS_RULE)
        #: ``status_details`` of the last ``response.done``.
        self.status_details: Any = None
        #: The id of the response the session is on (``response_id`` names the session by its first response).
        self.current_response_id: Optional[str] = None
        self._calls = CallTable()  # open calls by item id
        self._client_calls = False  # the open response made client calls

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one server event."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        kind = obj.get("type")
        if kind in _TEXT or (self.transcripts_as_text and kind in _TRANSCRIPT):
            delta = obj.get("delta")
            if type(delta) is str and delta:
                return [new_event("text_delta", obj, delta)]
            return [new_event("raw", obj)]
        handler = _HANDLERS.get(kind) if type(kind) is str else None
        return [new_event("raw", obj)] if handler is None else handler(self, obj)

    def not_json(self, ev: SSEEvent) -> list[Unified]:
        """A frame that is no JSON (one cut by the end of a saved session): the session's end is not known, so
        unless a later turn ends it, it ends cut (``stream_truncated``), never clean."""
        self.done = False
        return super().not_json(ev)

    def _session(self, obj: dict[str, Any]) -> list[Unified]:
        session = obj.get("session")
        if type(session) is dict:
            self.model = str_or(session.get("model"), self.model)
        return [new_event("raw", obj)]

    def _response_created(self, obj: dict[str, Any]) -> list[Unified]:
        response = obj.get("response")
        if type(response) is dict:
            self.current_response_id = str_or(response.get("id"), self.current_response_id)
            if self.response_id is None:  # the session is named by its first response
                self.response_id = self.current_response_id
        self.done = self.finished = False
        self._client_calls = False
        self._calls.open.clear()  # (a call an earlier response left open stays incomplete: never closed by this one)
        return [new_event("raw", obj)]

    def _call(
        self, obj: dict[str, Any], item_id: Any, call_id: Any, name: Any, server: bool = False
    ) -> tuple[Optional[OpenCall], list[Unified]]:
        """The open call of ``item_id`` (else ``call_id``), started (with its ``tool_call_start``) when it is new."""
        key = _key(item_id, call_id)
        if key is None:
            return None, []
        call = self._calls.get(key)
        if call is not None:
            return call, []
        provided = type(call_id) is str and bool(call_id)
        call = OpenCall(call_id if provided else key, name if type(name) is str else None, server, provided)
        start = self._calls.start(key, call, obj)
        if not server:
            self._client_calls = True
        self.done = self.finished = False
        return call, [start]

    def _item_added(self, obj: dict[str, Any]) -> list[Unified]:
        item = obj.get("item")
        kind = item.get("type") if type(item) is dict else None
        server = _CALL_ITEMS.get(kind) if type(kind) is str else None
        if server is None:
            return [new_event("raw", obj)]
        assert type(item) is dict and type(kind) is str
        name = item.get("name") if kind != "mcp_list_tools" else kind
        _, out = self._call(obj, item.get("id"), item.get("call_id"), name, server)
        return out or [new_event("raw", obj)]

    def _arguments_delta(self, obj: dict[str, Any]) -> list[Unified]:
        server = obj.get("type") == "response.mcp_call_arguments.delta"
        call, out = self._call(obj, obj.get("item_id"), obj.get("call_id"), obj.get("name"), server)
        fragment = obj.get("delta")
        if call is None or type(fragment) is not str or not fragment:
            return out or [new_event("raw", obj)]
        out.append(call.delta(fragment, obj))
        return out

    def _arguments_done(self, obj: dict[str, Any]) -> list[Unified]:
        key = _key(obj.get("item_id"), obj.get("call_id"))
        server = obj.get("type") == "response.mcp_call_arguments.done"
        call, out = self._call(obj, obj.get("item_id"), obj.get("call_id"), obj.get("name"), server)
        if call is None or key is None:
            return [new_event("raw", obj)]
        self._calls.pop(key)
        name = obj.get("name")
        if call.name is None and type(name) is str:
            call.name = name
        final = obj.get("arguments")
        out.append(call.done(obj, final if type(final) is str else None))
        return out

    def _item_done(self, obj: dict[str, Any]) -> list[Unified]:
        item = obj.get("item")
        kind = item.get("type") if type(item) is dict else None
        server = _CALL_ITEMS.get(kind) if type(kind) is str else None
        if server is None:
            return [new_event("raw", obj)]
        assert type(item) is dict
        key = _key(item.get("id"), item.get("call_id"))
        call = self._calls.pop(key) if key is not None else None
        if call is None or item.get("status") == "incomplete":  # closed by its arguments' done; or cut off
            return [new_event("raw", obj)]  # (max_output_tokens ...): never a call to run
        final = item.get("arguments")
        return [call.done(obj, final if type(final) is str else None)]

    def _response_done(self, obj: dict[str, Any]) -> list[Unified]:
        response = obj.get("response")
        if type(response) is not dict:
            return [new_event("raw", obj)]
        out: list[Unified] = []
        usage = response.get("usage")
        if type(usage) is dict:
            self.usage = usage
            out.append(new_usage(dict(usage), obj))
        status = response.get("status")
        details = response.get("status_details")
        self.status_details = details
        stop = self.stop_for(status if type(status) is str else None, self._client_calls)
        reason = details.get("reason") if type(details) is dict else None
        if stop == "max_tokens" and reason == "content_filter":
            stop = "refusal"
        if closes_calls(stop):
            out += self._calls.close_all(obj)
        else:  # cut off: its open calls stay incomplete, never closed by a later response
            self._calls.open.clear()
        self._client_calls = False
        self.finished = self.done = True
        out.append(new_done(stop, status if type(status) is str else None, obj))
        return out

    def _error(self, obj: dict[str, Any]) -> list[Unified]:
        return [Unified("error", error=error_payload(error_object(obj)), raw=obj)]

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The function calls still open."""
        return self._calls.incomplete()


_HANDLERS: dict[str, Callable[[OpenAIRealtimeNormalizer, dict[str, Any]], list[Unified]]] = {
    "session.created": OpenAIRealtimeNormalizer._session,
    "session.updated": OpenAIRealtimeNormalizer._session,
    "response.created": OpenAIRealtimeNormalizer._response_created,
    "response.output_item.added": OpenAIRealtimeNormalizer._item_added,
    "response.function_call_arguments.delta": OpenAIRealtimeNormalizer._arguments_delta,
    "response.function_call_arguments.done": OpenAIRealtimeNormalizer._arguments_done,
    "response.mcp_call_arguments.delta": OpenAIRealtimeNormalizer._arguments_delta,
    "response.mcp_call_arguments.done": OpenAIRealtimeNormalizer._arguments_done,
    "response.output_item.done": OpenAIRealtimeNormalizer._item_done,
    "response.done": OpenAIRealtimeNormalizer._response_done,
    "error": OpenAIRealtimeNormalizer._error,
}
