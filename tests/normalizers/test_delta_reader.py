"""The compiled delta reader (``normalizers._fast.deltas_c``) makes exactly the events the full decode makes, ``raw``
included, or leaves the event to the full decode: on generated payloads built to be awkward (escapes, duplicate
keys, surrogates, odd numbers, nesting, whitespace, invalid JSON) as well as on plain ones, for each provider that
declares a delta rule. The recordings and fixtures are compared in test_typed_decoding.py."""

from __future__ import annotations

import json
import re
from typing import Any, Optional

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from helpers import examples
from ssewire import Unified, collect, iter_unified
from ssewire.events import LazyPayload
from ssewire.normalizers import anthropic, chat, gemini, normalizer_for, openai
from ssewire.normalizers._fast import typed
from ssewire.normalizers.contract import Normalizer
from ssewire.normalizers.tool_calls import compact_json

pytestmark = pytest.mark.skipif(
    typed.delta_rule((("type",),), {}, 0) is None, reason="the compiled reader is not built"
)

_events = pytest.importorskip("ssewire._scan.scanner_c")  # the reader reads the compiled scanners' events directly
from ssewire._scan.scanner_py import SSEEvent as PyEvent  # noqa: E402  # and anyone else's through attributes

RESPONSES_EVENTS = ["response.output_text.delta", "response.reasoning_text.delta", "response.refusal.delta"]
ARGUMENT_EVENTS = ["response.function_call_arguments.delta", "response.custom_tool_call_input.delta"]


def _both(
    provider: str,
    events: list[Any],
    first: tuple[Any, ...] = (),
    last: tuple[Any, ...] = (),
    taught: tuple[Any, ...] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Normalizer]:
    """The events with the reader on and off, as dicts with ``raw``, after ``first`` then ``taught`` and before
    ``last`` (each fed as a batch of its own); and the normaliser that read them."""
    results = []
    for on in (True, False):
        typed.set_enabled(on)
        try:
            normalizer = normalizer_for(provider)  # type: ignore[arg-type]
            made = normalizer.normalize(list(first)) if first else []
            made += normalizer.normalize(list(taught)) if taught else []
            made += normalizer.normalize(events)
            made += normalizer.normalize(list(last)) if last else []
            results.append(([e.to_dict(with_raw=True) for e in made], normalizer))
        finally:
            typed.set_enabled(True)
    (got, fast), (want, slow) = results
    assert (fast.last_sequence, fast.usage, fast.response_id, fast.model, fast.done) == (
        slow.last_sequence,
        slow.usage,
        slow.response_id,
        slow.model,
        slow.done,
    )
    return got, want, fast


def _compiled(name: Optional[str], data: str) -> Any:
    return _events.SSEEvent(name, data)


# -- payloads ---------------------------------------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["", " ", "hé", "東京", "🙂", '"', "\\", "\n", "\x00", "\u2028"]
)
_scalar = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | _text
_value = st.recursive(_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3))
_seq = st.none() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.booleans() | _text | st.just([1])


#: True now and then (sampled_from draws its first element most often, and shrinks towards it).
_rare = st.sampled_from([False] * 49 + [True])


@st.composite
def _member_lists(draw: Any, wanted: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The wanted members, some dropped or replaced, plus extra members, shuffled, sometimes a key twice."""
    members = [(key, draw(_value) if draw(_rare) else value) for key, value in wanted]
    members = [m for m in members if not draw(_rare)]
    if draw(_rare):
        members += draw(st.lists(st.tuples(_text, _value), max_size=2))
    if members and draw(_rare):
        key, _ = draw(st.sampled_from(members))
        members.append((key, draw(_value)))
    shuffled: list[tuple[str, Any]] = draw(st.permutations(members))
    return shuffled


def _dump(members: list[tuple[str, Any]], spaced: bool, ascii_only: bool) -> str:
    sep = ", " if spaced else ","
    colon = " : " if spaced else ":"
    return (
        "{" + sep.join(json.dumps(k, ensure_ascii=ascii_only) + colon + _json(v, ascii_only) for k, v in members) + "}"
    )


def _json(value: Any, ascii_only: bool) -> str:
    if isinstance(value, _Objects):
        return "[" + ",".join(_json(item, ascii_only) for item in value) + "]"
    if isinstance(value, list) and value and isinstance(value[0], tuple):  # a member list: an object with duplicates
        return _dump(value, False, ascii_only)
    return json.dumps(value, ensure_ascii=ascii_only)


@st.composite
def responses_payloads(draw: Any) -> tuple[Optional[str], str]:
    raw_only = list(openai.RAW_ONLY)
    name = draw(st.sampled_from([*RESPONSES_EVENTS, *ARGUMENT_EVENTS, *raw_only[:3], "message", None]))
    wanted = [
        ("type", draw(st.sampled_from([name or "message", *RESPONSES_EVENTS, *ARGUMENT_EVENTS, *raw_only]))),
        ("object", draw(_mostly_none("chat.completion.chunk", "response"))),
        ("delta", draw(_value) if draw(_rare) else draw(_text)),
        ("sequence_number", draw(_seq) if draw(_rare) else draw(st.integers(0, 10**6))),
        ("item_id", draw(st.sampled_from(["msg_1", "fc_1", "fc_2", 1, ""]))),
        ("output_index", draw(st.sampled_from([0, 1, None]))),
        ("logprobs", []),
    ]
    return name, _dump(draw(_member_lists(wanted)), draw(st.booleans()), draw(st.booleans()))


@st.composite
def anthropic_payloads(draw: Any) -> tuple[Optional[str], str]:
    name = draw(st.sampled_from(["content_block_delta", "ping", "message", None]))
    inner = [
        ("type", draw(st.sampled_from(["text_delta", "thinking_delta", "input_json_delta", "signature_delta"]))),
        ("text", draw(_value) if draw(_rare) else draw(_text)),
        ("thinking", draw(_value) if draw(_rare) else draw(_text)),
        ("partial_json", draw(_value) if draw(_rare) else draw(st.sampled_from(['{"a"', ": 1}", ""]) | _text)),
    ]
    delta: Any = draw(_value) if draw(_rare) else draw(_member_lists(inner))
    index = draw(st.sampled_from([0, 0, 1, "0", -0.0, True, 2**70]))
    kind = draw(st.sampled_from([name or "ping", "content_block_delta"]))
    wanted = [("type", kind), ("index", index), ("delta", delta)]
    return name, _dump(draw(_member_lists(wanted)), draw(st.booleans()), draw(st.booleans()))


COHERE_EVENTS = ["content-delta", "tool-call-delta", "content-start", "content-end", "tool-plan-delta", "citation-end"]


@st.composite
def cohere_payloads(draw: Any) -> tuple[Optional[str], str]:
    name = draw(st.sampled_from([*COHERE_EVENTS, "message-start", "message", None]))
    content = [
        ("type", draw(st.sampled_from(["text", "thinking"]))),
        ("text", draw(_value) if draw(_rare) else draw(_text)),
        ("thinking", draw(st.none() | _text) if draw(st.booleans()) else None),
    ]
    call = [
        ("id", draw(st.sampled_from(["c1", None]))),
        (
            "function",
            draw(_value) if draw(_rare) else {"arguments": draw(st.sampled_from(['{"a"', ": 1}", ""]) | _text)},
        ),
    ]
    members = [("content", draw(_member_lists(content))), ("tool_calls", draw(_member_lists(call)))]
    message: Any = draw(_value) if draw(_rare) else draw(_member_lists(members))
    index = draw(st.sampled_from([0, 0, 1, "0", -0.0, True, 2**70]))
    kind = draw(st.sampled_from([name or "content-delta", *COHERE_EVENTS]))
    wanted = [("type", kind), ("index", index), ("delta", [("message", message)])]
    return name, _dump(draw(_member_lists(wanted)), draw(st.booleans()), draw(st.booleans()))


def _mostly_none(*values: Any) -> Any:
    """None most of the time (the reader's shape), else one of ``values``."""
    return st.sampled_from([None] * 15 + list(values))


#: Tool call fragments: the argument delta the reader takes (of the call a stream's first chunk may open at index 0),
#: and those that are something else.
_FRAGMENTS: tuple[Any, ...] = (
    [{"index": 0, "function": {"arguments": "{"}}],
    [{"index": 0, "function": {"arguments": '"a": 1}'}}],
    [{"index": 0, "type": "function", "function": {"arguments": "x"}}],
    [{"index": 1, "function": {"arguments": "{"}}],
    [{"index": 0, "id": "call_2", "function": {"arguments": "{"}}],
    [{"index": 0, "function": {"name": "g", "arguments": "{"}}],
    [{"index": 0, "function": {"arguments": ""}}],
    [{"index": "0", "function": {"arguments": "{"}}],
    [{"function": {"arguments": "{"}}],
    [{}],
    [None],
    [],
    [{"index": 0, "function": {"arguments": "{"}}, {"index": 1, "function": {"arguments": "{"}}],
    [{"index": 0, "function": {"arguments": "{"}, "extra_content": {"google": {"thought_signature": "s"}}}],
)


@st.composite
def chat_payloads(draw: Any) -> tuple[str, str]:
    """Chat chunks around the one-choice text or reasoning delta the reader takes, now and then with one of the
    members that make a chunk something else."""
    text = st.sampled_from(["a", " b", "hé", ""]) | _text
    content = draw(st.none() | _value) if draw(_rare) else draw(text)
    if draw(st.sampled_from([False] * 5 + [True])):  # typed content chunks (Magistral), now and then mangled
        kind = draw(st.sampled_from(["text"] * 8 + ["image", None, 5]))
        part = draw(_member_lists([("type", kind), ("text", draw(text))]))
        chunk = [
            ("type", draw(st.sampled_from(["thinking", "text", "thinking", "reference", None]))),
            ("thinking", _Objects([part] * draw(st.sampled_from([1] * 6 + [0, 2])))),
            ("text", draw(_mostly_none("t", "", 3))),
        ]
        content = _Objects([draw(_member_lists(chunk)) for _ in range(draw(st.sampled_from([1] * 6 + [0, 2])))])
    detail = [
        ("type", draw(st.sampled_from(["reasoning.text"] * 4 + ["reasoning.encrypted", "reasoning.summary", None]))),
        ("text", draw(_mostly_none("r", ""))),
        ("signature", draw(_mostly_none("S", ""))),
        ("data", draw(_mostly_none("x"))),
    ]
    details = _Objects([draw(_member_lists(detail)) for _ in range(draw(st.sampled_from([1] * 6 + [0, 2])))])
    delta = [
        ("reasoning_details", details if draw(st.sampled_from([False] * 4 + [True])) else None),
        ("content", content),
        ("reasoning_content", draw(_mostly_none("r", "", 5))),
        ("reasoning", draw(_mostly_none("q", ""))),
        ("role", draw(_mostly_none("assistant"))),
        ("refusal", draw(_mostly_none("no", ""))),
        ("tool_calls", draw(_mostly_none(*_FRAGMENTS)) if draw(st.booleans()) else None),
    ]
    choice = [
        ("index", 0),
        ("delta", draw(_value) if draw(_rare) else draw(_member_lists(delta))),
        ("logprobs", None),
        ("finish_reason", draw(_mostly_none("stop", "length", ""))),
    ]
    choices: Any = [draw(_member_lists(choice)) for _ in range(draw(st.sampled_from([1] * 12 + [0, 2])))]
    wanted = [
        ("id", "chatcmpl-1"),
        ("object", "chat.completion.chunk"),
        ("model", "m"),
        ("choices", _Objects(choices)),
        ("usage", draw(_mostly_none({"prompt_tokens": 1}))),
        ("error", draw(_mostly_none({"message": "x"}, ""))),
        ("type", draw(_mostly_none("response.output_text.delta"))),
    ]
    name = draw(st.sampled_from(["message", "message", "message", "delta"]))
    return name, _dump(draw(_member_lists(wanted)), draw(st.booleans()), draw(st.booleans()))


class _Objects(list):  # type: ignore[type-arg]
    """An array of member lists (objects that may repeat a key)."""


#: Grounding metadata with citations (a source and the words it supports).
_GROUNDED = {
    "groundingChunks": [{"web": {"uri": "https://g.example", "title": "g"}}],
    "groundingSupports": [{"segment": {"endIndex": 1, "text": "a"}, "groundingChunkIndices": [0]}],
}


@st.composite
def gemini_payloads(draw: Any) -> tuple[Any, str]:
    """generateContent chunks around the one-text-part chunk the reader takes."""
    part = [
        ("text", draw(_value) if draw(_rare) else draw(st.sampled_from(["a", "hé 🙂", ""]) | _text)),
        ("thought", draw(st.sampled_from([None, True, False, "true", 1]))),
        ("thoughtSignature", draw(_mostly_none("c2ln", ""))),
        ("functionCall", draw(_mostly_none({"name": "f", "args": draw(_value)}, {"name": "f", "args": {}}))),
    ]
    part = [(k, v) for k, v in part if v is not None or (k != "thought" and draw(_rare))]
    if draw(_rare):
        part.append(("functionCall", None))  # present, even as null: a function call part
    parts: Any = [draw(_member_lists(part)) for _ in range(draw(st.sampled_from([1] * 8 + [0, 2, 2, 3])))]
    candidate = [
        ("content", draw(_value) if draw(_rare) else [("parts", _Objects(parts)), ("role", "model")]),
        ("finishReason", draw(_mostly_none("STOP", "MAX_TOKENS", ""))),
        ("index", 0),
        ("groundingMetadata", draw(st.sampled_from([None] * 6 + [{}, {"webSearchQueries": ["q"]}, _GROUNDED]))),
        ("citationMetadata", draw(st.sampled_from([None] * 8 + [{}, {"citations": [{"uri": "https://c.example"}]}]))),
    ]
    candidates: Any = [draw(_member_lists(candidate)) for _ in range(draw(st.sampled_from([1] * 12 + [0, 2])))]
    wanted = [
        ("candidates", _Objects(candidates)),
        ("usageMetadata", draw(st.sampled_from([{"promptTokenCount": 3, "totalTokenCount": 9}, [1], None]))),
        ("modelVersion", draw(st.sampled_from(["gemini-x", 5]))),
        ("responseId", draw(st.sampled_from(["r1", "r2", None]))),
        ("error", draw(_mostly_none({"code": 429, "message": "x", "status": "RESOURCE_EXHAUSTED"}))),
    ]
    if draw(_rare):
        wanted.append(("event_type", draw(st.sampled_from([None, "content.delta"]))))
    name = draw(st.sampled_from(["message", "message", None, "content.delta", "error"]))
    return name, _dump(draw(_member_lists(wanted)), draw(st.booleans()), draw(st.booleans()))


_MANGLE = [
    lambda s: s,
    lambda s: s,
    lambda s: s,
    lambda s: s,
    lambda s: s + " ",
    lambda s: " \r\n\t" + s,
    lambda s: s[:-1],  # cut
    lambda s: s + "}",
    lambda s: s.replace("}", ",}", 1),  # trailing comma
    lambda s: s.replace(":", ': NaN, "x":', 1),
    lambda s: s.replace('"type"', '"t\\u0079pe"', 1),  # an escaped key: same key for json.loads
    lambda s: s.replace('"delta"', '"\\u0064elta"', 1),
    lambda s: s.replace('"text"', '"\\u0074ext"', 1),
    lambda s: s.replace('"', "'", 1),
    lambda s: "[" + s + "]",
    lambda s: s.replace("0", "01", 1),  # a leading zero
    lambda s: s.replace(":", ":\x01", 1),
    lambda s: s.replace('":"', '":"\\ud800', 1),  # a lone surrogate, escaped
    lambda s: s.replace('":"', '":"\\ud83d\\ude42', 1),  # a pair
    lambda s: s.replace('":"', '":"\\x', 1),  # an invalid escape
    lambda s: s.replace("true", "tr", 1),
    # the same keys in the same order (a payload of a learned shape), other values
    lambda s: re.sub(r":(\s*)(\d+)", r":\g<1>\g<2>.5", s, count=1),  # an integer becomes a fraction
    lambda s: re.sub(r":(\s*)(\d+)", r":\g<1>-0", s, count=1),
    lambda s: s.replace('":"', '":"\\"', 1),  # an escaped quote in a string
    lambda s: s.replace('":"', '":"\\u0041', 1),
    lambda s: s.replace(':"', ":1", 1).replace("1", '1,"_":"', 1),  # a string becomes a number, a key appears
    lambda s: s.replace(':"', ':null,"x":"', 1),
    lambda s: re.sub(r'"(\w)(\w*)":', r'"\g<1>\g<2>_":', s, count=1),  # one key renamed
    lambda s: s.replace('"text":"', '"text":5,"text":"', 1),  # the key twice, the string last
    lambda s: s.replace(":0", ":1", 1),
    lambda s: s.replace('":"', '":"  ', 1),
]


def _check(
    provider: str, name: Any, data: str, first: tuple[Any, ...] = (), primed: str = "", last: tuple[Any, ...] = ()
) -> Normalizer:
    """The events of ``first``, the payload, then ``last`` are the same with the reader on and off (after the
    same normaliser took ``primed``, when given: its rule learned that payload's shape -- what a stream learns is
    its own -- so the payload may be read by it)."""
    taught = (_compiled(name, primed),) if primed else ()
    for event in (_compiled(name, data), PyEvent(name, data)):
        got, want, reader = _both(provider, [event], first, last, taught)
        assert got == want, data
    return reader


#: A chat stream's first chunk: it names the id and model, after which the reader takes text chunks.
_CHAT_START = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant"}}],
    }
)


#: A chat stream's first chunk that also opens call ``call_1`` at tool call index 0.
_CHAT_CALL_START = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "delta": {
                    "role": "assistant",
                    "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}}],
                },
            }
        ],
    }
)


_GEMINI_START = json.dumps({"candidates": [{"content": {"parts": [{"text": "x"}]}}], "modelVersion": "g0"})


@settings(max_examples=examples(500))
@given(gemini_payloads(), st.integers(0, len(_MANGLE) - 1), st.booleans(), st.booleans())
@example(
    (None, '{"candidates":[{"content":{"parts":[{"text":"a","thought":true}]}}],"usageMetadata":{"a":1}}'),
    0,
    False,
    False,
)
def test_gemini_deltas_equal_the_full_decode(
    payload: tuple[Any, str], mangle: int, started: bool, primed: bool
) -> None:
    name, data = payload
    first = (_compiled("message", _GEMINI_START),) if started else ()
    _check("gemini", name, _MANGLE[mangle](data), first, data if primed else "")


@settings(max_examples=examples(500))
@given(
    chat_payloads(),
    st.integers(0, len(_MANGLE) - 1),
    st.sampled_from(["openai-chat", "xai", "openai", "mistral"]),
    st.booleans(),
)
@example(("message", '{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"a"}}]}'), 0, "openai-chat", False)
@example(
    (
        "message",
        '{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":'
        '{"arguments":"{"}}]}}]}',
    ),
    0,
    "openai-chat",
    True,
)
def test_chat_deltas_equal_the_full_decode(payload: tuple[str, str], mangle: int, provider: str, primed: bool) -> None:
    """(A primed stream's first chunk also opened a call at index 0, whose argument fragments the reader takes.)"""
    name, data = payload
    start = _CHAT_CALL_START if primed else _CHAT_START
    _check(provider, name, _MANGLE[mangle](data), (_compiled("message", start),), data if primed else "")


@settings(max_examples=examples(300))
@given(chat_payloads(), st.integers(0, len(_MANGLE) - 1), st.sampled_from(["openai-chat", "xai", "openai", "mistral"]))
@example(
    ("message", '{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}'), 0, "xai"
)
def test_a_chat_stream_first_chunk_equals_the_full_decode(payload: tuple[str, str], mangle: int, provider: str) -> None:
    """A stream's first chunk is read alone, by the typed fast path where it has the chat shape (one that names
    only the role: its one raw event)."""
    name, data = payload
    _check(provider, name, _MANGLE[mangle](data))


_ONE_RULE_PAYLOADS = st.one_of(
    responses_payloads().map(lambda payload: ("openai", payload)),
    anthropic_payloads().map(lambda payload: ("anthropic", payload)),
    cohere_payloads().map(lambda payload: ("cohere", payload)),
)


#: Events that open a tool call (the one argument deltas of the generated payloads may name).
_CALL_STARTS = {
    "openai": json.dumps(
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""},
            "sequence_number": 1,
        }
    ),
    "anthropic": json.dumps(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "f"}}
    ),
}
_CALL_STARTS["cohere"] = json.dumps(
    {
        "type": "tool-call-start",
        "index": 0,
        "delta": {"message": {"tool_calls": {"id": "c1", "type": "function", "function": {"name": "f"}}}},
    }
)
_CALL_START_NAMES = {
    "openai": "response.output_item.added",
    "anthropic": "content_block_start",
    "cohere": "tool-call-start",
}
#: Events that close it (its arguments: the fragments that arrived).
_CALL_STOPS = {
    "openai": (
        "response.output_item.done",
        json.dumps(
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"},
            }
        ),
    ),
    "anthropic": ("content_block_stop", '{"type":"content_block_stop","index":0}'),
    "cohere": ("tool-call-end", '{"type":"tool-call-end","index":0}'),
}


@settings(max_examples=examples(800))
@given(_ONE_RULE_PAYLOADS, st.integers(0, len(_MANGLE) - 1), st.booleans(), st.booleans())
@example(
    ("openai", ("response.output_text.delta", '{"type":"response.output_text.delta","delta":"a"}')), 0, False, False
)
@example(
    ("anthropic", ("content_block_delta", '{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}')),
    0,
    False,
    False,
)
@example(
    (
        "anthropic",
        (
            "content_block_delta",
            '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}',
        ),
    ),
    0,
    True,
    True,
)
def test_responses_and_anthropic_deltas_equal_the_full_decode(
    case: tuple[str, tuple[Optional[str], str]], mangle: int, calling: bool, primed: bool
) -> None:
    provider, (name, data) = case
    first = (_compiled(_CALL_START_NAMES[provider], _CALL_STARTS[provider]),) if calling else ()
    last = (_compiled(*_CALL_STOPS[provider]),) if calling else ()
    _check(provider, name, _MANGLE[mangle](data), first, data if primed else "", last)


@pytest.mark.parametrize(
    ("provider", "name", "data", "text"),
    [
        ("openai", "response.output_text.delta", '{"type":"response.output_text.delta","delta":"hi"}', "hi"),
        (
            "openai",
            "response.refusal.delta",
            '{"delta":"a\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude42","type":"response.refusal.delta"}',
            'a"b\\c/\né🙂',
        ),
        (
            "openai",
            "response.reasoning_text.delta",
            ' {"type" : "response.reasoning_text.delta" , "delta" : "東京"} ',
            "東京",
        ),
        (
            "anthropic",
            "content_block_delta",
            '{"type":"content_block_delta","index":3,"delta":{"type":"thinking_delta","thinking":"hm"}}',
            "hm",
        ),
        (
            "anthropic",
            "content_block_delta",
            '{"delta":{"text":"x","type":"text_delta"},"type":"content_block_delta"}',
            "x",
        ),
    ],
)
def test_the_reader_takes_plain_deltas_and_keeps_raw_lazy(provider: str, name: str, data: str, text: str) -> None:
    got, want, _ = _both(provider, [_compiled(name, data)])
    assert got == want and got[0]["text"] == text
    out: list[Unified] = []
    rule = (openai if provider == "openai" else anthropic)._DELTA_RULE
    assert typed.take_deltas is not None and typed.take_deltas([_compiled(name, data)], 0, rule, out) == 1
    assert type(out[0]._raw) is LazyPayload and out[0].raw == json.loads(data)


@pytest.mark.parametrize(
    "data",
    [
        '{"type":"response.output_text.delta","delta":""}',  # empty: raw, not a delta
        '{"type":"response.output_text.delta","delta":"a","sequence_number":1.0}',
        '{"type":"response.output_text.delta","delta":"a","sequence_number":true}',
        '{"type":"response.output_text.delta","delta":"a","sequence_number":"1"}',
        '{"type":"response.output_text.delta","delta":"a","sequence_number":99999999999999999999999999999999}',
        '{"type":"response.output_text.delta","delta":"a","delta":null}',  # the last duplicate counts
        '{"type":"response.output_text.delta","delta":"\\ud800"}',
        '{"type":"response.output_text.done","delta":"a"}',  # type differs from the event name
        '{"type":"response.output_text.delta","delta":"a"} x',
        '{"type":"response.output_text.delta","delta":"a","x":' + "[" * 300 + "]" * 300 + "}",
        '{"type":"response.output_text.delta","delta":"a","x":NaN}',
    ],
)
def test_payloads_the_reader_leaves_to_the_full_decode_still_come_out_the_same(data: str) -> None:
    name = "response.output_text.delta"
    got, want, _ = _both("openai", [_compiled(name, data)])
    assert got == want
    assert typed.take_deltas is not None and typed.take_deltas([_compiled(name, data)], 0, openai._DELTA_RULE, []) == 0


@pytest.mark.parametrize("name", ["message", None, "x"])
@pytest.mark.parametrize(
    ("provider", "rule", "data", "text"),
    [
        ("openai", openai._DELTA_RULE, '{"type":"response.output_text.delta","delta":"hi","sequence_number":3}', "hi"),
        ("openai", openai._DELTA_RULE, '{"type":"response.reasoning_summary_text.delta","delta":"r"}', "r"),
        (
            "anthropic",
            anthropic._DELTA_RULE,
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"t"}}',
            "t",
        ),
    ],
)
def test_an_event_no_case_names_takes_the_case_its_payload_type_names(
    name: Optional[str], provider: str, rule: Any, data: str, text: str
) -> None:
    """A server that names no SSE events (xAI's Responses) or another name: the payload's ``type`` picks the case,
    as the full decode dispatches on it; once learned, the next payload of that shape is read by its shape."""
    got, want, _ = _both(provider, [_compiled(name, data), _compiled(name, data)])
    assert got == want and [event["text"] for event in got] == [text, text]
    own = rule.fresh()
    out: list[Unified] = []
    assert typed.take_deltas is not None
    assert typed.take_deltas([_compiled(name, data), _compiled(name, data)], 0, own, out) == 2
    assert own.learned == 1 and [event.text for event in out] == [text, text]
    other = data.replace("delta", "unknown", 1)  # a type no case has: left to the full decode
    assert typed.take_deltas([_compiled(name, other)], 0, own, []) == 0


@pytest.mark.parametrize("kind", openai.RAW_ONLY)
@pytest.mark.parametrize("name", ["named", None])
def test_a_responses_event_that_is_only_raw_is_read_as_its_raw_event(kind: str, name: Optional[str]) -> None:
    """Each of ``RAW_ONLY`` is one ``raw`` event carrying its sequence number (the cursor moves), made without a
    decode; the same payload saying it is a chat chunk (``object``) is left to the full decode."""
    data = json.dumps({"type": kind, "item_id": "m", "output_index": 0, "sequence_number": 7, "delta": "x"})
    event = _compiled(kind if name else None, data)
    got, want, reader = _both("openai", [event])
    assert got == want and [e["type"] for e in got] == ["raw"] and reader.last_sequence == 7
    assert typed.take_deltas is not None and typed.take_deltas([event], 0, openai._DELTA_RULE.fresh(), []) == 1
    chat = _compiled(None, data[:-1] + ', "object": "chat.completion.chunk"}')
    assert typed.take_deltas([chat], 0, openai._DELTA_RULE.fresh(), []) == 0


def test_xai_responses_deltas_take_the_reader_of_the_delegate_in_use() -> None:
    """xAI's Responses stream (no SSE event names) is routed to its Responses delegate, whose reader then takes the
    deltas (their ``raw`` stays lazy); the events are those of the full decode."""
    created = {"type": "response.created", "sequence_number": 0, "response": {"id": "r1", "model": "grok"}}
    deltas = [
        {"type": "response.output_text.delta", "delta": str(i), "item_id": "m", "sequence_number": i + 1}
        for i in range(4)
    ]
    first, *batch = [_compiled(None, json.dumps(payload)) for payload in (created, *deltas)]
    got, want, reader = _both("xai", batch, (first,))
    assert got == want and reader.last_sequence == 4
    body = b"".join(b"data: %s\n\n" % json.dumps(payload).encode() for payload in (created, *deltas))
    made = list(iter_unified([body], "xai"))  # (the stream's first event is read alone, then the rest)
    assert [type(event._raw) for event in made[1:5]] == [LazyPayload] * 4


def test_a_batch_mixing_read_and_decoded_events_keeps_order_and_the_sequence_cursor() -> None:
    deltas = [
        _compiled(
            "response.output_text.delta",
            json.dumps({"type": "response.output_text.delta", "delta": str(i), "sequence_number": i}),
        )
        for i in range(6)
    ]
    other = _compiled(
        "response.content_part.added", json.dumps({"type": "response.content_part.added", "sequence_number": 10})
    )
    unnumbered = _compiled(
        "response.output_text.delta", json.dumps({"type": "response.output_text.delta", "delta": "z"})
    )
    for batch in ([*deltas[:3], other, *deltas[3:]], [*deltas, other], [other, *deltas, unnumbered]):
        got, want, reader = _both("openai", batch)
        assert got == want
        assert reader.last_sequence == (10 if batch[-1] is other else 5)


def test_the_reader_is_off_when_typed_decoding_is(typed_decoding_off: None) -> None:
    assert typed.take_deltas is None
    assert normalizer_for("openai").normalize(
        [_compiled("response.output_text.delta", '{"type":"response.output_text.delta","delta":"a"}')]
    )[0]._raw == {
        "type": "response.output_text.delta",
        "delta": "a",
    }


def test_rules_are_checked() -> None:
    with pytest.raises(ValueError, match=f"1 to {typed.MAX_PATHS} paths"):
        typed.delta_rule((), {}, 0)
    with pytest.raises(ValueError, match=f"1 to {typed.MAX_STEPS} keys"):
        typed.delta_rule((("a",) * (typed.MAX_STEPS + 1),), {}, 0)
    with pytest.raises(ValueError, match=f"1 to {typed.MAX_STEPS} keys"):
        typed.delta_rule((("a", 1),), {}, 0)
    with pytest.raises(ValueError, match=r"a string, True, dict, type\(None\) or None"):
        typed.delta_rule((("type",),), {"e": ("e", ((False, ((0, "text_delta"),)),))}, 0)
    with pytest.raises(ValueError, match="one of its candidates'"):
        typed.delta_rule((("type",), ("t",)), {"e": ("e", ((None, ((1, "text_delta"),), "reasoning_delta"),))}, 0)
    with pytest.raises(ValueError, match="a variant is"):
        typed.delta_rule((("type",),), {"e": ("e", ((None,),))}, 0)  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="by the payload's type need a type path"):
        typed.delta_rule((("t",),), {}, by_type=True)
    with pytest.raises(ValueError, match="out of range"):
        typed.delta_rule((("type",),), {}, 0, seq_path=3)
    with pytest.raises(ValueError, match="out of range"):
        typed.delta_rule((("type",),), {"e": ("e", ((None, ((2, "text_delta"),)),))}, 0)
    with pytest.raises(ValueError, match="needs a type path"):
        typed.delta_rule((("type",),), {"e": ("e", ((None, ((0, "text_delta"),)),))})
    with pytest.raises(ValueError, match="out of range"):
        typed.delta_rule((("type",),), {}, 0, media=(1,))
    text: typed.Candidates = ((0, "text_delta"),)
    with pytest.raises(ValueError, match=r"at most \d+ \(path index, tag\) pairs"):
        typed.delta_rule((("type",),), {"e": (None, ((((0, None),) * 7, text),))}, 0)
    with pytest.raises(ValueError, match=r"\(path index, tag\) pairs"):
        typed.delta_rule((("type",),), {"e": (None, (((0,), text),))}, 0)  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="out of range"):
        typed.delta_rule((("type",),), {"e": (None, ((((1, "a"),), text),))}, 0)
    with pytest.raises(ValueError, match=r"a string, True, dict"):
        typed.delta_rule((("type",),), {"e": (None, ((((0, 5),), text),))}, 0)  # type: ignore[dict-item]


def test_a_variant_applies_where_all_its_conditions_hold() -> None:
    """A variant's tag may be conditions on paths of its own: the first variant all of whose conditions hold
    applies; one that fails leaves the next to try."""
    paths = (("type",), ("kind",), ("sub",), ("a",), ("b",))
    variants: tuple[typed.Variant, ...] = (
        (((1, "x"), (2, type(None))), ((3, "text_delta"),)),
        (((1, "x"), (2, dict)), ((4, "reasoning_delta"),)),
    )
    rule = typed.delta_rule(paths, {None: (None, variants)}, 0)
    take = typed.take_deltas
    assert take is not None

    def read(data: str) -> list[tuple[str, str]]:
        out: list[Unified] = []
        take([_compiled(None, data)], 0, rule, out)
        return [(event.type, event.text) for event in out]

    assert read('{"kind":"x","a":"1","b":"2"}') == [("text_delta", "1")]
    assert read('{"kind":"x","sub":{},"a":"1","b":"2"}') == [("reasoning_delta", "2")]
    assert read('{"kind":"x","sub":[],"a":"1","b":"2"}') == []  # neither variant's conditions hold
    assert read('{"kind":"y","a":"1"}') == []


@pytest.mark.parametrize(
    "data",
    [
        '{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"},"delta":5}',  # the last delta counts
        '{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"},"delta":{"type":"text_delta"}}',
        '{"type":"content_block_delta","delta":{"type":"text_delta","text":"a","type":"signature_delta"}}',
        '{"type":"content_block_delta","delta":{"type":"thinking_delta","text":"a"}}',
        '{"type":"content_block_delta","delta":{"type":"text_delta","text":["a"]}}',
        '{"type":"content_block_delta","delta":{"t\\u0079pe":"text_delta","text":"a"}}',
        '{"type":"content_block_delta","delta":[{"type":"text_delta","text":"a"}]}',
    ],
)
def test_anthropic_payloads_the_reader_leaves_to_the_full_decode(data: str) -> None:
    name = "content_block_delta"
    got, want, _ = _both("anthropic", [_compiled(name, data)])
    assert got == want
    assert typed.take_deltas is not None
    assert typed.take_deltas([_compiled(name, data)], 0, anthropic._DELTA_RULE, []) == 0


_CHAT_TEXT = {
    "id": "chatcmpl-1",
    "model": "m",
    "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}],
}


def _with(path: tuple[Any, ...], value: Any, base: Any = None) -> str:
    chunk = json.loads(json.dumps(_CHAT_TEXT if base is None else base))
    target = chunk
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return json.dumps(chunk)


_SOMETHING_ELSE = [
    (("usage",), {"prompt_tokens": 1}),
    (("error",), {"message": "x"}),
    (("error",), ""),
    (("type",), "response.output_text.delta"),
    (("choices", 0, "finish_reason"), "stop"),
    (("choices", 0, "finish_reason"), ""),
    (("choices", 0, "delta", "reasoning_content"), "r"),  # text and reasoning: two events
    (("choices", 0, "delta", "reasoning"), "r"),
    (("choices", 0, "delta", "reasoning_content"), 5),
    (("choices", 0, "delta", "refusal"), "no"),
    (("choices", 0, "delta", "tool_calls"), [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{"}}]),
    (("choices", 0, "delta", "function_call"), {"name": "f"}),
    (("timings",), {"predicted_n": 3}),  # llama.cpp: the full decode keeps them
    (("choices", 0, "delta", "content"), ["a"]),
    (("choices", 0, "delta", "content"), ""),
    (("choices", 0, "delta"), "a"),
    (("choices",), [{"index": 0, "delta": {"content": "a"}}, {"index": 1, "delta": {"content": "b"}}]),
    (("choices", 0, "index"), 1),  # another choice's (a request's n > 1): raw, never more of the first
    (("choices",), []),
    (("choices",), {"0": {"delta": {"content": "a"}}}),
    # typed content chunks (Magistral) the reader leaves to the full decode: not one thinking text, or more beside it
    (("choices", 0, "delta", "content"), [{"type": "thinking", "thinking": [{"type": "image", "text": "r"}]}]),
    (("choices", 0, "delta", "content"), [{"type": "thinking", "thinking": [{"type": "text", "text": "r"}] * 2}]),
    (("choices", 0, "delta", "content"), [{"type": "thinking", "thinking": []}]),
    (("choices", 0, "delta", "content"), [{"type": "thinking", "thinking": [{"type": "text", "text": ""}]}]),
    (("choices", 0, "delta", "content"), [{"type": "thinking", "thinking": [{"type": "text", "text": 5}]}]),
    (("choices", 0, "delta", "content"), [{"type": "thinking", "thinking": {"type": "text", "text": "r"}}]),
    (("choices", 0, "delta", "content"), [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]),
    (("choices", 0, "delta", "content"), [{"type": "reference", "reference_ids": [1]}]),
    (("choices", 0, "delta", "content"), [{"type": "text"}]),
    (("choices", 0, "delta", "content"), []),
    (
        ("choices", 0, "delta"),
        {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "r"}]}], "reasoning_content": "s"},
    ),
    (("choices", 0, "delta"), {"content": [{"type": "text", "text": "a"}], "reasoning": "s"}),
    (
        ("choices", 0, "delta"),
        {"content": [{"type": "text", "text": "a"}], "tool_calls": [{"index": 0, "function": {"arguments": "{"}}]},
    ),
    (
        ("choices", 0, "delta"),
        {"content": [{"type": "text", "text": "a"}], "refusal": "no"},
    ),
    (("choices", 0, "delta"), {"content": [{"type": "text", "text": "a"}], "reasoning_details": []}),
    # OpenRouter reasoning the reader leaves to the full decode: a signature, encrypted data, more than one detail,
    # no plain text (the detail's text counts then), text beside it
    (("choices", 0, "delta"), {"reasoning": "r", "reasoning_details": [{"type": "reasoning.text", "signature": "S"}]}),
    (("choices", 0, "delta"), {"reasoning": "r", "reasoning_details": [{"type": "reasoning.encrypted", "data": "x"}]}),
    (("choices", 0, "delta"), {"reasoning": "r", "reasoning_details": [{"type": "reasoning.text", "text": "r"}] * 2}),
    (("choices", 0, "delta"), {"reasoning": "", "reasoning_details": [{"type": "reasoning.text", "text": "r"}]}),
    (("choices", 0, "delta"), {"content": "a", "reasoning_details": [{"type": "reasoning.text", "text": "r"}]}),
    (("choices", 0, "delta"), {"reasoning": "r", "reasoning_details": {"type": "reasoning.text", "text": "r"}}),
    (("choices", 0, "delta"), {"reasoning": "", "reasoning_details": [{"type": "reasoning.summary", "summary": "r"}]}),
    (
        ("choices", 0, "delta"),
        {"reasoning": "r", "reasoning_details": [{"type": "reasoning.summary", "summary": "r", "signature": "S"}]},
    ),
]
_STILL_TEXT = [
    (("choices", 0, "delta", "content"), "b"),
    (("choices", 0, "delta"), {"content": None, "reasoning": "r"}),
    (("choices", 0, "delta"), {"reasoning_content": "", "reasoning": "r"}),
    (("choices", 0, "delta"), {"reasoning_content": "r", "reasoning": "s"}),  # reasoning_content wins
    (("object",), "chat.completion.chunk"),
    (("choices", 0, "logprobs"), {"content": []}),
    (("choices", 0, "delta", "role"), "assistant"),  # on every delta (OpenRouter): what the full decode ignores too
    (("service_tier",), "default"),
    (("obfuscation",), "a1b2"),
    (("usage",), None),
    (("choices", 0, "delta", "content"), [{"type": "thinking", "thinking": [{"type": "text", "text": "r"}]}]),
    (
        ("choices", 0, "delta", "content"),
        [{"type": "thinking", "thinking": [{"type": "text", "text": "东"}], "closed": False, "text": "ignored"}],
    ),
    (("choices", 0, "delta", "content"), [{"text": "b", "type": "text"}]),
    (("choices", 0, "delta"), {"role": "assistant", "content": [{"type": "text", "text": "b"}], "reasoning": None}),
    (
        ("choices", 0, "delta"),
        {
            "role": "assistant",
            "content": "",
            "reasoning": "r",
            "reasoning_details": [{"type": "reasoning.text", "text": "r", "format": "unknown", "index": 0}],
        },
    ),
    (
        ("choices", 0, "delta"),
        {"reasoning_content": "r", "reasoning_details": [{"type": "reasoning.text", "signature": None}]},
    ),
    (("choices", 0, "delta"), {"reasoning": "r", "reasoning_details": [{"type": "reasoning.summary", "summary": "r"}]}),
]


@pytest.mark.parametrize(
    ("path", "value", "taken"), [(*c, False) for c in _SOMETHING_ELSE] + [(*c, True) for c in _STILL_TEXT]
)
@pytest.mark.parametrize("provider", ["openai-chat", "xai", "openai"])
def test_each_member_that_makes_a_chat_chunk_something_else_is_seen(
    path: tuple[Any, ...], value: Any, taken: bool, provider: str
) -> None:
    data = _with(path, value)
    got, want, _ = _both(provider, [_compiled("message", data)], (_compiled("message", _CHAT_START),))
    assert got == want
    assert typed.take_deltas is not None
    assert typed.take_deltas([_compiled("message", data)], 0, chat.CHAT_DELTA_RULE, []) == int(taken)


def test_the_chat_reader_waits_for_the_stream_id_and_model() -> None:
    """The first chunks name the id and model (the reader sets neither): the reader starts once both are known."""
    normalizer = normalizer_for("openai-chat")
    assert isinstance(normalizer, chat.ChatCompletionsNormalizer) and not normalizer.reads_deltas()
    normalizer.normalize([_compiled("message", json.dumps({"id": "chatcmpl-1", "choices": []}))])
    assert normalizer.response_id == "chatcmpl-1" and not normalizer.reads_deltas()
    normalizer.normalize([_compiled("message", json.dumps(_CHAT_TEXT))])
    assert normalizer.model == "m" and normalizer.reads_deltas()


_GEMINI_TEXT = {
    "candidates": [{"content": {"parts": [{"text": "a"}], "role": "model"}, "index": 0}],
    "usageMetadata": {"promptTokenCount": 3},
    "modelVersion": "gemini-x",
    "responseId": "r1",
}
_GEMINI_SOMETHING_ELSE: list[tuple[tuple[Any, ...], Any]] = [
    (("candidates", 0, "content", "parts", 0, "thoughtSignature"), "c2ln"),
    (("candidates", 0, "content", "parts", 0, "thoughtSignature"), ""),
    (("candidates", 0, "content", "parts", 0, "functionCall"), None),  # present, even as null
    (("candidates", 0, "content", "parts", 0, "functionCall"), {"name": "f", "args": {}}),
    (("candidates", 0, "content", "parts", 0, "text"), ""),
    (("candidates", 0, "content", "parts", 0, "text"), 1),
    (("candidates", 0, "content", "parts"), []),
    # a chunk of several parts is taken only when every part is one the reader takes alone
    (("candidates", 0, "content", "parts"), [{"text": "a"}, {"text": "b", "thoughtSignature": "c2ln"}]),
    (("candidates", 0, "content", "parts"), [{"text": "a"}, {"functionCall": {"name": "f", "args": {}}}]),
    (("candidates", 0, "content", "parts"), [{"text": "a"}, {"text": ""}]),
    (("candidates", 0, "content", "parts"), [{"text": "a"}, {"text": "b"}, "c"]),
    (("candidates", 0, "content", "parts"), [{"text": "a"}, {"text": 1}]),
    (("candidates", 0, "finishReason"), "STOP"),
    (("candidates", 0, "finishReason"), ""),
    (("candidates",), [{"content": {"parts": [{"text": "a"}]}}, {"content": {"parts": [{"text": "b"}]}}]),
    (("error",), {"code": 429, "message": "x"}),
    (("event_type",), None),  # an Interactions payload, even with a null event_type
    (("event_type",), "content.delta"),
    (("candidates", 0, "content", "parts", 0, "executableCode"), {"language": "PYTHON", "code": "1"}),
    # metadata that carries citations
    (("candidates", 0, "groundingMetadata"), {"groundingChunks": [{"web": {"uri": "https://a.example"}}]}),
    (("candidates", 0, "groundingMetadata"), {"groundingChunks": []}),
    (("candidates", 0, "groundingMetadata"), {"groundingSupports": [{"segment": {"text": "a"}}]}),
    (("candidates", 0, "citationMetadata"), {"citationSources": [{"uri": "https://a.example"}]}),
    (("candidates", 0, "citationMetadata"), {"citations": [{"uri": "https://a.example"}]}),
]
_GEMINI_STILL_TEXT = [
    (("candidates", 0, "content", "parts", 0, "inlineData"), {"mimeType": "image/png", "data": "QUJD"}),
    (("candidates", 0, "content", "parts", 0, "thought"), True),
    (("candidates", 0, "content", "parts", 0, "thought"), False),
    (("candidates", 0, "content", "parts", 0, "thought"), "yes"),
    (("candidates", 0, "content", "parts"), [{"text": "a"}, {"text": "b"}]),
    (("candidates", 0, "content", "parts"), [{"text": "a", "thought": True}, {"text": "b"}, {"text": "c"}]),
    (("candidates", 0, "content", "parts"), [{"text": "a"}, {"inlineData": {"data": "QUJD"}}]),
    (("usageMetadata",), None),
    (("usageMetadata",), [1]),
    (("modelVersion",), 5),
    (("responseId",), None),
    (("promptFeedback",), {"blockReason": "SAFETY"}),
    # metadata without citations: what a search-grounded stream sends on every chunk but its last
    (("candidates", 0, "groundingMetadata"), {}),
    (("candidates", 0, "groundingMetadata"), {"webSearchQueries": ["q"], "groundingChunks": None}),
    (("candidates", 0, "groundingMetadata"), None),
    (("candidates", 0, "groundingMetadata"), []),
    (("candidates", 0, "citationMetadata"), {}),
]


@pytest.mark.parametrize(
    ("path", "value", "taken"), [(*c, False) for c in _GEMINI_SOMETHING_ELSE] + [(*c, True) for c in _GEMINI_STILL_TEXT]
)
@pytest.mark.parametrize("name", ["message", None])
def test_each_member_that_makes_a_gemini_chunk_something_else_is_seen(
    path: tuple[Any, ...], value: Any, taken: bool, name: Any
) -> None:
    data = _with(path, value, _GEMINI_TEXT)
    for first in ((), (_compiled("message", _GEMINI_START),)):
        got, want, _ = _both("gemini", [_compiled(name, data)], first)
        assert got == want
    assert typed.take_deltas is not None
    assert typed.take_deltas([_compiled(name, data)], 0, gemini._DELTA_RULE, []) == int(taken)


@pytest.mark.parametrize(
    ("part", "taken"),
    [
        ({"inlineData": {"mimeType": "image/png", "data": "iVBO" * 4}}, True),
        ({"inlineData": {"mimeType": "image/png", "data": "iVBO" * 50_000}}, True),  # large, ASCII: read in place
        ({"inlineData": {"mimeType": "image/東", "data": "iVBO" * 50_000}}, False),  # large, not ASCII: decoded
        ({"fileData": {"mimeType": "image/png", "fileUri": "gs://b/c.png"}}, True),
        ({"inlineData": {"data": "QUJD"}, "thought": True}, True),
        ({"inlineData": {"data": "QUJD"}, "text": ""}, True),
        ({"inlineData": None}, False),  # no text and no media: the full decode's raw
        ({"inlineData": "QUJD"}, False),
        ({"inlineData": {"data": "QUJD"}, "thoughtSignature": "c2ln"}, False),
        ({"inlineData": {"data": "QUJD"}, "functionCall": {"name": "f"}}, False),
    ],
)
def test_a_gemini_media_chunk_is_a_raw_event_read_without_its_data(part: dict[str, Any], taken: bool) -> None:
    """A generated image's chunk (one ``inlineData`` / ``fileData`` part, no text) is one ``raw`` event: the reader
    takes it without a decode (raw lazy), at any size when ASCII; the events are the full decode's either way."""
    data = json.dumps(
        dict(_GEMINI_TEXT, candidates=[{"content": {"parts": [part], "role": "model"}}]), ensure_ascii=False
    )
    got, want, normalizer = _both("gemini", [_compiled("message", data)])
    assert got == want and normalizer.response_id == "r1"
    assert typed.take_deltas is not None
    out: list[Unified] = []
    assert typed.take_deltas([_compiled("message", data)], 0, gemini._DELTA_RULE.fresh(), out) == int(taken)
    if taken:
        assert [e.type for e in out] == ["raw"] and type(out[0]._raw) is LazyPayload
        assert out[0].raw["candidates"][0]["content"]["parts"] == [part]


def test_gemini_state_follows_the_last_chunk_the_reader_took() -> None:
    chunks = [dict(_GEMINI_TEXT, usageMetadata={"promptTokenCount": i}, responseId=f"r{i}") for i in range(4)]
    del chunks[3]["usageMetadata"]
    got, want, normalizer = _both("gemini", [_compiled("message", json.dumps(c)) for c in chunks])
    assert got == want and normalizer.usage == {"promptTokenCount": 2} and normalizer.response_id == "r3"


def _gemini_parts(*parts: dict[str, Any], **members: Any) -> str:
    return json.dumps(dict(_GEMINI_TEXT, candidates=[{"content": {"parts": list(parts), "role": "model"}}], **members))


def test_a_gemini_chunk_of_several_parts_is_read_part_by_part() -> None:
    """A chunk of several text, thought and media parts makes the event of each part in order, read without a
    decode (raw lazy), as the full decode makes them; a chunk of one part read after it is still read by the shape
    learned from the chunks of one part (a chunk of several is never learned: its shape would hide its parts)."""
    chunks = [
        _gemini_parts({"text": "a"}),
        _gemini_parts({"text": "b"}, {"text": "c"}),
        _gemini_parts({"text": "d"}),
        _gemini_parts({"text": "e", "thought": True}, {"inlineData": {"data": "QUJD"}}, {"text": "東🙂"}),
        _gemini_parts({"text": "f"}, {"text": "g"}),
        _gemini_parts({"text": "h"}),
    ]
    events = [_compiled("message", c) for c in chunks]
    got, want, _ = _both("gemini", events)
    assert got == want
    rule = gemini._DELTA_RULE.fresh()
    out: list[Unified] = []
    assert typed.take_deltas is not None and typed.take_deltas(events, 0, rule, out) == len(chunks)
    assert [(e.type, e.text) for e in out] == [
        ("text_delta", "a"),
        ("text_delta", "b"),
        ("text_delta", "c"),
        ("text_delta", "d"),
        ("reasoning_delta", "e"),
        ("raw", ""),
        ("text_delta", "東🙂"),
        ("text_delta", "f"),
        ("text_delta", "g"),
        ("text_delta", "h"),
    ]
    assert all(type(e._raw) is LazyPayload for e in out) and rule.learned == 2
    assert out[1]._raw is out[2]._raw  # (one payload's events share its one decode)
    assert out[2].raw["candidates"][0]["content"]["parts"] == [{"text": "b"}, {"text": "c"}]


def test_a_gemini_chunk_with_one_part_the_reader_cannot_take_is_left_whole() -> None:
    """One part of a chunk that the reader does not take alone (a signature, a call) leaves the whole chunk to the
    full decode: none of its parts' events is made twice or lost."""
    rule = gemini._DELTA_RULE.fresh()
    for parts in (
        ({"text": "a"}, {"text": "b", "thoughtSignature": "c2ln"}),
        ({"text": "a"}, {"functionCall": {"name": "f", "args": {}}}, {"text": "b"}),
        ({"text": "a", "thoughtSignature": "c2ln"}, {"text": "b"}),
    ):
        events = [_compiled("message", _gemini_parts({"text": "x"})), _compiled("message", _gemini_parts(*parts))]
        out: list[Unified] = []
        assert typed.take_deltas is not None and typed.take_deltas(events, 0, rule, out) == 1
        assert [e.text for e in out] == ["x"]
        got, want, _ = _both("gemini", events)
        assert got == want


def test_collect_of_gemini_chunks_of_several_parts_is_the_full_decode_s() -> None:
    """``collect()`` (whose reader puts the texts aside instead of making events) reads the parts of each chunk."""
    body = "".join(
        f"data: {c}\r\n\r\n"
        for c in (
            _gemini_parts({"text": "Hel"}),
            _gemini_parts({"text": "lo"}, {"text": ", "}, {"text": "think", "thought": True}),
            _gemini_parts({"text": "wor"}, {"text": "ld"}),
            json.dumps(
                {
                    "candidates": [{"content": {"parts": [{"text": "!"}]}, "finishReason": "STOP"}],
                    "usageMetadata": {"promptTokenCount": 2, "candidatesTokenCount": 5},
                }
            ),
        )
    ).encode()
    results = []
    for on in (True, False):
        typed.set_enabled(on)
        try:
            results.append(collect(iter_unified([body], "gemini")))
        finally:
            typed.set_enabled(True)
    fast, slow = results
    assert (fast.text, fast.reasoning, fast.stop_reason) == ("Hello, world!", "think", "end")
    assert (fast.text, fast.reasoning, fast.usage, fast.stop_reason) == (
        slow.text,
        slow.reasoning,
        slow.usage,
        slow.stop_reason,
    )


@pytest.mark.parametrize("character", ["東", "a"], ids=["non-ascii", "ascii"])
def test_payloads_over_64_ki_characters_take_the_full_decode(character: str) -> None:
    """A delta's text over 64 Ki characters is left to the full decode, ASCII or not."""
    for size in (60_000, 70_000):
        data = json.dumps({"type": "response.output_text.delta", "delta": character * size}, ensure_ascii=False)
        got, want, _ = _both("openai", [_compiled("response.output_text.delta", data)])
        assert got == want and got[0]["text"] == character * size
        assert typed.take_deltas is not None
        taken = typed.take_deltas([_compiled("response.output_text.delta", data)], 0, openai._DELTA_RULE, [])
        assert taken == (1 if size < 65_000 else 0)


@pytest.mark.parametrize(("character", "read"), [("A", True), ("東", False)], ids=["ascii", "non-ascii"])
def test_a_large_event_that_makes_no_text_is_read_in_place_when_ascii(character: str, read: bool) -> None:
    """A generated image's progress event (its base64, megabytes) makes only a ``raw`` event: ASCII, it is read in
    place without a decode (``raw`` decoded when asked for); with a character past ASCII it is left to the full
    decode (reading it would add its UTF-8 copy). The events are the full decode's either way."""
    kind = "response.image_generation_call.partial_image"
    image = character * 300_000
    data = (
        json.dumps(
            {"type": kind, "item_id": "ig_1", "output_index": 0, "partial_image_index": 0, "partial_image_b64": image},
            ensure_ascii=False,
        )[:-1]
        + ',"sequence_number":5}'
    )
    got, want, reader = _both("openai", [_compiled(kind, data)])
    assert got == want and [e["type"] for e in got] == ["raw"] and reader.last_sequence == 5
    assert typed.take_deltas is not None
    assert typed.take_deltas([_compiled(kind, data)], 0, openai._DELTA_RULE.fresh(), []) == (1 if read else 0)
    if read:
        event = next(e for e in iter_unified([f"event: {kind}\ndata: {data}\n\n".encode()], "openai"))
        assert type(event._raw) is LazyPayload and event.raw["partial_image_b64"] == image


_TEXT_DELTA = '{"type":"response.output_text.delta","item_id":"m","delta":"hi","sequence_number":7,"logprobs":[]}'
_ARGS_DELTA = (
    '{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\\"a\\"","sequence_number":3}'
)
_BLOCK_DELTA = '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"a\\""}}'
_GEMINI_SHAPE = (
    '{"candidates": [{"content": {"parts": [{"text": "hi","thought": true}],"role": "model"},"index": 0}],'
    '"usageMetadata": {"promptTokenCount": 3,"totalTokenCount": 9},"modelVersion": "g","responseId": "r"}'
)
_CHAT_CHUNK = '{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}'


@pytest.mark.parametrize(
    ("provider", "name", "clean", "variant"),
    [
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace(":7", ":7.5")),
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace(":7", ":-0")),
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace(":7", ":" + "9" * 40)),
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace(":7", ":70000000000")),
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace(":7", ':"7"')),
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace('"hi"', '"h\\u00e9\\n\\"i"')),
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace('"hi"', '""')),
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace('"hi"', '"\\ud800"')),
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace('"hi"', "12")),
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace("[]", "[1]")),
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace('"m"', '"m2"') + "  \n"),
        ("openai", "response.output_text.delta", _TEXT_DELTA, _TEXT_DELTA.replace("output_text", "output_text")[:-1]),
        (
            "openai",
            "response.output_text.delta",
            _TEXT_DELTA,
            _TEXT_DELTA.replace('"delta":"hi",', '"delta":"hi","delta":5,'),
        ),
        ("openai", "response.function_call_arguments.delta", _ARGS_DELTA, _ARGS_DELTA.replace("fc_1", "fc_2")),
        (
            "openai",
            "response.function_call_arguments.delta",
            _ARGS_DELTA,
            _ARGS_DELTA.replace('"fc_1"', '"fc\\u005f1"'),
        ),
        ("anthropic", "content_block_delta", _BLOCK_DELTA, _BLOCK_DELTA.replace('"index":0', '"index":1')),
        ("anthropic", "content_block_delta", _BLOCK_DELTA, _BLOCK_DELTA.replace('"index":0', '"index":0.0')),
        ("anthropic", "content_block_delta", _BLOCK_DELTA, _BLOCK_DELTA.replace('"index":0', '"index":"0"')),
        ("anthropic", "content_block_delta", _BLOCK_DELTA, _BLOCK_DELTA.replace("input_json_delta", "text_delta")),
        ("gemini", "message", _GEMINI_SHAPE, _GEMINI_SHAPE.replace("true", "false")),
        ("gemini", "message", _GEMINI_SHAPE, _GEMINI_SHAPE.replace(": 9", ": 9.5")),
        ("gemini", "message", _GEMINI_SHAPE, _GEMINI_SHAPE.replace('"g"', '"g\\u0032"')),
        ("gemini", "message", _GEMINI_SHAPE, _GEMINI_SHAPE.replace('"r"', "7")),
        ("gemini", "message", _GEMINI_SHAPE, _GEMINI_SHAPE.replace('"hi"', '"h\\ud83d\\ude42"')),
        ("openai-chat", "message", _CHAT_CHUNK, _CHAT_CHUNK.replace('"hi"', '"h\\"i"')),
        ("openai-chat", "message", _CHAT_CHUNK, _CHAT_CHUNK.replace('"index":0', '"index":1')),
        ("openai-chat", "message", _CHAT_CHUNK, _CHAT_CHUNK.replace('"c"', '"d"')),
    ],
)
def test_a_payload_of_a_learned_shape_reads_as_the_full_decode(
    provider: str, name: str, clean: str, variant: str
) -> None:
    """Each variant keeps the keys of a payload the reader just took (so it is read by that payload's shape, or
    found not to be of it) and changes a value, its kind or its spelling."""
    first: tuple[Any, ...] = ()
    last: tuple[Any, ...] = ()
    if provider in _CALL_STARTS and "delta" in name and "output_text" not in name:
        first = (_compiled(_CALL_START_NAMES[provider], _CALL_STARTS[provider]),)
        last = (_compiled(*_CALL_STOPS[provider]),)
    elif provider == "openai-chat":
        first = (_compiled("message", _CHAT_START),)
    for _ in range(2):  # the second time, the clean payload's shape is learned twice over
        reader = _check(provider, name, variant, first, clean, last)
        assert reader._delta_rule.learned >= 1  # type: ignore[attr-defined]  # the variant met a learned shape
        _check(provider, name, clean, first, clean, last)


def test_a_note_reports_the_latest_payload_and_the_usage_is_decoded_when_read() -> None:
    if typed.take_deltas is None:
        pytest.skip("the compiled delta reader is not built")
    chunks = [
        _GEMINI_SHAPE,
        _GEMINI_SHAPE.replace('"r"', '"r2"').replace(": 9", ": 11"),
        _GEMINI_SHAPE.replace(',"modelVersion": "g","responseId": "r"', "").replace(": 9", ": 12"),
    ]
    normalizer = normalizer_for("gemini")
    made = normalizer.normalize([_compiled("message", c) for c in chunks])
    assert [e.type for e in made] == ["reasoning_delta"] * 3
    assert type(normalizer._usage_payload) is str  # type: ignore[attr-defined]  # kept as text until read
    assert (normalizer.response_id, normalizer.model) == ("r2", "g")
    assert normalizer.usage == {"promptTokenCount": 3, "totalTokenCount": 12}
    assert normalizer._usage_payload is None  # type: ignore[attr-defined]


_ARGS = typed.member_path(("a",))


@settings(max_examples=examples(500))
@given(_value, st.booleans(), st.booleans())
@example({"x": [1.5, -0.0, 1e16, 1e-7, 2**70, "é\\n\x01\u2028🙂", None, True]}, True, True)
def test_a_member_written_from_the_text_is_what_json_dumps_writes(value: Any, spaced: bool, ascii_only: bool) -> None:
    if typed.compact_member is None:
        pytest.skip("the compiled delta reader is not built")
    text = '{"a": ' + json.dumps(value, ensure_ascii=ascii_only, indent=1 if spaced else None) + ', "b": 1}'
    got = typed.compact_member(text, _ARGS)
    if got is None:  # what it cannot promise: a key it would have to unescape, a number that is not finite
        assert not isinstance(value, (dict, list)) or "\\" in text or "Infinity" in text or "NaN" in text
        return
    assert got == compact_json(json.loads(text)["a"])


@pytest.mark.parametrize(
    "text",
    [
        '{"a": {"k": 1, "k": 2}}',  # json.loads keeps the last value at the first key's place
        '{"a": {"\\u006b": 1}}',
        '{"a": {"x": "\\ud800"}}',
        '{"a": {"big": 1e400}}',
        '{"a": 5}',
        '{"a": "text"}',
        '{"a": {"x": 1},}',
        '{"b": {}}',
        '[{"a": {}}]',
    ],
)
def test_members_it_cannot_promise_are_left_to_json_dumps(text: str) -> None:
    if typed.compact_member is None:
        pytest.skip("the compiled delta reader is not built")
    assert typed.compact_member(text, _ARGS) is None


def test_arguments_with_every_kind_of_value_are_written_from_the_text() -> None:
    if typed.compact_member is None:
        pytest.skip("the compiled delta reader is not built")
    text = (
        '{"a": {"q": "h\\u00e9 \\"x\\" \\/ \\n\\u0001 \\ud83d\\ude42", "n": -0, "big": 123456789012345678901234567890,'
        ' "f": [1.50, 1e5, 1E-7, -0.0, 0.1], "ok": [true, false, null, {}, []]}}'
    )
    got = typed.compact_member(text, _ARGS)
    assert got is not None and got == compact_json(json.loads(text)["a"])


@st.composite
def ollama_lines(draw: Any) -> tuple[bool, str]:
    """Ollama /api/chat or /api/generate lines around the thinking and text lines the reader takes."""
    chat_line = draw(st.booleans())
    text = st.sampled_from(["a", " b", "hé", ""]) | _text
    inner = [
        ("role", "assistant"),
        ("content", draw(_value) if draw(_rare) else draw(text)),
        ("thinking", draw(_mostly_none("hm", "", 5)) if draw(st.booleans()) else draw(text)),
        ("tool_calls", draw(_mostly_none([{"function": {"name": "f", "arguments": {"a": 1}}}], "x"))),
    ]
    wanted: list[tuple[str, Any]] = [
        ("model", draw(st.sampled_from(["m", "m2", 5]))),
        ("created_at", "2025-01-01T00:00:00Z"),
    ]
    if chat_line:
        wanted.append(("message", draw(_value) if draw(_rare) else draw(_member_lists(inner))))
    else:
        wanted += [("response", draw(_value) if draw(_rare) else draw(text)), ("thinking", draw(_mostly_none("t", "")))]
    wanted.append(("done", draw(st.sampled_from([False] * 6 + [True, None, 1, "true"]))))
    if draw(_rare):
        wanted.append(("error", draw(st.sampled_from(["boom", None, {"message": "x"}]))))
    if draw(_rare):
        wanted.append(("done_reason", "stop"))
    return chat_line, _dump(draw(_member_lists(wanted)), draw(st.booleans()), draw(st.booleans()))


_OLLAMA_FIRST = {
    True: '{"model":"m","created_at":"x","message":{"role":"assistant","content":""},"done":false}',
    False: '{"model":"m","created_at":"x","response":"","done":false}',
}


@settings(max_examples=examples(500))
@given(ollama_lines(), st.integers(0, len(_MANGLE) - 1), st.booleans(), st.booleans())
@example((True, '{"model":"m","message":{"role":"assistant","content":"a"},"done":false}'), 0, True, False)
def test_ollama_lines_equal_the_full_decode(line: tuple[bool, str], mangle: int, started: bool, primed: bool) -> None:
    chat_line, data = line
    first = (_compiled(None, _OLLAMA_FIRST[chat_line if started else not chat_line]),)
    _check("ollama", None, _MANGLE[mangle](data), first, data if primed else "")


@st.composite
def converse_deltas(draw: Any) -> str:
    """Bedrock ConverseStream ``contentBlockDelta`` payloads around the text, reasoning and tool-input deltas the
    reader takes (and the signatures, redacted reasoning and citations it must leave to the full decode)."""
    text = st.sampled_from(["a", " b", "hé", ""]) | _text
    reasoning = [
        ("text", draw(_mostly_none("hm", "")) if draw(st.booleans()) else draw(text)),
        ("signature", draw(_mostly_none("sig", ""))),
        ("redactedContent", draw(_mostly_none("AAAA"))),
    ]
    kind = draw(st.sampled_from(["text", "reasoningContent", "toolUse", "citation", "mixed"]))
    delta: list[tuple[str, Any]] = []
    if kind in ("text", "mixed"):
        delta.append(("text", draw(_value) if draw(_rare) else draw(text)))
    if kind in ("reasoningContent", "mixed"):
        delta.append(("reasoningContent", draw(_value) if draw(_rare) else draw(_member_lists(reasoning))))
    if kind in ("toolUse", "mixed"):
        delta.append(("toolUse", {"input": draw(_value) if draw(_rare) else draw(text)}))
    if kind == "citation":
        delta.append(("citation", {"title": "t"}))
    wanted: list[tuple[str, Any]] = [
        ("contentBlockIndex", draw(st.sampled_from([0, 1, 2, "2", None]))),
        ("delta", draw(_value) if draw(_rare) else draw(_member_lists(delta))),
        ("p", "abcdef"),
    ]
    return _dump(draw(_member_lists(wanted)), draw(st.booleans()), draw(st.booleans()))


_CONVERSE_TOOL = json.dumps({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}})


@settings(max_examples=examples(500))
@given(converse_deltas(), st.integers(0, len(_MANGLE) - 1), st.booleans(), st.booleans())
@example('{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\\"a"}},"p":"a"}', 0, True, False)
def test_converse_deltas_equal_the_full_decode(data: str, mangle: int, started: bool, primed: bool) -> None:
    first = (_compiled("contentBlockStart", _CONVERSE_TOOL),) if started else ()
    last = (_compiled("contentBlockStop", '{"contentBlockIndex":2}'),)
    _check("bedrock-converse", "contentBlockDelta", _MANGLE[mangle](data), first, data if primed else "", last)


# -- hostile values ---------------------------------------------------------------------------------------------

#: Values no delta is made of, put in place of each member's value in turn: integers longer than Python's
#: ``int_max_str_digits`` (4300: the decode reads them as floats) and around the 640 digits every Python converts,
#: and nesting past the reader's depth limit (256) and past the recursion limit of a recursive decoder.
_HUGE = "1" + "0" * 5000
_HOSTILE_VALUES = {
    "huge-int": _HUGE,
    "huge-negative": "-" + _HUGE,
    "huge-fraction": _HUGE + ".5",
    "640-digits": "9" * 640,
    "641-digits": "-" + "9" * 641,
    "deep-arrays": "[" * 3000 + "]" * 3000,
    "deep-objects": '{"a":' * 300 + "1" + "}" * 300,
}
_GEMINI_CALL = (
    '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":[1.5,"x",{}],"b":1}}}]}}],'
    '"modelVersion":"g"}'
)
#: name -> (provider, SSE event name, a payload the reader takes, the stream's first events, whether a call is open).
_HOSTILE_SHAPES: dict[str, tuple[str, str, str, tuple[Any, ...], bool]] = {
    "responses": ("openai", "response.output_text.delta", _TEXT_DELTA, (), False),
    "responses-args": ("openai", "response.function_call_arguments.delta", _ARGS_DELTA, (), True),
    "messages-args": ("anthropic", "content_block_delta", _BLOCK_DELTA, (), True),
    "chat": ("openai-chat", "message", _CHAT_CHUNK, (_compiled("message", _CHAT_START),), False),
    "gemini": ("gemini", "message", _GEMINI_SHAPE, (_compiled("message", _GEMINI_START),), False),
    "gemini-call-args": ("gemini", "message", _GEMINI_CALL, (_compiled("message", _GEMINI_START),), False),
}
_MEMBER_VALUE = re.compile(r':\s*("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)')


@pytest.mark.parametrize("value", sorted(_HOSTILE_VALUES))
@pytest.mark.parametrize("shape", sorted(_HOSTILE_SHAPES))
def test_a_hostile_value_in_any_member_reads_as_the_full_decode(shape: str, value: str) -> None:
    """Each member's value of a shape the reader takes (after the reader learned the shape), in turn, replaced by
    a hostile value: the same events with the reader on and off (an exception would fail the test)."""
    provider, name, clean, first, calling = _HOSTILE_SHAPES[shape]
    last: tuple[Any, ...] = ()
    if calling:
        first, last = (
            (_compiled(_CALL_START_NAMES[provider], _CALL_STARTS[provider]),),
            (_compiled(*_CALL_STOPS[provider]),),
        )
    spots = list(_MEMBER_VALUE.finditer(clean))
    assert spots
    for spot in spots:
        data = clean[: spot.start(1)] + _HOSTILE_VALUES[value] + clean[spot.end(1) :]
        _check(provider, name, data, first, clean, last)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('{"t": 1, "a": {"b": [1, {"x": "🙂"}], "c": 2}}', {"t": 1, "a": {"b": None, "c": 2}}),
        ('{"a": {"b": {"k": 1}}, "a": {"b": [2], "d": 3}}', {"a": {"b": None, "d": 3}}),  # the member kept: the last
        (' { "a" : { "b" : [ ] } } ', {"a": {"b": None}}),
        ('{"a": {"b": 5}}', None),  # not an object or array
        ('{"a": {"b": "[1]"}}', None),
        ('{"a": {"c": []}}', None),  # not there
        ('{"a": {"\\u0062": []}}', None),  # a key spelled with an escape: the full decode can tell
        ('{"a": {"b": [1,]}}', None),  # not strict JSON
    ],
)
def test_a_member_written_as_null_leaves_the_rest_of_the_payload_as_it_was(text: str, want: Any) -> None:
    assert typed.without_member is not None
    got = typed.without_member(text.encode(), typed.member_path(("a", "b")))
    assert (None if got is None else json.loads(got)) == want
    if got is not None:  # every other byte is the payload's own
        assert text.encode().replace(got[: got.index(b"null")], b"", 1).endswith(got[got.index(b"null") + 4 :])


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('{"t": 1, "a": {"b": "🙂 \\" x", "c": 2}}', {"t": 1, "a": {"b": None, "c": 2}}),
        ('{"a": {"b": ""}}', {"a": {"b": None}}),
        ('{"a": {"b": "x"}, "a": {"b": "y", "d": 3}}', {"a": {"b": None, "d": 3}}),  # the member kept: the last
        ('{"a": {"b": [1]}}', None),  # a string path: an array is left as it is
        ('{"a": {"b": 5}}', None),
        ('{"a": {"c": "x"}}', None),  # not there
        ('{"a": {"b": "x",}}', None),  # not strict JSON
    ],
)
def test_a_string_member_is_written_as_null_where_the_path_says_string(text: str, want: Any) -> None:
    assert typed.without_member is not None
    got = typed.without_member(text.encode(), typed.member_path(("a", "b"), string=True))
    assert (None if got is None else json.loads(got)) == want
    if got is not None:  # every other byte is the payload's own
        assert text.encode().replace(got[: got.index(b"null")], b"", 1).endswith(got[got.index(b"null") + 4 :])
    one = typed.without_member(b'{"c": [{"t": "x", "n": 1}]}', typed.member_path(("c", 0, "t"), string=True))
    assert one is not None and json.loads(one) == {"c": [{"t": None, "n": 1}]}  # 0: the only element
    assert typed.without_member(b'{"c": [{"t": "x"}, {}]}', typed.member_path(("c", 0, "t"), string=True)) is None


@pytest.mark.parametrize(
    "text",
    ["é!", "東京", "🙂 a", "a" * 7 + "東", "é" * 5000, "東" * 3000, "🙂" * 2500],
    ids=["latin-1", "bmp", "astral", "ascii-then-bmp", "latin-1-large", "bmp-large", "astral-large"],
)
def test_a_non_ascii_payload_is_read_in_its_utf8_at_every_width(text: str) -> None:
    """A payload whose characters are stored 1, 2 or 4 bytes each (on the stack or, large, on the heap) is read in
    the UTF-8 the reader writes of it: the full decode's event."""
    data = json.dumps({"type": "response.output_text.delta", "delta": text, "sequence_number": 3}, ensure_ascii=False)
    got, want, _ = _both("openai", [_compiled("response.output_text.delta", data)])
    assert got == want and got[0]["text"] == text
    out: list[Unified] = []
    assert typed.take_deltas is not None
    assert typed.take_deltas([_compiled("response.output_text.delta", data)], 0, openai._DELTA_RULE, out) == 1
    assert out[0].text == text


def test_a_payload_with_a_lone_surrogate_is_left_to_the_full_decode() -> None:
    """A str with a lone surrogate (a Python producer's event: a scanner never makes one) has no UTF-8: the full
    decode reads it."""
    data = '{"type":"response.output_text.delta","delta":"a\ud800b東","sequence_number":3}'
    assert typed.take_deltas is not None
    assert typed.take_deltas([PyEvent("response.output_text.delta", data)], 0, openai._DELTA_RULE, []) == 0
    got, want, _ = _both("openai", [PyEvent("response.output_text.delta", data)])
    assert got == want
