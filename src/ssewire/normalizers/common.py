"""Rules every provider normaliser shares, written once: the unified ``error`` shape, the truncation error, the
``tool_use`` stop rule and small field readers.
"""

from __future__ import annotations

from typing import Any, Optional

from ..events import SSEEvent, Unified

__all__ = [
    "client_stop",
    "error_object",
    "error_payload",
    "id_and_model",
    "key_of",
    "str_or",
    "too_deep_event",
    "truncated_event",
    "with_incomplete",
]


def str_or(value: Any, current: Optional[str]) -> Optional[str]:
    """``value`` when it is a string (a provider's optional id/model/status field), else ``current``."""
    return value if type(value) is str else current


def key_of(value: Any) -> Any:
    """``value`` when it can key an open tool call (an int or a string: a block or call index), else None."""
    return value if type(value) is int or type(value) is str else None


def id_and_model(holder: Any) -> tuple[Optional[str], Optional[str]]:
    """``(holder["id"], holder["model"])`` of a payload's response/message/interaction object (each ``None``
    unless a string; both ``None`` when ``holder`` is not a dict)."""
    if type(holder) is not dict:
        return None, None
    return str_or(holder.get("id"), None), str_or(holder.get("model"), None)


def client_stop(stop: str, client_calls: bool) -> str:
    """The one stop rule every provider shares: a response that ended normally (``end``) after client tool calls
    waits for their results, so it stops with ``tool_use`` (OpenAI says ``completed``, Gemini ``STOP`` ...)."""
    return "tool_use" if stop == "end" and client_calls else stop


def error_object(obj: dict[str, Any], skip: tuple[str, ...] = ("type", "error")) -> Any:
    """The error object of an error payload: its nested ``error`` object, else the payload's own fields (less
    ``skip``) with a string ``error`` as the message (``{"type": "error", "code": ..., "message": ...}``)."""
    inner = obj.get("error")
    if type(inner) is dict:
        return inner
    flat = {k: v for k, v in obj.items() if k not in skip}
    if type(inner) is str and "message" not in flat:
        flat["message"] = inner
    return flat


def error_payload(inner: Any, default_type: str = "error") -> dict[str, Any]:
    """A unified ``error`` dict from a provider's error object: its fields kept, plus ``type`` and ``message``.

    ``type`` is the provider's error type, else its code or status; ``message`` is always a string.
    """
    if not isinstance(inner, dict):
        return {"type": default_type, "message": "" if inner is None else str(inner)}
    out = dict(inner)
    kind = inner.get("type") or inner.get("status") or inner.get("code") or default_type
    out["type"] = kind if isinstance(kind, str) else str(kind)
    message = inner.get("message")
    out["message"] = message if isinstance(message, str) else ("" if message is None else str(message))
    return out


def with_incomplete(error: dict[str, Any], incomplete: list[dict[str, Any]]) -> dict[str, Any]:
    """``error`` with ``incomplete_tool_calls`` added when calls were left open by it (unchanged otherwise)."""
    if incomplete:
        error["incomplete_tool_calls"] = incomplete
    return error


def too_deep_event(ev: SSEEvent) -> Unified:
    """The ``error`` event for a payload that is valid JSON nested deeper than the decoders read (what it carried
    is lost: said, never dropped as if it were not there); ``raw`` keeps the event."""
    return Unified(
        "error",
        error={"type": "payload_too_deep", "message": "a payload is nested deeper than the JSON decoders read"},
        raw={"event": ev.event, "data": ev.data},
    )


def truncated_event(
    provider: str,
    expected: str,
    usage: Optional[dict[str, Any]] = None,
    incomplete: Optional[list[dict[str, Any]]] = None,
    detail: str = "",
) -> Unified:
    """The ``error`` event for a stream that ended before its terminal event (``expected`` names it; ``detail``,
    when given, says how it ended). ``incomplete_tool_calls`` lists the calls left open (always present)."""
    message = f"{provider} stream ended before its terminal event ({expected})"
    return Unified(
        "error",
        usage=usage,
        error={
            "type": "stream_truncated",
            "message": f"{message}: {detail}" if detail else message,
            "incomplete_tool_calls": incomplete or [],
        },
    )
