"""Gemini fidelity: who runs each call (generateContent code execution, Interactions server steps) and citations as
data (grounding supports, recitation sources, Interactions annotations): one test per rule, through the real
pipeline (SSE bytes, at several chunkings, or ``payload()`` where the rule is about one payload)."""

from __future__ import annotations

import json
from functools import partial
from typing import Any, Optional

import pytest

from helpers import CORPUS, FIXTURES, chunked
from helpers import events as helper_events
from helpers.events import types as kinds
from ssewire import Unified, collect, iter_unified
from ssewire.normalizers.gemini import GeminiNormalizer
from ssewire.normalizers.gemini_interactions import GeminiInteractionsNormalizer

feed = partial(helper_events.feed, decoded=True, finish=False, named=False)
feed_steps = partial(helper_events.feed, decoded=True, finish=False)
GROUNDED = CORPUS / "gemini" / "sse-web-search-grounding.sse"


def sse(*payloads: dict[str, Any]) -> bytes:
    """generateContent chunks as an ``?alt=sse`` body."""
    return b"".join(b"data: " + json.dumps(p).encode() + b"\r\n\r\n" for p in payloads)


def run(data: bytes, size: Optional[int] = None) -> list[Unified]:
    return list(iter_unified(chunked(data, size), "gemini", "sse"))


def chunk(*parts: Any, finish: Optional[str] = None, **candidate: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0, **candidate}
    if finish is not None:
        body["finishReason"] = finish
    return {"candidates": [body], "modelVersion": "gemini-2.5-flash", "responseId": "r1"}


CODE = {"language": "PYTHON", "code": "print(6 * 7)\n"}
RESULT = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}}


# -- who runs each call: generateContent ----------------------------------------------------------------------------


def test_executable_code_is_a_whole_server_call_named_code_execution() -> None:
    events = feed(GeminiNormalizer(), chunk({"executableCode": CODE, "thoughtSignature": "sig-x"}))
    assert [(e.type, e.tool_name, e.server) for e in events] == [
        ("tool_call_start", "code_execution", True),
        ("tool_call_delta", "code_execution", True),
        ("tool_call_done", "code_execution", True),
    ]
    assert events[0].signature == "sig-x"
    assert events[2].arguments == CODE
    assert json.loads(events[1].arguments_delta) == CODE


def test_executable_code_id_names_the_call_and_is_not_an_argument() -> None:
    events = feed(GeminiNormalizer(), chunk({"executableCode": {**CODE, "id": "ec_7"}}))
    assert {e.tool_call_id for e in events} == {"ec_7"}
    assert events[-1].arguments == CODE


def test_code_execution_result_is_raw() -> None:
    obj = chunk(RESULT)
    events = feed(GeminiNormalizer(), obj)
    assert kinds(events) == ["raw"] and events[0].raw is obj


@pytest.mark.parametrize("size", [None, 7, 64])
def test_code_execution_stream_ends_end_with_one_server_call(size: Optional[int]) -> None:
    data = sse(chunk({"text": "Let me run it."}), chunk({"executableCode": CODE}), chunk(RESULT))
    data += sse(chunk({"text": "It is 42."}, finish="STOP"))
    result = collect(run(data, size))
    assert result.client_tool_calls == []
    assert [(c.name, c.server, c.arguments) for c in result.server_tool_calls] == [("code_execution", True, CODE)]
    assert (result.stop_reason, result.raw_stop_reason) == ("end", "STOP")
    assert result.text == "Let me run it.It is 42."


def test_a_function_call_beside_code_execution_still_stops_tool_use() -> None:
    data = sse(chunk({"executableCode": CODE}), chunk(RESULT))
    data += sse(chunk({"functionCall": {"name": "report", "args": {"value": 42}}}, finish="STOP"))
    result = collect(run(data))
    assert [c.name for c in result.client_tool_calls] == ["report"]
    assert [c.name for c in result.server_tool_calls] == ["code_execution"]
    assert result.stop_reason == "tool_use"


def test_code_execution_fixture() -> None:
    result = collect(run((FIXTURES / "gemini-stream-code-execution.sse").read_bytes()))
    assert [(c.id, c.server) for c in result.server_tool_calls] == [("call_0", True)]


# -- Google Search / URL context grounding: metadata, no call ---------------------------------------------------------


def _expected_pairs(path: Any) -> list[tuple[str, Optional[str], Optional[str], int, int]]:
    """(kind, url, title, start, end) per (support, chunk) of the last groundingMetadata in the recording."""
    metadata: dict[str, Any] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("data: "):
            candidate = json.loads(line[6:])["candidates"][0]
            metadata = candidate.get("groundingMetadata") or metadata
    chunks = metadata["groundingChunks"]
    return [
        ("grounding_support", chunks[i]["web"]["uri"], chunks[i]["web"]["title"], s["segment"]["startIndex"],
         s["segment"]["endIndex"])
        for s in metadata["groundingSupports"]
        for i in s["groundingChunkIndices"]
    ]  # fmt: skip


@pytest.mark.skipif(not GROUNDED.is_file(), reason="shared corpus not present")
@pytest.mark.parametrize("size", [None, 1, 29, 4096])
def test_search_grounding_recording_gives_each_citation_once_and_no_call(size: Optional[int]) -> None:
    events = run(GROUNDED.read_bytes(), size)
    result = collect(events)
    assert result.tool_calls == [] and result.stop_reason == "end"
    got = [(c.kind, c.url, c.title, c.start, c.end) for c in result.citations]
    assert got == _expected_pairs(GROUNDED)
    assert len(got) == 9
    assert all(e.type == "raw" for e in events if e.citations)
    assert not [e for e in events if e.type == "text_delta" and e.citations]


def test_support_citation_fields() -> None:
    support = {"segment": {"startIndex": 4, "endIndex": 9, "text": "Paris"}, "groundingChunkIndices": [1]}
    metadata = {
        "groundingChunks": [{"web": {"uri": "https://a.example", "title": "a"}}, {"web": {"uri": "https://b.example"}}],
        "groundingSupports": [support],
    }
    events = feed(GeminiNormalizer(), chunk({"text": "Yes, Paris."}, groundingMetadata=metadata))
    assert kinds(events) == ["text_delta", "raw"]
    first, second = events[1].citations or []
    assert (first.kind, first.url, first.title, first.cited_text, first.start, first.end) == (
        "grounding_support", "https://b.example", None, "Paris", 4, 9,
    )  # fmt: skip
    assert first.raw is support
    assert (second.kind, second.url, second.title, second.start) == ("grounding_chunk", "https://a.example", "a", None)


def test_a_segment_without_start_index_starts_at_zero() -> None:
    metadata = {
        "groundingChunks": [{"retrievedContext": {"uri": "gs://b/doc.pdf", "title": "doc"}}],
        "groundingSupports": [{"segment": {"endIndex": 5, "text": "Hello"}, "groundingChunkIndices": [0]}],
    }
    (citation,) = feed(GeminiNormalizer(), chunk({"text": "Hello"}, groundingMetadata=metadata))[1].citations or []
    assert (citation.url, citation.title, citation.start, citation.end) == ("gs://b/doc.pdf", "doc", 0, 5)


@pytest.mark.parametrize("size", [None, 13])
def test_repeated_grounding_metadata_gives_each_citation_once(size: Optional[int]) -> None:
    events = run((FIXTURES / "gemini-stream-grounding-repeated.sse").read_bytes(), size)
    got = [(c.url, c.cited_text) for c in collect(events).citations]
    assert got == [
        ("https://example.org/a", "Bern is Swiss capital."),
        ("https://example.org/a", "It lies on the river Aare."),
        ("https://example.com/b", "It lies on the river Aare."),
    ]


def test_empty_grounding_metadata_brings_no_citation_and_text_still_flows() -> None:
    events = run(sse(chunk({"text": "a"}, groundingMetadata={}), chunk({"text": "b"}, finish="STOP")))
    result = collect(events)
    assert result.text == "ab" and result.citations == []


def test_url_context_metadata_is_no_call_and_no_citation() -> None:
    url_context = {
        "urlMetadata": [{"retrievedUrl": "https://x.example", "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"}]
    }
    result = collect(run(sse(chunk({"text": "Read."}, finish="STOP", urlContextMetadata=url_context))))
    assert (result.tool_calls, result.citations, result.stop_reason) == ([], [], "end")


def test_citation_metadata_sources_are_citations() -> None:
    source = {"startIndex": 10, "endIndex": 80, "uri": "https://github.com/x/y", "license": "mit"}
    events = feed(GeminiNormalizer(), chunk({"text": "code"}, citationMetadata={"citationSources": [source]}))
    (citation,) = events[1].citations or []
    assert (citation.kind, citation.url, citation.start, citation.end, citation.raw) == (
        "citation_source", "https://github.com/x/y", 10, 80, source,
    )  # fmt: skip
    vertex = feed(
        GeminiNormalizer(), chunk({"text": "c"}, citationMetadata={"citations": [{"endIndex": 3, "title": "T"}]})
    )
    assert [(c.title, c.start, c.end) for c in vertex[1].citations or []] == [("T", 0, 3)]


# -- who runs each call: Interactions --------------------------------------------------------------------------------


def start(index: int, **step: Any) -> dict[str, Any]:
    return {"index": index, "step": step, "event_type": "step.start"}


def stop(index: int) -> dict[str, Any]:
    return {"index": index, "event_type": "step.stop"}


def completed(status: str = "completed") -> dict[str, Any]:
    return {"interaction": {"id": "v1_i", "status": status}, "event_type": "interaction.completed"}


@pytest.mark.parametrize(
    ("call", "result_type", "arguments"),
    [
        ("google_search_call", "google_search_result", {"queries": ["q"]}),
        ("url_context_call", "url_context_result", {"urls": ["https://x.example"]}),
        ("code_execution_call", "code_execution_result", {"language": "python", "code": "print(1)"}),
    ],
)
def test_interactions_server_steps_are_server_calls_and_results_raw(
    call: str, result_type: str, arguments: dict[str, Any]
) -> None:
    events = feed_steps(
        GeminiInteractionsNormalizer(),
        start(0, type=call, id="s1", arguments=arguments),
        stop(0),
        start(1, type=result_type, call_id="s1", result=[]),
        stop(1),
        completed(),
    )
    assert [(e.type, e.server) for e in events[:4]] == [
        ("tool_call_start", True), ("tool_call_done", True), ("raw", False), ("raw", False),
    ]  # fmt: skip
    result = collect(events)
    assert [(c.id, c.arguments) for c in result.server_tool_calls] == [("s1", arguments)]
    assert result.client_tool_calls == [] and result.stop_reason == "end"


def test_interactions_function_call_is_the_client_call() -> None:
    events = feed_steps(
        GeminiInteractionsNormalizer(),
        start(0, type="google_search_call", id="s1", arguments={"queries": ["q"]}),
        stop(0),
        start(1, type="function_call", id="f1", name="book", arguments={"at": 8}),
        stop(1),
        completed("requires_action"),
    )
    result = collect(events)
    assert [c.id for c in result.client_tool_calls] == ["f1"]
    assert [c.id for c in result.server_tool_calls] == ["s1"]
    assert result.stop_reason == "tool_use"


def test_interactions_pre_rename_server_call_delta_is_a_server_call() -> None:
    events = feed_steps(
        GeminiInteractionsNormalizer(),
        {"index": 0, "event_type": "content.start", "content": {"type": "text"}},
        {"index": 0, "event_type": "content.stop"},
        {
            "index": 1,
            "event_type": "content.delta",
            "delta": {"type": "google_search_call", "id": "gs9", "arguments": {"queries": ["q"]}},
        },
        {"index": 1, "event_type": "content.stop"},
        {"interaction": {"id": "v1_old", "status": "completed"}, "event_type": "interaction.complete"},
    )
    result = collect(events)
    assert [(c.id, c.name, c.server, c.arguments) for c in result.tool_calls] == [
        ("gs9", "google_search_call", True, {"queries": ["q"]})
    ]
    assert result.stop_reason == "end"


# -- citations: Interactions annotations ----------------------------------------------------------------------------

URL_CITATION = {"type": "url_citation", "url": "https://x.example", "title": "X", "start_index": 3, "end_index": 9}


def annotation_delta(*annotations: dict[str, Any]) -> dict[str, Any]:
    return {
        "index": 0,
        "delta": {"type": "text_annotation_delta", "annotations": list(annotations)},
        "event_type": "step.delta",
    }


def test_text_annotation_delta_is_raw_with_citations() -> None:
    events = feed_steps(GeminiInteractionsNormalizer(), start(0, type="model_output"), annotation_delta(URL_CITATION))
    assert kinds(events) == ["raw", "raw"]
    (citation,) = events[1].citations or []
    assert (citation.kind, citation.url, citation.title, citation.start, citation.end, citation.raw) == (
        "url_citation", "https://x.example", "X", 3, 9, URL_CITATION,
    )  # fmt: skip


def test_annotation_kinds_and_fields() -> None:
    file_citation = {"type": "file_citation", "document_uri": "files/abc", "file_name": "report.pdf", "end_index": 4}
    place = {
        "type": "place_citation",
        "url": "https://maps.example/p",
        "name": "Cafe",
        "start_index": 1,
        "end_index": 2,
    }
    word = {"type": "word_info", "start_index": 0, "end_index": 3, "start_offset": "0s"}
    events = feed_steps(GeminiInteractionsNormalizer(), annotation_delta(file_citation, place, word))
    assert [(c.kind, c.url, c.title, c.start, c.end) for c in events[0].citations or []] == [
        ("file_citation", "files/abc", "report.pdf", 0, 4),
        ("place_citation", "https://maps.example/p", "Cafe", 1, 2),
    ]


def test_annotations_in_step_content_are_citations_and_never_repeated() -> None:
    norm = GeminiInteractionsNormalizer()
    content = [{"type": "text", "text": "hi", "annotations": [URL_CITATION]}]
    events = feed_steps(norm, start(0, type="model_output", content=content), annotation_delta(URL_CITATION))
    assert [len(e.citations or []) for e in events] == [1, 0]
    assert collect(events).citations[0].url == "https://x.example"


def test_interactions_fixture_citation_once_and_two_server_calls() -> None:
    events = list(
        iter_unified(chunked((FIXTURES / "gemini-interactions-server-tools.sse").read_bytes(), 17), "gemini", "sse")
    )
    result = collect(events)
    assert [(c.kind, c.url, c.start, c.end) for c in result.citations] == [
        ("url_citation", "https://example.org/bern", 0, 22)
    ]
    assert [(c.id, c.server) for c in result.server_tool_calls] == [("gs_1", True), ("ce_1", True)]


PATH_CUT = {"jsonPath": "$.path", "stringValue": "/home/user/pro", "willContinue": True}


@pytest.mark.parametrize("finish", ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"])
def test_a_streamed_call_the_model_wrote_wrong_stays_incomplete(finish: str) -> None:
    # Vertex streams a call's arguments (partialArgs, willContinue); a finish that says the call was wrong must not
    # close it as a client call: its path was cut mid-value, and a client loop would delete the wrong file
    events = run(
        sse(
            chunk({"functionCall": {"name": "delete_file", "willContinue": True}}),
            chunk({"functionCall": {"partialArgs": [PATH_CUT], "willContinue": True}}),
            chunk(finish=finish),
        )
    )
    result = collect(events)
    assert "tool_call_done" not in kinds(events)
    assert (result.stop_reason, result.raw_stop_reason, result.tool_calls) == ("failed", finish, [])
    assert [call.name for call in result.incomplete_tool_calls] == ["delete_file"]


def test_a_server_side_tool_call_part_is_a_server_call_with_its_signature() -> None:
    # includeServerSideToolInvocations: a toolCall part Gemini runs (Google Search here), its toolResponse part,
    # then the client's own functionCall; each call's signature is kept
    query = {"queries": ["northernmost city"]}
    search = {"toolCall": {"id": "tc1", "toolType": "GOOGLE_SEARCH_WEB", "args": query}, "thoughtSignature": "SIG1"}
    answer = {"toolResponse": {"id": "tc1", "toolType": "GOOGLE_SEARCH_WEB", "response": {"results": []}}}
    call = {"id": "fc1", "name": "getWeather", "args": {"city": "Utqiagvik"}}
    weather = {"functionCall": call, "thoughtSignature": "SIG2"}
    result = collect(run(sse(chunk(search), chunk(answer), chunk(weather, finish="STOP"))))
    calls = [(c.id, c.name, c.arguments, c.server) for c in result.tool_calls]
    assert calls == [("tc1", "google_search_web", query, True), ("fc1", "getWeather", {"city": "Utqiagvik"}, False)]
    assert [c.id for c in result.client_tool_calls] == ["fc1"] and result.stop_reason == "tool_use"
    assert result.signatures == ["SIG1", "SIG2"]


def test_an_interactions_server_call_delta_keeps_its_signature() -> None:
    def event(kind: str, **members: Any) -> dict[str, Any]:
        return {"event_type": kind, **members}

    interaction = {"id": "int_1", "status": "in_progress", "model": "gemini-3"}
    signed = {"type": "code_execution_call", "arguments": {"code": "print(1)"}, "signature": "CESIG"}
    body = b"".join(
        b"event: %s\ndata: %s\n\n" % (e["event_type"].encode(), json.dumps(e).encode())
        for e in (
            event("interaction.created", interaction=interaction),
            event("step.start", index=0, step={"type": "code_execution_call", "id": "ce_1", "arguments": {}}),
            event("step.delta", index=0, delta=signed),
            event("step.stop", index=0),
            event("interaction.completed", interaction={**interaction, "status": "completed"}),
        )
    )
    result = collect(iter_unified([body], "gemini"))
    assert [(c.id, c.server, c.arguments) for c in result.tool_calls] == [("ce_1", True, {"code": "print(1)"})]
    assert result.signatures == ["CESIG"]
