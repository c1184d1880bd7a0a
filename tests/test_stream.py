"""iter_unified / iter_events / parse_sse_bytes: the glue between scanners and normalisers."""

from __future__ import annotations

import gzip
import zlib
from typing import Any, Callable, Generator, Iterator, Optional, cast

import pytest

from ssewire import (
    DetectionError,
    FramingError,
    Normalizer,
    SSEBufferOverflowError,
    StreamTruncatedError,
    Unified,
    collect,
    collect_text,
    iter_events,
    iter_unified,
    parse_sse_bytes,
)
from ssewire.errors import ChunkTypeError
from ssewire.framing import make_scanner
from ssewire.names import ProviderName
from ssewire.stream import StreamDecoder


class Echo(Normalizer):
    """Test normaliser: every payload's "t" becomes a text_delta; {"end": true} is the terminal event."""

    provider = "echo"
    terminal = "end"

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        if obj.get("end"):
            self.done = True
            return [Unified("done", stop_reason="end", raw_stop_reason="end")]
        self.usage = {"seen": obj.get("n")}
        return [Unified("text_delta", text=str(obj.get("t", "")), raw=obj)]


def test_iter_unified_with_a_normalizer_instance() -> None:
    body = b'data: {"t": "a", "n": 1}\n\ndata: {"t": "b", "n": 2}\n\ndata: {"end": true}\n\n'
    events = list(iter_unified([body[:5], body[5:]], Echo()))
    assert [e.type for e in events] == ["text_delta", "text_delta", "done"]
    assert collect_text(events) == "ab"


def test_missing_terminal_event_is_reported_with_best_usage() -> None:
    events = list(iter_unified([b'data: {"t": "a", "n": 7}\n\n'], Echo()))
    assert [e.type for e in events] == ["text_delta", "error"]
    assert events[-1].error is not None and events[-1].error["type"] == "stream_truncated"
    assert events[-1].usage == {"seen": 7}


def test_non_json_data_becomes_raw_and_done_sentinel_is_swallowed() -> None:
    events = list(iter_unified([b'data: not json\n\ndata: [1, 2]\n\ndata: [DONE]\n\ndata: {"end": 1}\n\n'], Echo()))
    assert [e.type for e in events] == ["raw", "raw", "done"]
    assert events[0].raw == {"event": "message", "data": "not json"}
    assert events[1].raw == {"event": "message", "data": [1, 2]}


def test_json_array_truncation_yields_error_event() -> None:
    events = list(iter_unified([b'[{"t": "a"}, {"t": "b'], Echo(), "json_array"))
    assert [e.type for e in events] == ["text_delta", "error"]
    assert events[-1].error is not None
    assert events[-1].error["type"] == "stream_truncated"
    assert "JSON array" in events[-1].error["message"]


def test_json_array_without_closing_bracket_after_terminal_is_tolerated() -> None:
    events = list(iter_unified([b'[{"t": "a"}, {"end": true}'], Echo(), "json_array"))
    assert [e.type for e in events] == ["text_delta", "done"]


def test_framing_errors_raise() -> None:
    with pytest.raises(FramingError):
        list(iter_unified([b"<html>oops</html>"], Echo(), "json_array"))
    with pytest.raises(SSEBufferOverflowError):
        list(iter_unified([b"data: " + b"x" * 100 + b"\n\n"], Echo(), max_buffer=10))


def test_backpressure_pulls_one_chunk_per_event() -> None:
    pulled: list[int] = []

    def chunks() -> Iterator[bytes]:
        for i in range(5):
            pulled.append(i)
            yield b'data: {"t": "%d"}\n\n' % i

    gen = cast(Generator[Unified, None, None], iter_unified(chunks(), Echo()))
    assert pulled == []
    assert next(gen).text == "0"
    assert pulled == [0]
    assert next(gen).text == "1"
    assert pulled == [0, 1]
    gen.close()


def test_iter_events_and_parse_sse_bytes() -> None:
    body = b"event: a\ndata: 1\n\ndata: 2"
    assert [(e.event, e.data) for e in iter_events([body])] == [("a", "1"), ("message", "2")]
    assert [(e.event, e.data) for e in parse_sse_bytes(body, 3)] == [("a", "1"), ("message", "2")]
    assert parse_sse_bytes(body) == parse_sse_bytes(body, 1)
    with pytest.raises(StreamTruncatedError):
        list(iter_events([b"[{}"], "json_array"))
    with pytest.raises(StreamTruncatedError):  # either spelling of the name
        list(iter_events([b"[{}"], "json-array"))  # type: ignore[arg-type]


def test_max_buffer_is_keyword_only_in_the_glue() -> None:
    body = [b"data: " + b"x" * 100 + b"\n\n"]
    with pytest.raises(TypeError):
        list(iter_events(body, "sse", 10))  # type: ignore[misc]
    with pytest.raises(TypeError):
        StreamDecoder("openai", "sse", 10)  # type: ignore[misc]
    with pytest.raises(SSEBufferOverflowError):
        list(iter_events(body, "sse", max_buffer=10))
    with pytest.raises(SSEBufferOverflowError):
        StreamDecoder("openai", "sse", max_buffer=10).feed(body[0])


def test_the_decoder_takes_either_spelling_and_keeps_one() -> None:
    body = b'[{"candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}]}]'
    for name in ("json_array", "json-array"):
        decoder = StreamDecoder("gemini", name)  # type: ignore[arg-type]
        events = decoder.feed(body) + decoder.close()
        assert collect_text(events) == "hi" and events[-1].type == "done", name
        assert decoder.reconnect() is not None and type(decoder.scanner).__name__ == "JSONArrayStreamParser"


def test_unknown_framing_and_provider() -> None:
    with pytest.raises(ValueError, match="framing"):
        make_scanner("ndjsn")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="provider"):
        list(iter_unified([b""], "nope"))  # type: ignore[arg-type]


def test_async_twins_give_the_same_events() -> None:
    import asyncio

    from ssewire import aiter_events, aiter_unified

    body = b'data: {"t": "a"}\n\ndata: {"t": "b"}\n\ndata: {"end": true}\n\n'

    async def chunks() -> Any:
        for i in range(0, len(body), 5):
            yield body[i : i + 5]

    async def run() -> tuple[list[Unified], list[Any]]:
        unified = [e async for e in aiter_unified(chunks(), Echo())]
        framed = [e async for e in aiter_events(chunks())]
        return unified, framed

    unified, framed = asyncio.run(run())
    assert unified == list(iter_unified([body], Echo()))
    assert framed == list(iter_events([body]))


@pytest.mark.parametrize(
    "payload",
    [
        b'{"a":' + b"[" * 1100 + b"]" * 1100 + b"}",  # valid JSON nested deeper than the decoders go
        b"[" * 100_000,
    ],
)
@pytest.mark.parametrize("provider", ["openai", "openai-chat", "anthropic", "xai", "gemini", "auto"])
def test_pathological_nesting_becomes_raw_never_an_exception(payload: bytes, provider: ProviderName) -> None:
    try:
        events = list(iter_unified([b"data: " + payload + b"\n\n"], provider))
    except DetectionError:
        # "auto" on an interpreter whose json module decodes this depth (PyPy): an object no provider sends
        assert provider == "auto" and payload.startswith(b"{")
        return
    assert events[-1].type == "error"  # the stream never finished
    assert all(e.type in ("raw", "error") for e in events)


_CHAT = (
    b'data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
    b'data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def _pieces(body: bytes, first: int) -> list[bytes]:
    """An empty chunk, the body's first ``first`` bytes, then the rest in 7-byte chunks."""
    return [b"", body[:first], *(body[i : i + 7] for i in range(first, len(body), 7))]


@pytest.mark.parametrize("first", [1, 2, 5])
@pytest.mark.parametrize("encode", ["gzip", "zlib", "identity"])
def test_a_body_of_no_stated_encoding_is_told_by_its_first_bytes_whatever_the_chunking(encode: str, first: int) -> None:
    encoders: dict[str, Callable[[bytes], bytes]] = {"gzip": gzip.compress, "zlib": zlib.compress, "identity": bytes}
    body = encoders[encode](_CHAT)
    chunks = _pieces(body, first)
    decoder = StreamDecoder("openai-chat", "sse")
    events = [event for chunk in chunks for event in decoder.feed(chunk)] + decoder.close()
    assert collect_text(events) == "hi"
    assert [e.type for e in events][-1] == "done"
    result = collect(iter_unified(chunks, "openai-chat", "sse"))
    assert (result.text, result.stop_reason, result.response_id, result.model) == ("hi", "end", "c1", "m")


def test_a_first_chunk_that_is_not_bytes_is_a_chunk_type_error_before_any_sniffing() -> None:
    decoder = StreamDecoder("openai-chat")
    with pytest.raises(ChunkTypeError):
        decoder.feed(cast(Any, "data: x\n\n"))


def test_collect_reads_an_unread_iterator_once_and_never_one_already_read_from() -> None:
    fresh = iter_unified([_CHAT], "openai-chat")
    assert collect(fresh).text == "hi"
    assert list(fresh) == []  # read by collect(): spent
    assert collect(fresh).text == ""
    started = iter_unified([_CHAT], "openai-chat")
    assert next(started).type == "text_delta"
    assert collect(started).stop_reason == "end"  # the rest of the events, as they come
    closed = iter_unified([_CHAT], "openai-chat")
    closed.close()
    assert list(closed) == [] and collect(closed).text == ""
