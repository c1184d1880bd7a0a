"""Events straight from a streaming HTTP response of httpx (or its fork httpx2), aiohttp or requests.

:func:`iter_response` / :func:`aiter_response` yield unified events, :func:`iter_response_events` /
:func:`aiter_response_events` the framed events, from a response whose body has not been read yet:

- httpx ``Response`` from ``client.stream(...)`` (sync or async), read with ``iter_bytes()`` / ``aiter_bytes()``;
  an httpx2 ``Response`` is read the same way (httpx2 keeps httpx's API), with httpx2's own transport errors;
- aiohttp ``ClientResponse`` (async only), read with ``content.readany()`` as data arrives;
- requests ``Response`` from ``stream=True`` (sync only), read with ``iter_content(chunk_size=None)`` (chunked
  bodies) or one ``read1()`` per chunk (bodies without chunked encoding, which ``iter_content`` would read whole;
  with urllib3 1.26, the ``http.client`` response's own ``read1()`` when the body is not content-encoded).

Bodies are read in the client's own chunking with any ``Content-Encoding`` removed. The client is recognised by
the module of the response's type (then by duck typing); ssewire never imports a client itself.

Contract:

- The framing comes from ``Content-Type`` when not given (:func:`ssewire.framing.framing_for_content_type`:
  ``application/json`` is Gemini's JSON array, ``json_array``; anything else, ``text/event-stream`` included,
  is ``sse``).
- A non-2xx response raises :class:`~ssewire.ResponseStatusError` (``status_code``, ``body``: the first 64 KiB of
  the error body as text) on the first iteration, and is closed.
- Backpressure: the next chunk is read only after every event of the previous one has been taken.
- The response is closed (its connection released) when the body ends, when the consumer stops early (``break``,
  ``close()`` / ``aclose()``, task cancellation) and when an error is raised. For async iteration, wrap the
  generator in ``contextlib.aclosing`` to release the connection at once after a ``break`` (otherwise it is
  released when the generator is finalised).
- A connection lost mid-body (the client's transport errors) is never a silent end: unified iteration ends
  with the ``stream_truncated`` error event (its message names the transport error; the event being read is
  discarded) unless the terminal event had already arrived; framed iteration raises
  :class:`~ssewire.StreamTruncatedError` from the transport error.
"""

from __future__ import annotations

import codecs
import contextlib
import importlib
from typing import TYPE_CHECKING, Any, AsyncGenerator, AsyncIterator, Callable, Generator, Iterator, Optional, Union

from ._scan import SSEEvent
from .errors import ResponseStatusError, StreamTruncatedError, UnsupportedResponseError
from .events import Unified
from .framing import framing_for_content_type, make_scanner
from .limits import DEFAULT_MAX_BUFFER
from .names import FramingName, ProviderName
from .normalizers import Normalizer
from .stream import StreamDecoder
from .transport import connection_lost, describe

if TYPE_CHECKING:
    import aiohttp
    import httpx
    import httpx2
    import requests

    SyncResponse = Union[httpx.Response, httpx2.Response, requests.Response]
    AsyncResponse = Union[httpx.Response, httpx2.Response, aiohttp.ClientResponse]

__all__ = [
    "ERROR_BODY_LIMIT",
    "aiter_response",
    "aiter_response_events",
    "iter_response",
    "iter_response_events",
]

#: Bytes of a non-2xx body kept in :attr:`ResponseStatusError.body`.
ERROR_BODY_LIMIT = 64 * 1024
_READ1_SIZE = 64 * 1024
_ExcTypes = tuple[type[BaseException], ...]
#: The root module of a response's class -> the client API it is read with (httpx2 is httpx's API).
_CLIENT_MODULES = {"httpx": "httpx", "httpx2": "httpx", "aiohttp": "aiohttp", "requests": "requests"}


# ---------------------------------------------------------------------------------------------- client detection


def _library_of(response: object) -> Optional[str]:
    """The supported client library the response's class (or a base class) comes from: ``"httpx"``,
    ``"httpx2"``, ``"aiohttp"``, ``"requests"``, or None."""
    for cls in type(response).__mro__:
        root = cls.__module__.partition(".")[0]
        if root in _CLIENT_MODULES:
            return root
    return None


def _client_of(response: object) -> str:
    """``"httpx"`` (httpx and httpx2), ``"aiohttp"`` or ``"requests"`` (the response's module, then duck typing);
    else :class:`~ssewire.errors.UnsupportedResponseError` (a ``TypeError``)."""
    library = _library_of(response)
    if library is not None:
        return _CLIENT_MODULES[library]
    if hasattr(response, "aiter_bytes") and hasattr(response, "iter_bytes"):
        return "httpx"
    if hasattr(response, "iter_content") and hasattr(response, "raw"):
        return "requests"
    if hasattr(getattr(response, "content", None), "readany"):
        return "aiohttp"
    raise UnsupportedResponseError(
        f"unsupported response type {type(response).__module__}.{type(response).__qualname__}: expected an httpx "
        "or httpx2 Response, an aiohttp ClientResponse or a requests Response"
    )


def _module(response: object) -> Any:
    """The module of the response's client: its library (httpx or httpx2, also for a subclass defined
    elsewhere), else the root module of its class (an API-compatible fork)."""
    return importlib.import_module(_library_of(response) or type(response).__module__.partition(".")[0])


def _transport_errors(response: object, client: str) -> _ExcTypes:
    """The client's exceptions that mean "the body could not be read to its end"."""
    if client == "httpx":
        error = getattr(_module(response), "TransportError", None)  # httpx2's own, and API-compatible forks
        return (error,) if isinstance(error, type) else ()
    if client == "aiohttp":
        aiohttp = importlib.import_module("aiohttp")
        import asyncio  # (here: aiohttp has imported it; importing ssewire does not, ~20 ms with ssl and logging)

        # (a ClientTimeout(total=...) that fires mid-body raises asyncio's TimeoutError, not a ClientError)
        return (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, asyncio.TimeoutError)
    requests_exc = importlib.import_module("requests.exceptions")
    errors: _ExcTypes = (requests_exc.ChunkedEncodingError, requests_exc.ConnectionError)
    try:  # the read1() path sees urllib3's own errors
        urllib3_exc = importlib.import_module("urllib3.exceptions")
        errors += (urllib3_exc.ProtocolError, urllib3_exc.ReadTimeoutError)
    except ImportError:  # pragma: no cover - requests always brings urllib3
        pass
    return errors


def _status(response: Any, client: str) -> int:
    return int(response.status if client == "aiohttp" else response.status_code)


def _content_type(response: Any) -> Optional[str]:
    value = response.headers.get("content-type")
    return str(value) if value is not None else None


def _error_text(data: bytes, content_type: Optional[str], truncated: bool) -> str:
    encoding = "utf-8"
    for param in (content_type or "").split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            with contextlib.suppress(LookupError):  # an unknown charset: UTF-8
                encoding = codecs.lookup(value.strip().strip("\"'")).name
    return codecs.getincrementaldecoder(encoding)("replace").decode(data, final=not truncated)


def _status_error(response: Any, client: str, data: bytes, truncated: bool) -> ResponseStatusError:
    return ResponseStatusError(_status(response, client), _error_text(data, _content_type(response), truncated))


# ------------------------------------------------------------------------------------------------- byte sources


class _Source:
    """What both byte sources hold: the response, its client library, the transport errors to expect, and
    whether it was closed; how a non-2xx response becomes the error to raise."""

    __slots__ = ("client", "closed", "errors", "response")

    def __init__(self, response: Any, other: str, why: str) -> None:
        client = _client_of(response)
        if client == other:
            raise UnsupportedResponseError(why)
        self.response = response
        self.client = client
        self.errors = _transport_errors(response, client)
        self.closed = False

    def _ok(self) -> bool:
        return 200 <= _status(self.response, self.client) < 300

    def _error(self, body: bytearray) -> ResponseStatusError:
        """The error for a non-2xx response whose body (read up to ``ERROR_BODY_LIMIT`` and more) is ``body``."""
        return _status_error(self.response, self.client, bytes(body[:ERROR_BODY_LIMIT]), len(body) > ERROR_BODY_LIMIT)


class _SyncSource(_Source):
    """The body of a sync response as byte chunks, plus how to close it."""

    __slots__ = ("chunks",)

    def __init__(self, response: Any) -> None:
        super().__init__(
            response, "aiohttp", "aiohttp responses are asynchronous: use aiter_response / aiter_response_events"
        )
        client = self.client
        self.chunks: Iterator[bytes]
        if client == "httpx":
            self.chunks = response.iter_bytes()
        else:
            raw = getattr(response, "raw", None)
            consumed = getattr(response, "_content_consumed", False)
            read1 = None if consumed or raw is None or getattr(raw, "chunked", True) else _read1_of(raw)
            if read1 is not None:
                self.chunks = _read1_chunks(read1)  # iter_content(None) would read this body whole
            else:
                self.chunks = response.iter_content(chunk_size=None)

    def body(self) -> Iterator[bytes]:
        """The body's non-empty chunks; a transport error closes the source and raises ``_ConnectionLost``."""
        chunks, errors = self.chunks, self.errors
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                return
            except errors as exc:
                self.close()
                raise _ConnectionLost(exc) from exc
            if chunk:
                yield chunk

    def close(self) -> None:
        """Close the chunk iterator and the response (idempotent); an unread body closes the connection."""
        if self.closed:
            return
        self.closed = True
        try:
            close = getattr(self.chunks, "close", None)
            if close is not None:
                close()
        finally:
            self.response.close()

    def status_error(self) -> Optional[ResponseStatusError]:
        """The error to raise for a non-2xx response (its body read with a bound, then closed), else None."""
        if self._ok():
            return None
        buf = bytearray()
        try:
            for chunk in self.chunks:
                buf += chunk
                if len(buf) >= ERROR_BODY_LIMIT:
                    break
        except self.errors:
            pass
        finally:
            self.close()
        return self._error(buf)


class _ConnectionLost(Exception):
    """A transport error while reading the body (``cause``); the source is already closed."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(cause)
        self.cause = cause


def _read1_of(raw: Any) -> Optional[Callable[[], bytes]]:
    """How to read a body without chunked encoding as it arrives: urllib3 2's ``read1()``; with urllib3 1.26 (what
    botocore pins on Python 3.9), which has none, the ``read1()`` of the ``http.client`` response underneath when
    the body is not content-encoded (urllib3 would have decoded it); else None."""
    read1 = getattr(raw, "read1", None)
    if read1 is not None:
        return lambda: read1(_READ1_SIZE, decode_content=True)
    fp = getattr(raw, "_fp", None)
    headers = getattr(raw, "headers", None)
    encoding = headers.get("content-encoding", "identity") if headers is not None else "identity"
    if fp is None or not hasattr(fp, "read1") or encoding.strip().lower() not in ("", "identity"):
        return None

    def read() -> bytes:
        data: bytes = fp.read1(_READ1_SIZE)
        if not data and getattr(fp, "length", None):  # the declared length never came: the connection dropped
            protocol_error = importlib.import_module("urllib3.exceptions").ProtocolError
            raise protocol_error(f"Connection broken: IncompleteRead({fp.length} bytes more expected)")
        return data

    return read


def _read1_chunks(read1: Callable[[], bytes]) -> Iterator[bytes]:
    """The chunks ``read1`` reads; urllib3's ``DecodeError`` (a corrupt compressed body) raised as requests'
    ``ContentDecodingError``, as ``iter_content`` raises it."""
    decode_error = importlib.import_module("urllib3.exceptions").DecodeError
    while True:
        try:
            data = read1()
        except decode_error as exc:
            raise importlib.import_module("requests.exceptions").ContentDecodingError(exc) from exc
        if not data:
            return
        yield data


class _AsyncSource(_Source):
    """The body of an async response as byte chunks, plus how to close it."""

    __slots__ = ("aiter",)

    def __init__(self, response: Any) -> None:
        super().__init__(
            response, "requests", "requests responses are synchronous: use iter_response / iter_response_events"
        )
        self.aiter: Optional[AsyncIterator[bytes]] = response.aiter_bytes() if self.client == "httpx" else None

    async def read(self) -> bytes:
        """The next chunk; ``b""`` at the end of the body."""
        if self.aiter is None:
            return bytes(await self.response.content.readany())
        try:
            return await self.aiter.__anext__()
        except StopAsyncIteration:
            return b""

    async def next_chunk(self) -> bytes:
        """:meth:`read`, with a transport error closing the source and raised as ``_ConnectionLost``."""
        try:
            return await self.read()
        except self.errors as exc:
            await self.aclose()
            raise _ConnectionLost(exc) from exc

    async def aclose(self, complete: bool = False) -> None:
        """Close the response (idempotent). ``complete``: the body was read to its end, the connection may be
        reused (aiohttp ``release()``); otherwise it is closed."""
        if self.closed:
            return
        self.closed = True
        response = self.response
        if self.client == "aiohttp":
            if complete:
                response.release()
            else:
                response.close()
            return
        try:
            aclose = getattr(self.aiter, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            await response.aclose()

    async def status_error(self) -> Optional[ResponseStatusError]:
        """The async twin of :meth:`_SyncSource.status_error`."""
        if self._ok():
            return None
        buf = bytearray()
        try:
            while len(buf) < ERROR_BODY_LIMIT:
                chunk = await self.read()
                if not chunk:
                    break
                buf += chunk
        except self.errors:
            pass
        finally:
            await self.aclose()
        return self._error(buf)


# ---------------------------------------------------------------------------------------------------- pipelines


def _resolve_framing(response: Any, framing: Optional[FramingName]) -> FramingName:
    return framing if framing is not None else framing_for_content_type(_content_type(response))


def _truncated(exc: BaseException) -> StreamTruncatedError:
    return StreamTruncatedError(f"connection lost mid-stream ({describe(exc)})")


def iter_response(
    response: SyncResponse,
    provider: Union[ProviderName, Normalizer],
    framing: Optional[FramingName] = None,
    *,
    max_buffer: int = DEFAULT_MAX_BUFFER,
) -> Generator[Unified, None, None]:
    """Unified events from a streaming sync response (httpx or httpx2 ``Response``, requests ``Response``; not
    yet read).

    ``provider`` as for :func:`~ssewire.iter_unified`; ``framing`` defaults from ``Content-Type``. Raises
    :class:`~ssewire.ResponseStatusError` for a non-2xx response. A dropped connection ends with the
    ``stream_truncated`` error event. The response is closed when iteration ends, stops or fails.
    """
    source = _SyncSource(response)
    try:
        error = source.status_error()
        if error is not None:
            raise error
        decoder = StreamDecoder(provider, _resolve_framing(response, framing), max_buffer=max_buffer)
        events = decoder.events
        try:
            for chunk in source.body():
                yield from events(chunk)
        except _ConnectionLost as lost:
            yield from connection_lost(decoder, lost.cause)
            return
        source.close()
        yield from decoder.close()
    finally:
        source.close()


async def aiter_response(
    response: AsyncResponse,
    provider: Union[ProviderName, Normalizer],
    framing: Optional[FramingName] = None,
    *,
    max_buffer: int = DEFAULT_MAX_BUFFER,
) -> AsyncGenerator[Unified, None]:
    """The async twin of :func:`iter_response`, for an httpx or httpx2 ``Response`` from an ``AsyncClient`` or an
    aiohttp ``ClientResponse``. ``aclose()`` and task cancellation close the response."""
    source = _AsyncSource(response)
    try:
        error = await source.status_error()
        if error is not None:
            raise error
        decoder = StreamDecoder(provider, _resolve_framing(response, framing), max_buffer=max_buffer)
        next_chunk, events = source.next_chunk, decoder.events
        try:
            while chunk := await next_chunk():
                for event in events(chunk):
                    yield event
        except _ConnectionLost as lost:
            for event in connection_lost(decoder, lost.cause):
                yield event
            return
        await source.aclose(complete=True)
        for event in decoder.close():
            yield event
    finally:
        await source.aclose()


def iter_response_events(
    response: SyncResponse,
    framing: Optional[FramingName] = None,
    *,
    max_buffer: int = DEFAULT_MAX_BUFFER,
) -> Generator[SSEEvent, None, None]:
    """Framed events (:class:`~ssewire.SSEEvent`) from a streaming sync response, not normalised.

    Raises :class:`~ssewire.ResponseStatusError` for a non-2xx response and :class:`~ssewire.StreamTruncatedError`
    when the connection drops mid-body (or a JSON-array body ends early).
    """
    source = _SyncSource(response)
    try:
        error = source.status_error()
        if error is not None:
            raise error
        scanner = make_scanner(_resolve_framing(response, framing), max_buffer=max_buffer)
        feed = scanner.feed
        try:
            for chunk in source.body():
                yield from feed(chunk)
        except _ConnectionLost as lost:
            raise _truncated(lost.cause) from lost.cause
        source.close()
        yield from scanner.close()
    finally:
        source.close()


async def aiter_response_events(
    response: AsyncResponse,
    framing: Optional[FramingName] = None,
    *,
    max_buffer: int = DEFAULT_MAX_BUFFER,
) -> AsyncGenerator[SSEEvent, None]:
    """The async twin of :func:`iter_response_events`."""
    source = _AsyncSource(response)
    try:
        error = await source.status_error()
        if error is not None:
            raise error
        scanner = make_scanner(_resolve_framing(response, framing), max_buffer=max_buffer)
        next_chunk, feed = source.next_chunk, scanner.feed
        try:
            while chunk := await next_chunk():
                for event in feed(chunk):
                    yield event
        except _ConnectionLost as lost:
            raise _truncated(lost.cause) from lost.cause
        await source.aclose(complete=True)
        for event in scanner.close():
            yield event
    finally:
        await source.aclose()
