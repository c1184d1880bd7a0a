"""Drop-in replacement for `httpx-sse <https://github.com/florimondmanca/httpx-sse>`_ 0.4, on ssewire's scanner.

Switching is an import change::

    from ssewire.httpx_sse import EventSource, ServerSentEvent, SSEError, aconnect_sse, connect_sse

``connect_sse`` / ``aconnect_sse`` (set ``Accept: text/event-stream`` and ``Cache-Control: no-store``),
``EventSource`` (``response``, ``iter_sse()``, ``aiter_sse()``; raises :class:`SSEError` on the first iteration
when ``Content-Type`` is not ``text/event-stream``), ``ServerSentEvent`` (``event``, ``data``, ``id``,
``retry``, ``json()``, same defaults and repr) and ``SSEError`` (an ``httpx.TransportError``) keep httpx-sse's
signatures and behaviour. Transport errors mid-stream (``httpx.ReadError``, ``httpx.RemoteProtocolError`` ...)
propagate unchanged, as in httpx-sse, so reconnection code keeps working. This module imports httpx.

Where httpx-sse departs from the SSE specification (WHATWG HTML 9.2.6), this module follows the specification:

- A block without ``data`` lines (only ``event:``, ``id:`` or ``retry:``) dispatches no event; httpx-sse yields
  an event with empty data for it.
- A leading UTF-8 BOM is dropped; httpx-sse keeps it, which makes it lose the first field of the stream.
- The body is always decoded as UTF-8 (per event, so a character split across chunks stays whole; invalid
  bytes become U+FFFD); httpx-sse decodes with the ``charset`` of ``Content-Type``.
- ``retry`` keeps httpx-sse's per-event meaning (the value a ``retry:`` field set, ``None`` otherwise) and is
  reported on the first event dispatched after the stream's reconnection time changed, including by a block
  that dispatched nothing; a ``retry:`` field that repeats the current value is not reported again.

Other differences: one event is bounded by ``max_buffer`` (keyword-only argument of :class:`EventSource`, 64 MiB
by default; larger raises :class:`ssewire.SSEBufferOverflow`), stopping an iteration early (``break``,
``close()``/``aclose()``, cancellation) closes the response at once instead of when ``connect_sse`` exits,
and ``connect_sse`` does not modify the caller's ``headers`` mapping. A last event without its blank line is
discarded, as in httpx-sse and the specification.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager, contextmanager
from typing import Any, AsyncGenerator, AsyncIterator, Iterable, Iterator, Optional, Union

try:
    import httpx
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without httpx
    raise ImportError(
        "ssewire.httpx_sse needs httpx: install it with pip install 'ssewire[httpx]'", name=exc.name
    ) from exc

from . import __version__
from ._scanner import SSEEvent, SSEParser
from .limits import DEFAULT_MAX_BUFFER

__all__ = ["EventSource", "SSEError", "ServerSentEvent", "__version__", "aconnect_sse", "connect_sse"]


class SSEError(httpx.TransportError):
    """An error that occurred while making a request to an SSE endpoint (e.g. a response that is not
    ``text/event-stream``)."""


class ServerSentEvent:
    """One server-sent event: ``event`` (default ``"message"``), ``data`` (default ``""``), ``id`` (the last
    event ID, default ``""``) and ``retry`` (the reconnection time in ms this event set, or ``None``)."""

    __slots__ = ("_data", "_event", "_id", "_retry")

    def __init__(
        self,
        event: Optional[str] = None,
        data: Optional[str] = None,
        id: Optional[str] = None,  # noqa: A002 - httpx-sse's parameter name
        retry: Optional[int] = None,
    ) -> None:
        self._event = event or "message"
        self._data = "" if data is None else data
        self._id = "" if id is None else id
        self._retry = retry

    @property
    def event(self) -> str:
        return self._event

    @property
    def data(self) -> str:
        return self._data

    @property
    def id(self) -> str:
        return self._id

    @property
    def retry(self) -> Optional[int]:
        return self._retry

    def json(self) -> Any:
        """``data`` decoded as JSON (raises ``json.JSONDecodeError`` when it is not JSON)."""
        return json.loads(self.data)

    def __repr__(self) -> str:
        pieces = [f"event={self.event!r}"]
        if self.data != "":
            pieces.append(f"data={self.data!r}")
        if self.id != "":
            pieces.append(f"id={self.id!r}")
        if self.retry is not None:
            pieces.append(f"retry={self.retry!r}")
        return f"ServerSentEvent({', '.join(pieces)})"


class _Converter:
    """ssewire events -> ServerSentEvent, mapping the stream's current ``retry`` to httpx-sse's per-event one."""

    __slots__ = ("_retry",)

    def __init__(self) -> None:
        self._retry: Optional[int] = None

    def __call__(self, events: Iterable[SSEEvent]) -> Iterator[ServerSentEvent]:
        for ev in events:
            retry = ev.retry
            if retry != self._retry:
                self._retry = retry
            else:
                retry = None
            yield ServerSentEvent(ev.event, ev.data, ev.id, retry)


class EventSource:
    """Helper for working with an SSE response (from ``client.stream(...)``): ``iter_sse()`` / ``aiter_sse()``
    decode its body into :class:`ServerSentEvent`. ``max_buffer`` bounds one event (see the module docs)."""

    def __init__(self, response: httpx.Response, *, max_buffer: int = DEFAULT_MAX_BUFFER) -> None:
        self._response = response
        self._max_buffer = max_buffer

    def _check_content_type(self) -> None:
        content_type = self._response.headers.get("content-type", "").partition(";")[0]
        if "text/event-stream" not in content_type:
            try:
                request: Optional[httpx.Request] = self._response.request
            except RuntimeError:
                request = None
            raise SSEError(
                f"Expected response header Content-Type to contain 'text/event-stream', got {content_type!r}",
                request=request,
            )

    @property
    def response(self) -> httpx.Response:
        """The underlying ``httpx.Response``."""
        return self._response

    def iter_sse(self) -> Iterator[ServerSentEvent]:
        """Decode the response body and yield each :class:`ServerSentEvent` (``SSEError`` first if the response
        is not an event stream). Stopping early closes the response."""
        self._check_content_type()
        parser = SSEParser(self._max_buffer, flush_incomplete=False)
        convert = _Converter()
        chunks = self._response.iter_bytes()
        complete = False
        try:
            for chunk in chunks:
                yield from convert(parser.feed(chunk))
            complete = True
            yield from convert(parser.close())
        finally:
            if not complete:
                chunks.close()  # type: ignore[attr-defined]
                self._response.close()

    async def aiter_sse(self) -> AsyncGenerator[ServerSentEvent, None]:
        """The async equivalent of :meth:`iter_sse`."""
        self._check_content_type()
        parser = SSEParser(self._max_buffer, flush_incomplete=False)
        convert = _Converter()
        chunks = self._response.aiter_bytes()
        complete = False
        try:
            async for chunk in chunks:
                for sse in convert(parser.feed(chunk)):
                    yield sse
            complete = True
            for sse in convert(parser.close()):
                yield sse
        finally:
            if not complete:
                try:
                    await chunks.aclose()  # type: ignore[attr-defined]
                finally:
                    await self._response.aclose()


def _sse_headers(kwargs: dict[str, Any]) -> httpx.Headers:
    headers = httpx.Headers(kwargs.pop("headers", None))
    headers["Accept"] = "text/event-stream"
    headers["Cache-Control"] = "no-store"
    return headers


@contextmanager
def connect_sse(client: httpx.Client, method: str, url: Union[str, httpx.URL], **kwargs: Any) -> Iterator[EventSource]:
    """Send a request with ``client.stream(...)`` (``Accept: text/event-stream``, ``Cache-Control: no-store``) and
    give an :class:`EventSource` for the response; the response is closed when the block exits."""
    headers = _sse_headers(kwargs)
    with client.stream(method, url, headers=headers, **kwargs) as response:
        yield EventSource(response)


@asynccontextmanager
async def aconnect_sse(
    client: httpx.AsyncClient, method: str, url: Union[str, httpx.URL], **kwargs: Any
) -> AsyncIterator[EventSource]:
    """The async equivalent of :func:`connect_sse`."""
    headers = _sse_headers(kwargs)
    async with client.stream(method, url, headers=headers, **kwargs) as response:
        yield EventSource(response)
