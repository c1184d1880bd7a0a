"""Constants every layer shares, defined once: the default bound on one event and the UTF-8 byte order mark."""

from __future__ import annotations

__all__ = ["BOM", "DEFAULT_MAX_BUFFER", "DEFAULT_MAX_INFLATED"]

#: Default bound on one pending event (a line, one event's data, one JSON element), in bytes: 64 MiB. Large
#: enough for Gemini's single-event base64 images; memory stays bounded by one event, never by the stream.
DEFAULT_MAX_BUFFER = 64 * 1024 * 1024

#: Default bound on the bytes a compressed (gzip, deflate) body may inflate to: 128 MiB, far above any real LLM
#: stream (a long answer is a few MB of events), far below what a decompression bomb reaches.
DEFAULT_MAX_INFLATED = 128 * 1024 * 1024

#: The UTF-8 byte order mark, dropped once at the start of a stream.
BOM = b"\xef\xbb\xbf"
