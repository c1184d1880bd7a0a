"""Where the pure-Python scanner lived before 0.2 (:mod:`ssewire._scan.scanner_py`): pickles of its objects made by
earlier versions keep loading."""

from ._scan.scanner_py import (  # noqa: F401
    DEFAULT_MAX_BUFFER,
    EventStreamMessage,
    EventStreamParser,
    JSONArrayStreamParser,
    NDJSONParser,
    SSEEvent,
    SSEParser,
)
