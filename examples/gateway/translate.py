"""The gateway's translation routes: one API's endpoint in front of an upstream of any provider, the upstream's stream
re-written in the route's wire format by :func:`ssewire.atranscode` (or, for a request that did not ask for a
stream, its result answered whole by :func:`ssewire.render`).

``create_translating_app(upstream_base_url, upstream_provider, ...)`` serves:

- ``POST /v1/chat/completions``: OpenAI Chat Completions (``stream_options.include_usage`` honoured);
- ``POST /v1/messages``: Anthropic Messages;
- ``POST /v1/responses``: OpenAI Responses;
- ``POST /v1beta/models/{model}:streamGenerateContent`` and ``:generateContent``: Gemini;
- ``POST /api/chat``: the Vercel AI SDK UI message stream (what ``useChat`` posts to).

Each request goes to ``upstream_base_url`` + ``upstream_path`` (else the path it came on) with its query, headers
(less the hop-by-hop ones) and body unchanged: translating the request itself (messages, tool schemas) is not the
library's, and the tests' replay upstream picks its stream by query (or header); but a request that asked for a
whole answer asks the upstream for a stream (``"stream": true``, Chat's usage with it; Gemini's
``:streamGenerateContent?alt=sse``): the answer is built from it. An upstream error status is answered with the
same status and the route's error body; an upstream that cannot be reached is a 502, one silent past
``limits.idle_timeout`` or not answering within ``limits.total_timeout`` a 504. The request body is bounded as the
proxy bounds it (``limits``); a whole answer is built from the result as it grows, never from the whole upstream
body. A stream that fails, stalls past those timeouts or is cut upstream ends in the route's error shape (a whole
answer: the route's error body, 502), never as a clean stop (see :mod:`ssewire.encoders`).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Optional

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ssewire import Accumulator, Encoder, aiter_unified, atranscode, render
from ssewire.encoders import encoder_class
from ssewire.names import ProviderName, TargetName

from .app import ClientOwner, Refused, http_package, read_body, upstream_client, without_hop_by_hop
from .limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    import httpx

__all__ = ["ROUTES", "create_translating_app"]

#: The client's headers not sent upstream, beside the hop-by-hop ones (httpx sets the first two; the gateway asks
#: for an uncompressed body: the translated one is its own).
_NOT_FORWARDED = frozenset({"host", "content-length", "accept-encoding"})

#: Each route's path and the target it writes.
ROUTES: tuple[tuple[str, TargetName], ...] = (
    ("/v1/chat/completions", "openai-chat"),
    ("/v1/messages", "anthropic"),
    ("/v1/responses", "openai"),
    ("/v1beta/models/{model}", "gemini"),
    ("/api/chat", "vercel-ui"),
)


def _wants_stream(to: TargetName, path: str, fields: dict[str, Any]) -> bool:
    """Whether the request asked for a stream: Gemini says so in its path, the UI stream always is one, the rest in
    the body's ``stream``."""
    if to == "gemini":
        return path.endswith(":streamGenerateContent")
    return to == "vercel-ui" or fields.get("stream") is True


#: Upstream providers whose request asks for a stream with ``"stream": true`` (and, for Chat Completions' shape, its
#: usage with ``stream_options.include_usage``); Gemini by its path, Bedrock by its operation (not rewritten here).
_STREAM_FLAG = frozenset({"openai-chat", "openai", "anthropic", "xai", "mistral", "cohere", "ollama"})
_CHAT_USAGE = frozenset({"openai-chat", "mistral"})


def _asking_a_stream(
    provider: ProviderName, body: bytes, fields: dict[str, Any], path: str, query: str
) -> tuple[bytes, str, str]:
    """The request of a client that asked for a whole answer, as it goes upstream: asking the upstream for the
    stream the answer is built from (a real API answers a request without ``stream: true`` with whole JSON)."""
    if provider == "gemini" and path.endswith(":generateContent"):
        path = path[: -len(":generateContent")] + ":streamGenerateContent"
        if "alt=" not in query:
            query = f"{query}&alt=sse" if query else "alt=sse"
    elif provider in _STREAM_FLAG and fields.get("stream") is not True:
        asked = dict(fields, stream=True)
        if provider in _CHAT_USAGE:
            asked["stream_options"] = {"include_usage": True}  # (the whole answer carries its usage)
        body = json.dumps(asked).encode()
    return body, path, query


async def _bounded(upstream: Any, http: Any, deadline: Optional[float]) -> AsyncIterator[bytes]:
    """The upstream's raw chunks until its body ends, it fails (a transport error, silent past the idle timeout: its
    read timeout) or ``deadline`` (``time.monotonic()``) passes: then they end, and the stream is read as cut (the
    route's error, never a clean stop)."""
    chunks = upstream.aiter_raw()
    try:
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            chunk: Optional[bytes] = None
            with anyio.move_on_after(left):  # (no yield inside the scope: it must not span one)
                try:
                    chunk = await chunks.__anext__()
                except (StopAsyncIteration, http.HTTPError):  # the end; cut mid-body, or silent past the idle timeout
                    return
            if chunk is None:  # the total timeout passed while waiting for a chunk
                return
            yield chunk
    finally:
        await upstream.aclose()


def _options(to: TargetName, fields: dict[str, Any]) -> dict[str, Any]:
    """The encoder options a request asks for: Chat's ``stream_options.include_usage``."""
    if to != "openai-chat":
        return {}
    stream_options = fields.get("stream_options")
    asked = isinstance(stream_options, dict) and stream_options.get("include_usage") is True
    return {"include_usage": asked}


class _Translator(ClientOwner):
    def __init__(
        self,
        base: str,
        upstream_provider: ProviderName,
        upstream_path: Optional[str],
        client: Optional[Any],
        limits: Limits,
    ) -> None:
        self.base = base.rstrip("/")
        self.limits = limits
        self.provider = upstream_provider
        self.upstream_path = upstream_path
        self.owns_client = client is None
        self.client = client or upstream_client()

    def route(self, to: TargetName) -> Any:
        async def handle(request: Request) -> Response:
            return await self.handle(request, to)

        return handle

    async def handle(self, request: Request, to: TargetName) -> Response:
        try:
            body = await read_body(request, self.limits.max_body, self.limits.body_timeout)
        except Refused as refused:
            return self._error(to, refused.status, refused.kind, refused.message)
        try:
            fields = json.loads(body) if body else {}
        except (ValueError, RecursionError):
            return self._error(to, 400, "invalid_request_error", "the request body is not valid JSON")
        fields = fields if isinstance(fields, dict) else {}
        streaming = _wants_stream(to, request.url.path, fields)
        path, query = self.upstream_path or request.url.path, request.url.query
        if not streaming:  # a whole answer is built from the upstream's stream: ask it for one
            body, path, query = _asking_a_stream(self.provider, body, fields, path, query)
        url = self.base + path + ("?" + query if query else "")
        headers = without_hop_by_hop(request.headers.raw, _NOT_FORWARDED)
        headers.append((b"accept-encoding", b"identity"))
        limits = self.limits
        given = self.client.timeout  # the client's, with the idle timeout as its read timeout
        http = http_package(self.client)
        timeout = http.Timeout(connect=given.connect, read=limits.idle_timeout, write=given.write, pool=given.pool)
        outgoing = self.client.build_request("POST", url, headers=headers, content=body, timeout=timeout)
        deadline = None if limits.total_timeout is None else time.monotonic() + limits.total_timeout
        try:
            with anyio.fail_after(limits.total_timeout):
                upstream = await self.client.send(outgoing, stream=True)
        except (http.TimeoutException, TimeoutError) as exc:
            return self._error(to, 504, "timeout", f"the upstream timed out: {type(exc).__name__}")
        except http.HTTPError as exc:
            return self._error(to, 502, "api_error", f"the upstream could not be reached: {type(exc).__name__}")
        if upstream.status_code != 200:
            text = (await upstream.aread())[:2000].decode("utf-8", "replace")
            await upstream.aclose()
            return self._error(to, upstream.status_code, "upstream_error", text)
        options = _options(to, fields)
        model = fields.get("model")
        if isinstance(model, str):
            options["model"] = model
        encoding = upstream.headers.get("content-encoding")
        raw = _bounded(upstream, http, deadline)
        if streaming:
            target = encoder_class(to)
            headers = dict(target.headers)

            async def chunks() -> AsyncIterator[bytes]:
                try:
                    async for piece in atranscode(raw, self.provider, to, content_encoding=encoding, **options):
                        yield piece
                finally:
                    await upstream.aclose()

            return StreamingResponse(chunks(), media_type=target.content_type, headers=headers)
        accumulator = Accumulator()  # the result as it grows: never the whole body, nor every event
        try:
            async for event in aiter_unified(raw, self.provider, content_encoding=encoding):
                accumulator.add(event)
        finally:
            await upstream.aclose()
        result = accumulator.result
        status = 200 if result.error is None else 502
        return Response(render(result, to, **options), status_code=status, media_type="application/json")

    def _error(self, to: TargetName, status: int, kind: str, message: str) -> Response:
        body = json.dumps(Encoder(to).error_body({"type": kind, "message": message, "code": status}))
        return Response(body, status_code=status, media_type="application/json")


def create_translating_app(
    upstream_base_url: str,
    upstream_provider: ProviderName,
    *,
    upstream_path: Optional[str] = None,
    client: Optional[httpx.AsyncClient] = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Starlette:
    """The translation routes (see the module docstring) in front of ``upstream_base_url``, whose streams are read
    as ``upstream_provider``; ``upstream_path``: where requests go upstream (else the path they came on);
    ``client``: the ``AsyncClient`` to send with (else the gateway's, closed at shutdown); ``limits``: the request
    body's bounds (``max_body``: 413, ``body_timeout``: 408; a body that is not JSON, nested too deep included: 400),
    as the proxy's."""
    translator = _Translator(upstream_base_url, upstream_provider, upstream_path, client, limits)
    routes = [
        Route(path + (":{method}" if to == "gemini" else ""), translator.route(to), methods=["POST"])
        for path, to in ROUTES
    ]
    return Starlette(routes=routes, lifespan=translator.lifespan)
