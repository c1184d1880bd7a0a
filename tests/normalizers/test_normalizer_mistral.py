"""Mistral chat streams: the Chat Completions rules plus typed content chunks and Mistral's finish reasons."""

from __future__ import annotations

from typing import Any

import pytest

from helpers.events import feed, types
from ssewire import collect, normalizer_for
from ssewire.errors import DetectionError
from ssewire.normalizers.mistral import MistralNormalizer
from ssewire.normalizers.providers import detect_provider


def chunk(delta: dict[str, Any], finish: Any = None, **more: Any) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "magistral-medium-latest",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **more,
    }


def thinking(*texts: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": [{"type": "text", "text": t} for t in texts]}


def test_typed_content_chunks_in_order_then_plain_strings() -> None:
    events = feed(
        MistralNormalizer(),
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": [thinking("Okay", ", the")]}),
        chunk({"content": [thinking("user"), {"type": "text", "text": "A"}, {"type": "image_url", "image_url": "x"}]}),
        chunk({"content": "nswer"}),
        chunk({"content": ""}, "stop", usage={"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}),
        "[DONE]",
        named=False,
    )
    assert types(events) == [
        "raw",
        "reasoning_delta",
        "reasoning_delta",
        "reasoning_delta",
        "text_delta",
        "raw",
        "text_delta",
        "usage",
        "done",
    ]
    result = collect(events)
    assert (result.reasoning, result.text, result.stop_reason) == ("Okay, theuser", "Answer", "end")


@pytest.mark.parametrize(
    ("finish", "stop"), [("model_length", "max_tokens"), ("error", "failed"), ("length", "max_tokens")]
)
def test_mistral_finish_reasons(finish: str, stop: str) -> None:
    events = feed(MistralNormalizer(), chunk({"content": "a"}), chunk({}, finish), "[DONE]", named=False)
    assert events[-1].type == "done" and (events[-1].stop_reason, events[-1].raw_stop_reason) == (stop, finish)


def test_whole_tool_calls_and_a_list_content_beside_them() -> None:
    call = {"id": "t1", "type": "function", "index": 0, "function": {"name": "f", "arguments": '{"a": 1}'}}
    events = feed(
        MistralNormalizer(),
        chunk({"content": [{"type": "text", "text": "x"}], "tool_calls": [call]}),
        chunk({}, "tool_calls"),
        "[DONE]",
        named=False,
    )
    assert types(events) == ["text_delta", "tool_call_start", "tool_call_delta", "tool_call_done", "done"]
    result = collect(events)
    assert [(c.id, c.arguments) for c in result.tool_calls] == [("t1", {"a": 1})] and result.stop_reason == "tool_use"


@pytest.mark.parametrize(("finish", "stop"), [("model_length", "max_tokens"), ("error", "failed")])
def test_auto_reads_a_mistral_stream_as_chat_with_the_same_finish_reasons(finish: str, stop: str) -> None:
    for provider in ("openai-chat", "auto", "mistral"):
        events = feed(normalizer_for(provider), chunk({"content": [thinking("x")]}), chunk({}, finish), "[DONE]")
        assert types(events) == ["reasoning_delta", "raw", "done"]
        assert (events[-1].stop_reason, events[-1].raw_stop_reason) == (stop, finish), provider
    assert detect_provider(chunk({"content": "a"})) == "openai-chat"
    assert type(normalizer_for("mistral")) is MistralNormalizer
    with pytest.raises(DetectionError):
        detect_provider({"mistral": True})
