"""Bedrock's chunk unwrapping (``normalizers/_fast/bedrock_chunks_py.py``): what it takes and where it stops, the
compiled module built from the same source giving the same results on every input, and the selector picking it."""

from __future__ import annotations

import base64
import importlib
from types import ModuleType
from typing import Any, Callable, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples
from ssewire._config import env_flag, no_extensions
from ssewire.normalizers import bedrock
from ssewire.normalizers._fast import bedrock_chunks, bedrock_chunks_py

try:
    COMPILED: Optional[ModuleType] = importlib.import_module("ssewire.normalizers._fast.bedrock_chunks_c")
except ImportError:  # the pure-Python install
    COMPILED = None
needs_compiled = pytest.mark.skipif(COMPILED is None, reason="bedrock_chunks_c not built")
#: The Python module, untyped here: the tests feed it stand-in messages and make_event functions of their own.
PY: Any = bedrock_chunks_py


class Message:
    """An event-stream message as the unwrapping reads it (any ``data``; ``message_type`` may be absent)."""

    def __init__(self, event: Any, data: Any, message_type: Any = None, typed: bool = True) -> None:
        self.event = event
        self.data = data
        if typed:
            self.message_type = message_type


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def chunk(inner: str, tail: str = '","p":"abc"}') -> Message:
    return Message("chunk", '{"bytes":"' + b64(inner) + tail, "event")


def pair(kind: Optional[str], text: str) -> tuple[Optional[str], str]:
    return (kind, text)


def outcome(
    module: ModuleType, events: list[Any], start: int, make_event: Callable[[Optional[str], str], Any] = pair
) -> tuple[Any, ...]:
    """What ``unwrap_chunks`` returns and makes, or the type of what it raises and what it made before."""
    out: list[Any] = []
    try:
        return ("returned", module.unwrap_chunks(events, start, out, make_event), out)
    except Exception as exc:
        return ("raised", type(exc), out)


DELTA = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}'
STOP = '{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":3}}'


@pytest.mark.parametrize(
    ("stop", "why"),
    [
        (Message("other", '{"bytes":"' + b64(DELTA) + '"}', "event"), "another event"),
        (chunk(STOP), "the invocation metrics"),
        (Message("chunk", '{"bytes":"' + b64(DELTA) + '"}', "exception"), "an exception message"),
        (Message("chunk", '{"bytes":"' + b64(DELTA) + '"}', "error"), "an error message"),
        (Message("chunk", b'{"bytes":"e30="}', "event"), "bytes, not str"),
        (Message("chunk", None, "event"), "no data"),
        (Message("chunk", '{"bytes":"' + b64(DELTA), "event"), "no closing quote"),
        (Message("chunk", '{"bytes":"' + b64(DELTA) + '"', "event"), "nothing after the quote"),
        (Message("chunk", '{"bytes":"' + b64(DELTA) + '"x}', "event"), "neither , nor } after the quote"),
        (Message("chunk", '{"bytes":"YQ"}', "event"), "not base64 (bad padding)"),
        (Message("chunk", '{"bytes":"é"}', "event"), "not ASCII"),
        (Message("chunk", '{ "bytes":"' + b64(DELTA) + '"}', "event"), "another layout (decoded instead)"),
    ],
)
def test_it_takes_the_chunks_and_stops_at_the_first_message_it_cannot(stop: Message, why: str) -> None:
    events = [chunk(DELTA), chunk('{"type":"ping"}', '"}'), stop, chunk(DELTA)]
    out: list[Any] = []
    assert PY.unwrap_chunks(events, 0, out, pair) == 2, why
    assert out == [("content_block_delta", DELTA), ("ping", '{"type":"ping"}')]
    assert PY.unwrap_chunks(events, 3, out, pair) == 4
    if COMPILED is not None:
        assert outcome(COMPILED, events, 0) == outcome(bedrock_chunks_py, events, 0), why


def test_the_type_is_what_the_text_opens_with_else_none() -> None:
    assert bedrock_chunks_py.type_of('{"type":"message_start","message":{}}') == "message_start"
    assert bedrock_chunks_py.type_of('{"type":""}') == ""
    assert bedrock_chunks_py.type_of('{"type":"open') is None
    assert bedrock_chunks_py.type_of('{"index":0,"type":"ping"}') is None
    events = [chunk('{"index":0}'), Message("chunk", '{"bytes":"' + base64.b64encode(b"\xff").decode() + '"}')]
    out: list[Any] = []
    assert PY.unwrap_chunks(events, 0, out, pair) == 2
    assert out == [(None, '{"index":0}'), (None, "\ufffd")]  # undecodable bytes replaced, as the wire decode does


_pieces = st.sampled_from(
    [
        '{"bytes":"',
        b64(DELTA),
        b64('{"type":"x"} é'),
        b64(STOP),
        b64('{"typ":1}'),
        b64('{"type":"'),
        base64.b64encode(b"\xff\xfe").decode(),
        "YQ",  # bad padding
        '"',
        ",",
        "}",
        '"p":"ab"}',
        "%%",
        "é",
        "=",
    ]
)
_data = st.one_of(
    st.lists(_pieces, max_size=5).map("".join),
    st.lists(_pieces, max_size=5).map(lambda pieces: "".join(pieces).encode()),
    st.sampled_from([None, 0, {"bytes": b64(DELTA)}]),
)
_messages = st.builds(
    Message,
    st.sampled_from(["chunk", "chunk", "chunk", "other", None]),
    _data,
    st.sampled_from(["event", "event", "exception", "error", None]),
    st.booleans(),
)


@needs_compiled
@settings(max_examples=examples(400), deadline=None)
@given(st.lists(_messages, max_size=6), st.integers(-3, 7))
def test_the_compiled_module_gives_what_the_python_one_gives(events: list[Message], start: int) -> None:
    assert COMPILED is not None
    assert outcome(COMPILED, list(events), start) == outcome(bedrock_chunks_py, list(events), start)


@needs_compiled
def test_the_compiled_module_passes_on_what_make_event_raises() -> None:
    assert COMPILED is not None

    def refuse_ping(kind: Optional[str], text: str) -> Any:
        if kind == "ping":
            raise KeyError(text)
        return kind

    events = [chunk(DELTA), chunk('{"type":"ping"}'), chunk(DELTA)]
    want = ("raised", KeyError, ["content_block_delta"])
    assert outcome(COMPILED, events, 0, refuse_ping) == outcome(bedrock_chunks_py, events, 0, refuse_ping) == want


@needs_compiled
@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(['{"type":"', "ping", '"', "}", "é", "x"]), max_size=5).map("".join))
def test_the_compiled_type_of_is_the_python_one(text: str) -> None:
    assert COMPILED is not None
    assert COMPILED.type_of(text) == bedrock_chunks_py.type_of(text)


def test_the_compiled_module_is_the_one_in_use_when_built() -> None:
    if env_flag("SSEWIRE_REQUIRE_EXTENSIONS"):
        assert COMPILED is not None, "ssewire.normalizers._fast.bedrock_chunks_c cannot be imported"
    in_use = COMPILED is not None and not no_extensions()
    module = COMPILED if in_use and COMPILED is not None else bedrock_chunks_py
    assert ("cython" if in_use else "python") == bedrock_chunks.IMPLEMENTATION
    assert bedrock_chunks.unwrap_chunks is module.unwrap_chunks
    assert bedrock_chunks.type_of is module.type_of
    assert vars(bedrock)["unwrap_chunks"] is module.unwrap_chunks  # what BedrockAnthropicNormalizer.normalize calls
