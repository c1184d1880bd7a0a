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

import time
from typing import Any, Callable, Optional, Union

from .content_encoding import UnsupportedEncodingError
from .errors import SSEwireError, error_type
from .events import Unified
from .framing import Chunk
from .limits import DEFAULT_MAX_BUFFER, DEFAULT_MAX_INFLATED
from .names import FramingName, ProviderName
from .normalizers.contract import Normalizer
from .result import Accumulator, StreamResult
from .stream import StreamDecoder

__all__ = ["StreamTap", "TapMetrics"]

_MAX_GAPS = 65536  # gaps kept for percentiles; beyond that every other one is dropped
#: A tap parses the chunks it noted once it holds this many, or this many bytes of them (see the module docstring).
PARSE_EVERY = 16
PARSE_FROM = 8 * 1024


def _percentile(ordered: list[float], q: float) -> Optional[float]:
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class TapMetrics:
    """What a tapped stream did. Times are seconds from the tap's start (its creation, or ``started=``: a reading of
    its clock taken earlier, such as when the request was sent), each None until it
    happened: the first byte, the first event (of any kind), the first content (the first text, reasoning or
    tool-call delta: keep-alive comments, pings, ``response.created``, role-only chunks and other ``raw`` events
    are not content), the terminal event. ``gaps`` are between chunks that carried content."""

    __slots__ = (
        "bytes",
        "chunks",
        "done_at",
        "events",
        "first_byte_at",
        "first_event_at",
        "first_token_at",
        "gaps",
        "last_delta_at",
    )

    def __init__(self) -> None:
        self.bytes = 0
        self.chunks = 0
        self.events = 0
        self.first_byte_at: Optional[float] = None
        self.first_event_at: Optional[float] = None
        self.first_token_at: Optional[float] = None
        self.last_delta_at: Optional[float] = None
        self.done_at: Optional[float] = None
        self.gaps: list[float] = []

    @property
    def time_to_first_byte(self) -> Optional[float]:
        """Seconds until the first byte of the body."""
        return self.first_byte_at

    @property
    def time_to_first_event(self) -> Optional[float]:
        """Seconds until the first event of any kind (a ping or ``response.created`` counts)."""
        return self.first_event_at

    @property
    def time_to_first_content(self) -> Optional[float]:
        """Seconds until the first text, reasoning or tool-call delta: what users wait for."""
        return self.first_token_at

    @property
    def time_to_first_token(self) -> Optional[float]:
        """:attr:`time_to_first_content` (its older name)."""
        return self.first_token_at

    @property
    def time_to_done(self) -> Optional[float]:
        """Seconds until the stream's terminal event (None if it never came)."""
        return self.done_at

    def gap_stats(self) -> dict[str, Optional[float]]:
        """``max``, ``p50`` and ``p95`` of the gaps between deltas (None without two delta chunks)."""
        ordered = sorted(self.gaps)
        return {
            "max": ordered[-1] if ordered else None,
            "p50": _percentile(ordered, 0.50),
            "p95": _percentile(ordered, 0.95),
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything as a JSON-ready dict."""
        return {
            "bytes": self.bytes,
            "chunks": self.chunks,
            "events": self.events,
            "time_to_first_byte": self.first_byte_at,
            "time_to_first_event": self.first_event_at,
            "time_to_first_content": self.first_token_at,
            "time_to_first_token": self.first_token_at,
            "time_to_done": self.done_at,
            "gaps": self.gap_stats(),
        }


class StreamTap:
    """Watches one stream that is forwarded unchanged (see the module docstring)."""

    __slots__ = (
        "_accumulator",
        "_clock",
        "_decoder",
        "_failure",
        "_metrics",
        "_noted",
        "_noted_bytes",
        "_started",
        "closed",
    )

    def __init__(
        self,
        provider: Union[ProviderName, Normalizer] = "auto",
        framing: FramingName = "auto",
        *,
        max_buffer: int = DEFAULT_MAX_BUFFER,
        clock: Callable[[], float] = time.monotonic,
        content_encoding: Optional[str] = None,
        started: Optional[float] = None,
        max_inflated: int = DEFAULT_MAX_INFLATED,
    ) -> None:
        self._accumulator = Accumulator()
        self._clock = clock
        self._started = clock() if started is None else started
        self._metrics = TapMetrics()
        self._failure: Optional[Exception] = None  # why parsing stopped (the bytes kept flowing)
        self._noted: list[tuple[float, Chunk]] = []  # chunks not parsed yet, with the time each came
        self._noted_bytes = 0
        self.closed = False
        self._decoder: Optional[StreamDecoder] = None
        try:
            self._decoder = StreamDecoder(
                provider, framing, max_buffer=max_buffer, content_encoding=content_encoding, max_inflated=max_inflated
            )
        except UnsupportedEncodingError as exc:  # an encoding it cannot read: forwarding goes on, parsing does not
            self._fail(exc)

    def feed(self, chunk: Chunk) -> None:
        """Observe one upstream chunk. Returns nothing; the chunk is never modified (see the module docstring for
        when it is parsed)."""
        if self.closed:
            raise SSEwireError("StreamTap.feed() called after close()")
        if self._decoder is None:  # (parsing stopped: only the bytes are counted)
            metrics = self._metrics
            metrics.bytes += len(chunk)
            metrics.chunks += 1
            return
        noted = self._noted
        noted.append((self._clock() - self._started, chunk))  # (counted in the metrics when parsed)
        size = self._noted_bytes = self._noted_bytes + len(chunk)
        # (a bytearray or memoryview is parsed now: its owner may reuse the buffer)
        if len(noted) >= PARSE_EVERY or size >= PARSE_FROM or type(chunk) is not bytes:
            self._parse_noted()

    def _parse_noted(self) -> None:
        """Parse the chunks noted, in order, each as if it were parsed when it came: its events into the result,
        their times (the chunk's) into the metrics. Parsing stops at a chunk that fails."""
        noted = self._noted
        self._noted = []
        decoder, accumulator, metrics = self._decoder, self._accumulator, self._metrics
        metrics.bytes += self._noted_bytes
        metrics.chunks += len(noted)
        self._noted_bytes = 0
        if noted and metrics.first_byte_at is None:
            metrics.first_byte_at = noted[0][0]
        if decoder is None:
            return
        feed_into = decoder.feed_into
        for now, chunk in noted:
            events, deltas = accumulator.events, accumulator.deltas
            try:
                feed_into(chunk, accumulator)
            except Exception as exc:  # nothing may reach the forwarding path
                self._fail(exc)
                self._observed(events, deltas, now)  # (the error event it recorded)
                return
            if accumulator.events > events:  # (a chunk that ends no event changes no metric but the bytes)
                if accumulator.deltas == deltas:
                    if metrics.first_event_at is not None and metrics.done_at is None:
                        metrics.events += accumulator.events - events  # a chunk of no content: only the count...
                        if accumulator.done:
                            metrics.done_at = now  # ... unless it ended the stream
                        continue
                else:
                    last = metrics.last_delta_at
                    if last is not None and not accumulator.done and metrics.done_at is None:
                        # the bulk of a stream, a chunk of deltas after the first: what _observed does with it
                        metrics.events += accumulator.events - events
                        gaps = metrics.gaps
                        gaps.append(now - last)
                        if len(gaps) >= _MAX_GAPS:
                            del gaps[::2]
                        metrics.last_delta_at = now
                        continue
                self._observed(events, deltas, now)

    @property
    def metrics(self) -> TapMetrics:
        """The stream's :class:`TapMetrics` so far (every chunk fed parsed first)."""
        if self._noted:
            self._parse_noted()
        return self._metrics

    @property
    def failure(self) -> Optional[Exception]:
        """Why parsing stopped (the bytes kept flowing), or None (every chunk fed parsed first)."""
        if self._noted:
            self._parse_noted()
        return self._failure

    def _observed(self, events: int, deltas: int, now: float) -> None:
        """The accumulator took events since it had taken ``events`` events, ``deltas`` of them deltas (deltas and
        the terminal event come only with events)."""
        metrics = self._metrics
        accumulator = self._accumulator
        if accumulator.events > events and metrics.first_event_at is None:
            metrics.first_event_at = now
        metrics.events += accumulator.events - events
        if accumulator.deltas > deltas:
            if metrics.first_token_at is None:
                metrics.first_token_at = now
            elif metrics.last_delta_at is not None:
                gaps = metrics.gaps
                gaps.append(now - metrics.last_delta_at)
                if len(gaps) >= _MAX_GAPS:
                    del gaps[::2]
            metrics.last_delta_at = now
        if metrics.done_at is None and accumulator.done:
            metrics.done_at = now

    def _fail(self, exc: Exception) -> None:
        """Stop parsing: record why (``failure`` and ``result.error``), with the calls left open as incomplete."""
        decoder = self._decoder
        self._failure = exc
        self._decoder = None
        incomplete = decoder.normalizer.incomplete_tool_calls() if decoder is not None else []
        error = {
            "type": error_type(exc),
            "message": f"the tap stopped parsing: {type(exc).__name__}: {exc}",
            "incomplete_tool_calls": incomplete,
        }
        self._accumulator.add(Unified("error", error=error))

    def close(self) -> StreamResult:
        """End of the upstream stream: finish parsing (a stream cut short records ``stream_truncated``)."""
        if not self.closed:
            if self._noted:
                self._parse_noted()
            self.closed = True
            decoder = self._decoder
            if decoder is not None:
                accumulator = self._accumulator
                events, deltas = accumulator.events, accumulator.deltas
                try:
                    decoder.close_into(accumulator)
                except Exception as exc:  # likewise
                    self._fail(exc)
                self._observed(events, deltas, self._clock() - self._started)
        return self.result

    @property
    def result(self) -> StreamResult:
        """The stream's result so far (every chunk fed parsed first)."""
        if self._noted:
            self._parse_noted()
        return self._accumulator.result
