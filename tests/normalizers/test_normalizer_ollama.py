"""Ollama /api/chat and /api/generate lines (NDJSON), one test per rule of the module docstring."""

from __future__ import annotations

from typing import Any

import pytest

from helpers.events import feed, types
from ssewire import collect, iter_unified, normalizer_for
from ssewire.normalizers.ollama import OllamaNormalizer, OllamaRules
from ssewire.usage import Usage


def chat(content: str = "", thinking: str = "", tool_calls: Any = None, **more: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking:
        message["thinking"] = thinking
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {"model": "m", "created_at": "2025-01-01T00:00:00Z", "message": message, "done": False, **more}


def done(reason: Any = "stop", **counts: Any) -> dict[str, Any]:
    line = chat(**counts)
    line["done"] = True
    if reason is not None:
        line["done_reason"] = reason
    return line


def test_thinking_then_content_and_generate_responses() -> None:
    events = feed(OllamaNormalizer(), chat("", "hm"), chat("Hi", "ok"), chat(""), done(), named=False)
    assert types(events) == ["reasoning_delta", "reasoning_delta", "text_delta", "raw", "done"]
    assert [e.text for e in events[:3]] == ["hm", "ok", "Hi"]
    generate = [
        {"model": "m", "response": "Once", "thinking": "t", "done": False},
        {"model": "m", "response": "", "done": True, "done_reason": "stop"},
    ]
    result = collect(feed(OllamaNormalizer(), *generate, named=False))
    assert (result.text, result.reasoning, result.stop_reason, result.model) == ("Once", "t", "end", "m")


def test_whole_tool_calls_start_delta_done_and_make_it_tool_use() -> None:
    calls = [
        {"function": {"name": "f", "arguments": {"a": 1, "b": [1.5, "é"]}}},
        {"id": "call_9", "function": {"name": "g", "arguments": {}}},
        {"function": {"name": "h", "arguments": '{"x": 2}'}},  # a proxy that sends the arguments as a string
    ]
    events = feed(OllamaNormalizer(), chat(tool_calls=calls), done(), named=False)
    assert types(events) == ["tool_call_start", "tool_call_delta", "tool_call_done"] * 3 + ["done"]
    assert events[1].arguments_delta == '{"a":1,"b":[1.5,"é"]}'
    assert events[2].arguments == {"a": 1, "b": [1.5, "é"]} and events[2].arguments_raw is None
    assert events[3].tool_call_id == "call_9" and events[0].tool_call_id not in ("call_9", "")
    assert events[8].arguments == {"x": 2} and events[8].arguments_raw == '{"x": 2}'
    result = collect(events)
    assert [c.name for c in result.tool_calls] == ["f", "g", "h"] and result.stop_reason == "tool_use"


def test_a_chat_line_reads_its_message_only() -> None:
    line = chat("a", tool_calls=None)
    line["tool_calls"] = [{"function": {"name": "f", "arguments": {}}}]  # beside message: not where Ollama puts them
    line["response"] = "not this"
    assert [(e.type, e.text) for e in feed(OllamaNormalizer(), line, finish=False, named=False)] == [
        ("text_delta", "a")
    ]
    bad = chat(tool_calls=[{"name": "f"}, "x"])  # calls without a function object
    assert types(feed(OllamaNormalizer(), bad, finish=False, named=False)) == ["raw", "raw"]


@pytest.mark.parametrize(
    ("reason", "stop"),
    [("stop", "end"), ("length", "max_tokens"), ("load", "other"), ("unload", "other"), (None, "end")],
)
def test_the_done_line_gives_usage_then_done(reason: Any, stop: str) -> None:
    line = done(reason, prompt_eval_count=7, eval_count=3, total_duration=10, eval_duration=5, context=[1, 2])
    events = feed(OllamaNormalizer(), chat("a"), line, named=False)
    assert types(events) == ["text_delta", "usage", "done"]
    assert events[1].usage == {"prompt_eval_count": 7, "eval_count": 3, "total_duration": 10, "eval_duration": 5}
    assert (events[2].stop_reason, events[2].raw_stop_reason) == (stop, reason)
    usage = collect(events).usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (7, 3, 10)
    assert (usage.cached_input_tokens, usage.reasoning_tokens, usage.source) == (None, None, "ollama")


def test_an_error_line_is_an_error_event_that_ends_the_stream() -> None:
    norm = OllamaNormalizer()
    events = feed(norm, chat("a"), {"error": "model 'x' not found"}, named=False)
    assert types(events) == ["text_delta", "error"]
    assert events[1].error == {"type": "error", "message": "model 'x' not found"}
    assert norm.done and not norm.finished


def test_a_stream_without_its_done_line_is_truncated() -> None:
    events = feed(OllamaNormalizer(), chat("a"), named=False)
    assert types(events) == ["text_delta", "error"]
    assert events[-1].error is not None and events[-1].error["type"] == "stream_truncated"
    assert "done: true" in events[-1].error["message"]


def test_usage_object_and_detection() -> None:
    assert Usage.from_raw({"prompt_eval_count": 4, "eval_count": 2}).source == "ollama"
    assert OllamaRules.claims(chat("a")) and OllamaRules.claims({"response": "x", "done": False})
    assert not OllamaRules.claims({"choices": [], "done": False})
    assert OllamaRules.claims_error({"error": "boom"}) and not OllamaRules.claims_error({"error": {}})
    body = b"".join(
        line.encode() + b"\n" for line in ('{"model":"m","message":{"content":"Hi"},"done":false}', '{"done":true}')
    )
    assert collect(iter_unified([body], "auto")).text == "Hi"  # framing and provider both recognised
    assert type(normalizer_for("ollama")) is OllamaNormalizer
