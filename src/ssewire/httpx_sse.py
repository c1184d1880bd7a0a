"""Drop-in replacement for `httpx-sse <https://github.com/florimondmanca/httpx-sse>`_ 0.4 and for the SSE support
of `httpx2 <https://github.com/pydantic/httpx2>`_ (the maintained httpx fork), on ssewire's scanner.

Switching is an import change (and, for httpx2's ``client.sse(url, ...)``, ``client_sse(client, url, ...)``)::

    from ssewire.httpx_sse import EventSource, ServerSentEvent, SSEError, aconnect_sse, client_sse, connect_sse

Every name works with httpx and with httpx2 clients and responses. This module imports whichever of the two are
installed (at least one must be).

httpx-sse's names keep its signatures and behaviour: ``connect_sse`` / ``aconnect_sse`` (set
``Accept: text/event-stream`` and ``Cache-Control: no-store``), ``EventSource`` (``response``, ``iter_sse()``,
``aiter_sse()``; raises :class:`SSEError` on the first iteration when ``Content-Type`` is not
``text/event-stream``), ``ServerSentEvent`` (``event``, ``data``, ``id``, ``retry``, ``json()``, same defaults and
repr) and ``SSEError`` (an ``httpx.TransportError``). Transport errors mid-stream (``httpx.ReadError``,
``httpx.RemoteProtocolError`` ..., or httpx2's) propagate unchanged, so reconnection code keeps working.

httpx2's names and behaviour, too:

- ``EventSource`` is iterable (``for sse in source`` / ``async for sse in source``) and takes ``max_event_size``,
  as ``httpx2.EventSource``; :func:`client_sse` is ``client.sse(url, ...)`` for any httpx or httpx2 client.
- ``max_event_size`` (``EventSource``, ``connect_sse``, ``aconnect_sse``, ``client_sse``) bounds one event: a larger
  one raises :class:`SSEError`, as in httpx2. Its default follows the response's library: httpx2's 1 MiB
  (:data:`DEFAULT_MAX_EVENT_SIZE`) for an httpx2 response, none for an httpx response (httpx-sse has none);
  ``None`` lifts it. The size is checked on each line and on the event's data joined, where httpx2 sums all the
  field lines of the event: near the limit, a multi-line event may pass here that httpx2 rejects.
- ``SSEError`` is also an ``httpx2.SSEError`` (so an ``httpx2.TransportError``) when httpx2 is installed.
- ``ServerSentEvent`` compares equal and hashes by value, like httpx2's frozen dataclass; its constructor keeps
  httpx-sse's normalisation (``None`` gives the default, an empty ``event`` is ``"message"``).

Where httpx-sse and httpx2 depart from the SSE specification (WHATWG HTML 9.2.6), this module follows it:

- A block without ``data`` lines (only ``event:``, ``id:`` or ``retry:``) dispatches no event; httpx-sse and
  httpx2 yield an event with empty data for it.
- A leading UTF-8 BOM is dropped; httpx-sse and httpx2 keep it, which makes them lose the first field.
- The body is always decoded as UTF-8 (per event, so a character split across chunks stays whole; invalid
  bytes become U+FFFD); httpx-sse and httpx2 decode with the ``charset`` of ``Content-Type``.
- ``retry`` keeps the per-event meaning (the value a ``retry:`` field set, ``None`` otherwise) and is reported on
  the first event dispatched after the stream's reconnection time changed, including by a block that dispatched
  nothing; a ``retry:`` field that repeats the current value is not reported again.

Other differences: ``Content-Type`` must contain ``text/event-stream`` as for httpx-sse (httpx2 wants exactly
that), in any letter case (httpx-sse's check is case-sensitive); one event is always bounded by ``max_buffer``
too (keyword-only, 64 MiB by default; larger raises :class:`ssewire.SSEBufferOverflowError`); stopping an iteration
early (``break``, ``close()``/``aclose()``, cancellation) or an error closes the response at once instead of when
the ``with`` block exits; ``connect_sse`` does not modify the caller's ``headers`` mapping. A last event without
its blank line is discarded, as in httpx-sse, httpx2 and the specification.
"""

from __future__ import annotations

import importlib
import json
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, AsyncGenerator, AsyncIterator, Iterable, Iterator, Optional, Union

from ._scan import SSEEvent, SSEParser
from .errors import SSEBufferOverflowError
from .limits import DEFAULT_MAX_BUFFER

if TYPE_CHECKING:
    import httpx
    import httpx2

    Client = Union[httpx.Client, httpx2.Client]
    AsyncClient = Union[httpx.AsyncClient, httpx2.AsyncClient]
    Response = Union[httpx.Response, httpx2.Response]
    URL = Union[str, httpx.URL, httpx2.URL]

__all__ = [
    "DEFAULT_MAX_EVENT_SIZE",
    "EventSource",
    "SSEError",
    "ServerSentEvent",
    "__version__",
    "aconnect_sse",
    "client_sse",
    "connect_sse",
]

#: The httpx-sse release whose API this module mirrors (what ``httpx_sse.__version__`` says there), so code that
#: checks the drop-in's version reads the API it gets; ssewire's own version is :data:`ssewire.__version__`.
__version__ = "0.4.3"

#: httpx2's default ``max_event_size`` (1 MiB), used for httpx2 responses.
DEFAULT_MAX_EVENT_SIZE = 1024 * 1024


def _optional_import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_httpx: Any = _optional_import("httpx")
_httpx2: Any = _optional_import("httpx2")
if _httpx is None and _httpx2 is None:  # pragma: no cover - exercised in a subprocess without either
    raise ImportError(
        "ssewire.httpx_sse needs httpx or httpx2: install one with pip install 'ssewire[httpx]' or 'ssewire[httpx2]'",
        name="httpx",
    )


def _sse_error_bases() -> tuple[type[Exception], ...]:
    bases: list[type[Exception]] = []
    if _httpx is not None:
        bases.append(_httpx.TransportError)
    if _httpx2 is not None:
        bases.append(_httpx2.SSEError)
    return tuple(bases)


if TYPE_CHECKING:

    class SSEError(httpx.TransportError):
        """An error that occurred while making a request to an SSE endpoint."""

else:

    class SSEError(*_sse_error_bases()):
        """An error that occurred while making a request to an SSE endpoint (a response that is not
        ``text/event-stream``, an event over ``max_event_size``): an ``httpx.TransportError`` and an
        ``httpx2.SSEError``, whichever of the two libraries are installed."""


class _ByLibrary:
    """The default ``max_event_size``: httpx2's for an httpx2 response, none for an httpx one."""

    def __repr__(self) -> str:
        return "<1 MiB for httpx2, None for httpx>"


_BY_LIBRARY: Any = _ByLibrary()


def _is_httpx2(obj: object) -> bool:
    """True when ``obj``'s class (or a base class) comes from httpx2."""
    return any(cls.__module__.partition(".")[0] == "httpx2" for cls in type(obj).__mro__)


def _library(client: object) -> Any:
    """The module of ``client``'s library: httpx2 for an httpx2 object, else httpx (httpx2 when only it is
    installed)."""
    if _httpx2 is not None and (_httpx is None or _is_httpx2(client)):
        return _httpx2
    return _httpx


class ServerSentEvent:
    """One server-sent event: ``event`` (default ``"message"``), ``data`` (default ``""``), ``id`` (the last
    event ID, default ``""``) and ``retry`` (the reconnection time in ms this event set, or ``None``). Immutable;
    equal to another with the same four fields. A plain instance, as httpx-sse's: code may tag one with attributes
    of its own and ``vars()`` it."""

    __match_args__ = ("event", "data", "id", "retry")

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

    def _fields(self) -> tuple[str, str, str, Optional[int]]:
        return (self._event, self._data, self._id, self._retry)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ServerSentEvent):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

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
    """Helper for working with an SSE response (from ``client.stream(...)``, httpx or httpx2): ``iter_sse()`` /
    ``aiter_sse()``, or iterating the source itself, decode its body into :class:`ServerSentEvent`.

    ``max_event_size`` bounds one event (larger raises :class:`SSEError`; default: 1 MiB for an httpx2 response,
    none for an httpx one; ``None``: none; else positive) and ``max_buffer`` always does (larger raises
    :class:`ssewire.SSEBufferOverflowError`); see the module docs.
    """

    def __init__(
        self,
        response: Response,
        max_event_size: Optional[int] = _BY_LIBRARY,
        *,
        max_buffer: int = DEFAULT_MAX_BUFFER,
    ) -> None:
        if max_event_size is _BY_LIBRARY:
            max_event_size = DEFAULT_MAX_EVENT_SIZE if _is_httpx2(response) else None
        if max_event_size is not None and max_event_size <= 0:
            raise ValueError(f"max_event_size must be positive or None, got {max_event_size!r}")
        self._response = response
        self._max_event_size: Optional[int] = max_event_size
        self._max_buffer = max_buffer

    @property
    def response(self) -> Response:
        """The underlying httpx (or httpx2) ``Response``."""
        return self._response

    def _request(self) -> Any:
        try:
            return self._response.request
        except RuntimeError:
            return None

    def _check_content_type(self) -> None:
        content_type = self._response.headers.get("content-type", "").partition(";")[0]
        if "text/event-stream" not in content_type.lower():
            raise SSEError(
                f"Expected response header Content-Type to contain 'text/event-stream', got {content_type!r}",
                request=self._request(),
            )

    def _parser(self) -> SSEParser:
        limit = self._max_buffer
        if self._max_event_size is not None:
            limit = min(limit, self._max_event_size)
        return SSEParser(limit, flush_incomplete=False)

    def _decode(self, parser: SSEParser, chunk: Optional[bytes]) -> list[SSEEvent]:
        """The events ``chunk`` completes (``None``: the end of the body); an event over ``max_event_size``
        raises :class:`SSEError` (from the scanner's ``SSEBufferOverflowError``), one over ``max_buffer`` the
        overflow."""
        try:
            return parser.close() if chunk is None else parser.feed(chunk)
        except SSEBufferOverflowError as exc:
            limit = self._max_event_size
            if limit is None or limit > self._max_buffer:
                raise
            raise SSEError(f"Server-sent event exceeded the {limit} byte limit.", request=self._request()) from exc

    def iter_sse(self) -> Iterator[ServerSentEvent]:
        """Decode the response body and yield each :class:`ServerSentEvent` (``SSEError`` first if the response
        is not an event stream). Stopping early or an error closes the response."""
        self._check_content_type()
        parser = self._parser()
        convert = _Converter()
        chunks = self._response.iter_bytes()
        complete = False
        try:
            for chunk in chunks:
                yield from convert(self._decode(parser, chunk))
            complete = True
            yield from convert(self._decode(parser, None))
        finally:
            if not complete:
                chunks.close()  # type: ignore[attr-defined]
                self._response.close()

    async def aiter_sse(self) -> AsyncGenerator[ServerSentEvent, None]:
        """The async equivalent of :meth:`iter_sse`."""
        self._check_content_type()
        parser = self._parser()
        convert = _Converter()
        chunks = self._response.aiter_bytes()
        complete = False
        try:
            async for chunk in chunks:
                for sse in convert(self._decode(parser, chunk)):
                    yield sse
            complete = True
            for sse in convert(self._decode(parser, None)):
                yield sse
        finally:
            if not complete:
                try:
                    await chunks.aclose()  # type: ignore[attr-defined]
                finally:
                    await self._response.aclose()

    def __iter__(self) -> Iterator[ServerSentEvent]:
        """:meth:`iter_sse` (httpx2's ``for sse in event_source``)."""
        return self.iter_sse()

    def __aiter__(self) -> AsyncIterator[ServerSentEvent]:
        """:meth:`aiter_sse` (httpx2's ``async for sse in event_source``)."""
        return self.aiter_sse()


def _sse_headers(client: object, headers: Any) -> Any:
    """httpx-sse's request headers: the caller's, with ``Accept`` and ``Cache-Control`` set over them."""
    merged = _library(client).Headers(headers)
    merged["Accept"] = "text/event-stream"
    merged["Cache-Control"] = "no-store"
    return merged


@contextmanager
def connect_sse(
    client: Client,
    method: str,
    url: URL,
    *,
    max_event_size: Optional[int] = _BY_LIBRARY,
    max_buffer: int = DEFAULT_MAX_BUFFER,
    **kwargs: Any,
) -> Iterator[EventSource]:
    """Send a request with ``client.stream(...)`` (``Accept: text/event-stream``, ``Cache-Control: no-store``) and
    give an :class:`EventSource` for the response (``max_event_size``, ``max_buffer`` as there); the response is
    closed when the block exits."""
    headers = _sse_headers(client, kwargs.pop("headers", None))
    stream: Any = client.stream  # httpx's or httpx2's: each takes its own URL type
    with stream(method, url, headers=headers, **kwargs) as response:
        yield EventSource(response, max_event_size, max_buffer=max_buffer)


@asynccontextmanager
async def aconnect_sse(
    client: AsyncClient,
    method: str,
    url: URL,
    *,
    max_event_size: Optional[int] = _BY_LIBRARY,
    max_buffer: int = DEFAULT_MAX_BUFFER,
    **kwargs: Any,
) -> AsyncIterator[EventSource]:
    """The async equivalent of :func:`connect_sse`."""
    headers = _sse_headers(client, kwargs.pop("headers", None))
    stream: Any = client.stream
    async with stream(method, url, headers=headers, **kwargs) as response:
        yield EventSource(response, max_event_size, max_buffer=max_buffer)


class _ClientSSE:
    """What :func:`client_sse` returns: a context manager for ``with`` (sync client) or ``async with`` (async
    client) that opens the stream on entry and closes it on exit."""

    __slots__ = ("_client", "_headers", "_kwargs", "_max_buffer", "_max_event_size", "_method", "_stream", "_url")

    def __init__(
        self,
        client: Any,
        method: str,
        url: Any,
        headers: Any,
        max_event_size: Optional[int],
        max_buffer: int,
        kwargs: dict[str, Any],
    ) -> None:
        self._client = client
        self._method = method
        self._url = url
        self._headers = headers
        self._max_event_size = max_event_size
        self._max_buffer = max_buffer
        self._kwargs = kwargs
        self._stream: Any = None

    def _open(self) -> Any:
        self._stream = self._client.stream(self._method, self._url, headers=self._headers, **self._kwargs)
        return self._stream

    def __enter__(self) -> EventSource:
        response = self._open().__enter__()
        return EventSource(response, self._max_event_size, max_buffer=self._max_buffer)

    def __exit__(self, *exc_info: Any) -> Optional[bool]:
        return self._stream.__exit__(*exc_info)  # type: ignore[no-any-return]

    async def __aenter__(self) -> EventSource:
        response = await self._open().__aenter__()
        return EventSource(response, self._max_event_size, max_buffer=self._max_buffer)

    async def __aexit__(self, *exc_info: Any) -> Optional[bool]:
        return await self._stream.__aexit__(*exc_info)  # type: ignore[no-any-return]


def client_sse(
    client: Union[Client, AsyncClient],
    url: URL,
    *,
    method: str = "GET",
    headers: Any = None,
    max_event_size: Optional[int] = _BY_LIBRARY,
    max_buffer: int = DEFAULT_MAX_BUFFER,
    **kwargs: Any,
) -> _ClientSSE:
    """httpx2's ``client.sse(url, ...)`` for an httpx or httpx2 client: ``with client_sse(client, url) as source``
    (``Client``) or ``async with`` (``AsyncClient``) sends the request with ``client.stream(method, url, ...)`` and
    gives an :class:`EventSource`; the response is closed when the block exits.

    ``Accept: text/event-stream`` and ``Cache-Control: no-store`` are sent unless ``headers`` sets them (as
    httpx2 does; :func:`connect_sse` sets them over the caller's, as httpx-sse does). Other keyword arguments
    (``json``, ``params``, ``timeout`` ...) go to ``client.stream``; ``max_event_size`` and ``max_buffer`` as for
    :class:`EventSource`.
    """
    library = _library(client)
    merged = library.Headers({"Accept": "text/event-stream", "Cache-Control": "no-store"})
    merged.update(library.Headers(headers))
    return _ClientSSE(client, method, url, merged, max_event_size, max_buffer, kwargs)
