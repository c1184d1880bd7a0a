"""Bedrock ConverseStream fidelity: who runs each call (Amazon Nova's system tools), which event decides the stop
(``messageStop`` whether ``metadata`` comes before or after it) and citation deltas as data: one test per rule, over
event-stream bytes built here from the documented shapes (botocore's bedrock-runtime service model)."""

from __future__ import annotations

from typing import Any, Optional

import pytest

from helpers import chunked
from helpers.events import types
from helpers.eventstream import event
from ssewire import Unified, collect, iter_unified
from ssewire.normalizers.bedrock import BedrockConverseNormalizer

USAGE = {"inputTokens": 30, "outputTokens": 12, "totalTokens": 42}
START = event("messageStart", {"role": "assistant"})
METADATA = event("metadata", {"usage": USAGE, "metrics": {"latencyMs": 812}})


def converse(*messages: bytes, size: Optional[int] = None) -> list[Unified]:
    return list(iter_unified(chunked(b"".join(messages), size), "bedrock-converse", "aws-eventstream"))


def block_start(index: int, start: dict[str, Any]) -> bytes:
    return event("contentBlockStart", {"contentBlockIndex": index, "start": start})


def delta(index: int, value: dict[str, Any]) -> bytes:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": value})


def block_stop(index: int) -> bytes:
    return event("contentBlockStop", {"contentBlockIndex": index})


def stop(reason: str = "end_turn") -> bytes:
    return event("messageStop", {"stopReason": reason})


CODE = '{"code":"print(sum([1, 2, 3]))"}'
#: A Nova code-interpreter call and its result, as the Nova user guide shows them (tool-built-in.html).
SERVER_CALL = (
    block_start(
        0, {"toolUse": {"toolUseId": "tooluse_W1", "name": "nova_code_interpreter", "type": "server_tool_use"}}
    ),
    delta(0, {"toolUse": {"input": CODE[:9]}}),
    delta(0, {"toolUse": {"input": CODE[9:]}}),
    block_stop(0),
    block_start(
        1, {"toolResult": {"toolUseId": "tooluse_W1", "type": "nova_code_interpreter_result", "status": "success"}}
    ),
    delta(1, {"toolResult": [{"text": '{"stdOut":"6","stdErr":"","exitCode":0,"isError":false}'}]}),
    block_stop(1),
)


# -- who runs each call ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [None, 1, 33])
def test_server_tool_use_is_a_server_call_and_its_result_block_is_raw(size: Optional[int]) -> None:
    events = converse(
        START, *SERVER_CALL, delta(2, {"text": "The sum is 6."}), block_stop(2), stop(), METADATA, size=size
    )
    calls = [e for e in events if e.type.startswith("tool_call")]
    assert [(e.type, e.server) for e in calls] == [
        ("tool_call_start", True), ("tool_call_delta", True), ("tool_call_delta", True), ("tool_call_done", True),
    ]  # fmt: skip
    assert types(events)[5:8] == ["raw", "raw", "raw"]  # the toolResult block
    result = collect(events)
    assert [(c.id, c.name, c.arguments) for c in result.server_tool_calls] == [
        ("tooluse_W1", "nova_code_interpreter", {"code": "print(sum([1, 2, 3]))"})
    ]
    assert result.client_tool_calls == []
    assert (result.stop_reason, result.raw_stop_reason) == ("end", "end_turn")


def test_a_tool_use_without_the_server_type_is_a_client_call() -> None:
    client = (
        block_start(2, {"toolUse": {"toolUseId": "tooluse_C", "name": "get_weather"}}),
        delta(2, {"toolUse": {"input": '{"city":"Bern"}'}}),
        block_stop(2),
    )
    result = collect(converse(START, *SERVER_CALL, *client, stop("tool_use"), METADATA))
    assert [c.id for c in result.client_tool_calls] == ["tooluse_C"]
    assert [c.id for c in result.server_tool_calls] == ["tooluse_W1"]
    assert result.stop_reason == "tool_use"


# -- the stop: messageStop decides, metadata before or after it ---------------------------------------------------


@pytest.mark.parametrize("order", ["documented", "metadata_first"])
@pytest.mark.parametrize(("reason", "unified"), [("end_turn", "end"), ("max_tokens", "max_tokens")])
def test_message_stop_decides_the_stop_whatever_the_order(order: str, reason: str, unified: str) -> None:
    tail = (stop(reason), METADATA) if order == "documented" else (METADATA, stop(reason))
    events = converse(START, delta(0, {"text": "Hi"}), *tail)
    assert types(events).count("done") == 1 and types(events)[-1] == "done"
    assert types(events).count("usage") == 1
    assert types(events).index("usage") < types(events).index("done")
    assert (events[-1].stop_reason, events[-1].raw_stop_reason) == (unified, reason)
    assert collect(events).usage.raw == USAGE  # type: ignore[union-attr]


def test_metadata_first_keeps_a_cut_off_call_incomplete() -> None:
    call = (block_start(0, {"toolUse": {"toolUseId": "t1", "name": "f"}}), delta(0, {"toolUse": {"input": '{"a'}}))
    events = converse(START, *call, METADATA, stop("max_tokens"))
    result = collect(events)
    assert result.stop_reason == "max_tokens" and result.tool_calls == []
    assert [(c.id, c.arguments_raw) for c in result.incomplete_tool_calls] == [("t1", '{"a')]


def test_metadata_without_message_stop_is_truncated_naming_message_stop() -> None:
    events = converse(START, delta(0, {"text": "Hi"}), METADATA)
    assert "done" not in types(events)
    error = events[-1].error
    assert error is not None and error["type"] == "stream_truncated" and "(messageStop)" in error["message"]
    assert events[-1].usage == USAGE


def test_boto3_dicts_with_metadata_first_give_one_done() -> None:
    norm = BedrockConverseNormalizer()
    out: list[Unified] = []
    for item in (
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "x"}}},
        {"metadata": {"usage": USAGE}},
        {"messageStop": {"stopReason": "stop_sequence"}},
    ):
        out += norm.frame(item)
    out += norm.finish()
    assert types(out) == ["raw", "text_delta", "usage", "done"]
    assert out[-1].stop_reason == "stop_sequence"


# -- citations -------------------------------------------------------------------------------------------------------


def test_citation_delta_is_raw_with_a_citation() -> None:
    citation = {
        "title": "Bern - Wikipedia",
        "sourceContent": [{"text": "Bern is the de facto capital"}, {"text": " of Switzerland."}],
        "location": {"web": {"url": "https://en.wikipedia.org/wiki/Bern", "domain": "en.wikipedia.org"}},
    }
    events = converse(START, delta(0, {"text": "Bern."}), delta(0, {"citation": citation}), stop(), METADATA)
    assert types(events)[1:3] == ["text_delta", "raw"]
    (got,) = events[2].citations or []
    assert (got.kind, got.url, got.title, got.cited_text, got.start, got.end) == (
        "web", "https://en.wikipedia.org/wiki/Bern", "Bern - Wikipedia",
        "Bern is the de facto capital of Switzerland.", None, None,
    )  # fmt: skip
    assert got.raw == citation
    assert collect(events).citations == [got]


def test_document_citation_kind_is_its_location() -> None:
    citation = {"title": "doc", "location": {"documentChar": {"documentIndex": 0, "start": 3, "end": 9}}}
    (got,) = converse(START, delta(0, {"citation": citation}), stop(), METADATA)[1].citations or []
    assert (got.kind, got.url, got.title, got.start) == ("documentChar", None, "doc", None)


@pytest.mark.parametrize("reason", ["malformed_tool_use", "malformed_model_output"])
def test_a_call_open_when_the_output_was_malformed_stays_incomplete(reason: str) -> None:
    events = converse(
        START,
        block_start(0, {"toolUse": {"toolUseId": "tu_1", "name": "f"}}),
        delta(0, {"toolUse": {"input": '{"a":'}}),
        stop(reason),
        METADATA,
    )
    result = collect(events)
    assert "tool_call_done" not in types(events)
    assert (result.stop_reason, result.raw_stop_reason, result.tool_calls) == ("failed", reason, [])
    assert [(call.id, call.arguments_raw) for call in result.incomplete_tool_calls] == [("tu_1", '{"a":')]
