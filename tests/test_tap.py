"""StreamTap: parse on the side of a forwarded stream, never touching the bytes."""

from __future__ import annotations

from conftest import CORPUS, load_manifest
from ssewire import SSEBufferOverflow, iter_unified
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
    from corpus_expect import provider_for
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
