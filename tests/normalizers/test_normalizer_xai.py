"""XAINormalizer: dispatch on payload shape to the chat, Responses and Anthropic delegates; one test per rule."""

from __future__ import annotations

from functools import partial
from typing import Any, Optional

from helpers import events
from helpers.events import types
from ssewire import (
    AnthropicNormalizer,
    ChatCompletionsNormalizer,
    OpenAINormalizer,
    XAINormalizer,
    collect,
    iter_unified,
)

feed = partial(events.feed, named=False)  # xAI chat and Responses framing: data only (named=True: event names)
DONE = "[DONE]"
CHAT_USAGE = {"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 40, "cost_in_usd_ticks": 1721250}
RESP_USAGE = {
    "input_tokens": 9,
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 12},
    "total_tokens": 29,
}


def chat(delta: Optional[dict[str, Any]] = None, finish: Optional[str] = None, **extra: Any) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}}
    if finish is not None:
        choice["finish_reason"] = finish
    return {"id": "f0f0", "object": "chat.completion.chunk", "model": "grok-3-mini", "choices": [choice], **extra}


def test_chat_chunks_go_to_the_chat_delegate() -> None:
    norm = XAINormalizer()
    whole = {
        "id": "call_1",
        "function": {"name": "weather", "arguments": '{"city":"Rome"}'},
        "index": 0,
        "type": "function",
    }
    events = feed(
        norm,
        chat({"reasoning_content": "First", "role": "assistant"}),
        chat({"tool_calls": [whole]}),
        chat(finish="tool_calls"),
        {"id": "f0f0", "object": "chat.completion.chunk", "choices": [], "usage": CHAT_USAGE},
        DONE,
    )
    assert isinstance(norm.delegate, ChatCompletionsNormalizer)
    assert norm.delegate is norm.chat
    assert types(events) == ["reasoning_delta", "tool_call_start", "tool_call_delta", "tool_call_done", "usage", "done"]
    result = collect(events)
    assert [(c.id, c.arguments) for c in result.tool_calls] == [("call_1", {"city": "Rome"})]
    assert (result.stop_reason, result.raw_stop_reason) == ("tool_use", "tool_calls")
    assert result.usage is not None
    assert result.usage.raw == CHAT_USAGE
    assert norm.done
    assert norm.usage == CHAT_USAGE


def test_responses_events_go_to_the_responses_delegate_and_done_sentinel_is_swallowed() -> None:
    norm = XAINormalizer()
    events = feed(
        norm,
        {
            "sequence_number": 0,
            "type": "response.created",
            "response": {"id": "r1", "model": "grok-4", "status": "in_progress"},
        },
        {"sequence_number": 1, "type": "response.reasoning_summary_text.delta", "item_id": "rs", "delta": "Think"},
        {"sequence_number": 2, "type": "response.output_text.delta", "item_id": "m", "delta": "Hi"},
        {"sequence_number": 3, "type": "response.completed", "response": {"status": "completed", "usage": RESP_USAGE}},
        DONE,
    )
    assert isinstance(norm.delegate, OpenAINormalizer)
    assert norm.delegate is norm.responses
    assert types(events) == ["raw", "reasoning_delta", "text_delta", "usage", "done"]
    assert norm.done
    assert norm.usage == RESP_USAGE
    assert norm.responses is not None
    assert norm.responses.last_sequence == 3


def test_responses_function_call_with_whole_arguments_in_one_delta() -> None:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call-1",
        "name": "get",
        "arguments": "",
        "status": "in_progress",
    }
    events = feed(
        XAINormalizer(),
        {"sequence_number": 0, "type": "response.output_item.added", "output_index": 0, "item": item},
        {"sequence_number": 1, "type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": '{"a":1}'},
        {
            "sequence_number": 2,
            "type": "response.function_call_arguments.done",
            "item_id": "fc_1",
            "arguments": '{"a":1}',
        },
        {
            "sequence_number": 3,
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**item, "arguments": '{"a":1}'},
        },
        {"sequence_number": 4, "type": "response.completed", "response": {"status": "completed", "usage": RESP_USAGE}},
        named=True,
    )
    result = collect(events)
    assert [(c.id, c.arguments) for c in result.tool_calls] == [("call-1", {"a": 1})]
    assert result.stop_reason == "tool_use"
    assert len([e for e in events if e.type == "tool_call_done"]) == 1


def test_responses_server_side_custom_tool_call_and_web_search_are_server_calls_function_call_is_client() -> None:
    custom = {
        "type": "custom_tool_call",
        "id": "ctc_1",
        "call_id": "xs_1",
        "name": "x_keyword_search",
        "input": '{"query":"grok"}',
    }
    search = {
        "type": "web_search_call",
        "id": "ws_1",
        "call_id": "",
        "name": "web_search",
        "arguments": '{"query":"q"}',
    }
    function = {"type": "function_call", "id": "fc_1", "call_id": "call-1", "name": "f", "arguments": '{"a":1}'}
    events = feed(
        XAINormalizer(),
        {"sequence_number": 0, "type": "response.output_item.added", "output_index": 0, "item": search},
        {"sequence_number": 1, "type": "response.output_item.done", "output_index": 0, "item": search},
        {"sequence_number": 2, "type": "response.output_item.added", "output_index": 1, "item": custom},
        {"sequence_number": 3, "type": "response.output_item.done", "output_index": 1, "item": custom},
        {"sequence_number": 4, "type": "response.output_item.added", "output_index": 2, "item": function},
        {"sequence_number": 5, "type": "response.output_item.done", "output_index": 2, "item": function},
        {"sequence_number": 6, "type": "response.completed", "response": {"status": "completed", "usage": RESP_USAGE}},
    )
    result = collect(events)
    assert [(c.id, c.name, c.arguments) for c in result.server_tool_calls] == [
        ("ws_1", "web_search", {"query": "q"}),
        ("ctc_1", "x_keyword_search", {"query": "grok"}),
    ]
    assert [(c.id, c.arguments) for c in result.client_tool_calls] == [("call-1", {"a": 1})]
    assert all(e.server for e in events if e.type.startswith("tool_call") and e.tool_call_id != "call-1")
    assert result.stop_reason == "tool_use"


def test_responses_server_side_tools_alone_end_the_turn() -> None:
    custom = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "xs_1", "name": "x_semantic_search", "input": ""}
    events = feed(
        XAINormalizer(),
        {"sequence_number": 0, "type": "response.output_item.added", "output_index": 0, "item": custom},
        {"sequence_number": 1, "type": "response.custom_tool_call_input.delta", "item_id": "ctc_1", "delta": "{}"},
        {
            "sequence_number": 2,
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**custom, "input": "{}"},
        },
        {"sequence_number": 3, "type": "response.output_text.delta", "item_id": "msg_1", "delta": "Found it."},
        {"sequence_number": 4, "type": "response.completed", "response": {"status": "completed", "usage": RESP_USAGE}},
    )
    result = collect(events)
    assert (result.text, result.stop_reason, result.client_tool_calls) == ("Found it.", "end", [])
    assert [c.id for c in result.server_tool_calls] == ["ctc_1"]


def test_the_openai_responses_normaliser_keeps_custom_tool_calls_client_calls() -> None:
    custom = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_c", "name": "grammar", "input": "x"}
    events = feed(
        OpenAINormalizer(),
        {"sequence_number": 0, "type": "response.output_item.done", "output_index": 0, "item": custom},
        {"sequence_number": 1, "type": "response.completed", "response": {"status": "completed", "usage": RESP_USAGE}},
    )
    result = collect(events)
    assert ([c.id for c in result.client_tool_calls], result.stop_reason) == (["call_c"], "tool_use")


def test_anthropic_events_go_to_the_messages_delegate_with_xai_quirks() -> None:
    norm = XAINormalizer()
    events = feed(
        norm,
        {
            "type": "message_start",
            "message": {"id": "msg_x", "model": "grok-4", "usage": {"input_tokens": 5, "output_tokens": 1}},
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "delta": {"type": "thinking_delta", "thinking": "plan"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "done"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
        named=True,
    )
    assert isinstance(norm.delegate, AnthropicNormalizer)
    assert norm.delegate is norm.messages
    result = collect(events)
    assert (result.reasoning, result.text, result.raw_stop_reason) == ("plan", "done", "end_turn")
    assert norm.usage == {"input_tokens": 5, "output_tokens": 9}
    assert norm.done


def test_anthropic_error_event_goes_to_the_delegate_in_use() -> None:
    norm = XAINormalizer()
    events = feed(
        norm,
        {"type": "message_start", "message": {"id": "msg_x", "usage": {"input_tokens": 5}}},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        named=True,
    )
    assert norm.delegate is norm.messages
    assert types(events) == ["raw", "error"]
    assert events[1].error == {"type": "overloaded_error", "message": "Overloaded"}


def test_chat_string_error_chunk_is_an_error() -> None:
    norm = XAINormalizer()
    events = feed(
        norm, chat({"content": "par"}), {"code": "Internal error", "error": "Service temporarily unavailable."}
    )
    assert types(events) == ["text_delta", "error"]
    assert events[1].error is not None
    assert events[1].error["message"] == "Service temporarily unavailable."
    assert norm.done


def test_truncation_names_the_delegates_terminal_and_carries_its_usage() -> None:
    norm = XAINormalizer()
    whole = {"id": "call_1", "function": {"name": "f", "arguments": '{"a":'}, "index": 0}
    events = feed(norm, chat({"tool_calls": [whole]}), {"id": "f0f0", "choices": [], "usage": CHAT_USAGE})
    assert types(events)[-2:] == ["usage", "error"]
    error = events[-1].error
    assert error is not None
    assert error["type"] == "stream_truncated"
    assert error["incomplete_tool_calls"] == [{"id": "call_1", "name": "f", "arguments_raw": '{"a":'}]
    assert "[DONE]" in error["message"]
    assert events[-1].usage == CHAT_USAGE
    responses = feed(XAINormalizer(), {"type": "response.output_text.delta", "delta": "x"})
    assert responses[-1].error is not None
    assert "response.completed" in responses[-1].error["message"]


def test_unknown_payloads_are_raw_and_done_before_any_delegate_is_swallowed() -> None:
    norm = XAINormalizer()
    events = feed(norm, DONE, {"hello": "world"}, {"type": "brand_new"}, finish=False)
    assert types(events) == ["raw", "raw"]
    assert norm.delegate is None
    assert not norm.done


def test_one_instance_through_iter_unified() -> None:
    body = (
        b'data: {"id":"a","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Grok"}}]}\n\n'
        b'data: {"id":"a","object":"chat.completion.chunk",'
        b'"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    events = list(iter_unified([body[:50], body[50:]], "xai"))
    result = collect(events)
    assert (result.text, result.stop_reason, result.error) == ("Grok", "end", None)
