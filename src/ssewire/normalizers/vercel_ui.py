"""The Vercel AI SDK's UI message stream (SSE ``data:`` chunks, header ``x-vercel-ai-ui-message-stream: v1``) ->
Unified: what a ``useChat`` front end reads, read back (a gateway's own output, a recorded UI stream).

Contract (one instance per stream; every event made from a chunk carries ``raw``):

- ``text-delta`` -> ``text_delta``, ``reasoning-delta`` -> ``reasoning_delta`` (non-empty ``delta`` only).
- ``tool-input-start`` -> ``tool_call_start`` (``toolCallId``, ``toolName``; ``server`` when
  ``providerExecuted``), ``tool-input-delta`` -> ``tool_call_delta`` (``inputTextDelta``),
  ``tool-input-available`` -> ``tool_call_done`` with the chunk's ``input`` (the value the SDK uses), else the
  argument text that arrived. A client call's done waits for the end of its step (``finish-step``, ``finish``, an
  error): a ``tool-output-available`` / ``tool-output-error`` for it before then says the server ran it (its
  done then has ``server=True``: no client's to run). ``tool-input-error`` (an unknown tool, an input its schema
  refused: the server answers the model itself) -> ``tool_call_done`` with ``server=True``, no ``arguments`` and
  the ``errorText`` as ``arguments_error``. A call that never got its input is incomplete.
- ``providerMetadata.<provider>.signature`` on a chunk -> that event's ``signature``,
  ``providerMetadata.openai.reasoningEncryptedContent`` -> its ``encrypted_reasoning``; ``source-url`` ->
  a ``raw`` event with its :class:`~ssewire.Citation`.
- ``finish`` ends the stream: a ``usage`` event when ``messageMetadata.usage`` is there (the AI SDK's
  ``LanguageModelUsage``), then ``done``: ``finishReason`` by :data:`VERCEL_STOP` (none: ``end``; tool_use when
  client calls were made). A ``message-metadata`` chunk with a ``usage`` -> ``usage``.
- ``error`` -> ``error`` (``type`` the extension member ``errorType`` when there, else ``error``; ``message`` the
  ``errorText``); ``abort`` -> ``error`` of type ``aborted``; either ends the stream. ``[DONE]`` and every other
  chunk (``start``, steps, ``data-*``, tool outputs ...) -> nothing / ``raw``.
- Usage: ``inputTokens`` every input token, ``inputTokenDetails.cacheReadTokens`` / ``cacheWriteTokens`` (else the
  older flat ``cachedInputTokens``), ``outputTokens`` every output token, reasoning from
  ``outputTokenDetails.reasoningTokens`` (else ``reasoningTokens``).
"""

from __future__ import annotations

from typing import Any, Optional

from ..citations import Citation
from ..events import Unified, new_event, new_usage
from ..usage import Usage, count, detail, usage_counts
from ._fast import typed
from .common import str_or
from .contract import Normalizer, Recognition, not_a_payload
from .tool_calls import CallTable, OpenCall, done_event

__all__ = ["VERCEL_STOP", "VercelUINormalizer", "VercelUIRules"]

_ABSENT = object()

#: ``finishReason`` -> unified stop reason (anything else maps to ``other``; none to ``end``).
VERCEL_STOP: dict[str, str] = {
    "stop": "end",
    "length": "max_tokens",
    "tool-calls": "tool_use",
    "content-filter": "refusal",
    "error": "failed",
    "interrupted": "incomplete",
}
#: The chunk types only this stream sends (``start``, ``finish`` and ``error`` are told apart by their members).
_UI_TYPES = frozenset(
    {
        "text-start",
        "text-delta",
        "text-end",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-input-error",
        "tool-output-available",
        "tool-output-error",
        "start-step",
        "finish-step",
        "source-url",
        "source-document",
        "message-metadata",
    }
)


#: The members of the stream's ``start`` chunk.
_START_MEMBERS = frozenset({"type", "messageId", "messageMetadata"})


class VercelUIRules(Recognition):
    """How the registry recognises UI message stream chunks and the AI SDK's usage object."""

    provider = "vercel-ui"

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """A chunk type only this stream has (a custom ``data-*`` part too), ``start`` with nothing but a
        ``messageId`` and ``messageMetadata`` (the AI SDK sends it bare unless it makes an id), or ``finish`` with a
        ``finishReason`` or ``messageMetadata``."""
        kind = obj.get("type")
        if type(kind) is not str:  # (any JSON value: a list or an object cannot be looked up)
            return False
        if kind in _UI_TYPES or kind.startswith("data-"):
            return True
        if kind == "start":
            return all(key in _START_MEMBERS for key in obj)
        return kind == "finish" and ("finishReason" in obj or "messageMetadata" in obj)

    @classmethod
    def claims_error(cls, obj: dict[str, Any]) -> bool:
        """``{"type": "error", "errorText": ...}``."""
        return obj.get("type") == "error" and "errorText" in obj

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """The AI SDK's ``LanguageModelUsage``: told apart from Bedrock's camelCase object by its details members
        (or the older flat ``cachedInputTokens`` / ``reasoningTokens``)."""
        if not any(key in raw for key in ("inputTokenDetails", "outputTokenDetails", "cachedInputTokens")):
            return None
        reasoning = detail(raw, "outputTokenDetails", "reasoningTokens") or count(raw.get("reasoningTokens"))
        cached = detail(raw, "inputTokenDetails", "cacheReadTokens") or count(raw.get("cachedInputTokens"))
        return usage_counts(
            count(raw.get("inputTokens")),
            count(raw.get("outputTokens")),
            cached,
            detail(raw, "inputTokenDetails", "cacheWriteTokens"),
            reasoning,
            raw,
            partial,
            cls.provider,
        )

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """The ``start`` chunk's ``messageId``; the stream names no model."""
        return (str_or(obj.get("messageId"), None) if obj.get("type") == "start" else None), None


def _signature(obj: dict[str, Any]) -> Optional[str]:
    """The ``signature`` of any provider's entry in the chunk's ``providerMetadata``, or None."""
    metadata = obj.get("providerMetadata")
    if type(metadata) is dict:
        for entry in metadata.values():
            signature = entry.get("signature") if type(entry) is dict else None
            if type(signature) is str:
                return signature
    return None


def _encrypted_reasoning(obj: dict[str, Any]) -> Optional[str]:
    """``providerMetadata.openai.reasoningEncryptedContent`` (the AI SDK's OpenAI provider's), or None."""
    metadata = obj.get("providerMetadata")
    openai = metadata.get("openai") if type(metadata) is dict else None
    secret = openai.get("reasoningEncryptedContent") if type(openai) is dict else None
    return secret if type(secret) is str else None


#: The chunks read without a decode: a ``text-delta`` or ``reasoning-delta`` with a non-empty string ``delta`` and no
#: ``providerMetadata`` (a signature or encrypted reasoning rides there); a stream names no SSE events, so the
#: chunk's ``type`` names the case.
_DELTA_RULE = typed.delta_rule(
    (("type",), ("delta",), ("providerMetadata",)),
    {
        "text-delta": ("text-delta", ((None, ((1, "text_delta"),)),)),
        "reasoning-delta": ("reasoning-delta", ((None, ((1, "reasoning_delta"),)),)),
    },
    type_path=0,
    nulls=(2,),
    by_type=True,
)


class VercelUINormalizer(Normalizer):
    """UI message stream chunks -> Unified (see the module docstring for the full contract)."""

    provider = "vercel-ui"
    terminal = "finish"
    rules = VercelUIRules
    stops = VERCEL_STOP
    names_model = False
    delta_rule = _DELTA_RULE  # text and reasoning deltas

    # The stream's state, each at its start value (the class's) until first set (see ``Normalizer``).
    _client_calls = False

    def __init__(self) -> None:
        super().__init__()
        self._calls = CallTable()
        #: client calls whose input is available, their done held until the server ran them (a ``tool-output-*``
        #: for them: then they are no client's to run) or the step ends (``finish-step``, ``finish``, an error)
        self._waiting: dict[str, tuple[OpenCall, Any, Any]] = {}

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one chunk."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        kind = dict.get(obj, "type")
        out: list[Unified]
        if kind == "text-delta" or kind == "reasoning-delta":
            delta = dict.get(obj, "delta")
            if type(delta) is str and delta:
                out = [new_event("text_delta" if kind == "text-delta" else "reasoning_delta", obj, delta)]
            else:
                out = [new_event("raw", obj)]
        elif kind == "tool-input-start":
            out = self._call_start(obj)
        elif kind == "tool-input-delta":
            out = self._call_delta(obj)
        elif kind == "tool-input-available" or kind == "tool-input-error":
            out = self._call_done(obj, kind == "tool-input-error")
        elif kind == "tool-output-available" or kind == "tool-output-error":
            out = self._ran(obj)
        elif kind == "finish":
            out = self._release() + self._finish(obj)
        elif kind == "finish-step":
            out = [*self._release(), new_event("raw", obj)]
        elif kind == "error" or kind == "abort":
            return self._release() + self._error(obj, kind)
        elif kind == "message-metadata":
            out = self._usage(obj) or [new_event("raw", obj)]
        elif kind == "source-url":
            event_ = new_event("raw", obj)
            url, title = dict.get(obj, "url"), dict.get(obj, "title")
            event_.citations = [Citation("source-url", str_or(url, None), str_or(title, None), raw=obj)]
            out = [event_]
        else:
            if kind == "start":
                self.response_id = str_or(dict.get(obj, "messageId"), self.response_id)
            out = [new_event("raw", obj)]
        if kind != "tool-input-start":
            signature = _signature(obj)
            if signature is not None:
                out[0].signature = signature
            secret = _encrypted_reasoning(obj)
            if secret is not None:
                if out[0].type in ("text_delta", "reasoning_delta"):  # (a delta's text is taken without its event)
                    out.append(new_event("raw", obj))
                out[-1].encrypted_reasoning = secret
        return out

    def _call_start(self, obj: dict[str, Any]) -> list[Unified]:
        call_id, name = dict.get(obj, "toolCallId"), dict.get(obj, "toolName")
        if type(call_id) is not str:
            return [new_event("raw", obj)]
        server = dict.get(obj, "providerExecuted") is True
        out = self._calls.close_at(call_id, obj)
        out.append(self._calls.start(call_id, OpenCall(call_id, str_or(name, None), server), obj))
        out[-1].signature = _signature(obj)
        return out

    def _call_delta(self, obj: dict[str, Any]) -> list[Unified]:
        call_id = dict.get(obj, "toolCallId")
        call = self._calls.get(call_id) if type(call_id) is str else None
        text = dict.get(obj, "inputTextDelta")
        if call is None or type(text) is not str or not text:
            return [new_event("raw", obj)]
        return [call.delta(text, obj)]

    def _call_done(self, obj: dict[str, Any], invalid: bool) -> list[Unified]:
        """``tool-input-available`` (the call's input: its ``input``, the parsed and repaired value the SDK uses,
        where there is one, else the argument text that arrived) or ``tool-input-error`` (a call the model made
        wrong: an unknown tool, an input its schema refused; the server answers it itself, with the error as the
        tool's result: never a client's to run)."""
        call_id = dict.get(obj, "toolCallId")
        if type(call_id) is not str:
            return [new_event("raw", obj)]
        out: list[Unified] = []
        call = self._calls.pop(call_id)
        if call is None:  # a call sent whole, without its start
            call = OpenCall(call_id, str_or(dict.get(obj, "toolName"), None), dict.get(obj, "providerExecuted") is True)
            out.append(call.start(obj))
        value = dict.get(obj, "input", _ABSENT)
        if invalid:
            call.server = True
            text = dict.get(obj, "errorText")
            done = call.done(obj) if call.parts else done_event(call.id, call.name, obj, server=True)
            done.arguments_error = text if type(text) is str and text else "the tool call was invalid"
            done.arguments = None
            out.append(done)
        elif call.server:
            out.append(self._done(call, obj, value))
        else:  # held: the server may run it still (see _ran)
            self._waiting[call.id] = (call, obj, value)
            if not out:
                out.append(new_event("raw", obj))
        return out

    @staticmethod
    def _done(call: OpenCall, obj: dict[str, Any], value: Any) -> Unified:
        """The call's done: its streamed argument text where that reads as the chunk's ``input`` (or there is
        none), else the ``input`` (what the SDK repaired or validated the text into)."""
        if call.parts:
            done = call.done(obj)
            if value is _ABSENT or value is None or done.arguments == value:
                return done
        if value is _ABSENT or value is None:
            return call.done(obj)
        if type(value) is str:
            return done_event(call.id, call.name, obj, text=value, server=call.server)
        return done_event(call.id, call.name, obj, value=value, server=call.server)

    def _ran(self, obj: dict[str, Any]) -> list[Unified]:
        """``tool-output-available`` / ``tool-output-error``: the server ran the call (or failed to): its done, as
        a call the provider ran, never a client's."""
        call_id = dict.get(obj, "toolCallId")
        held = self._waiting.pop(call_id, None) if type(call_id) is str else None
        if held is None:
            return [new_event("raw", obj)]
        call, done_obj, value = held
        call.server = True
        return [self._done(call, done_obj, value)]

    def _release(self) -> list[Unified]:
        """The dones of the client calls held (the step ended: the client runs them)."""
        if not self._waiting:
            return []
        self._client_calls = True
        out = [self._done(call, obj, value) for call, obj, value in self._waiting.values()]
        self._waiting = {}
        return out

    def _usage(self, obj: dict[str, Any]) -> list[Unified]:
        metadata = dict.get(obj, "messageMetadata")
        usage = dict.get(metadata, "usage") if type(metadata) is dict else None
        if type(usage) is not dict or VercelUIRules.usage_from(usage) is None:
            return []
        self.usage = usage
        return [new_usage(dict(usage), obj)]

    def _finish(self, obj: dict[str, Any]) -> list[Unified]:
        if self.finished:
            return [new_event("raw", obj)]
        out = self._usage(obj)
        reason = dict.get(obj, "finishReason")
        raw_stop = reason if type(reason) is str else None
        return out + self.done_events(obj, self.stop_for(raw_stop, self._client_calls), raw_stop)

    def _error(self, obj: dict[str, Any], kind: str) -> list[Unified]:
        self.done = True
        if kind == "abort":
            reason = dict.get(obj, "reason")
            error: dict[str, Any] = {"type": "aborted", "message": reason if type(reason) is str else ""}
        else:
            text, given = dict.get(obj, "errorText"), dict.get(obj, "errorType")
            error = {"type": given if type(given) is str else "error", "message": text if type(text) is str else ""}
        incomplete = self.incomplete_for_error()
        if incomplete:
            error["incomplete_tool_calls"] = incomplete
        usage = dict(self.usage) if self.usage else None
        return [Unified("error", error=error, usage=usage, raw=obj)]

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The calls still open (no ``tool-input-available`` came), and the client calls whose done was held when
        the stream ended before their step did."""
        return self._calls.incomplete() + [call.incomplete() for call, _, _ in self._waiting.values()]
