"""What counts as a dropped connection: the transport errors of the standard library and of the HTTP clients
ssewire supports, recognised without importing any client.

An exception can only be a client's if that client's module is loaded, so :func:`is_transport_error` looks the
classes up in ``sys.modules`` when an exception arrives: ``import ssewire`` imports no client.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

from ._scan import SSEParser
from .events import Unified

if TYPE_CHECKING:
    from ._decoding import StreamDecoder

__all__ = ["TRANSPORT_ERRORS", "connection_lost", "describe", "is_transport_error"]

#: Module -> exception classes that mean "the connection dropped or the body could not be read to its end".
TRANSPORT_ERRORS: dict[str, tuple[str, ...]] = {
    "httpx": ("TransportError",),  # ReadError, RemoteProtocolError, ReadTimeout, ConnectError ...
    "httpx2": ("TransportError",),
    # (not ClientError: its ClientResponseError is an HTTP status, raise_for_status()'s, never a dropped connection)
    "aiohttp": ("ClientPayloadError", "ClientConnectionError"),  # ServerDisconnectedError, ClientOSError ...
    "asyncio": ("TimeoutError",),  # (aiohttp's total timeout; an OSError itself from Python 3.11)
    "requests.exceptions": ("ConnectionError", "ChunkedEncodingError"),
    "urllib3.exceptions": ("ProtocolError", "ReadTimeoutError"),
}


def is_transport_error(exc: BaseException) -> bool:
    """True for ``OSError`` (``ConnectionError`` included) and the transport errors of httpx, aiohttp and
    requests (see :data:`TRANSPORT_ERRORS`)."""
    if isinstance(exc, OSError):
        return True
    modules = sys.modules
    for module_name, names in TRANSPORT_ERRORS.items():
        module = modules.get(module_name)
        if module is None:
            continue
        for name in names:
            cls = getattr(module, name, None)
            if isinstance(cls, type) and isinstance(exc, cls):
                return True
    return False


def describe(exc: BaseException) -> str:
    """An exception as ``Type: message`` (its type alone when it has no message)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def connection_lost(decoder: StreamDecoder, exc: BaseException) -> list[Unified]:
    """End a stream whose connection dropped: the event being read is discarded (it never completed), and the
    ``stream_truncated`` error, if the terminal event had not come yet, names the transport error. A body cut
    before its first event is a truncation too, not ``not_a_stream`` (what came says nothing of what was sent)."""
    scanner = decoder.scanner
    scanner = getattr(scanner, "inner", None) or scanner  # (framing="auto": the scanner it chose)
    if isinstance(scanner, SSEParser):
        with contextlib.suppress(AttributeError):  # a read-only flag: the pending event is flushed instead
            scanner.flush_incomplete = False
    events = decoder.close()
    for event in events:
        error = event.error
        if event.type != "error" or error is None:
            continue
        if error.get("type") == "not_a_stream":
            error["type"] = "stream_truncated"
            error.setdefault("incomplete_tool_calls", [])
            error["message"] = f"{error.get('message', '')} (connection lost before its first event: {describe(exc)})"
        elif error.get("type") == "stream_truncated":
            error["message"] = f"{error.get('message', '')} (connection lost: {describe(exc)})"
    return events
