"""The gateway: an ASGI reverse proxy (Starlette) that forwards an upstream LLM stream byte for byte while a
:class:`ssewire.StreamTap` records its result, usage and timings.

``create_app(upstream_base_url, ...)`` returns a Starlette app whose one route takes every method and path:

- The request goes upstream as it came: method, raw path (appended to the base URL's path), raw query, body and
  headers, less the hop-by-hop ones, ``Host`` and ``Content-Length`` (httpx sets both). A client that sent no
  ``Accept-Encoding`` gets ``identity`` asked for it, so that the bytes forwarded are bytes it can read.
- The response comes back with the upstream's status and headers (less the hop-by-hop ones) and its body as
  ``aiter_raw()`` gives it: chunk for chunk, still compressed when the upstream compressed it. Every status is
  forwarded that way, a non-2xx error body included. Each chunk is fed to the tap before it is sent on (a body
  that is not a stream, such as an error body or a whole JSON completion, is recorded as the tap reads it: the
  error it carries, or a result saying it was no stream).
- The provider the tap reads is ``provider=`` when given, else the one the path names (:data:`PATH_PROVIDERS`,
  ``/v1/messages``: ``anthropic``, ``/v1/chat/completions``: ``openai-chat``, ``/v1/responses``: ``openai`` ...),
  else ``auto`` (recognised from the first event).
- When the body ends, the upstream's connection fails mid-body (the client's connection is then cut as well, so
  that it sees the truncation instead of a clean end) or the client goes away (Starlette cancels the response),
  the upstream response is closed (a client that left closes the upstream connection), the tap closed, and a
  :class:`~examples.gateway.record.Record` handed to ``record``. With a ``tracer_provider`` / ``meter_provider``
  the request also gets a span with ssewire's ``gen_ai.*`` attributes and the GenAI client metrics
  (:mod:`examples.gateway.telemetry`).
- An upstream that cannot be reached is a 502 with a JSON error body (and a record with ``upstream_error``).

Hostile or broken input ends in bounded time and memory (:class:`~examples.gateway.limits.Limits`, ``limits=``),
answered with a JSON error body in the shape of the route's provider (:mod:`examples.gateway.errors`), and is
never sent upstream:

- a request body over ``max_body``: 413 (a ``Content-Length`` over it before a byte is read; a chunked upload as
  its count passes it), read incrementally, so a request holds at most about twice ``max_body``; a body slower
  than ``body_timeout``: 408;
- a JSON body (``application/json`` or ``+json``, up to 4 MiB: what the gateway parses for the model name) that
  does not parse, nested too deep included: 400;
- a path that is not ``/...`` or that has a dot segment (``.`` / ``..``), literal or percent-encoded (once or
  twice), also where ``%2F``, a backslash or a ``;`` parameter would make one: 400 (nothing leaves the upstream's
  base path);
- an upstream silent for ``idle_timeout`` or not done after ``total_timeout``: before its response head, 504;
  during its body, the upstream connection is closed and the client's stream ends with an error event in the
  provider's shape (an SSE ``event: error`` or an NDJSON line; a body that cannot take one -- compressed, a JSON
  array, AWS event-stream, or cut mid-event -- has the client's connection cut instead), recorded like the rest.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional
from urllib.parse import quote, unquote

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ssewire import StreamTap
from ssewire.names import ProviderName

from .errors import ErrorKind, error_event, error_response_body
from .limits import DEFAULT_LIMITS, Limits
from .record import Record, RecordCallback

if TYPE_CHECKING:
    import httpx
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, TracerProvider

    from .telemetry import Telemetry

if not TYPE_CHECKING:
    try:  # httpx's maintained fork where installed (Python 3.11+): its connection pool's upkeep is linear in the
        import httpx2 as httpx  # connections it holds, httpx's quadratic (the gateway's CPU at 200 streams)
    except ImportError:
        import httpx

__all__ = [
    "HOP_BY_HOP",
    "PATH_PROVIDERS",
    "ClientOwner",
    "Limits",
    "Refused",
    "UpstreamTimeout",
    "create_app",
    "http_package",
    "provider_for_path",
    "read_body",
    "upstream_client",
    "without_hop_by_hop",
]

log = logging.getLogger(__name__)

#: Headers that belong to one connection, never forwarded (RFC 9110 7.6.1), with the ones a ``Connection`` names.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",  # codespell:ignore te
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)

#: How a path's end names the provider of its stream (the first match wins).
PATH_PROVIDERS: tuple[tuple[str, ProviderName], ...] = (
    ("/v1/messages", "anthropic"),
    ("/v1/chat/completions", "openai-chat"),
    ("/v1/responses", "openai"),
    ("/converse-stream", "bedrock-converse"),
    (":streamGenerateContent", "gemini"),
    ("/api/chat", "ollama"),
    ("/api/generate", "ollama"),
)

#: The methods forwarded (HEAD comes with GET).
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_JSON_LIMIT = 4 << 20  # request bodies larger than this are not parsed for the model name


def upstream_client() -> httpx.AsyncClient:
    """The client the gateway sends with unless given one: httpx2's ``AsyncClient`` where installed, else httpx's;
    no cap on connections (each stream holds one; the clients bound them), 100 kept alive, reads may wait 300 s
    (the gateway sends each request with its own read timeout: ``Limits.idle_timeout``)."""
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=100)
    return httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=300.0), limits=limits)


def provider_for_path(path: str, paths: Sequence[tuple[str, ProviderName]] = PATH_PROVIDERS) -> ProviderName:
    """The provider ``paths`` gives for the end of ``path`` (``auto`` when none does)."""
    for suffix, provider in paths:
        if path.endswith(suffix):
            return provider
    return "auto"


def without_hop_by_hop(
    raw: Iterable[tuple[bytes, bytes]], drop: frozenset[str] = frozenset()
) -> list[tuple[bytes, bytes]]:
    """``raw`` less the hop-by-hop headers, those the ``Connection`` header names and ``drop``; names lowercased
    (as ASGI wants them), values and order kept."""
    pairs = list(raw)
    named = {
        token.strip().lower()
        for name, value in pairs
        if name.lower() == b"connection"
        for token in value.decode("latin-1").split(",")
    }
    skip = HOP_BY_HOP | named | drop
    return [(name.lower(), value) for name, value in pairs if name.decode("latin-1").lower() not in skip]


class Refused(Exception):
    """A request the gateway answers itself, never sending it upstream: ``status`` and an error ``kind``."""

    def __init__(self, status: int, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def http_package(obj: Any) -> Any:
    """The HTTP client package (``httpx`` or ``httpx2``) that ``obj``, a client or a response, is of: its
    exceptions and ``Timeout`` are the ones to use with it."""
    for cls in type(obj).__mro__:  # (a subclass of a client is the client's package's)
        package = cls.__module__.partition(".")[0]
        if package in ("httpx", "httpx2"):
            return sys.modules[package]
    return httpx


class UpstreamTimeout(Exception):
    """The upstream stalled mid-body and its body cannot take an error event: the client's connection is cut."""


def _is_json(content_type: Optional[str]) -> bool:
    """Whether a Content-Type is JSON (``application/json``, ``application/*+json``; not NDJSON)."""
    media = (content_type or "").partition(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _request_fields(body: bytes, content_type: Optional[str]) -> tuple[Optional[str], Optional[bool]]:
    """``model`` and ``stream`` of a JSON request body (None where absent, or the body is not JSON or over 4 MiB).
    Raises :class:`Refused` (400) for a JSON body that does not parse, nested too deep included."""
    if not body or len(body) > _JSON_LIMIT or not _is_json(content_type):
        return None, None
    try:
        fields = json.loads(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        reason = "nested too deep" if isinstance(exc, RecursionError) else type(exc).__name__
        raise Refused(400, "invalid_request", f"the request body is not valid JSON ({reason})") from None
    if not isinstance(fields, dict):
        return None, None
    model, stream = fields.get("model"), fields.get("stream")
    return (model if isinstance(model, str) else None), (stream if isinstance(stream, bool) else None)


_SEPARATORS = re.compile(r"[/\\]")
_DECODINGS = 3  # percent-decodings looked through (double encoding, and one more)


def _checked_path(raw_path: bytes) -> str:
    """``raw_path`` as it goes upstream (appended to the base URL's path, unchanged), once it is known not to
    leave that base path. Raises :class:`Refused` (400) unless it starts with ``/`` and no segment of it, as sent
    or percent-decoded up to three times and split at ``/`` and ``\\``, is ``.`` or ``..`` (a ``;`` parameter
    dropped)."""
    text = raw_path.decode("latin-1")
    if not text.startswith("/"):
        raise Refused(400, "invalid_request", "the request target is not a path")
    seen = text
    for _ in range(_DECODINGS + 1):
        for piece in _SEPARATORS.split(seen):
            if piece.partition(";")[0] in (".", ".."):
                raise Refused(400, "invalid_request", "the path has a dot segment")
        decoded = unquote(seen, encoding="latin-1")
        if decoded == seen:
            break
        seen = decoded
    return text


async def read_body(request: Request, limit: int, timeout: Optional[float]) -> bytes:
    """The request body, read chunk by chunk: :class:`Refused` 413 as soon as it is known to be over ``limit``
    bytes (its ``Content-Length``, before reading; else the count so far), 408 when it takes over ``timeout``
    seconds. Holds at most ``limit`` bytes plus one chunk (then their join)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise Refused(413, "request_too_large", f"the request body is over {limit} bytes")
    parts: list[bytes] = []
    size = 0
    try:
        with anyio.fail_after(timeout):
            async for part in request.stream():
                size += len(part)
                if size > limit:
                    raise Refused(413, "request_too_large", f"the request body is over {limit} bytes")
                parts.append(part)
    except TimeoutError:
        raise Refused(408, "timeout", f"the request body took over {timeout} s") from None
    return b"".join(parts)


def _at_boundary(content_type: Optional[str], before: bytes, last: bytes) -> bool:
    """Whether a body whose last two chunks were ``before`` and ``last`` stopped between two events (nothing sent
    yet counts): after a blank line (SSE) or a line end (NDJSON)."""
    tail = (before[-4:] + last)[-4:]
    if not tail:
        return True
    if (content_type or "").partition(";")[0].strip().lower() == "text/event-stream":
        return tail.endswith((b"\n\n", b"\r\r", b"\n\r", b"\n\r\n"))
    return tail.endswith(b"\n")


@dataclass
class _Sent:
    """A request as it went upstream: what the record and the span need of it."""

    method: str
    path: str
    provider: ProviderName
    model: Optional[str]
    stream: Optional[bool]
    at: float  # time.monotonic() when it was sent
    span: Optional[Span] = None


async def _next_before(chunks: AsyncIterator[bytes], deadline: float) -> Optional[bytes]:
    """The next chunk of ``chunks`` if it comes before ``deadline`` (``time.monotonic()``), else None (the read
    cancelled). StopAsyncIteration propagates."""
    with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
        return await chunks.__anext__()
    return None


class _Exchange:
    """One upstream response on its way to one client: the chunks, the tap, and the record at the end.

    ``deadline`` (a ``time.monotonic()`` reading, or None) ends the body however busy the upstream is; the idle
    bound is the upstream read timeout (``idle``, seconds, named in the message). ``stalled`` makes the bytes that
    end a stream with an error in the provider's shape (None: the body cannot take one)."""

    def __init__(
        self,
        upstream: httpx.Response,
        tap: StreamTap,
        done: Callable[[_Exchange], None],
        tapping: bool = True,
        *,
        idle: Optional[float] = None,
        deadline: Optional[float] = None,
        stalled: Optional[Callable[[str], Optional[bytes]]] = None,
    ) -> None:
        self.upstream = upstream
        self.http = http_package(upstream)
        self.tap = tap
        self.tapping = tapping
        self.complete = False  # the upstream body ended
        self.upstream_error: Optional[str] = None
        self.finished = False
        self.idle = idle
        self.deadline = deadline
        self._stalled = stalled
        self._done = done

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        """The upstream's raw chunks, each fed to the tap first (when tapping). A transport error mid-body
        propagates (the server then cuts the client's connection). An upstream past its idle or total timeout is
        closed, then the stream ends with an error event (fed to the tap too) where it stopped between events,
        else :class:`UpstreamTimeout` propagates."""
        feed = self.tap.feed if self.tapping else None
        deadline, idle = self.deadline, self.idle
        raw = self.upstream.aiter_raw()
        before = last = b""
        stall: Optional[str] = None
        try:
            try:
                while True:
                    if deadline is not None and (idle is None or deadline - time.monotonic() <= idle):
                        chunk = await _next_before(raw, deadline)  # the total timeout is nearer than the idle one
                        if chunk is None:
                            stall = "the upstream did not finish within the total timeout"
                            break
                    else:
                        chunk = await raw.__anext__()
                    if feed is not None:
                        feed(chunk)
                    before, last = last, chunk
                    yield chunk
            except StopAsyncIteration:
                self.complete = True
            except self.http.ReadTimeout:
                stall = f"the upstream sent nothing for {idle} s"
            except self.http.TransportError as exc:
                self.upstream_error = f"{type(exc).__name__}: {exc}"
                raise
            if stall is not None:
                self.upstream_error = f"timeout: {stall}"
                with anyio.CancelScope(shield=True):
                    await self.upstream.aclose()  # before the client hears of it
                tail = None if self._stalled is None else self._stalled(stall)
                if tail is None or not _at_boundary(self.upstream.headers.get("content-type"), before, last):
                    raise UpstreamTimeout(stall)
                if feed is not None:
                    feed(tail)
                yield tail
        finally:
            await self.finish()

    async def finish(self) -> None:
        """Close the upstream response and the tap, then report (once; safe under cancellation)."""
        if self.finished:
            return
        self.finished = True
        with anyio.CancelScope(shield=True):
            await self.upstream.aclose()
        self.tap.close()
        self._done(self)


class _ProxyResponse(StreamingResponse):
    """A streaming response that finishes its exchange however it ends: body done, client gone, or cancelled."""

    def __init__(self, exchange: _Exchange, status_code: int, raw_headers: list[tuple[bytes, bytes]]) -> None:
        self.exchange = exchange
        self._chunks = exchange.chunks()
        super().__init__(self._chunks, status_code=status_code)
        self.raw_headers = raw_headers  # the upstream's, in order, repeated names kept

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await self._chunks.aclose()  # a generator left at its yield: run its finally now
                await self.exchange.finish()


def _error_response(
    provider: ProviderName, status: int, kind: ErrorKind, message: str, *, close: bool = False
) -> Response:
    """A JSON error response in ``provider``'s shape; ``close``: the connection is closed after it (a request body
    may be left unread)."""
    headers = {"connection": "close"} if close else None
    body = error_response_body(provider, kind, message, status)
    return Response(body, status_code=status, media_type="application/json", headers=headers)


class ClientOwner:
    """An app's state that sends with ``client``, and closes it at shutdown when it made it (``owns_client``)."""

    client: Any
    owns_client: bool

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """The app's lifespan: nothing at start-up; the client closed at shutdown when this made it."""
        try:
            yield
        finally:
            if self.owns_client:
                await self.client.aclose()


class _Gateway(ClientOwner):
    """The state behind the app: upstream base URL, httpx client, recorder, telemetry, limits."""

    def __init__(
        self,
        upstream_base_url: str,
        provider: ProviderName,
        paths: Sequence[tuple[str, ProviderName]],
        record: Optional[RecordCallback],
        telemetry: Optional[Telemetry],
        client: Optional[httpx.AsyncClient],
        tap: bool = True,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.base = upstream_base_url.rstrip("/")
        upstream = httpx.URL(self.base)
        self.address = upstream.host or None
        self.port = upstream.port or {"http": 80, "https": 443}.get(upstream.scheme)
        self.provider = provider
        self.paths = paths
        self.record = record
        self.telemetry = telemetry
        self.tapping = tap
        self.limits = limits
        self.owns_client = client is None
        self.client = client or upstream_client()
        self.http = http_package(self.client)  # (a client given may be httpx's while httpx2 is installed)
        timeout = self.client.timeout  # the client's, with the idle timeout as its read timeout
        self.timeout: Any = self.http.Timeout(
            connect=timeout.connect, read=limits.idle_timeout, write=timeout.write, pool=timeout.pool
        )

    def _url(self, path: str, scope: Scope) -> str:
        query = scope.get("query_string") or b""
        return self.base + path + ("?" + query.decode("latin-1") if query else "")

    async def handle(self, request: Request) -> Response:
        path = request.url.path
        provider = self.provider if self.provider != "auto" else provider_for_path(path, self.paths)
        try:
            target = _checked_path(request.scope.get("raw_path") or quote(path).encode())
            body = await read_body(request, self.limits.max_body, self.limits.body_timeout)
            model, stream = _request_fields(body, request.headers.get("content-type"))
        except Refused as refused:
            log.info("refused %s %r: %s %s", request.method, path, refused.status, refused.message)
            return _error_response(provider, refused.status, refused.kind, refused.message, close=True)
        headers = without_hop_by_hop(request.headers.raw, frozenset({"host", "content-length"}))
        if not any(name.lower() == b"accept-encoding" for name, _ in headers):
            headers.append((b"accept-encoding", b"identity"))
        sent = _Sent(request.method, path, provider, model, stream, time.monotonic())
        if self.telemetry is not None:
            sent.span = self.telemetry.start(model, self.address, self.port)
        url = self._url(target, request.scope)
        outgoing = self.client.build_request(request.method, url, headers=headers, content=body, timeout=self.timeout)
        del body
        total = self.limits.total_timeout
        try:
            with anyio.fail_after(total):
                upstream = await self.client.send(outgoing, stream=True)
        except (self.http.HTTPError, TimeoutError) as exc:
            timed_out = isinstance(exc, (self.http.TimeoutException, TimeoutError))
            status = 504 if timed_out else 502
            tap = StreamTap(provider, started=sent.at)
            tap.close()
            error = f"timeout: {type(exc).__name__}: {exc}" if timed_out else f"{type(exc).__name__}: {exc}"
            self._report(sent, tap, status, None, complete=False, upstream_error=error)
            if timed_out:
                return _error_response(provider, 504, "timeout", f"the upstream timed out: {type(exc).__name__}")
            message = f"the upstream could not be reached: {type(exc).__name__}"
            return _error_response(provider, 502, "bad_gateway", message)
        # made once the headers are in (it needs their Content-Encoding), timed from when the request was sent
        encoding = upstream.headers.get("content-encoding")
        tap = StreamTap(provider, content_encoding=encoding, started=sent.at, max_inflated=self.limits.max_inflated)
        status, content_type = upstream.status_code, upstream.headers.get("content-type")

        def finished(exchange: _Exchange) -> None:
            self._report(
                sent, tap, status, content_type, complete=exchange.complete, upstream_error=exchange.upstream_error
            )

        def stalled(message: str) -> Optional[bytes]:
            return error_event(provider, content_type, "timeout", message)

        identity = encoding is None or encoding.strip().lower() in ("", "identity")
        exchange = _Exchange(
            upstream,
            tap,
            finished,
            self.tapping,
            idle=self.limits.idle_timeout,
            deadline=None if total is None else sent.at + total,
            stalled=stalled if identity else None,
        )
        return _ProxyResponse(exchange, status, without_hop_by_hop(upstream.headers.raw))

    def _report(
        self,
        sent: _Sent,
        tap: StreamTap,
        status: int,
        content_type: Optional[str],
        *,
        complete: bool,
        upstream_error: Optional[str],
    ) -> None:
        """Build the record; telemetry, then the record callback (neither may break the proxy)."""
        record = Record(
            method=sent.method,
            path=sent.path,
            provider=sent.provider,
            status=status,
            content_type=content_type,
            result=tap.result,
            metrics=tap.metrics,
            # a client that closes once it has the terminal event (the OpenAI SDK does after [DONE]) did not leave early
            disconnected=not complete and upstream_error is None and tap.metrics.time_to_done is None,
            upstream_error=upstream_error,
            model=sent.model,
            stream=sent.stream,
            duration=time.monotonic() - sent.at,
        )
        try:
            if self.telemetry is not None:
                self.telemetry.finish(sent.span, record, self.address, self.port)
            if self.record is not None:
                self.record(record)
        except Exception:
            log.exception("recording %s %s failed", record.method, record.path)


def create_app(
    upstream_base_url: str,
    *,
    provider: ProviderName = "auto",
    paths: Sequence[tuple[str, ProviderName]] = PATH_PROVIDERS,
    record: Optional[RecordCallback] = None,
    tracer_provider: Optional[TracerProvider] = None,
    meter_provider: Optional[MeterProvider] = None,
    client: Optional[httpx.AsyncClient] = None,
    tap: bool = True,
    limits: Limits = DEFAULT_LIMITS,
) -> Starlette:
    """The gateway in front of ``upstream_base_url`` (see the module docstring). ``provider``: the one every
    stream is read as (``auto``: from the path through ``paths``, else recognised); ``record``: called with a
    :class:`~examples.gateway.record.Record` after each request (e.g. a
    :class:`~examples.gateway.record.Recorder`); ``tracer_provider`` / ``meter_provider``: OpenTelemetry output;
    ``client``: the ``AsyncClient`` (httpx2's, or httpx's) to send with (else :func:`upstream_client`, closed at
    shutdown); ``tap=False``: forward without parsing (the baseline the load run compares with: records then
    carry no stream content); ``limits``: the bounds on each request (:class:`~examples.gateway.limits.Limits`;
    also kept as ``app.state.limits``, where :mod:`.serve` reads the server's)."""
    telemetry = None
    if tracer_provider is not None or meter_provider is not None:
        from .telemetry import Telemetry

        telemetry = Telemetry(tracer_provider, meter_provider)
    gateway = _Gateway(upstream_base_url, provider, paths, record, telemetry, client, tap, limits)
    route = Route("/{path:path}", gateway.handle, methods=list(METHODS))
    app = Starlette(routes=[route], lifespan=gateway.lifespan)
    app.state.limits = limits
    return app
