"""Stopping early releases the connection: the server sees the client go away while it is still streaming.

``/endless`` never ends and ``/stall`` sends one event then goes silent, so the only way the server's handler
ends is the client closing the connection; it records how (EOF or a reset) under a token. Each way of stopping
is checked for every client: ``break``, ``close()`` / ``aclose()``, ``contextlib.aclosing`` and task
cancellation while a read is pending. Afterwards no task is left running.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Iterator
from typing import Any, Callable

import pytest

from helpers.http_server import TIMEOUT, StreamServer
from ssewire.adapters import aiter_response, aiter_response_events, iter_response, iter_response_events

httpx = pytest.importorskip("httpx")
aiohttp = pytest.importorskip("aiohttp")
requests = pytest.importorskip("requests")

_tokens = itertools.count()
DISCONNECT_TIMEOUT = 5.0


@pytest.fixture(scope="module")
def server() -> Iterator[StreamServer]:
    with StreamServer() as srv:
        yield srv


def _token(name: str) -> str:
    return f"{name}-{next(_tokens)}"


def _unified(response: Any) -> Any:
    return iter_response(response, "openai-chat")


def _framed(response: Any) -> Any:
    return iter_response_events(response)


def _aunified(response: Any) -> Any:
    return aiter_response(response, "openai-chat")


def _aframed(response: Any) -> Any:
    return aiter_response_events(response)


# ------------------------------------------------------------------------------------------------------- sync


def _consume_then_fail(events: Any) -> None:
    for _event in events:
        raise KeyError("consumer failed")


async def _aconsume_then_fail(events: Any) -> None:
    async for _event in events:
        raise KeyError("consumer failed")


@contextlib.contextmanager
def _sync_response(client: str, url: str) -> Iterator[Any]:
    """A streaming response that stays open (its context is not exited) until the test is done."""
    if client == "httpx":
        with httpx.Client(timeout=TIMEOUT, verify=False) as hc, hc.stream("GET", url) as response:
            yield response
    else:
        with requests.Session() as session, session.get(url, stream=True, timeout=TIMEOUT) as response:
            yield response


@pytest.mark.parametrize("how", ["break", "close", "raise"])
@pytest.mark.parametrize("make", [_unified, _framed], ids=["unified", "framed"])
@pytest.mark.parametrize("client", ["httpx", "requests"])
def test_sync_stop_early_releases_connection(
    server: StreamServer, client: str, make: Callable[[Any], Any], how: str
) -> None:
    token = _token(f"sync-{client}-{how}")
    with _sync_response(client, server.url("/endless", token=token)) as response:
        if how == "break":
            for _event in make(response):
                break
        elif how == "close":
            gen = make(response)
            next(gen)
            gen.close()
        else:
            with pytest.raises(KeyError, match="consumer failed"):
                _consume_then_fail(make(response))
        assert server.wait_disconnect(token, DISCONNECT_TIMEOUT) is not None
        if client == "httpx":
            assert response.is_closed


@pytest.mark.parametrize("client", ["httpx", "requests", "requests-urllib3-1.26"])
def test_sync_close_delimited_body_is_read_incrementally(
    server: StreamServer, client: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body without chunked encoding is not read whole before the first event (requests' ``iter_content``
    would): the stream stalls after one event, yet that event arrives; also over urllib3 1.26, which has no
    ``read1()`` (what botocore pins on Python 3.9)."""
    if client == "requests-urllib3-1.26":
        urllib3_response = pytest.importorskip("urllib3.response")
        for cls in (urllib3_response.HTTPResponse, getattr(urllib3_response, "BaseHTTPResponse", None)):
            if cls is not None:
                monkeypatch.delattr(cls, "read1", raising=False)
        client = "requests"
    token = _token(f"sync-close-{client}")
    with _sync_response(client, server.url("/stall", token=token, mode="close")) as response:
        gen = iter_response(response, "openai-chat")
        first = next(gen)
        assert first.type == "text_delta"
        assert first.text == "tick 0 "
        gen.close()
        assert server.wait_disconnect(token, DISCONNECT_TIMEOUT) == "eof"


# ------------------------------------------------------------------------------------------------------ async


@contextlib.asynccontextmanager
async def _async_response(client: str, url: str) -> AsyncIterator[Any]:
    if client == "httpx-async":
        async with httpx.AsyncClient(timeout=TIMEOUT, verify=False) as ac, ac.stream("GET", url) as response:
            yield response
    else:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            yield response


@contextlib.asynccontextmanager
async def _aclosing(gen: Any) -> AsyncIterator[Any]:
    """``contextlib.aclosing`` (Python 3.10+)."""
    try:
        yield gen
    finally:
        await gen.aclose()


def _response_closed(client: str, response: Any) -> bool:
    return bool(response.is_closed if client == "httpx-async" else response.closed)


async def _wait_disconnect(server: StreamServer, token: str) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, server.wait_disconnect, token, DISCONNECT_TIMEOUT)


async def _only_current_task_left() -> bool:
    """True once every other task has finished (finalisers of the clients' own generators get a moment)."""
    for _ in range(100):
        if asyncio.all_tasks() == {asyncio.current_task()}:
            return True
        await asyncio.sleep(0.01)
    return False


@pytest.mark.parametrize("how", ["break", "aclosing", "aclose", "raise"])
@pytest.mark.parametrize("make", [_aunified, _aframed], ids=["unified", "framed"])
@pytest.mark.parametrize("client", ["httpx-async", "aiohttp"])
def test_async_stop_early_releases_connection(
    server: StreamServer, client: str, make: Callable[[Any], Any], how: str
) -> None:
    async def main() -> None:
        token = _token(f"async-{client}-{how}")
        async with _async_response(client, server.url("/endless", token=token)) as response:
            if how == "break":  # the generator is finalised by the event loop's asyncgen hook
                async for _event in make(response):
                    break
            elif how == "aclosing":
                async with _aclosing(make(response)) as events:
                    async for _event in events:
                        break
            elif how == "aclose":
                gen = make(response)
                await gen.__anext__()
                await gen.aclose()
            else:
                with pytest.raises(KeyError, match="consumer failed"):
                    await _aconsume_then_fail(make(response))
            assert await _wait_disconnect(server, token) is not None
            assert _response_closed(client, response)
        assert await _only_current_task_left()

    asyncio.run(main())


@pytest.mark.parametrize("make", [_aunified, _aframed], ids=["unified", "framed"])
@pytest.mark.parametrize("client", ["httpx-async", "aiohttp"])
def test_task_cancellation_during_a_pending_read_releases_connection(
    server: StreamServer, client: str, make: Callable[[Any], Any]
) -> None:
    """The consumer task is cancelled while awaiting the next chunk of a stalled stream."""

    async def main() -> None:
        token = _token(f"cancel-{client}")
        async with _async_response(client, server.url("/stall", token=token)) as response:
            got_first = asyncio.Event()
            seen: list[Any] = []

            async def consume() -> None:
                async for event in make(response):
                    seen.append(event)
                    got_first.set()

            task = asyncio.ensure_future(consume())
            await asyncio.wait_for(got_first.wait(), DISCONNECT_TIMEOUT)
            await asyncio.sleep(0.05)  # the task is now parked in a read that will never complete
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert len(seen) == 1
            assert await _wait_disconnect(server, token) == "eof"
            assert _response_closed(client, response)
        assert await _only_current_task_left()

    asyncio.run(main())


@pytest.mark.parametrize("client", ["httpx-async", "aiohttp"])
def test_wait_for_timeout_around_the_stream_releases_connection(server: StreamServer, client: str) -> None:
    """``asyncio.wait_for`` over a consumer of a stalled stream: the timeout cancels it and frees the socket."""

    async def main() -> None:
        token = _token(f"timeout-{client}")
        async with _async_response(client, server.url("/stall", token=token)) as response:

            async def consume() -> list[Any]:
                return [event async for event in aiter_response(response, "openai-chat")]

            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(consume(), 0.3)
            assert await _wait_disconnect(server, token) == "eof"
        assert await _only_current_task_left()

    asyncio.run(main())
