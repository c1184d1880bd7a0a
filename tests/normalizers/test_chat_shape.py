"""The Chat Completions fast shape is written once (``_fast.chat_shape.CHAT_SHAPE``) and the three readers made from
it agree with it and with the full decode: the compiled delta reader (``chat.CHAT_DELTA_RULE``), the msgspec struct
with ``ChatCompletionsNormalizer.fast_chunk``, and the full decode. Every case is made from the description, so a
member added to it is checked on all three."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any, Optional

import pytest

from helpers.events import decoded_whole, dicts
from ssewire._scan import SSEEvent
from ssewire.normalizers import chat
from ssewire.normalizers._fast import typed
from ssewire.normalizers._fast.chat_shape import CHAT_SHAPE
from ssewire.normalizers._fast.shape import CallShape, DeltaShape, Path
from ssewire.normalizers.chat import ChatCompletionsNormalizer

try:
    from ssewire._scan import scanner_c
except ImportError:  # the pure-Python install: the compiled reader is not built
    scanner_c = None  # type: ignore[assignment]

_BASE: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0}]}
_TEXT_PATH = CHAT_SHAPE.texts[0][0]
pytestmark = pytest.mark.skipif(
    typed.take_deltas is None and typed.chat_chunk is None,
    reason="no fast reader here (neither the compiled reader nor msgspec)",
)

#: Non-null values a member that must be null may carry: each makes the chunk something else.
_NON_NULL = ["x", "", 0, False, {}, [], {"a": 1}]


def _chunk(*members: tuple[Path, Any]) -> str:
    """The JSON text of a chunk with one empty choice and each ``(path, value)`` set (objects made on the way)."""
    obj = copy.deepcopy(_BASE)
    for path, value in members:
        node: Any = obj
        for step, following in zip(path, path[1:]):
            if type(step) is int:
                node = node[step]
            else:
                node = node.setdefault(step, [{}] if type(following) is int else {})
        node[path[-1]] = value
    return json.dumps(obj)


def _full(data: str) -> list[dict[str, Any]]:
    """The events of one chunk by the full decode."""
    return decoded_whole(lambda: dicts(ChatCompletionsNormalizer().normalize([SSEEvent("message", data)])))


def _readers(data: str) -> dict[str, Optional[list[dict[str, Any]]]]:
    """What each fast reader here makes of one chunk (None: it leaves the chunk to the full decode)."""
    got: dict[str, Optional[list[dict[str, Any]]]] = {}
    if typed.take_deltas is not None and scanner_c is not None:
        out: list[Any] = []
        events: list[Any] = [scanner_c.SSEEvent("message", data)]
        taken = typed.take_deltas(events, 0, chat.CHAT_DELTA_RULE, out)
        got["compiled reader"] = [e.to_dict(with_raw=True) for e in out] if taken else None
    if typed.chat_chunk is not None:
        fast = ChatCompletionsNormalizer().fast_chunk(SSEEvent("message", data))
        got["fast_chunk"] = None if fast is None else [e.to_dict(with_raw=True) for e in fast]
    return got


def _texts_of(events: Optional[list[dict[str, Any]]]) -> Optional[list[tuple[str, str]]]:
    return None if events is None else [(e["type"], e["text"]) for e in events]


@pytest.mark.parametrize("path", [CHAT_SHAPE.type, *CHAT_SHAPE.nulls], ids=str)
@pytest.mark.parametrize("value", _NON_NULL, ids=repr)
def test_a_member_that_must_be_null_makes_the_chunk_something_else_on_every_reader(path: Path, value: Any) -> None:
    data = _chunk((_TEXT_PATH, "a"), (path, value))
    assert all(made is None for made in _readers(data).values()), _readers(data)
    assert _full(data)  # the full decode makes the events


@pytest.mark.parametrize("path", [CHAT_SHAPE.type, *CHAT_SHAPE.nulls], ids=str)
def test_a_member_that_must_be_null_may_be_null(path: Path) -> None:
    data = _chunk((_TEXT_PATH, "a"), (path, None))
    want = _full(data)
    assert _texts_of(want) == [(CHAT_SHAPE.texts[0][1], "a")]
    assert all(made == want for made in _readers(data).values()), _readers(data)


@pytest.mark.parametrize(("path", "kind"), CHAT_SHAPE.texts, ids=str)
def test_each_text_makes_its_event_on_every_reader(path: Path, kind: str) -> None:
    data = _chunk((path, "t"))
    want = _full(data)
    assert _texts_of(want) == [(kind, "t")]
    assert all(made == want for made in _readers(data).values()), _readers(data)
    for other in (1, ["t"], {"text": "t"}):  # a text that is not a string: not this shape
        assert all(made is None for made in _readers(_chunk((path, other))).values())


@pytest.mark.parametrize(("first", "second"), list(itertools.combinations(CHAT_SHAPE.texts, 2)), ids=str)
def test_two_texts_follow_the_precedence_of_the_description(first: tuple[Path, str], second: tuple[Path, str]) -> None:
    """An earlier text wins over a later one of its kind; two kinds at once are left to the full decode."""
    (one, kind), (two, other) = first, second
    data = _chunk((one, "a"), (two, "b"))
    want = _full(data)
    for made in _readers(data).values():
        assert made == (want if kind == other else None)
    if kind == other:
        assert _texts_of(want) == [(kind, "a")]
    later = _readers(_chunk((one, ""), (two, "b")))  # an empty text is no text
    assert all(_texts_of(made) == [(other, "b")] for made in later.values()), later


@pytest.mark.parametrize("path", CHAT_SHAPE.zeros, ids=str)
@pytest.mark.parametrize("value", [1, 2, -1, 10**20])
def test_a_chunk_of_another_choice_is_left_to_the_full_decode_which_makes_it_raw(path: Path, value: Any) -> None:
    """A request's ``n`` > 1 streams the other choices' chunks too: none of them is more of the first choice."""
    data = _chunk((_TEXT_PATH, "a"), (path, value))
    assert all(made is None for made in _readers(data).values()), _readers(data)
    assert [event["type"] for event in _full(data)] == ["raw"]


@pytest.mark.parametrize("path", CHAT_SHAPE.zeros, ids=str)
@pytest.mark.parametrize("value", [0, None, "1", 1.5, True, False])
def test_a_zero_that_is_0_null_or_no_integer_is_the_first_choice_on_every_reader(path: Path, value: Any) -> None:
    data = _chunk((_TEXT_PATH, "a"), (path, value))
    want = _full(data)
    assert _texts_of(want) == [(CHAT_SHAPE.texts[0][1], "a")]
    assert all(made == want for made in _readers(data).values()), _readers(data)


@pytest.mark.parametrize(
    "data",
    [
        _chunk(),  # a choice without a delta (a legacy Completions choice: its text is the full decode's)
        _chunk((CHAT_SHAPE.text_parent, None)),
        json.dumps({**_BASE, "choices": []}),
        json.dumps({**_BASE, "choices": None}),
        json.dumps({**_BASE, "choices": [{"delta": {"content": "a"}}, {"delta": {"content": "b"}}]}),
    ],
)
def test_a_chunk_without_one_delta_of_one_choice_is_left_to_the_full_decode(data: str) -> None:
    assert all(made is None for made in _readers(data).values()), _readers(data)


@pytest.mark.parametrize(
    "delta", [{}, {"content": ""}, {"role": "assistant", "content": ""}, {"content": None, "reasoning_content": ""}]
)
def test_a_delta_without_text_is_one_raw_event_on_the_typed_path(delta: dict[str, Any]) -> None:
    """A stream's first chunk names the role and no text: the typed path makes the full decode's one raw event (the
    compiled reader takes only text: it waits for the stream's id and model, which this chunk gives)."""
    data = json.dumps({**_BASE, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    want = _full(data)
    assert [event["type"] for event in want] == ["raw"]
    made = _readers(data)
    assert made.get("compiled reader") is None
    if typed.chat_chunk is not None:
        assert made["fast_chunk"] == want


def test_the_rule_and_the_struct_are_made_from_the_description() -> None:
    args = CHAT_SHAPE.rule_args()
    paths = args["paths"]
    call = CHAT_SHAPE.call
    assert call is not None
    assert paths[args["type_path"]] == ("type",)
    assert [paths[i] for i in args["nulls"]] == [*CHAT_SHAPE.nulls, *call.nulls]
    assert (paths[args["tag_path"]], paths[args["key_path"]]) == (call.at, call.key)
    for event in ("message", None):
        _, ((none, texts), (fragment, arguments, only)) = args["cases"][event]
        assert (none, fragment, only) == (type(None), dict, "tool_call_delta")
        assert [(paths[i], kind) for i, kind in texts] == list(CHAT_SHAPE.texts)
        assert [(paths[i], kind) for i, kind in arguments] == [(call.arguments, "tool_call_delta"), *CHAT_SHAPE.texts]
    if typed.chat_chunk is not None:
        chunk = typed.chat_chunk(_chunk((_TEXT_PATH, "a")))
        assert (chunk.id, chunk.model) == ("c1", "m")  # the members read, unchecked
        assert typed.chat_chunk(_chunk((_TEXT_PATH, "a"), (("id",), 7))).id == 7


# -- tool call fragments (the compiled reader only) -----------------------------------------------------------------

_CALL: CallShape = CHAT_SHAPE.call  # type: ignore[assignment]  # (the shape has a call: asserted below)
assert _CALL is not None
#: A first chunk that opens call ``call_1`` (``f``) at tool call index 0 of the first choice.
_OPENS = _chunk((_CALL.at[:-1], [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}}]))


def _fragment(*members: tuple[Path, Any], index: Any = 0, arguments: Any = '{"a"') -> str:
    """A chunk whose one tool call fragment continues the call at ``index`` with ``arguments``, plus ``members``."""
    return _chunk((_CALL.key, index), (_CALL.arguments, arguments), *members)


def _both_ways(*chunks: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any]]:
    """The events of ``chunks`` (a batch after the first) with the reader on and off, and the raws of the first."""
    results = []
    for on in (True, False):
        typed.set_enabled(on)
        try:
            normalizer = ChatCompletionsNormalizer()
            events = [SSEEvent("message", data) for data in chunks]
            made = normalizer.normalize(events[:1]) + normalizer.normalize(events[1:])
            raws = [e._raw for e in made]  # (before to_dict() reads raw: a lazy one is decoded then)
            results.append((raws, [e.to_dict(with_raw=True) for e in made]))
        finally:
            typed.set_enabled(True)
    (raws, got), (_, want) = results
    return got, want, raws


needs_reader = pytest.mark.skipif(typed.take_deltas is None or scanner_c is None, reason="the compiled reader")


@needs_reader
def test_a_fragment_of_an_open_call_is_read_as_its_argument_delta() -> None:
    got, want, raws = _both_ways(_OPENS, _fragment(), _fragment(arguments=": 1}"))
    assert got == want
    assert [(e["type"], e.get("arguments_delta")) for e in got[1:3]] == [
        ("tool_call_delta", '{"a"'),
        ("tool_call_delta", ": 1}"),
    ]
    assert all(type(raw) is not dict for raw in raws[1:3])  # taken by the reader: raw decoded only when read


@needs_reader
@pytest.mark.parametrize("path", _CALL.nulls, ids=str)
@pytest.mark.parametrize("value", ["x", 0, {"a": 1}], ids=repr)
def test_a_fragment_that_names_or_opens_a_call_is_left_to_the_full_decode(path: Path, value: Any) -> None:
    got, want, raws = _both_ways(_OPENS, _fragment((path, value)))
    assert got == want and type(raws[-1]) is dict


@needs_reader
@pytest.mark.parametrize(
    "data",
    [
        _fragment(index=1),  # no call open at that index
        _fragment(index="0"),
        _fragment(index=None),
        _fragment(arguments=""),
        _fragment(arguments=None),
        _fragment(arguments=1),
        _fragment((_TEXT_PATH, "t")),  # a text beside the fragment
        _fragment((CHAT_SHAPE.texts[1][0], "r")),
        _fragment((("choices", 0, "finish_reason"), "tool_calls")),
        _fragment((("usage",), {"prompt_tokens": 1})),
        _chunk((_CALL.at[:-1], [{"index": 0, "function": {"arguments": "a"}}, {"index": 1}])),  # two fragments
        _chunk((_CALL.at[:-1], [{}]), (_TEXT_PATH, "t")),  # an empty fragment (the full decode opens a call)
        _chunk((_CALL.at[:-1], [{"function": {"arguments": "a"}}])),  # no index
        _fragment((("choices", 0, "index"), 1)),  # the calls of another choice
        _fragment((("choices", 0, "index"), -(2**70))),
    ],
)
def test_a_chunk_that_is_more_than_one_fragment_of_an_open_call_is_left_to_the_full_decode(data: str) -> None:
    got, want, raws = _both_ways(_OPENS, data)
    assert got == want and type(raws[-1]) is dict


@needs_reader
@pytest.mark.parametrize("index", [0, "-0", 1.5, "x", None, True], ids=repr)
def test_a_choice_index_that_is_no_other_integer_is_the_first_choice(index: Any) -> None:
    """The full decode reads a choice ``index`` that is not an integer as 0 (and ``-0`` is 0)."""
    data = _fragment((("choices", 0, "index"), index)).replace('"-0"', "-0")
    got, want, raws = _both_ways(_OPENS, data)
    assert got == want and got[1]["type"] == "tool_call_delta" and type(raws[1]) is not dict


@needs_reader
@pytest.mark.parametrize("fragments", [[], [None]], ids=repr)
def test_a_text_chunk_with_no_fragment_in_its_tool_calls_is_read_as_text(fragments: list[Any]) -> None:
    got, want, raws = _both_ways(_OPENS, _chunk((_TEXT_PATH, "t"), (_CALL.at[:-1], fragments)))
    assert got == want and [e["type"] for e in got[1:2]] == ["text_delta"] and type(raws[1]) is not dict


@needs_reader
def test_a_held_parallel_wrapper_is_never_read_as_a_call() -> None:
    """``multi_tool_use.parallel`` fragments are held (no events): the reader never continues the wrapper."""
    wrapper = _chunk(
        (_CALL.at[:-1], [{"index": 0, "id": "w", "type": "function", "function": {"name": chat.PARALLEL_WRAPPER}}])
    )
    parts = ['{"tool_uses":[{"recipient_name":"functions.f",', '"parameters":{"a":1}}]}']
    got, want, _ = _both_ways(
        wrapper, *(_fragment(arguments=part) for part in parts), _chunk((("choices", 0, "finish_reason"), "tool_calls"))
    )
    assert got == want
    assert [e["type"] for e in got if e["type"].startswith("tool")] == [
        "tool_call_start",
        "tool_call_delta",
        "tool_call_done",
    ]


def _shape(**changes: Any) -> DeltaShape:
    args: dict[str, Any] = {
        "name": "S",
        "type": ("type",),
        "texts": ((("d", "text"), "text_delta"),),
        "nulls": (("error",),),
    }
    return DeltaShape(**{**args, **changes})


@pytest.mark.parametrize(
    "changes",
    [
        {"nulls": (("type",),)},  # written twice
        {"nulls": (("d",),)},  # the prefix of a text
        {"texts": ((("d", "text"), "text_delta"), (("e", "text"), "reasoning_delta"))},  # not one object
        {"texts": ()},
        {"nulls": ((0, "a"),)},  # not a key first
        {"nulls": (("a", 0, 0),)},  # an array in an array
        {"nulls": (("a", 1),)},  # only 0 is an element
        {"nulls": (("a", False),)},
        {"name": "a shape"},
        {"nulls": (("not-a-field",),)},
        {"reads": (("error",),)},
        {"zeros": (("c", 0),)},  # a zero is a member, not an element
        {"zeros": (("d", "text"),)},  # written twice
        {"call": CallShape(at=("d", "calls", 0), key=("index",), arguments=("d", "calls", 0, "arguments"))},
        {"call": CallShape(at=("c", 0), key=("c", 0, "index"), arguments=("c", 0))},
    ],
    ids=repr,
)
def test_a_description_that_breaks_the_rules_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        _shape(**changes)


def test_the_reader_leaves_a_payload_whose_zero_is_another_integer() -> None:
    """Each zero, at any depth: an integer other than 0 is not the shape; 0, null, absent or no integer is."""
    msgspec = pytest.importorskip("msgspec")
    shape = _shape(texts=((("c", 0, "d", "a"), "text_delta"),), zeros=(("c", 0, "i"), ("n",), ("o", "p", 0, "q")))
    assert [paths for paths in shape.paths if paths in shape.zeros] == list(shape.zeros)
    decode, read = msgspec.json.Decoder(shape.struct(msgspec)).decode, shape.reader()
    text = '"c": [{"d": {"a": "x"}, "i": %s}]'
    cases = {
        "{%s}" % (text % "0"): ("text_delta", "x"),
        "{%s}" % (text % "null"): ("text_delta", "x"),
        "{%s}" % (text % '"2"'): ("text_delta", "x"),
        "{%s}" % (text % "true"): ("text_delta", "x"),
        "{%s}" % (text % "2"): None,
        "{%s}" % (text % "-1"): None,
        '{%s, "n": 0}' % (text % "0"): ("text_delta", "x"),
        '{%s, "n": 7}' % (text % "0"): None,
        '{%s, "o": {"p": [{"q": 3}]}}' % (text % "0"): None,
        '{%s, "o": {"p": [{"q": 0}]}}' % (text % "0"): ("text_delta", "x"),
        '{%s, "o": {"p": [{"q": 0}, {"q": 0}]}}' % (text % "0"): None,  # (an array of another length: not the shape)
        '{%s, "o": {"p": null}}' % (text % "0"): ("text_delta", "x"),
    }
    assert {data: read(decode(data)) for data in cases} == cases


def test_the_reader_walks_to_the_texts_and_applies_the_precedence() -> None:
    msgspec = pytest.importorskip("msgspec")
    shape = _shape(
        texts=(
            (("c", 0, "d", "a"), "text_delta"),
            (("c", 0, "d", "b"), "reasoning_delta"),
            (("c", 0, "d", "c"), "reasoning_delta"),
        )
    )
    decode, read = msgspec.json.Decoder(shape.struct(msgspec)).decode, shape.reader()
    cases = {
        '{"c": [{"d": {"a": "x"}}]}': ("text_delta", "x"),
        '{"c": [{"d": {"b": "y", "c": "z"}}]}': ("reasoning_delta", "y"),
        '{"c": [{"d": {"a": "", "c": "z"}}]}': ("reasoning_delta", "z"),
        '{"c": [{"d": {"a": "x", "c": "z"}}]}': None,
        '{"c": [{"d": {"a": "x"}}, {"d": {"a": "x"}}]}': None,
        '{"c": [{"d": null}]}': None,
        '{"c": []}': None,
        "{}": None,
        '{"c": [{"d": {}}]}': ("raw", ""),  # no text: the one event is raw
        '{"c": [{"d": {"a": "", "b": null}}]}': ("raw", ""),
    }
    assert {data: read(decode(data)) for data in cases} == cases
    with pytest.raises(msgspec.ValidationError):
        decode('{"error": 1}')
