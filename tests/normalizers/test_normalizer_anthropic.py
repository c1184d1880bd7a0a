"""AnthropicNormalizer (Messages API): one test per rule of its contract, on synthetic events."""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest

from helpers.events import feed, only, types
from ssewire import AnthropicNormalizer, collect
from ssewire.events import SSEEvent

START_USAGE = {"input_tokens": 20, "cache_read_input_tokens": 0, "output_tokens": 1, "service_tier": "standard"}


def message_start(usage: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    message: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test"}
    message["content"] = []
    message["usage"] = dict(usage if usage is not None else START_USAGE)
    return {"type": "message_start", "message": message}


def block_start(index: Optional[int], block: dict[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "content_block_start", "content_block": block}
    if index is not None:
        event["index"] = index
    return event


def delta(index: Optional[int], **body: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "content_block_delta", "delta": body}
    if index is not None:
        event["index"] = index
    return event


def block_stop(index: Optional[int]) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index} if index is not None else {"type": "content_block_stop"}


def message_delta(stop: Optional[str] = "end_turn", usage: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}}
    if usage is not None:
        event["usage"] = usage
    return event


STOP = {"type": "message_stop"}


def tool_use(call_id: str, name: str, kind: str = "tool_use", given: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    return {"type": kind, "id": call_id, "name": name, "input": given if given is not None else {}}


def test_text_and_thinking_deltas() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, type="thinking_delta", thinking="Let me see."),
        delta(0, type="thinking_delta", thinking=""),
        block_stop(0),
        block_start(1, {"type": "text", "text": ""}),
        delta(1, type="text_delta", text="Answer"),
        block_stop(1),
        message_delta(),
        STOP,
    )
    assert types(events) == ["raw", "raw", "reasoning_delta", "raw", "raw", "raw", "text_delta", "raw", "raw", "done"]
    result = collect(events)
    assert (result.reasoning, result.text) == ("Let me see.", "Answer")


def test_signature_delta_is_raw_with_signature() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, {"type": "thinking", "thinking": ""}),
        delta(0, type="signature_delta", signature="EqQBsig=="),
        block_stop(0),
        message_delta(),
        STOP,
    )
    signed = [e for e in events if e.signature is not None]
    assert len(signed) == 1
    assert signed[0].type == "raw"
    assert signed[0].signature == "EqQBsig=="
    assert collect(events).signatures == ["EqQBsig=="]


def test_tool_use_arguments_are_the_concatenated_partial_json() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, tool_use("toolu_1", "weather")),
        delta(0, type="input_json_delta", partial_json=""),
        delta(0, type="input_json_delta", partial_json='{"city": '),
        delta(0, type="input_json_delta", partial_json='"Rome"}'),
        block_stop(0),
        message_delta("tool_use"),
        STOP,
    )
    tool_events = [e for e in events if e.type.startswith("tool_call")]
    assert types(tool_events) == ["tool_call_start", "tool_call_delta", "tool_call_delta", "tool_call_done"]
    assert all((e.tool_call_id, e.tool_name, e.server) == ("toolu_1", "weather", False) for e in tool_events)
    assert tool_events[-1].arguments == {"city": "Rome"}
    assert tool_events[-1].arguments_raw == '{"city": "Rome"}'


def test_tool_without_input_has_empty_arguments() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, tool_use("toolu_1", "now")),
        delta(0, type="input_json_delta", partial_json=""),
        block_stop(0),
        message_delta("tool_use"),
        STOP,
    )
    done = only(events, "tool_call_done")
    assert len(done) == 1
    assert (done[0].arguments, done[0].arguments_raw) == ({}, "")


def test_parallel_tool_blocks_keyed_by_index_never_merge() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(1, tool_use("toolu_a", "add")),
        block_start(2, tool_use("toolu_b", "mul")),
        delta(2, type="input_json_delta", partial_json='{"b":'),
        delta(1, type="input_json_delta", partial_json='{"a":'),
        delta(1, type="input_json_delta", partial_json="1}"),
        delta(2, type="input_json_delta", partial_json="2}"),
        block_stop(1),
        block_stop(2),
        message_delta("tool_use"),
        STOP,
    )
    calls = collect(events).tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [("toolu_a", "add", {"a": 1}), ("toolu_b", "mul", {"b": 2})]


@pytest.mark.parametrize("kind", ["server_tool_use", "mcp_tool_use"])
def test_server_tool_blocks_are_server_calls(kind: str) -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, tool_use("srvtoolu_1", "web_search", kind)),
        delta(0, type="input_json_delta", partial_json='{"query": "news"}'),
        block_stop(0),
        block_start(1, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}),
        block_stop(1),
        message_delta("end_turn"),
        STOP,
    )
    tool_events = [e for e in events if e.type.startswith("tool_call")]
    assert len(tool_events) == 3
    assert all(e.server for e in tool_events)
    result = collect(events)
    assert [c.id for c in result.server_tool_calls] == ["srvtoolu_1"]
    assert result.server_tool_calls[0].arguments == {"query": "news"}
    assert result.stop_reason == "end"  # server calls do not make the client wait


def test_whole_input_without_deltas_is_used() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, tool_use("mcptoolu_1", "lookup", "mcp_tool_use", {"id": 7})),
        block_stop(0),
        message_delta(),
        STOP,
    )
    done = only(events, "tool_call_done")[0]
    assert (done.arguments, done.arguments_raw, done.server) == ({"id": 7}, None, True)


def test_usage_merges_message_start_and_each_message_delta_into_fresh_dicts() -> None:
    norm = AnthropicNormalizer()
    events = feed(
        norm,
        message_start(),
        message_delta(None, {"output_tokens": 10}),
        message_delta(
            "end_turn", {"input_tokens": 25, "output_tokens": 30, "server_tool_use": {"web_search_requests": 1}}
        ),
        STOP,
    )
    usages = [e.usage for e in only(events, "usage")]
    assert usages == [
        {**START_USAGE, "output_tokens": 10},
        {**START_USAGE, "input_tokens": 25, "output_tokens": 30, "server_tool_use": {"web_search_requests": 1}},
    ]
    assert usages[0] is not usages[1]
    assert usages[1] is not norm.usage
    assert norm.usage == usages[1]
    assert (
        events[0].raw is not None and events[0].raw["message"]["usage"] == START_USAGE
    )  # the message_start payload is never updated
    usage = collect(events).usage
    assert usage is not None
    assert usage.raw == usages[1]


@pytest.mark.parametrize(
    ("stop", "unified"),
    [
        ("end_turn", "end"),
        ("max_tokens", "max_tokens"),
        ("tool_use", "tool_use"),
        ("stop_sequence", "stop_sequence"),
        ("refusal", "refusal"),
        ("pause_turn", "incomplete"),
        ("model_context_window_exceeded", "max_tokens"),
        ("brand_new_reason", "other"),
        (None, "end"),
    ],
)
def test_message_stop_gives_one_done_with_mapped_stop(stop: Optional[str], unified: str) -> None:
    norm = AnthropicNormalizer()
    events = feed(norm, message_start(), message_delta(stop, {"output_tokens": 3}), STOP, STOP)
    done = only(events, "done")
    assert len(done) == 1
    assert (done[0].stop_reason, done[0].raw_stop_reason) == (unified, stop)
    assert norm.done
    assert norm.stop_reason == stop
    assert events[-1].type == "raw"  # the repeated message_stop; no truncation error


def test_end_turn_with_client_tool_call_is_tool_use() -> None:
    events = feed(
        AnthropicNormalizer(), message_start(), block_start(0, tool_use("t", "f")), block_stop(0), message_delta(), STOP
    )
    assert collect(events).stop_reason == "tool_use"


def test_message_stop_closes_open_tool_calls_first() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, tool_use("t", "f")),
        delta(0, type="input_json_delta", partial_json='{"x":1}'),
        message_delta("tool_use"),
        STOP,
    )
    assert types(events)[-2:] == ["tool_call_done", "done"]
    assert events[-2].arguments == {"x": 1}


def test_overloaded_error_event_ends_the_stream() -> None:
    norm = AnthropicNormalizer()
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    events = feed(
        norm,
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="Hi"),
        error,
    )
    assert types(events)[-1] == "error"
    assert events[-1].error == {"type": "overloaded_error", "message": "Overloaded"}
    assert events[-1].raw == error
    assert not any(e.error and e.error["type"] == "stream_truncated" for e in events)


def test_xai_deltas_without_index_and_blocks_sharing_index_zero() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, {"type": "thinking", "thinking": ""}),
        delta(None, type="thinking_delta", thinking="hmm"),
        block_stop(0),
        block_start(0, {"type": "text", "text": ""}),
        delta(None, type="text_delta", text="ok"),
        block_stop(None),
        block_start(0, tool_use("toolu_x", "f")),
        delta(None, type="input_json_delta", partial_json='{"a":1}'),
        block_stop(None),
        message_delta("tool_use"),
        STOP,
    )
    assert types(events)[-6:] == ["tool_call_start", "tool_call_delta", "raw", "tool_call_done", "raw", "done"]
    result = collect(events)
    assert (result.reasoning, result.text) == ("hmm", "ok")
    assert [(c.id, c.arguments) for c in result.tool_calls] == [("toolu_x", {"a": 1})]


def test_new_block_at_an_index_with_an_open_call_closes_it_first() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, tool_use("t1", "f")),
        delta(0, type="input_json_delta", partial_json='{"a":1}'),
        block_start(0, tool_use("t2", "g")),
        delta(0, type="input_json_delta", partial_json='{"b":2}'),
        block_stop(0),
        message_delta("tool_use"),
        STOP,
    )
    calls = collect(events).tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("t1", {"a": 1}), ("t2", {"b": 2})]
    assert len(only(events, "tool_call_done")) == 2


def test_truncation_reports_open_calls_as_incomplete_and_carries_message_start_usage() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, tool_use("t", "f")),
        delta(0, type="input_json_delta", partial_json='{"a":'),
    )
    assert types(events)[-2:] == ["tool_call_delta", "error"]
    assert "tool_call_done" not in types(events)
    assert events[-1].error is not None
    assert events[-1].error["type"] == "stream_truncated"
    assert events[-1].error["incomplete_tool_calls"] == [{"id": "t", "name": "f", "arguments_raw": '{"a":'}]
    assert events[-1].usage == START_USAGE


def test_message_stop_after_max_tokens_leaves_an_open_call_incomplete() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, tool_use("t", "f")),
        delta(0, type="input_json_delta", partial_json='{"a": 1'),
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    )
    assert "tool_call_done" not in types(events)
    assert events[-1].type == "done" and events[-1].stop_reason == "max_tokens"
    result = collect(events)
    assert result.tool_calls == [] and result.client_tool_calls == []
    assert [(c.id, c.arguments, c.arguments_raw) for c in result.incomplete_tool_calls] == [("t", None, '{"a": 1')]


def test_message_stop_closes_a_call_whose_block_never_stopped() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, tool_use("t", "f")),
        delta(0, type="input_json_delta", partial_json='{"a": 1}'),
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    )
    assert types(events)[-2:] == ["tool_call_done", "done"]
    assert events[-2].arguments == {"a": 1}


def test_error_mid_call_lists_it_and_never_closes_it() -> None:
    events = feed(
        AnthropicNormalizer(),
        message_start(),
        block_start(0, tool_use("t", "f")),
        delta(0, type="input_json_delta", partial_json='{"a":'),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    assert "tool_call_done" not in types(events)
    assert events[-1].error is not None
    assert events[-1].error["type"] == "overloaded_error"
    assert events[-1].error["incomplete_tool_calls"] == [{"id": "t", "name": "f", "arguments_raw": '{"a":'}]
    assert [c.id for c in collect(events).incomplete_tool_calls] == ["t"]


def test_ids_are_kept_and_lifecycle_events_are_raw() -> None:
    norm = AnthropicNormalizer()
    events = feed(
        norm,
        message_start(),
        {"type": "ping"},
        block_start(0, {"type": "redacted_thinking", "data": "EmwKAhgB"}),
        block_stop(0),
        delta(1, type="citations_delta", citation={"type": "web_search_result_location"}),
        {"type": "brand_new_event"},
        finish=False,
    )
    assert types(events) == ["raw"] * 6
    assert all(e.raw is not None for e in events)
    assert (norm.message_id, norm.model) == ("msg_1", "claude-test")


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "message_start", "message": "x"},
        {"type": "message_start", "message": {"usage": [1], "id": 3}},
        {"type": "content_block_start", "index": [0], "content_block": "tool_use"},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": 5, "name": []}},
        {"type": "content_block_delta", "index": 0, "delta": "text"},
        {"type": "content_block_delta", "index": {"a": 1}, "delta": {"type": "input_json_delta", "partial_json": 5}},
        {"type": "content_block_delta", "delta": {"type": ["x"]}},
        {"type": "content_block_stop", "index": None},
        {"type": "message_delta", "delta": "stop", "usage": "many"},
        {"type": "error", "error": "Overloaded"},
        {"type": 7},
    ],
)
def test_malformed_payloads_never_raise(payload: dict[str, Any]) -> None:
    norm = AnthropicNormalizer()
    events = norm(SSEEvent("message", json.dumps(payload)))
    assert events
    assert all(e.raw == payload for e in events)
    norm.finish()
