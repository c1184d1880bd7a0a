"""Who runs each Responses API tool call, and what the answer cites (OpenAI and xAI ``/v1/responses``): one test per
rule of the two modules' docstrings, on fixtures written from the documented formats (openai-python
``types/responses``, docs.x.ai) and on the shared recordings with annotations."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from helpers import CORPUS, FIXTURES
from helpers.events import feed, types
from ssewire import OpenAINormalizer, StreamResult, Unified, XAINormalizer, collect, iter_unified
from ssewire.names import ProviderName


def _parse(path: Path, provider: ProviderName) -> tuple[list[Unified], StreamResult]:
    events = list(iter_unified([path.read_bytes()], provider, "sse"))
    return events, collect(events)


def _calls(events: list[Unified], call_id: str) -> list[Unified]:
    return [e for e in events if e.type.startswith("tool_call") and e.tool_call_id == call_id]


def _cited(result: StreamResult) -> list[tuple[Any, ...]]:
    return [(c.kind, c.url, c.title, c.start, c.end) for c in result.citations]


# -- OpenAI: who runs each call -------------------------------------------------------------------------------------


def test_hosted_shell_in_a_container_is_a_server_call() -> None:
    events, result = _parse(FIXTURES / "openai-responses-hosted-shell.sse", "openai")
    shell = "sh_0c5e1f7a2b3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e50"
    assert types(_calls(events, shell)) == ["tool_call_start", "tool_call_done"]
    assert all(e.server for e in _calls(events, shell))
    assert [(c.id, c.name, (c.arguments or {}).get("commands")) for c in result.server_tool_calls] == [
        (shell, "shell", ["python3 -c 'print(6*7)'"])
    ]
    assert (result.client_tool_calls, result.stop_reason) == ([], "end")


def test_shell_command_and_output_events_stay_raw() -> None:
    events, _ = _parse(FIXTURES / "openai-responses-hosted-shell.sse", "openai")
    shell_events = [e for e in events if str(e.raw.get("type", "")).startswith("response.shell_call")]
    assert len(shell_events) == 7
    assert {e.type for e in shell_events} == {"raw"}


def test_local_shell_is_a_client_call_with_its_action() -> None:
    _, result = _parse(FIXTURES / "openai-responses-local-shell.sse", "openai")
    (call,) = result.client_tool_calls
    assert (call.id, call.name, call.server, call.arguments_raw) == (
        "call_Lc4aV8nQ1sD6fG3hJ9kW2eR5",
        "shell",
        False,
        None,
    )
    assert call.arguments == {"commands": ["git status --short", "ls"], "max_output_length": 4096, "timeout_ms": None}
    assert result.stop_reason == "tool_use"


def test_shell_call_marked_a_container_only_when_done_is_a_server_call() -> None:
    item = {"id": "sh_1", "type": "shell_call", "call_id": "call_1", "action": {"commands": ["ls"]}}
    hosted = {**item, "environment": {"type": "container_reference", "container_id": "cntr_1"}}
    events = feed(
        OpenAINormalizer(),
        {"type": "response.output_item.added", "sequence_number": 0, "output_index": 0, "item": item},
        {"type": "response.output_item.done", "sequence_number": 1, "output_index": 0, "item": hosted},
        {"type": "response.completed", "sequence_number": 2, "response": {"status": "completed"}},
    )
    result = collect(events)
    assert [e.server for e in events if e.type == "tool_call_done"] == [True]
    assert ([c.id for c in result.server_tool_calls], result.stop_reason) == (["call_1"], "end")


def test_client_tool_search_gives_its_object_arguments() -> None:
    _, result = _parse(FIXTURES / "openai-responses-tool-search-client.sse", "openai")
    (call,) = result.client_tool_calls
    assert (call.name, call.arguments, call.arguments_raw) == (
        "tool_search",
        {"goal": "Find a tool that converts currencies.", "limit": 3},
        None,
    )
    assert result.stop_reason == "tool_use"


def test_server_tool_search_is_a_server_call_and_the_function_after_it_a_client_call() -> None:
    _, result = _parse(FIXTURES / "openai-responses-tool-search-server.sse", "openai")
    assert [(c.name, c.arguments) for c in result.server_tool_calls] == [
        ("tool_search", {"paths": ["convert_currency"]})
    ]
    assert [c.name for c in result.client_tool_calls] == ["convert_currency"]
    assert result.stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("fixture", "server"),
    [
        ("openai-responses-code-interpreter-file-citation.sse", [("code_interpreter", True)]),
        ("openai-responses-image-generation.sse", [("image_generation", True)]),
        ("openai-responses-mcp.sse", [("mcp_list_tools", True), ("roll", True)]),
    ],
)
def test_hosted_tools_are_server_calls_and_end_the_turn(fixture: str, server: list[tuple[str, bool]]) -> None:
    events, result = _parse(FIXTURES / fixture, "openai")
    assert [(c.name, c.server) for c in result.tool_calls] == server
    assert all(e.server for e in events if e.type.startswith("tool_call"))
    assert result.stop_reason == "end"


def test_code_interpreter_call_carries_its_code() -> None:
    _, result = _parse(FIXTURES / "openai-responses-code-interpreter-file-citation.sse", "openai")
    arguments = result.server_tool_calls[0].arguments
    assert arguments is not None and arguments["code"].startswith("import csv\n")


def test_mcp_call_arguments_come_from_its_deltas() -> None:
    _, result = _parse(FIXTURES / "openai-responses-mcp.sse", "openai")
    assert [(c.arguments, c.arguments_raw) for c in result.server_tool_calls] == [
        ({}, ""),
        ({"dice": "2d6"}, '{"dice":"2d6"}'),
    ]


def test_mcp_approval_request_is_for_the_client_to_answer() -> None:
    _, result = _parse(FIXTURES / "openai-responses-mcp-approval-request.sse", "openai")
    (request,) = result.client_tool_calls
    assert (request.id, request.name, request.arguments) == (
        "mcpr_08e9f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e50",
        "roll",
        {"dice": "1d20"},
    )
    assert result.stop_reason == "tool_use"


def _output_rule_events(output_before_done: bool) -> list[Unified]:
    call = {"id": "sh_1", "type": "shell_call", "call_id": "call_1", "action": {"commands": ["ls"]}}
    output = {"id": "sho_1", "type": "shell_call_output", "call_id": "call_1", "output": []}
    added = {"type": "response.output_item.added", "sequence_number": 0, "output_index": 0, "item": call}
    done = {"type": "response.output_item.done", "sequence_number": 1, "output_index": 0, "item": call}
    out_added = {"type": "response.output_item.added", "sequence_number": 2, "output_index": 1, "item": output}
    out_done = {"type": "response.output_item.done", "sequence_number": 3, "output_index": 1, "item": output}
    terminal = {"type": "response.completed", "sequence_number": 4, "response": {"status": "completed"}}
    order = [added, out_added, done, out_done] if output_before_done else [added, done, out_added, out_done]
    return feed(OpenAINormalizer(), *order, terminal)


def test_a_call_whose_output_the_provider_streams_is_a_server_call() -> None:
    events = _output_rule_events(output_before_done=False)
    done = [e for e in events if e.type == "tool_call_done"]
    # reported as a client call first, then re-marked by a second done when the provider's output arrives
    assert [(e.tool_call_id, e.server, e.arguments) for e in done] == [
        ("call_1", False, {"commands": ["ls"]}),
        ("call_1", True, {"commands": ["ls"]}),
    ]
    result = collect(events)
    assert ([c.id for c in result.server_tool_calls], result.client_tool_calls) == (["call_1"], [])
    assert result.stop_reason == "end"


def test_an_output_that_arrives_while_the_call_is_open_makes_its_one_done_a_server_done() -> None:
    events = _output_rule_events(output_before_done=True)
    assert [e.server for e in events if e.type == "tool_call_done"] == [True]
    assert collect(events).stop_reason == "end"


def _function_call_events(call_id: str, index: int, arguments: str) -> list[dict[str, Any]]:
    item = {"id": f"fc_{call_id}", "type": "function_call", "call_id": call_id, "name": "run", "arguments": ""}
    place = {"output_index": index, "item_id": item["id"]}
    return [
        {"type": "response.output_item.added", "output_index": index, "item": item},
        {"type": "response.function_call_arguments.delta", **place, "delta": arguments},
        {"type": "response.function_call_arguments.done", **place, "arguments": arguments},
        {"type": "response.output_item.done", "output_index": index, "item": {**item, "arguments": arguments}},
    ]


@pytest.mark.parametrize("arguments", ['{"cmd": "ls -la", "n": [1, 2.5]}', '{"cmd": "ls', "[1, 2]"])
def test_a_re_marked_function_call_repeats_its_name_and_arguments(arguments: str) -> None:
    output = {"id": "fco_1", "type": "function_call_output", "call_id": "call_1", "output": "done"}
    events = feed(
        OpenAINormalizer(),
        *_function_call_events("call_1", 0, arguments),
        {"type": "response.output_item.done", "output_index": 1, "item": output},
    )
    first, again = [e for e in events if e.type == "tool_call_done"]
    assert (again.server, first.server) == (True, False)
    fields = ("tool_call_id", "tool_name", "arguments", "arguments_raw", "arguments_error")
    assert [getattr(again, f) for f in fields] == [getattr(first, f) for f in fields]
    assert again.raw["item"] == output


def test_closed_client_calls_are_remembered_by_their_argument_text_only() -> None:
    """The normaliser remembers every closed client call to the end of the stream (a later provider output
    re-marks it): each costs about its argument text, not its payload and decoded arguments as well."""
    tracemalloc = pytest.importorskip("tracemalloc")  # (CPython's; PyPy has none)
    texts = [json.dumps({"path": f"/tmp/{i}", "body": "x" * 4000, "lines": list(range(200))}) for i in range(60)]
    payloads = [p for i, text in enumerate(texts) for p in _function_call_events(f"call_{i}", i, text)]
    normalizer = OpenAINormalizer()
    gc.collect()
    tracemalloc.start()
    try:
        events = feed(normalizer, *payloads)
        del events
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 1.5 * sum(map(len, texts)), (held, sum(map(len, texts)))


def test_queued_compaction_and_unknown_events_are_raw_and_keep_an_open_call() -> None:
    item = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": ""}
    compaction = {"id": "cmp_1", "type": "compaction", "encrypted_content": "gAAA"}
    events = feed(
        OpenAINormalizer(),
        {
            "type": "response.queued",
            "sequence_number": 0,
            "response": {"id": "resp_q", "model": "m", "status": "queued"},
        },
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
        {"type": "response.function_call_arguments.delta", "sequence_number": 2, "item_id": "fc_1", "delta": '{"a"'},
        {"type": "response.compaction.in_progress", "sequence_number": 3, "item_id": "cmp_1", "output_index": 1},
        {"type": "response.output_item.added", "sequence_number": 4, "output_index": 1, "item": compaction},
        {"type": "response.output_item.done", "sequence_number": 5, "output_index": 1, "item": compaction},
        {"type": "response.compaction.completed", "sequence_number": 6, "item_id": "cmp_1", "output_index": 1},
        {"type": "response.function_call_arguments.delta", "sequence_number": 7, "item_id": "fc_1", "delta": ":1}"},
        {"type": "response.completed", "sequence_number": 8, "response": {"status": "completed"}},
    )
    assert types(events) == [
        "raw",
        "tool_call_start",
        "tool_call_delta",
        "raw",
        "raw",
        "raw",
        "raw",
        "tool_call_delta",
        "tool_call_done",
        "done",
    ]
    result = collect(events)
    assert (result.response_id, [(c.id, c.arguments) for c in result.tool_calls]) == ("resp_q", [("call_1", {"a": 1})])


# -- xAI: who runs each call ----------------------------------------------------------------------------------------


def test_xai_server_side_custom_tool_call_is_a_server_call_followed_by_its_answer() -> None:
    events, result = _parse(FIXTURES / "xai-responses-x-search-server-tool.sse", "xai")
    ctc = "ctc_3b9e2f41-7c0d-4a5e-9f18-2d6c4b8a1e07_xs_call_51820374"
    assert types(_calls(events, ctc)) == ["tool_call_start", "tool_call_delta", "tool_call_done"]
    assert all(e.server for e in _calls(events, ctc))
    assert [(c.name, (c.arguments or {}).get("query")) for c in result.server_tool_calls] == [
        ("x_keyword_search", "from:xai grok")
    ]
    assert (result.client_tool_calls, result.stop_reason) == ([], "end")
    assert result.text == "xAI posted two Grok updates today."


def test_xai_function_call_is_the_client_call() -> None:
    _, result = _parse(FIXTURES / "xai-responses-web-search-then-function-call.sse", "xai")
    assert [(c.id, c.name) for c in result.client_tool_calls] == [("call-7e21b0d4", "book_table")]
    assert [c.name for c in result.server_tool_calls] == ["web_search"]
    assert result.stop_reason == "tool_use"


def test_xai_responses_delegate_and_openai_disagree_only_on_custom_tool_calls() -> None:
    item = {"id": "ctc_1", "type": "custom_tool_call", "call_id": "c1", "name": "x_search", "input": "{}"}
    stream = (
        {"type": "response.output_item.done", "sequence_number": 0, "output_index": 0, "item": item},
        {"type": "response.completed", "sequence_number": 1, "response": {"status": "completed"}},
    )
    assert collect(feed(XAINormalizer(), *stream, named=False)).stop_reason == "end"
    assert collect(feed(OpenAINormalizer(), *stream)).stop_reason == "tool_use"


# -- citations ------------------------------------------------------------------------------------------------------


def test_annotation_added_events_bring_the_citations_once() -> None:
    events, result = _parse(FIXTURES / "openai-responses-annotations.sse", "openai")
    assert _cited(result) == [
        ("url_citation", "https://www.ine.pt/lisboa", "INE: Lisboa", 0, 34),
        ("file_citation", None, "census-2024.pdf", None, None),
    ]
    carriers = [e for e in events if e.citations]
    assert [(e.type, e.raw["type"]) for e in carriers] == [("raw", "response.output_text.annotation.added")] * 2
    assert result.citations[1].raw == {
        "type": "file_citation",
        "file_id": "file-09f0a1b2c3d4",
        "filename": "census-2024.pdf",
        "index": 49,
    }


def test_annotations_only_in_the_finished_part_are_taken_from_it_once() -> None:
    events, result = _parse(FIXTURES / "openai-responses-annotations-in-part.sse", "openai")
    assert _cited(result) == [("url_citation", "https://tides.example/lisbon", "Lisbon tides", 0, 22)]
    assert [e.raw["type"] for e in events if e.citations] == ["response.content_part.done"]


def test_annotations_only_in_the_finished_message_item_are_taken_from_it() -> None:
    annotation = {"type": "url_citation", "url": "https://a.example", "title": "A", "start_index": 0, "end_index": 1}
    part = {"type": "output_text", "text": "A", "annotations": [annotation]}
    message = {"id": "msg_1", "type": "message", "content": [part]}
    events = feed(
        OpenAINormalizer(),
        {"type": "response.output_item.done", "sequence_number": 0, "output_index": 0, "item": message},
        {"type": "response.completed", "sequence_number": 1, "response": {"status": "completed", "output": [message]}},
    )
    assert [(c.url, e.raw["type"]) for e in events for c in e.citations or ()] == [
        ("https://a.example", "response.output_item.done")
    ]


def test_container_file_citation_names_the_file_and_its_span() -> None:
    _, result = _parse(FIXTURES / "openai-responses-code-interpreter-file-citation.sse", "openai")
    assert _cited(result) == [("container_file_citation", None, "squares.csv", 21, 32)]
    assert result.text[21:32] == "squares.csv"


def test_xai_url_citations_come_out() -> None:
    _, result = _parse(FIXTURES / "xai-responses-x-search-server-tool.sse", "xai")
    assert [(c.kind, c.url, c.title) for c in result.citations] == [
        ("url_citation", "https://x.com/i/status/1991284822820720001", None),
        ("url_citation", "https://x.com/i/status/1991284822820720002", None),
    ]


def test_recorded_xai_web_search_annotations_become_five_citations() -> None:
    path = CORPUS / "xai" / "responses-web-search-annotations.sse"
    if not path.is_file():
        pytest.skip("shared corpus not present")
    _, result = _parse(path, "xai")
    assert [c.url for c in result.citations] == [
        "https://en.wikipedia.org/wiki/XAI_%28company%29",
        "https://x.ai/company",
        "https://www.ibm.com/think/topics/explainable-ai",
        "https://www.owkin.com/a-z-of-ai-for-healthcare/xai",
        "https://x.ai/",
    ]
    assert {c.kind for c in result.citations} == {"url_citation"}


def test_recorded_openai_web_search_has_empty_annotations_so_no_citations() -> None:
    path = CORPUS / "openai" / "responses-web-search-annotations.sse"
    if not path.is_file():
        pytest.skip("shared corpus not present")
    data = path.read_bytes()
    assert b'"annotations":[]' in data and b"annotation.added" not in data  # what the recording holds
    _, result = _parse(path, "openai")
    assert result.citations == []
    assert [c.id for c in result.server_tool_calls] == ["ws_00a60507bf41223d0068c9d30021d081a0962d80d50c12e317"]


def _x_search_stream(tools: list[dict[str, object]]) -> bytes:
    """An xAI-shaped Responses stream: a custom_tool_call named x_keyword_search, then the answer that used it."""
    events = [
        {
            "type": "response.created",
            "response": {"id": "r1", "model": "grok-4", "status": "in_progress", "tools": tools},
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {
                "type": "custom_tool_call",
                "id": "ctc_1",
                "call_id": "xs_1",
                "name": "x_keyword_search",
                "input": '{"query":"grok"}',
                "status": "completed",
            },
        },
        {"type": "response.output_text.delta", "item_id": "m1", "output_index": 1, "delta": "Found it."},
        {"type": "response.completed", "response": {"id": "r1", "model": "grok-4", "status": "completed"}},
    ]
    return b"".join(b"data: " + json.dumps(event).encode() + b"\n\n" for event in events)


@pytest.mark.parametrize("provider", ["openai", "auto", "xai"])
def test_a_custom_tool_call_the_request_never_declared_is_the_providers_own(provider: str) -> None:
    body = _x_search_stream([{"type": "x_search"}])
    result = collect(iter_unified([body], provider))  # type: ignore[arg-type]
    assert result.client_tool_calls == [] and [c.name for c in result.server_tool_calls] == ["x_keyword_search"]
    assert result.stop_reason == "end"


def test_a_custom_tool_call_of_a_declared_custom_tool_is_the_clients() -> None:
    body = _x_search_stream([{"type": "custom", "name": "x_keyword_search"}])
    result = collect(iter_unified([body], "openai"))
    assert [c.name for c in result.client_tool_calls] == ["x_keyword_search"]
    assert result.stop_reason == "tool_use"


def test_a_refusal_part_makes_a_completed_response_a_refusal() -> None:
    def sse(*events: dict[str, Any]) -> bytes:
        return b"".join(b"event: %s\ndata: %s\n\n" % (e["type"].encode(), json.dumps(e).encode()) for e in events)

    response = {"id": "resp_1", "object": "response", "model": "gpt-5", "status": "in_progress", "output": []}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    part = {"type": "refusal", "refusal": "I can't help."}
    place = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    head: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": message},
        {"type": "response.content_part.added", **place, "part": {"type": "refusal", "refusal": ""}},
        {"type": "response.refusal.delta", **place, "delta": "I can't help."},
        {"type": "response.refusal.done", **place, "refusal": "I can't help."},
    ]
    done_item: dict[str, Any] = {"type": "response.output_item.done", "output_index": 0,
                                 "item": {**message, "status": "completed", "content": [part]}}  # fmt: skip
    completed: dict[str, Any] = {"type": "response.completed", "response": {**response, "status": "completed"}}
    tail: list[dict[str, Any]]
    for tail in (  # with the part's own done event, and without it (the item's done says it too)
        [{"type": "response.content_part.done", **place, "part": part}, done_item, completed],
        [done_item, completed],
    ):
        result = collect(iter_unified([sse(*head, *tail)], "openai"))
        assert (result.text, result.stop_reason, result.raw_stop_reason) == ("I can't help.", "refusal", "completed")


def _sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(b"event: %s\ndata: %s\n\n" % (p["type"].encode(), json.dumps(p).encode()) for p in payloads)


def test_what_follows_the_terminal_event_is_raw_at_any_chunking() -> None:
    # the SDK's final response is the terminal event's: a call or text after it is no part of the response
    response: dict[str, Any] = {"id": "r", "object": "response", "status": "completed", "model": "m", "output": []}
    message = {"id": "msg", "type": "message", "role": "assistant", "content": []}
    late = {"id": "fc", "type": "function_call", "call_id": "call_9", "name": "late", "arguments": "{}"}
    body = _sse(
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": message},
        {"type": "response.output_text.delta", "item_id": "msg", "output_index": 0, "content_index": 0, "delta": "Hi"},
        {"type": "response.completed", "response": response},
        {"type": "response.output_text.delta", "item_id": "msg", "output_index": 0, "content_index": 0, "delta": "!"},
        {"type": "response.output_item.added", "output_index": 1, "item": late},
        {"type": "response.output_item.done", "output_index": 1, "item": late},
    )
    for chunks in ([body], [body[i : i + 40] for i in range(0, len(body), 40)]):
        for provider in ("openai", "auto"):
            result = collect(iter_unified(chunks, provider))  # type: ignore[arg-type]
            assert (result.text, result.stop_reason, result.tool_calls) == ("Hi", "end", [])
            events = list(iter_unified(chunks, provider))  # type: ignore[arg-type]
            assert types(events)[-3:] == ["raw", "raw", "raw"]


@pytest.mark.parametrize("padding", [0, 200_000])  # (a large terminal event is read by its fast path)
def test_a_call_only_the_final_response_has_is_read_from_its_item(padding: int) -> None:
    # the SDK's final response has it: a call no output_item event announced is still a call
    call = {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1", "name": "f",
            "arguments": '{"a":1}'}  # fmt: skip
    message = {"id": "msg", "type": "message", "role": "assistant",
               "content": [{"type": "output_text", "text": "x" * padding, "annotations": []}]}  # fmt: skip
    response = {"id": "r", "object": "response", "status": "completed", "model": "m", "usage": None}
    body = _sse(
        {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}},
        {"type": "response.completed", "response": {**response, "output": [message, call]}},
    )
    for provider in ("openai", "auto"):
        result = collect(iter_unified([body], provider))  # type: ignore[arg-type]
        [got] = result.tool_calls
        assert (got.id, got.name, got.arguments, result.stop_reason) == ("call_1", "f", {"a": 1}, "tool_use")
    # a call the stream announced and closed is not read again from the final response
    announced = _sse(
        {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**call, "status": "in_progress"}},
        {"type": "response.output_item.done", "output_index": 0, "item": call},
        {"type": "response.completed", "response": {**response, "output": [call, message]}},
    )
    assert len(collect(iter_unified([announced], "openai")).tool_calls) == 1
