"""JSONArrayStreamParser (Gemini's streamed JSON array), on both implementations (the ``scanner`` fixture)."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples, framed_at_every_split, framed_data
from ssewire import FramingError, SSEBufferOverflow, StreamTruncated


def elements(scanner: ModuleType, data: bytes, size: Optional[int] = None, max_buffer: int = 1 << 20) -> list[str]:
    return framed_data(scanner.JSONArrayStreamParser(max_buffer), data, size)


def every_split(scanner: ModuleType, data: bytes) -> list[str]:
    return framed_at_every_split(scanner.JSONArrayStreamParser, data)


GEMINI_BODY = (
    b'[{\n  "candidates": [\n    {\n      "content": {\n        "parts": [\n          {\n'
    b'            "text": "Hi {not a brace} [nor] \\"quoted\\" \\\\"\n          }\n        ],\n'
    b'        "role": "model"\n      }\n    }\n  ]\n}\n,\r\n{\n  "candidates": [{"finishReason": "STOP"}],\n'
    b'  "usageMetadata": {"promptTokenCount": 3}\n}\n]'
)


def test_gemini_body_elements_exact_text(scanner: ModuleType) -> None:
    got = every_split(scanner, GEMINI_BODY)
    assert len(got) == 2
    assert json.loads(got[0])["candidates"][0]["content"]["parts"][0]["text"] == 'Hi {not a brace} [nor] "quoted" \\'
    assert got[1].startswith("{") and got[1].endswith("}")
    assert json.loads(got[1])["usageMetadata"] == {"promptTokenCount": 3}


@pytest.mark.parametrize("offset", range(56, 72))
@pytest.mark.parametrize("run", ["\\", "\\\\", '\\"', '\\\\\\"', "}{][", '"'])
def test_escapes_and_quotes_around_a_64_byte_boundary(scanner: ModuleType, offset: int, run: str) -> None:
    # the compiled scanner walks elements in 64-byte blocks: escape runs and quotes across a block edge, and
    # elements split there, must come out exactly as the text says
    obj = {"k": "a" * offset + run + "b" * 70, "é": ["}", "\\", {"x": run * 3}]}
    element = json.dumps(obj, ensure_ascii=False)
    body = ("[" + element + ",\n" + element + "]").encode()
    got = every_split(scanner, body)
    assert got == [element, element]
    assert json.loads(got[0]) == obj


@pytest.mark.parametrize("pad", [0, 40, 62, 63, 64, 65, 130])
def test_backslash_outside_a_string_is_an_ordinary_byte(scanner: ModuleType, pad: int) -> None:
    # invalid JSON: outside strings a backslash escapes nothing, so the quote after it opens a string
    element = b"{" + b" " * pad + b'\\"}"}'
    assert every_split(scanner, b"[" + element + b"]") == [element.decode()]


@pytest.mark.parametrize(
    "body",
    [b"[{}]", b"[ {} ]", b"[\n{}\n,\n{}\n]", b"[{},{}]", b"\t\r\n [{}\n,\r\n{}]\n", b"\xef\xbb\xbf[{}]"],
)
def test_separators_and_whitespace(scanner: ModuleType, body: bytes) -> None:
    assert every_split(scanner, body) == ["{}"] * body.count(b"{}")


def test_empty_array(scanner: ModuleType) -> None:
    assert every_split(scanner, b"[]") == []
    assert every_split(scanner, b" [ ] \n") == []


def test_element_emitted_as_soon_as_it_closes(scanner: ModuleType) -> None:
    parser = scanner.JSONArrayStreamParser()
    assert parser.feed(b'[{"a": {"b": 1}') == []
    assert [e.data for e in parser.feed(b"}")] == ['{"a": {"b": 1}}']
    assert not parser.finished
    assert parser.feed(b"]") == []
    assert parser.finished


def test_utf8_split_across_chunks(scanner: ModuleType) -> None:
    body = '[{"t": "héllo 世界 🎉"}]'.encode()
    assert every_split(scanner, body) == ['{"t": "héllo 世界 🎉"}']


def test_escaped_backslash_runs_before_quotes(scanner: ModuleType) -> None:
    body = b'[{"a": "x\\\\"}, {"b": "\\\\\\"}"}, {"c": "\\\\\\\\"}]'
    got = every_split(scanner, body)
    assert [json.loads(g) for g in got] == [{"a": "x\\"}, {"b": '\\"}'}, {"c": "\\\\"}]


@pytest.mark.parametrize(
    "body",
    [
        b'{"error": {"code": 400}}',
        b"<html><body>502 Bad Gateway</body></html>",
        b"[1, 2]",
        b'["a"]',
        b"[[{}]]",
        b"[{}, 3]",
        b"[{} {}]",
        b"[{},,{}]",
        b"[,{}]",
        b"[{}]]",
        b"[{}] x",
        b"[{}][{}]",
    ],
)
def test_framing_errors(scanner: ModuleType, body: bytes) -> None:
    with pytest.raises(FramingError):
        elements(scanner, body)


def test_good_elements_before_a_framing_error_are_returned_first(scanner: ModuleType) -> None:
    parser = scanner.JSONArrayStreamParser()
    assert [e.data for e in parser.feed(b'[{"a": 1}, {"b": 2} junk')] == ['{"a": 1}', '{"b": 2}']
    with pytest.raises(FramingError):
        parser.feed(b"more")
    with pytest.raises(FramingError):
        parser.close()


def test_framing_error_without_pending_elements_raises_at_once(scanner: ModuleType) -> None:
    parser = scanner.JSONArrayStreamParser()
    with pytest.raises(FramingError, match="not a JSON array"):
        parser.feed(b"<!DOCTYPE html>")


@pytest.mark.parametrize("body", [b"", b"   ", b"[", b'[{"a": ', b'[{"a": "}', b"[{}", b"[{},", b"[{}\n,\n"])
def test_truncation_raises_on_close(scanner: ModuleType, body: bytes) -> None:
    parser = scanner.JSONArrayStreamParser()
    parser.feed(body)
    with pytest.raises(StreamTruncated):
        parser.close()


def test_element_bound(scanner: ModuleType) -> None:
    big = b'[{"x": "' + b"y" * 500 + b'"}]'
    for size in (1, 13, None):
        with pytest.raises(SSEBufferOverflow):
            elements(scanner, big, size, max_buffer=100)
    assert len(elements(scanner, big, 13, max_buffer=600)) == 1


def test_whitespace_between_elements_is_not_buffered(scanner: ModuleType) -> None:
    body = b"[" + b" " * 5000 + b"{}" + b"\n" * 5000 + b"]"
    assert elements(scanner, body, 64, max_buffer=10) == ["{}"]


def test_many_elements_in_one_huge_chunk(scanner: ModuleType) -> None:
    element = b'{"candidates": [{"content": {"parts": [{"text": "tok"}]}}]}'
    body = b"[" + b",\n".join([element] * 40_000) + b"]"  # ~2.4 MB in one feed: 2,400 times max_buffer
    assert len(elements(scanner, body, None, max_buffer=1024)) == 40_000


_json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(alphabet='{}[]"\\ab,:\n é🎉')),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(alphabet='{}"\\k'), children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=examples(150), deadline=None)
@given(
    objs=st.lists(st.dictionaries(st.text(alphabet='{}[]"\\k'), _json_values, max_size=4), max_size=5),
    indent=st.sampled_from([None, 2]),
    sep=st.sampled_from([",", "\n,\n", "\n,\r\n", " , "]),
    data=st.data(),
)
def test_any_array_of_objects_any_chunking(
    scanner: ModuleType, objs: list[dict[str, object]], indent: Optional[int], sep: str, data: st.DataObject
) -> None:
    texts = [json.dumps(o, indent=indent, ensure_ascii=False) for o in objs]
    body = ("[" + sep.join(texts) + "]").encode()
    size = data.draw(st.integers(1, max(1, len(body))))
    assert elements(scanner, body, size) == texts
