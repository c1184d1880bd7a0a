"""Partial JSON previews and the per-call argument accumulator."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples
from helpers.trace import lines_run
from ssewire import IncrementalJSON, PartialJSON, parse_partial_json
from ssewire.partial_json import _repair, parse_arguments


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", None),
        ("   ", None),
        ('{"a": 1}', {"a": 1}),
        ('{"a": ', {}),
        ('{"a": "hel', {"a": "hel"}),
        ('{"a": "x\\', {"a": "x"}),
        ('{"a": "x\\u00', {"a": "x"}),
        ('{"a": "x\\u00e9', {"a": "xé"}),
        ('{"a": 1,', {"a": 1}),
        ('{"a": 1, "b', {"a": 1}),
        ('{"a": 1, "b":', {"a": 1}),
        ('{"a": tr', {}),
        ('{"a": true', {"a": True}),
        ('{"a": 12.', {"a": 12}),
        ('{"a": -', {}),
        ('{"a": 1e', {"a": 1}),
        ("[1, 2", [1, 2]),
        ("[1, [2, [3", [1, [2, [3]]]),
        ('{"a": [{"b": {"c": "d', {"a": [{"b": {"c": "d"}}]}),
        ('{"a": {}, "b": []', {"a": {}, "b": []}),
        ('"abc', "abc"),
        ("nul", None),
        ("}", None),
    ],
)
def test_parse_partial_json(text: str, expected: Any) -> None:
    assert parse_partial_json(text) == expected


@settings(max_examples=examples(200), deadline=None)
@given(
    value=st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text()),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4),
        max_leaves=12,
    ),
    data=st.data(),
)
def test_every_prefix_previews_without_raising_and_full_text_is_exact(value: Any, data: st.DataObject) -> None:
    text = json.dumps(value)
    cut = data.draw(st.integers(0, len(text)))
    parse_partial_json(text[:cut])  # never raises
    assert parse_partial_json(text) == value


def test_parse_arguments() -> None:
    assert parse_arguments("") == {}
    assert parse_arguments(None) == {}
    assert parse_arguments("  ") == {}
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments("[1]") == {"_value": [1]}
    assert parse_arguments('{"a": ') == {"_raw": '{"a": ', "_error": "invalid JSON"}


def test_partial_json_accumulator_per_key() -> None:
    acc = PartialJSON()
    assert acc.append("a", '{"x": ') == '{"x": '
    acc.append("b", "{}")
    assert acc.append("a", '"y"') == '{"x": "y"'
    assert acc.preview("a") == {"x": "y"}
    acc.append("a", "}")
    assert acc.get("a") == '{"x": "y"}'
    assert acc.finish("a") == {"x": "y"}
    assert acc.get("a") == ""  # finish forgets the key
    assert acc.finish("b", final='{"z": 2}') == {"z": 2}  # the authoritative string wins
    assert acc.buffers == {}


def test_accumulating_many_fragments_is_linear() -> None:
    acc = PartialJSON()
    for _ in range(200_000):
        acc.append("k", "ab")
    assert len(acc.get("k")) == 400_000


def _closers(text: str) -> str:
    return "".join("}" if c == "{" else "]" for c in reversed(text) if c in "[{")


def _lines_run(text: str) -> int:
    """How many lines of Python :func:`_repair` runs on ``text`` (its generators and helpers included)."""
    count, repaired = lines_run(lambda: _repair(text))
    assert repaired == text + _closers(text)
    return count


@pytest.mark.parametrize("opener", ["[", '{"a":['])
def test_repairing_a_deep_prefix_is_linear_in_its_depth(opener: str) -> None:
    """A hostile tool-argument or payload prefix of n open containers is repaired in O(n): each valid cut keeps
    the containers it closes without copying them (was one closers string per cut: 1.5 s for 30,000 brackets)."""
    assert _repair(opener * 3 + '"ab') == opener * 3 + '"ab"' + _closers(opener * 3)
    # 8x the depth runs ~8x the lines (a closers string per cut ran ~64x)
    assert _lines_run(opener * 8_000) < 10 * _lines_run(opener * 1_000)


_json_docs = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**6), 10**6),
        st.floats(allow_nan=False, allow_infinity=False, width=32),
        st.text(alphabet='ab"\\/\n\té{}[],: '),
    ),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(alphabet='k"\\é', max_size=4), c, max_size=4),
    max_leaves=15,
)


@settings(max_examples=examples(300), deadline=None)
@given(value=_json_docs, ascii_only=st.booleans(), data=st.data())
def test_incremental_preview_equals_reparsing_every_prefix(value: Any, ascii_only: bool, data: st.DataObject) -> None:
    from ssewire import IncrementalJSON

    text = json.dumps(value, ensure_ascii=ascii_only)
    sizes = data.draw(st.lists(st.integers(1, 9), min_size=1, max_size=30))
    parser = IncrementalJSON()
    pos = 0
    step = 0
    while pos < len(text):
        end = pos + sizes[step % len(sizes)]
        parser.feed(text[pos:end])
        pos = min(end, len(text))
        step += 1
        assert json.dumps(parser.value()) == json.dumps(parse_partial_json(text[:pos])), text[:pos]
    assert parser.value() == value
    assert not parser.failed


def test_incremental_escapes_split_anywhere() -> None:
    from ssewire import IncrementalJSON

    text = '{"s": "a\\"b\\\\c\\u00e9\\ud83c\\udf89\\n"}'
    for cut in range(len(text) + 1):
        parser = IncrementalJSON()
        parser.feed(text[:cut])
        parser.value()
        parser.feed(text[cut:])
        assert parser.value() == {"s": 'a"b\\cé🎉\n'}, cut


def test_incremental_invalid_json_freezes_without_raising() -> None:
    from ssewire import IncrementalJSON

    parser = IncrementalJSON()
    parser.feed('{"a": [1, 2], "b": tru')
    parser.feed("x, 3]")
    assert parser.failed
    assert parser.value() == {"a": [1, 2]}
    parser.feed("more")
    assert parser.value() == {"a": [1, 2]}


def test_partial_json_preview_is_incremental_and_live() -> None:
    acc = PartialJSON()
    acc.append("k", '{"path": "/tm')
    first = acc.preview("k")
    assert first == {"path": "/tm"}
    acc.append("k", 'p", "n": 4')
    assert acc.preview("k") == {"path": "/tmp", "n": 4}
    acc.append("k", "2}")
    assert acc.preview("k") == {"path": "/tmp", "n": 42}
    assert acc.finish("k") == {"path": "/tmp", "n": 42}


def test_argument_integers_are_exact_beyond_64_bits() -> None:
    big = 123456789012345678901234567890
    assert parse_arguments(f'{{"id": {big}}}') == {"id": big}
    assert parse_partial_json(f'{{"id": {big}, "n') == {"id": big}
    acc = PartialJSON()
    acc.append("k", f'{{"id": {big}, ')
    assert acc.preview("k") == {"id": big}


def test_an_integer_longer_than_python_converts_freezes_the_preview_and_raises_nothing() -> None:
    """A 5,000-digit integer is JSON, but more digits than Python converts (and the JSON decoders accept)."""
    for pieces in (['{"a": 1, "b": ', "1" * 5_000, "}"], ['{"a": 1, "b": ', "1" * 5_000]):
        parser = IncrementalJSON()
        for piece in pieces:
            parser.feed(piece)
            preview = parser.value()
        assert parser.failed and preview == {"a": 1}
