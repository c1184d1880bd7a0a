"""Valid but hostile payloads inside otherwise good streams: numbers out of the fast decoder's range in a large
payload, counts too large to print, base64 written with JSON escapes, nesting deeper than the decoders read,
one tool call id given twice. Each is read as the slow path reads it or said in an ``error`` event: never an untyped
exception, never content dropped as if it had not been there; the same on both implementations."""

from __future__ import annotations

import base64
import json
from typing import Any, get_args

import pytest

from helpers.eventstream import event as eventstream_event
from ssewire import collect, iter_unified, render, transcode
from ssewire.names import TargetName
from ssewire.usage import Usage

TARGETS: tuple[TargetName, ...] = get_args(TargetName)


def _sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(b"event: %s\ndata: %s\n\n" % (p["type"].encode(), json.dumps(p).encode()) for p in payloads)


def test_a_large_payload_with_a_number_out_of_the_fast_decoders_range_is_read() -> None:
    # held as UTF-8 (over 1 KiB, not ASCII) and decoded without its bulk: the retry the full decode has, here too
    done = {"type": "response.output_text.done", "item_id": "m", "output_index": 0, "content_index": 0}
    body = (
        "event: response.output_text.done\ndata: " + json.dumps({**done, "text": "é" * 600}, ensure_ascii=False)[:-1]
    ).encode()
    body += b',"logprobs":1e400}\n\n'
    assert [e.type for e in iter_unified([body], "openai")] == ["raw", "error"]  # (the error: cut, no terminal)
    for target in TARGETS:
        assert b"".join(transcode([body], "openai", to=target))


def test_counts_too_large_to_print_are_malformed_counts() -> None:
    big = int("9" * 4300)  # (summed with another count it would pass int_max_str_digits)
    raw = {"prompt_tokens": big, "completion_tokens": 2, "total_tokens": big + 2}
    usage = Usage.from_raw(raw)
    assert (usage.input_tokens, usage.output_tokens) == (0, 2)
    assert repr(usage)
    top = 2**53  # (the largest integer a JSON number holds exactly in JavaScript: ssewire.usage.MAX_COUNT)
    assert Usage.from_raw({"prompt_tokens": top, "completion_tokens": -1}).input_tokens == top
    body = (
        b'data: {"id":"c","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}\n\n'
        b'data: {"id":"c","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":' + b"9" * 4300 + b","
        b'"completion_tokens":2}}\n\ndata: [DONE]\n\n'
    )
    result = collect(iter_unified([body], "openai-chat"))
    for target in TARGETS:
        assert render(result, target) and b"".join(transcode([body], "openai-chat", to=target))
    cost = result.price()
    assert cost is None or cost.total < 1


def test_base64_written_with_json_escapes_is_the_same_bytes() -> None:
    events = [
        {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {"input_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ]
    body = b""
    for i, payload in enumerate(events):
        encoded = base64.b64encode(json.dumps(payload).encode()).decode()
        if i == 2:  # the same JSON string, written with \\u escapes
            encoded = "".join(f"\\u{ord(c):04x}" for c in encoded)
        body += eventstream_event("chunk", ('{"bytes":"' + encoded + '"}').encode())
    result = collect(iter_unified([body], "bedrock-anthropic"))
    assert (result.text, result.stop_reason, result.error) == ("Hello", "end", None)


@pytest.mark.parametrize("provider", ["openai-chat", "auto"])
def test_a_payload_nested_deeper_than_the_decoders_read_is_an_error_not_a_silent_raw(provider: str) -> None:
    deep = "[" * 5000 + "]" * 5000
    body = (
        'data: {"id":"c","model":"m","x":' + deep + ',"choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\n'
        'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    ).encode()
    result = collect(iter_unified([body], provider))  # type: ignore[arg-type]
    assert result.error is not None and result.error["type"] == "payload_too_deep"


def test_a_tool_call_id_given_twice_is_two_calls() -> None:
    def tool(index: int, name: str) -> bytes:
        block = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
        return _sse(
            {"type": "content_block_start", "index": index, "content_block": block},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "input_json_delta", "partial_json": json.dumps({"k": index})}},
            {"type": "content_block_stop", "index": index},
        )  # fmt: skip

    body = (
        _sse({"type": "message_start", "message": {"id": "m", "model": "c", "usage": {"input_tokens": 1}}})
        + tool(0, "a")
        + tool(1, "b")
        + _sse({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}, {"type": "message_stop"})
    )
    for events in (iter_unified([body], "anthropic"), list(iter_unified([body], "anthropic"))):
        result = collect(events)
        assert [(call.name, call.arguments) for call in result.tool_calls] == [("a", {"k": 0}), ("b", {"k": 1})]
        assert result.tool_calls[0].id == "toolu_1" and result.tool_calls[1].id != "toolu_1"
    for target in TARGETS:
        written = collect(iter_unified([b"".join(transcode([body], "anthropic", to=target))], target))  # type: ignore[arg-type]
        assert [call.arguments for call in written.tool_calls] == [{"k": 0}, {"k": 1}], target
