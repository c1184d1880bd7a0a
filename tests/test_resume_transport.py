"""iter_resumable / aiter_resumable over a real local server that drops the connection mid tool call: each
client's own transport error reconnects by default, the replayed events are dropped, and the cut call is closed
once, by the resumed connection, with its whole arguments."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any, Optional

import pytest

from helpers import FIXTURES
from helpers.http_server import StreamServer
from ssewire import Unified, collect, iter_unified
from ssewire.resume import ResumeCursor
from ssewire.stream import aiter_resumable, iter_resumable

STREAM = FIXTURES / "openai-responses-tool-call.sse"
BODY = STREAM.read_bytes()
# inside the second argument delta: the connection drops while the call is open
CUT = BODY.index(b"response.function_call_arguments.delta", BODY.index(b"response.function_call_arguments.delta") + 1)


@pytest.fixture(scope="module")
def server() -> Iterator[StreamServer]:
    with StreamServer() as srv:
        yield srv


def _url(server: StreamServer, token: str, abort: bool) -> str:
    query: dict[str, Any] = {"cut": CUT, "once": token, "maxchunk": 200, "seed": 3}
    if abort:
        query["abort"] = 1
    return server.url(f"/file/fixtures/{STREAM.name}", **query)


def _dicts(events: list[Unified]) -> list[dict[str, Any]]:
    return [e.to_dict(with_raw=True) for e in events]


def _check(events: list[Unified], opened: list[Optional[ResumeCursor]]) -> None:
    assert len(opened) == 2 and opened[0] is None
    assert opened[1] is not None and opened[1].sequence is not None
    assert _dicts(events) == _dicts(list(iter_unified([BODY], "openai")))  # every event exactly once
    dones = [e for e in events if e.type == "tool_call_done"]
    assert len(dones) == 1
    assert dones[0].arguments == json.loads(dones[0].arguments_raw or "null")
    result = collect(events)
    assert result.error is None and result.incomplete_tool_calls == []
    assert [c.name for c in result.client_tool_calls] == ["get_weather"]


def _sync_opener(client: str, url: str, opened: list[Optional[ResumeCursor]]) -> Any:
    if client == "httpx":
        import httpx

        def open_httpx(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
            opened.append(cursor)
            with httpx.Client(timeout=10) as hc, hc.stream("GET", url) as response:
                yield from response.iter_bytes()

        return open_httpx
    import requests

    def open_requests(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        opened.append(cursor)
        with requests.get(url, stream=True, timeout=10) as response:
            yield from response.iter_content(chunk_size=None)

    return open_requests


@pytest.mark.parametrize("abort", [False, True], ids=["eof-mid-chunk", "tcp-reset"])
@pytest.mark.parametrize("client", ["httpx", "requests"])
def test_sync_clients_reconnect_on_their_own_transport_errors(server: StreamServer, client: str, abort: bool) -> None:
    pytest.importorskip(client)
    opened: list[Optional[ResumeCursor]] = []
    url = _url(server, f"sync-{client}-{abort}", abort)
    events = list(iter_resumable(_sync_opener(client, url, opened), "openai"))
    _check(events, opened)


@pytest.mark.parametrize("abort", [False, True], ids=["eof-mid-chunk", "tcp-reset"])
@pytest.mark.parametrize("client", ["httpx-async", "aiohttp"])
def test_async_clients_reconnect_on_their_own_transport_errors(server: StreamServer, client: str, abort: bool) -> None:
    pytest.importorskip("httpx" if client == "httpx-async" else client)
    opened: list[Optional[ResumeCursor]] = []
    url = _url(server, f"async-{client}-{abort}", abort)

    async def open_httpx(cursor: Optional[ResumeCursor]) -> AsyncIterator[bytes]:
        import httpx

        opened.append(cursor)
        async with httpx.AsyncClient(timeout=10) as ac, ac.stream("GET", url) as response:
            async for chunk in response.aiter_bytes():
                yield chunk

    async def open_aiohttp(cursor: Optional[ResumeCursor]) -> AsyncIterator[bytes]:
        import aiohttp

        opened.append(cursor)
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            async for chunk in response.content.iter_any():
                yield chunk

    async def run() -> list[Unified]:
        opener = open_httpx if client == "httpx-async" else open_aiohttp
        return [e async for e in aiter_resumable(opener, "openai")]

    _check(asyncio.run(run()), opened)


def test_an_error_that_is_not_a_transport_error_propagates() -> None:
    def broken(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        yield BODY[:CUT]
        raise KeyError("a bug in the caller's code")

    with pytest.raises(KeyError):
        list(iter_resumable(broken, "openai"))


def test_reconnect_on_names_the_exception_types_when_given() -> None:
    calls: list[Optional[ResumeCursor]] = []

    def opener(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        calls.append(cursor)
        if cursor is None:
            yield BODY[:CUT]
            raise LookupError("dropped")
        yield BODY

    events = list(iter_resumable(opener, "openai", reconnect_on=(LookupError,)))
    assert len(calls) == 2
    assert [e.type for e in events].count("tool_call_done") == 1
    with pytest.raises(ConnectionError):  # not named: propagates although it is a transport error
        list(iter_resumable(lambda c: _raise_after(BODY[:CUT]), "openai", reconnect_on=(LookupError,)))


def _raise_after(data: bytes) -> Iterator[bytes]:
    yield data
    raise ConnectionResetError("reset")


def test_a_stream_that_cannot_resume_reports_the_cut_call_as_incomplete() -> None:
    body = b"".join(
        b"data: " + json.dumps(c).encode() + b"\n\n"
        for c in [
            {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": "call_1", "function": {"name": "rm", "arguments": '{"path": "/tm'}}]}}]},
        ]
    )  # fmt: skip

    def opener(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        return _raise_after(body)

    events = list(iter_resumable(opener, "openai-chat"))  # chat streams have no cursor
    assert "tool_call_done" not in [e.type for e in events]
    error = events[-1].error
    assert error is not None and error["type"] == "stream_truncated"
    assert error["incomplete_tool_calls"] == [{"id": "call_1", "name": "rm", "arguments_raw": '{"path": "/tm'}]


@pytest.mark.parametrize("twin", ["sync", "async"])
def test_giving_up_after_a_drop_ends_as_the_adapters_end_a_lost_connection(twin: str) -> None:
    """A connection that fails before its first event is a cut stream naming the error (never ``not_a_stream``,
    which says the server sent no stream); an event the drop cut in half is discarded, never flushed as ``raw``."""
    whole = b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\n'
    cut = whole + b'data: {"id":"c","choices":[{"index":0,"delta":{"content":" wor'

    def refused(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        raise ConnectionRefusedError(111, "Connection refused")
        yield b""  # pragma: no cover  (a generator)

    def cut_mid_event(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        return _raise_after(cut)

    def run(opener: Any) -> list[Unified]:
        if twin == "sync":
            return list(iter_resumable(opener, "openai-chat"))

        async def aopen(cursor: Optional[ResumeCursor]) -> AsyncIterator[bytes]:
            for chunk in opener(cursor):
                yield chunk

        async def read() -> list[Unified]:
            return [e async for e in aiter_resumable(aopen, "openai-chat")]

        return asyncio.run(read())

    events = run(refused)
    assert [e.type for e in events] == ["error"]
    assert events[0].error is not None and events[0].error["type"] == "stream_truncated"
    assert "ConnectionRefusedError" in events[0].error["message"]
    events = run(cut_mid_event)
    assert [(e.type, e.text) for e in events[:-1]] == [("text_delta", "Hello")]
    assert events[-1].error is not None and events[-1].error["type"] == "stream_truncated"
    assert "ConnectionResetError" in events[-1].error["message"]


def test_an_aiohttp_status_error_is_raised_never_retried(server: StreamServer) -> None:
    aiohttp = pytest.importorskip("aiohttp")
    opened: list[Optional[ResumeCursor]] = []

    async def open_stream(cursor: Optional[ResumeCursor]) -> AsyncIterator[bytes]:
        opened.append(cursor)
        async with (
            aiohttp.ClientSession(raise_for_status=True) as session,
            session.get(server.url("/status/401")) as response,
        ):
            async for chunk in response.content.iter_any():
                yield chunk

    async def run() -> list[Unified]:
        return [e async for e in aiter_resumable(open_stream, "openai")]

    with pytest.raises(aiohttp.ClientResponseError):
        asyncio.run(run())
    assert opened == [None]


def test_closing_the_async_iterator_closes_the_connections_iterator_at_once() -> None:
    closed: list[str] = []

    async def open_stream(cursor: Optional[ResumeCursor]) -> AsyncIterator[bytes]:
        try:
            yield BODY[:CUT]
            await asyncio.sleep(10)  # pragma: no cover
        finally:
            closed.append("connection")

    async def run() -> None:
        events = aiter_resumable(open_stream, "openai")
        async for _ in events:
            break
        await events.aclose()  # type: ignore[attr-defined]
        assert closed == ["connection"]  # before the loop finalises anything

    asyncio.run(run())
