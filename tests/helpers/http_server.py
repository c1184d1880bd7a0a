"""A small HTTP/1.1 test server on 127.0.0.1 that streams recorded bodies the way real servers do.

It runs its own asyncio loop in a background thread (``with StreamServer() as server``) or in a subprocess
(``python tests/helpers/http_server.py`` prints ``PORT <n>`` and serves until its stdin closes). Written on raw
asyncio streams so the tests control the wire: chunk sizes, pauses, framing and where the connection is cut. The
server plumbing is one with the gateway example's replay upstream (:class:`examples.gateway.replay.LoopServer`):
this module adds the tests' routes.

Routes (GET or POST; a request body is read and ignored):

- ``/file/fixtures/<name>``, ``/file/corpus/<path>``: a stream from ``fixtures/`` or ``../shared/corpus``;
  ``/body/<name>``: a body registered with :meth:`StreamServer.register`;
  ``/synthetic?events=N&size=S``: a Chat Completions stream of N text deltas of S bytes (:func:`synthetic_text`).
  Shared query parameters: ``seed`` (random chunking), ``maxchunk`` (largest write, default 1024), ``delay``
  (longest pause, default 0.003 s), ``pause`` (probability of a pause after a write, default 0.05), ``cut`` (close
  after this many body bytes, inside an HTTP chunk; with ``once=T`` only the first request of token T is cut),
  ``abort=1`` (cut with a TCP reset), ``gzip=1``
  (``Content-Encoding: gzip``, flushed per write; ``corrupt=1``: its deflate data garbled), ``mode`` (``chunked``
  (default), ``length`` (Content-Length) or ``close`` (body delimited by closing the connection)), ``ctype``
  (Content-Type override).
- ``/status/<code>?size=N``: that status with a JSON error body (padded to N bytes).
- ``/endless?token=T`` and ``/stall?token=T&events=N``: an SSE stream that never ends (an event every
  ``interval`` s) / that sends N events then goes silent (``mode=close``: without chunked encoding); how the
  client went away is recorded under T (:meth:`StreamServer.wait_disconnect`).
- ``/headers``: one SSE event whose data is the request headers as JSON.
- ``/resumable?token=T&total=N&drop_after=K``: N events with ids; the first connection of T is reset after K
  events; ``Last-Event-ID`` resumes after that id.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import random
import sys
import zlib
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlencode

from ssewire.names import FramingName

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = Path(os.environ.get("SSEWIRE_CORPUS", ROOT.parent / "shared" / "corpus"))
if str(ROOT) not in sys.path:  # examples/ is at the repository's root (also when this file runs as a script)
    sys.path.append(str(ROOT))

from examples.gateway.replay import REASONS, LoopServer, ReplayRequest, content_type_for  # noqa: E402


def synthetic_text(events: int, size: int) -> str:
    """The text a ``/synthetic?events=N&size=S`` stream carries."""
    return "".join(_delta(i, size) for i in range(events))


def _delta(i: int, size: int) -> str:
    return (f"<{i}>" + "abcdefghijklmnopqrstuvwxyz" * (size // 26 + 1))[:size]


def synthetic_body(events: int, size: int) -> bytes:
    """A whole ``/synthetic`` body (Chat Completions framing, usage chunk, ``[DONE]``)."""
    return b"".join(_synthetic_pieces(events, size))


def _synthetic_pieces(events: int, size: int) -> Any:
    head = '{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"synthetic","choices":['
    yield ("data: " + head + '{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n').encode()
    for i in range(events):
        delta = json.dumps({"index": 0, "delta": {"content": _delta(i, size)}})
        yield ("data: " + head + delta + "]}\n\n").encode()
    yield ("data: " + head + '{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n').encode()
    usage = {"prompt_tokens": 3, "completion_tokens": events, "total_tokens": events + 3}
    yield ("data: " + json.dumps({"id": "chatcmpl-1", "choices": [], "usage": usage}) + "\n\n").encode()
    yield b"data: [DONE]\n\n"


class StreamServer(LoopServer):
    """The test server. ``url(path, **query)`` builds a URL; every socket is bound to 127.0.0.1. The plumbing
    (the loop in its thread, reading requests, recording how each ended, counting connections) is the gateway
    example's :class:`~examples.gateway.replay.LoopServer`, as the replay upstream's; the routes are the tests'."""

    thread_name = "ssewire-test-http"

    def __init__(self) -> None:
        super().__init__("127.0.0.1", 0, backlog=1024)
        self.bodies: dict[str, tuple[bytes, str]] = {}
        self._resume_seen: set[str] = set()
        self._cut_seen: set[str] = set()
        self.resumes: dict[str, list[str]] = {}  # /resumable token -> Last-Event-ID of each request

    @property
    def disconnects(self) -> dict[str, str]:
        """How the client of each token went away (``"eof"``, ``"ConnectionResetError"`` ...)."""
        return self.outcomes

    def url(self, path: str, **query: Any) -> str:  # type: ignore[override]  # a method here, a property there
        q = urlencode({k: v for k, v in query.items() if v is not None})
        return f"http://127.0.0.1:{self.port}{path}" + (f"?{q}" if q else "")

    def register(self, name: str, body: bytes, content_type: str = "text/event-stream") -> str:
        """Serve ``body`` at ``/body/<name>``; returns the path."""
        self.bodies[name] = (body, content_type)
        return f"/body/{name}"

    def wait_disconnect(self, token: str, timeout: float = 5.0) -> Optional[str]:
        """How the client of ``token`` went away (``"eof"``, ``"ConnectionResetError"`` ...), or None on timeout."""
        return self.wait_outcome(token, timeout)

    # ------------------------------------------------------------------------------------------------ serving

    async def _respond(
        self, req: ReplayRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[bool, bool]:
        """Serve one request; returns (keep the connection, reset it)."""
        path, q = req.path, req.query
        if path.startswith("/file/"):
            _, _, root, rel = path.split("/", 3)
            base = FIXTURES if root == "fixtures" else CORPUS
            file = (base / rel).resolve()
            if base.resolve() not in file.parents or not file.is_file():
                return await self._simple(writer, 404, b'{"error": "no such file"}', "application/json")
            ctype = content_type_for(file)
            return await self._stream(writer, file.read_bytes(), q.get("ctype", ctype), q)
        if path.startswith("/body/"):
            name = path[len("/body/") :]
            if name not in self.bodies:
                return await self._simple(writer, 404, b'{"error": "no such body"}', "application/json")
            body, ctype = self.bodies[name]
            return await self._stream(writer, body, q.get("ctype", ctype), q)
        if path == "/synthetic":
            body = synthetic_body(int(q.get("events", 100)), int(q.get("size", 64)))
            return await self._stream(writer, body, q.get("ctype", "text/event-stream"), q)
        if path.startswith("/status/"):
            code = int(path[len("/status/") :])
            message = "rate limited" if code == 429 else f"status {code}"
            error = {"error": {"type": "test_error", "code": code, "message": message}}
            body = json.dumps(error).encode()
            size = int(q.get("size", 0))
            if size > len(body):
                error["error"]["padding"] = "x" * (size - len(body) - 14)
                body = json.dumps(error).encode()
            return await self._stream(writer, body, q.get("ctype", "application/json"), q, status=code)
        if path == "/headers":
            body = b"data: " + json.dumps(req.headers).encode() + b"\n\n"
            return await self._simple(writer, 200, body, "text/event-stream")
        if path == "/endless":
            return await self._endless(req, reader, writer, stall=False)
        if path == "/stall":
            return await self._endless(req, reader, writer, stall=True)
        if path == "/resumable":
            return await self._resumable(req, writer)
        return await self._simple(writer, 404, b'{"error": "no such route"}', "application/json")

    async def _head(
        self, writer: asyncio.StreamWriter, status: int, ctype: str, extra: str = "", length: Optional[int] = None
    ) -> None:
        head = f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\nContent-Type: {ctype}\r\n"
        if length is not None:
            head += f"Content-Length: {length}\r\n"
        elif "Connection: close" not in extra:
            head += "Transfer-Encoding: chunked\r\n"
        writer.write((head + extra + "\r\n").encode("latin-1"))

    async def _simple(self, writer: asyncio.StreamWriter, status: int, body: bytes, ctype: str) -> tuple[bool, bool]:
        await self._head(writer, status, ctype, length=len(body))
        writer.write(body)
        await writer.drain()
        return True, False

    async def _stream(
        self, writer: asyncio.StreamWriter, body: bytes, ctype: str, q: dict[str, str], status: int = 200
    ) -> tuple[bool, bool]:
        rng = random.Random(int(q.get("seed", 0)))
        maxchunk = int(q.get("maxchunk", 1024))
        delay = float(q.get("delay", 0.003))
        pause = float(q.get("pause", 0.05))
        cut = int(q["cut"]) if "cut" in q else None
        once = q.get("once")
        if once is not None:
            if once in self._cut_seen:
                cut = None
            self._cut_seen.add(once)
        abort = q.get("abort") == "1"
        mode = q.get("mode", "chunked")
        gzip = q.get("gzip") == "1"

        pieces: list[bytes] = []
        pos = 0
        while pos < len(body):
            size = rng.randint(1, maxchunk)
            pieces.append(body[pos : pos + size])
            pos += size
        total = len(body)
        compressor = zlib.compressobj(wbits=31) if gzip else None
        if compressor is not None:
            compressed = [compressor.compress(p) + compressor.flush(zlib.Z_SYNC_FLUSH) for p in pieces]
            compressed.append(compressor.flush())
            pieces = [p for p in compressed if p]
            if q.get("corrupt") == "1":  # the deflate data garbled after the gzip header: a body no client decodes
                pieces[0] = pieces[0][:10] + bytes(byte ^ 0x5A for byte in pieces[0][10:])
            total = sum(map(len, pieces))
            if cut is not None:  # cut at the same share of the compressed body
                cut = cut * total // max(len(body), 1)
        extra = "Content-Encoding: gzip\r\n" if gzip else ""
        if mode == "close":
            extra += "Connection: close\r\n"
        await self._head(writer, status, ctype, extra, length=total if mode == "length" else None)

        sent = 0
        for piece in pieces:
            if cut is not None and sent + len(piece) >= cut:
                part = piece[: cut - sent]
                if mode == "chunked":
                    writer.write(b"%x\r\n" % len(piece) + part)  # the chunk header promises more than is sent
                else:
                    writer.write(part)
                await writer.drain()
                return False, abort
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece) if mode == "chunked" else piece)
            sent += len(piece)
            await writer.drain()
            if delay and rng.random() < pause:
                await asyncio.sleep(rng.uniform(0, delay))
        if mode == "chunked":
            writer.write(b"0\r\n\r\n")
        await writer.drain()
        return mode != "close", False

    async def _endless(
        self, req: ReplayRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stall: bool
    ) -> tuple[bool, bool]:
        token = req.query.get("token")
        interval = float(req.query.get("interval", 0.005))
        events = int(req.query.get("events", 1))
        chunked = req.query.get("mode", "chunked") == "chunked"
        await self._head(writer, 200, "text/event-stream", "" if chunked else "Connection: close\r\n")
        eof = asyncio.ensure_future(reader.read(1))  # completes when the client closes its side
        try:
            i = 0
            while True:
                if not stall or i < events:
                    payload = {"choices": [{"index": 0, "delta": {"content": f"tick {i} "}}]}
                    data = b"data: " + json.dumps(payload).encode() + b"\n\n"
                    writer.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
                    await writer.drain()
                    i += 1
                done, _ = await asyncio.wait({eof}, timeout=interval if not stall or i < events else 30)
                if done:
                    self._record(token, "eof")
                    return False, False
                if stall and i >= events:
                    self._record(token, "timeout")
                    return False, False
        except (ConnectionResetError, BrokenPipeError, ConnectionAbortedError) as exc:
            self._record(token, type(exc).__name__)
            return False, False
        except asyncio.CancelledError:
            self._record(token, "cancelled")
            raise
        finally:
            eof.cancel()

    async def _resumable(self, req: ReplayRequest, writer: asyncio.StreamWriter) -> tuple[bool, bool]:
        token = req.query.get("token", "")
        total = int(req.query.get("total", 10))
        drop_after = int(req.query.get("drop_after", 3))
        start = int(req.headers.get("last-event-id") or 0) + 1
        first = token not in self._resume_seen
        self._resume_seen.add(token)
        self.resumes.setdefault(token, []).append(req.headers.get("last-event-id", ""))
        await self._head(writer, 200, "text/event-stream")
        out = [b"retry: 10\n\n"] if first else []
        for n in range(start, total + 1):
            out.append(b"id: %d\ndata: event %d\n\n" % (n, n))
        for i, data in enumerate(out):
            if first and i > drop_after:
                return False, True  # reset mid-stream: the client sees a read error
            writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True, False


def main() -> None:
    """Serve in the foreground (``PORT <n>`` on stdout) until stdin closes."""
    with StreamServer() as server:
        print(f"PORT {server.port}", flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()


# ------------------------------------------------------------------------------------------- client helpers
# Used by the tests: one function per way of reading a response. The clients are imported here, not by ssewire.

HAS_HTTPX2 = importlib.util.find_spec("httpx2") is not None
#: Every client the adapter tests read through; httpx2 (Python 3.11+) only when it is installed.
CLIENTS = ("httpx", "httpx-async", "aiohttp", "requests") + (("httpx2", "httpx2-async") if HAS_HTTPX2 else ())
TIMEOUT = 20.0


def fetch(client: str, url: str, provider: Any = None, framing: Optional[FramingName] = None) -> list[Any]:
    """Every event of ``url`` read through ``client``: unified events when ``provider`` is given, else framed
    events. Exceptions propagate."""
    import pytest

    from ssewire.adapters import aiter_response, aiter_response_events, iter_response, iter_response_events

    # httpx2 keeps httpx's API: the same code reads both
    httpx: Any = pytest.importorskip(client.partition("-")[0]) if client.startswith("httpx") else None
    if client in ("httpx", "httpx2"):
        with httpx.Client(timeout=TIMEOUT, verify=False) as hc, hc.stream("GET", url) as response:
            if provider is None:
                return list(iter_response_events(response, framing))
            return list(iter_response(response, provider, framing))
    if client == "requests":
        import requests

        with requests.Session() as session, session.get(url, stream=True, timeout=TIMEOUT) as reply:
            if provider is None:
                return list(iter_response_events(reply, framing))
            return list(iter_response(reply, provider, framing))

    async def run() -> list[Any]:
        if client in ("httpx-async", "httpx2-async"):
            async with httpx.AsyncClient(timeout=TIMEOUT, verify=False) as ac, ac.stream("GET", url) as response:
                if provider is None:
                    return [e async for e in aiter_response_events(response, framing)]
                return [e async for e in aiter_response(response, provider, framing)]
        import aiohttp

        timeout = aiohttp.ClientTimeout(total=TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url) as response:
            if provider is None:
                return [e async for e in aiter_response_events(response, framing)]
            return [e async for e in aiter_response(response, provider, framing)]

    if client not in ("httpx-async", "httpx2-async", "aiohttp"):
        raise ValueError(client)
    return asyncio.run(run())
