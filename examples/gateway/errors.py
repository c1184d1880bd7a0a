"""The errors the gateway itself answers with, in the shape of the route's provider, so that the client's SDK reads
them as it reads that provider's own: a whole JSON body (:func:`error_body`, before any response byte was sent) or
one more event at the end of a stream (:func:`error_event`, after the upstream stalled).

``kind`` is what went wrong, one of :data:`KINDS`; each provider's shape gets its own type name for it."""

from __future__ import annotations

import json
from typing import Any, Literal, Optional

from ssewire.names import ProviderName

__all__ = ["KINDS", "ErrorKind", "error_body", "error_event", "error_response_body"]

ErrorKind = Literal["invalid_request", "request_too_large", "timeout", "bad_gateway"]
KINDS: tuple[ErrorKind, ...] = ("invalid_request", "request_too_large", "timeout", "bad_gateway")

_ANTHROPIC = {
    "invalid_request": "invalid_request_error",
    "request_too_large": "request_too_large",
    "timeout": "timeout_error",
    "bad_gateway": "api_error",
}
_GOOGLE = {
    "invalid_request": "INVALID_ARGUMENT",
    "request_too_large": "INVALID_ARGUMENT",
    "timeout": "DEADLINE_EXCEEDED",
    "bad_gateway": "UNAVAILABLE",
}
_STATUS = {"invalid_request": 400, "request_too_large": 413, "timeout": 504, "bad_gateway": 502}


def error_body(provider: ProviderName, kind: ErrorKind, message: str, status: Optional[int] = None) -> dict[str, Any]:
    """The JSON error body ``provider``'s API answers a failed request with: Anthropic's
    ``{"type": "error", "error": {"type", "message"}}``, Google's ``{"error": {"code", "message", "status"}}``,
    Ollama's ``{"error": "..."}``, else OpenAI's ``{"error": {"message", "type", "param", "code"}}``."""
    if provider in ("anthropic", "bedrock-anthropic"):
        return {"type": "error", "error": {"type": _ANTHROPIC[kind], "message": message}}
    if provider in ("gemini", "gemini-live"):
        return {"error": {"code": status or _STATUS[kind], "message": message, "status": _GOOGLE[kind]}}
    if provider == "ollama":
        return {"error": message}
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def error_response_body(provider: ProviderName, kind: ErrorKind, message: str, status: int) -> bytes:
    """:func:`error_body` as the bytes of a response body."""
    return json.dumps(error_body(provider, kind, message, status)).encode()


def _stream_payload(provider: ProviderName, kind: ErrorKind, message: str) -> dict[str, Any]:
    """The error event's payload: the Responses API's flat ``{"type": "error", "code", "message", "param"}`` for
    ``openai`` (and Realtime), else the provider's error body (Anthropic's ``error`` event is its body)."""
    if provider in ("openai", "openai-realtime"):
        return {"type": "error", "code": kind, "message": message, "param": None}
    return error_body(provider, kind, message)


def error_event(provider: ProviderName, content_type: Optional[str], kind: ErrorKind, message: str) -> Optional[bytes]:
    """The bytes that end a stream of ``content_type`` with an error in ``provider``'s shape: an SSE
    ``event: error`` (``text/event-stream``) or one JSON line (NDJSON / JSON Lines); None for any other body
    (a JSON array, AWS event-stream, a whole JSON body), which cannot take one more event."""
    media = (content_type or "").partition(";")[0].strip().lower()
    payload = json.dumps(_stream_payload(provider, kind, message)).encode()
    if media == "text/event-stream":
        return b"event: error\ndata: " + payload + b"\n\n"
    if media in ("application/x-ndjson", "application/jsonl", "application/json-lines", "application/x-jsonlines"):
        return payload + b"\n"
    return None
