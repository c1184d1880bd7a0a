"""``provider="auto"``: the provider and API are recognised from the first payloads, then one normaliser runs.

Recognised shapes: Gemini Interactions (``event_type``), Gemini generateContent (``candidates``,
``usageMetadata``, ``promptFeedback``), OpenAI/xAI Responses (``type`` ``response.*``), Anthropic Messages
(Anthropic event types), Chat Completions chunks (``object: chat.completion.chunk`` or ``choices``). An error
payload that could be any provider's is held (at most a few) until a recognisable payload arrives, then replayed
to that provider's normaliser; if none arrives its ``error`` events are emitted at the end. A JSON payload that
matches no provider raises :class:`~ssewire.errors.DetectionError`: detection never guesses.
"""

from __future__ import annotations

from typing import Any, Optional

from .._json import loads
from ..errors import DetectionError
from ..events import SSEEvent, Unified
from ._base import DelegatingNormalizer, truncated_event
from .anthropic import MESSAGE_EVENTS
from .gemini_interactions import is_interaction_event

__all__ = ["AutoNormalizer", "detect_provider"]

_GEMINI_KEYS = ("candidates", "usageMetadata", "promptFeedback", "modelVersion", "responseId")
_MAX_HELD = 8


def detect_provider(obj: dict[str, Any], event: Optional[str] = None) -> Optional[str]:
    """The provider name whose normaliser handles ``obj`` (``None`` when it could be anyone's, e.g. a bare
    error); raises :class:`DetectionError` for a payload no provider sends."""
    if "event_type" in obj or is_interaction_event(event):
        return "gemini"
    kind = obj.get("type")
    if type(kind) is str:
        if kind.startswith("response."):
            return "openai"
        if kind in MESSAGE_EVENTS:
            return "anthropic"
        if kind == "error":
            return None
    if obj.get("object") == "chat.completion.chunk" or "choices" in obj:
        return "openai-chat"
    for key in _GEMINI_KEYS:
        if key in obj:
            return "gemini"
    if "error" in obj:
        return None
    sample = ", ".join(sorted(obj)[:8])
    raise DetectionError(f"cannot tell which provider sent a payload with keys: {sample}")


def _error_provider(obj: dict[str, Any]) -> str:
    """The provider whose error event ``obj`` looks like (it is only a tie-breaker: any of them reports it)."""
    if obj.get("type") == "error":
        # OpenAI numbers its events and may put code/message at the top; Anthropic nests {"error": {...}}
        return "openai" if "sequence_number" in obj or "code" in obj else "anthropic"
    inner = obj.get("error")
    return "gemini" if isinstance(inner, dict) and "status" in inner else "openai-chat"


class AutoNormalizer(DelegatingNormalizer):
    """Detects the provider from the first recognisable payload and hands every event to its normaliser."""

    provider = "auto"
    terminal = "terminal event"

    def __init__(self) -> None:
        super().__init__()
        self._held: list[SSEEvent] = []  # error payloads seen before detection

    @property
    def detected(self) -> Optional[str]:
        """The provider recognised so far (None before the first recognisable payload)."""
        return None if self.delegate is None else self.delegate.provider

    def __call__(self, ev: SSEEvent) -> list[Unified]:
        inner = self.delegate
        if inner is not None:
            return inner(ev)
        data = ev.data
        if data == "[DONE]":
            return []
        try:
            obj = loads(data)
        except ValueError:
            return [Unified("raw", raw={"event": ev.event, "data": data})]
        if type(obj) is not dict:
            return [Unified("raw", raw={"event": ev.event, "data": obj})]
        name = detect_provider(obj, ev.event)
        if name is None:
            if len(self._held) >= _MAX_HELD:
                raise DetectionError("only error payloads so far: cannot tell which provider sent the stream")
            self._held.append(ev)
            return []
        from .registry import normalizer_for  # the registry imports this module

        inner = self.delegate = normalizer_for(name)
        out: list[Unified] = []
        for held in self._held:
            out += inner(held)
        self._held = []
        out += inner(ev)
        return out

    def flush(self) -> list[Unified]:
        if self.delegate is not None:
            return self.delegate.flush()
        if not self._held:
            return []
        # only errors came: read them as the provider whose error shape they have
        from .registry import normalizer_for

        inner = normalizer_for(_error_provider(loads(self._held[0].data)))
        out: list[Unified] = []
        for held in self._held:
            out += inner(held)
        self._held = []
        self._done = True
        return out

    def finish(self, detail: str = "") -> list[Unified]:
        if self.delegate is not None:
            return self.delegate.finish(detail)
        out = self.flush()
        if not self._done:
            self._done = True
            out.append(truncated_event("auto", "any payload", detail=detail))
        return out
