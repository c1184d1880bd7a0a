"""Calls the translations found hard, read by the official SDKs over real HTTP (a replay server on 127.0.0.1):
argument text that is no JSON object, a call whose name comes after its id, and a Messages source's blocks no
unified event carries (redacted thinking, a server tool's result)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ssewire import Encoder, iter_unified

pytest.importorskip("starlette")
from examples.gateway.replay import ReplayServer

TIMEOUT = 20.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The replay server's URL and the folder it serves as ``files/...``."""
    folder = tmp_path_factory.mktemp("translated")
    with ReplayServer({"files": folder}) as upstream:
        yield upstream.url, folder


def _chat(*deltas: tuple[dict[str, Any], Any]) -> bytes:
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "llama-3.3-70b"}
    chunks = [{**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]} for delta, finish in deltas]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _messages_event(obj: dict[str, Any]) -> bytes:
    return f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n".encode()


def _translate(source: bytes, provider: str, to: str) -> tuple[bytes, dict[str, int]]:
    encoder = Encoder(to)
    body = b"".join(encoder.encode(event) for event in iter_unified([source], provider)) + encoder.close()  # type: ignore[arg-type]
    return body, dict(encoder.dropped)


def _serve(served: tuple[str, Path], name: str, body: bytes) -> tuple[str, dict[str, str]]:
    url, folder = served
    (folder / name).write_bytes(body)
    return url, {"file": f"files/{name}", "pause": "0"}


def _anthropic_final(served: tuple[str, Path], name: str, body: bytes) -> Any:
    anthropic = pytest.importorskip("anthropic")
    url, query = _serve(served, name, body)
    with anthropic.Anthropic(base_url=url, api_key="x", max_retries=0, timeout=TIMEOUT) as client:  # noqa: SIM117
        with client.messages.stream(
            model="m", max_tokens=64, messages=[{"role": "user", "content": "hi"}], extra_query=query
        ) as stream:
            return stream.get_final_message()


def _openai_chat_final(served: tuple[str, Path], name: str, body: bytes) -> Any:
    openai = pytest.importorskip("openai")
    url, query = _serve(served, name, body)
    with openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=TIMEOUT) as client:  # noqa: SIM117
        with client.chat.completions.stream(
            model="m", messages=[{"role": "user", "content": "hi"}], extra_query=query
        ) as stream:
            return stream.get_final_completion()


@pytest.mark.parametrize("arguments", ["{'city': 'Paris'}", '{"city": "Par', "print('hi')"])
def test_a_call_whose_arguments_are_no_json_object_is_never_a_messages_call_to_run(
    served: tuple[str, Path], arguments: str
) -> None:
    """The anthropic SDK parses a call's input as it comes: text that is no JSON document would make it raise
    mid-stream (the whole answer lost), cut JSON would read as a complete call with ``input: {}``. The call is
    written as far as its text is a JSON document's start and never closed: the stream ends with the error for
    unfinished calls, which the SDK raises as the API's own error; ``dropped`` counts the arguments."""
    anthropic = pytest.importorskip("anthropic")
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    source = _chat(
        ({"role": "assistant", "content": "Checking."}, None), ({"tool_calls": [call]}, None), ({}, "tool_calls")
    )
    body, dropped = _translate(source, "openai-chat", "anthropic")
    assert dropped.get("arguments") == 1
    with pytest.raises(anthropic.APIStatusError) as raised:
        _anthropic_final(served, f"bad-args-{abs(hash(arguments))}.sse", body)
    assert "incomplete_tool_calls" in str(raised.value)


@pytest.mark.parametrize(
    ("fragments", "want"),
    [(['{"city": ', '"Paris"}'], {"city": "Paris"}), (["\n ", "{", '"a', '":1}'], {"a": 1}), (["  "], {})],
    ids=["two", "tiny-after-whitespace", "whitespace-only"],
)
def test_valid_arguments_in_fragments_reach_the_messages_client_whole(
    served: tuple[str, Path], fragments: list[str], want: dict[str, Any]
) -> None:
    calls: list[dict[str, Any]] = [
        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}},
        *({"index": 0, "function": {"arguments": fragment}} for fragment in fragments),
    ]
    source = _chat(*[({"tool_calls": [c]}, None) for c in calls], ({}, "tool_calls"))
    body, dropped = _translate(source, "openai-chat", "anthropic")
    final = _anthropic_final(served, f"good-args-{len(fragments)}.sse", body)
    assert dropped == {}
    assert [(b.type, b.name, b.input) for b in final.content] == [("tool_use", "get_weather", want)]


@pytest.mark.parametrize("to", ["openai-chat", "anthropic"])
def test_a_call_whose_name_comes_after_its_id_is_written_with_its_name(served: tuple[str, Path], to: str) -> None:
    """Some OpenAI-compatible servers send a call's id first and its name in the next fragment: the call opens
    on the target when its name is known (its fragments held until then)."""
    calls = [
        {"index": 0, "id": "call_1", "type": "function", "function": {"arguments": ""}},
        {"index": 0, "function": {"name": "get_weather", "arguments": '{"city":'}},
        {"index": 0, "function": {"arguments": '"Paris"}'}},
    ]
    source = _chat(*[({"tool_calls": [c]}, None) for c in calls], ({}, "tool_calls"))
    body, dropped = _translate(source, "openai-chat", to)
    assert dropped == {}
    if to == "anthropic":
        final = _anthropic_final(served, "late-name.sse", body)
        assert [(b.id, b.name, b.input) for b in final.content] == [("call_1", "get_weather", {"city": "Paris"})]
        return
    completion = _openai_chat_final(served, "late-name-chat.sse", body)
    (made,) = completion.choices[0].message.tool_calls or []
    assert (made.id, made.function.name, json.loads(made.function.arguments)) == (
        "call_1",
        "get_weather",
        {"city": "Paris"},
    )


def test_parallel_calls_one_waiting_for_its_name_are_indexed_in_the_order_they_open(served: tuple[str, Path]) -> None:
    """Call A comes without its name, call B with one, then A's name: the Chat target writes B as index 0 and A
    as index 1 (an index written before a lower one made the SDK's accumulator raise IndexError)."""
    calls = [
        {"index": 0, "id": "call_A", "type": "function", "function": {"arguments": ""}},
        {"index": 1, "id": "call_B", "type": "function", "function": {"name": "fb", "arguments": '{"b":2}'}},
        {"index": 0, "function": {"name": "fa", "arguments": '{"a":1}'}},
    ]
    source = _chat(*[({"tool_calls": [c]}, None) for c in calls], ({}, "tool_calls"))
    body, dropped = _translate(source, "openai-chat", "openai-chat")
    assert dropped == {}
    completion = _openai_chat_final(served, "parallel-late-name.sse", body)
    made = [(c.id, c.function.name, c.function.arguments) for c in completion.choices[0].message.tool_calls or []]
    assert sorted(made) == [("call_A", "fa", '{"a":1}'), ("call_B", "fb", '{"b":2}')]


def test_a_messages_sources_redacted_thinking_and_server_tool_results_reach_a_messages_client(
    served: tuple[str, Path],
) -> None:
    """No unified event carries them, but a Messages client must send them back as they came (the opaque
    redacted thinking; the search results a ``pause_turn`` continuation needs): the Messages target passes them
    on as their own blocks."""
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
    result = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {"type": "web_search_result", "title": "X", "url": "https://x.example", "encrypted_content": "Eq0B"}
        ],
    }
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": [], "usage": usage}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": redacted},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": search},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"query": "x"}'},
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": result},
        {"type": "content_block_stop", "index": 2},
        {"type": "content_block_start", "index": 3, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "Found it."}},
        {"type": "content_block_stop", "index": 3},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 20}},
        {"type": "message_stop"},
    ]
    source = b"".join(map(_messages_event, events))
    body, dropped = _translate(source, "anthropic", "anthropic")
    assert dropped == {}
    got = [block.model_dump(exclude_none=True) for block in _anthropic_final(served, "blocks.sse", body).content]
    want = [block.model_dump(exclude_none=True) for block in _anthropic_final(served, "source.sse", source).content]
    assert got == want
    assert [b["type"] for b in got] == ["redacted_thinking", "server_tool_use", "web_search_tool_result", "text"]


@pytest.mark.parametrize("provider", ["anthropic", "xai", "auto"])
def test_a_messages_stream_read_by_any_reader_of_it_keeps_its_result_blocks(provider: str) -> None:
    """xAI's reader (and a normaliser of the caller's own) reads Messages streams too: their result blocks pass on
    as the anthropic reader's do."""
    from helpers import CORPUS
    from ssewire import transcode

    def results(stream: bytes) -> list[Any]:
        starts = [json.loads(line[6:]) for line in stream.split(b"\n") if line.startswith(b"data: {")]
        blocks = [event["content_block"] for event in starts if event.get("type") == "content_block_start"]
        return [block for block in blocks if block["type"].endswith("_tool_result")]

    for name in ("web-search-citations.sse", "pause-turn-web-search.sse"):  # (kilobytes of results, not all ASCII)
        body = (CORPUS / "anthropic" / name).read_bytes()
        out = b"".join(transcode([body], provider, "anthropic"))  # type: ignore[arg-type]
        assert results(out) == results(body) and len(results(body)) >= 2, name
    assert out.count(b'"type":"web_search_tool_result"') == len(results(body))
