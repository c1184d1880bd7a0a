"""The adapters' contract at the edges: HTTP errors, framing from Content-Type, content encoding, dropped
connections in framed iteration, unsupported responses, backpressure, and no client import by ssewire."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from helpers.http_server import CLIENTS, TIMEOUT, StreamServer, fetch, synthetic_text
from ssewire import ResponseStatusError, StreamTruncated, collect
from ssewire.adapters import (
    ERROR_BODY_LIMIT,
    aiter_response,
    aiter_response_events,
    iter_response,
    iter_response_events,
)
from ssewire.framing import framing_for_content_type

httpx = pytest.importorskip("httpx")  # typed as Any: the classes below subclass httpx types
aiohttp = pytest.importorskip("aiohttp")
requests = pytest.importorskip("requests")

GEMINI_ARRAY = json.dumps(
    [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello, "}]}, "index": 0}]},
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "world"}]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 2, "candidatesTokenCount": 2, "totalTokenCount": 4},
        },
    ],
    indent=2,
).encode()


@pytest.fixture(scope="module")
def server() -> Iterator[StreamServer]:
    with StreamServer() as srv:
        srv.register("gemini-array", GEMINI_ARRAY, "application/json; charset=UTF-8")
        srv.register("not-an-array", b'{"error": "this is not a stream"}', "application/json")
        srv.register("plain-sse", b'data: {"choices": [{"index": 0, "delta": {"content": "hi"}}]}\n\n', "text/plain")
        yield srv


# ------------------------------------------------------------------------------------------------- HTTP errors


@pytest.mark.parametrize("framed", [False, True], ids=["unified", "framed"])
@pytest.mark.parametrize("client", CLIENTS)
def test_http_error_raises_with_status_and_body(server: StreamServer, client: str, framed: bool) -> None:
    with pytest.raises(ResponseStatusError) as info:
        fetch(client, server.url("/status/429", seed=1, maxchunk=7), None if framed else "anthropic")
    assert info.value.status_code == 429
    assert json.loads(info.value.body) == {"error": {"type": "test_error", "code": 429, "message": "rate limited"}}
    assert "429" in str(info.value)


@pytest.mark.parametrize("client", CLIENTS)
def test_http_error_body_is_read_with_a_bound(server: StreamServer, client: str) -> None:
    with pytest.raises(ResponseStatusError) as info:
        fetch(client, server.url("/status/500", size=1_000_000, maxchunk=65536, pause=0), "openai")
    assert info.value.status_code == 500
    assert len(info.value.body) == ERROR_BODY_LIMIT
    assert info.value.body.startswith('{"error": {"type": "test_error"')


@pytest.mark.parametrize("client", CLIENTS)
def test_http_error_body_is_decoded_after_content_encoding(server: StreamServer, client: str) -> None:
    with pytest.raises(ResponseStatusError) as info:
        fetch(client, server.url("/status/503", gzip=1), "openai")
    assert json.loads(info.value.body)["error"]["code"] == 503


def test_http_error_closes_the_response(server: StreamServer) -> None:
    with httpx.Client(timeout=TIMEOUT, verify=False) as client, client.stream("GET", server.url("/status/400")) as r:
        with pytest.raises(ResponseStatusError):
            next(iter_response(r, "openai"))
        assert r.is_closed


# ----------------------------------------------------------------------------------------------------- framing


def test_framing_for_content_type() -> None:
    assert framing_for_content_type("text/event-stream") == "sse"
    assert framing_for_content_type("text/event-stream; charset=utf-8") == "sse"
    assert framing_for_content_type("application/json") == "auto"  # an array or JSON lines: the first bytes tell
    assert framing_for_content_type("Application/JSON; charset=UTF-8") == "auto"
    assert framing_for_content_type("application/x-ndjson") == "ndjson"
    assert framing_for_content_type("application/jsonl") == "ndjson"
    assert framing_for_content_type("text/plain") == "sse"
    assert framing_for_content_type("") == "sse"
    assert framing_for_content_type(None) == "sse"


@pytest.mark.parametrize("client", CLIENTS)
def test_json_content_type_means_gemini_array(server: StreamServer, client: str) -> None:
    events = fetch(client, server.url("/body/gemini-array", seed=3, maxchunk=5), "gemini")
    result = collect(events)
    assert result.text == "Hello, world"
    assert result.stop_reason == "end"
    framed = fetch(client, server.url("/body/gemini-array", seed=4, maxchunk=9))
    assert [e.json()["candidates"][0]["content"]["parts"][0]["text"] for e in framed] == ["Hello, ", "world"]


@pytest.mark.parametrize("client", CLIENTS)
def test_unknown_content_type_means_sse_and_framing_argument_wins(server: StreamServer, client: str) -> None:
    assert collect(fetch(client, server.url("/body/plain-sse"), "openai-chat")).text == "hi"
    events = fetch(client, server.url("/body/gemini-array", ctype="text/event-stream"), "gemini", "json_array")
    assert collect(events).text == "Hello, world"


@pytest.mark.parametrize("client", CLIENTS)
def test_a_json_object_body_is_read_as_one_json_line_and_its_error_reported(server: StreamServer, client: str) -> None:
    # application/json says JSON, not how it streams: the first byte ("{", not "[") makes it JSON lines
    events = fetch(client, server.url("/body/not-an-array"), "gemini")
    assert [(e.type, e.error) for e in events] == [("error", {"type": "error", "message": "this is not a stream"})]


@pytest.mark.parametrize("mode", ["chunked", "close"])
@pytest.mark.parametrize("client", CLIENTS)
def test_gzip_body_is_decoded(server: StreamServer, client: str, mode: str) -> None:
    url = server.url("/synthetic", events=40, size=300, gzip=1, seed=5, mode=mode)
    result = collect(fetch(client, url, "openai-chat"))
    assert result.text == synthetic_text(40, 300)
    assert result.stop_reason == "end"


# ------------------------------------------------------------------------------------------ dropped connections


@pytest.mark.parametrize("mode", ["chunked", "length"])
@pytest.mark.parametrize("client", CLIENTS)
def test_framed_iteration_raises_stream_truncated_on_a_dropped_connection(
    server: StreamServer, client: str, mode: str
) -> None:
    with pytest.raises(StreamTruncated, match="connection lost") as info:
        fetch(client, server.url("/synthetic", events=30, size=100, cut=2000, mode=mode))
    assert info.value.__cause__ is not None  # the client's own transport error


@pytest.mark.parametrize("client", CLIENTS)
def test_reset_connection_ends_with_truncation_event(server: StreamServer, client: str) -> None:
    events = fetch(client, server.url("/synthetic", events=30, size=100, cut=2500, abort=1), "openai-chat")
    assert events[-1].type == "error"
    assert events[-1].error is not None
    assert events[-1].error["type"] == "stream_truncated"
    assert "connection lost" in events[-1].error["message"]
    assert synthetic_text(30, 100).startswith(collect(events).text)


@pytest.mark.parametrize("client", CLIENTS)
def test_event_cut_in_half_is_discarded_not_flushed(server: StreamServer, client: str) -> None:
    """The half-received event before a dropped connection is not handed to the normaliser as data."""
    body_start = len(b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"synthetic","choices":[')
    events = fetch(client, server.url("/synthetic", events=3, size=50, cut=body_start + 30), "openai-chat")
    assert [e.type for e in events] == ["error"]


# --------------------------------------------------------------------------------------- unsupported responses


def test_unsupported_response_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unsupported response type"):
        next(iter_response(object(), "openai"))  # type: ignore[arg-type]


def test_sync_and_async_clients_are_not_mixed(server: StreamServer) -> None:
    async def first_async(response: Any) -> Any:
        return await aiter_response(response, "openai-chat").__anext__()

    response = requests.get(server.url("/body/plain-sse"), stream=True, timeout=TIMEOUT)
    with pytest.raises(TypeError, match="synchronous"):
        asyncio.run(first_async(response))
    response.close()

    async def main() -> None:
        async with aiohttp.ClientSession() as session, session.get(server.url("/body/plain-sse")) as response:
            with pytest.raises(TypeError, match="asynchronous"):
                next(iter_response(response, "openai-chat"))

    asyncio.run(main())


def test_importing_ssewire_imports_no_http_client() -> None:
    code = (
        "import sys, ssewire, ssewire.adapters, ssewire.stream;"
        "print(sorted(m for m in ('httpx', 'aiohttp', 'requests', 'urllib3') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ------------------------------------------------------------------------------------------------ backpressure


class _CountingStream(httpx.SyncByteStream):  # type: ignore[misc,name-defined]
    """A body of ``n`` one-event chunks that counts how many chunks were pulled."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.pulled = 0

    def __iter__(self) -> Iterator[bytes]:
        for i in range(self.n):
            self.pulled += 1
            yield b'data: {"choices": [{"index": 0, "delta": {"content": "%d "}}]}\n\n' % i


class _AsyncCountingStream(httpx.AsyncByteStream):  # type: ignore[misc,name-defined]
    def __init__(self, n: int) -> None:
        self.n = n
        self.pulled = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for i in range(self.n):
            self.pulled += 1
            yield b'data: {"choices": [{"index": 0, "delta": {"content": "%d "}}]}\n\n' % i


def test_backpressure_at_most_one_chunk_ahead() -> None:
    stream = _CountingStream(50)
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)
    for taken, event in enumerate(iter_response(response, "openai-chat"), 1):
        if event.type == "text_delta":
            assert stream.pulled == taken
    framed = _CountingStream(50)
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=framed)
    for taken, _event in enumerate(iter_response_events(response), 1):
        assert framed.pulled == taken


def test_async_backpressure_at_most_one_chunk_ahead() -> None:
    async def main() -> None:
        stream = _AsyncCountingStream(50)
        response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)
        taken = 0
        async for event in aiter_response(response, "openai-chat"):
            if event.type == "text_delta":
                taken += 1
                assert stream.pulled == taken
        framed = _AsyncCountingStream(50)
        response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=framed)
        taken = 0
        async for _event in aiter_response_events(response):
            taken += 1
            assert framed.pulled == taken

    asyncio.run(main())


def test_response_from_a_subclass_or_fork_is_recognised() -> None:
    class MyResponse(httpx.Response):  # type: ignore[misc,name-defined]
        pass

    response = MyResponse(200, headers={"content-type": "text/event-stream"}, stream=_CountingStream(3))
    assert collect(iter_response(response, "openai-chat")).text == "0 1 2 "


def test_already_read_response_is_parsed_from_memory(server: StreamServer) -> None:
    response = requests.get(server.url("/synthetic", events=5, size=10), timeout=TIMEOUT)  # stream=False
    assert collect(iter_response(response, "openai-chat")).text == synthetic_text(5, 10)
    response = httpx.get(server.url("/synthetic", events=5, size=10), timeout=TIMEOUT)
    assert collect(iter_response(response, "openai-chat")).text == synthetic_text(5, 10)


@pytest.mark.parametrize("mode", ["close", "length"])
def test_requests_over_urllib3_without_read1_reads_incrementally_and_sees_drops(
    server: StreamServer, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """urllib3 1.26 (what botocore pins on Python 3.9) has no ``read1()``: a body without chunked encoding is then
    read through the ``http.client`` response underneath, still as it arrives, and a cut before the declared
    length is still a dropped connection."""
    urllib3_response = pytest.importorskip("urllib3.response")
    for cls in (urllib3_response.HTTPResponse, getattr(urllib3_response, "BaseHTTPResponse", None)):
        if cls is not None:
            monkeypatch.delattr(cls, "read1", raising=False)
    assert not hasattr(urllib3_response.HTTPResponse, "read1")
    events = fetch("requests", server.url("/synthetic", events=30, size=100, mode=mode), "openai-chat")
    assert collect(events).text == synthetic_text(30, 100)
    cut = fetch("requests", server.url("/synthetic", events=30, size=100, cut=2500, mode=mode), "openai-chat")
    assert cut[-1].error is not None and cut[-1].error["type"] == "stream_truncated"
    if mode == "length":
        assert "connection lost" in cut[-1].error["message"]


@pytest.mark.parametrize("mode", ["chunked", "length"])
@pytest.mark.parametrize("client", CLIENTS)
def test_a_connection_lost_before_the_first_event_is_a_truncation(server: StreamServer, client: str, mode: str) -> None:
    # the headers came, then the connection dropped: no verdict on what the body was (not_a_stream would tell a
    # retry loop the upstream sent something else), a truncation naming the transport error
    for cut in (0, 1):
        events = fetch(client, server.url("/synthetic", events=30, size=100, cut=cut, mode=mode), "openai-chat")
        error = events[-1].error
        assert events[-1].type == "error" and error is not None, (cut, events)
        assert error["type"] == "stream_truncated" and error["incomplete_tool_calls"] == [], error
        assert "connection lost before its first event" in error["message"], error


@pytest.mark.parametrize("mode", ["chunked", "length"])
def test_requests_raises_its_own_error_for_a_corrupt_compressed_body(server: StreamServer, mode: str) -> None:
    # what requests' own iter_content raises, on both of the adapter's reading paths (read1() for a body with a
    # Content-Length sees urllib3's DecodeError)
    url = server.url("/synthetic", events=30, size=100, gzip=1, corrupt=1, mode=mode)
    decoding_error = requests.exceptions.ContentDecodingError
    with requests.get(url, stream=True, timeout=TIMEOUT) as response, pytest.raises(decoding_error):
        b"".join(response.iter_content(None))
    with requests.get(url, stream=True, timeout=TIMEOUT) as response, pytest.raises(decoding_error):
        list(iter_response(response, "openai-chat"))


def test_an_aiohttp_total_timeout_mid_body_ends_in_a_truncation(server: StreamServer) -> None:
    # aiohttp's ClientTimeout(total=...) raises asyncio's TimeoutError (no ClientError): a transport error too
    async def read() -> list[Any]:
        timeout = aiohttp.ClientTimeout(total=0.5)
        url = server.url("/stall", events=2, token="total-timeout")
        async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url) as response:
            return [event async for event in aiter_response(response, "openai-chat")]

    events = asyncio.run(read())
    assert collect(events).text == "tick 0 tick 1 "
    error = events[-1].error
    assert events[-1].type == "error" and error is not None and error["type"] == "stream_truncated"
    assert "connection lost" in error["message"] and "TimeoutError" in error["message"]
