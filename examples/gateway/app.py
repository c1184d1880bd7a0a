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
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional
from urllib.parse import quote

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ssewire import StreamTap
from ssewire.names import ProviderName

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

__all__ = ["HOP_BY_HOP", "PATH_PROVIDERS", "create_app", "provider_for_path", "upstream_client"]

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
    no cap on connections (each stream holds one; the clients bound them), 100 kept alive, reads may wait 300 s."""
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=100)
    return httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=300.0), limits=limits)


def provider_for_path(path: str, paths: Sequence[tuple[str, ProviderName]] = PATH_PROVIDERS) -> ProviderName:
    """The provider ``paths`` gives for the end of ``path`` (``auto`` when none does)."""
    for suffix, provider in paths:
        if path.endswith(suffix):
            return provider
    return "auto"


def _without_hop_by_hop(
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


def _request_fields(body: bytes, content_type: Optional[str]) -> tuple[Optional[str], Optional[bool]]:
    """``model`` and ``stream`` of a JSON request body (None where absent or not JSON)."""
    if not body or len(body) > _JSON_LIMIT or "json" not in (content_type or ""):
        return None, None
    try:
        fields = json.loads(body)
    except ValueError:
        return None, None
    if not isinstance(fields, dict):
        return None, None
    model, stream = fields.get("model"), fields.get("stream")
    return (model if isinstance(model, str) else None), (stream if isinstance(stream, bool) else None)


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


class _Exchange:
    """One upstream response on its way to one client: the chunks, the tap, and the record at the end."""

    def __init__(
        self, upstream: httpx.Response, tap: StreamTap, done: Callable[[_Exchange], None], tapping: bool = True
    ) -> None:
        self.upstream = upstream
        self.tap = tap
        self.tapping = tapping
        self.complete = False  # the upstream body ended
        self.upstream_error: Optional[str] = None
        self.finished = False
        self._done = done

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        """The upstream's raw chunks, each fed to the tap first (when tapping). A transport error mid-body
        propagates (the server then cuts the client's connection)."""
        feed = self.tap.feed if self.tapping else None
        try:
            async for chunk in self.upstream.aiter_raw():
                if feed is not None:
                    feed(chunk)
                yield chunk
            self.complete = True
        except httpx.TransportError as exc:
            self.upstream_error = f"{type(exc).__name__}: {exc}"
            raise
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


class _Gateway:
    """The state behind the app: upstream base URL, httpx client, recorder, telemetry."""

    def __init__(
        self,
        upstream_base_url: str,
        provider: ProviderName,
        paths: Sequence[tuple[str, ProviderName]],
        record: Optional[RecordCallback],
        telemetry: Optional[Telemetry],
        client: Optional[httpx.AsyncClient],
        tap: bool = True,
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
        self.owns_client = client is None
        self.client = client or upstream_client()

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if self.owns_client:
                await self.client.aclose()

    def _url(self, scope: Scope) -> str:
        path = scope.get("raw_path") or quote(scope["path"]).encode()
        query = scope.get("query_string") or b""
        return self.base + path.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")

    async def handle(self, request: Request) -> Response:
        body = await request.body()
        path = request.url.path
        provider = self.provider if self.provider != "auto" else provider_for_path(path, self.paths)
        model, stream = _request_fields(body, request.headers.get("content-type"))
        headers = _without_hop_by_hop(request.headers.raw, frozenset({"host", "content-length"}))
        if not any(name.lower() == b"accept-encoding" for name, _ in headers):
            headers.append((b"accept-encoding", b"identity"))
        sent = _Sent(request.method, path, provider, model, stream, time.monotonic())
        if self.telemetry is not None:
            sent.span = self.telemetry.start(model, self.address, self.port)
        outgoing = self.client.build_request(request.method, self._url(request.scope), headers=headers, content=body)
        try:
            upstream = await self.client.send(outgoing, stream=True)
        except httpx.HTTPError as exc:
            tap = StreamTap(provider, started=sent.at)
            tap.close()
            self._report(sent, tap, 502, None, complete=False, upstream_error=f"{type(exc).__name__}: {exc}")
            message = f"the upstream could not be reached: {type(exc).__name__}"
            return JSONResponse({"error": {"type": "bad_gateway", "message": message}}, status_code=502)
        # made once the headers are in (it needs their Content-Encoding), timed from when the request was sent
        tap = StreamTap(provider, content_encoding=upstream.headers.get("content-encoding"), started=sent.at)
        status, content_type = upstream.status_code, upstream.headers.get("content-type")

        def finished(exchange: _Exchange) -> None:
            self._report(
                sent, tap, status, content_type, complete=exchange.complete, upstream_error=exchange.upstream_error
            )

        exchange = _Exchange(upstream, tap, finished, self.tapping)
        return _ProxyResponse(exchange, status, _without_hop_by_hop(upstream.headers.raw))

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
) -> Starlette:
    """The gateway in front of ``upstream_base_url`` (see the module docstring). ``provider``: the one every
    stream is read as (``auto``: from the path through ``paths``, else recognised); ``record``: called with a
    :class:`~examples.gateway.record.Record` after each request (e.g. a
    :class:`~examples.gateway.record.Recorder`); ``tracer_provider`` / ``meter_provider``: OpenTelemetry output;
    ``client``: the ``AsyncClient`` (httpx2's, or httpx's) to send with (else :func:`upstream_client`, closed at
    shutdown); ``tap=False``:
    forward without parsing (the baseline the load run compares with: records then carry no stream content)."""
    telemetry = None
    if tracer_provider is not None or meter_provider is not None:
        from .telemetry import Telemetry

        telemetry = Telemetry(tracer_provider, meter_provider)
    gateway = _Gateway(upstream_base_url, provider, paths, record, telemetry, client, tap)
    route = Route("/{path:path}", gateway.handle, methods=list(METHODS))
    return Starlette(routes=[route], lifespan=gateway.lifespan)
