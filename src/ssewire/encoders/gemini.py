"""Unified events -> a Gemini ``streamGenerateContent?alt=sse`` stream (``GenerateContentResponse`` chunks).

Contract (see :mod:`.base` for what every encoder does):

- One chunk per event that says something: ``{"candidates": [{"content": {"role": "model", "parts": [part]},
  "index": 0}], "modelVersion", "responseId"}``.
- ``text_delta`` -> a ``{"text"}`` part; ``reasoning_delta`` -> ``{"text", "thought": true}``; a signature ->
  ``thoughtSignature`` on the call it came with, else on an empty text part of its own (as Gemini sends it); one
  that is not base64 (Gemini's SDKs decode it to bytes) is dropped.
- A client call -> one ``functionCall`` part (``name``, ``args``, ``id``) when the source closes it: Gemini sends
  calls whole, so the call is written from the arguments its ``tool_call_done`` carries; a call never closed is
  never written. Arguments that are not a JSON object, and calls the provider ran itself, have no Gemini shape:
  dropped.
- Citations with a URL -> the grounding chunks (``{"web": {"uri", "title"}}``) of the ``groundingMetadata`` of
  the last chunk (the finish, or the chunk before an error); a source cited again is dropped (Gemini lists each
  once).
- ``done`` -> a last chunk with ``finishReason`` (end and tool_use ``STOP``, max_tokens ``MAX_TOKENS``, refusal
  ``SAFETY``, failed and cancelled the error below, the rest ``OTHER`` or ``STOP`` counted as dropped) and
  ``usageMetadata`` (``promptTokenCount`` every input token, ``cachedContentTokenCount``, ``candidatesTokenCount``
  the output without the thoughts, ``thoughtsTokenCount``, ``totalTokenCount``). Gemini has no cache-write count: a
  non-zero one is dropped.
- ``error`` -> the usage so far on a chunk without a ``finishReason``, then ``{"error": {"code", "message",
  "status"}}`` with the source's error type as ``status``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping, Optional

from ..events import Unified
from ..normalizers.gemini import GEMINI_STOP
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

__all__ = ["GeminiEncoder", "GeminiWriter", "gemini_usage", "is_base64"]


#: The standard base64 alphabet (padding apart).
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def is_base64(text: str) -> bool:
    """Whether ``text`` is standard base64 (what Gemini's ``thoughtSignature`` is: its SDKs decode it to bytes):
    what ``base64.b64decode(text, validate=True)`` takes, of a length divisible by four. Checked, not decoded (a
    signature is kilobytes, on every call of a stream; decoding it cost four times the check): characters of the
    alphabet, then at most two ``=``; of such a length, every one decodes."""
    if len(text) % 4 or not text.isascii():
        return False
    data = text.encode("ascii")
    body = data.rstrip(b"=")
    return len(data) - len(body) <= 2 and not body.translate(None, _BASE64)


def gemini_usage(usage: Any) -> dict[str, Any]:
    """A :class:`~ssewire.Usage` as Gemini's ``usageMetadata`` (thoughts counted apart from the candidates; a
    reasoning count above the output count, which some routers report, is cut to it)."""
    inputs, outputs = usage.input_tokens or 0, usage.output_tokens or 0
    reasoning = min(usage.reasoning_tokens or 0, outputs)
    out: dict[str, Any] = {"promptTokenCount": inputs, "candidatesTokenCount": outputs - reasoning}
    if usage.cached_input_tokens:
        out["cachedContentTokenCount"] = usage.cached_input_tokens
    if reasoning:
        out["thoughtsTokenCount"] = reasoning
    out["totalTokenCount"] = inputs + outputs
    return out


class GeminiWriter(Writer):
    """:class:`GeminiEncoder`'s code (its state typed where compiled: ``gemini.pxd``)."""

    to = "gemini"
    call_signatures = True
    signature_at_done = True  # (a call is one functionCall part, written at its end)
    stops: ClassVar[Mapping[str, str]] = {
        "end": "STOP",
        "tool_use": "STOP",
        "max_tokens": "MAX_TOKENS",
        "refusal": "SAFETY",
        "stop_sequence": "STOP",
        "other": "OTHER",
    }
    reads_stop = GEMINI_STOP
    carries_cache_writes = False
    reasoning_within_output = True  # thoughts and candidates add up to the output

    def _init_state(self) -> None:
        # the stream's state (one stream, one encoder, made for each)
        self._head = ""
        self._tail = ""
        self._sources: Optional[dict[tuple[str, Optional[str]], dict[str, Any]]] = None  # grounding chunks, by
        # (uri, title)

    def on_citations(self, citations: list[Any]) -> str:
        """Each citation with a URL -> a grounding chunk (``{"web": {"uri", "title"}}``) of the ``groundingMetadata``
        the last chunk carries (Gemini's sources are a set: a source cited again is counted as dropped)."""
        self._cite(citations)
        return ""

    def _cite(self, citations: list[Any]) -> None:
        sources = self._sources
        if sources is None:
            sources = self._sources = {}
        for citation in url_citations(self, citations):
            key = (citation.url, citation.title)
            if key in sources:
                self.dropped["citation"] += 1
            else:
                web = {"uri": citation.url}
                if citation.title is not None:
                    web["title"] = citation.title
                sources[key] = {"web": web}

    def held_citations(self) -> int:
        return len(self._sources) if self._sources else 0

    def _grounding(self, candidate: dict[str, Any]) -> dict[str, Any]:
        """``candidate`` with the ``groundingMetadata`` of the sources cited so far (given once)."""
        if self._sources:
            candidate["groundingMetadata"] = {"groundingChunks": list(self._sources.values())}
            self._sources = {}
        return candidate

    def on_start(self) -> str:
        self._head = 'data: {"candidates":[{"content":{"role":"model","parts":['
        self._tail = f'{{"modelVersion":{quote(self.model or "")},"responseId":{quote(self.response_id or "")}}}'
        self._tail = ']},"index":0}],' + self._tail[1:] + "\n\n"
        return ""

    def on_text(self, text: str) -> str:
        quoted = quote(text) if len(text) < LONG_TEXT else quote_long(text)  # (see quote_text)
        return f'{self._head}{{"text":{quoted}}}{self._tail}'

    def on_reasoning(self, text: str) -> str:
        quoted = quote(text) if len(text) < LONG_TEXT else quote_long(text)  # (see quote_text)
        return f'{self._head}{{"text":{quoted},"thought":true}}{self._tail}'

    def text_run(self, kind: str) -> Optional[TextRun]:
        """Every delta as :meth:`on_text` / :meth:`on_reasoning` write it."""
        tail = "}" if kind == "text_delta" else ',"thought":true}'
        return self._head + '{"text":', tail + self._tail, None, None, ""

    def on_signature(self, signature: str) -> str:
        if not is_base64(signature):
            return Writer.on_signature(self, signature)
        return f'{self._head}{{"text":"","thoughtSignature":{quote_text(signature)}}}{self._tail}'

    def on_call_start(self, call: Call) -> str:
        return ""

    def on_call_arguments(self, call: Call, text: str) -> str:
        return ""  # written whole with the call: its done event carries the parsed arguments

    def on_call_done(self, call: Call, event: Unified) -> str:
        arguments = event.arguments
        if arguments is None:  # not a JSON object: Gemini's args must be one
            self.dropped["arguments"] += 1
            arguments = {}
        part: dict[str, Any] = {"functionCall": {"name": call.name or "", "args": arguments, "id": call.id}}
        if call.signature is not None:
            if is_base64(call.signature):
                part["thoughtSignature"] = call.signature
            else:
                self.dropped["signature"] += 1
        return self._head + dumps(part) + self._tail

    def on_done(self, stop: str, native: str) -> str:
        body: dict[str, Any] = {"candidates": [self._grounding({"finishReason": native, "index": 0})]}
        if self.usage is not None:
            body["usageMetadata"] = gemini_usage(self.usage)
        body["modelVersion"] = self.model
        body["responseId"] = self.response_id
        return "data: " + dumps(body) + "\n\n"

    def body(self, result: Any, native: str) -> dict[str, Any]:
        """A ``GenerateContentResponse``: a thought part, the text part, a ``functionCall`` part per client call,
        the last signature on the first part after the thought (where Gemini puts it), ``finishReason`` and
        ``usageMetadata``."""
        parts: list[dict[str, Any]] = []
        if result.reasoning:
            parts.append({"text": result.reasoning, "thought": True})
        answer: list[dict[str, Any]] = [{"text": result.text}] if result.text else []
        for call in result.client_tool_calls:
            if call.arguments is None:
                self.dropped["arguments"] += 1
            answer.append({"functionCall": {"name": call.name or "", "args": call.arguments or {}, "id": call.id}})
        signatures = [s for s in result.signatures if is_base64(s)]
        self.dropped["signature"] += len(result.signatures) - min(len(signatures), 1)
        if signatures:
            if not answer:
                answer.append({"text": ""})
            answer[0]["thoughtSignature"] = signatures[-1]
        self._cite(result.citations)
        candidate = {"content": {"role": "model", "parts": parts + answer}, "finishReason": native, "index": 0}
        candidate = self._grounding(candidate)
        out: dict[str, Any] = {"candidates": [candidate]}
        if self.usage is not None:
            out["usageMetadata"] = gemini_usage(self.usage)
        out["modelVersion"] = self.model
        out["responseId"] = self.response_id
        return out

    def error_body(self, error: Mapping[str, Any]) -> dict[str, Any]:
        """Google's error body, ``{"error": {"code", "message", "status"}}`` (the source's error type as
        ``status``)."""
        kind, message = error_parts(error)
        code = error.get("code")
        return {"error": {"code": code if type(code) is int else 500, "message": message, "status": kind}}

    def on_error(self, error: Mapping[str, Any]) -> str:
        out = ""
        if self.usage is not None or self._sources:  # the usage and sources so far, on a chunk of their own (no
            # finishReason: not an end)
            candidate = self._grounding({"content": {"role": "model", "parts": []}, "index": 0})
            usage: dict[str, Any] = {"candidates": [candidate]}
            if self.usage is not None:
                usage["usageMetadata"] = gemini_usage(self.usage)
            out = "data: " + dumps(usage) + "\n\n"
        return out + "data: " + dumps(self.error_body(error)) + "\n\n"


class GeminiEncoder(GeminiWriter, Encoder):
    """Unified events -> ``GenerateContentResponse`` chunks (see the module docstring)."""

    __slots__ = ()
