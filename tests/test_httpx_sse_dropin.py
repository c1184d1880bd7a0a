"""``ssewire.httpx_sse`` is a drop-in for httpx-sse 0.4: httpx-sse's documented examples run unchanged apart from
the import, over real HTTP; every stream gives the same events as httpx-sse itself where httpx-sse follows the
SSE specification, and the documented differences where it does not."""

# The examples from httpx-sse's README are kept verbatim, nested `with` blocks included.
# ruff: noqa: SIM117

from __future__ import annotations

import asyncio
import functools
import itertools
import json
from collections.abc import Iterator
from typing import Any, Callable, Optional

import pytest

from helpers import CORPUS, load_manifest
from helpers.http_server import TIMEOUT, StreamServer

httpx = pytest.importorskip("httpx")

from ssewire.httpx_sse import EventSource, ServerSentEvent, SSEError, aconnect_sse, connect_sse  # noqa: E402

reference: Any
try:
    import httpx_sse as reference
except ImportError:  # the comparisons with httpx-sse itself are skipped
    reference = None

needs_reference = pytest.mark.skipif(reference is None, reason="httpx-sse is not installed")
SSE_CAPTURES = [c for c in load_manifest() if c["framing"].startswith("sse")]
_tokens = itertools.count()

# What sse-starlette sends for the README's `numbers(1, 5)` server: CRLF line ends and ping comments.
NUMBERS = b"".join(b"data: %d\r\n\r\n: ping - 2025-01-01 00:00:0%d\r\n\r\n" % (i, i) for i in range(1, 6))

# Streams on which httpx-sse follows the specification: both must give exactly the same events.
SPEC_STREAMS = {
    "lf": b"event: a\ndata: 1\n\ndata: 2\ndata: 3\n\n",
    "crlf": b"id: 7\r\nevent: b\r\ndata: x\r\n\r\ndata: y\r\n\r\n",
    "cr": b"data: one\r\rdata: two\r\r",
    "comments-and-unknown-fields": b": hi\nfoo: bar\ndata: d\n\n:keepalive\n\n",
    "ids": b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: x\x00y\ndata: d\n\n",
    "no-space-after-colon": b"data:tight\nevent:e\n\n",
    "field-without-colon": b"data\n\ndata\ndata\n\n",
    "retry-per-event": b"retry: 100\ndata: a\n\ndata: b\n\nretry: 250\ndata: c\n\nretry: x\ndata: d\n\n",
    "utf8": "data: héllo 🌍 — 中文\n\ndata: \u2028 inside\n\n".encode(),
    "empty-data": b"data:\n\ndata\n\n",
    "no-final-blank-line": b"data: kept\n\ndata: dropped",
}

# Streams on which httpx-sse departs from the specification: (body, content type, ours, httpx-sse's).
DEVIATIONS: dict[str, tuple[bytes, str, list[tuple[str, str, str, Optional[int]]]]] = {
    "blocks-without-data": (
        b"event: ping\n\nid: 5\n\nretry: 300\n\ndata: x\n\n",
        "text/event-stream",
        [("message", "x", "5", 300)],
    ),
    "leading-bom": (
        b"\xef\xbb\xbfdata: first\n\ndata: second\n\n",
        "text/event-stream",
        [("message", "first", "", None), ("message", "second", "", None)],
    ),
    "charset-ignored": (
        "data: café\n\n".encode(),
        "text/event-stream; charset=latin-1",
        [("message", "café", "", None)],
    ),
    "repeated-retry": (
        b"retry: 100\ndata: a\n\nretry: 100\ndata: b\n\n",
        "text/event-stream",
        [("message", "a", "", 100), ("message", "b", "", None)],
    ),
}


@pytest.fixture(scope="module")
def server() -> Iterator[StreamServer]:
    with StreamServer() as srv:
        srv.register("numbers", NUMBERS, "text/event-stream; charset=utf-8")
        srv.register("json", b'{"not": "sse"}', "application/json")
        for name, body in SPEC_STREAMS.items():
            srv.register(f"spec-{name}", body)
        for name, (body, ctype, _) in DEVIATIONS.items():
            srv.register(f"dev-{name}", body, ctype)
        yield srv


def _tuples(events: Any) -> list[tuple[str, str, str, Optional[int]]]:
    return [(e.event, e.data, e.id, e.retry) for e in events]


def _read_sync(connect: Callable[..., Any], url: str) -> list[tuple[str, str, str, Optional[int]]]:
    with httpx.Client(timeout=TIMEOUT, verify=False) as client, connect(client, "GET", url) as event_source:
        return _tuples(event_source.iter_sse())


def _read_async(connect: Callable[..., Any], url: str) -> list[tuple[str, str, str, Optional[int]]]:
    async def main() -> list[tuple[str, str, str, Optional[int]]]:
        async with httpx.AsyncClient(timeout=TIMEOUT, verify=False) as client:
            async with connect(client, "GET", url) as event_source:
                return _tuples([sse async for sse in event_source.aiter_sse()])

    return asyncio.run(main())


# ------------------------------------------------------------------------------ httpx-sse's documented examples


def test_readme_quickstart(server: StreamServer, capsys: pytest.CaptureFixture[str]) -> None:
    url = server.url("/body/numbers", seed=1, maxchunk=3)
    # --- the README's quickstart, verbatim apart from the import and the URL
    with httpx.Client() as client, connect_sse(client, "GET", url) as event_source:
        for sse in event_source.iter_sse():
            print(sse.event, sse.data, sse.id, sse.retry)
    # ---
    assert capsys.readouterr().out.splitlines() == [f"message {i}  None" for i in range(1, 6)]


def test_readme_calling_into_python_web_apps() -> None:
    """The README's ASGI example; the app is written out by hand (the bytes sse-starlette sends) instead of
    using starlette and sse-starlette."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        assert scope["path"] == "/sse/auth/"
        headers = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-store")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        body = b'event: login\r\ndata: {"user_id": "4135"}\r\n\r\n'
        await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    # --- the README's example, verbatim apart from the import
    async def main():  # type: ignore[no-untyped-def]
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app)) as client:
            async with aconnect_sse(client, "GET", "http://localhost:8000/sse/auth/") as event_source:
                events = [sse async for sse in event_source.aiter_sse()]
                (sse,) = events
                assert sse.event == "login"
                assert sse.json() == {"user_id": "4135"}

    asyncio.run(main())
    # ---


def _retry(on: type[BaseException], attempts: int = 5) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A stand-in for ``stamina.retry`` that, like it, retries a generator function on ``on``."""

    def decorate(fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
            for attempt in range(attempts):
                try:
                    yield from fn(*args, **kwargs)
                    return
                except on:
                    if attempt == attempts - 1:
                        raise

        return wrapper

    return decorate


def test_readme_handling_reconnections(server: StreamServer) -> None:
    """The README's reconnection recipe: the server resets the connection mid-stream (``httpx.ReadError``) and
    the recipe resumes with ``Last-Event-ID`` after waiting the ``retry`` time the server sent."""
    import time

    retry = _retry

    # --- the README's recipe, verbatim apart from the import and the `retry` decorator
    def iter_sse_retrying(client, method, url):  # type: ignore[no-untyped-def]
        last_event_id = ""
        reconnection_delay = 0.0

        # `stamina` will apply jitter and exponential backoff on top of
        # the `retry` reconnection delay sent by the server.
        @retry(on=httpx.ReadError)
        def _iter_sse():  # type: ignore[no-untyped-def]
            nonlocal last_event_id, reconnection_delay

            time.sleep(reconnection_delay)

            headers = {"Accept": "text/event-stream"}

            if last_event_id:
                headers["Last-Event-ID"] = last_event_id

            with connect_sse(client, method, url, headers=headers) as event_source:
                for sse in event_source.iter_sse():
                    last_event_id = sse.id

                    if sse.retry is not None:
                        reconnection_delay = sse.retry / 1000

                    yield sse

        return _iter_sse()

    # ---
    token = f"resume-{next(_tokens)}"
    url = server.url("/resumable", token=token, total=8, drop_after=3)
    seen = []
    with httpx.Client() as client:
        for sse in iter_sse_retrying(client, "GET", url):
            seen.append((sse.id, sse.data, sse.retry))
    assert [data for _, data, _ in seen] == [f"event {n}" for n in range(1, 9)]
    assert [i for i, _, _ in seen] == [str(n) for n in range(1, 9)]
    assert seen[0][2] == 10  # the `retry: 10` the server sent before the first event
    first, *resumed = server.resumes[token]
    assert first == ""
    assert resumed, "the connection was reset, so the recipe must have reconnected"
    assert all(int(last_id) <= 3 for last_id in resumed)


def test_readme_response_status_check(server: StreamServer) -> None:
    def readme_snippet(url: str) -> None:
        with httpx.Client() as client:
            # --- the README's `response` example
            with connect_sse(client, "GET", url) as event_source:
                event_source.response.raise_for_status()

                for _sse in event_source.iter_sse():
                    ...
            # ---

    readme_snippet(server.url("/body/numbers"))
    with pytest.raises(httpx.HTTPStatusError):
        readme_snippet(server.url("/status/503"))


# ------------------------------------------------------------------------------------------------------ the API


def test_sse_error_for_a_response_that_is_not_an_event_stream(server: StreamServer) -> None:
    with httpx.Client() as client, connect_sse(client, "GET", server.url("/body/json")) as event_source:
        events = event_source.iter_sse()  # nothing is checked before the first iteration
        with pytest.raises(SSEError, match="Expected response header Content-Type to contain 'text/event-stream'"):
            next(events)
    assert issubclass(SSEError, httpx.TransportError)
    if reference is not None:
        with httpx.Client() as client, reference.connect_sse(client, "GET", server.url("/body/json")) as source:
            with pytest.raises(reference.SSEError) as theirs:
                next(source.iter_sse())
        with httpx.Client() as client, connect_sse(client, "GET", server.url("/body/json")) as event_source:
            with pytest.raises(SSEError) as ours:
                next(event_source.iter_sse())
        assert str(ours.value) == str(theirs.value)


def test_request_headers_and_callers_mapping(server: StreamServer) -> None:
    headers = {"X-Trace": "abc", "Accept": "application/json"}
    with httpx.Client() as client, connect_sse(client, "GET", server.url("/headers"), headers=headers) as source:
        (sse,) = list(source.iter_sse())
    sent = sse.json()
    assert sent["accept"] == "text/event-stream"
    assert sent["cache-control"] == "no-store"
    assert sent["x-trace"] == "abc"
    assert headers == {"X-Trace": "abc", "Accept": "application/json"}  # not modified


def test_post_with_json_body(server: StreamServer) -> None:
    with httpx.Client() as client:
        with connect_sse(client, "POST", server.url("/body/numbers"), json={"q": 1}) as event_source:
            assert [sse.data for sse in event_source.iter_sse()] == ["1", "2", "3", "4", "5"]


def test_event_source_wraps_any_streaming_response(server: StreamServer) -> None:
    with httpx.Client() as client, client.stream("GET", server.url("/body/numbers", maxchunk=2)) as response:
        source = EventSource(response)
        assert source.response is response
        assert [sse.data for sse in source.iter_sse()] == ["1", "2", "3", "4", "5"]


def test_server_sent_event_model() -> None:
    sse = ServerSentEvent()
    assert (sse.event, sse.data, sse.id, sse.retry) == ("message", "", "", None)
    assert repr(sse) == "ServerSentEvent(event='message')"
    sse = ServerSentEvent(event="", data='{"a": [1]}', id="9", retry=5)
    assert sse.event == "message"
    assert sse.json() == {"a": [1]}
    assert repr(sse) == "ServerSentEvent(event='message', data='{\"a\": [1]}', id='9', retry=5)"
    with pytest.raises(json.JSONDecodeError):
        ServerSentEvent(data="[DONE]").json()
    if reference is not None:
        calls: list[tuple[Any, ...]] = [(), ("e",), ("e", "d"), ("e", "d", "i"), ("e", "d", "i", 3), (None,) * 4]
        for args in calls:
            assert repr(ServerSentEvent(*args)) == repr(reference.ServerSentEvent(*args))


def test_stopping_early_closes_the_response(server: StreamServer) -> None:
    token = f"dropin-{next(_tokens)}"
    with httpx.Client() as client, connect_sse(client, "GET", server.url("/endless", token=token)) as source:
        for _sse in source.iter_sse():
            break
        assert source.response.is_closed
        assert server.wait_disconnect(token) is not None

    async def main() -> None:
        token = f"dropin-{next(_tokens)}"
        async with httpx.AsyncClient() as client:
            async with aconnect_sse(client, "GET", server.url("/endless", token=token)) as source:
                events = source.aiter_sse()
                await events.__anext__()
                await events.aclose()
                assert source.response.is_closed
                loop = asyncio.get_running_loop()
                assert await loop.run_in_executor(None, server.wait_disconnect, token) is not None

    asyncio.run(main())


def test_dropped_connection_raises_the_httpx_error(server: StreamServer) -> None:
    """As with httpx-sse, a connection lost mid-stream surfaces as httpx's own transport error."""
    url = server.url("/body/numbers", cut=30)
    with pytest.raises(httpx.RemoteProtocolError):
        _read_sync(connect_sse, url)
    with pytest.raises(httpx.RemoteProtocolError):
        _read_async(aconnect_sse, url)


# ------------------------------------------------------------------------------------- agreement with httpx-sse


@needs_reference
@pytest.mark.parametrize("name", list(SPEC_STREAMS))
def test_same_events_as_httpx_sse(server: StreamServer, name: str) -> None:
    url = server.url(f"/body/spec-{name}", seed=len(name), maxchunk=3)
    theirs = _read_sync(reference.connect_sse, url)
    assert _read_sync(connect_sse, url) == theirs
    assert _read_async(aconnect_sse, url) == theirs


@needs_reference
@pytest.mark.skipif(not SSE_CAPTURES, reason="../shared/corpus is not present")
def test_same_events_as_httpx_sse_on_the_corpus(server: StreamServer) -> None:
    for capture in SSE_CAPTURES:
        assert (CORPUS / capture["file"]).is_file()
        url = server.url(f"/file/corpus/{capture['file']}", seed=len(capture["file"]))
        assert _read_sync(connect_sse, url) == _read_sync(reference.connect_sse, url), capture["file"]


@pytest.mark.parametrize("name", list(DEVIATIONS))
def test_documented_differences_from_httpx_sse(server: StreamServer, name: str) -> None:
    url = server.url(f"/body/dev-{name}", maxchunk=2)
    expected = DEVIATIONS[name][2]
    assert _read_sync(connect_sse, url) == expected
    assert _read_async(aconnect_sse, url) == expected
    if reference is not None:
        assert _read_sync(reference.connect_sse, url) != expected  # httpx-sse does differ here


def test_the_drop_in_exports_what_httpx_sse_exports_and_reports_its_version() -> None:
    """``__version__`` is the httpx-sse release whose API the module mirrors, not ssewire's own version."""
    import ssewire
    import ssewire.httpx_sse as dropin

    assert dropin.__version__ == "0.4.3" != ssewire.__version__
    if reference is not None:
        assert set(reference.__all__) <= set(dropin.__all__)
        assert reference.__version__.split(".")[:2] == dropin.__version__.split(".")[:2]


def test_an_event_takes_attributes_of_the_callers_own_as_httpx_sses_does() -> None:
    classes: list[Any] = [ServerSentEvent] + ([] if reference is None else [reference.ServerSentEvent])
    for cls in classes:
        event = cls(event="message", data="x", id="1")
        event.received_at = 123.0  # (tagging events, as code written for httpx-sse does)
        assert vars(event)["received_at"] == 123.0
    assert event.data == "x" and classes[0](data="x", id="1") == ServerSentEvent(data="x", id="1")
