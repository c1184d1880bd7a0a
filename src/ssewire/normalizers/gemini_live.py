"""Gemini Live API (``BidiGenerateContent`` over WebSocket) server messages -> :class:`~ssewire.Unified`.

No SSE framing: feed each WebSocket frame's JSON with :meth:`GeminiLiveNormalizer.frame` (text, bytes or an
already decoded dict). A Live session holds many turns, so ``done`` is per turn:

- ``serverContent.modelTurn.parts``: text -> ``text_delta`` (``thought: true`` -> ``reasoning_delta``); audio
  ``inlineData``, code and other parts -> ``raw`` (never dropped); ``turnComplete`` -> ``usage`` (when known) +
  ``done``: ``end``, or by its ``turnCompleteReason`` (``MALFORMED_FUNCTION_CALL`` -> ``failed``, a rejected
  response or prohibited input -> ``refusal``; ``raw_stop_reason`` the reason); ``interrupted`` (user barge-in),
  ``generationComplete`` and transcriptions -> ``raw``. Any part of the model's turn (audio included) or a
  transcription of its speech opens the turn.
- ``toolCall.functionCalls`` -> ``tool_call_start`` / ``tool_call_delta`` / ``tool_call_done`` per call (arguments
  arrive whole), then ``done`` (``tool_use``): the model waits for a ``toolResponse``.
- ``toolCallCancellation`` (discard that in-flight tool work), ``goAway`` (reconnect with the resumption handle
  before ``timeLeft``), ``sessionResumptionUpdate`` (``resumption_handle`` kept) and ``setupComplete`` -> ``raw``
  with the payload kept.
- ``usageMetadata`` -> ``usage`` (cumulative for the session; the latest wins).

A session that ends in the middle of a turn ends with the ``stream_truncated`` error from :meth:`finish`.
"""

from __future__ import annotations

from typing import Any, Optional

from ..events import SSEEvent, Unified, new_done, new_event, new_tool_event, new_usage
from ..names import UnifiedType
from ._fast import typed
from .contract import Normalizer, not_a_payload
from .tool_calls import compact_json, done_event

__all__ = ["GeminiLiveNormalizer"]

_PART = ("serverContent", "modelTurn", "parts", 0)
#: The messages read without a decode, each one ``raw``: the model's audio (a turn's one part, ``inlineData``,
#: read in place at any size: its data is never built) and any other message whose one part has no text, with
#: no tool call, usage, resumption update, ``goAway`` or end of turn (those set state: decoded).
_DELTA_RULE = typed.delta_rule(
    (
        (*_PART, "text"),
        ("toolCall",),
        ("sessionResumptionUpdate",),
        ("goAway",),
        ("usageMetadata",),
        ("serverContent", "turnComplete"),
        (*_PART, "inlineData"),
    ),
    {None: (None, ((None, ()),))},
    nulls=(0, 1, 2, 3, 4),
    not_true=(5,),
    media=(6,),
)


#: ``turnCompleteReason`` -> unified stop reason (an unspecified one, or one asking for more input, is ``end``;
#: the input safety reasons not named here, ``INPUT_*``, are ``refusal``; any other ``other``).
_TURN_STOP: dict[str, str] = {
    "TURN_COMPLETE_REASON_UNSPECIFIED": "end",
    "NEED_MORE_INPUT": "end",
    "MALFORMED_FUNCTION_CALL": "failed",
    "RESPONSE_REJECTED": "refusal",
    "PROHIBITED_INPUT_CONTENT": "refusal",
    "IMAGE_PROHIBITED_INPUT_CONTENT": "refusal",
    "BLOCKLIST": "refusal",
    "UNSAFE_PROMPT_FOR_IMAGE_GENERATION": "refusal",
}


def _turn_stop(reason: Any) -> str:
    """The unified stop of a turn completed with ``turnCompleteReason`` ``reason`` (None: none given)."""
    if type(reason) is not str:
        return "end"
    stop = _TURN_STOP.get(reason)
    if stop is None:
        stop = "refusal" if reason.startswith("INPUT_") else "other"
    return stop


class GeminiLiveNormalizer(Normalizer):
    """One Live session's server messages -> Unified (see the module docstring)."""

    provider = "gemini-live"
    terminal = "turnComplete"
    delta_rule = _DELTA_RULE  # audio, and the other messages that are only raw
    # (the reader takes messages only while a turn is open: the message that opens one is decoded, so that an
    # audio-only turn is a turn, cut if the session ends inside it)
    reading_can_stop = True
    stops_reading_at_done = True

    def __init__(self) -> None:
        super().__init__()
        self.done = True  # no turn is open before the model speaks
        self.resumption_handle: Optional[str] = None
        self.go_away: Optional[dict[str, Any]] = None
        self._calls = 0

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        out: list[Unified] = []
        content = obj.get("serverContent")
        if isinstance(content, dict):
            self._content(obj, content, out)
        tool_call = obj.get("toolCall")
        if isinstance(tool_call, dict):
            self._tool_call(obj, tool_call, out)
        update = obj.get("sessionResumptionUpdate")
        if isinstance(update, dict) and isinstance(update.get("newHandle"), str):
            self.resumption_handle = update["newHandle"]
        if isinstance(obj.get("goAway"), dict):
            self.go_away = obj["goAway"]
        usage = obj.get("usageMetadata")
        if isinstance(usage, dict):
            self.usage = usage
            out.append(new_usage(dict(usage), obj))
        if isinstance(content, dict) and content.get("turnComplete") is True:
            self.done = True
            reason = content.get("turnCompleteReason")
            out.append(new_done(_turn_stop(reason), reason if type(reason) is str else "turnComplete", obj))
        return out or [new_event("raw", obj)]

    def reads_deltas(self) -> bool:
        """While a turn is open (see ``reading_can_stop``)."""
        return not self.done

    def not_json(self, ev: SSEEvent) -> list[Unified]:
        """A frame that is no JSON (one cut by the end of a saved session): the session's end is not known, so
        unless a later turn ends it, it ends cut (``stream_truncated``), never clean."""
        self.done = False
        return super().not_json(ev)

    def _content(self, obj: dict[str, Any], content: dict[str, Any], out: list[Unified]) -> None:
        if isinstance(content.get("outputTranscription"), dict):
            self.done = False  # (the model speaks: its turn is open)
        turn = content.get("modelTurn")
        parts = turn.get("parts") if isinstance(turn, dict) else None
        if not isinstance(parts, list):
            return
        for part in parts:
            if not isinstance(part, dict):
                continue
            self.done = False
            text = part.get("text")
            if type(text) is str and text:
                kind: UnifiedType = "reasoning_delta" if part.get("thought") is True else "text_delta"
                out.append(new_event(kind, obj, text))
            else:
                out.append(new_event("raw", obj))  # audio inlineData, executableCode, ...

    def _tool_call(self, obj: dict[str, Any], tool_call: dict[str, Any], out: list[Unified]) -> None:
        calls = tool_call.get("functionCalls")
        if not isinstance(calls, list):
            return
        for call in calls:
            if not isinstance(call, dict):
                continue
            self._calls += 1
            call_id = call.get("id") if isinstance(call.get("id"), str) else f"live_call_{self._calls}"
            name = call.get("name") if isinstance(call.get("name"), str) else None
            args = call.get("args")
            out.append(new_tool_event("tool_call_start", call_id, name, obj))
            out.append(
                new_tool_event("tool_call_delta", call_id, name, obj, compact_json({} if args is None else args))
            )
            out.append(done_event(call_id, name, obj, value=args))
        self.done = True
        out.append(new_done("tool_use", "toolCall", obj))
