"""Unified events -> an OpenAI Chat Completions stream (``chat.completion.chunk`` objects, then ``data: [DONE]``).

Contract (see :mod:`.base` for what every encoder does):

- Every chunk has the one ``id``, ``created`` and ``model`` of the stream; the first delta says the role (``{"role":
  "assistant", "content": ""}``), written with the first event.
- ``text_delta`` -> ``delta.content``; ``reasoning_delta`` -> ``delta.reasoning_content`` (the member DeepSeek, xAI
  and vLLM send; ``reasoning_field="reasoning"`` writes OpenRouter's and newer vLLM's name instead).
- A client call -> ``delta.tool_calls[{"index", "id", "type": "function", "function": {"name", "arguments": ""}}]``
  then ``{"index", "function": {"arguments": <fragment>}}`` per fragment; ``index`` counts the calls from 0. A
  Gemini thought signature on the call goes where Gemini's OpenAI-compatible endpoint puts it
  (``extra_content.google.thought_signature``). Calls the provider ran itself have no Chat shape: dropped.
- Citations with a URL -> ``url_citation`` annotations (``{"type": "url_citation", "url_citation": {"url",
  "title", "start_index", "end_index"}}``), all in one delta of their own before the finish (or the error), as
  OpenAI's search models send them; others are dropped.
- ``done`` -> a chunk with an empty delta and the ``finish_reason`` (end ``stop``, max_tokens ``length``, tool_use
  ``tool_calls`` when client calls were written, refusal ``content_filter``, failed and cancelled the error below
  (OpenAI's ``finish_reason`` has no value for them), the rest ``stop`` or ``length`` and counted as dropped),
  then, with ``include_usage`` (the default, as a client asks with ``stream_options.include_usage``), a chunk with
  ``choices: []`` and the ``usage``
  (``prompt_tokens`` every input token, ``prompt_tokens_details.cached_tokens`` / ``cache_write_tokens``,
  ``completion_tokens`` every output token, ``completion_tokens_details.reasoning_tokens``), then ``data: [DONE]``.
- ``error`` -> the usage chunk so far (with ``include_usage``), then ``data: {"error": {"message", "type",
  "code"}}`` (what OpenAI-compatible servers send for a late failure, and what the ``openai`` SDK raises as
  ``APIError``); ``[DONE]`` only when the source still stopped after it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping, Optional

from ..events import Unified
from ..normalizers.chat import CHAT_STOP
from .base import (
    LONG_TEXT,
    Call,
    Encoder,
    TextRun,
    Writer,
    arguments,
    dumps,
    error_parts,
    quote,
    quote_long,
    quote_text,
    url_citations,
)
from .openai import url_annotation

__all__ = ["ChatEncoder", "ChatWriter", "chat_annotation", "chat_usage", "chat_usage_json"]


def chat_annotation(citation: Any) -> dict[str, Any]:
    """A :class:`~ssewire.Citation` with a URL as a Chat Completions ``url_citation`` annotation."""
    flat = url_annotation(citation)
    del flat["type"]
    return {"type": "url_citation", "url_citation": flat}


def chat_usage(usage: Any) -> dict[str, Any]:
    """A :class:`~ssewire.Usage` as Chat Completions' ``usage`` object."""
    inputs, outputs = usage.input_tokens or 0, usage.output_tokens or 0
    out: dict[str, Any] = {"prompt_tokens": inputs, "completion_tokens": outputs, "total_tokens": inputs + outputs}
    prompt_details = {"cached_tokens": usage.cached_input_tokens or 0}
    if usage.cache_write_tokens:
        prompt_details["cache_write_tokens"] = usage.cache_write_tokens
    out["prompt_tokens_details"] = prompt_details
    out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens or 0}
    return out


def chat_usage_json(usage: Any) -> str:
    """:func:`chat_usage` as compact JSON text (the same text ``dumps`` writes of it), written directly: the counts of
    a :class:`~ssewire.Usage` are integers or None."""
    inputs, outputs = usage.input_tokens or 0, usage.output_tokens or 0
    written = usage.cache_write_tokens
    writes = f',"cache_write_tokens":{written}' if written else ""
    return (
        f'{{"prompt_tokens":{inputs},"completion_tokens":{outputs},"total_tokens":{inputs + outputs},'
        f'"prompt_tokens_details":{{"cached_tokens":{usage.cached_input_tokens or 0}{writes}}},'
        f'"completion_tokens_details":{{"reasoning_tokens":{usage.reasoning_tokens or 0}}}}}'
    )


#: The reasoning member's name as written (the default ``reasoning_field``).
_REASONING_KEY = quote("reasoning_content")


class ChatWriter(Writer):
    """Unified events -> Chat Completions chunks (see the module docstring): :class:`ChatEncoder`'s code (its
    state typed where compiled: ``chat.pxd``)."""

    to = "openai-chat"
    id_prefix = "chatcmpl-"
    call_signatures = True
    stops: ClassVar[Mapping[str, str]] = {
        "end": "stop",
        "max_tokens": "length",
        "tool_use": "tool_calls",
        "refusal": "content_filter",
        "stop_sequence": "stop",
        "incomplete": "length",
        "other": "stop",
    }
    reads_stop = CHAT_STOP

    def _init_state(self) -> None:
        self.include_usage = True
        self._reasoning_key = _REASONING_KEY
        self._head = ""  # every chunk's start (made by on_start)
        self._usage_written: Any = None
        self._annotations: Optional[list[dict[str, Any]]] = None  # the citations', written before the finish

    def _take_options(self, options: dict[str, Any]) -> None:
        """``include_usage`` (default True) and ``reasoning_field`` (default ``"reasoning_content"``)."""
        self.include_usage = bool(options.pop("include_usage", True))
        reasoning_field = options.pop("reasoning_field", "reasoning_content")
        if reasoning_field != "reasoning_content":
            self._reasoning_key = quote(reasoning_field)
        if options:
            Writer._take_options(self, options)

    def on_start(self) -> str:
        head = f'{{"id":{quote(self.response_id or "")},"object":"chat.completion.chunk","created":{self.created},'
        self._head = f'data: {head}"model":{quote(self.model or "")},"choices":[{{"index":0,"delta":'
        return self._chunk('{"role":"assistant","content":""}')

    def _chunk(self, delta: str, finish: str = "null") -> str:
        return f'{self._head}{delta},"logprobs":null,"finish_reason":{finish}}}]}}\n\n'

    def on_text(self, text: str) -> str:
        quoted = quote(text) if len(text) < LONG_TEXT else quote_long(text)  # (see quote_text)
        return f'{self._head}{{"content":{quoted}}},"logprobs":null,"finish_reason":null}}]}}\n\n'

    def on_reasoning(self, text: str) -> str:
        quoted = quote(text) if len(text) < LONG_TEXT else quote_long(text)  # (see quote_text)
        return f'{self._head}{{{self._reasoning_key}:{quoted}}},"logprobs":null,"finish_reason":null}}]}}\n\n'

    def text_run(self, kind: str) -> Optional[TextRun]:
        """Every delta as :meth:`on_text` / :meth:`on_reasoning` write it."""
        key = '{"content":' if kind == "text_delta" else "{" + self._reasoning_key + ":"
        return self._head + key, '},"logprobs":null,"finish_reason":null}]}\n\n', None, None, ""

    def on_citations(self, citations: list[Any]) -> str:
        """Each citation with a URL -> a ``url_citation`` annotation, all of them in one delta of their own before
        the finish (as OpenAI's search models send them; the ``openai`` SDK's stream helper cannot merge two)."""
        held = self._annotations
        if held is None:
            held = self._annotations = []
        held += [chat_annotation(citation) for citation in url_citations(self, citations)]
        return ""

    def _annotations_chunk(self) -> str:
        """The delta of the annotations held, once."""
        if not self._annotations:
            return ""
        delta = dumps({"annotations": self._annotations})
        self._annotations = []
        return self._chunk(delta)

    def on_call_start(self, call: Call) -> str:
        opened: dict[str, Any] = {
            "index": call.index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name or "", "arguments": ""},
        }
        if call.signature is not None:
            opened["extra_content"] = {"google": {"thought_signature": call.signature}}
        return self._chunk('{"tool_calls":[' + dumps(opened) + "]}")

    def on_call_arguments(self, call: Call, text: str) -> str:
        fragment = f'{{"tool_calls":[{{"index":{call.index},"function":{{"arguments":{quote_text(text)}}}}}]}}'
        return self._chunk(fragment)

    def on_call_done(self, call: Call, event: Unified) -> str:
        return ""  # Chat closes its calls with the finish reason

    def _target_stop(self, stop: str) -> str:
        """``tool_calls`` only after a client call (else nothing is there for the client to run: ``stop``, which
        reads back as ``end``, counted as dropped)."""
        if stop == "tool_use" and not self.client_calls:
            self.dropped["stop_reason"] += 1
            return "stop"
        return Writer._target_stop(self, stop)

    def held_citations(self) -> int:
        return len(self._annotations) if self._annotations else 0

    def on_done(self, stop: str, native: str) -> str:
        out = self._annotations_chunk() + self._chunk("{}", quote(native))
        out += self._usage_chunk()
        return out + "data: [DONE]\n\n"

    def _usage_chunk(self) -> str:
        """The usage chunk, unless this usage was written already (before an error)."""
        if self.usage is None or self.usage is self._usage_written:
            return ""
        if not self.include_usage:
            if self._usage_written is None:  # (the stream's usage, counted once however often it changed)
                self.dropped["usage"] += 1
            self._usage_written = self.usage
            return ""
        self._usage_written = self.usage
        head = self._head[: -len('[{"index":0,"delta":')]
        return f'{head}[],"usage":{chat_usage_json(self.usage)}}}\n\n'

    def body(self, result: Any, native: str) -> dict[str, Any]:
        """A ``chat.completion``: the message (``content``, the reasoning member, ``tool_calls``, ``annotations``),
        the ``finish_reason`` and ``usage``. Reasoning signatures have no member here: dropped."""
        message: dict[str, Any] = {"role": "assistant", "content": result.text or None}
        if result.reasoning:
            message[self._reasoning_key[1:-1]] = result.reasoning
        if result.client_tool_calls:
            message["tool_calls"] = [
                {"id": call.id, "type": "function", "function": {"name": call.name or "", "arguments": arguments(call)}}
                for call in result.client_tool_calls
            ]
        self.dropped["signature"] += len(result.signatures)
        cited = url_citations(self, result.citations)
        if cited:
            message["annotations"] = [chat_annotation(citation) for citation in cited]
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": native}
        out: dict[str, Any] = {"id": self.response_id, "object": "chat.completion", "created": self.created}
        out["model"] = self.model
        out["choices"] = [choice]
        if self.usage is not None:
            out["usage"] = chat_usage(self.usage)
        return out

    def error_body(self, error: Mapping[str, Any]) -> dict[str, Any]:
        """OpenAI's error body, ``{"error": {"message", "type", "code"}}``."""
        kind, message = error_parts(error)
        code = error.get("code")
        return {"error": {"message": message, "type": kind, "code": code if isinstance(code, (str, int)) else None}}

    def on_error(self, error: Mapping[str, Any]) -> str:
        out = self._annotations_chunk() + self._usage_chunk()  # what the error chunk cannot carry
        return out + "data: " + dumps(self.error_body(error)) + "\n\n"


class ChatEncoder(ChatWriter, Encoder):
    """Unified events -> Chat Completions chunks (see the module docstring)."""

    __slots__ = ()
