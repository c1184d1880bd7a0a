"""``collect()`` and the tap read a stream straight into an :class:`~ssewire.Accumulator`
(``StreamDecoder.feed_into``): where the compiled delta reader runs, the text of plain text and reasoning deltas
reaches the result without an event being made. The result is exactly the one the events give, one by one, on
every stream, at several chunkings, with typed decoding on and off; and :func:`~ssewire.iter_unified`'s iterator
still behaves as an iterator."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from helpers import chunked, result_snapshot
from helpers.streams import all_streams
from ssewire import Accumulator, StreamResult, StreamTap, _decoding, _decoding_py, collect, iter_unified
from ssewire.errors import ChunkTypeError
from ssewire.events import LazyPayload, new_usage
from ssewire.normalizers._fast import typed

STREAMS = all_streams()


def _one_by_one(data: bytes, provider: Any, framing: Any, size: Any) -> tuple[StreamResult, int, int]:
    """The reference: every event made, then added one at a time; and how many events, how many deltas."""
    accumulator = Accumulator()
    events = list(iter_unified(chunked(data, size), provider, framing))
    for event in events:
        accumulator.add(event)
    deltas = sum(e.type in ("text_delta", "reasoning_delta", "tool_call_start", "tool_call_delta") for e in events)
    return accumulator.result, len(events), deltas


@pytest.mark.parametrize("on", [True, False], ids=["typed", "untyped"])
@pytest.mark.parametrize(("name", "data", "provider", "framing"), STREAMS, ids=[s[0] for s in STREAMS])
def test_collect_and_the_tap_give_the_result_of_the_events(
    name: str, data: bytes, provider: Any, framing: Any, on: bool
) -> None:
    typed.set_enabled(on)
    try:
        for size in (None, 7, 4096):
            want, events, deltas = _one_by_one(data, provider, framing, size)
            got = collect(iter_unified(chunked(data, size), provider, framing))
            listed = collect(list(iter_unified(chunked(data, size), provider, framing)))
            tap = StreamTap(provider, framing)
            for chunk in chunked(data, size):
                tap.feed(chunk)
            tapped = tap.close()
            assert result_snapshot(got) == result_snapshot(want), f"collect(iter_unified), chunk size {size}"
            assert result_snapshot(listed) == result_snapshot(want), f"collect(list), chunk size {size}"
            assert result_snapshot(tapped) == result_snapshot(want), f"StreamTap, chunk size {size}"
            assert tap.metrics.events == events
            assert (tap.metrics.first_token_at is not None) == (deltas > 0)
    finally:
        typed.set_enabled(True)


def _python_twins(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The tap and ``iter_unified`` on the Python twins of the decoder and the accumulator (a compiled class cannot
    be spied on); the Python ``Accumulator`` class, to spy on. What the normaliser hands over is the same for both."""
    monkeypatch.setattr("ssewire.stream.StreamDecoder", _decoding_py.StreamDecoder)
    monkeypatch.setattr("ssewire.stream.UnifiedEvents", _decoding_py.UnifiedEvents)
    return _decoding_py.Accumulator


def test_plain_text_reaches_the_result_without_events(monkeypatch: pytest.MonkeyPatch) -> None:
    if typed.TextSink is None or typed.take_deltas is None:
        pytest.skip("the compiled delta reader is not built")
    stream = next((s for s in STREAMS if s[0] == "generated-anthropic-messages"), None)
    if stream is None:
        pytest.skip("the benchmark generator is not importable here")
    made = []
    spied = _python_twins(monkeypatch)
    take = spied.take
    monkeypatch.setattr(spied, "take", lambda self, events: (made.append(len(events)), take(self, events))[1])
    tap = _decoding_py.StreamTap(stream[2], stream[3])
    tap.feed(stream[1])
    tap.close()
    assert 3 * sum(made) < tap.metrics.events  # most events (the text deltas) were never made
    assert tap.result.text


def test_argument_fragments_of_a_named_call_reach_the_result_without_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call's argument deltas the reader takes go into the result's call without their events, and the call
    (complete, or cut off: incomplete with the text that arrived) is the one the events give."""
    if typed.TextSink is None or typed.take_deltas is None:
        pytest.skip("the compiled delta reader is not built")
    start = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","model":"c","content":[]}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}\n\n'
    )
    deltas = b"".join(
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"%s"}}\n\n' % part
        for part in (b'{\\"a\\"', b": 1", b"}")
    )
    stop = (
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    made = []
    spied = _python_twins(monkeypatch)
    take = spied.take
    monkeypatch.setattr(spied, "take", lambda self, events: (made.append(list(events)), take(self, events))[1])
    for body in (start + deltas + stop, start + deltas):  # closed, and cut off before its stop
        made.clear()
        got = _decoding_py.collect(iter_unified([start, deltas, body[len(start + deltas) :]], "anthropic", "sse"))
        want, _, _ = _one_by_one(body, "anthropic", "sse", None)
        assert result_snapshot(got) == result_snapshot(want)
        assert not any(e.type == "tool_call_delta" for batch in made for e in batch)  # none was made
    assert want.incomplete_tool_calls[0].arguments_raw == '{"a": 1}'


def _body() -> list[bytes]:
    return [
        b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"a"}}]}'
        b"\n\n",
        b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"b"}}]}'
        b"\n\n",
        b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},'
        b'"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
    ]


def test_iter_unified_is_an_iterator_and_collect_takes_what_is_left() -> None:
    events = iter_unified(_body(), "openai-chat")
    assert next(events).text == "a"
    rest = collect(events)  # already started: collect() reads the rest as events
    assert rest.text == "b" and rest.stop_reason == "end"
    assert list(events) == []
    again = iter_unified(_body(), "openai-chat")
    kinds = [e.type for e in again]
    assert kinds[:2] == ["text_delta", "text_delta"] and kinds[-1] == "done"
    closed = iter_unified(_body(), "openai-chat")
    closed.close()
    assert list(closed) == [] and collect(closed).text == ""


def test_iter_unified_reads_nothing_until_asked() -> None:
    pulled = []

    def chunks() -> Any:
        for chunk in _body():
            pulled.append(chunk)
            yield chunk

    events = iter_unified(chunks(), "openai-chat")
    assert pulled == []
    assert collect(events).text == "ab" and len(pulled) == 3
    lazy = iter_unified(b"data: {}\n\n", "openai-chat")  # type: ignore[arg-type]  # the mistake is reported when the stream is read
    with pytest.raises(ChunkTypeError):
        collect(lazy)
    with pytest.raises(ChunkTypeError):
        next(iter_unified(b"data: {}\n\n", "openai-chat"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown provider"):
        collect(iter_unified(_body(), "nope"))  # type: ignore[arg-type]


def _per_event(data: bytes, framing: Any) -> list[bytes]:
    """``data`` cut after each event's end (SSE: a blank line; NDJSON: a line), as a live stream arrives; other
    framings in 64-byte chunks."""
    end = {"sse": rb"\r\n\r\n|\n\n|\r\r", "ndjson": rb"\n"}.get(framing)
    if end is None:
        return chunked(data, 64)
    cuts = [0, *(match.end() for match in re.finditer(end, data)), len(data)]
    return [data[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]


@pytest.mark.parametrize(("name", "data", "provider", "framing"), STREAMS, ids=[s[0] for s in STREAMS])
def test_a_chunk_of_deltas_read_by_the_reader_s_run_alone_gives_the_result_of_the_events(
    name: str, data: bytes, provider: Any, framing: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the last chunk gave only deltas, the next starts with the delta reader's run (``read_deltas_into``),
    the rest of the reading path only for what it leaves: chunks of one event each, as a live stream arrives, give
    the result of the events, and a stream of many deltas is read that way."""
    taken = []
    real = _decoding_py.read_run  # (the run's one home; spied on in the Python twins: a C call cannot be)

    def counted(reader: Any, events: Any, accumulator: Any, *given: Any) -> int:
        got = real(reader, events, accumulator, *given)
        taken.append(got)
        return int(got)

    spied = _python_twins(monkeypatch)
    monkeypatch.setattr(_decoding_py, "read_run", counted)
    chunks = _per_event(data, framing)
    want, events, deltas = _one_by_one(data, provider, framing, None)
    accumulator = spied()
    assert iter_unified(chunks, provider, framing).collect_into(accumulator)
    assert result_snapshot(accumulator.result) == result_snapshot(want)
    assert (accumulator.events, accumulator.deltas) == (events, deltas)
    tap = _decoding_py.StreamTap(provider, framing)
    for chunk in chunks:
        tap.feed(chunk)
    assert result_snapshot(tap.close()) == result_snapshot(want)
    if framing == "sse" and deltas >= 20 and typed.take_deltas is not None and want.error is None:
        assert sum(taken) > 0, "no chunk was read by the delta reader's run"


_ABSENT = object()


def _responses_stream(response_tier: Any, top_tier: Any = _ABSENT) -> bytes:
    """A Responses stream whose terminal event is large (its output repeated: read by the typed fast path, its
    ``raw`` left undecoded), its ``response`` naming ``response_tier`` (``_ABSENT``: no such member)."""
    text = "x" * 40_000
    item = {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip
    response = {"id": "resp_1", "object": "response", "model": "gpt-5", "status": "completed", "output": [item],
                "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}}  # fmt: skip
    if response_tier is not _ABSENT:
        response["service_tier"] = response_tier
    terminal: dict[str, Any] = {"type": "response.completed", "sequence_number": 3, "response": response}
    if top_tier is not _ABSENT:
        terminal["service_tier"] = top_tier
    created = {"type": "response.created", "sequence_number": 0, "response": {**response, "output": []}}
    delta = {"type": "response.output_text.delta", "sequence_number": 1, "item_id": "msg_1", "output_index": 0,
             "content_index": 0, "delta": text}  # fmt: skip
    events = [("response.created", created), ("response.output_text.delta", delta), ("response.completed", terminal)]
    return "".join(f"event: {name}\ndata: {json.dumps(body)}\n\n" for name, body in events).encode()


@pytest.mark.parametrize(
    ("response_tier", "top_tier"),
    [("flex", _ABSENT), (None, _ABSENT), (_ABSENT, _ABSENT), ({"type": "priority"}, _ABSENT), (None, "scale"),
     ("", "auto"), (7, _ABSENT)],
)  # fmt: skip
def test_the_service_tier_of_an_undecoded_terminal_event_is_read_without_decoding_it(
    response_tier: Any, top_tier: Any
) -> None:
    """The tier a large terminal event names (its ``response``'s, its own; absent, null, an object, not a string)
    is the one the full decode gives, and the payload, whose output the fast path never built, stays undecoded."""
    body = _responses_stream(response_tier, top_tier)
    terminal = json.loads(body.split(b"data: ")[-1])
    want = _decoding_py.service_tier(terminal, terminal["response"]["usage"])
    for module in {_decoding_py, _decoding}:  # (the Python twin, and the compiled one where it is built)
        events = list(iter_unified([body], "openai", "sse"))
        usage = next(event for event in events if event.type == "usage")
        payload = usage._raw
        accumulator = module.Accumulator()
        accumulator.take(events)
        assert accumulator.result.service_tier == want, module
        if typed.service_tier_members is not None:
            assert isinstance(payload, LazyPayload) and not payload.decoded, "the terminal event was decoded"


def test_a_tier_the_members_cannot_tell_is_read_from_the_whole_payload() -> None:
    odd = LazyPayload('{"service_tier": "flex", "response": [1, 2]}')  # (a response no terminal event has)
    event = new_usage({"input_tokens": 1}, odd)
    accumulator = _decoding_py.Accumulator()
    accumulator.add(event)
    assert accumulator.result.service_tier == "flex"
