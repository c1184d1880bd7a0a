"""The shape-variants benchmark: each rewrite keeps the events and changes the bytes it says it changes."""

from __future__ import annotations

import json

import pytest

from .generate import generate
from .shapes import MORE_EVENTS, STREAMS, VARIANTS, _chunks, _read, measure, rewrite_sse

SMALL = 60_000


@pytest.mark.parametrize(("name", "variant"), [(n, v) for n, vs in STREAMS.items() for v in vs])
def test_every_variant_reads_the_same_events_from_other_bytes(name: str, variant: str) -> None:
    stream = generate(name, SMALL)
    body = rewrite_sse(stream.data, VARIANTS[variant])
    assert body != stream.data
    (text, events), (plain_text, plain_events) = (_read(_chunks(b), stream.provider) for b in (body, stream.data))
    assert text == plain_text
    assert events > plain_events if variant in MORE_EVENTS else events == plain_events


def test_the_rewrites_do_what_they_say() -> None:
    obj = {"id": "c", "object": "chunk", "usage": None, "choices": [{"delta": {"content": "a"}, "logprobs": None}]}
    assert json.loads(VARIANTS["minimal"](obj)) == {"id": "c", "choices": [{"delta": {"content": "a"}}]}
    assert list(json.loads(VARIANTS["keys-reversed"](obj))) == ["choices", "usage", "object", "id"]
    assert json.loads(VARIANTS["role-every-delta"](obj))["choices"][0]["delta"] == {"role": "assistant", "content": "a"}
    assert VARIANTS["spaced"]({"a": 1}) == '{"a": 1}'
    gemini = {"candidates": [{"content": {"parts": [{"text": "abcd", "thought": True}, {"text": "e"}, {"x": 1}]}}]}
    assert json.loads(VARIANTS["parts-split"](gemini))["candidates"][0]["content"]["parts"] == [
        {"text": "ab", "thought": True},
        {"text": "cd", "thought": True},
        {"text": "e"},
        {"x": 1},
    ]
    body = b'event: x\ndata: {"a":1}\r\n\r\ndata: [DONE]\n\n'
    assert rewrite_sse(body, VARIANTS["spaced"]) == b'event: x\ndata: {"a": 1}\r\n\r\ndata: [DONE]\n\n'


def test_a_stream_is_measured_against_its_plain_shape() -> None:
    result = measure("openai-chat", SMALL, samples=1, min_time=0.001)
    assert set(result["speed_vs_plain"]) == set(STREAMS["openai-chat"])
    assert all(speed > 0 for speed in result["speed_vs_plain"].values())


def test_the_check_names_each_variant_below_the_floor() -> None:
    from .shapes import below_floor

    doc = {"streams": {"a": {"speed_vs_plain": {"spaced": 0.5, "minimal": 1.1}}, "b": {"speed_vs_plain": {}}}}
    assert below_floor(doc) == [("a", "spaced", 0.5)]
    assert below_floor(doc, floor=0.4) == []
