"""Anthropic Messages fidelity: who runs each call, blocks ``message_start`` brings whole, a second
``message_start``, citations, compaction and other newer blocks, and usage that matches the bill. One test per rule
of :mod:`ssewire.normalizers.anthropic`, on fixtures and events written from the documented formats
(platform.claude.com docs; anthropic-sdk-python ``src/anthropic/types``)."""

from __future__ import annotations

import base64
import json
from typing import Any, Optional

import pytest

from helpers import CORPUS, FIXTURES
from helpers.events import feed, only, types
from helpers.eventstream import event as eventstream_event
from ssewire import AnthropicNormalizer, Citation, StreamResult, Unified, collect, iter_unified
from ssewire.usage import Usage

CALLER = {"type": "code_execution_20250825", "tool_id": "srvtoolu_code"}


def start(content: Optional[list[dict[str, Any]]] = None, usage: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": "msg_f",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-5",
        "content": content or [],
    }
    message["usage"] = usage or {"input_tokens": 10, "output_tokens": 1}
    return {"type": "message_start", "message": message}


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": body}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(reason: Optional[str], usage: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": usage or {"output_tokens": 5}}


END = {"type": "message_stop"}


def tool(kind: str, call_id: str, name: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "id": call_id, "name": name, "input": {}, **extra}


def args(index: int, text: str) -> dict[str, Any]:
    return delta(index, {"type": "input_json_delta", "partial_json": text})


def fixture(name: str) -> tuple[list[Unified], StreamResult]:
    events = list(iter_unified([(FIXTURES / name).read_bytes()], "anthropic", "sse"))
    return events, collect(events)


# -- who runs each call ------------------------------------------------------------------------------------------


def test_a_programmatic_tool_use_is_a_client_call_and_the_code_execution_a_server_call() -> None:
    events, result = fixture("anthropic-messages-programmatic-tool-call.sse")
    west = {"sql": "SELECT SUM(revenue) AS total FROM sales WHERE region = 'West'"}
    assert [(c.id, c.name, c.arguments) for c in result.client_tool_calls] == [
        ("toolu_01WestQry8sLm3VbXc5NzKa", "query_database", west)
    ]
    assert [(c.id, c.name) for c in result.server_tool_calls] == [
        ("srvtoolu_01Pz7Tq9RbW4nKcLx2MhVdYe", "code_execution")
    ]
    assert (
        result.server_tool_calls[0].arguments is not None
        and "query_database" in result.server_tool_calls[0].arguments["code"]
    )
    assert (result.stop_reason, result.raw_stop_reason) == ("tool_use", "tool_use")
    done = {e.tool_call_id: e.server for e in only(events, "tool_call_done")}
    assert done == {"srvtoolu_01Pz7Tq9RbW4nKcLx2MhVdYe": True, "toolu_01WestQry8sLm3VbXc5NzKa": False}


def test_a_tool_use_whose_result_block_arrives_in_the_stream_is_a_server_call() -> None:
    events = feed(
        AnthropicNormalizer(),
        start(),
        block_start(0, tool("tool_use", "toolu_a", "web_fetch")),
        args(0, '{"url": "https://a.example"}'),
        stop(0),
        block_start(1, tool("tool_use", "toolu_b", "web_fetch")),
        args(1, '{"url": "https://b.example"}'),
        stop(1),
        block_start(2, {"type": "web_fetch_tool_result", "tool_use_id": "toolu_a", "content": {}}),
        stop(2),
        block_start(3, {"type": "code_execution_tool_result", "tool_use_id": "toolu_b", "content": {}}),
        stop(3),
        block_start(4, {"type": "text", "text": ""}),
        delta(4, {"type": "text_delta", "text": "Both pages say hello."}),
        stop(4),
        message_delta("end_turn"),
        END,
    )
    done = only(events, "tool_call_done")
    assert [(e.tool_call_id, e.server, e.arguments) for e in done] == [
        ("toolu_a", True, {"url": "https://a.example"}),
        ("toolu_b", True, {"url": "https://b.example"}),
    ]
    assert events.index(done[-1]) < events.index(only(events, "text_delta")[0])  # released when the text starts
    result = collect(events)
    assert result.client_tool_calls == []
    assert [c.id for c in result.server_tool_calls] == ["toolu_a", "toolu_b"]
    assert result.stop_reason == "end"


def test_a_result_after_the_calls_done_still_keeps_it_out_of_the_tool_use_stop() -> None:
    events = feed(
        AnthropicNormalizer(),
        start(),
        block_start(0, tool("tool_use", "toolu_late", "lookup")),
        stop(0),
        block_start(1, {"type": "text", "text": ""}),
        stop(1),
        block_start(2, {"type": "mcp_tool_result", "tool_use_id": "toolu_late", "is_error": False, "content": "ok"}),
        stop(2),
        message_delta("end_turn"),
        END,
    )
    assert only(events, "tool_call_done")[0].server is False  # its done was given before the result came
    assert only(events, "done")[0].stop_reason == "end"


def test_a_client_calls_done_waits_for_the_next_block_and_a_cut_there_leaves_it_incomplete() -> None:
    head = [start(), block_start(0, tool("tool_use", "toolu_c", "now")), args(0, "{}"), stop(0)]
    cut = feed(AnthropicNormalizer(), *head)
    assert "tool_call_done" not in types(cut)
    error = cut[-1].error
    assert error is not None and error["type"] == "stream_truncated"
    assert error["incomplete_tool_calls"] == [{"id": "toolu_c", "name": "now", "arguments_raw": "{}"}]
    assert [c.id for c in collect(cut).incomplete_tool_calls] == ["toolu_c"]
    ended = feed(AnthropicNormalizer(), *head, message_delta("tool_use"), END)
    assert types(ended)[-4:] == ["raw", "tool_call_done", "usage", "done"]
    assert ended[-3].raw == stop(0)  # the done carries the stop that closed the block
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    errored = feed(AnthropicNormalizer(), *head, overloaded)
    assert types(errored)[-2:] == ["tool_call_done", "error"]
    assert errored[-1].error is not None and "incomplete_tool_calls" not in errored[-1].error


# -- blocks message_start brings whole ---------------------------------------------------------------------------


def test_calls_that_arrive_whole_in_message_start_are_read() -> None:
    events, result = fixture("anthropic-messages-programmatic-continuation.sse")
    regions = ["East", "Central", "North", "South"]
    want = [{"sql": f"SELECT SUM(revenue) AS total FROM sales WHERE region = '{r}'"} for r in regions]
    assert [c.arguments for c in result.client_tool_calls] == want
    assert all(c.arguments_raw is None and c.complete for c in result.tool_calls)
    assert types(events)[:3] == ["raw", "tool_call_start", "tool_call_done"]
    assert (result.stop_reason, result.raw_stop_reason) == ("tool_use", "tool_use")


def test_text_thinking_and_server_blocks_of_message_start_are_read() -> None:
    cite = {
        "type": "char_location",
        "cited_text": "Ice",
        "document_index": 0,
        "start_char_index": 0,
        "end_char_index": 3,
    }
    content: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": "Recall the doc.", "signature": "EqQBsig"},
        {"type": "server_tool_use", "id": "srvtoolu_s", "name": "web_search", "input": {"query": "ice"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_s", "content": []},
        {"type": "tool_use", "id": "toolu_r", "name": "remote", "input": {"q": 1}},
        {"type": "mcp_tool_result", "tool_use_id": "toolu_r", "is_error": False, "content": "done"},
        {"type": "text", "text": "Ice floats.", "citations": [cite]},
    ]
    events = feed(AnthropicNormalizer(), start(content), message_delta("end_turn"), END)
    result = collect(events)
    assert (result.reasoning, result.text, result.signatures) == ("Recall the doc.", "Ice floats.", ["EqQBsig"])
    assert [(c.id, c.server, c.arguments) for c in result.tool_calls] == [
        ("srvtoolu_s", True, {"query": "ice"}),
        ("toolu_r", True, {"q": 1}),  # its result is in the same content
    ]
    assert result.stop_reason == "end"
    assert [c.cited_text for c in result.citations] == ["Ice"]
    assert all(e.raw is events[0].raw for e in events[:-3])


# -- a second message_start --------------------------------------------------------------------------------------


def test_a_second_message_start_with_a_call_open_is_a_protocol_error() -> None:
    events = feed(
        AnthropicNormalizer(),
        start(),
        block_start(0, tool("tool_use", "toolu_open", "f")),
        args(0, '{"a": '),
        start(),
        finish=False,
    )
    error = only(events, "error")
    assert len(error) == 1 and error[0].error is not None
    assert error[0].error["type"] == "protocol_error"
    assert "message_start" in error[0].error["message"]
    assert error[0].error["incomplete_tool_calls"] == [{"id": "toolu_open", "name": "f", "arguments_raw": '{"a": '}]
    assert "tool_call_done" not in types(events)
    result = collect(events)
    assert result.tool_calls == [] and [c.id for c in result.incomplete_tool_calls] == ["toolu_open"]


def test_a_second_message_start_with_a_text_block_open_is_a_protocol_error() -> None:
    events, result = fixture("anthropic-messages-second-message-start.sse")
    assert result.error is not None and result.error["type"] == "protocol_error"
    assert "incomplete_tool_calls" not in result.error
    assert [e.type for e in events].count("error") == 1
    assert only(events, "error")[0].raw["message"]["id"] == "msg_01SecondOfTwoWp4Rn7"


def test_one_message_start_and_a_new_message_after_a_closed_one_are_no_error() -> None:
    events = feed(
        AnthropicNormalizer(), start(), block_start(0, {"type": "text", "text": ""}), stop(0), start(), finish=False
    )
    assert "error" not in types(events)


# -- citations ---------------------------------------------------------------------------------------------------


def test_document_citations_deltas_become_citations_with_their_source_spans() -> None:
    events, result = fixture("anthropic-messages-document-citations.sse")
    assert [(c.kind, c.title, c.cited_text, c.start, c.end, c.url) for c in result.citations] == [
        ("char_location", "Nature facts", "The grass is green. ", 0, 20, None),
        ("page_location", "Physics handbook.pdf", "Water boils at 100 degrees Celsius at sea level.", 3, 4, None),
        ("content_block_location", "Custom content", "The sky is blue.", 1, 2, None),
    ]
    carriers = [e for e in events if e.citations]
    assert [e.type for e in carriers] == ["raw"] * 3
    assert all(e.raw["delta"]["citation"] is c.raw for e, c in zip(carriers, result.citations))


def test_web_search_citations_of_the_recording_come_out() -> None:
    path = CORPUS / "anthropic" / "web-search-citations.sse"
    if not path.is_file():
        pytest.skip("shared corpus not present")
    result = collect(iter_unified([path.read_bytes()], "anthropic", "sse"))
    assert len(result.citations) == 9
    assert all(
        c.kind == "web_search_result_location" and c.url and c.url.startswith("https://") for c in result.citations
    )
    first = result.citations[0]
    assert (first.url, first.title) == (
        "https://www.npr.org/sections/news/",
        "News: U.S. and World News Headlines : NPR",
    )
    assert first.cited_text is not None and first.cited_text.startswith("Filip Singer/Getty Images Europe")
    assert (first.start, first.end) == (None, None)
    assert "encrypted_index" in first.raw


def test_citations_a_text_block_brings_whole_ride_on_its_start() -> None:
    search = {"type": "search_result_location", "source": "https://kb.example/a", "title": "KB", "cited_text": "x",
              "search_result_index": 0, "start_block_index": 0, "end_block_index": 1}  # fmt: skip
    events = feed(
        AnthropicNormalizer(),
        start(),
        block_start(0, {"type": "text", "text": "", "citations": [search, "junk"]}),
        delta(0, {"type": "text_delta", "text": "x"}),
        stop(0),
        message_delta("end_turn"),
        END,
    )
    carriers = [e for e in events if e.citations]
    assert len(carriers) == 1 and carriers[0].type == "raw" and carriers[0].raw["type"] == "content_block_start"
    assert carriers[0].citations == [
        Citation("search_result_location", "https://kb.example/a", "KB", "x", 0, 1, search)
    ]
    assert not any(e.citations for e in only(events, "text_delta"))


# -- newer blocks that stay raw ----------------------------------------------------------------------------------


def test_compaction_redacted_thinking_and_container_upload_stay_raw() -> None:
    events, result = fixture("anthropic-messages-compaction-iterations.sse")
    assert result.text == "With Lyon and Turin booked, Milan is the natural last stop."
    assert types(events)[:4] == ["raw", "raw", "raw", "raw"]  # message_start, compaction start, delta, stop
    assert events[2].raw["delta"]["type"] == "compaction_delta" and events[2].signature is None
    others = feed(
        AnthropicNormalizer(),
        start(),
        block_start(0, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}),
        stop(0),
        block_start(1, {"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}),
        stop(1),
        message_delta("end_turn"),
        END,
    )
    assert types(others)[:5] == ["raw"] * 5
    assert others[1].raw["content_block"]["data"] == "EmwKAhgBEgy3va3pzix/LafPsn4a"
    assert collect(others).signatures == []  # the opaque data goes back as the whole block, never as a signature


def test_a_pause_after_compaction_is_an_incomplete_stop() -> None:
    events = feed(AnthropicNormalizer(), start(), message_delta("compaction"), END)
    assert (events[-1].stop_reason, events[-1].raw_stop_reason) == ("incomplete", "compaction")


# -- usage that matches the bill ---------------------------------------------------------------------------------


def test_usage_with_iterations_counts_what_is_billed_and_keeps_raw() -> None:
    _, result = fixture("anthropic-messages-compaction-iterations.sse")
    usage = result.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (180000 + 23000 + 4000, 4500, 4000)
    assert (usage.cache_write_tokens, usage.cache_write_5m_tokens, usage.cache_write_1h_tokens) == (0, 0, 0)
    assert usage.total_tokens == 211500
    expected = json.loads((FIXTURES / "anthropic-messages-compaction-iterations.sse.expected.json").read_text())
    assert usage.raw == expected["usage"]  # the provider's object, top-level counts untouched
    assert usage.raw["input_tokens"] == 23000


def test_iterations_without_a_count_leave_the_top_level_one() -> None:
    raw = {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 300,
           "iterations": [{"type": "compaction", "input_tokens": 5000, "output_tokens": 200},
                          {"type": "message", "input_tokens": 900, "output_tokens": 40}]}  # fmt: skip
    usage = Usage.from_raw(raw)
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (5900 + 300, 240, 300)
    assert usage.source == "anthropic"


def test_cache_writes_by_ttl() -> None:
    _, result = fixture("anthropic-messages-document-citations.sse")
    usage = result.usage
    assert usage is not None
    assert (usage.cache_write_tokens, usage.cache_write_5m_tokens, usage.cache_write_1h_tokens) == (2048, 1536, 512)
    assert usage.input_tokens == 18 + 2048
    plain = Usage.from_raw({"input_tokens": 5, "output_tokens": 1, "cache_creation_input_tokens": 40})
    assert (plain.cache_write_tokens, plain.cache_write_5m_tokens, plain.cache_write_1h_tokens) == (40, None, None)
    per_step = Usage.from_raw(
        {"input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 10,
         "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": 0},
         "iterations": [{"type": "compaction", "input_tokens": 9, "output_tokens": 2, "cache_creation_input_tokens": 30,
                         "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 30}},
                        {"type": "message", "input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 10,
                         "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": 0}}]}
    )  # fmt: skip
    assert (per_step.cache_write_tokens, per_step.cache_write_5m_tokens, per_step.cache_write_1h_tokens) == (40, 10, 30)
    assert per_step.input_tokens == 10 + 40


# -- Bedrock InvokeModel inherits every rule ---------------------------------------------------------------------


def test_bedrock_invoke_model_reads_calls_that_arrive_whole_in_message_start() -> None:
    content = [tool("tool_use", "toolu_bd", "query_database", caller=CALLER) | {"input": {"sql": "SELECT 1"}}]
    chunks = [start(content), message_delta("tool_use"), END]
    body = b"".join(
        eventstream_event("chunk", {"bytes": base64.b64encode(json.dumps(c).encode()).decode()}) for c in chunks
    )
    result = collect(iter_unified([body], "bedrock-anthropic", "aws-eventstream"))
    assert [(c.id, c.arguments, c.server) for c in result.tool_calls] == [("toolu_bd", {"sql": "SELECT 1"}, False)]
    assert result.stop_reason == "tool_use"


def _sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(b"event: %s\ndata: %s\n\n" % (p["type"].encode(), json.dumps(p).encode()) for p in payloads)


def test_a_null_count_in_message_delta_keeps_the_count_message_start_gave() -> None:
    # the SDK skips null usage fields (lib/streaming/_messages.py): a null is no new count
    counts = {"input_tokens": 5, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2000}
    nulls = dict.fromkeys(counts) | {"output_tokens": 42}
    body = _sse(
        start(usage={**counts, "output_tokens": 1}),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, {"type": "text_delta", "text": "hi"}),
        stop(0),
        message_delta("end_turn", nulls),
        {"type": "message_stop"},
    )
    for provider in ("anthropic", "auto"):
        usage = collect(iter_unified([body], provider)).usage
        assert usage is not None
        assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens, usage.output_tokens) == (
            2105,
            2000,
            100,
            42,
        )


def test_text_thinking_and_a_signature_in_content_block_start_are_read() -> None:
    # empty from Anthropic, not from every compatible server: read as message_start's whole blocks are
    body = _sse(
        start(),
        block_start(0, {"type": "thinking", "thinking": "pre-", "signature": "SIG"}),
        delta(0, {"type": "thinking_delta", "thinking": "think"}),
        stop(0),
        block_start(1, {"type": "text", "text": "Pre"}),
        delta(1, {"type": "text_delta", "text": "fix"}),
        stop(1),
        message_delta("end_turn"),
        {"type": "message_stop"},
    )
    for provider in ("anthropic", "auto"):
        result = collect(iter_unified([body], provider))
        assert (result.reasoning, result.text, result.signatures) == ("pre-think", "Prefix", ["SIG"])
