"""Cohere v2 chat streams, one test per rule of the module docstring."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import FIXTURES, chunked
from helpers.events import feed, types
from ssewire import collect, iter_unified, normalizer_for
from ssewire.normalizers.cohere import CohereNormalizer
from ssewire.normalizers.providers import detect_provider
from ssewire.usage import Usage


def ev(kind: str, message: Any = None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind, **more}
    if message is not None:
        out["delta"] = {"message": message}
    return out


def end(reason: str = "COMPLETE", **usage: Any) -> dict[str, Any]:
    return {"type": "message-end", "delta": {"finish_reason": reason, "usage": usage or None}}


START = ev("message-start", {"role": "assistant", "content": []}, id="m-1")


def test_text_and_thinking_content_deltas() -> None:
    events = feed(
        CohereNormalizer(),
        START,
        ev("content-start", {"content": {"type": "thinking", "thinking": ""}}, index=0),
        ev("content-delta", {"content": {"thinking": "hm"}}, index=0),
        ev("content-end", index=0),
        ev("content-delta", {"content": {"text": "Hi"}}, index=1),
        ev("content-delta", {"content": {"text": ""}}, index=1),
        ev("citation-start", {"citations": {"start": 0}}, index=0),
        end(tokens={"input_tokens": 5, "output_tokens": 2}),
        "[DONE]",
    )
    assert types(events) == ["raw", "raw", "reasoning_delta", "raw", "text_delta", "raw", "raw", "usage", "done"]
    result = collect(events)
    assert (result.text, result.reasoning, result.response_id, result.stop_reason) == ("Hi", "hm", "m-1", "end")


def test_the_tool_plan_is_raw_not_reasoning() -> None:
    events = feed(CohereNormalizer(), START, ev("tool-plan-delta", {"tool_plan": "I will search."}), end())
    assert types(events) == ["raw", "raw", "done"]
    assert events[1].raw["delta"]["message"]["tool_plan"] == "I will search."
    assert collect(events).reasoning == ""


def test_parallel_tool_calls_by_index() -> None:
    def start(index: int, call_id: str, name: str, arguments: str = "") -> dict[str, Any]:
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        return ev("tool-call-start", {"tool_calls": call}, index=index)

    def delta(index: int, text: str) -> dict[str, Any]:
        return ev("tool-call-delta", {"tool_calls": {"function": {"arguments": text}}}, index=index)

    events = feed(
        CohereNormalizer(),
        START,
        start(0, "a", "f"),
        delta(0, '{"x"'),
        start(1, "b", "g", "{"),
        delta(0, ": 1}"),
        delta(1, "}"),
        ev("tool-call-end", index=1),
        ev("tool-call-end", index=0),
        end("TOOL_CALL"),
    )
    assert types(events) == [
        "raw",
        "tool_call_start",
        "tool_call_delta",
        "tool_call_start",
        "tool_call_delta",
        "tool_call_delta",
        "tool_call_delta",
        "tool_call_done",
        "tool_call_done",
        "done",
    ]
    result = collect(events)
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [("a", "f", {"x": 1}), ("b", "g", {})]
    assert result.stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("reason", "stop"),
    [
        ("COMPLETE", "end"),
        ("MAX_TOKENS", "max_tokens"),
        ("STOP_SEQUENCE", "stop_sequence"),
        ("ERROR", "failed"),
        ("X", "other"),
    ],
)
def test_finish_reasons(reason: str, stop: str) -> None:
    events = feed(CohereNormalizer(), START, end(reason))
    assert (events[-1].type, events[-1].stop_reason, events[-1].raw_stop_reason) == ("done", stop, reason)


def test_a_call_cut_by_max_tokens_stays_incomplete() -> None:
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"q": "'}}
    events = feed(CohereNormalizer(), START, ev("tool-call-start", {"tool_calls": call}, index=0), end("MAX_TOKENS"))
    result = collect(events)
    assert result.tool_calls == [] and [c.arguments_raw for c in result.incomplete_tool_calls] == ['{"q": "']


def test_usage_tokens_are_used_billed_units_kept_in_raw() -> None:
    raw = {
        "billed_units": {"input_tokens": 8, "output_tokens": 50},
        "tokens": {"input_tokens": 1394, "output_tokens": 54},
    }
    usage = Usage.from_raw({**raw, "cached_tokens": 1360})
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens, usage.source) == (
        1394,
        54,
        1360,
        "cohere",
    )
    assert usage.raw is not None and usage.raw["billed_units"] == {"input_tokens": 8, "output_tokens": 50}


def test_an_error_event_ends_the_stream_and_a_cut_stream_is_truncated() -> None:
    norm = CohereNormalizer()
    events = feed(norm, START, ev("content-delta", {"content": {"text": "a"}}), {"type": "error", "message": "boom"})
    assert types(events) == ["raw", "text_delta", "error"] and events[-1].error is not None
    assert events[-1].error["message"] == "boom" and norm.done
    cut = feed(CohereNormalizer(), START, ev("content-delta", {"content": {"text": "a"}}))
    assert (
        cut[-1].error is not None
        and cut[-1].error["type"] == "stream_truncated"
        and "message-end" in cut[-1].error["message"]
    )


def test_detection() -> None:
    assert detect_provider(START) == "cohere" and detect_provider(ev("content-delta")) == "cohere"
    body = b"event: message-start\ndata: " + b'{"type":"message-start","id":"m"}\n\n'
    body += b'event: content-delta\ndata: {"type":"content-delta","delta":{"message":{"content":{"text":"Yo"}}}}\n\n'
    assert collect(iter_unified([body], "auto")).text == "Yo"
    assert type(normalizer_for("cohere")) is CohereNormalizer


# -- citations -------------------------------------------------------------------------------------------------------


def test_citation_fixture_gives_its_one_citation_once() -> None:
    data = (FIXTURES / "cohere-chat-citations-max-tokens.sse").read_bytes()
    for size in (None, 7):
        events = list(iter_unified(chunked(data, size), "cohere", "sse"))
        cited = [e for e in events if e.citations]
        assert [e.type for e in cited] == ["raw"]
        (citation,) = collect(events).citations
        assert (citation.kind, citation.cited_text, citation.start, citation.end, citation.url) == (
            "citation", "Paris", 22, 27, None,
        )  # fmt: skip
        assert citation.raw == cited[0].raw["delta"]["message"]["citations"]


def test_a_citation_gives_one_citation_per_source_with_its_url_and_title() -> None:
    sources = [
        {"type": "document", "id": "d0", "document": {"id": "d0", "title": "Paris", "url": "https://x.example/p"}},
        {"type": "tool", "id": "t0", "tool_output": {"title": "search"}},
    ]
    cited = ev("citation-start", {"citations": {"start": 0, "end": 5, "text": "Paris", "sources": sources}}, index=0)
    events = feed(CohereNormalizer(), START, cited, end())
    assert [(c.url, c.title, c.cited_text, c.start, c.end) for c in events[1].citations or []] == [
        ("https://x.example/p", "Paris", "Paris", 0, 5),
        (None, "search", "Paris", 0, 5),
    ]
    assert collect(events).citations == events[1].citations
