"""Unified events -> the Vercel AI SDK's UI message stream (what ``useChat`` reads; header
``x-vercel-ai-ui-message-stream: v1``), as its ``readUIMessageStream`` / ``uiMessageChunkSchema`` define it.

Contract (see :mod:`.base` for what every encoder does):

- ``start`` (``messageId`` the response id) and ``start-step`` first.
- ``text_delta`` -> a text part (``text-start``, ``text-delta`` ..., ``text-end``, one id per part);
  ``reasoning_delta`` -> a reasoning part (``reasoning-start`` / ``-delta`` / ``-end``); a part ends when another
  begins. A signature -> ``providerMetadata.ssewire.signature`` on the reasoning part's ``reasoning-end`` (an empty
  reasoning part of its own when none is open), or on the call that carried it; encrypted reasoning ->
  ``providerMetadata.openai.reasoningEncryptedContent`` (where the AI SDK's OpenAI provider puts it).
- A citation with a URL -> a ``source-url`` chunk (the others dropped).
- A call -> ``tool-input-start`` (``toolCallId``, ``toolName``; ``providerExecuted: true`` for a call the provider
  ran itself), ``tool-input-delta`` per fragment, and when the source closed it ``tool-input-available`` with the
  parsed ``input`` (``tool-input-error`` when the arguments are not a JSON object). A call never closed stays
  without either.
- ``done`` -> ``finish-step``, ``finish`` with ``finishReason`` (end ``stop``, max_tokens ``length``, tool_use
  ``tool-calls``, refusal ``content-filter``, failed ``error``, incomplete and cancelled ``interrupted``,
  stop_sequence ``stop`` counted as dropped) and ``messageMetadata.usage`` in the AI SDK's ``LanguageModelUsage``
  shape (``inputTokens`` with ``inputTokenDetails``, ``outputTokens`` with ``outputTokenDetails``,
  ``totalTokens``), then ``data: [DONE]``.
- ``error`` -> the usage so far on a ``message-metadata`` chunk, then ``{"type": "error", "errorText",
  "errorType"}`` (``errorType``, the source's error type, is an extension member: the SDK's chunk schema keeps
  members it does not know), then ``data: [DONE]`` (after the ``finish`` when the source still stopped).
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping, Optional

from ..events import Unified
from ..normalizers.vercel_ui import VERCEL_STOP
from .base import (
    LONG_TEXT,
    Call,
    Encoder,
    TextRun,
    Writer,
    dumps,
    error_parts,
    quote,
    quote_long,
    quote_text,
    url_citations,
)

__all__ = ["VercelUIEncoder", "VercelUIWriter", "ui_usage"]


def ui_usage(usage: Any) -> dict[str, Any]:
    """A :class:`~ssewire.Usage` as the AI SDK's ``LanguageModelUsage``."""
    inputs, outputs = usage.input_tokens or 0, usage.output_tokens or 0
    read, written, reasoning = (
        usage.cached_input_tokens or 0,
        usage.cache_write_tokens or 0,
        usage.reasoning_tokens or 0,
    )
    return {
        "inputTokens": inputs,
        "inputTokenDetails": {
            "noCacheTokens": max(inputs - read - written, 0),
            "cacheReadTokens": read,
            "cacheWriteTokens": written,
        },
        "outputTokens": outputs,
        "outputTokenDetails": {"textTokens": max(outputs - reasoning, 0), "reasoningTokens": reasoning},
        "totalTokens": inputs + outputs,
    }


class VercelUIWriter(Writer):
    """:class:`VercelUIEncoder`'s code (its state typed where compiled: ``vercel_ui.pxd``)."""

    to = "vercel-ui"
    id_prefix = "msg-"
    call_signatures = True
    headers: ClassVar[Mapping[str, str]] = {
        "x-vercel-ai-ui-message-stream": "v1",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
    }
    stops: ClassVar[Mapping[str, str]] = {
        "end": "stop",
        "max_tokens": "length",
        "tool_use": "tool-calls",
        "refusal": "content-filter",
        "failed": "error",
        "incomplete": "interrupted",
        "cancelled": "interrupted",
        "stop_sequence": "stop",
        "other": "other",
    }
    reads_stop = VERCEL_STOP
    carries_server_calls = True
    carries_encrypted_reasoning = True

    def _init_state(self) -> None:
        # the stream's state (one stream, one encoder, made for each)
        self._parts = 0
        self._sources = 0
        self._open: Optional[str] = None  # "text" or "reasoning": the open part's kind
        self._open_id = ""
        self._delta_head = ""

    def on_start(self) -> str:
        return (
            f'data: {{"type":"start","messageId":{quote(self.response_id or "")}}}\n\ndata: {{"type":"start-step"}}\n\n'
        )

    def _switch(self, kind: str) -> str:
        if self._open == kind:
            return ""
        out = self._close_open()
        self._open = kind
        self._open_id = part_id = f"{kind[:4]}-{self._parts}"
        self._parts += 1
        self._delta_head = f'data: {{"type":"{kind}-delta","id":"{part_id}","delta":'
        return out + f'data: {{"type":"{kind}-start","id":"{part_id}"}}\n\n'

    def _close_open(self, metadata: Optional[dict[str, Any]] = None) -> str:
        kind = self._open
        if kind is None:
            return ""
        self._open = None
        if metadata is None:  # (part ids are ASCII letters, digits and "-": written as they are)
            return f'data: {{"type":"{kind}-end","id":"{self._open_id}"}}\n\n'
        end: dict[str, Any] = {"type": f"{kind}-end", "id": self._open_id, "providerMetadata": metadata}
        return "data: " + dumps(end) + "\n\n"

    def on_text(self, text: str) -> str:
        quoted = quote(text) if len(text) < LONG_TEXT else quote_long(text)  # (see quote_text)
        return f"{self._switch('text')}{self._delta_head}{quoted}}}\n\n"

    def on_reasoning(self, text: str) -> str:
        quoted = quote(text) if len(text) < LONG_TEXT else quote_long(text)  # (see quote_text)
        return f"{self._switch('reasoning')}{self._delta_head}{quoted}}}\n\n"

    def text_run(self, kind: str) -> Optional[TextRun]:
        """A delta of the open text or reasoning part, as :meth:`on_text` / :meth:`on_reasoning` write it."""
        if self._open != ("text" if kind == "text_delta" else "reasoning"):
            return None
        return self._delta_head, "}\n\n", None, None, ""

    def open_run(self, kind: str) -> str:
        """The text or reasoning part a ``kind`` delta goes to, started (another one ended first)."""
        return self._switch("text" if kind == "text_delta" else "reasoning")

    def on_citations(self, citations: list[Any]) -> str:
        """Each citation with a URL -> a ``source-url`` chunk (the others dropped)."""
        out = ""
        for citation in url_citations(self, citations):
            source: dict[str, Any] = {"type": "source-url", "sourceId": f"src-{self._sources}", "url": citation.url}
            if citation.title is not None:
                source["title"] = citation.title
            self._sources += 1
            out += "data: " + dumps(source) + "\n\n"
        return out

    def on_signature(self, signature: str) -> str:
        out = self._switch("reasoning")
        return out + self._close_open({"ssewire": {"signature": signature}})

    def on_encrypted_reasoning(self, secret: str) -> str:
        """Where the AI SDK's OpenAI provider puts it: ``providerMetadata.openai.reasoningEncryptedContent`` on the
        reasoning part's end."""
        out = self._switch("reasoning")
        return out + self._close_open({"openai": {"reasoningEncryptedContent": secret}})

    def _input_start(self, call: Call, server: bool) -> str:
        out = self._close_open()
        start: dict[str, Any] = {"type": "tool-input-start", "toolCallId": call.id, "toolName": call.name or ""}
        if server:
            start["providerExecuted"] = True
        if call.signature is not None:
            start["providerMetadata"] = {"ssewire": {"signature": call.signature}}
        return out + "data: " + dumps(start) + "\n\n"

    def on_call_start(self, call: Call) -> str:
        return self._input_start(call, False)

    def on_server_call(self, call: Call) -> str:
        return self._input_start(call, True)

    def on_call_arguments(self, call: Call, text: str) -> str:
        delta = quote_text(text)
        return f'data: {{"type":"tool-input-delta","toolCallId":{quote(call.id)},"inputTextDelta":{delta}}}\n\n'

    def on_server_arguments(self, call: Call, text: str) -> str:
        return self.on_call_arguments(call, text)

    def on_call_done(self, call: Call, event: Unified) -> str:
        done: dict[str, Any] = {"type": "tool-input-available", "toolCallId": call.id, "toolName": call.name or ""}
        if event.arguments is None:
            done["type"] = "tool-input-error"
            done["input"] = event.arguments_raw
            done["errorText"] = event.arguments_error or "the arguments are not a JSON object"
        else:
            done["input"] = event.arguments
        if call.server:
            done["providerExecuted"] = True
        return "data: " + dumps(done) + "\n\n"

    def on_server_done(self, call: Call, event: Unified) -> str:
        return self.on_call_done(call, event)

    def on_done(self, stop: str, native: str) -> str:
        out = self._close_open()
        usage = "" if self.usage is None else f',"messageMetadata":{{"usage":{dumps(ui_usage(self.usage))}}}'
        return (
            f'{out}data: {{"type":"finish-step"}}\n\ndata: {{"type":"finish","finishReason":{quote(native)}{usage}}}'
            "\n\ndata: [DONE]\n\n"
        )

    def body(self, result: Any, native: str) -> dict[str, Any]:
        """A ``UIMessage`` (what ``useChat`` holds): reasoning, text and ``tool-<name>`` parts (state
        ``input-available``), ``metadata`` with the ``finishReason`` and ``usage``."""
        parts: list[dict[str, Any]] = []
        secrets = result.encrypted_reasoning
        if result.reasoning or result.signatures or secrets:
            reasoning: dict[str, Any] = {"type": "reasoning", "text": result.reasoning, "state": "done"}
            provider: dict[str, Any] = {}
            if result.signatures:
                provider["ssewire"] = {"signature": result.signatures[-1]}
                self.dropped["signature"] += len(result.signatures) - 1
            if secrets:  # where the AI SDK's OpenAI provider puts it
                provider["openai"] = {"reasoningEncryptedContent": secrets[-1]}
                self.dropped["encrypted_reasoning"] += len(secrets) - 1
            if provider:
                reasoning["providerMetadata"] = provider
            parts.append(reasoning)
        if result.text:
            parts.append({"type": "text", "text": result.text, "state": "done"})
        for call in result.tool_calls:
            part = {"type": f"tool-{call.name or ''}", "toolCallId": call.id, "state": "input-available"}
            part["input"] = call.arguments
            if call.arguments is None and call.arguments_raw:  # not a JSON object: the part's input is none
                self.dropped["arguments"] += 1
            if call.server:
                part["providerExecuted"] = True
            parts.append(part)
        for number, citation in enumerate(url_citations(self, result.citations)):
            source: dict[str, Any] = {"type": "source-url", "sourceId": f"src-{number}", "url": citation.url}
            if citation.title is not None:  # (as the stream's source-url chunk)
                source["title"] = citation.title
            parts.append(source)
        metadata: dict[str, Any] = {"finishReason": native}
        if self.usage is not None:
            metadata["usage"] = ui_usage(self.usage)
        return {"id": self.response_id, "role": "assistant", "parts": parts, "metadata": metadata}

    def error_body(self, error: Mapping[str, Any]) -> dict[str, Any]:
        """``{"error": {"type", "message"}}`` (the UI stream has no error body of its own)."""
        kind, message = error_parts(error)
        return {"error": {"type": kind, "message": message}}

    def on_error(self, error: Mapping[str, Any]) -> str:
        kind, message = error_parts(error)
        out = self._close_open()
        if self.usage is not None:
            out += "data: " + dumps({"type": "message-metadata", "messageMetadata": {"usage": ui_usage(self.usage)}})
            out += "\n\n"
        body = {"type": "error", "errorText": message or kind, "errorType": kind}
        return out + "data: " + dumps(body) + "\n\n"

    def on_close(self) -> str:
        return "data: [DONE]\n\n"


class VercelUIEncoder(VercelUIWriter, Encoder):
    """Unified events -> UI message stream chunks (see the module docstring)."""

    __slots__ = ()
