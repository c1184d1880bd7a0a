"""No leaks, and one pending event at most: memory stays flat over repeated parses, and the ``max_buffer`` bound
holds in both implementations (the ``scanner`` fixture); an AWS event stream is read in the memory of one message."""

from __future__ import annotations

import gc
import json
import sys
from types import ModuleType
from typing import Any, Callable

import pytest

from helpers import COMPILED, peak_traced
from helpers.eventstream import encode_message, event
from ssewire import ChunkTypeError, FramingError, SSEBufferOverflow, StreamTruncated
from ssewire._scan import scanner_py as _scanner_py

tracemalloc = pytest.importorskip("tracemalloc")  # CPython's; PyPy has none

needs_compiled = pytest.mark.skipif(COMPILED is None, reason="compiled scanner not built")


def _sse_stream(events: int = 20_000) -> bytes:
    parts = []
    for i in range(events):
        payload = json.dumps({"type": "response.output_text.delta", "sequence_number": i, "delta": " tok\u00e9"})
        parts.append(f"event: response.output_text.delta\nid: {i}\nretry: 3000\ndata: {payload}\n\n".encode())
        if i % 100 == 0:
            parts.append(b": keep-alive\r\ndata: a\rdata: b\r\n\r\nevent: " + str(i).encode() + b"\ndata: x\n\n")
    return b"\xef\xbb\xbf" + b"".join(parts) + b"data: " + b"z" * 300_000 + b"\n\ndata: unterminated"


def _json_body(elements: int = 6_000) -> bytes:
    element = json.dumps({"candidates": [{"content": {"parts": [{"text": 'x "}{" \\ ' * 20}]}}]}, indent=2).encode()
    return b"[" + b",\r\n".join([element] * elements) + b"]"


def _parse_all(parser: Any, data: bytes, size: int) -> int:
    view = memoryview(data)
    count = 0
    for start in range(0, len(data), size):
        count += len(parser.feed(view[start : start + size]))
    return count + len(parser.close())


def _failing_runs(mod: ModuleType) -> None:
    """The error paths: overflow, framing errors, truncation, feeding after an error."""
    for data, make in (
        (b"data: ok\n\ndata: " + b"o" * 5000, lambda: mod.SSEParser(1024)),
        (b"data: 1\n" * 2000, lambda: mod.SSEParser(1024)),
        (b'[{"a": 1}, 2]', mod.JSONArrayStreamParser),
        (b'[{"a": "' + b"b" * 5000, lambda: mod.JSONArrayStreamParser(1024)),
        (b'[{"a": 1}', mod.JSONArrayStreamParser),
        (b'{"a": 1}\n{"a": "' + b"b" * 5000, lambda: mod.NDJSONParser(1024)),
    ):
        for size in (7, 4096, len(data)):
            parser = make()
            with pytest.raises((SSEBufferOverflow, FramingError, StreamTruncated)):
                _parse_all(parser, data, size)
            with pytest.raises((SSEBufferOverflow, FramingError, StreamTruncated)):
                parser.feed(b"more")


def _flat(run: Callable[[], None], rounds: int = 12) -> tuple[int, int]:
    """Allocated blocks and traced bytes grown from round 3 to the last round of ``run``."""
    for _ in range(2):  # warm caches (interned strings, free lists)
        run()
    gc.collect()
    tracemalloc.start()
    try:
        blocks = sys.getallocatedblocks()
        traced = tracemalloc.get_traced_memory()[0]
        for _ in range(rounds):
            run()
        gc.collect()
        return sys.getallocatedblocks() - blocks, tracemalloc.get_traced_memory()[0] - traced
    finally:
        tracemalloc.stop()


@needs_compiled
def test_compiled_scanner_memory_is_flat_over_many_parses() -> None:
    assert COMPILED is not None
    # a quarter of the other tests' streams: still many windows each, and 12 rounds of ~30 parsers, so a block
    # leaked per event, per window or per parser is well past the bounds below
    sse, body = _sse_stream(5_000), _json_body(1_500)
    lines = b"".join(b'{"message":{"content":"token %d \xc3\xa9"},"done":false}\r\n' % i for i in range(5_000))
    assert len(sse) > 1_000_000 and len(body) > 500_000

    def run() -> None:
        for size in (16384, 1 << 19):  # feeds within a window, and of two windows
            assert _parse_all(COMPILED.SSEParser(), sse, size) == 5_000 + 100 + 2
        assert _parse_all(COMPILED.JSONArrayStreamParser(), body, 16384) == 1_500
        assert _parse_all(COMPILED.NDJSONParser(), lines, 16384) == 5_000
        _failing_runs(COMPILED)  # type: ignore[arg-type]

    blocks, traced = _flat(run)
    assert blocks < 200, f"{blocks} allocated blocks leaked"
    assert traced < 64 * 1024, f"{traced} traced bytes leaked"


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@needs_compiled
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_compiled_scanner_rss_is_flat() -> None:
    assert COMPILED is not None
    sse = _sse_stream()
    for _ in range(3):
        _parse_all(COMPILED.SSEParser(), sse, 16384)
    gc.collect()
    before = _rss()
    for _ in range(25):
        _parse_all(COMPILED.SSEParser(), sse, 16384)
        _parse_all(COMPILED.SSEParser(), sse, len(sse))
    gc.collect()
    assert _rss() - before < 8 * 1024 * 1024


def _feed_bytewise(parser: Any, view: memoryview) -> None:
    for i in range(len(view)):
        parser.feed(view[i : i + 1])


@pytest.mark.parametrize(
    ("framing", "opening", "past"),
    [("sse", b"data: ", 1), ("json", b'[{"t": "', 2), ("ndjson", b'{"t": "', 1)],  # JSON: the "[" was fed too
)
def test_one_byte_chunks_of_a_huge_line_or_element_overflow_right_past_max_buffer(
    scanner: ModuleType, framing: str, opening: bytes, past: int
) -> None:
    limit = 64 * 1024
    kinds = {"sse": scanner.SSEParser, "json": scanner.JSONArrayStreamParser, "ndjson": scanner.NDJSONParser}
    parser = kinds[framing](limit)
    view = memoryview(opening + b"x" * (limit * 2))
    with pytest.raises(SSEBufferOverflow):
        _feed_bytewise(parser, view)
    assert parser.bytes_fed == limit + past  # the pending line / element just went past the bound
    with pytest.raises(SSEBufferOverflow):  # and the parser stays failed
        parser.feed(b"\n\n")


MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("scanner", "size"),
    [
        pytest.param(_scanner_py, 4 * MIB, id="python-4MB"),  # the same bound, proved on a chunk 16x the window
        pytest.param(_scanner_py, 100 * MIB, id="python-100MB", marks=pytest.mark.slow),  # > 20 s under tracemalloc
        pytest.param(COMPILED, 100 * MIB, id="cython-100MB", marks=needs_compiled),
    ],
)
def test_megabytes_of_small_events_in_one_call(scanner: ModuleType, size: int) -> None:
    """One ``feed()`` of ``size`` bytes: beyond the events it returns, the parser holds a window, never the chunk
    (the bound is half the chunk, at most 16 MiB: a copy of the chunk fails it)."""
    event = (
        b"event: response.output_text.delta\n"
        b'data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_0123456789abcdef",'
        b'"output_index":0,"content_index":0,"delta":" word","logprobs":[]}\n\n'
    )
    data = event * (size // len(event))
    parser = scanner.SSEParser(max_buffer=64 * 1024)
    gc.collect()
    tracemalloc.start()
    try:
        events = parser.feed(data)
        retained, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(events) == len(data) // len(event)
    assert events[-1].data == events[0].data
    # beyond the events it returns, the parser never held more than a window's worth: no copy of the chunk
    assert peak - retained < min(16 * MIB, size // 2), f"peak {peak} retained {retained}"


LARGE_EVENTS = {
    "sse-one-line": ("SSEParser", b"data: " + b"a" * 540_000 + b"\n\n"),
    "sse-one-line-held-utf8": ("SSEParser", b"data: " + "\u00e9".encode() * 270_000 + b"\n\n"),
    "sse-many-lines": ("SSEParser", b"".join(b"data: " + b"b" * 700 + b"\n" for _ in range(770)) + b"\n"),
    "ndjson": ("NDJSONParser", b'{"t": "' + b"c" * 540_000 + b'"}\n'),
    "json-array": ("JSONArrayStreamParser", b'[{"t": "' + b"d" * 540_000 + b'"}]'),
}


@pytest.mark.parametrize("kind", list(LARGE_EVENTS))
@pytest.mark.parametrize("size", [16384, 65536])
def test_a_large_event_fed_in_chunks_costs_about_twice_its_size(scanner: ModuleType, kind: str, size: int) -> None:
    """An event of ~540 KB fed in chunks: its pending bytes, then its data copied out of them, at most ~2.5x the
    event (the buffer it grew in is cut to it before the copy: grown by doubling to 1 MiB, it would cost 2.9x)."""
    name, body = LARGE_EVENTS[kind]
    events: list[Any] = []
    peak = peak_traced(lambda: events.extend(_each_feed(getattr(scanner, name)(), body, size)))
    assert len(events) == 1 and len(events[0].data.encode()) > 530_000
    assert peak < 2.5 * len(body), f"peak {peak / len(body):.2f}x the event"


@needs_compiled
@pytest.mark.parametrize("size", [4096, 16384, 65536])
def test_the_compiled_sse_scanner_hands_a_large_held_event_over_in_the_buffer_it_grew_in(size: int) -> None:
    """A large event held as UTF-8 leaves the compiled SSE scanner as the bytes object its buffer is (no copy, and
    no more than a quarter of room while it fills): about its size, not twice it."""
    _, body = LARGE_EVENTS["sse-one-line-held-utf8"]
    compiled: Any = COMPILED
    events: list[Any] = []
    peak = peak_traced(lambda: events.extend(_each_feed(compiled.SSEParser(), body, size)))
    assert len(events) == 1 and type(events[0]).__name__ == "Utf8Event"
    assert events[0].utf8 == body[6:-2] and events[0].data == "\u00e9" * 270_000
    assert peak < 1.4 * len(body), f"peak {peak / len(body):.2f}x the event"


@pytest.mark.parametrize("kind", list(LARGE_EVENTS))
def test_a_scanner_keeps_nothing_of_a_large_event_once_it_is_out(scanner: ModuleType, kind: str) -> None:
    """Once a large event is returned (and dropped), the scanner holds a buffer of at most 64 KiB, not the one the
    event grew in, while the stream goes on."""
    name, body = LARGE_EVENTS[kind]
    parser = getattr(scanner, name)()
    more = {
        "SSEParser": b"data: x\n\ndata: y",
        "NDJSONParser": b'{"t": 1}\n{"t": ',
        "JSONArrayStreamParser": b',{"t": 1},{',
    }
    view = memoryview(body[:-1] if name == "JSONArrayStreamParser" else body)  # (the array goes on: no "]")
    gc.collect()
    tracemalloc.start()
    try:
        events = [event for start in range(0, len(view), 16384) for event in parser.feed(view[start : start + 16384])]
        events += parser.feed(more[name])  # more events, and the start of one more
        assert len(events) >= 1 and len(events[0].data.encode()) > 530_000
        del events
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 96 * 1024, f"{held} bytes held after the event"


def _each_feed(parser: Any, data: bytes, size: int) -> list[Any]:
    view = memoryview(data)
    out: list[Any] = []
    for start in range(0, len(data), size):
        out += parser.feed(view[start : start + size])
    out += parser.close()
    return out


# --- AWS event-stream: one message at a time ----------------------------------------------------------------------


def _bedrock_message(payload: int) -> bytes:
    headers: dict[str, Any] = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, b"x" * payload)


@pytest.mark.parametrize("size", [1000, 16384, 100_000])
def test_a_long_event_stream_is_read_in_the_memory_of_one_message(scanner: ModuleType, size: int) -> None:
    """200 messages of 64 KiB (13 MB) fed in chunks, the messages dropped as they come: the peak is the pending
    message, then the payload and text of the message returned (and the chunk's own messages), never the stream."""
    message = _bedrock_message(64 * 1024)
    stream = message * 200
    counted: list[int] = []
    peak = peak_traced(lambda: counted.append(_parse_all(scanner.EventStreamParser(), stream, size)))
    assert counted == [200]
    assert peak < 4.5 * len(message) + 2 * size, f"peak {peak} for messages of {len(message)} bytes"
    assert peak < len(stream) // 20


def test_a_pending_event_stream_message_is_bounded_by_max_buffer(scanner: ModuleType) -> None:
    """A message of exactly ``max_buffer`` bytes, fed in 4 KiB chunks: all but its last byte are held in about
    ``max_buffer`` bytes (not in a buffer doubled past it); one byte more is refused from the prelude, before any of
    the body is held."""
    message = _bedrock_message(1024 * 1024)
    view = memoryview(message)
    parser = scanner.EventStreamParser(max_buffer=len(message))
    gc.collect()
    tracemalloc.start()
    try:
        for start in range(0, len(message) - 1, 4096):
            assert parser.feed(view[start : min(start + 4096, len(message) - 1)]) == []
        held = tracemalloc.get_traced_memory()[0]
        [got] = parser.feed(view[-1:])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(got.payload) == 1024 * 1024
    assert held < 1.15 * len(message), f"{held} bytes held for a pending message of {len(message)}"
    assert peak < 3.3 * len(message)  # the pending bytes, then the payload and its text
    parser = scanner.EventStreamParser(max_buffer=len(message) - 1)
    tracemalloc.start()
    try:
        with pytest.raises(SSEBufferOverflow):
            parser.feed(view[:4096])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert parser.bytes_fed == 4096 and peak < 64 * 1024  # nothing held for the 1 MiB the prelude announced


def test_one_byte_chunks_of_an_event_stream_message_over_max_buffer_fail_at_its_prelude(scanner: ModuleType) -> None:
    parser = scanner.EventStreamParser(64 * 1024)
    view = memoryview(_bedrock_message(64 * 1024))
    with pytest.raises(SSEBufferOverflow):
        _feed_bytewise(parser, view)
    assert parser.bytes_fed == 12  # the prelude said how long the message is: nothing of it was held
    with pytest.raises(SSEBufferOverflow):
        parser.feed(b"")


def _event_stream_runs(mod: ModuleType) -> None:
    """Event streams read cleanly (small and large messages, chunked and whole) and every way they fail."""
    small = event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": " tok\u00e9"}, "p": "abcd"})
    stream = small * 5_000 + _bedrock_message(300_000) + small * 100
    for size in (16384, len(stream)):
        assert _parse_all(mod.EventStreamParser(), stream, size) == 5_101
    short = small * 20 + _bedrock_message(5000) + small
    for data, make in (
        (short[:-1] + bytes([short[-1] ^ 1]), mod.EventStreamParser),  # a message CRC mismatch
        (short[:-30] + bytes([short[-30] ^ 1]) + short[-29:], mod.EventStreamParser),  # a prelude CRC mismatch
        (small + encode_message([("a", (11, b""))]), mod.EventStreamParser),  # a type that does not exist
        (small + encode_message([("a", "x"), ("a", "y")]), mod.EventStreamParser),  # a header twice
        (small + encode_message([("a", (9, b"uuid"))]), mod.EventStreamParser),  # headers past their length
        (short, lambda: mod.EventStreamParser(1000)),
        (short[:-7], mod.EventStreamParser),
    ):
        for size in (7, 4096, len(data)):
            parser = make()
            with pytest.raises((SSEBufferOverflow, FramingError, StreamTruncated)):
                _parse_all(parser, data, size)
            with pytest.raises((SSEBufferOverflow, FramingError, StreamTruncated)):
                parser.feed(b"more")


@needs_compiled
def test_compiled_event_stream_memory_is_flat_over_many_parses() -> None:
    assert COMPILED is not None
    blocks, traced = _flat(lambda: _event_stream_runs(COMPILED), rounds=6)  # type: ignore[arg-type]
    assert blocks < 200, f"{blocks} allocated blocks leaked"
    assert traced < 64 * 1024, f"{traced} traced bytes leaked"


def test_long_event_names_are_never_kept_after_their_event(scanner: ModuleType) -> None:
    # a cache of names each up to max_buffer long held hundreds of times the one event memory is bounded by
    parser = scanner.SSEParser(200_000)

    def run() -> None:
        for i in range(80):
            [ev] = parser.feed(b"event: %08d" % i + b"e" * 50_000 + b"\ndata: x\n\n")
            assert len(ev.event) == 50_008
            del ev

    assert peak_traced(run) < 2_000_000  # (a name's bytes and str, a few at a time: 80 kept would be 8 MB)


def test_data_lines_completed_by_chunks_that_end_mid_line_are_folded(scanner: ModuleType) -> None:
    # 5-byte chunks end inside nearly every line: the lines they complete must still fold into one value
    body = b"data:\n" * 100_000 + b"\n"
    parser = scanner.SSEParser(500_000)
    view = memoryview(body)

    def run() -> None:
        out = []
        for i in range(0, len(body), 5):
            out += parser.feed(view[i : i + 5])
        assert [len(e.data) for e in out] == [99_999]

    assert peak_traced(run) < 2_500_000  # (a value per line: 14 MB and more)


def test_a_chunk_without_the_buffer_protocol_is_a_chunk_type_error(scanner: ModuleType) -> None:
    import array

    for parser in (scanner.SSEParser(), scanner.JSONArrayStreamParser()):
        with pytest.raises(ChunkTypeError):
            parser.feed(list(b"data: x\n\n"))  # (a list of ints was read as if it were its bytes)
    assert [e.data for e in scanner.SSEParser().feed(array.array("B", b"data: x\n\n"))] == ["x"]
