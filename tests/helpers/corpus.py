"""How a corpus capture's ``expected`` block (provider-native values) maps onto ssewire's results."""

from __future__ import annotations

from typing import Any, Optional, cast

from ssewire.names import FramingName, ProviderName

# (corpus api, corpus provider) -> ssewire provider name
PROVIDER_FOR = {
    ("openai-responses", "openai"): "openai",
    ("openai-responses", "xai"): "xai",
    ("chat-completions", "openai"): "openai-chat",
    ("chat-completions", "xai"): "xai",
    ("anthropic-messages", "anthropic"): "anthropic",
    ("anthropic-messages", "xai"): "xai",
    ("gemini-generate-content", "gemini"): "gemini",
    ("gemini-generate-content", "gemini-vertex"): "gemini",
    ("gemini-interactions", "gemini"): "gemini",
    ("ollama-chat", "ollama"): "ollama",
    ("ollama-generate", "ollama"): "ollama",
    ("mistral-chat", "mistral"): "mistral",
    ("cohere-v2-chat", "cohere"): "cohere",
    ("chat-completions", "groq"): "openai-chat",
    ("chat-completions", "openrouter"): "openai-chat",
    ("bedrock-converse-stream", "bedrock"): "bedrock-converse",
    ("bedrock-invoke-nova", "bedrock"): "bedrock-converse",
    ("bedrock-invoke-anthropic", "bedrock"): "bedrock-anthropic",
    ("openai-realtime", "openai"): "openai-realtime",
    ("openai-realtime", "azure-openai"): "openai-realtime",
    ("openai-realtime", "xai"): "openai-realtime",
}

_STOP = {
    "openai-responses": {"completed": "end", "failed": "failed", "incomplete": "incomplete", "cancelled": "cancelled"},
    "chat-completions": {"stop": "end", "tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal"},
    "anthropic-messages": {
        "end_turn": "end",
        "tool_use": "tool_use",
        "max_tokens": "max_tokens",
        "stop_sequence": "stop_sequence",
        "pause_turn": "incomplete",
        "refusal": "refusal",
    },
    "gemini-generate-content": {"STOP": "end", "MAX_TOKENS": "max_tokens", "SAFETY": "refusal"},
    "gemini-interactions": {"completed": "end", "requires_action": "tool_use", "failed": "failed"},
    "ollama-chat": {"stop": "end", "length": "max_tokens"},
    "ollama-generate": {"stop": "end", "length": "max_tokens"},
    "cohere-v2-chat": {"COMPLETE": "end", "TOOL_CALL": "tool_use", "MAX_TOKENS": "max_tokens"},
    "mistral-chat": {"stop": "end", "length": "max_tokens", "model_length": "max_tokens", "tool_calls": "tool_use"},
    "bedrock-converse-stream": {
        "end_turn": "end",
        "tool_use": "tool_use",
        "max_tokens": "max_tokens",
        "guardrail_intervened": "refusal",
    },
    "bedrock-invoke-nova": {"end_turn": "end", "max_tokens": "max_tokens"},
    "openai-realtime": {"completed": "end", "incomplete": "max_tokens", "cancelled": "cancelled"},
}
_STOP["bedrock-invoke-anthropic"] = _STOP["anthropic-messages"]


def provider_for(capture: dict[str, Any]) -> ProviderName:
    return cast(ProviderName, PROVIDER_FOR[(capture["api"], capture["provider"])])


_FRAMING = {"json-array": "json_array", "ndjson": "ndjson", "aws-eventstream": "aws-eventstream", "ws-jsonl": "ndjson"}


def framing_for(capture: dict[str, Any]) -> FramingName:
    """The capture's framing name (``sse, data-only, LF`` ... are all SSE)."""
    return cast(FramingName, _FRAMING.get(capture["framing"], "sse"))


def unified_stop(capture: dict[str, Any]) -> Optional[str]:
    """The unified stop reason the capture must end with: a response that waits for client tool calls is
    ``tool_use`` whatever the provider's own value says. A Realtime session ends with its last response, which
    made no calls when ``responses`` shows the calls were answered in a later one."""
    expected = capture["expected"]
    if expected["stop"] is None:  # an error ended it
        return None
    stop = _STOP[capture["api"]][expected["stop"]]
    answered = capture["api"] == "openai-realtime" and len(expected.get("responses", ())) > 1
    if stop == "end" and expected["tool_calls"] and not answered:
        return "tool_use"
    return stop
