"""OpenAINormalizer (Responses API): one test per rule of its contract, on synthetic events."""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest

from helpers.events import feed, only, types
from ssewire import OpenAINormalizer, collect
from ssewire.events import SSEEvent

DONE = "[DONE]"
USAGE = {"input_tokens": 10, "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 2}, "total_tokens": 15}


class Seq:
    """Builds Responses events with increasing ``sequence_number``."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, "sequence_number": self.n, **fields}
        self.n += 1
        return event


def fc(item_id: str, call_id: str, name: str, arguments: str = "", kind: str = "function_call") -> dict[str, Any]:
    return {
        "id": item_id,
        "type": kind,
        "status": "in_progress",
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
    }


def response(status: str = "completed", usage: Any = USAGE, **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "model": "gpt-test", "status": status, "usage": usage, **extra}


def test_text_and_refusal_deltas_carry_sequence() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta="Hel"),
        s("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta=""),
        s("response.refusal.delta", item_id="msg_1", output_index=0, content_index=1, delta="No."),
        s("response.completed", response=response()),
    )
    assert types(events) == ["text_delta", "raw", "text_delta", "usage", "done"]
    assert [e.sequence for e in events] == [0, 1, 2, 3, 3]
    assert collect(events).text == "HelNo."


def test_reasoning_summary_and_reasoning_text_are_reasoning() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.reasoning_summary_text.delta", item_id="rs_1", output_index=0, summary_index=0, delta="**Plan**"),
        s("response.reasoning_summary_text.done", item_id="rs_1", output_index=0, summary_index=0, text="**Plan**"),
        s("response.reasoning_text.delta", item_id="rs_1", output_index=0, content_index=0, delta=" think"),
        s("response.completed", response=response()),
    )
    assert collect(events).reasoning == "**Plan** think"


def test_function_call_lifecycle_has_exactly_one_done() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.output_item.added", output_index=0, item=fc("fc_1", "call_1", "get_weather")),
        s("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='{"city":'),
        s("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='"Paris"}'),
        s("response.function_call_arguments.done", item_id="fc_1", output_index=0, arguments='{"city":"Paris"}'),
        s("response.output_item.done", output_index=0, item=fc("fc_1", "call_1", "get_weather", '{"city":"Paris"}')),
        s("response.completed", response=response()),
    )
    assert types(events) == [
        "tool_call_start",
        "tool_call_delta",
        "tool_call_delta",
        "tool_call_done",
        "raw",
        "usage",
        "done",
    ]
    tool_events = events[:4]
    assert {(e.tool_call_id, e.tool_name) for e in tool_events} == {("call_1", "get_weather")}
    assert events[3].arguments == {"city": "Paris"}
    assert events[3].arguments_raw == '{"city":"Paris"}'


def test_parallel_calls_keyed_by_item_id_never_merge() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.output_item.added", output_index=0, item=fc("fc_1", "call_1", "add")),
        s("response.output_item.added", output_index=1, item=fc("fc_2", "call_2", "mul")),
        s("response.function_call_arguments.delta", item_id="fc_2", output_index=1, delta='{"b":'),
        s("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='{"a":'),
        s("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta="1}"),
        s("response.function_call_arguments.delta", item_id="fc_2", output_index=1, delta="2}"),
        s("response.output_item.done", output_index=0, item=fc("fc_1", "call_1", "add", '{"a":1}')),
        s("response.output_item.done", output_index=1, item=fc("fc_2", "call_2", "mul", '{"b":2}')),
        s("response.completed", response=response()),
    )
    calls = collect(events).tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [("call_1", "add", {"a": 1}), ("call_2", "mul", {"b": 2})]


def test_arguments_only_in_the_done_event() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.output_item.added", output_index=0, item=fc("fc_1", "call_1", "f")),
        s("response.function_call_arguments.done", item_id="fc_1", output_index=0, arguments='{"x":1}'),
        s("response.completed", response=response()),
    )
    done = only(events, "tool_call_done")
    assert len(done) == 1
    assert (done[0].arguments, done[0].arguments_raw) == ({"x": 1}, '{"x":1}')


def test_call_seen_only_in_output_item_done_gets_start_and_done() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.output_item.done", output_index=0, item=fc("fc_1", "call_1", "f", '{"x":2}')),
        s("response.completed", response=response()),
    )
    assert types(events)[:2] == ["tool_call_start", "tool_call_done"]
    assert events[1].arguments == {"x": 2}
    assert events[1].tool_call_id == "call_1"


def test_delta_without_added_opens_the_call_implicitly() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.function_call_arguments.delta", item_id="fc_9", output_index=0, delta="{}"),
        s("response.function_call_arguments.done", item_id="fc_9", output_index=0, arguments="{}", name="late"),
        s("response.completed", response=response()),
    )
    assert types(events)[:3] == ["tool_call_start", "tool_call_delta", "tool_call_done"]
    assert len({e.tool_call_id for e in events[:3]}) == 1
    assert collect(events).tool_calls[0].name == "late"


def test_events_without_item_id_find_the_call_by_output_index() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.output_item.added", output_index=3, item=fc("fc_1", "call_1", "f")),
        s("response.function_call_arguments.delta", output_index=3, delta='{"k":'),
        s("response.function_call_arguments.delta", output_index=3, delta="true}"),
        s("response.function_call_arguments.done", output_index=3, arguments='{"k":true}'),
        s("response.completed", response=response()),
    )
    assert len(collect(events).tool_calls) == 1
    assert collect(events).tool_calls[0].arguments == {"k": True}


def test_items_sharing_an_output_index_still_never_merge() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.output_item.added", output_index=0, item=fc("fc_1", "call_1", "add")),
        s("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='{"a":1}'),
        s("response.output_item.done", output_index=0, item=fc("fc_1", "call_1", "add", '{"a":1}')),
        s("response.output_item.added", output_index=0, item=fc("fc_2", "call_2", "mul")),
        s("response.function_call_arguments.delta", item_id="fc_2", output_index=0, delta='{"b":2}'),
        s("response.output_item.done", output_index=0, item=fc("fc_2", "call_2", "mul", '{"b":2}')),
        s("response.completed", response=response()),
    )
    calls = collect(events).tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("call_1", {"a": 1}), ("call_2", {"b": 2})]


def test_item_without_id_is_found_by_output_index_from_events_with_an_id() -> None:
    s = Seq()
    item = {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": ""}
    events = feed(
        OpenAINormalizer(),
        s("response.output_item.added", output_index=2, item=item),
        s("response.function_call_arguments.delta", item_id="fc_late", output_index=2, delta='{"k":1}'),
        s("response.function_call_arguments.done", item_id="fc_late", output_index=2, arguments='{"k":1}'),
        s("response.completed", response=response()),
    )
    assert [(c.id, c.arguments) for c in collect(events).tool_calls] == [("call_1", {"k": 1})]


@pytest.mark.parametrize(
    ("item", "server", "call_id", "name", "arguments"),
    [
        (
            {
                "id": "ws_1",
                "type": "web_search_call",
                "status": "completed",
                "action": {"type": "search", "query": "q"},
            },
            True,
            "ws_1",
            "web_search",
            {"type": "search", "query": "q"},
        ),
        (
            {"id": "ci_1", "type": "code_interpreter_call", "code": "1+1"},
            True,
            "ci_1",
            "code_interpreter",
            {"code": "1+1"},
        ),
        ({"id": "fs_1", "type": "file_search_call", "queries": ["a"]}, True, "fs_1", "file_search", {"queries": ["a"]}),
        ({"id": "ig_1", "type": "image_generation_call", "result": "b64"}, True, "ig_1", "image_generation", {}),
        ({"id": "x_1", "type": "brand_new_call"}, True, "x_1", "brand_new", {}),
        (
            {"id": "mcp_1", "type": "mcp_call", "name": "search", "server_label": "s", "arguments": '{"q":"z"}'},
            True,
            "mcp_1",
            "search",
            {"q": "z"},
        ),
        (
            {"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_c", "name": "x_search", "input": '{"q":1}'},
            False,
            "call_c",
            "x_search",
            {"q": 1},
        ),
        (
            {"id": "mcpr_1", "type": "mcp_approval_request", "name": "roll", "server_label": "s", "arguments": "{}"},
            False,
            "mcpr_1",
            "roll",
            {},
        ),
        ({"id": "mcpl_1", "type": "mcp_list_tools", "server_label": "s"}, True, "mcpl_1", "mcp_list_tools", {}),
        (
            {"id": "ts_1", "type": "tool_search_call", "call_id": "c_t", "execution": "client", "arguments": {"g": 1}},
            False,
            "c_t",
            "tool_search",
            {"g": 1},
        ),
        (
            {"id": "ts_2", "type": "tool_search_call", "call_id": None, "execution": "server", "arguments": {"p": 1}},
            True,
            "ts_2",
            "tool_search",
            {"p": 1},
        ),
        (
            {"id": "sh_1", "type": "shell_call", "call_id": "c_s", "action": {"commands": ["ls"]}},
            False,
            "c_s",
            "shell",
            {"commands": ["ls"]},
        ),
        (
            {
                "id": "sh_2",
                "type": "shell_call",
                "call_id": "c_h",
                "action": {"commands": ["ls"]},
                "environment": {"type": "container_reference", "container_id": "cntr_1"},
            },
            True,
            "sh_2",
            "shell",
            {"commands": ["ls"]},
        ),
        (
            {"id": "cu_1", "type": "computer_call", "call_id": "call_cu", "action": {"type": "click", "x": 1}},
            False,
            "call_cu",
            "computer",
            {"type": "click", "x": 1},
        ),
    ],
)
def test_server_and_client_call_items(
    item: dict[str, Any], server: bool, call_id: str, name: str, arguments: dict[str, Any]
) -> None:
    s = Seq()
    added = {k: v for k, v in item.items() if k not in ("arguments", "input", "action", "code", "queries")}
    events = feed(
        OpenAINormalizer(),
        s("response.output_item.added", output_index=0, item=added),
        s("response.output_item.done", output_index=0, item=item),
        s("response.completed", response=response()),
    )
    tool_events = [e for e in events if e.type.startswith("tool_call")]
    assert types(tool_events) == ["tool_call_start", "tool_call_done"]
    assert all(e.server is server and e.tool_call_id == call_id and e.tool_name == name for e in tool_events)
    assert tool_events[1].arguments == arguments
    assert collect(events).stop_reason == ("end" if server else "tool_use")


def test_mcp_call_argument_deltas_are_server_tool_deltas() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.output_item.added", output_index=0, item={"id": "mcp_1", "type": "mcp_call", "name": "q"}),
        s("response.mcp_call_arguments.delta", item_id="mcp_1", output_index=0, delta='{"a":1}'),
        s("response.mcp_call_arguments.done", item_id="mcp_1", output_index=0, arguments='{"a":1}'),
        s(
            "response.output_item.done",
            output_index=0,
            item={"id": "mcp_1", "type": "mcp_call", "arguments": '{"a":1}'},
        ),
        s("response.completed", response=response()),
    )
    tool_events = [e for e in events if e.type.startswith("tool_call")]
    assert types(tool_events) == ["tool_call_start", "tool_call_delta", "tool_call_done"]
    assert all(e.server for e in tool_events)


@pytest.mark.parametrize(
    ("kind", "status", "details", "unified"),
    [
        ("response.completed", "completed", None, "end"),
        ("response.incomplete", "incomplete", {"reason": "max_output_tokens"}, "max_tokens"),
        ("response.incomplete", "incomplete", {"reason": "content_filter"}, "refusal"),
        ("response.incomplete", "incomplete", {"reason": "other"}, "incomplete"),
        ("response.incomplete", "incomplete", None, "incomplete"),
        ("response.failed", "failed", None, "failed"),
        ("response.cancelled", "cancelled", None, "cancelled"),
        ("response.completed", "weird", None, "other"),
    ],
)
def test_terminal_event_gives_usage_then_one_done(
    kind: str, status: str, details: Optional[dict[str, Any]], unified: str
) -> None:
    s = Seq()
    norm = OpenAINormalizer()
    events = feed(norm, s(kind, response=response(status, incomplete_details=details)))
    assert types(events) == ["usage", "done"]
    assert events[0].usage == USAGE
    assert (events[1].stop_reason, events[1].raw_stop_reason) == (unified, status)
    assert norm.done
    assert norm.usage == USAGE


def test_completed_with_client_call_is_tool_use_and_duplicate_terminal_is_raw() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.output_item.done", output_index=0, item=fc("fc_1", "call_1", "f", "{}")),
        s("response.completed", response=response()),
        s("response.completed", response=response()),
    )
    assert len(only(events, "done")) == 1
    assert only(events, "done")[0].stop_reason == "tool_use"
    assert events[-1].type == "raw"


def test_nested_error_event_then_failed_gives_one_error_and_done() -> None:
    s = Seq()
    error = {"type": "server_error", "code": "server_error", "message": "boom", "param": None}
    norm = OpenAINormalizer()
    first = feed(norm, s("response.output_text.delta", delta="par"), s("error", error=error), finish=False)
    assert types(first) == ["text_delta", "error"]
    assert first[1].error == error
    assert norm.done
    failed = response("failed", usage=None, error={"code": "server_error", "message": "boom"})
    rest = feed(norm, s("response.failed", response=failed))
    assert types(rest) == ["done"]
    assert rest[0].stop_reason == "failed"


def test_flat_error_event_takes_its_type_from_code() -> None:
    s = Seq()
    norm = OpenAINormalizer()
    events = feed(norm, s("error", code="ERR_RATE", message="slow down", param=None))
    assert types(events) == ["error"]
    assert events[0].error == {"code": "ERR_RATE", "message": "slow down", "param": None, "type": "ERR_RATE"}


def test_failed_response_without_error_event_reports_its_error() -> None:
    s = Seq()
    failed = response("failed", error={"code": "server_error", "message": "The model failed"})
    events = feed(OpenAINormalizer(), s("response.failed", response=failed))
    assert types(events) == ["error", "usage", "done"]
    assert events[0].error is not None
    assert (events[0].error["type"], events[0].error["message"]) == ("server_error", "The model failed")


def test_terminal_closes_open_calls_from_response_output() -> None:
    s = Seq()
    final_item = fc("fc_1", "call_1", "f", '{"full":true}')
    events = feed(
        OpenAINormalizer(),
        s("response.output_item.added", output_index=0, item=fc("fc_1", "call_1", "f")),
        s("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='{"fu'),
        s("response.completed", response=response(output=[final_item])),
    )
    assert types(events)[-3:] == ["tool_call_done", "usage", "done"]
    assert events[-3].arguments == {"full": True}


def test_truncation_reports_open_calls_as_incomplete() -> None:
    s = Seq()
    norm = OpenAINormalizer()
    events = feed(
        norm,
        s("response.created", response=response("in_progress", usage=None)),
        s("response.output_item.added", output_index=0, item=fc("fc_1", "call_1", "f")),
        s("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='{"a":1'),
    )
    assert types(events)[-2:] == ["tool_call_delta", "error"]
    assert "tool_call_done" not in types(events)
    assert events[-1].error is not None
    assert events[-1].error["type"] == "stream_truncated"
    assert events[-1].error["incomplete_tool_calls"] == [{"id": "call_1", "name": "f", "arguments_raw": '{"a":1'}]
    assert "response.completed" in events[-1].error["message"]


@pytest.mark.parametrize(("status", "closed"), [("completed", True), ("incomplete", False), ("failed", False)])
def test_terminal_event_closes_open_calls_only_when_the_response_completed(status: str, closed: bool) -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.created", response=response("in_progress", usage=None)),
        s("response.output_item.added", output_index=0, item=fc("fc_1", "call_1", "f")),
        s("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='{"a":1}'),
        s(f"response.{status}", response=response(status)),
    )
    assert ("tool_call_done" in types(events)) is closed
    assert events[-1].type == "done"
    result = collect(events)
    assert [c.id for c in result.tool_calls] == (["call_1"] if closed else [])
    assert [c.id for c in result.incomplete_tool_calls] == ([] if closed else ["call_1"])


def test_cursor_and_ids_are_kept() -> None:
    norm = OpenAINormalizer()
    s = Seq()
    feed(norm, s("response.created", response=response("in_progress")), s("response.output_text.delta", delta="x"))
    assert (norm.last_sequence, norm.response_id, norm.model) == (1, "resp_1", "gpt-test")


def test_legacy_events_without_sequence_number() -> None:
    events = feed(OpenAINormalizer(), {"type": "response.output_text.delta", "delta": "hi"})
    assert events[0].sequence is None
    assert events[0].text == "hi"


def test_chat_chunks_are_delegated() -> None:
    norm = OpenAINormalizer()
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    chat_chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "hi"}}]}
    finish = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    usage_chunk = {"id": "c", "choices": [], "usage": usage}
    events = feed(norm, chat_chunk, finish, usage_chunk, DONE)
    assert types(events) == ["text_delta", "raw", "usage", "done"]
    assert (events[-1].stop_reason, events[-1].raw_stop_reason) == ("end", "stop")
    assert norm.done
    assert norm.usage == usage


def test_truncated_chat_stream_names_the_chat_terminal() -> None:
    chat_chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "hi"}}]}
    events = feed(OpenAINormalizer(), chat_chunk)
    assert events[-1].error is not None
    assert "[DONE]" in events[-1].error["message"]


def test_done_sentinel_after_responses_events_is_swallowed() -> None:
    s = Seq()
    events = feed(OpenAINormalizer(), s("response.completed", response=response()), DONE)
    assert types(events) == ["usage", "done"]


def test_event_name_decides_when_data_has_no_type() -> None:
    norm = OpenAINormalizer()
    events = norm(SSEEvent("response.output_text.delta", json.dumps({"delta": "x", "sequence_number": 4})))
    events += norm(SSEEvent("response.completed", json.dumps({"response": {"usage": None}})))
    assert types(events) == ["text_delta", "done"]
    assert events[1].raw_stop_reason == "completed"


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "response.output_item.added", "item": "fc"},
        {"type": "response.output_item.added", "item": {"type": 5, "id": []}},
        {"type": "response.output_item.done", "item": {"type": "function_call", "id": 3, "arguments": 7}},
        {"type": "response.function_call_arguments.delta", "item_id": ["x"], "output_index": "0", "delta": 5},
        {"type": "response.function_call_arguments.done", "arguments": {"a": 1}},
        {"type": "response.output_text.delta", "delta": None, "sequence_number": "7"},
        {"type": "response.completed", "response": "done"},
        {"type": "response.incomplete", "response": {"status": "incomplete", "incomplete_details": {"reason": [1]}}},
        {"type": "response.failed", "response": {"status": 3, "error": "bad", "usage": []}},
        {"type": "error", "error": 42},
        {"type": ["list"]},
        {"type": "response.brand_new_event", "whatever": True},
    ],
)
def test_malformed_payloads_never_raise(payload: dict[str, Any]) -> None:
    norm = OpenAINormalizer()
    events = norm(SSEEvent("message", json.dumps(payload)))
    assert events
    assert all(e.raw == payload for e in events)
    norm.finish()


def test_unknown_and_lifecycle_events_are_raw() -> None:
    s = Seq()
    events = feed(
        OpenAINormalizer(),
        s("response.created", response=response("in_progress", usage=None)),
        s("response.content_part.added", item_id="m", output_index=0, content_index=0, part={"type": "output_text"}),
        s("response.output_text.annotation.added", annotation={"type": "url_citation"}),
        s("response.code_interpreter_call_code.delta", item_id="ci", delta="print(1)"),
        finish=False,
    )
    assert types(events) == ["raw"] * 4
