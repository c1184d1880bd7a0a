"""A large payload costs about its own text in memory, not its decoded value as well: the Responses API terminal
event (the whole response again) is decoded only as far as its events read, and a large non-ASCII payload reaches
msgspec as UTF-8 bytes encoded piece by piece (CPython's one-shot encode of a text with a character beyond U+FFFF
allocates 4 bytes per character). The events stay those of the full decode, ``raw`` included."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Optional

import pytest

from helpers import peak_traced
from helpers.events import decoded_whole
from ssewire import SSEEvent, Unified, normalizer_for
from ssewire.events import LazyPayload
from ssewire.normalizers._fast import typed
from ssewire.normalizers._fast.utf8 import LARGE, decodable

pytestmark = pytest.mark.skipif(
    not typed.set_enabled(True) or typed.responses_terminal is None, reason="msgspec (the fast extra) is not installed"
)

_TEXT = "Wetter in 東京 heute 🙂, naïve " * 40


def _response(**members: Any) -> dict[str, Any]:
    output = [
        {"id": f"msg_{i}", "type": "message", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": _TEXT, "annotations": []}]}
        for i in range(80)
    ]  # fmt: skip
    response: dict[str, Any] = {"id": "resp_1", "object": "response", "model": "gpt-5", "status": "completed"}
    response["output"] = output
    response["usage"] = {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}
    response.update(members)
    return response


TERMINALS: dict[str, dict[str, Any]] = {
    "completed": {"type": "response.completed", "sequence_number": 9, "response": _response()},
    "incomplete": {
        "type": "response.incomplete",
        "response": _response(status="incomplete", incomplete_details={"reason": "max_output_tokens"}),
    },
    "failed": {
        "type": "response.failed",
        "sequence_number": "x",
        "response": _response(status="failed", error={"code": "server_error", "message": "boom"}, usage=None),
    },
    "no status": {"type": "response.cancelled", "response": {**_response(), "status": 3}},
    "null response": {"type": "response.completed", "response": None, "pad": _TEXT * 60},
    "response not an object": {"type": "response.completed", "response": [1], "pad": _TEXT * 60},
    "no type": {"response": _response()},
}


def _run(provider: str, data: str, on: bool, before: tuple[SSEEvent, ...] = ()) -> list[Unified]:
    typed.set_enabled(on)
    try:
        norm = normalizer_for(provider)
        norm.normalize(list(before))
        return norm.normalize([SSEEvent("response.completed", data)])
    finally:
        typed.set_enabled(True)


def _dicts(events: list[Unified]) -> list[dict[str, Any]]:
    return [e.to_dict(with_raw=True) for e in events]


@pytest.mark.parametrize("name", list(TERMINALS))
def test_a_large_terminal_event_gives_the_full_decodes_events(name: str) -> None:
    data = json.dumps(TERMINALS[name], ensure_ascii=False)
    assert len(data) >= LARGE
    fast, full = _run("openai", data, True), _run("openai", data, False)
    lazy = bool(fast) and all(type(e._raw) is LazyPayload for e in fast)  # the fast path took it
    assert lazy == (name in ("completed", "incomplete", "failed", "no status", "null response"))
    assert _dicts(fast) == _dicts(full)


def test_a_terminal_event_with_open_calls_or_repeated_takes_the_full_decode() -> None:
    data = json.dumps(TERMINALS["completed"], ensure_ascii=False)
    item = {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "f", "arguments": ""}
    added = {"type": "response.output_item.added", "output_index": 0, "item": item}
    before = (SSEEvent("response.output_item.added", json.dumps(added)),)
    fast, full = _run("openai", data, True, before), _run("openai", data, False, before)
    assert _dicts(fast) == _dicts(full) and any(e.type == "tool_call_done" for e in fast)
    norm = normalizer_for("openai")
    norm.normalize([SSEEvent("response.completed", data)])
    again = norm.normalize([SSEEvent("response.completed", data)])
    assert [e.type for e in again] == ["raw"] and type(again[0]._raw) is dict


#: A chat stream's first chunk: it names the id and model, after which the compiled reader reads the stream (and
#: leaves a payload too large for it to the typed fast path).
_CHAT_START = SSEEvent("message", '{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant"}}]}')


def _peak(provider: str, data: str, on: bool) -> int:
    typed.set_enabled(on)
    try:
        norm = normalizer_for(provider.split()[0])
        if provider.endswith("started"):
            norm.normalize([_CHAT_START])
        event = SSEEvent("response.completed" if provider == "openai" else "message", data)
        return peak_traced(lambda: norm.normalize([event]))
    finally:
        typed.set_enabled(True)


def _chat_chunk() -> str:
    logprobs = [{"token": "🙂", "logprob": -0.5, "bytes": [240, 159, 153, 130], "top_logprobs": []}] * 1500
    choice = {"index": 0, "delta": {"content": _TEXT}, "logprobs": {"content": logprobs}}
    return json.dumps({"id": "c", "model": "m", "choices": [choice]}, ensure_ascii=False)


def _terminal() -> str:
    return json.dumps(TERMINALS["completed"], ensure_ascii=False)


@pytest.mark.parametrize(
    ("provider", "make"),
    [("openai", _terminal), ("openai-chat", _chat_chunk), ("openai-chat started", _chat_chunk)],
)
def test_a_large_payload_costs_a_fraction_of_its_text(provider: str, make: Callable[[], str]) -> None:
    data = make()
    text_bytes = sys.getsizeof(data)  # 4 bytes a character: the text holds an emoji
    assert _peak(provider, data, True) < 0.5 * text_bytes
    assert _peak(provider, data, False) > 0.5 * text_bytes  # what the full decode (or a one-shot encode) costs


def test_decodable_is_the_text_or_its_utf8_bytes() -> None:
    small, ascii_text, wide = "🙂" * 10, "a" * (2 * LARGE), ("é🙂x" * LARGE)[: 2 * LARGE + 5]
    assert decodable(small) is small and decodable(ascii_text) is ascii_text
    assert decodable(wide) == bytearray(wide.encode("utf-8"))
    with pytest.raises(ValueError):
        decodable("\ud800" * (2 * LARGE))


def _held(kind: Optional[str], data: str) -> Any:
    """The event a scanner dispatches for ``data`` when it is large and not all ASCII: held as its UTF-8."""
    from ssewire.events import Utf8Event

    return Utf8Event(kind, data.encode())


_CHAT_RAW = SSEEvent("message", '{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"🙂 x"}}]}')


@pytest.mark.parametrize(
    ("provider", "kind", "make", "before"),
    [
        ("openai", "response.completed", _terminal, ()),
        ("openai-chat", "message", _chat_chunk, ()),
        ("openai-chat", "message", _chat_chunk, (_CHAT_START,)),
        ("xai", "message", _chat_chunk, (_CHAT_START,)),
        (
            "anthropic",
            "message_start",
            lambda: json.dumps(
                {
                    "type": "message_start",
                    "message": {"id": "m", "model": "c", "content": [{"type": "text", "text": _TEXT * 40}]},
                },
                ensure_ascii=False,
            ),
            (),
        ),
        (
            "gemini",
            "message",
            lambda: json.dumps(
                {"candidates": [{"content": {"parts": [{"text": _TEXT * 40}]}}], "modelVersion": "g"},
                ensure_ascii=False,
            ),
            (),
        ),
        ("auto", "message", _chat_chunk, ()),
    ],
)
@pytest.mark.parametrize("on", [True, False], ids=["typed", "untyped"])
def test_a_held_event_gives_the_events_of_its_text(
    provider: str, kind: str, make: Callable[[], str], before: tuple[SSEEvent, ...], on: bool
) -> None:
    """A large event held as UTF-8 is read (decoded from its bytes where a path can) into exactly the events the
    same event as text gives, ``raw`` included."""
    data = make()
    typed.set_enabled(on)
    try:
        got: list[dict[str, Any]] = []
        want: list[dict[str, Any]] = []
        for event, out in ((_held(kind, data), got), (SSEEvent(kind, data), want)):
            norm = normalizer_for(provider)
            norm.normalize(list(before))
            out += _dicts(norm.normalize([event]) + norm.finish())
    finally:
        typed.set_enabled(True)
    assert got == want


@pytest.mark.parametrize(("provider", "make"), [("openai", _terminal), ("openai-chat", _chat_chunk)])
def test_a_large_event_costs_at_most_three_times_its_size_end_to_end(provider: str, make: Callable[[], str]) -> None:
    """From the body's bytes to the events, a stream whose large event holds an emoji peaks under three times that
    event's size (its text alone would be four): the scanner holds it as UTF-8, the typed path decodes that."""
    from ssewire import iter_unified

    data = make().encode()
    name = b"response.completed" if provider == "openai" else b"message"
    start = b"data: " + _CHAT_RAW.data.encode() + b"\n\n" if provider == "openai-chat" else b""
    body = start + b"event: " + name + b"\ndata: " + data + b"\n\n"
    chunks = [body[at : at + 16384] for at in range(0, len(body), 16384)]
    assert len(data) > 64 * 1024
    peak = peak_traced(lambda: [None for _ in iter_unified(chunks, provider, "sse")])  # type: ignore[arg-type]
    assert peak < 3 * len(data)


@pytest.mark.parametrize(
    ("provider", "kind", "make", "before"),
    [
        ("openai", "response.completed", _terminal, ()),
        ("openai-chat", "message", _chat_chunk, (_CHAT_START,)),
        ("openai", "message", _chat_chunk, (_CHAT_START,)),
        ("xai", "message", _chat_chunk, (_CHAT_START,)),
    ],
)
def test_without_msgspec_a_held_event_is_decoded_without_its_bulk(
    provider: str, kind: str, make: Callable[[], str], before: tuple[SSEEvent, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the typed structs (no msgspec), a large held payload is decoded without the member its events never
    read (a terminal event's ``response.output``, a chunk's ``logprobs``): the same events, ``raw`` the whole payload
    decoded when read, and a fraction of the memory of the full decode."""
    if typed.without_member is None:
        pytest.skip("the compiled reader is not built")
    for name in ("chat_chunk", "gemini_chunk", "responses_terminal"):
        monkeypatch.setattr(typed, name, None)
    data = make()

    def run(event: Any) -> list[Unified]:
        norm = normalizer_for(provider)  # type: ignore[arg-type]
        norm.normalize(list(before))
        return norm.normalize([event])

    held = run(_held(kind, data))
    assert held and all(type(e._raw) is LazyPayload for e in held)
    assert _dicts(held) == _dicts(run(SSEEvent(kind, data)))
    event = _held(kind, data)
    text_bytes = sys.getsizeof(data)
    assert peak_traced(lambda: run(event)) < 0.5 * text_bytes


_ANNOTATION = {"type": "url_citation", "url": "https://a.example/x", "title": "A", "start_index": 0, "end_index": 5}
_PART = {"type": "output_text", "text": _TEXT * 8, "annotations": [_ANNOTATION]}
#: Each Responses done event that repeats its item's text, as a stream sends it (the text with an emoji).
DONE_EVENTS: dict[str, dict[str, Any]] = {
    "response.output_text.done": {"item_id": "msg_1", "output_index": 0, "content_index": 0, "text": _TEXT * 8},
    "response.reasoning_summary_text.done": {"item_id": "rs_1", "output_index": 0, "summary_index": 0,
                                             "text": _TEXT * 8},
    "response.reasoning_text.done": {"item_id": "rs_1", "output_index": 0, "content_index": 0, "text": _TEXT * 8},
    "response.refusal.done": {"item_id": "msg_1", "output_index": 0, "content_index": 0, "refusal": _TEXT * 8},
    "response.content_part.done": {"item_id": "msg_1", "output_index": 0, "content_index": 0, "part": _PART},
    "response.reasoning_summary_part.done": {"item_id": "rs_1", "output_index": 0, "summary_index": 0,
                                             "part": {"type": "summary_text", "text": _TEXT * 8}},
    "response.output_item.done": {"output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "completed",
                                  "role": "assistant", "content": [_PART]}},
}  # fmt: skip


@pytest.mark.parametrize("kind", list(DONE_EVENTS))
@pytest.mark.parametrize("named", [True, False])  # the SSE event named as its type, or not (xAI names none)
def test_a_held_done_event_is_decoded_without_the_text_it_repeats(kind: str, named: bool) -> None:
    """A done event's text (held as UTF-8 when it is not all ASCII) is what no handler reads: it is decoded without
    it, and gives the events of the full decode (``raw`` the whole payload, a part's citations included) at a
    fraction of the memory; named as another type, the payload is read by its own type all the same."""
    if typed.without_member is None:
        pytest.skip("the compiled reader is not built")
    data = json.dumps({"type": kind, "sequence_number": 3, **DONE_EVENTS[kind]}, ensure_ascii=False)
    name = kind if named else "message"

    def run(event: Any) -> list[Unified]:
        norm = normalizer_for("openai")
        norm.normalize([SSEEvent("response.created", '{"type":"response.created","response":{"id":"r","model":"m"}}')])
        return norm.normalize([event])

    held = run(_held(name, data))
    assert _dicts(held) == _dicts(run(SSEEvent(name, data)))
    if kind in ("response.content_part.done", "response.output_item.done"):
        assert [c.url for e in held for c in e.citations or ()] == ["https://a.example/x"]
    if named:
        event = _held(name, data)
        assert peak_traced(lambda: run(event)) < 0.5 * sys.getsizeof(_TEXT * 8)
    mislabelled = json.dumps({"type": "response.output_text.delta", "delta": "x", "text": _TEXT, "item_id": "i"})
    assert _dicts(run(_held("response.output_text.done", mislabelled))) == _dicts(
        run(SSEEvent("response.output_text.done", mislabelled))
    )


@pytest.mark.parametrize(
    ("kind", "members"),
    [
        (
            "response.output_text.done",
            {"item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "ab" * 40_000},
        ),
        (
            "response.output_item.done",
            {
                "output_index": 0,
                "item": {
                    "id": "ig_1",
                    "type": "image_generation_call",
                    "status": "completed",
                    "result": "iVBO" * 40_000,
                },
            },
        ),
    ],
)
def test_a_large_ascii_done_event_is_decoded_without_the_text_or_image_it_repeats(
    kind: str, members: dict[str, Any]
) -> None:
    """An ASCII payload is its own UTF-8: a large one is decoded without the member no handler reads (a done event's
    text, an image generation call's finished image) as a held one is, and gives the events of the full decode
    (``raw`` the whole payload, decoded when read)."""
    if typed.without_member is None:
        pytest.skip("the compiled reader is not built")
    data = json.dumps({"type": kind, "sequence_number": 3, **members})

    def run() -> list[Unified]:
        norm = normalizer_for("openai")
        norm.normalize([SSEEvent("response.created", '{"type":"response.created","response":{"id":"r","model":"m"}}')])
        if kind == "response.output_item.done":
            added = {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"id": "ig_1", "type": "image_generation_call"},
            }
            norm.normalize([SSEEvent("response.output_item.added", json.dumps(added))])
        return norm.normalize([SSEEvent(kind, data)])

    fast = run()
    assert [type(e._raw) for e in fast] == [LazyPayload] * len(fast)  # decoded without it: raw left lazy
    assert _dicts(fast) == decoded_whole(lambda: _dicts(run()))
    assert peak_traced(run) < 0.5 * len(data)
