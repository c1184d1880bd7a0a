"""Type stub of the compiled scanners (``_scanner_c.pyx``); the pure-Python twin ``_scanner_py`` is the reference."""

from typing import Any, Final, Optional, Union

from typing_extensions import TypeAlias, disjoint_base

__all__ = [
    "DEFAULT_MAX_BUFFER",
    "EventStreamMessage",
    "EventStreamParser",
    "JSONArrayStreamParser",
    "NDJSONParser",
    "SSEEvent",
    "SSEParser",
    "Utf8Event",
]

_BytesLike: TypeAlias = Union[bytes, bytearray, memoryview]

DEFAULT_MAX_BUFFER: Final[int]
MAX_HEADERS_LENGTH: Final[int]
MAX_PAYLOAD_LENGTH: Final[int]
SIMD: str  # "avx2", "sse2" or "none": the vector instructions the scanners use on this CPU
KNOWN_EVENT_TYPES: tuple[str, ...]  # the documented event types SSE scanners take from a table, not decoding them

def _fill_known_types() -> None: ...
def _select_simd(allow_avx2: bool) -> str: ...
def _select_crc(allow_clmul: bool) -> bool: ...
def _crc32(data: bytes, crc: int = 0) -> int: ...
def use_unified(unified: type, fields: tuple[str, ...], defaults: tuple[Any, ...]) -> bool: ...
def new_unified(
    kind: str, raw: Any, text: str = "", sequence: Optional[int] = None, signature: Optional[str] = None
) -> Any: ...

@disjoint_base
class SSEEvent:
    event: Optional[str]
    data: str
    id: Optional[str]
    retry: Optional[int]
    def __init__(
        self,
        event: Optional[str] = "message",
        data: str = "",
        id: Optional[str] = None,  # noqa: A002
        retry: Optional[int] = None,
    ) -> None: ...
    def json(self) -> Any: ...
    def _key(self) -> tuple[Optional[str], str, Optional[str], Optional[int]]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

class Utf8Event(SSEEvent):
    utf8: Optional[bytes]
    def __init__(
        self,
        event: Optional[str],
        utf8: bytes,
        id: Optional[str] = None,  # noqa: A002
        retry: Optional[int] = None,
    ) -> None: ...
    @property
    def data(self) -> str: ...
    @data.setter
    def data(self, value: str) -> None: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...

@disjoint_base
class SSEParser:
    max_buffer: int
    flush_incomplete: bool
    last_event_id: Optional[str]
    retry: Optional[int]
    events_parsed: int
    bytes_fed: int
    def __init__(self, max_buffer: int = ..., *, flush_incomplete: bool = True) -> None: ...
    def feed(self, data: _BytesLike) -> list[SSEEvent]: ...
    def close(self) -> list[SSEEvent]: ...

@disjoint_base
class JSONArrayStreamParser:
    max_buffer: int
    events_parsed: int
    bytes_fed: int
    def __init__(self, max_buffer: int = ...) -> None: ...
    @property
    def finished(self) -> bool: ...
    def feed(self, data: _BytesLike) -> list[SSEEvent]: ...
    def close(self) -> list[SSEEvent]: ...

class NDJSONParser:
    max_buffer: int
    events_parsed: int
    bytes_fed: int
    def __init__(self, max_buffer: int = ...) -> None: ...
    def feed(self, data: _BytesLike) -> list[SSEEvent]: ...
    def close(self) -> list[SSEEvent]: ...

@disjoint_base
class EventStreamMessage(SSEEvent):
    headers: dict[str, Any]
    payload: bytes
    message_type: Optional[str]
    content_type: Optional[str]
    def __init__(
        self,
        event: Optional[str] = None,
        data: str = "",
        headers: Optional[dict[str, Any]] = None,
        payload: bytes = b"",
        message_type: Optional[str] = None,
        content_type: Optional[str] = None,
    ) -> None: ...
    def _message_key(self) -> tuple[Any, ...]: ...

@disjoint_base
class EventStreamParser:
    max_buffer: int
    events_parsed: int
    bytes_fed: int
    def __init__(self, max_buffer: int = ...) -> None: ...
    def feed(self, data: _BytesLike) -> list[SSEEvent]: ...
    def close(self) -> list[SSEEvent]: ...
