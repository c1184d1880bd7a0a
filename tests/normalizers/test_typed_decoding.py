"""Typed decoding (msgspec: only the fields a normaliser needs, ``raw`` decoded lazily) changes nothing users see:
every fixture, shared recording and generated benchmark stream gives the same events, ``raw`` included, with the
fast paths on and off, at several chunkings; and the fast paths really run on the bulk of each stream."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import chunked
from helpers.events import decoded_whole, dicts
from helpers.streams import all_streams
from ssewire import Unified, collect, iter_events, iter_unified, normalizer_for
from ssewire.events import LazyPayload
from ssewire.normalizers._fast import typed

pytestmark = pytest.mark.skipif(not typed.set_enabled(True), reason="msgspec (the fast extra) is not installed")


STREAMS = all_streams()


def _events(data: bytes, provider: Any, framing: Any, size: Any, on: bool) -> list[Unified]:
    typed.set_enabled(on)
    try:
        return list(iter_unified(chunked(data, size), provider, framing))
    finally:
        typed.set_enabled(True)


@pytest.mark.parametrize(("name", "data", "provider", "framing"), STREAMS, ids=[s[0] for s in STREAMS])
def test_typed_decoding_gives_the_same_events_raw_included(name: str, data: bytes, provider: Any, framing: Any) -> None:
    untyped = [e.to_dict(with_raw=True) for e in _events(data, provider, framing, None, False)]
    for size in (None, 7, 4096):
        fast = _events(data, provider, framing, size, True)
        assert [e.to_dict(with_raw=True) for e in fast] == untyped, f"chunk size {size}"
    on, off = (
        collect(_events(data, provider, framing, 1000, True)),
        collect(_events(data, provider, framing, 1000, False)),
    )
    assert repr(on) == repr(off)
    assert [c.to_dict() for c in on.tool_calls] == [c.to_dict() for c in off.tool_calls]
    assert (on.response_id, on.model, on.usage) == (off.response_id, off.model, off.usage)


@pytest.mark.parametrize("name", ["openai-responses", "anthropic-messages", "openai-chat", "xai-chat", "gemini-sse"])
def test_the_fast_paths_carry_the_bulk_of_each_stream(name: str) -> None:
    stream = next((s for s in STREAMS if s[0] == f"generated-{name}"), None)
    if stream is None:
        pytest.skip("the benchmark generator is not importable here")
    reader, structs = typed.take_deltas is not None, typed.chat_chunk is not None
    available = {"gemini-sse": structs, "openai-chat": reader or structs, "xai-chat": reader or structs}
    if not available.get(name, reader):
        pytest.skip("no fast path for this stream here (the compiled reader or msgspec is missing)")
    events = _events(stream[1], stream[2], stream[3], 16384, True)
    deltas = [e for e in events if e.type in ("text_delta", "reasoning_delta")]
    lazy = [e for e in deltas if type(e._raw) is LazyPayload]
    assert deltas and len(lazy) >= 0.9 * len(deltas)  # decoded only as far as needed
    assert all(type(e.raw) is dict for e in lazy)  # and the payload is there when asked for
    assert all(type(e._raw) is dict for e in lazy)  # decoded once, then kept


def test_events_of_one_payload_share_one_decoded_raw() -> None:
    if typed.gemini_chunk is None:
        pytest.skip("Gemini chunks are read into structs by msgspec only")
    chunk = b'data: {"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b","thought":true}]}}]}\n\n'
    first, second = list(iter_unified([chunk], "gemini"))[:2]
    assert type(first._raw) is LazyPayload
    assert first.raw is second.raw and first.raw["candidates"][0]["content"]["parts"][1]["thought"] is True


@pytest.mark.parametrize(
    "payload",
    [
        b'{"candidates":[{"content":{"parts":[{"text":"a","functionCall":null}]}}]}',  # present, even as null
        b'{"candidates":[{"content":{"parts":[{"text":"a","thoughtSignature":"s"}]}}]}',
        b'{"candidates":[{"content":{"parts":[{"text":""}]}}]}',
        b'{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"STOP"}]}',
        b'{"candidates":[{"content":{"parts":[{"inlineData":{"data":"QUJD"},"thoughtSignature":"s"}]}}]}',
        b'{"candidates":[{"content":{"parts":[{"inlineData":{"data":"QUJD"},"text":""}]}}]}',
        b'{"candidates":[{"content":{"parts":[{"executableCode":{"code":"1"},"inlineData":{"data":"QUJD"}}]}}]}',
        b'{"candidates":[{"content":{"parts":[{"text":"a","executableCode":{"code":"1"}}]}}]}',
        b'{"candidates":[{"content":{"parts":[{"fileData":{"fileUri":"gs://a"}}]},"finishReason":"STOP"}]}',
        # large chunks are not searched for citations or calls: their structs say
        b'{"candidates":[{"content":{"parts":[{"inlineData":{"data":"' + b"QUJD" * 8192 + b'"}}]},'
        b'"groundingMetadata":{"groundingChunks":[{"web":{"uri":"https://a","title":"A"}}],'
        b'"groundingSupports":[{"segment":{"text":"x"},"groundingChunkIndices":[0]}]}}]}',
        b'{"candidates":[{"content":{"parts":[{"text":"' + b"a" * 40000 + b'"}]},'
        b'"citationMetadata":{"citationSources":[{"uri":"https://b"}]}}]}',
        b'{"candidates":[{"content":{"parts":[{"text":"' + b"a" * 40000 + b'"},'
        b'{"functionCall":{"name":"f","args":{}}}]}}]}',
        b'{"candidates":[{"content":{"parts":[{"text":"a","functionCall":null}]}}],"pad":"' + b"b" * 40000 + b'"}',
        b'{"choices":[{"index":0,"delta":{"content":"a","reasoning_content":"b"}}]}',
        b'{"choices":[{"index":0,"delta":{"content":["a"]}}]}',
        b'{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":1}}',
    ],
)
def test_shapes_the_fast_paths_do_not_own_take_the_full_decode(payload: bytes, typed_decoding_off: None) -> None:
    provider = "gemini" if b"candidates" in payload else "openai-chat"
    body = b"data: " + payload + b"\n\n"
    want = decoded_whole(lambda: dicts(iter_unified([body], provider)))  # type: ignore[arg-type]
    assert dicts(iter_unified([body], provider)) == want  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "usage",
    [b'{"promptTokenCount":3,"candidatesTokenCount":5,"totalTokenCount":8}', b"null", b"{}", b"7", b'"x"', b"[1]"],
)
def test_a_usage_on_a_typed_chunk_is_the_full_decodes(usage: bytes) -> None:
    """Gemini sends ``usageMetadata`` on every chunk: the typed path keeps it as text, decoded when it is read (an
    object), skipped (null), or leaves the chunk to the full decode (anything else). Two parts a chunk: no chunk
    here is the compiled reader's."""
    if typed.gemini_chunk is None:
        pytest.skip("Gemini chunks are read into structs by msgspec only")
    parts = b'{"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b","thought":true}]},"index":0}],'
    chunks = [
        parts + b'"usageMetadata":{"promptTokenCount":1,"totalTokenCount":1},"modelVersion":"m"}',
        parts + b'"usageMetadata":' + usage + b"}",
        b'{"candidates":[{"content":{"parts":[{"text":"."}]},"finishReason":"STOP"}]}',
    ]
    body = b"".join(b"data: " + chunk + b"\n\n" for chunk in chunks)
    want = decoded_whole(lambda: dicts(iter_unified([body], "gemini")))
    assert dicts(iter_unified([body], "gemini")) == want
    on, off = collect(iter_unified([body], "gemini")), decoded_whole(lambda: collect(iter_unified([body], "gemini")))
    assert (on.usage, on.text, on.reasoning) == (off.usage, off.text, off.reasoning)
    if usage.startswith(b"{"):
        assert type(list(iter_unified([body], "gemini"))[2]._raw) is LazyPayload  # (the typed path's)


@pytest.mark.parametrize("size", [4, 40_000], ids=["small", "large"])
def test_media_parts_are_read_without_decoding_their_data(size: int) -> None:
    """A generated image or audio chunk (``inlineData`` / ``fileData`` parts, text around them) takes the typed
    path: the same events as the full decode, ``raw`` left lazy (the data is decoded only if a caller reads it)."""
    if typed.gemini_chunk is None:
        pytest.skip("Gemini chunks are read into structs by msgspec only")
    image = b'{"inlineData":{"mimeType":"image/png","data":"' + b"iVBO" * size + b'"}}'
    chunks = [
        b'{"candidates":[{"content":{"role":"model","parts":[' + image + b']},"index":0}],"responseId":"r"}',
        b'{"candidates":[{"content":{"parts":[{"text":"a"},' + image + b',{"fileData":{"fileUri":"gs://b/c.png"}},'
        b'{"text":"b","thought":true}]}}],"usageMetadata":{"promptTokenCount":3},"modelVersion":"m"}',
        b'{"candidates":[{"content":{"parts":[{"text":"."}]},"finishReason":"STOP"}]}',
    ]
    body = b"".join(b"data: " + chunk + b"\r\n\r\n" for chunk in chunks)
    want = decoded_whole(lambda: dicts(iter_unified([body], "gemini")))
    got = list(iter_unified([body], "gemini"))
    assert [e.type for e in got[:5]] == ["raw", "text_delta", "raw", "raw", "reasoning_delta"]
    assert all(type(e._raw) is LazyPayload for e in got[:5])  # not decoded yet
    assert dicts(got) == want
    assert collect(iter_unified([body], "gemini")).model == "m"


@pytest.mark.parametrize("on", [True, False], ids=["typed", "untyped"])
@pytest.mark.parametrize(("name", "data", "provider", "framing"), STREAMS, ids=[s[0] for s in STREAMS])
def test_normalize_over_a_batch_equals_one_event_at_a_time(
    name: str, data: bytes, provider: Any, framing: Any, on: bool
) -> None:
    """The contract's batch entry point (what StreamDecoder calls per chunk) gives exactly the events of calling
    the normaliser on each framed event in turn, auto-detection included."""
    framed = list(iter_events([data], framing))
    typed.set_enabled(on)
    try:
        for name_or_auto in (provider, "auto"):
            batch, single = normalizer_for(name_or_auto), normalizer_for(name_or_auto)
            whole = batch.normalize(framed) + batch.finish()
            one_by_one = [u for ev in framed for u in single(ev)] + single.finish()
            assert [e.to_dict(with_raw=True) for e in whole] == [e.to_dict(with_raw=True) for e in one_by_one]
    finally:
        typed.set_enabled(True)


def test_a_chunk_with_a_type_in_a_chat_stream_read_by_the_openai_normaliser_is_routed_alike() -> None:
    """Once an ``openai`` stream turned out to be Chat Completions, a payload with a ``type`` still follows the
    Responses rules, with the fast paths on or off and at any chunking."""
    body = (
        b'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
        b'data: {"type":"response.output_text.delta","delta":"zz","choices":[{"index":0,"delta":{"content":"b"}}]}'
        b"\n\ndata: [DONE]\n\n"
    )
    seen = set()
    for on in (True, False):
        for size in (None, 5, 64):
            seen.add(tuple(repr(e.to_dict(with_raw=True)) for e in _events(body, "openai", "sse", size, on)))
    assert len(seen) == 1
    assert "'text': 'zz'" in next(iter(seen))[1]


def test_a_gemini_chunk_the_compiled_reader_declines_is_not_decoded_twice() -> None:
    """With the compiled reader, a chunk it declines (code to run, a call, the finish) goes straight to the full
    decode: the reader takes every chunk the typed path would (several parts included), so a typed decode would
    only fail first. Without the reader, the typed path reads the text chunks (and tries the code's, which it
    declines: no search rules it out)."""
    body = (
        b'data: {"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b","thought":true}]}}],"modelVersion":"g"}'
        b'\n\ndata: {"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"1"}}]}}]}\n\n'
        b'data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"x":1}}}]}}]}\n\n'
        b'data: {"candidates":[{"content":{"parts":[{"text":"c"}]},"finishReason":"STOP"}]}\n\n'
    )
    for reader in (True, False):
        normalizer: Any = normalizer_for("gemini")
        decoded: list[str] = []
        decode = normalizer._typed
        assert decode is not None

        def counting(data: str, decode: Any = decode, decoded: list[str] = decoded) -> Any:
            decoded.append(data)
            return decode(data)

        normalizer._typed = counting
        if not reader:
            normalizer._delta_rule = None  # (the compiled reader off for this stream)
        events = list(iter_unified([body], normalizer))
        assert [(e.type, e.text) for e in events if e.text] == [
            ("text_delta", "a"),
            ("reasoning_delta", "b"),
            ("text_delta", "c"),
        ]
        assert len(decoded) == (0 if reader and typed.take_deltas is not None else 2)
