"""StreamTap: parse on the side of a forwarded stream, never touching the bytes."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import CORPUS, FIXTURES, load_manifest
from ssewire import SSEBufferOverflow, SSEwireError, collect, iter_unified
from ssewire.tap import StreamTap

BODY = (
    b'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"r1",'
    b'"model":"m","status":"in_progress"}}\n\n'
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,'
    b'"item_id":"i","output_index":0,"content_index":0,"delta":"Hel"}\n\n'
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":2,'
    b'"item_id":"i","output_index":0,"content_index":0,"delta":"lo"}\n\n'
    b'event: response.completed\ndata: {"type":"response.completed","sequence_number":3,"response":{"id":"r1",'
    b'"status":"completed","usage":{"input_tokens":2,"output_tokens":2,"total_tokens":4}}}\n\n'
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_bytes_pass_through_untouched_and_result_is_built() -> None:
    chunks = [BODY[i : i + 50] for i in range(0, len(BODY), 50)]
    tap = StreamTap("openai")
    forwarded = []
    for chunk in chunks:
        assert tap.feed(chunk) is None
        forwarded.append(chunk)
    assert b"".join(forwarded) == BODY
    result = tap.close()
    assert result.text == "Hello"
    assert result.stop_reason == "end"
    assert result.usage is not None and result.usage.total_tokens == 4
    assert tap.metrics.bytes == len(BODY)
    assert tap.metrics.events == len(list(iter_unified([BODY], "openai")))  # raw, 2 deltas, usage, done
    assert tap.metrics.chunks == len(chunks)


def test_timing_metrics_with_a_controlled_clock() -> None:
    clock = FakeClock()
    tap = StreamTap("openai", clock=clock)
    parts = BODY.split(b"\n\n")
    times = [0.5, 1.0, 1.75, 2.0]
    for part, at in zip(parts, times):
        clock.now = 100.0 + at
        tap.feed(part + b"\n\n")
    tap.close()
    m = tap.metrics
    assert m.first_byte_at == 0.5
    assert m.time_to_first_token == 1.0
    assert m.time_to_done == 2.0
    assert m.gaps == [0.75]
    assert m.gap_stats() == {"max": 0.75, "p50": 0.75, "p95": 0.75}
    assert m.to_dict()["time_to_first_token"] == 1.0


def test_times_count_from_started_when_given() -> None:
    clock = FakeClock()
    clock.now = 100.0
    tap = StreamTap("openai", clock=clock, started=99.25)  # the request went out before the tap was made
    clock.now = 100.5
    tap.feed(BODY)
    tap.close()
    assert tap.metrics.first_byte_at == 1.25 and tap.metrics.time_to_done == 1.25


def test_truncated_stream_is_recorded() -> None:
    tap = StreamTap("openai")
    tap.feed(BODY[: BODY.index(b"event: response.completed")])
    result = tap.close()
    assert result.error is not None and result.error["type"] == "stream_truncated"
    assert tap.metrics.time_to_done is None


def test_parse_failure_never_reaches_the_forwarding_path() -> None:
    tap = StreamTap("openai", max_buffer=16)
    tap.feed(b"data: " + b"x" * 100)
    tap.feed(b"\n\n")
    assert isinstance(tap.failure, SSEBufferOverflow)
    assert tap.metrics.bytes == 108
    tap.close()


def test_tap_on_corpus_streams_matches_collect() -> None:
    from helpers.corpus import provider_for
    from ssewire import collect

    for capture in load_manifest():
        data = (CORPUS / capture["file"]).read_bytes()
        tap = StreamTap()  # auto-detected
        for i in range(0, len(data), 1000):
            tap.feed(data[i : i + 1000])
        tapped = tap.close()
        direct = collect(iter_unified([data], provider_for(capture)))
        assert (tapped.text, tapped.reasoning, tapped.stop_reason) == (
            direct.text,
            direct.reasoning,
            direct.stop_reason,
        )
        assert [(c.id, c.arguments) for c in tapped.tool_calls] == [(c.id, c.arguments) for c in direct.tool_calls]


def test_tap_survives_payloads_that_break_decoders() -> None:
    deep = b'data: {"choices":[],"x":' + b"[" * 1100 + b"]" * 1100 + b"}\n\n"
    tap = StreamTap("auto")
    assert tap.feed(deep) is None
    assert tap.feed(b"data: [DONE]\n\n") is None
    tap.close()  # never raises either


def _gzip(data: bytes, members: int = 1) -> bytes:
    import gzip

    step = len(data) // members + 1
    return b"".join(gzip.compress(data[i : i + step]) for i in range(0, len(data), step))


def _deflate(data: bytes, wrapped: bool) -> bytes:
    import zlib

    compressor = zlib.compressobj(wbits=15 if wrapped else -15)
    return compressor.compress(data) + compressor.flush()


def _tap_over(body: bytes, size: int, **kwargs: object) -> tuple[StreamTap, list[bytes]]:
    tap = StreamTap("openai", **kwargs)  # type: ignore[arg-type]
    forwarded = []
    for i in range(0, len(body), size):
        chunk = body[i : i + size]
        tap.feed(chunk)
        forwarded.append(chunk)
    tap.close()
    return tap, forwarded


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", _gzip),
        (None, _gzip),  # recognised by the magic bytes
        ("gzip", lambda data: _gzip(data, members=3)),  # several gzip members back to back
        ("deflate", lambda data: _deflate(data, True)),
        ("deflate", lambda data: _deflate(data, False)),  # raw deflate, as some servers send
        ("identity", lambda data: data),
    ],
)
@pytest.mark.parametrize("size", [1, 7, 64, 100_000])
def test_compressed_upstream_is_parsed_and_forwarded_untouched(encoding: object, encode: Any, size: int) -> None:
    body = encode(BODY)
    tap, forwarded = _tap_over(body, size, content_encoding=encoding)
    assert b"".join(forwarded) == body
    assert tap.failure is None
    assert tap.result.text == "Hello" and tap.result.stop_reason == "end"
    assert tap.metrics.bytes == len(body)


def test_a_decompression_bomb_is_parsed_in_bounded_pieces() -> None:
    big = BODY.replace(b'"delta":"lo"', b'"delta":"' + b"o" * 5_000_000 + b'"')
    tap, _ = _tap_over(_gzip(big), 4096, content_encoding="gzip", max_buffer=1 << 20)
    assert tap.failure is not None  # the 5 MB event exceeds max_buffer: refused, never held whole
    assert tap.result.error is not None and tap.result.error["type"] == "buffer_overflow"


def test_an_encoding_the_tap_cannot_read_stops_parsing_and_says_so() -> None:
    tap, forwarded = _tap_over(b"\x00br-bytes", 4, content_encoding="br")
    assert b"".join(forwarded) == b"\x00br-bytes"
    assert tap.failure is not None
    assert tap.result.error is not None and "'br'" in tap.result.error["message"]


def test_corrupt_gzip_is_a_failure_not_an_exception() -> None:
    tap, _ = _tap_over(b"\x1f\x8b" + b"not gzip at all" * 10, 16)
    assert tap.failure is not None
    assert tap.result.error is not None and "gzip" in tap.result.error["message"]


def test_failure_is_in_the_result_error() -> None:
    tap = StreamTap("openai", max_buffer=16)
    tap.feed(b"data: " + b"x" * 100)
    result = tap.close()
    assert result.error is not None
    assert result.error["type"] == "buffer_overflow"
    assert "stopped parsing" in result.error["message"]
    assert result.error["incomplete_tool_calls"] == []


def test_feed_after_close_raises() -> None:
    tap = StreamTap("openai")
    tap.feed(BODY)
    tap.close()
    with pytest.raises(SSEwireError, match="after close"):
        tap.feed(b"data: {}\n\n")
    assert tap.close().text == "Hello"  # close() stays idempotent


def test_first_byte_first_event_and_first_content_are_told_apart() -> None:
    """A keep-alive comment is a byte, ``response.created`` and a ping are events, only a delta is content; gaps
    are measured between content chunks."""
    clock = FakeClock()
    tap = StreamTap("openai", clock=clock)
    created, first, second, completed = (part + b"\n\n" for part in BODY.split(b"\n\n")[:4])
    for at, chunk in ((0.25, b": keep-alive\n\n"), (0.5, created), (0.75, b": ping\n\n"), (2.0, first)):
        clock.now = 100.0 + at
        tap.feed(chunk)
    clock.now = 102.5
    tap.feed(second)
    clock.now = 103.0
    tap.feed(completed)
    tap.close()
    m = tap.metrics
    assert (m.time_to_first_byte, m.time_to_first_event, m.time_to_first_content) == (0.25, 0.5, 2.0)
    assert m.time_to_first_token == 2.0 and m.gaps == [0.5] and m.time_to_done == 3.0
    assert {k: m.to_dict()[k] for k in ("time_to_first_event", "time_to_first_content")} == {
        "time_to_first_event": 0.5,
        "time_to_first_content": 2.0,
    }


def test_role_only_chat_chunks_are_not_content() -> None:
    clock = FakeClock()
    tap = StreamTap("openai-chat", clock=clock)
    role = b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
    text = b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    clock.now = 101.0
    tap.feed(role)
    clock.now = 104.0
    tap.feed(text)
    assert (tap.metrics.time_to_first_event, tap.metrics.time_to_first_content) == (1.0, 4.0)


def test_usage_provenance_and_a_reported_cost() -> None:
    done = tap_result(BODY)
    assert done.usage_provenance == "reported" and done.cost is None
    cut = tap_result(BODY[: BODY.index(b"event: response.completed")])
    assert cut.usage_provenance == "absent" and cut.usage is None
    chat = (
        b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
        b'data: {"id":"c","model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,'
        b'"total_tokens":4,"cost":0.00021}}\n\n'
    )
    partial = tap_result(chat, "openai-chat")  # no finish_reason, no [DONE]: cut
    assert partial.usage_provenance == "partial" and partial.cost == 0.00021
    whole = tap_result(
        chat.replace(b'"finish_reason":null', b'"finish_reason":"stop"') + b"data: [DONE]\n\n", "openai-chat"
    )
    assert whole.usage_provenance == "reported" and whole.cost == 0.00021


def tap_result(body: bytes, provider: Any = "openai") -> Any:
    tap = StreamTap(provider)
    tap.feed(body)
    return tap.close()


STREAM_FIXTURES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".sse", ".ndjson", ".jsonl", ".eventstream"))


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="only CPython frees by reference counting")
@pytest.mark.parametrize("path", STREAM_FIXTURES, ids=[p.name for p in STREAM_FIXTURES])
@pytest.mark.parametrize("named", [True, False], ids=["named", "auto"])
def test_a_finished_tap_leaves_no_reference_cycles(path: Path, named: bool) -> None:
    # A gateway makes a tap per request: what a finished one held must go at once (reference counting), not wait
    # for the cycle collector (memory and collector time growing with the number of streams).
    expected = json.loads(path.with_name(path.name + ".expected.json").read_text())
    provider: Any = expected["provider"] if named else "auto"
    data = path.read_bytes()
    gc.disable()
    gc.freeze()  # the rest of the heap (and any garbage already in it) out of the collector's sight: only the tap's
    try:  # objects are examined, instead of two full collections over the suite's heap per test
        tap = StreamTap(provider)
        for start in range(0, len(data), 97):
            tap.feed(data[start : start + 97])
        assert tap.close() is tap.result and tap.metrics.bytes == len(data)
        del tap
        assert gc.collect() == 0
    finally:
        gc.unfreeze()
        gc.enable()


def _tapped(data: bytes, provider: Any, sizes: list[int], clock: FakeClock) -> StreamTap:
    """A tap fed ``data`` in chunks of the ``sizes`` in turn, the clock a second on at each chunk."""
    tap = StreamTap(provider, clock=clock, max_buffer=4096)  # (a small buffer: some fixtures fail the same way)
    start, turn = 0, 0
    while start < len(data):
        size = sizes[turn % len(sizes)]
        clock.now += 1.0
        tap.feed(data[start : start + size])
        start, turn = start + size, turn + 1
    tap.close()
    return tap


def _seen(tap: StreamTap) -> tuple[Any, ...]:
    failure = tap.failure
    return (
        tap.metrics.to_dict(),
        tap.metrics.gaps,
        tap.result.to_dict(with_raw=False),
        None if failure is None else (type(failure), str(failure)),
    )


@pytest.mark.parametrize("path", STREAM_FIXTURES, ids=[p.name for p in STREAM_FIXTURES])
def test_chunks_parsed_a_few_at_a_time_give_what_parsing_each_at_once_gives(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ssewire import tap as tap_module

    provider = json.loads(path.with_name(path.name + ".expected.json").read_text())["provider"]
    data = path.read_bytes()
    sizes = [1, 7, 64, 300, 5]
    batched = _seen(_tapped(data, provider, sizes, FakeClock()))
    monkeypatch.setattr(tap_module, "PARSE_EVERY", 1)  # each chunk parsed as it comes
    assert _seen(_tapped(data, provider, sizes, FakeClock())) == batched


def test_reading_the_result_metrics_or_failure_mid_stream_parses_every_chunk_fed() -> None:
    parts = [part + b"\n\n" for part in BODY.split(b"\n\n") if part]
    tap = StreamTap("openai")
    for part in parts[:2]:
        tap.feed(part)
    assert tap.result.text == "Hel"
    tap.feed(parts[2])
    assert tap.metrics.events == 3 and tap.failure is None
    assert tap.result.text == "Hello" and tap.result.stop_reason is None
    broken = StreamTap("openai", max_buffer=16)
    broken.feed(b"data: " + b"x" * 100 + b"\n\n")
    assert isinstance(broken.failure, SSEBufferOverflow)


def test_a_tap_holds_a_bounded_number_of_chunks_it_has_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    from ssewire import tap as tap_module

    tap = StreamTap("openai")
    held = []
    for index in range(100):  # the stream's first event one byte at a time
        tap.feed(BODY[index : index + 1])
        held.append(len(tap._noted))
    assert max(held) == tap_module.PARSE_EVERY - 1 and held[-1] < tap_module.PARSE_EVERY
    big = StreamTap("openai")
    big.feed(BODY * (tap_module.PARSE_FROM // len(BODY) + 1))  # past PARSE_FROM bytes: parsed at once
    assert big._noted == []


def test_a_reusable_buffer_is_parsed_as_it_is_fed() -> None:
    tap = StreamTap("openai")
    buffer = bytearray(BODY)
    tap.feed(buffer)
    buffer[:] = b"\x00" * len(buffer)  # the owner reuses its buffer once the chunk is forwarded
    view = memoryview(bytearray(b"x"))
    tap.feed(view[:0])
    assert tap.close().text == "Hello"


def test_the_bytes_of_a_memoryview_of_wider_items_are_counted_as_bytes() -> None:
    from array import array

    body = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
    padded = body + b"\n" * (-len(body) % 4)  # (whole 4-byte items: blank lines at the end change no event)
    for parsing in (True, False):  # (an encoding the tap cannot read: it only counts what passes)
        tap = StreamTap("anthropic", content_encoding=None if parsing else "br")
        tap.feed(memoryview(array("I", padded)))
        tap.close()
        assert (tap.metrics.bytes, tap.metrics.chunks) == (len(padded), 1), parsing
        if parsing:
            assert tap.result.to_dict() == collect(iter_unified([body], "anthropic")).to_dict()
