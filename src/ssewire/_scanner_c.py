"""Where the compiled scanner lived before 0.2 (:mod:`ssewire._scan.scanner_c`): ``ssewire._scanner_c.SIMD`` and
pickles of its objects made by earlier versions keep working."""

from ._scan.scanner_c import (  # noqa: F401
    DEFAULT_MAX_BUFFER,
    MAX_HEADERS_LENGTH,
    MAX_PAYLOAD_LENGTH,
    SIMD,
    EventStreamMessage,
    EventStreamParser,
    JSONArrayStreamParser,
    NDJSONParser,
    SSEEvent,
    SSEParser,
)
