"""ChatCompletionsNormalizer: one test per rule of its contract, on synthetic chunks."""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest

from helpers.events import feed, types
from ssewire import ChatCompletionsNormalizer, SSEEvent, collect
from ssewire.events import SSEEvent as PySSEEvent

DONE = "[DONE]"


def chunk(
    delta: Optional[dict[str, Any]] = None, finish: Optional[str] = None, index: int = 0, **extra: Any
) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": index, "delta": delta or {}, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-test", "choices": [choice], **extra}


def tool(
    index: int, call_id: Optional[str] = None, name: Optional[str] = None, args: Optional[str] = None
) -> dict[str, Any]:
    fragment: dict[str, Any] = {"index": index, "function": {}}
    if call_id is not None:
        fragment["id"] = call_id
        fragment["type"] = "function"
    if name is not None:
        fragment["function"]["name"] = name
    if args is not None:
        fragment["function"]["arguments"] = args
    return fragment


def test_content_is_text_and_role_only_chunks_are_raw() -> None:
    events = feed(
        ChatCompletionsNormalizer(), chunk({"role": "assistant", "content": ""}), chunk({"content": "Hi"}), DONE
    )
    assert types(events) == ["raw", "text_delta", "done"]
    assert events[1].text == "Hi"


def test_reasoning_content_and_reasoning_are_reasoning_deltas_counted_once() -> None:
    events = feed(
        ChatCompletionsNormalizer(),
        chunk({"reasoning_content": "a"}),
        chunk({"reasoning": "b"}),
        chunk({"reasoning_content": "c", "reasoning": "c"}),
        chunk({"content": "ok"}),
        DONE,
    )
    result = collect(events)
    assert result.reasoning == "abc"
    assert result.text == "ok"


def test_refusal_is_text() -> None:
    events = feed(ChatCompletionsNormalizer(), chunk({"refusal": "I can't"}), DONE)
    assert collect(events).text == "I can't"


def test_streamed_tool_call_start_deltas_done_on_finish_reason() -> None:
    norm = ChatCompletionsNormalizer()
    events = feed(
        norm,
        chunk({"tool_calls": [tool(0, "call_a", "get", "")]}),
        chunk({"tool_calls": [tool(0, args='{"q":')]}),
        chunk({"tool_calls": [tool(0, args='"x"}')]}),
        finish=False,
    )
    assert types(events) == ["tool_call_start", "tool_call_delta", "tool_call_delta"]
    assert all(e.tool_call_id == "call_a" and e.tool_name == "get" for e in events)
    closing = feed(norm, chunk(finish="tool_calls"), finish=False)
    assert types(closing) == ["tool_call_done"]
    assert closing[0].arguments == {"q": "x"}
    assert closing[0].arguments_raw == '{"q":"x"}'


def test_parallel_calls_by_index_never_merge() -> None:
    events = feed(
        ChatCompletionsNormalizer(),
        chunk({"tool_calls": [tool(0, "call_a", "add", '{"a":'), tool(1, "call_b", "mul", '{"b":')]}),
        chunk({"tool_calls": [tool(1, args="2}"), tool(0, args="1}")]}),
        chunk(finish="tool_calls"),
        DONE,
    )
    calls = collect(events).tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [("call_a", "add", {"a": 1}), ("call_b", "mul", {"b": 2})]


def test_new_id_at_an_occupied_index_opens_a_new_call() -> None:
    events = feed(
        ChatCompletionsNormalizer(),
        chunk({"tool_calls": [tool(0, "call_a", "add", '{"a":1}')]}),
        chunk({"tool_calls": [tool(0, "call_b", "mul", '{"b":2}')]}),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert types(events)[:4] == ["tool_call_start", "tool_call_delta", "tool_call_done", "tool_call_start"]
    calls = collect(events).tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("call_a", {"a": 1}), ("call_b", {"b": 2})]


def test_repeated_same_id_is_a_continuation() -> None:
    events = feed(
        ChatCompletionsNormalizer(),
        chunk({"tool_calls": [tool(0, "call_a", "add", '{"a":')]}),
        chunk({"tool_calls": [tool(0, "call_a", None, "1}")]}),
        DONE,
    )
    calls = collect(events).tool_calls
    assert len(calls) == 1
    assert calls[0].arguments == {"a": 1}


def test_same_id_under_another_index_continues_the_call() -> None:
    events = feed(
        ChatCompletionsNormalizer(),
        chunk({"tool_calls": [tool(0, "call_a", "add", '{"a":')]}),
        chunk({"tool_calls": [tool(1, "call_a", None, "1,")]}),
        chunk({"tool_calls": [tool(1, args='"b":2}')]}),
        DONE,
    )
    calls = collect(events).tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("call_a", {"a": 1, "b": 2})]
    assert len([e for e in events if e.type == "tool_call_done"]) == 1


def test_falsy_error_field_is_not_an_error() -> None:
    events = feed(ChatCompletionsNormalizer(), {**chunk({"content": "ok"}), "error": None}, DONE)
    assert types(events) == ["text_delta", "done"]
    events = feed(ChatCompletionsNormalizer(), {**chunk({"content": "ok"}), "error": {}}, DONE)
    assert types(events) == ["text_delta", "done"]


def test_missing_ids_get_unique_synthetic_ids() -> None:
    events = feed(
        ChatCompletionsNormalizer(),
        chunk({"tool_calls": [tool(0, None, "a", "{}"), tool(1, None, "b", "{}")]}),
        chunk(finish="tool_calls"),
        chunk({"tool_calls": [tool(0, None, "c", "{}")]}),
        DONE,
    )
    ids = [c.id for c in collect(events).tool_calls]
    assert len(ids) == 3
    assert all(ids)
    assert len(set(ids)) == 3


def test_whole_call_in_one_chunk_takes_the_same_path() -> None:
    whole = {"id": "call_1", "function": {"name": "add", "arguments": '{"a":2}'}, "index": 0, "type": "function"}
    events = feed(ChatCompletionsNormalizer(), chunk({"tool_calls": [whole]}), chunk(finish="tool_calls"), DONE)
    assert types(events) == ["tool_call_start", "tool_call_delta", "tool_call_done", "done"]
    assert events[2].arguments == {"a": 2}


def test_empty_arguments_are_an_empty_object() -> None:
    events = feed(ChatCompletionsNormalizer(), chunk({"tool_calls": [tool(0, "call_a", "now", "")]}), DONE)
    done = [e for e in events if e.type == "tool_call_done"]
    assert len(done) == 1
    assert done[0].arguments == {}
    assert done[0].arguments_raw == ""


def test_usage_chunk_is_verbatim_wherever_it_comes() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5, "cost_in_usd_ticks": 7}
    norm = ChatCompletionsNormalizer()
    grok_style = {**chunk(finish="stop"), "usage": usage}  # usage on the finish chunk, before the last one
    events = feed(norm, chunk({"content": "x"}), grok_style, chunk(), DONE)
    assert [e.usage for e in events if e.type == "usage"] == [usage]
    assert norm.usage == usage
    openai_style = {"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": usage}
    events = feed(ChatCompletionsNormalizer(), chunk(finish="stop"), openai_style, DONE)
    assert types(events) == ["raw", "usage", "done"]


@pytest.mark.parametrize(
    ("finish", "unified"),
    [
        ("stop", "end"),
        ("length", "max_tokens"),
        ("tool_calls", "tool_use"),
        ("function_call", "tool_use"),
        ("content_filter", "refusal"),
        ("something_new", "other"),
        (None, "end"),
    ],
)
def test_done_on_sentinel_maps_last_finish_reason(finish: Optional[str], unified: str) -> None:
    norm = ChatCompletionsNormalizer()
    events = feed(norm, chunk({"content": "x"}, finish=finish), DONE, DONE)
    done = [e for e in events if e.type == "done"]
    assert len(done) == 1
    assert (done[0].stop_reason, done[0].raw_stop_reason) == (unified, finish)
    assert norm.done
    assert events[-1].type == "done"  # no truncation error


def test_stop_with_client_calls_is_tool_use() -> None:
    events = feed(ChatCompletionsNormalizer(), chunk({"tool_calls": [tool(0, "c", "f", "{}")]}, finish="stop"), DONE)
    assert collect(events).stop_reason == "tool_use"
    assert collect(events).raw_stop_reason == "stop"


def test_error_chunk_is_an_error_and_ends_the_stream() -> None:
    norm = ChatCompletionsNormalizer()
    error = {"error": {"message": "upstream overloaded", "type": "server_error", "code": 503}}
    events = feed(norm, chunk({"content": "par"}), error)
    assert types(events) == ["text_delta", "error"]
    assert events[1].error is not None
    assert events[1].error["type"] == "server_error"
    assert events[1].error["message"] == "upstream overloaded"
    assert events[1].raw == error


def test_string_error_chunk_keeps_code_and_message() -> None:
    events = feed(ChatCompletionsNormalizer(), {"code": "Internal error", "error": "model crashed"})
    assert types(events) == ["error"]
    assert events[0].error == {"code": "Internal error", "message": "model crashed", "type": "Internal error"}


def test_truncated_stream_reports_open_calls_as_incomplete_with_usage() -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    events = feed(
        ChatCompletionsNormalizer(),
        chunk({"tool_calls": [tool(0, "call_a", "f", '{"a": 1')]}),
        {"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": usage},
    )
    assert types(events)[-2:] == ["usage", "error"]
    assert "tool_call_done" not in types(events)
    assert events[-1].error is not None
    assert events[-1].error["type"] == "stream_truncated"
    assert events[-1].error["incomplete_tool_calls"] == [{"id": "call_a", "name": "f", "arguments_raw": '{"a": 1'}]
    assert events[-1].usage == usage
    assert not any(e.type == "done" for e in events)


@pytest.mark.parametrize(("finish", "closed"), [("tool_calls", True), ("stop", True), ("length", False),
                                               ("content_filter", False)])  # fmt: skip
def test_finish_reason_closes_calls_unless_it_cut_the_response_off(finish: str, closed: bool) -> None:
    events = feed(
        ChatCompletionsNormalizer(),
        chunk({"tool_calls": [tool(0, "call_a", "f", '{"a": 1}')]}),
        chunk(finish=finish),
        DONE,
    )
    assert ("tool_call_done" in types(events)) is closed
    assert events[-1].type == "done"
    result = collect(events)
    assert [c.id for c in result.client_tool_calls] == (["call_a"] if closed else [])
    assert [c.id for c in result.incomplete_tool_calls] == ([] if closed else ["call_a"])


def test_closed_call_with_invalid_json_has_no_arguments_and_says_why() -> None:
    events = feed(
        ChatCompletionsNormalizer(),
        chunk({"tool_calls": [tool(0, "call_a", "f", '{"a": 1')]}),
        chunk(finish="tool_calls"),
        DONE,
    )
    done = next(e for e in events if e.type == "tool_call_done")
    assert done.arguments is None
    assert done.arguments_raw == '{"a": 1'
    assert done.arguments_error is not None and "not valid JSON" in done.arguments_error
    call = collect(events).tool_calls[0]
    assert (call.arguments, call.arguments_raw, call.arguments_error) == (None, '{"a": 1', done.arguments_error)


@pytest.mark.parametrize(
    "payload",
    [
        {"choices": "nope"},
        {"choices": [None, 3, {"delta": "x"}]},
        {"choices": [{"index": "0", "delta": {"tool_calls": [None, {"function": "f"}, {"index": [1]}]}}]},
        {"choices": [{"delta": {"content": 5, "reasoning_content": ["x"], "tool_calls": {"a": 1}}}]},
        {"choices": [{"delta": {"tool_calls": [{"function": {"name": 3, "arguments": {"a": 1}}}]}}]},
        {"choices": [{"finish_reason": 7}], "usage": "lots"},
        {"object": "chat.completion.chunk", "id": 5, "model": None},
    ],
)
def test_malformed_chunks_never_raise(payload: dict[str, Any]) -> None:
    norm = ChatCompletionsNormalizer()
    events = norm(PySSEEvent("message", json.dumps(payload)))
    assert events
    assert all(e.raw == payload for e in events)
    norm.finish()


def test_every_event_carries_its_chunk_and_ids_are_kept() -> None:
    norm = ChatCompletionsNormalizer()
    first = chunk({"content": "a", "tool_calls": [tool(0, "c", "f", "{}")]})
    events = feed(norm, first, finish=False)
    assert all(e.raw == first for e in events)
    assert (norm.chat_id, norm.model) == ("chatcmpl-1", "gpt-test")


def test_legacy_function_call_delta() -> None:
    events = feed(
        ChatCompletionsNormalizer(),
        chunk({"function_call": {"name": "lookup", "arguments": '{"k":'}}),
        chunk({"function_call": {"arguments": "1}"}}),
        chunk(finish="function_call"),
        DONE,
    )
    calls = collect(events).tool_calls
    assert [(c.name, c.arguments) for c in calls] == [("lookup", {"k": 1})]
    assert collect(events).stop_reason == "tool_use"


def test_only_the_first_choice_is_read() -> None:
    """A request's ``n`` > 1: the other choices' text, calls and finish reasons are alternatives to the first (a
    client loop must not run both choices' calls), each chunk of them one raw event."""
    chunks = [
        chunk({"role": "assistant", "content": ""}, index=0),
        chunk({"role": "assistant", "content": ""}, index=1),
        chunk({"content": "Hi"}, index=0),
        chunk({"content": "Salut"}, index=1),
        chunk({"reasoning_content": "r1"}, index=1),
        chunk({"tool_calls": [tool(0, "b", "g", "{}")]}, index=1),
        chunk({"tool_calls": [tool(0, "a", "f", '{"k": 1}')]}, index=0),
        chunk(finish="length", index=1),
        chunk(finish="tool_calls", index=0),
        {"id": "chatcmpl-1", "choices": [{"index": 1, "delta": {"content": "!"}}, {"index": 0, "delta": {}}]},
        DONE,
    ]
    events = feed(ChatCompletionsNormalizer(), *chunks)
    assert types(events) == [
        "raw", "raw", "text_delta", "raw", "raw", "raw", "tool_call_start", "tool_call_delta", "raw",
        "tool_call_done", "raw", "done",
    ]  # fmt: skip
    result = collect(events)
    assert (result.text, result.reasoning) == ("Hi", "")
    assert [(call.id, call.name, call.arguments) for call in result.tool_calls] == [("a", "f", {"k": 1})]
    assert (result.stop_reason, result.raw_stop_reason) == ("tool_use", "tool_calls")


def test_a_choice_without_an_integer_index_is_the_first() -> None:
    events = feed(
        ChatCompletionsNormalizer(),
        {"id": "c", "model": "m", "choices": [{"delta": {"content": "a"}}]},
        {"id": "c", "model": "m", "choices": [{"index": "1", "delta": {"content": "b"}}]},
        {"id": "c", "model": "m", "choices": [{"index": None, "delta": {"content": "c"}, "finish_reason": "stop"}]},
        DONE,
    )
    assert collect(events).text == "abc"


def test_public_sse_event_type_is_accepted() -> None:
    norm = ChatCompletionsNormalizer()
    assert norm(SSEEvent("message", json.dumps(chunk({"content": "x"}))))[0].text == "x"
