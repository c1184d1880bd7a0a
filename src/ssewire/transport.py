"""What counts as a dropped connection: the transport errors of the standard library and of the HTTP clients
ssewire supports, recognised without importing any client.

An exception can only be a client's if that client's module is loaded, so :func:`is_transport_error` looks the
classes up in ``sys.modules`` when an exception arrives: ``import ssewire`` imports no client.
"""

from __future__ import annotations

import sys

__all__ = ["TRANSPORT_ERRORS", "is_transport_error"]

#: Module -> exception classes that mean "the connection dropped or the body could not be read to its end".
TRANSPORT_ERRORS: dict[str, tuple[str, ...]] = {
    "httpx": ("TransportError",),  # ReadError, RemoteProtocolError, ReadTimeout, ConnectError ...
    "httpx2": ("TransportError",),
    "aiohttp": ("ClientError",),  # ClientPayloadError, ClientConnectionError, ServerDisconnectedError ...
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
