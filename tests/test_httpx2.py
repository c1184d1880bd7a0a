"""httpx2 (the maintained httpx fork with its own SSE support), over real HTTP.

The adapters read httpx2 responses as they read httpx ones (same events, status errors, dropped connections,
reconnection, early release), recognised by httpx2's module. ``ssewire.httpx_sse`` works with httpx2 clients and
offers httpx2's SSE names (iterable ``EventSource``, ``max_event_size``, ``client_sse`` for ``client.sse``): it
gives the same events as httpx2's own ``EventSource`` on every recorded SSE stream, apart from the documented
departures from the SSE specification, and bounds an event as documented.
"""

# ruff: noqa: SIM117 - nested `with` blocks mirror how the clients are used

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any, Optional

import pytest

from helpers import CORPUS, FIXTURES, load_manifest
from helpers.http_server import TIMEOUT, StreamServer, fetch, synthetic_text
from ssewire import ResponseStatusError, SSEBufferOverflow, StreamTruncated, Unified, collect, iter_unified
from ssewire.resume import ResumeCursor
from ssewire.stream import aiter_resumable, iter_resumable

httpx2 = pytest.importorskip("httpx2")
httpx = pytest.importorskip("httpx")

from ssewire.adapters import _client_of, _transport_errors, aiter_response, iter_response  # noqa: E402
from ssewire.httpx_sse import (  # noqa: E402
    DEFAULT_MAX_EVENT_SIZE,
    EventSource,
    ServerSentEvent,
    SSEError,
    aconnect_sse,
    client_sse,
    connect_sse,
)

SSE_FIXTURES = sorted(FIXTURES.glob("*.sse"))
SSE_CAPTURES = [c for c in load_manifest() if c["framing"].startswith("sse")]
ADAPTER_FIXTURES = ["openai-responses-tool-call.sse", "anthropic-messages-parallel-tools-cr.sse"]
# How the body is sent: chunked, gzip-encoded, Content-Length, close-delimited.
VARIANTS: list[dict[str, Any]] = [{}, {"gzip": 1}, {"mode": "length"}, {"mode": "close"}]
MiB = 1024 * 1024
_tokens = itertools.count()

# Streams on which httpx2's parser follows the SSE specification: ours gives exactly the same events.
SPEC_STREAMS = {
    "lf": b"event: a\ndata: 1\n\ndata: 2\ndata: 3\n\n",
    "crlf-and-cr": b"id: 7\r\nevent: b\r\ndata: x\r\n\r\ndata: one\r\rdata: two\r\r",
    "comments-and-unknown-fields": b": hi\nfoo: bar\ndata: d\n\n:keepalive\n\n",
    "ids": b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: x\x00y\ndata: d\n\n",
    "no-space-field-without-colon": b"data:tight\nevent:e\n\ndata\n\ndata\ndata\n\n",
    "retry-per-event": b"retry: 100\ndata: a\n\ndata: b\n\nretry: 250\ndata: c\n\nretry: x\ndata: d\n\n",
    "utf8": "data: héllo 🌍 — 中文\n\ndata: \u2028 inside\n\n".encode(),
    "no-final-blank-line": b"data: kept\n\ndata: dropped",
}
# Where httpx2 departs from the specification (as httpx-sse does): (body, Content-Type, our events).
SSE = "text/event-stream"
DEVIATIONS: dict[str, tuple[bytes, str, list[tuple[str, str, str, Optional[int]]]]] = {
    "blocks-without-data": (b"event: ping\n\nid: 5\n\nretry: 300\n\ndata: x\n\n", SSE, [("message", "x", "5", 300)]),
    "leading-bom": (b"\xef\xbb\xbfevent: e\ndata: first\n\n", SSE, [("e", "first", "", None)]),
    "charset-ignored": ("data: café\n\n".encode(), f"{SSE}; charset=latin-1", [("message", "café", "", None)]),
    "repeated-retry": (
        b"retry: 100\ndata: a\n\nretry: 100\ndata: b\n\n",
        SSE,
        [("message", "a", "", 100), ("message", "b", "", None)],
    ),
}


def _line_event(line_size: int) -> bytes:
    """One event whose single ``data:`` line is ``line_size`` bytes long, then a small one."""
    return b"data: " + b"x" * (line_size - len(b"data: ")) + b"\n\ndata: after\n\n"


@pytest.fixture(scope="module")
def server() -> Iterator[StreamServer]:
    with StreamServer() as srv:
        for name, body in SPEC_STREAMS.items():
            srv.register(f"spec-{name}", body)
        for name, (body, ctype, _) in DEVIATIONS.items():
            srv.register(f"dev-{name}", body, ctype)
        srv.register("at-limit", _line_event(DEFAULT_MAX_EVENT_SIZE))
        srv.register("over-limit", _line_event(DEFAULT_MAX_EVENT_SIZE + 1))
        srv.register("two-mib", _line_event(2 * MiB))
        srv.register("json", b'{"not": "sse"}', "application/json")
        srv.register("upper-ctype", b"data: ok\n\n", "Text/Event-Stream; charset=utf-8")
        yield srv


def _tuples(events: Any) -> list[tuple[Any, ...]]:
    """(event, data, id, retry) of each event: ssewire's framed events or server-sent events of either library."""
    return [(e.event, e.data, e.id, e.retry) for e in events]


def _dicts(events: list[Unified]) -> list[dict[str, Any]]:
    return [e.to_dict(with_raw=True) for e in events]


# ---------------------------------------------------------------------------------------------------- adapters


def test_httpx2_responses_are_recognised_by_their_module() -> None:
    """httpx2's module (not duck typing) picks httpx's reading path and httpx2's own transport errors, also for a
    subclass of ``httpx2.Response`` defined elsewhere."""

    class MyResponse(httpx2.Response):  # type: ignore[misc,name-defined]
        pass

    for response in (httpx2.Response(200), MyResponse(200)):
        assert _client_of(response) == "httpx"
        assert _transport_errors(response, "httpx") == (httpx2.TransportError,)


def test_importing_ssewire_imports_neither_httpx2_nor_httpx() -> None:
    code = (
        "import sys, ssewire, ssewire.adapters, ssewire.stream, ssewire.transport;"
        "print(sorted(m for m in ('httpx', 'httpx2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("variant", VARIANTS, ids=["chunked", "gzip", "length", "close"])
@pytest.mark.parametrize("name", ADAPTER_FIXTURES)
def test_adapter_events_through_httpx2_equal_httpx(server: StreamServer, name: str, variant: dict[str, Any]) -> None:
    """Unified and framed events through httpx2 (sync and async) equal those through httpx and in memory."""
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text(encoding="utf-8"))
    url = server.url(f"/file/fixtures/{name}", seed=len(name), maxchunk=97, **variant)
    unified = _dicts(fetch("httpx", url, expected["provider"]))
    framed = _tuples(fetch("httpx", url))
    assert unified == _dicts(list(iter_unified([(FIXTURES / name).read_bytes()], expected["provider"])))
    for client in ("httpx2", "httpx2-async"):
        assert _dicts(fetch(client, url, expected["provider"])) == unified, client
        assert _tuples(fetch(client, url)) == framed, client


@pytest.mark.parametrize("client", ["httpx2", "httpx2-async"])
def test_status_error_and_dropped_connection(server: StreamServer, client: str) -> None:
    """A non-2xx response raises ``ResponseStatusError``; a connection cut mid-body ends unified iteration with
    ``stream_truncated`` (naming httpx2's error) and raises ``StreamTruncated`` from it in framed iteration."""
    with pytest.raises(ResponseStatusError) as info:
        fetch(client, server.url("/status/503", gzip=1), "openai-chat")
    assert info.value.status_code == 503
    for abort in (None, 1):
        url = server.url("/synthetic", events=30, size=100, cut=2500, abort=abort)
        events = fetch(client, url, "openai-chat")
        error = events[-1].error
        assert error is not None and error["type"] == "stream_truncated"
        assert "connection lost" in error["message"]
        assert synthetic_text(30, 100).startswith(collect(events).text)
        with pytest.raises(StreamTruncated, match="connection lost") as cut:
            fetch(client, url)
        assert isinstance(cut.value.__cause__, httpx2.TransportError)


def test_stopping_early_releases_the_connection(server: StreamServer) -> None:
    token = f"h2-sync-{next(_tokens)}"
    with httpx2.Client(timeout=TIMEOUT) as client, client.stream("GET", server.url("/endless", token=token)) as r:
        for _event in iter_response(r, "openai-chat"):
            break
        assert server.wait_disconnect(token) is not None
        assert r.is_closed

    async def main() -> None:
        token = f"h2-async-{next(_tokens)}"
        async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
            async with client.stream("GET", server.url("/endless", token=token)) as response:
                events = aiter_response(response, "openai-chat")
                await events.__anext__()
                await events.aclose()
                assert response.is_closed
                loop = asyncio.get_running_loop()
                assert await loop.run_in_executor(None, server.wait_disconnect, token) is not None

    asyncio.run(main())


RESUME_STREAM = FIXTURES / "openai-responses-tool-call.sse"
RESUME_BODY = RESUME_STREAM.read_bytes()
RESUME_CUT = RESUME_BODY.index(b"response.function_call_arguments.delta", RESUME_BODY.index(b"arguments.delta") + 1)


@pytest.mark.parametrize("abort", [None, 1], ids=["eof-mid-chunk", "tcp-reset"])
def test_resumable_reconnects_on_httpx2_transport_errors(server: StreamServer, abort: Optional[int]) -> None:
    """``iter_resumable`` / ``aiter_resumable`` reconnect on httpx2's transport errors by default: every event
    arrives exactly once."""
    want = _dicts(list(iter_unified([RESUME_BODY], "openai")))

    def url() -> str:
        token = f"h2-resume-{next(_tokens)}"
        return server.url(f"/file/fixtures/{RESUME_STREAM.name}", cut=RESUME_CUT, once=token, abort=abort, seed=3)

    opened: list[Optional[ResumeCursor]] = []
    sync_url = url()

    def open_sync(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        opened.append(cursor)
        with httpx2.Client(timeout=TIMEOUT) as client, client.stream("GET", sync_url) as response:
            yield from response.iter_bytes()

    assert _dicts(list(iter_resumable(open_sync, "openai"))) == want
    assert len(opened) == 2 and opened[1] is not None
    async_url = url()

    async def open_async(cursor: Optional[ResumeCursor]) -> AsyncIterator[bytes]:
        opened.append(cursor)
        async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
            async with client.stream("GET", async_url) as response:
                async for chunk in response.aiter_bytes():
                    yield chunk

    async def run() -> list[Unified]:
        return [e async for e in aiter_resumable(open_async, "openai")]

    assert _dicts(asyncio.run(run())) == want
    assert len(opened) == 4


# --------------------------------------------------------------------------------------- ssewire.httpx_sse


def _theirs(url: str, **kwargs: Any) -> list[tuple[Any, ...]]:
    """The events of ``url`` through httpx2's own ``client.sse``."""
    with httpx2.Client(timeout=TIMEOUT) as client, client.sse(url, **kwargs) as source:
        return _tuples(source)


def _ours(url: str, **kwargs: Any) -> list[tuple[Any, ...]]:
    """The events of ``url`` through ours, every way: ``client_sse`` / ``connect_sse`` / ``EventSource`` with
    httpx2 sync and async; all must agree."""
    with httpx2.Client(timeout=TIMEOUT) as client:
        with client_sse(client, url, **kwargs) as source:
            got = _tuples(source)
        with connect_sse(client, "GET", url, **kwargs) as source:
            assert _tuples(source.iter_sse()) == got
        with client.stream("GET", url) as response:
            assert _tuples(EventSource(response, **kwargs)) == got

    async def main() -> None:
        async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
            async with client_sse(client, url, **kwargs) as source:
                assert _tuples([sse async for sse in source]) == got
            async with aconnect_sse(client, "GET", url, **kwargs) as source:
                assert _tuples([sse async for sse in source.aiter_sse()]) == got

    asyncio.run(main())
    return got


@pytest.mark.parametrize("name", list(SPEC_STREAMS))
def test_same_events_as_httpx2_on_spec_streams(server: StreamServer, name: str) -> None:
    url = server.url(f"/body/spec-{name}", seed=len(name), maxchunk=3)
    assert _ours(url) == _theirs(url)


@pytest.mark.parametrize("name", list(DEVIATIONS))
def test_documented_differences_from_httpx2(server: StreamServer, name: str) -> None:
    url = server.url(f"/body/dev-{name}", maxchunk=2)
    expected = DEVIATIONS[name][2]
    assert _ours(url) == expected
    assert _theirs(url) != expected  # httpx2 does differ here


def test_same_events_as_httpx2_on_recorded_streams(server: StreamServer) -> None:
    """Differential: every SSE stream of fixtures/ (and of the shared corpus, when present) gives the same events
    through httpx2's ``EventSource`` and ours; the one stream with a leading BOM differs only as documented (httpx2
    loses its first field, the ``event:`` name)."""
    paths = [f"/file/fixtures/{p.name}" for p in SSE_FIXTURES]
    paths += [f"/file/corpus/{c['file']}" for c in SSE_CAPTURES if (CORPUS / c["file"]).is_file()]
    assert len(paths) >= len(SSE_FIXTURES) > 10
    with httpx2.Client(timeout=TIMEOUT) as client:
        for path in paths:
            url = server.url(path, seed=len(path), maxchunk=257, pause=0)
            with client.sse(url, max_event_size=None) as source:
                theirs = _tuples(source)
            with client_sse(client, url, max_event_size=None) as source:
                ours = _tuples(source)
            assert ours, path
            if path.endswith("-bom.sse"):
                assert theirs[0][0] == "message" and ours[0][0] != "message", path
                theirs[0] = (ours[0][0], *theirs[0][1:])
            assert ours == theirs, path


def test_max_event_size_defaults_to_httpx2s_bound_for_httpx2(server: StreamServer) -> None:
    """For an httpx2 response the bound is httpx2's (1 MiB): an event at it passes, one byte over raises
    ``SSEError`` (also ``httpx2.SSEError``, from ssewire's ``SSEBufferOverflow``), as in httpx2 itself."""
    assert inspect.signature(httpx2.EventSource).parameters["max_event_size"].default == DEFAULT_MAX_EVENT_SIZE
    at, over = server.url("/body/at-limit", maxchunk=65536, pause=0), server.url("/body/over-limit", maxchunk=65536)
    assert [len(data) for _, data, _, _ in _ours(at)] == [DEFAULT_MAX_EVENT_SIZE - 6, 5]
    assert _theirs(at) == _ours(at)
    with pytest.raises(httpx2.SSEError, match="exceeded the 1048576 byte limit"):
        _theirs(over)
    with httpx2.Client(timeout=TIMEOUT) as client, client_sse(client, over) as source:
        with pytest.raises(SSEError, match="exceeded the 1048576 byte limit") as info:
            list(source)
        assert source.response.is_closed
    assert isinstance(info.value, httpx2.SSEError) and isinstance(info.value, httpx.TransportError)
    assert isinstance(info.value.__cause__, SSEBufferOverflow)
    assert info.value.request.url == over


def test_max_event_size_is_explicit_none_or_by_library(server: StreamServer) -> None:
    """An httpx response has no ``max_event_size`` by default (httpx-sse has none): ``max_buffer`` bounds it, and
    raises ``SSEBufferOverflow``. ``max_event_size`` set or ``None`` applies to either library."""
    two_mib = server.url("/body/two-mib", maxchunk=65536, pause=0)
    with httpx.Client(timeout=TIMEOUT) as client:
        with connect_sse(client, "GET", two_mib) as source:
            assert [len(sse.data) for sse in source.iter_sse()] == [2 * MiB - 6, 5]
        with connect_sse(client, "GET", two_mib, max_event_size=1000) as source:
            with pytest.raises(SSEError, match="exceeded the 1000 byte limit"):
                list(source.iter_sse())
        with connect_sse(client, "GET", two_mib, max_buffer=MiB) as source:
            with pytest.raises(SSEBufferOverflow):
                list(source.iter_sse())
    with httpx2.Client(timeout=TIMEOUT) as client:
        with client_sse(client, two_mib, max_event_size=None) as source:
            assert [len(sse.data) for sse in source] == [2 * MiB - 6, 5]
        with client_sse(client, two_mib, max_event_size=3 * MiB, max_buffer=MiB) as source:
            with pytest.raises(SSEBufferOverflow):  # max_buffer still bounds every event
                list(source)
        with client.stream("GET", two_mib) as response, pytest.raises(ValueError, match="max_event_size"):
            EventSource(response, 0)


def test_content_type_check_and_sse_error(server: StreamServer) -> None:
    with httpx2.Client(timeout=TIMEOUT) as client:
        with client_sse(client, server.url("/body/json")) as source:
            with pytest.raises(SSEError, match="Content-Type to contain 'text/event-stream'") as info:
                next(iter(source))
        assert isinstance(info.value, (httpx2.SSEError, httpx2.TransportError, httpx.TransportError))
        with client_sse(client, server.url("/body/upper-ctype")) as source:  # media types are case-insensitive
            assert _tuples(source) == [("message", "ok", "", None)]


def test_client_sse_mirrors_client_sse_requests(server: StreamServer) -> None:
    """``client_sse`` sends what ``client.sse`` sends: the caller's headers win over ``Accept`` /
    ``Cache-Control``; ``method`` and the request arguments go through; ``connect_sse`` sets them over the
    caller's, as httpx-sse does."""
    url = server.url("/headers")
    for headers in (None, {"Accept": "application/x-ndjson", "X-Trace": "t"}):
        with httpx2.Client(timeout=TIMEOUT) as client:
            with client.sse(url, method="POST", json={"q": 1}, headers=headers) as source:
                theirs = next(iter(source)).json()
            with client_sse(client, url, method="POST", json={"q": 1}, headers=headers) as source:
                ours = next(iter(source)).json()
            with connect_sse(client, "POST", url, json={"q": 1}, headers=headers) as source:
                forced = next(source.iter_sse()).json()
        for name in ("accept", "cache-control", "x-trace", "content-type", "content-length"):
            assert ours.get(name) == theirs.get(name), name
        assert (forced["accept"], forced["cache-control"]) == ("text/event-stream", "no-store")


def test_dropped_connection_raises_httpx2s_error(server: StreamServer) -> None:
    url = server.url("/file/fixtures/openai-responses-tool-call.sse", cut=3000)
    with httpx2.Client(timeout=TIMEOUT) as client, client_sse(client, url) as source:
        with pytest.raises(httpx2.RemoteProtocolError):
            list(source)

    async def main() -> None:
        async with httpx2.AsyncClient(timeout=TIMEOUT) as client, client_sse(client, url) as source:
            with pytest.raises(httpx2.RemoteProtocolError):
                async for _sse in source:
                    pass

    asyncio.run(main())


HTTPX2_ONLY = """
import sys
sys.modules["httpx"] = None  # as if httpx were not installed
import httpx2
from ssewire.httpx_sse import SSEError, connect_sse

def app(request):
    body = b"data: a\\n\\ndata: " + b"x" * (2 * 1024 * 1024) + b"\\n\\n"
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

assert SSEError.__bases__ == (httpx2.SSEError,)
with httpx2.Client(transport=httpx2.MockTransport(app)) as client, connect_sse(client, "GET", "http://t/") as source:
    events = source.iter_sse()
    assert next(events).data == "a"
    try:
        next(events)
    except httpx2.SSEError as exc:
        print(exc)
"""


def test_works_with_httpx2_alone_and_needs_one_of_the_two() -> None:
    """Without httpx, ``SSEError`` is an ``httpx2.SSEError`` only and httpx2 clients work; without either,
    importing the module says what to install."""
    run = subprocess.run([sys.executable, "-c", HTTPX2_ONLY], capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == "Server-sent event exceeded the 1048576 byte limit.", run.stderr
    code = "import sys; sys.modules['httpx'] = sys.modules['httpx2'] = None; import ssewire.httpx_sse"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "ImportError: ssewire.httpx_sse needs httpx or httpx2" in run.stderr


def test_server_sent_event_compares_like_httpx2s() -> None:
    """Equal and hashed by value, matchable by position, like httpx2's frozen dataclass; the constructor keeps
    httpx-sse's normalisation of ``None`` and an empty ``event``."""
    a = ServerSentEvent("e", "d", "1", 5)
    assert a == ServerSentEvent("e", "d", "1", 5) and hash(a) == hash(ServerSentEvent("e", "d", "1", 5))
    assert a != ServerSentEvent("e", "d", "1") and a != httpx2.ServerSentEvent("e", "d", "1", 5)
    assert len({a, ServerSentEvent("e", "d", "1", 5), ServerSentEvent()}) == 2
    assert ServerSentEvent.__match_args__ == httpx2.ServerSentEvent.__match_args__  # `case ServerSentEvent(e, d)`
    theirs, ours = httpx2.ServerSentEvent(), ServerSentEvent()
    assert (ours.event, ours.data, ours.id, ours.retry) == (theirs.event, theirs.data, theirs.id, theirs.retry)
    assert ServerSentEvent(event="", id=None).event == "message" and ServerSentEvent(id=None).id == ""
    with pytest.raises(AttributeError):
        a.data = "x"  # type: ignore[misc]
