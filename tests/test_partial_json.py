"""Partial JSON previews and the per-call argument accumulator."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssewire import PartialJSON, parse_partial_json
from ssewire.partial_json import parse_arguments


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


@settings(max_examples=200, deadline=None)
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
