"""Typed decoding of the hot payloads: decode only the fields a normaliser needs, with msgspec (the ``fast``
extra), and keep the rest as text for a lazy ``raw`` (:class:`~ssewire.events.LazyPayload`).

Each decoder here reads the bulk of one provider's stream -- text, reasoning and argument deltas -- into a small
struct. A normaliser takes its fast path only when the struct shows the one shape that path handles (every field
that could change the result is declared, so an unexpected key or type is seen, never ignored); anything else,
and every payload when msgspec is not installed or typed decoding is switched off (``SSEWIRE_NO_TYPED_DECODE=1``,
``SSEWIRE_NO_FAST_JSON=1`` or ``SSEWIRE_NO_MSGSPEC=1``, or :func:`set_enabled`), takes the full decode and the
same rules as before. The events are the same either way:
tests compare them field for field, ``raw`` included.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from .._env import env_flag

__all__ = [
    "DECODE_ERRORS",
    "anthropic_delta",
    "chat_chunk",
    "enabled",
    "gemini_chunk",
    "responses_delta",
    "set_enabled",
]

Decoder = Optional[Callable[[str], Any]]

responses_delta: Decoder = None
anthropic_delta: Decoder = None
chat_chunk: Decoder = None
gemini_chunk: Decoder = None
DECODE_ERRORS: tuple[type[BaseException], ...] = (ValueError,)
#: The value of a field whose key was absent (msgspec's UNSET), where presence matters.
ABSENT: Any = object()

try:
    import msgspec
except ImportError:  # pragma: no cover - the fast extra is not installed: full decoding only
    msgspec = None  # type: ignore[assignment]

if msgspec is not None:

    class ResponsesDelta(msgspec.Struct, gc=False):
        """``response.*.delta`` events of the Responses API."""

        type: str
        delta: Optional[str] = None
        sequence_number: Optional[int] = None

    class AnthropicInner(msgspec.Struct, gc=False):
        type: Optional[str] = None
        text: Optional[str] = None
        thinking: Optional[str] = None

    class AnthropicDelta(msgspec.Struct, gc=False):
        """``content_block_delta`` events of the Messages API."""

        type: str
        delta: Optional[AnthropicInner] = None

    class ChatDelta(msgspec.Struct, gc=False):
        content: Optional[str] = None
        reasoning_content: Optional[str] = None
        reasoning: Optional[str] = None
        refusal: Any = None
        tool_calls: Any = None
        function_call: Any = None
        role: Any = None

    class ChatChoice(msgspec.Struct, gc=False):
        delta: Optional[ChatDelta] = None
        finish_reason: Any = None

    class ChatChunk(msgspec.Struct, gc=False):
        """A Chat Completions chunk."""

        choices: Optional[list[ChatChoice]] = None
        id: Any = None
        model: Any = None
        usage: Any = None
        error: Any = None
        type: Any = None  # a chunk with a "type" is routed by the Responses rules, never fast

    class GeminiPart(msgspec.Struct, gc=False):
        text: Optional[str] = None
        thought: Any = None
        thoughtSignature: Any = None
        functionCall: Any = msgspec.UNSET  # its presence matters (even as null): UNSET when the key is absent

    class GeminiContent(msgspec.Struct, gc=False):
        parts: Optional[list[GeminiPart]] = None

    class GeminiCandidate(msgspec.Struct, gc=False):
        content: Optional[GeminiContent] = None
        finishReason: Any = None

    class GeminiChunk(msgspec.Struct, gc=False):
        """A generateContent chunk."""

        candidates: Optional[list[GeminiCandidate]] = None
        usageMetadata: Optional[dict[str, Any]] = None
        responseId: Any = None
        modelVersion: Any = None
        promptFeedback: Any = None
        error: Any = None
        event_type: Any = None

    _DECODERS: dict[str, Callable[[str], Any]] = {
        "responses_delta": msgspec.json.Decoder(ResponsesDelta).decode,
        "anthropic_delta": msgspec.json.Decoder(AnthropicDelta).decode,
        "chat_chunk": msgspec.json.Decoder(ChatChunk).decode,
        "gemini_chunk": msgspec.json.Decoder(GeminiChunk).decode,
    }
    DECODE_ERRORS = (msgspec.MsgspecError, ValueError, RecursionError)
    ABSENT = msgspec.UNSET
else:  # pragma: no cover
    _DECODERS = {}


def set_enabled(on: bool) -> bool:
    """Switch typed decoding on (where msgspec is installed) or off; returns whether it is on. Normalisers read
    the decoders when they are created."""
    global responses_delta, anthropic_delta, chat_chunk, gemini_chunk
    on = on and bool(_DECODERS)
    responses_delta = _DECODERS.get("responses_delta") if on else None
    anthropic_delta = _DECODERS.get("anthropic_delta") if on else None
    chat_chunk = _DECODERS.get("chat_chunk") if on else None
    gemini_chunk = _DECODERS.get("gemini_chunk") if on else None
    return on


def enabled() -> bool:
    """Whether typed decoding is on."""
    return responses_delta is not None


_OFF_SWITCHES = ("SSEWIRE_NO_TYPED_DECODE", "SSEWIRE_NO_FAST_JSON", "SSEWIRE_NO_MSGSPEC")
set_enabled(not any(env_flag(name) for name in _OFF_SWITCHES))
