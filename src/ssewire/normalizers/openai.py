"""OpenAI Responses API events (also xAI ``/v1/responses``) -> Unified.

Contract (one instance per stream; every event made from a payload carries ``raw`` and ``sequence`` =
``sequence_number`` when present; ``last_sequence``, ``response_id`` and ``model`` are kept for resume):

- ``response.output_text.delta`` / ``response.refusal.delta`` -> ``text_delta``;
  ``response.reasoning_summary_text.delta`` / ``response.reasoning_text.delta`` -> ``reasoning_delta``. Only
  non-empty string deltas become deltas; everything else is ``raw``.
- Tool calls are output items whose type ends in ``_call``. ``function_call``, ``custom_tool_call``,
  ``computer_call``, ``local_shell_call``, ``shell_call`` and ``apply_patch_call`` are client calls (id = ``call_id``);
  every other ``*_call`` item (web/file search, code interpreter, MCP, image generation ...) is executed by the
  provider (``server=True``, id = the item ``id``). Calls are keyed by ``item_id`` (``output_index`` as fallback), so
  parallel calls never merge. ``output_item.added`` -> ``tool_call_start``; ``function_call_arguments.delta`` /
  ``custom_tool_call_input.delta`` / ``mcp_call_arguments.delta`` -> ``tool_call_delta``; the first of
  ``*.done`` (``arguments``/``input``, authoritative) or ``output_item.done`` (item ``arguments``/``input``, else the
  fragments, else the item's ``action`` / ``code`` / ``queries`` object) -> the one ``tool_call_done``. A call seen
  only in a done event still gets start and done. Calls open at a ``response.completed`` are closed before ``done``
  (arguments from ``response.output`` when it has them); calls open at an incomplete, failed or cancelled
  response, at an ``error`` or when the stream is cut are incomplete: no ``tool_call_done``, listed in the error.
- Terminal ``response.completed/incomplete/failed/cancelled`` -> [``error``] [``usage``] ``done`` (exactly one):
  ``raw_stop_reason`` = ``response.status``; completed -> end (tool_use when client calls were made), incomplete ->
  max_tokens / refusal / incomplete by ``incomplete_details.reason``, failed, cancelled. ``response.failed`` adds an
  ``error`` from ``response.error`` unless an ``error`` event came first.
- ``error`` events (nested ``{"error": {...}}`` or flat ``{"type": "error", "code", "message"}``) -> ``error``; they end
  the stream (``self.done``) but a later terminal event still yields its ``done``.
- Chat Completions chunks (``object == "chat.completion.chunk"`` or ``choices`` / ``error`` without ``type``) hand
  the stream to a :class:`~ssewire.normalizers.chat.ChatCompletionsNormalizer` delegate (the contract's one
  delegation), so one instance handles either OpenAI API.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from ..events import SSEEvent, Unified, new_event
from ..names import UnifiedType
from ..usage import Usage, count, detail
from . import typed
from .chat import CHAT_DELTA_RULE, ChatCompletionsNormalizer
from .common import client_stop, error_object, error_payload, id_and_model, with_incomplete
from .contract import DelegatingNormalizer
from .tool_calls import OpenCall, closes_calls

__all__ = ["CLIENT_CALL_ITEMS", "OpenAINormalizer"]

#: Output item types the client executes; every other ``*_call`` item is run by the provider.
CLIENT_CALL_ITEMS = frozenset(
    {"function_call", "custom_tool_call", "computer_call", "local_shell_call", "shell_call", "apply_patch_call"}
)
_TERMINAL_STOP = {"completed": "end", "failed": "failed", "cancelled": "cancelled", "incomplete": "incomplete"}
_INCOMPLETE_STOP = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}
_NAMED_ITEMS = frozenset({"function_call", "custom_tool_call", "mcp_call"})  # their name is the tool's
_EMPTY: dict[str, Any] = {}
#: Delta event type -> the event a non-empty string ``delta`` makes (anything else is ``raw``).
_DELTAS: dict[str, UnifiedType] = {
    "response.output_text.delta": "text_delta",
    "response.refusal.delta": "text_delta",
    "response.reasoning_summary_text.delta": "reasoning_delta",
    "response.reasoning_text.delta": "reasoning_delta",
}

#: The tool argument delta events (a fragment of an open call's arguments).
_ARGUMENT_DELTAS = (
    "response.function_call_arguments.delta",
    "response.custom_tool_call_input.delta",
    "response.mcp_call_arguments.delta",
)

#: The events read without a decode: ``type`` equal to the SSE event name, a non-empty string ``delta``, an integer
#: (or absent) ``sequence_number`` (noted: the last one is the cursor); an argument delta's ``item_id`` must name an
#: open call.
_DELTA_RULE = typed.delta_rule(
    (("type",), ("delta",), ("sequence_number",), ("item_id",)),
    {
        **{name: (name, ((None, ((1, kind),)),)) for name, kind in _DELTAS.items()},
        **{name: (name, ((None, ((1, "tool_call_delta"),)),)) for name in _ARGUMENT_DELTAS},
    },
    type_path=0,
    seq_path=2,
    key_path=3,
    notes=((2, "int"),),
)

Handler = Callable[["OpenAINormalizer", dict[str, Any], Optional[int]], list[Unified]]


def _item_arguments(item: dict[str, Any]) -> Optional[dict[str, Any]]:
    """Arguments an item carries as an object (computer/shell ``action``, code interpreter ``code`` ...)."""
    action = item.get("action")
    if type(action) is dict:
        return action
    out = {key: item[key] for key in ("code", "queries", "operation") if item.get(key) is not None}
    return out or None


class OpenAINormalizer(DelegatingNormalizer):
    """Responses API events -> Unified (see the module docstring for the full contract)."""

    provider = "openai"
    terminal = "response.completed"

    def __init__(self) -> None:
        super().__init__()
        #: The final ``response.status`` once the terminal event arrived.
        self.status: Optional[str] = None
        #: The Chat Completions delegate, created when the first chat chunk arrives.
        self.chat: Optional[ChatCompletionsNormalizer] = None
        self._calls: dict[str, OpenCall] = {}  # open calls by item key
        self._closed: set[str] = set()  # item keys whose tool_call_done was emitted
        self._keys: dict[int, str] = {}  # output_index -> item key
        self._client_calls = False
        self._error_sent = False  # an error event was emitted: a failed terminal event adds no second one
        self._event_kind: Optional[str] = None
        self._take = typed.take_deltas  # None: every event takes the full decode
        self._notes: list[Any] = [None, None]  # the last sequence_number the reader saw (see _DELTA_RULE)

    # -- what this provider declares --------------------------------------------------------------------------

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """Responses API events: a ``type`` starting with ``response.`` (or, for data without a ``type``, such an
        SSE event name)."""
        kind = obj.get("type")
        if type(kind) is not str:
            kind = event
        return kind is not None and kind.startswith("response.")

    @classmethod
    def claims_error(cls, obj: dict[str, Any]) -> bool:
        """The flat ``{"type": "error", "code", "message"}`` event (numbered, or with a code)."""
        return obj.get("type") == "error" and ("sequence_number" in obj or "code" in obj)

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """``input_tokens`` (cached inside) and ``output_tokens`` (reasoning inside), with their details and a
        ``total_tokens`` (Anthropic's object has the same two names, without a total or details). The Realtime
        API's object spells the details ``input_token_details`` / ``output_token_details``."""
        if "input_tokens" not in raw and "output_tokens" not in raw:
            return None
        if "cache_read_input_tokens" in raw or "cache_creation_input_tokens" in raw:
            return None
        if "total_tokens" not in raw and "input_tokens_details" not in raw and "output_tokens_details" not in raw:
            return None
        inputs = "input_token_details" if "input_token_details" in raw else "input_tokens_details"
        outputs = "output_token_details" if "output_token_details" in raw else "output_tokens_details"
        return Usage(
            count(raw.get("input_tokens")),
            count(raw.get("output_tokens")),
            cached_input_tokens=detail(raw, inputs, "cached_tokens"),
            cache_write_tokens=detail(raw, inputs, "cache_write_tokens"),
            reasoning_tokens=detail(raw, outputs, "reasoning_tokens"),
            raw=raw,
            partial=partial,
            source=cls.provider,
        )

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """``response``'s ``id`` and ``model`` (``response.created`` and the terminal events carry it)."""
        return id_and_model(obj.get("response"))

    # -- dispatch ---------------------------------------------------------------------------------------------

    def normalize(self, events: Sequence[SSEEvent]) -> list[Unified]:
        """Text, reasoning and open calls' argument deltas (named by their SSE event) through the compiled delta
        reader when it is there (see :mod:`.typed`), every other event through :meth:`decoded`. Once the stream
        turned out to be Chat Completions, its text chunks take the chat delegate's fast paths, the rest this
        normaliser's routing."""
        chat = self.chat
        if chat is not None:
            if self.delegate is chat and chat.reads_deltas():
                return self.normalize_reading(events, chat._take, CHAT_DELTA_RULE)  # type: ignore[arg-type]
            return super().normalize(events)  # the chat typed fast path (fast), else the routing
        take = self._take
        if take is None or _DELTA_RULE is None:
            return super().normalize(events)
        return self.normalize_reading(
            events, take, _DELTA_RULE, self._follow_sequence, calls=self._calls, notes=self._notes
        )

    def _follow_sequence(self) -> None:
        """The last ``sequence_number`` the reader noted is the cursor."""
        notes = self._notes
        if notes[0] is not None:
            self._last_sequence = notes[0]
            notes[0] = None

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one Responses event (or, via the delegate, one chat chunk)."""
        kind = obj.get("type")
        if type(kind) is not str:
            if ChatCompletionsNormalizer.claims(obj) or "error" in obj:
                return self._to_chat(obj, event)
            kind = self._event_kind = event  # data without "type": the SSE event name decides
        seq = obj.get("sequence_number")
        if type(seq) is int:
            self._last_sequence = seq
        else:
            seq = None
        if kind is None:
            handler = None
        elif kind in _DELTAS:  # the bulk of a stream: text and reasoning deltas, without a handler call
            delta = obj.get("delta")
            if type(delta) is str and delta:
                return [new_event(_DELTAS[kind], obj, delta, seq)]
            return [new_event("raw", obj, "", seq)]
        else:
            handler = _HANDLERS.get(kind)
        if handler is None:
            if obj.get("object") == "chat.completion.chunk":
                return self._to_chat(obj, event)
            return [new_event("raw", obj, "", seq)]
        return handler(self, obj, seq)

    @property
    def fast(self) -> Optional[Callable[[SSEEvent], Optional[list[Unified]]]]:
        """Once the stream turned out to be Chat Completions: the chat delegate's typed fast path."""
        chat = self.chat
        return None if chat is None else chat.fast

    def _to_chat(self, obj: dict[str, Any], event: Optional[str]) -> list[Unified]:
        chat = self.chat
        if chat is None:
            chat = self.chat = ChatCompletionsNormalizer()
            self.delegate = chat  # from now on the stream's state is the chat normaliser's (its chunks: see fast)
        return chat.payload(obj, event)

    def sentinel(self, ev: SSEEvent) -> list[Unified]:
        """``[DONE]`` ends a chat stream; after Responses events it means nothing and is swallowed."""
        chat = self.chat
        return [] if chat is None else chat.sentinel(ev)

    # -- tool calls -------------------------------------------------------------------------------------------

    def _item_key(self, item_id: Any, output_index: Any) -> str:
        """The key of the item an event refers to: its id; the output index only for events or items without one
        (an id never resolves to another item's call, so items that share an output index still never merge)."""
        if type(item_id) is str and item_id:
            if item_id not in self._calls and item_id not in self._closed and type(output_index) is int:
                known = self._keys.get(output_index)
                if known is not None and known[0] == "#":  # that call was opened without an id
                    return known
            return item_id
        if type(output_index) is int:
            known = self._keys.get(output_index)
            return known if known is not None else f"#{output_index}"
        return "#"

    def _open(self, key: str, kind: str, item: dict[str, Any], output_index: Any = None) -> OpenCall:
        server = kind not in CLIENT_CALL_ITEMS
        item_id = item.get("id")
        call_id = item.get("call_id")
        if server:
            given = item_id if type(item_id) is str and item_id else call_id
        else:
            given = call_id if type(call_id) is str and call_id else item_id
        provided = type(given) is str and bool(given)
        ident = str(given) if provided else f"{self.response_id or 'resp'}-{key}"
        name = item.get("name")
        if type(name) is not str or not name:
            name = None if kind in _NAMED_ITEMS else kind[:-5]  # "web_search_call" -> "web_search"
        call = OpenCall(ident, name, server, provided)
        self._calls[key] = call
        if type(output_index) is int:
            self._keys[output_index] = key
        if not server:
            self._client_calls = True
        return call

    def _call_item(self, obj: dict[str, Any]) -> Optional[tuple[dict[str, Any], str, str]]:
        """``(item, item type, call key)`` when an ``output_item.*`` event carries a ``*_call`` item, else None."""
        item = obj.get("item")
        if type(item) is not dict:
            return None
        kind = item.get("type")
        if type(kind) is not str or not kind.endswith("_call"):
            return None
        return item, kind, self._item_key(item.get("id"), obj.get("output_index"))

    def _item_added(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        found = self._call_item(obj)
        if found is None:
            return [new_event("raw", obj, "", seq)]
        item, kind, key = found
        if key in self._calls or key in self._closed:
            return [new_event("raw", obj, "", seq)]  # a repeated announcement
        return [self._open(key, kind, item, obj.get("output_index")).start(obj, seq)]

    def _implicit(self, key: str, obj: dict[str, Any], seq: Optional[int], out: list[Unified]) -> OpenCall:
        """A call whose ``output_item.added`` never came (e.g. a resumed stream): open it now."""
        kind = obj.get("type")
        item_kind = "mcp_call" if type(kind) is str and kind.startswith("response.mcp_call") else "function_call"
        if type(kind) is str and kind.startswith("response.custom_tool_call"):
            item_kind = "custom_tool_call"
        item_id = obj.get("item_id")
        item = {"id": item_id, "name": obj.get("name")}
        call = self._open(key, item_kind, item, obj.get("output_index"))
        out.append(call.start(obj, seq))
        return call

    def _args_delta(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        key = self._item_key(obj.get("item_id"), obj.get("output_index"))
        out: list[Unified] = []
        call = self._calls.get(key)
        if call is None:
            if key in self._closed:
                return [new_event("raw", obj, "", seq)]
            call = self._implicit(key, obj, seq, out)
        delta = obj.get("delta")
        if type(delta) is str and delta:
            out.append(call.delta(delta, obj, seq))
        return out or [new_event("raw", obj, "", seq)]

    def _args_done(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        key = self._item_key(obj.get("item_id"), obj.get("output_index"))
        out: list[Unified] = []
        call = self._calls.pop(key, None)
        if call is None:
            if key in self._closed:
                return [new_event("raw", obj, "", seq)]
            call = self._implicit(key, obj, seq, out)
            del self._calls[key]
        if call.name is None:
            name = obj.get("name")
            if type(name) is str and name:
                call.name = name
        final = obj.get("arguments")
        if type(final) is not str:
            final = obj.get("input")
        out.append(call.done(obj, final if type(final) is str else None, seq))
        self._closed.add(key)
        return out

    def _finish_item(self, call: OpenCall, item: dict[str, Any], raw: Any, seq: Optional[int]) -> Unified:
        final = item.get("arguments")
        if type(final) is not str:
            final = item.get("input")
        if type(final) is str:
            return call.done(raw, final, seq)
        if not call.parts:
            whole = _item_arguments(item)
            if whole is not None:
                return call.done_object(whole, raw, seq)
        return call.done(raw, None, seq)

    def _item_done(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        found = self._call_item(obj)
        if found is None:
            return [new_event("raw", obj, "", seq)]
        item, kind, key = found
        out: list[Unified] = []
        call = self._calls.pop(key, None)
        if call is None:
            if key in self._closed:
                return [new_event("raw", obj, "", seq)]  # already closed by the *.done event
            call = self._open(key, kind, item, obj.get("output_index"))
            del self._calls[key]
            out.append(call.start(obj, seq))
        out.append(self._finish_item(call, item, obj, seq))
        self._closed.add(key)
        return out

    def _close_open(self, obj: dict[str, Any], seq: Optional[int], output: Any) -> list[Unified]:
        """Close the calls still open at the terminal event, taking arguments from ``response.output`` if there."""
        items: dict[str, dict[str, Any]] = {}
        if type(output) is list:
            for item in output:
                if type(item) is dict and type(item.get("id")) is str:
                    items[item["id"]] = item
        out = []
        for key, call in self._calls.items():
            item = items.get(key)
            out.append(self._finish_item(call, item, obj, seq) if item is not None else call.done(obj, None, seq))
            self._closed.add(key)
        self._calls.clear()
        return out

    # -- lifecycle --------------------------------------------------------------------------------------------

    def _meta(self, obj: dict[str, Any]) -> dict[str, Any]:
        """``obj["response"]`` (or an empty dict), keeping its id and model."""
        response = obj.get("response")
        if type(response) is not dict:
            return _EMPTY
        response_id = response.get("id")
        if type(response_id) is str:
            self._response_id = response_id
        model = response.get("model")
        if type(model) is str:
            self._model = model
        return response

    def _created(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        self._meta(obj)
        return [new_event("raw", obj, "", seq)]

    def _terminal(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        if self._finished:
            return [new_event("raw", obj, "", seq)]  # a repeated terminal event
        response = self._meta(obj)
        status = response.get("status")
        if type(status) is not str:
            kind = obj.get("type")
            if type(kind) is not str:
                kind = self._event_kind or "response.completed"
            status = kind[9:]  # "response.completed" -> "completed"
        stop = _TERMINAL_STOP.get(status, "other")
        if stop == "incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if type(details) is dict else None
            if type(reason) is str:
                stop = _INCOMPLETE_STOP.get(reason, "incomplete")
        else:
            stop = client_stop(stop, self._client_calls)
        out = self._close_open(obj, seq, response.get("output")) if self._calls and closes_calls(stop) else []
        if status == "failed" and not self._error_sent:
            error = response.get("error")
            if error is not None:
                self._error_sent = True
                payload = with_incomplete(error_payload(error), self.incomplete_tool_calls())
                out.append(Unified("error", error=payload, sequence=seq, raw=obj))
        usage = response.get("usage")
        if type(usage) is dict:
            self._usage = usage
            out.append(Unified("usage", usage=usage, sequence=seq, raw=obj))
        self.status = status
        self._finished = self._done = True
        out.append(Unified("done", stop_reason=stop, sequence=seq, raw=obj, raw_stop_reason=status))
        return out

    def _error(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        inner = error_object(obj, ("type", "sequence_number", "error"))  # nested, or flat with code and message
        self._error_sent = True
        self._done = True
        payload = with_incomplete(error_payload(inner), self.incomplete_tool_calls())
        return [Unified("error", error=payload, usage=self._usage, sequence=seq, raw=obj)]

    # -- end of stream ----------------------------------------------------------------------------------------

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The calls still open (Responses items, or the chat delegate's)."""
        if self.delegate is not None:
            return self.delegate.incomplete_tool_calls()
        return [call.incomplete() for call in self._calls.values()]


#: Event type -> handler (the dispatch of :meth:`OpenAINormalizer.payload`).
_HANDLERS: dict[str, Handler] = {
    "response.output_item.added": OpenAINormalizer._item_added,
    "response.output_item.done": OpenAINormalizer._item_done,
    **dict.fromkeys(_ARGUMENT_DELTAS, OpenAINormalizer._args_delta),
    "response.function_call_arguments.done": OpenAINormalizer._args_done,
    "response.custom_tool_call_input.done": OpenAINormalizer._args_done,
    "response.mcp_call_arguments.done": OpenAINormalizer._args_done,
    "response.created": OpenAINormalizer._created,
    "response.in_progress": OpenAINormalizer._created,
    "response.queued": OpenAINormalizer._created,
    "response.completed": OpenAINormalizer._terminal,
    "response.incomplete": OpenAINormalizer._terminal,
    "response.failed": OpenAINormalizer._terminal,
    "response.cancelled": OpenAINormalizer._terminal,
    "error": OpenAINormalizer._error,
}
