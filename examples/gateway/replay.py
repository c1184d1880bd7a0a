"""An upstream that replays recorded streams over HTTP/1.1 with realistic pacing, for testing the gateway.

``with ReplayServer({"fixtures": path, ...}) as upstream`` serves on 127.0.0.1 (a free port, ``upstream.url``)
from its own asyncio loop in a background thread; ``python -m examples.gateway.replay --root fixtures=fixtures``
serves in the foreground. Written on raw asyncio streams (:class:`LoopServer`, which the tests' server in
``tests/helpers/http_server.py`` is built on too) so that what goes on the wire is under control: every write is
one HTTP chunk, flushed, and the pauses are real.

Any method and path (``POST /v1/chat/completions``, ``/v1/responses``, ``/v1/messages`` ...) answers with the
stream named by the query; the request body is read and kept, not interpreted (the SDKs add the query through
``extra_query=`` / ``default_query=``):

- ``file=<root>/<path>`` (or a header ``x-replay-file: <root>/<path>``, for clients that cannot add a query):
  that file of a root, with the Content-Type of its suffix (``.sse``:
  ``text/event-stream``, ``.json``: ``application/json``, ``.ndjson`` / ``.jsonl``: ``application/x-ndjson``,
  ``.eventstream``: ``application/vnd.amazon.eventstream``), paced as a provider flushes it: one write per event
  (one event in five coalesced with the next), events longer than a random 1 to ``maxchunk`` bytes (default 512)
  split, and after an event, with probability ``pause`` (default 0.3), a pause of up to ``delay`` seconds (default
  0.002); ``seed`` (default 0) fixes the randomness. ``gzip=1``: ``Content-Encoding: gzip``, flushed per write.
  ``cut=N``: the connection is closed after N body bytes, inside an HTTP chunk.
- ``status=<code>``: that status with a JSON error body in the shape of ``shape=openai`` (default) or
  ``anthropic``.
- ``/endless?flavor=F``, or any path with ``endless=F``: a stream that never ends, an event every ``interval``
  seconds (default 0.005); ``events=N`` goes silent after N events but keeps the connection open. ``F``:
  ``chat`` (default; Chat Completions chunks, no usage) or ``anthropic`` (a Messages stream whose
  ``message_start`` carries usage).

Every response is recorded (:attr:`ReplayServer.outcomes`, by ``token=`` from the query, else by request number):
``complete`` when the whole body was written, ``cut`` after ``cut=``, ``eof`` when the client closed the connection
(what :meth:`ReplayServer.wait_outcome` waits for), or the name of the write error. :attr:`ReplayServer.requests`
keeps what each request asked for (method, target, headers, body). With ``log_sends=True`` the server also notes,
for each body write of a replayed file, how many body bytes had been sent and when (``time.monotonic()``, a clock
the processes of one machine share): :meth:`ReplayServer.take_sends` hands them over, by token (the load run
measures the latency a proxy adds from them).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import socket
import struct
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, TypeVar
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["CONTENT_TYPES", "REASONS", "LoopServer", "ReplayRequest", "ReplayServer", "content_type_for"]

#: The Content-Type a replayed file announces, by suffix (anything else: ``text/event-stream``).
CONTENT_TYPES = {
    ".sse": "text/event-stream",
    ".json": "application/json",
    ".ndjson": "application/x-ndjson",
    ".jsonl": "application/x-ndjson",
    ".eventstream": "application/vnd.amazon.eventstream",
}

#: The reason phrase of each status the servers send.
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests"}
REASONS.update({500: "Internal Server Error", 503: "Service Unavailable", 529: "Overloaded"})
_GONE = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
_Server = TypeVar("_Server", bound="LoopServer")


def content_type_for(path: Path) -> str:
    """The Content-Type a file is served with (by its suffix)."""
    return CONTENT_TYPES.get(path.suffix, "text/event-stream")


@dataclass
class ReplayRequest:
    """One request as the replay server received it (header names lowercased)."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    number: int = 0  #: its place among the server's requests (1 for the first)
    path: str = field(init=False)
    query: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.target)
        self.path = unquote(parts.path)
        self.query = dict(parse_qsl(parts.query))


class LoopServer:
    """An HTTP/1.1 server on raw asyncio streams, so that what goes on the wire is under control: in its own asyncio
    loop in a background thread (``with server:``, bound to a free port unless ``port`` says) or in the foreground
    (:meth:`serve_forever`). Every request is read whole (body included) and kept in :attr:`requests`; a subclass
    answers it in :meth:`_respond`. How each response ended is recorded by token (:meth:`_record`,
    :meth:`wait_outcome`); :attr:`connections` counts the open client connections. The replay upstream below and
    the tests' ``StreamServer`` (``tests/helpers/http_server.py``) are the two."""

    thread_name = "loop-server"

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, backlog: int = 100) -> None:
        self.host = host
        self.port = port
        self.backlog = backlog
        self.requests: list[ReplayRequest] = []
        self.outcomes: dict[str, str] = {}
        self.connections = 0  # currently open client connections
        self._cond = threading.Condition()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._server: Optional[asyncio.base_events.Server] = None
        self._thread: Optional[threading.Thread] = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def url(self) -> str:
        """``http://host:port`` (no trailing slash)."""
        return f"http://{self.host}:{self.port}"

    # ---------------------------------------------------------------------------------------------- lifecycle

    def __enter__(self: _Server) -> _Server:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name=self.thread_name, daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError(f"{type(self).__name__} did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        loop = self._loop
        if loop is not None and self._thread is not None:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(10)

    def _run(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        start = asyncio.start_server(self._handle, self.host, self.port, backlog=self.backlog)
        self._server = loop.run_until_complete(start)
        self.port = self._server.sockets[0].getsockname()[1]
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def serve_forever(self) -> None:
        """Serve in the running loop until cancelled (the foreground server of ``main``)."""
        self._server = await asyncio.start_server(self._handle, self.host, self.port, backlog=self.backlog)
        self.port = self._server.sockets[0].getsockname()[1]
        print(f"replaying on {self.url}", flush=True)
        async with self._server:
            await self._server.serve_forever()

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # ---------------------------------------------------------------------------------------------- recording

    def wait_outcome(self, token: str, timeout: float = 5.0) -> Optional[str]:
        """How the response of ``token`` ended (``complete``, ``eof`` ...), or None if it has not by ``timeout``."""
        with self._cond:
            self._cond.wait_for(lambda: token in self.outcomes, timeout)
            return self.outcomes.get(token)

    def take_outcomes(self) -> dict[str, str]:
        """:attr:`outcomes` so far, handed over and forgotten (a long run keeps them bounded)."""
        with self._cond:
            outcomes, self.outcomes = self.outcomes, {}
            return outcomes

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """True once no client connection is open."""
        with self._cond:
            return self._cond.wait_for(lambda: self.connections == 0, timeout)

    def _record(self, token: Optional[str], outcome: str) -> None:
        """Note how the response of ``token`` ended (the first note stays; no token: nothing noted)."""
        if token is None:
            return
        with self._cond:
            self.outcomes.setdefault(token, outcome)
            self._cond.notify_all()

    def _count(self, delta: int) -> None:
        with self._cond:
            self.connections += delta
            self._cond.notify_all()

    # ------------------------------------------------------------------------------------------------ serving

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._count(1)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        abort = False
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                with self._cond:
                    self.requests.append(request)
                    request.number = len(self.requests)
                keep, abort = await self._respond(request, reader, writer)
                if not keep:
                    return
        except (*_GONE, ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:  # shutting down: end quietly (Python 3.11 logs a handler that was cancelled)
            pass
        finally:
            self._tasks.discard(task)
            if abort and sock is not None:  # SO_LINGER 0: closing sends a reset instead of a FIN
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
            else:
                writer.close()
            self._count(-1)

    async def _respond(
        self, req: ReplayRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[bool, bool]:
        """Answer one request; returns (the connection may carry another, reset it)."""
        raise NotImplementedError


class ReplayServer(LoopServer):
    """The replay upstream (see the module docstring). ``roots`` maps the first part of ``file=`` to a folder."""

    thread_name = "gateway-replay"

    def __init__(
        self, roots: dict[str, Path], *, host: str = "127.0.0.1", port: int = 0, log_sends: bool = False
    ) -> None:
        super().__init__(host, port)
        self.roots = {name: Path(folder).resolve() for name, folder in roots.items()}
        self.log_sends = log_sends
        self._sends: dict[str, list[tuple[int, float]]] = {}

    def take_sends(self) -> dict[str, list[tuple[int, float]]]:
        """The send log so far (``log_sends=True``): token -> ``(body bytes sent, time.monotonic())`` after each
        write; handed over and forgotten."""
        with self._cond:
            sends, self._sends = self._sends, {}
            return sends

    async def _respond(
        self, req: ReplayRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[bool, bool]:
        return await self._answer(req, req.query.get("token") or str(req.number), reader, writer), False

    async def _answer(
        self, req: ReplayRequest, token: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Serve one request; returns whether the connection may carry another."""
        q = req.query
        if req.path == "/endless" or "endless" in q:
            return await self._endless(q, token, reader, writer)
        if "status" in q:
            status = int(q["status"])
            body = _error_body(status, q.get("shape", "openai"))
            return await self._stream(writer, token, body, "application/json", q, status)
        name = q.get("file") or req.headers.get("x-replay-file", "")
        root, _, rel = name.partition("/")
        base = self.roots.get(root)
        file = (base / rel).resolve() if base is not None else None
        if base is None or file is None or base not in file.parents or not file.is_file():
            self._record(token, "not found")
            body = json.dumps({"error": {"type": "not_found", "message": f"no such file: {name!r}"}}).encode()
            return await self._stream(writer, token, body, "application/json", {}, 404)
        return await self._stream(writer, token, file.read_bytes(), content_type_for(file), q)

    async def _stream(
        self, writer: asyncio.StreamWriter, token: str, body: bytes, ctype: str, q: dict[str, str], status: int = 200
    ) -> bool:
        rng = random.Random(int(q.get("seed", 0)))
        delay = float(q.get("delay", 0.002))
        pause = float(q.get("pause", 0.3))
        cut = int(q["cut"]) if "cut" in q else None
        pieces, paused = _pace(body, event_ends(body, ctype), rng, int(q.get("maxchunk", 512)), pause)
        extra = ""
        if q.get("gzip") == "1":
            compressor = zlib.compressobj(wbits=31)
            pieces = [compressor.compress(p) + compressor.flush(zlib.Z_SYNC_FLUSH) for p in pieces]
            pieces.append(compressor.flush())  # never empty: each write ends with a flush marker, this with the trailer
            paused.append(False)
            extra = "Content-Encoding: gzip\r\n"
        writer.write(_head(status, ctype, extra))
        sent = 0
        log: Optional[list[tuple[int, float]]] = None
        if self.log_sends:
            with self._cond:
                log = self._sends.setdefault(token, [])
        try:
            for i, piece in enumerate(pieces):
                if cut is not None and sent + len(piece) >= cut:
                    writer.write(b"%x\r\n" % len(piece) + piece[: cut - sent])  # promises more than is sent
                    await writer.drain()
                    self._record(token, "cut")
                    return False
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                sent += len(piece)
                if log is not None:
                    log.append((sent, time.monotonic()))
                await writer.drain()
                if delay and paused[i]:
                    await asyncio.sleep(rng.uniform(0, delay))
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except _GONE as exc:
            self._record(token, type(exc).__name__)
            return False
        self._record(token, "complete")
        return True

    async def _endless(
        self, q: dict[str, str], token: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        interval = float(q.get("interval", 0.005))
        limit = int(q["events"]) if "events" in q else None
        anthropic = (q.get("endless") or q.get("flavor")) == "anthropic"
        writer.write(_head(200, "text/event-stream"))
        eof = asyncio.ensure_future(reader.read(1))  # completes when the client closes its side
        try:
            if anthropic:
                await _send(writer, _anthropic_start())
            i = 0
            while True:
                if limit is None or i < limit:
                    await _send(writer, _anthropic_tick(i) if anthropic else _chat_tick(i))
                    i += 1
                done, _ = await asyncio.wait({eof}, timeout=interval)
                if done:
                    self._record(token, "eof")
                    return False
        except _GONE as exc:
            self._record(token, type(exc).__name__)
            return False
        except asyncio.CancelledError:
            self._record(token, "cancelled")
            raise
        finally:
            eof.cancel()


_SSE_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def event_ends(body: bytes, ctype: str) -> list[int]:
    """The offsets at which the events of ``body`` end, by its Content-Type: after each blank line (SSE), each
    line (NDJSON), each message (AWS event-stream, by the length in its prelude); none for a JSON body."""
    media = ctype.partition(";")[0].strip()
    if media == "text/event-stream":
        return [m.end() for m in _SSE_EVENT_END.finditer(body)]
    if media == "application/x-ndjson":
        return [i + 1 for i, byte in enumerate(body) if byte == 0x0A]
    if media == "application/vnd.amazon.eventstream":
        ends, pos = [], 0
        while pos + 4 <= len(body):
            pos += max(int.from_bytes(body[pos : pos + 4], "big"), 16)
            ends.append(min(pos, len(body)))
        return ends
    return []


def _pace(
    body: bytes, ends: list[int], rng: random.Random, maxchunk: int, pause: float
) -> tuple[list[bytes], list[bool]]:
    """The writes ``body`` goes out in, and after which of them to pause. As a provider flushes: one write per
    event, events longer than ``maxchunk`` in random pieces, one event in five coalesced with the next; a pause
    (probability ``pause``) after a write that ends an event. Without known event ends: random pieces of 1 to
    ``maxchunk`` bytes, each followed by a pause with probability ``pause``."""
    flushes = iter(sorted({end for end in ends if rng.random() >= 0.2} | {len(body)}))
    pieces, paused = [], []
    pos, flush = 0, next(flushes)
    while pos < len(body):
        while flush <= pos:
            flush = next(flushes)
        end = min(flush, pos + rng.randint(1, maxchunk))
        pieces.append(body[pos:end])
        paused.append((end == flush or not ends) and rng.random() < pause)
        pos = end
    return pieces, paused


async def _read_request(reader: asyncio.StreamReader) -> Optional[ReplayRequest]:
    """The next request on the connection, body included (Content-Length or chunked); None at a clean end."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if not size:
                await reader.readuntil(b"\r\n")  # the end of the (empty) trailer section
                break
            body += (await reader.readexactly(size + 2))[:-2]
    else:
        body = await reader.readexactly(int(headers.get("content-length") or 0))
    return ReplayRequest(method, target, headers, body)


def _head(status: int, ctype: str, extra: str = "") -> bytes:
    reason = REASONS.get(status, "Status")
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nTransfer-Encoding: chunked\r\n{extra}\r\n"
    return head.encode("latin-1")


async def _send(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(b"%x\r\n%s\r\n" % (len(data), data))
    await writer.drain()


def _chat_tick(i: int) -> bytes:
    choices = [{"index": 0, "delta": {"content": f"tick {i} "}}]
    chunk = {"id": "chatcmpl-endless", "object": "chat.completion.chunk", "model": "endless", "choices": choices}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _anthropic_start() -> bytes:
    message: dict[str, Any] = {"id": "msg_endless", "type": "message", "role": "assistant", "model": "endless"}
    message.update(content=[], stop_reason=None, stop_sequence=None, usage={"input_tokens": 12, "output_tokens": 1})
    start = {"type": "message_start", "message": message}
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    return b"".join(
        b"event: %s\ndata: %s\n\n" % (str(e["type"]).encode(), json.dumps(e).encode()) for e in (start, block)
    )


def _anthropic_tick(i: int) -> bytes:
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"tick {i} "}}
    return b"event: content_block_delta\ndata: " + json.dumps(delta).encode() + b"\n\n"


def _error_body(status: int, shape: str) -> bytes:
    message = "rate limited" if status == 429 else f"status {status}"
    if shape == "anthropic":
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
    kind = {429: "rate_limit_exceeded"}.get(status, "server_error")
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": kind}}).encode()


def main(argv: Optional[list[str]] = None) -> None:
    """``python -m examples.gateway.replay [--port N] --root NAME=FOLDER ...``: serve until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m examples.gateway.replay", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--root", action="append", default=[], metavar="NAME=FOLDER", help="a folder to serve")
    args = parser.parse_args(argv)
    roots = dict(root.split("=", 1) for root in args.root) or {"fixtures": "fixtures"}
    server = ReplayServer({name: Path(folder) for name, folder in roots.items()}, host=args.host, port=args.port)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.serve_forever())


if __name__ == "__main__":
    main()
