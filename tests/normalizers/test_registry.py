"""The provider registry: one ordered list, whose names, classes and order everything else reads."""

from __future__ import annotations

from typing import Any

import pytest

from ssewire import PROVIDERS, Usage, normalizer_for
from ssewire.errors import DetectionError
from ssewire.names import ProviderName, literal_values
from ssewire.normalizers.auto import AutoNormalizer
from ssewire.normalizers.contract import DelegatingNormalizer, Normalizer
from ssewire.normalizers.providers import ENTRIES, detect_provider, error_provider, meta_from, usage_from


def test_the_literal_type_names_exactly_the_registered_providers() -> None:
    assert set(literal_values(ProviderName)) == set(PROVIDERS) == {e.name for e in ENTRIES} | {"auto"}
    assert PROVIDERS["auto"] is AutoNormalizer


def test_every_entry_builds_its_class_and_follows_the_contract() -> None:
    for entry in ENTRIES:
        normalizer = normalizer_for(entry.name)  # type: ignore[arg-type]
        assert type(normalizer) is entry.cls and isinstance(normalizer, Normalizer)
        assert normalizer.provider == entry.name
        for attribute in ("done", "finished", "usage", "response_id", "model", "last_sequence"):
            assert hasattr(normalizer, attribute), (entry.name, attribute)
        assert normalizer.incomplete_tool_calls() == []


@pytest.mark.parametrize(
    ("payload", "event", "expected"),
    [
        ({"event_type": "step.delta"}, None, "gemini"),
        ({"candidates": []}, None, "gemini"),
        ({"type": "response.created"}, None, "openai"),
        ({"delta": "x"}, "response.output_text.delta", "openai"),  # data without type: the event name decides
        ({"type": "message_start"}, None, "anthropic"),
        ({"object": "chat.completion.chunk", "choices": []}, None, "openai-chat"),
        ({"type": "error", "error": {}}, None, None),
    ],
)
def test_detection_asks_the_classes_in_registry_order(payload: dict[str, Any], event: Any, expected: Any) -> None:
    assert detect_provider(payload, event) == expected


def test_a_payload_nobody_claims_is_a_detection_error_never_a_guess() -> None:
    with pytest.raises(DetectionError, match="hello"):
        detect_provider({"hello": 1})


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"type": "error", "sequence_number": 3, "code": "x"}, "openai"),
        ({"type": "error", "error": {"type": "overloaded_error"}}, "anthropic"),
        ({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}, "gemini"),
        ({"error": {"message": "x"}}, "openai-chat"),
    ],
)
def test_bare_errors_go_to_the_provider_whose_shape_they_have(payload: dict[str, Any], expected: str) -> None:
    assert error_provider(payload) == expected


def test_usage_is_read_by_the_provider_whose_shape_it_has_and_unknown_shapes_say_so() -> None:
    chat = usage_from({"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3})
    assert chat is not None and chat.source == "openai-chat" and chat.total_tokens == 3
    bedrock = Usage.from_raw({"inputTokens": 12, "outputTokens": 34, "cacheReadInputTokens": 5})
    assert bedrock.source == "bedrock-converse" and (bedrock.input_tokens, bedrock.cached_input_tokens) == (17, 5)
    unknown = Usage.from_raw({"tokensIn": 12, "tokensOut": 34})
    assert unknown.source is None and not unknown.recognised
    assert (unknown.input_tokens, unknown.output_tokens, unknown.total_tokens) == (None, None, None)
    assert unknown.raw == {"tokensIn": 12, "tokensOut": 34}


def test_metadata_is_read_by_the_provider_that_claims_the_payload() -> None:
    assert meta_from({"type": "response.created", "response": {"id": "r", "model": "m"}}) == ("r", "m", True, True)
    assert meta_from({"type": "message_start", "message": {"id": "a", "model": "c"}}) == ("a", "c", True, True)
    assert meta_from({"responseId": "g", "modelVersion": "v", "candidates": []}) == ("g", "v", True, True)
    ollama = meta_from({"model": "q", "message": {"content": ""}, "done": False})
    assert ollama == (None, "q", False, True)  # Ollama names no response id
    assert meta_from({"type": "message-start", "id": "k"}) == ("k", None, True, False)  # Cohere names no model
    assert meta_from({"hello": 1}) == (None, None, True, True)


def test_delegation_is_one_mechanism_state_is_the_delegates() -> None:
    from ssewire.events import SSEEvent

    for name in ("openai", "xai", "auto"):
        normalizer = normalizer_for(name)  # type: ignore[arg-type]
        assert isinstance(normalizer, DelegatingNormalizer)
        chunk = (
            '{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"x"}}]}'
        )
        normalizer(SSEEvent("message", chunk))
        assert normalizer.delegate is not None
        assert (normalizer.response_id, normalizer.model) == ("c1", "m")
        normalizer(SSEEvent("message", "[DONE]"))
        assert normalizer.done and normalizer.finished and normalizer.delegate.done
