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
library's, and the tests' replay upstream picks its stream by query (or header). An upstream error status is
answered with the same status and the route's error body; an upstream that cannot be reached is a 502. The request
body is bounded as the proxy bounds it (``limits``); a whole answer is built from the result as it grows, never
from the whole upstream body. A stream that
fails or is cut upstream ends in the route's error shape, never as a clean stop (see :mod:`ssewire.encoders`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Optional

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ssewire import Accumulator, Encoder, aiter_unified, atranscode, render
from ssewire.encoders import encoder_class
from ssewire.names import ProviderName, TargetName

from .app import ClientOwner, Refused, read_body, upstream_client, without_hop_by_hop
from .limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    import httpx
else:
    try:
        import httpx2 as httpx
    except ImportError:
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
        query = request.url.query
        url = self.base + (self.upstream_path or request.url.path) + ("?" + query if query else "")
        headers = without_hop_by_hop(request.headers.raw, _NOT_FORWARDED)
        headers.append((b"accept-encoding", b"identity"))
        outgoing = self.client.build_request("POST", url, headers=headers, content=body)
        try:
            upstream = await self.client.send(outgoing, stream=True)
        except httpx.HTTPError as exc:
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
        if _wants_stream(to, request.url.path, fields):
            target = encoder_class(to)
            headers = dict(target.headers)

            async def chunks() -> AsyncIterator[bytes]:
                try:
                    async for piece in atranscode(
                        upstream.aiter_raw(), self.provider, to, content_encoding=encoding, **options
                    ):
                        yield piece
                finally:
                    await upstream.aclose()

            return StreamingResponse(chunks(), media_type=target.content_type, headers=headers)
        accumulator = Accumulator()  # the result as it grows: never the whole body, nor every event
        try:
            async for event in aiter_unified(upstream.aiter_raw(), self.provider, content_encoding=encoding):
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
