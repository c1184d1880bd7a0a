"""The names users type, as ``Literal`` types: a type checker catches ``e.type == "text_detla"`` or
``framing="SSE"``. The runtime checks (``normalizer_for``, ``make_scanner``) use the same values.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

__all__ = ["FramingName", "ProviderName", "TargetName", "UnifiedType", "literal_values"]

#: Every value ``Unified.type`` can take.
UnifiedType = Literal[
    "text_delta",
    "reasoning_delta",
    "tool_call_start",
    "tool_call_delta",
    "tool_call_done",
    "usage",
    "done",
    "error",
    "raw",
]

#: Every provider name :func:`~ssewire.normalizer_for` accepts.
ProviderName = Literal[
    "auto",
    "openai",
    "openai-chat",
    "anthropic",
    "xai",
    "gemini",
    "gemini-live",
    "ollama",
    "mistral",
    "cohere",
    "bedrock-converse",
    "bedrock-anthropic",
    "openai-realtime",
    "vercel-ui",
]

#: Every target :func:`~ssewire.transcode` writes (the provider name of the API it writes).
TargetName = Literal["openai-chat", "openai", "anthropic", "gemini", "vercel-ui"]

#: Every framing name the scanners accept (``auto``: recognised from the first bytes).
FramingName = Literal["auto", "sse", "json_array", "ndjson", "aws-eventstream"]


def literal_values(literal: Any) -> tuple[str, ...]:
    """The strings a ``Literal`` type admits, in declaration order."""
    return tuple(get_args(literal))
