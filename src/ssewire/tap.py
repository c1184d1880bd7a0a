"""A pass-through tap for gateways: forward upstream chunks untouched while the stream is parsed on the side.

``tap.feed(chunk)`` returns nothing and never modifies the chunk: the gateway forwards the very bytes it received.
The tap builds the :class:`~ssewire.result.StreamResult` (``tap.result``) and :class:`TapMetrics`
(``tap.metrics``): bytes, events, times to the first byte, first event and first content, gaps between content
chunks, time to done. Timing is read once per chunk, not per event.

Chunks are parsed a few at a time: ``feed`` notes a ``bytes`` chunk and the time it came, and the tap parses what
it noted every :data:`PARSE_EVERY` chunks (or :data:`PARSE_FROM` bytes), at :meth:`StreamTap.close`, and whenever
``result``, ``metrics`` or ``failure`` is read. Each chunk keeps the time it came, so every metric is what parsing
each chunk at once would give; parsing several in a row costs a busy gateway about a third of parsing each between
its other work (the code and data are still in the CPU's caches). A tap holds at most that many chunks it has not
parsed (they are the gateway's own, already forwarded); a ``bytearray`` or ``memoryview`` chunk, whose bytes its
owner may reuse, is parsed at once.

A compressed upstream (a gateway forwarding ``aiter_raw()``) is decompressed for the tap's own parsing: from
``content_encoding=`` (the upstream's ``Content-Encoding``), else gzip and zlib-wrapped deflate are recognised by
their first bytes; the forwarded bytes stay compressed, and what they inflate to is bounded by ``max_inflated``
(past it the tap stops parsing with a ``body_too_large`` error).

A tap never raises into the forwarding path: a stream it cannot parse is recorded in ``tap.failure`` and in
``tap.result.error`` (``type`` says what failed, calls left open are listed as incomplete), and the tap stops
parsing (the bytes keep flowing). ``feed()`` after ``close()`` is a bug in the caller and raises
:class:`~ssewire.SSEwireError`.
"""

from __future__ import annotations

from ._decoding import PARSE_EVERY, PARSE_FROM, StreamTap, TapMetrics

__all__ = ["PARSE_EVERY", "PARSE_FROM", "StreamTap", "TapMetrics"]
