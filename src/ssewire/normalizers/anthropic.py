"""Anthropic Messages API events (also xAI's Anthropic-compatible ``/v1/messages``) -> Unified.

Contract (one instance per stream; every event made from a payload carries ``raw``; ``message_id``, ``model`` and
``stop_reason`` are kept):

- ``text_delta`` -> ``text_delta``; ``thinking_delta`` -> ``reasoning_delta`` (non-empty strings only, otherwise
  ``raw``); ``signature_delta`` -> ``raw`` with ``signature``; ``redacted_thinking`` blocks, ``citations_delta``,
  ``ping``, ``message_start`` and unknown events -> ``raw``.
- ``tool_use`` (client), ``server_tool_use`` and ``mcp_tool_use`` (``server=True``) blocks are keyed by block
  ``index``: ``content_block_start`` -> ``tool_call_start``, each non-empty ``input_json_delta`` ->
  ``tool_call_delta``, ``content_block_stop`` -> ``tool_call_done`` with ``arguments_raw`` = the concatenated
  ``partial_json`` ("" when none; ``None`` when the arguments came whole in the block's ``input`` and no delta did).
  A block started at an index whose tool call is still open closes that call first (never merged). Calls still
  open at ``message_stop`` are closed by it unless the message was cut off (``max_tokens``, ``refusal``,
  ``pause_turn``): then they stay incomplete (no ``tool_call_done``), as they are when the stream is cut.
- xAI quirks: a delta or stop without ``index`` applies to the block started last; a thinking and a text block may
  share index 0.
- Usage: ``message_start.message.usage`` updated key by key with each ``message_delta.usage``; every
  ``message_delta`` with usage -> a ``usage`` event carrying a fresh dict. ``self.usage`` is the merge so far.
- ``message_stop`` -> ``done`` (exactly one, after closing calls left open): ``raw_stop_reason`` = ``stop_reason``;
  end_turn -> end (tool_use when client calls were made), max_tokens and model_context_window_exceeded ->
  max_tokens, tool_use, stop_sequence, refusal, pause_turn -> incomplete, none -> end, unknown -> other.
- ``error`` (``{"type": "error", "error": {"type": "overloaded_error", ...}}``) -> ``error`` carrying the usage
  merged so far; it ends the stream (no truncation error follows).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from ..events import SSEEvent, Unified, new_event
from ..usage import Usage, count
from . import typed
from .common import client_stop, id_and_model, str_or
from .contract import Normalizer
from .tool_calls import OpenCall

__all__ = ["ANTHROPIC_STOP", "MESSAGE_EVENTS", "AnthropicNormalizer"]

#: Anthropic ``stop_reason`` -> unified stop reason (anything else maps to ``other``).
ANTHROPIC_STOP: dict[str, str] = {
    "end_turn": "end",
    "max_tokens": "max_tokens",
    "tool_use": "tool_use",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "incomplete",
    "model_context_window_exceeded": "max_tokens",
}
#: The event types of the Messages stream.
MESSAGE_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    }
)
_TOOL_BLOCKS = {"tool_use": False, "server_tool_use": True, "mcp_tool_use": True}  # block type -> server
_NO_INDEX = object()
#: The events read without a decode: ``content_block_delta`` events whose ``delta`` is a ``text_delta`` with a
#: non-empty string ``text``, a ``thinking_delta`` with a non-empty string ``thinking``, or an ``input_json_delta``
#: with a non-empty string ``partial_json`` for the open tool call at the event's ``index``; and ``ping`` (raw).
_DELTA_RULE = typed.delta_rule(
    (("type",), ("delta", "type"), ("delta", "text"), ("delta", "thinking"), ("delta", "partial_json"), ("index",)),
    {
        "content_block_delta": (
            "content_block_delta",
            (
                ("text_delta", ((2, "text_delta"),)),
                ("thinking_delta", ((3, "reasoning_delta"),)),
                ("input_json_delta", ((4, "tool_call_delta"),)),
            ),
        ),
        "ping": ("ping", ((None, ()),)),
    },
    type_path=0,
    tag_path=1,
    key_path=5,
)

Handler = Callable[["AnthropicNormalizer", dict[str, Any]], list[Unified]]


def _index(obj: dict[str, Any]) -> Any:
    """The block index of an event (an int or str), or ``_NO_INDEX``."""
    index = obj.get("index")
    return index if type(index) is int or type(index) is str else _NO_INDEX


class AnthropicNormalizer(Normalizer):
    """Messages API events -> Unified (see the module docstring for the full contract)."""

    provider = "anthropic"
    terminal = "message_stop"

    def __init__(self) -> None:
        super().__init__()
        #: The provider's ``stop_reason`` from the last ``message_delta``.
        self.stop_reason: Optional[str] = None
        self._calls: dict[Any, OpenCall] = {}  # open tool calls by block index
        self._current: Any = None  # index of the block started last
        self._count = 0
        self._client_calls = False
        self._take = typed.take_deltas  # None: every event takes the full decode

    @property
    def message_id(self) -> Optional[str]:
        """The message id (the contract's ``response_id``; kept under its old name)."""
        return self.response_id

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """Messages API events: a ``type`` that is one of :data:`MESSAGE_EVENTS` (or, for data without a
        ``type``, such an SSE event name)."""
        kind = obj.get("type")
        return (kind if type(kind) is str else event) in MESSAGE_EVENTS

    @classmethod
    def claims_error(cls, obj: dict[str, Any]) -> bool:
        """``{"type": "error", "error": {...}}`` (OpenAI's flat error has a sequence number or a code)."""
        return obj.get("type") == "error" and "sequence_number" not in obj and "code" not in obj

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """``input_tokens`` excludes both cache counts, so every prompt token is their sum; no reasoning count."""
        if not (
            "cache_read_input_tokens" in raw
            or "cache_creation_input_tokens" in raw
            or ("input_tokens" in raw and "total_tokens" not in raw and "input_tokens_details" not in raw)
        ):
            return None
        read = count(raw.get("cache_read_input_tokens"))
        written = count(raw.get("cache_creation_input_tokens"))
        return cls.counted(
            raw,
            partial,
            count(raw.get("input_tokens")) + read + written,
            count(raw.get("output_tokens")),
            read,
            written,
        )

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """``message_start.message``'s ``id`` and ``model``."""
        return id_and_model(obj.get("message"))

    def normalize(self, events: Sequence[SSEEvent]) -> list[Unified]:
        """Text, thinking and tool argument deltas and pings (named by their SSE event) through the compiled delta
        reader when it is there (see :mod:`.typed`), every other event through :meth:`decoded`."""
        take = self._take
        if take is None or _DELTA_RULE is None:
            return super().normalize(events)
        return self.normalize_reading(events, take, _DELTA_RULE, calls=self._calls)

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one event."""
        kind = obj.get("type")
        if kind == "content_block_delta":  # the bulk of a stream: text deltas here, the rest in _block_delta
            delta = obj.get("delta")
            if type(delta) is dict and delta.get("type") == "text_delta":
                text = delta.get("text")
                if type(text) is str and text:
                    return [new_event("text_delta", obj, text)]
            return self._block_delta(obj)
        if type(kind) is not str:
            kind = event
        handler = _HANDLERS.get(kind) if kind is not None else None
        if handler is None:
            return [new_event("raw", obj)]
        return handler(self, obj)

    def _message_start(self, obj: dict[str, Any]) -> list[Unified]:
        message = obj.get("message")
        if type(message) is dict:
            self.response_id = str_or(message.get("id"), self.response_id)
            self.model = str_or(message.get("model"), self.model)
            usage = message.get("usage")
            if type(usage) is dict:
                self.usage = dict(usage)
        return [new_event("raw", obj)]

    def _block_start(self, obj: dict[str, Any]) -> list[Unified]:
        index = _index(obj)
        if index is _NO_INDEX:
            index = self._current if self._current is not None else 0
        out: list[Unified] = []
        previous = self._calls.pop(index, None)
        if previous is not None:  # a new block at an index whose call is still open: close it, never merge
            out.append(previous.close(obj))
        self._current = index
        block = obj.get("content_block")
        if type(block) is not dict:
            out.append(new_event("raw", obj))
            return out
        kind = block.get("type")
        server = _TOOL_BLOCKS.get(kind) if type(kind) is str else None
        if server is None:
            out.append(new_event("raw", obj))
            return out
        given_id = block.get("id")
        provided = type(given_id) is str and bool(given_id)
        if provided:
            call_id = str(given_id)
        else:
            self._count += 1
            call_id = f"{self.response_id or 'msg'}-tool-{self._count}"
        name = block.get("name")
        call = OpenCall(call_id, name if type(name) is str else None, server, provided)
        given = block.get("input")
        if type(given) is dict and given:
            call.fallback = given
        self._calls[index] = call
        if not server:
            self._client_calls = True
        out.append(call.start(obj))
        return out

    def _block_delta(self, obj: dict[str, Any]) -> list[Unified]:
        delta = obj.get("delta")
        if type(delta) is not dict:
            return [new_event("raw", obj)]
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            if type(text) is str and text:
                return [new_event("text_delta", obj, text)]
        elif kind == "thinking_delta":
            text = delta.get("thinking")
            if type(text) is str and text:
                return [new_event("reasoning_delta", obj, text)]
        elif kind == "input_json_delta":
            fragment = delta.get("partial_json")
            if type(fragment) is str and fragment:
                index = _index(obj)
                call = self._calls.get(self._current if index is _NO_INDEX else index)
                if call is not None:
                    return [call.delta(fragment, obj)]
        elif kind == "signature_delta":
            signature = delta.get("signature")
            if type(signature) is str and signature:
                return [new_event("raw", obj, "", None, signature)]
        return [new_event("raw", obj)]

    def _block_stop(self, obj: dict[str, Any]) -> list[Unified]:
        index = _index(obj)
        call = self._calls.pop(self._current if index is _NO_INDEX else index, None)
        if call is None:
            return [new_event("raw", obj)]
        return [call.close(obj)]

    def _message_delta(self, obj: dict[str, Any]) -> list[Unified]:
        delta = obj.get("delta")
        if type(delta) is dict:
            stop = delta.get("stop_reason")
            if type(stop) is str:
                self.stop_reason = stop
        usage = obj.get("usage")
        if type(usage) is not dict:
            return [new_event("raw", obj)]
        if self.usage is None:
            self.usage = {}
        self.usage.update(usage)  # our own copy (message_start's was copied), updated key by key
        return [Unified("usage", usage=dict(self.usage), raw=obj)]

    def _message_stop(self, obj: dict[str, Any]) -> list[Unified]:
        if self.finished:
            return [new_event("raw", obj)]
        raw_stop = self.stop_reason
        stop = client_stop("end" if raw_stop is None else ANTHROPIC_STOP.get(raw_stop, "other"), self._client_calls)
        return self.done_events(obj, stop, raw_stop, self._calls)

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The tool blocks still open (never stopped)."""
        return [call.incomplete() for call in self._calls.values()]


#: Event type -> handler (the dispatch of :meth:`AnthropicNormalizer.payload`).
_HANDLERS: dict[str, Handler] = {
    "message_start": AnthropicNormalizer._message_start,
    "content_block_start": AnthropicNormalizer._block_start,
    "content_block_delta": AnthropicNormalizer._block_delta,
    "content_block_stop": AnthropicNormalizer._block_stop,
    "message_delta": AnthropicNormalizer._message_delta,
    "message_stop": AnthropicNormalizer._message_stop,
    "error": AnthropicNormalizer.error_events,
}
