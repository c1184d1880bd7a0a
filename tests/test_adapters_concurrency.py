"""200 streams at once through one httpx ``AsyncClient`` (80 by default, 200 under ``slow``: httpx costs ~0.1 s of
CPU per stream) and through one aiohttp session all parse correctly, and memory stays far below the sum of the
streams while they are read.

The server runs in a subprocess, so tracemalloc sees only the client side; the rise is measured from the moment
every connection is open with its headers read, so the clients' fixed per-connection state is not counted."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.http_server import synthetic_body, synthetic_text
from ssewire.adapters import aiter_response

httpx = pytest.importorskip("httpx")
aiohttp = pytest.importorskip("aiohttp")
tracemalloc = pytest.importorskip("tracemalloc")

STREAMS = 200
EVENTS = 150
SIZE = 2000  # text bytes per event: each stream is ~320 KB, 200 of them ~64 MB
EXPECTED_TEXT = synthetic_text(EVENTS, SIZE)
EXPECTED_CRC = zlib.crc32(EXPECTED_TEXT.encode())
STREAM_BYTES = len(synthetic_body(EVENTS, SIZE))


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """The test server in its own process: ``PORT <n>`` on stdout, stops when its stdin closes."""
    script = Path(__file__).parent / "helpers" / "http_server.py"
    with subprocess.Popen(
        [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        try:
            line = proc.stdout.readline()
            assert line.startswith("PORT "), line
            yield f"http://127.0.0.1:{int(line.split()[1])}"
        finally:
            proc.stdin.close()  # the server stops when its stdin closes
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                proc.kill()


# The clients' own read buffers are capped, so the peak is ssewire's share (one chunk and one event per stream)
# plus a fixed per-connection overhead; left alone, each client may buffer a few hundred KB per connection.
READ_BUFSIZE = 16 * 1024
SMALL_RCVBUF = (socket.SOL_SOCKET, socket.SO_RCVBUF, READ_BUFSIZE)


def _small_buffer_socket(addr_info: Any) -> socket.socket:
    family, type_, proto, _, _ = addr_info
    sock = socket.socket(family=family, type=type_, proto=proto)
    sock.setsockopt(*SMALL_RCVBUF)
    return sock


async def _consume(events: Any) -> tuple[int, int, Any, Any]:
    """(crc32 of the text, its length, stop reason, usage) without keeping the text: memory stays O(1)."""
    crc = length = 0
    stop = usage = None
    async for event in events:
        if event.type == "text_delta":
            data = event.text.encode()
            crc = zlib.crc32(data, crc)
            length += len(data)
        elif event.type == "done":
            stop = event.stop_reason
        elif event.type == "usage":
            usage = event.usage
        elif event.type == "error":
            raise AssertionError(event.error)
    return crc, length, stop, usage


def _url(base: str, i: int) -> str:
    return f"{base}/synthetic?events={EVENTS}&size={SIZE}&seed={i}&maxchunk=8192&pause=0.02"


Result = tuple[int, int, Any, Any]


async def _streams_then_measure(responses: list[Any]) -> tuple[list[Result], int]:
    """Consume every response at once; returns the results and how far traced memory rose above what it was
    with every connection open and its headers read (the clients' per-connection state is not counted)."""
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    results = await asyncio.gather(*(_consume(aiter_response(r, "openai-chat")) for r in responses))
    return list(results), tracemalloc.get_traced_memory()[1] - base


async def _with_httpx(base: str, streams: int) -> tuple[list[Result], int]:
    limits = httpx.Limits(max_connections=streams + 10, max_keepalive_connections=streams + 10)
    transport = httpx.AsyncHTTPTransport(limits=limits, verify=False, socket_options=[SMALL_RCVBUF])
    async with contextlib.AsyncExitStack() as stack:
        client = await stack.enter_async_context(httpx.AsyncClient(transport=transport, timeout=60))
        responses = await asyncio.gather(
            *(stack.enter_async_context(client.stream("GET", _url(base, i))) for i in range(streams))
        )
        return await _streams_then_measure(responses)


async def _with_aiohttp(base: str, streams: int) -> tuple[list[Result], int]:
    connector = aiohttp.TCPConnector(limit=streams + 10, socket_factory=_small_buffer_socket)
    timeout = aiohttp.ClientTimeout(total=60)
    async with contextlib.AsyncExitStack() as stack:
        session = aiohttp.ClientSession(connector=connector, timeout=timeout, read_bufsize=READ_BUFSIZE)
        await stack.enter_async_context(session)
        responses = await asyncio.gather(
            *(stack.enter_async_context(session.get(_url(base, i))) for i in range(streams))
        )
        return await _streams_then_measure(responses)


@pytest.mark.parametrize(
    ("run", "streams"),
    [
        pytest.param(_with_httpx, 80, id="httpx-async-80"),
        pytest.param(_with_httpx, STREAMS, id="httpx-async", marks=pytest.mark.slow),
        pytest.param(_with_aiohttp, STREAMS, id="aiohttp"),
    ],
)
def test_many_concurrent_streams_parse_correctly_in_bounded_memory(server_url: str, run: Any, streams: int) -> None:
    tracemalloc.start()
    try:
        results, growth = asyncio.run(run(server_url, streams))
    finally:
        tracemalloc.stop()
    assert len(results) == streams
    for crc, length, stop, usage in results:
        assert (crc, length) == (EXPECTED_CRC, len(EXPECTED_TEXT.encode()))
        assert stop == "end"
        assert usage is not None
    total = streams * STREAM_BYTES
    # Each stream holds about one chunk and one event at a time; reading them whole would need `total`.
    message = f"memory rose by {growth / 1e6:.1f} MB while reading {total / 1e6:.1f} MB of streams"
    assert growth < total / 5, message
    assert growth < streams * 128 * 1024, message  # a bound per stream, whatever the streams' length
