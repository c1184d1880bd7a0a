"""GeminiNormalizer (generateContent ``?alt=sse`` / JSON array, Vertex streamed arguments): one test per rule."""

from __future__ import annotations

import json
import time
from functools import partial
from typing import Any, Optional

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from helpers import events
from helpers.events import types as kinds
from ssewire import SSEEvent, collect, iter_unified
from ssewire.names import FramingName
from ssewire.normalizers import vertex_args
from ssewire.normalizers.gemini import GeminiNormalizer, parse_json_path
from ssewire.normalizers.gemini_interactions import GeminiInteractionsNormalizer
from ssewire.normalizers.vertex_args import StreamedCall

#: Payloads straight to payload() (events keep the very object), no finish(): the tests call it when they mean to.
feed = partial(events.feed, decoded=True, finish=False, named=False)


def chunk(
    *parts: Any,
    finish: Optional[str] = None,
    usage: Optional[dict[str, Any]] = None,
    **extra: Any,
) -> dict[str, Any]:
    """A generateContent chunk with ``parts`` in ``candidates[0]``."""
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    obj: dict[str, Any] = {"candidates": [candidate], **extra}
    if usage is not None:
        obj["usageMetadata"] = usage
    return obj


def fc(name: Optional[str] = None, **fields: Any) -> dict[str, Any]:
    call = dict(fields)
    if name is not None:
        call["name"] = name
    return {"functionCall": call}


def usage(total: int, **more: Any) -> dict[str, Any]:
    return {"promptTokenCount": 2, "totalTokenCount": total, **more}


# -- parts ----------------------------------------------------------------------------------------------------------


def test_thought_part_is_reasoning_delta() -> None:
    events = feed(GeminiNormalizer(), chunk({"text": "Thinking about it.", "thought": True}))
    assert kinds(events) == ["reasoning_delta"]
    assert events[0].text == "Thinking about it."


def test_text_part_is_text_delta() -> None:
    events = feed(GeminiNormalizer(), chunk({"text": "Hello"}, {"text": " world"}))
    assert [(e.type, e.text) for e in events] == [("text_delta", "Hello"), ("text_delta", " world")]


@pytest.mark.parametrize("part", [{"text": ""}, {"text": "", "thoughtSignature": "sig-empty"}])
def test_empty_text_part_is_raw_never_dropped(part: dict[str, Any]) -> None:
    events = feed(GeminiNormalizer(), chunk({"text": "a"}, part))
    assert kinds(events) == ["text_delta", "raw"]
    assert events[1].signature == part.get("thoughtSignature")


def test_function_call_is_start_delta_done_with_compact_json() -> None:
    events = feed(GeminiNormalizer(), chunk(fc("get_weather", args={"city": "Zürich", "days": [1, 2]})))
    assert kinds(events) == ["tool_call_start", "tool_call_delta", "tool_call_done"]
    assert {e.tool_name for e in events} == {"get_weather"}
    assert events[1].arguments_delta == '{"city":"Zürich","days":[1,2]}'
    assert events[2].arguments == {"city": "Zürich", "days": [1, 2]}
    assert events[2].arguments_raw is None


def test_function_call_without_args_has_empty_object() -> None:
    events = feed(GeminiNormalizer(), chunk(fc("get_time")))
    assert events[1].arguments_delta == "{}"
    assert events[2].arguments == {}


@pytest.mark.parametrize(
    "part",
    [
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/f.pdf"}},
        {"somethingNew": {"x": 1}},
    ],
)
def test_other_parts_are_raw(part: dict[str, Any]) -> None:
    obj = chunk(part)
    events = feed(GeminiNormalizer(), obj)
    assert kinds(events) == ["raw"]
    assert events[0].raw is obj


def test_signature_goes_on_the_one_event_of_its_part_in_order() -> None:
    norm = GeminiNormalizer()
    events = feed(
        norm,
        chunk({"text": "think", "thought": True, "thoughtSignature": "s1"}),
        chunk({"text": "hi", "thoughtSignature": "s2"}),
        chunk(fc("f", args={"a": 1}), thoughtSignature="ignored-top-level"),
        chunk({**fc("g", args={}), "thoughtSignature": "s3"}),
        chunk({"text": "", "thoughtSignature": "s4"}, finish="STOP"),
    )
    signed = [(e.type, e.signature) for e in events if e.signature is not None]
    assert signed == [("reasoning_delta", "s1"), ("text_delta", "s2"), ("tool_call_start", "s3"), ("raw", "s4")]
    assert collect(events).signatures == ["s1", "s2", "s3", "s4"]
    assert norm.last_signature == "s4"


# -- tool-call ids --------------------------------------------------------------------------------------------------


def test_provider_call_id_is_used() -> None:
    events = feed(GeminiNormalizer(), chunk(fc("add", id="8hd01vsf", args={"a": 2})))
    assert {e.tool_call_id for e in events} == {"8hd01vsf"}


def test_synthetic_ids_are_unique_across_chunks_and_within_a_chunk() -> None:
    norm = GeminiNormalizer()
    events = feed(
        norm,
        chunk(fc("a", args={})),
        chunk(fc("b", args={})),
        chunk(fc("c", args={}), fc("d", args={})),
        chunk({"text": ""}, finish="STOP"),
    )
    calls = collect(events).tool_calls
    assert [c.name for c in calls] == ["a", "b", "c", "d"]
    ids = [c.id for c in calls]
    assert all(ids) and len(set(ids)) == 4


def test_synthetic_id_never_collides_with_a_provider_id_seen_before() -> None:
    events = feed(GeminiNormalizer(), chunk(fc("a", id="call_0", args={}), fc("b", args={})))
    assert len({e.tool_call_id for e in events}) == 2


# -- Vertex streamed arguments --------------------------------------------------------------------------------------


def _args(*pairs: tuple[str, Any], cont: bool = True, string_cont: bool = False) -> dict[str, Any]:
    entries = []
    for path, value in pairs:
        entry: dict[str, Any] = {"jsonPath": path}
        if isinstance(value, str):
            entry["stringValue"] = value
            if string_cont:
                entry["willContinue"] = True
        elif isinstance(value, bool):
            entry["boolValue"] = value
        elif value is None:
            entry["nullValue"] = None
        else:
            entry["numberValue"] = value
        entries.append(entry)
    call: dict[str, Any] = {"partialArgs": entries}
    if cont:
        call["willContinue"] = True
    return {"functionCall": call}


def test_streamed_arguments_are_built_from_json_paths_and_closed_by_empty_call() -> None:
    norm = GeminiNormalizer()
    events = feed(
        norm,
        chunk(fc("write", willContinue=True)),
        chunk(_args(("$.title", "Hello "), string_cont=True)),
        chunk(_args(("$.title", "wor"), string_cont=True)),
        chunk(_args(("$.title", "ld"))),
        chunk(_args(("$.items[0].qty", 2), ("$.items[0].ok", True), ("$.items[1].qty", 0.5), ("$.note", None))),
        chunk({"functionCall": {}}),
    )
    assert kinds(events)[0] == "tool_call_start"
    assert kinds(events)[-1] == "tool_call_done"
    want = {"title": "Hello world", "items": [{"qty": 2, "ok": True}, {"qty": 0.5}], "note": None}
    assert events[-1].arguments == want
    assert events[-1].arguments_raw is None
    text = "".join(e.arguments_delta for e in events if e.type == "tool_call_delta")
    assert json.loads(text) == want
    assert len({e.tool_call_id for e in events}) == 1


def test_streamed_call_closes_on_part_without_will_continue() -> None:
    events = feed(
        GeminiNormalizer(),
        chunk(fc("read", willContinue=True)),
        chunk(_args(("$.id", "A"), cont=False)),
    )
    assert kinds(events) == ["tool_call_start", "tool_call_delta", "tool_call_delta", "tool_call_done"]
    assert events[-1].arguments == {"id": "A"}


def test_streamed_call_open_at_finish_reason_is_closed_before_usage_and_done() -> None:
    events = feed(
        GeminiNormalizer(),
        chunk(fc("read", willContinue=True)),
        chunk(_args(("$.ids[0]", "x"))),
        chunk({"text": ""}, finish="STOP", usage=usage(20)),
    )
    assert kinds(events)[-5:] == ["raw", "tool_call_delta", "tool_call_done", "usage", "done"]
    done = next(e for e in events if e.type == "tool_call_done")
    assert done.arguments == {"ids": ["x"]}
    assert events[-1].stop_reason == "tool_use"


def test_streamed_call_never_closed_is_incomplete_in_the_truncation_error() -> None:
    norm = GeminiNormalizer()
    events = feed(norm, chunk(fc("read", willContinue=True)), chunk(_args(("$.q", "abc"), string_cont=True)))
    tail = norm.finish()
    assert kinds(tail) == ["error"]
    assert tail[-1].error is not None and tail[-1].error["type"] == "stream_truncated"
    (entry,) = tail[-1].error["incomplete_tool_calls"]
    assert (entry["name"], entry["arguments_raw"]) == ("read", '{"q":"abc')
    result = collect(events + tail)
    assert result.tool_calls == []
    assert [(c.name, c.arguments_raw) for c in result.incomplete_tool_calls] == [("read", '{"q":"abc')]


@pytest.mark.parametrize(("finish", "closed"), [("STOP", True), ("MAX_TOKENS", False), ("SAFETY", False)])
def test_finish_reason_closes_a_streamed_call_unless_it_cut_the_response_off(finish: str, closed: bool) -> None:
    norm = GeminiNormalizer()
    events = feed(norm, chunk(fc("read", willContinue=True)), chunk(_args(("$.q", "abc"))), chunk(finish=finish))
    assert ("tool_call_done" in kinds(events)) is closed
    assert norm.done and norm.finish() == []
    result = collect(events)
    assert [c.name for c in result.tool_calls] == (["read"] if closed else [])
    assert [c.name for c in result.incomplete_tool_calls] == ([] if closed else ["read"])


def test_streamed_call_new_call_closes_the_open_one() -> None:
    events = feed(
        GeminiNormalizer(),
        chunk(fc("a", willContinue=True)),
        chunk(_args(("$.x", 1))),
        chunk(fc("b", args={"y": 2})),
    )
    calls = collect(events).tool_calls
    assert [(c.name, c.arguments) for c in calls] == [("a", {"x": 1}), ("b", {"y": 2})]


def test_streamed_arguments_out_of_order_paths_keep_exact_object() -> None:
    events = feed(
        GeminiNormalizer(),
        chunk(fc("f", willContinue=True)),
        chunk(_args(("$.a.b", 1), ("$.c", "x"), ("$.a.d", 2), ("$.c", "y"))),
        chunk({"functionCall": {}}),
    )
    assert events[-1].arguments == {"a": {"b": 1, "d": 2}, "c": "xy"}


def test_streamed_arguments_ignore_malformed_entries() -> None:
    events = feed(
        GeminiNormalizer(),
        chunk(fc("f", willContinue=True)),
        chunk(
            {
                "functionCall": {
                    "partialArgs": [
                        "nope",
                        {"jsonPath": 5, "stringValue": "x"},
                        {"jsonPath": "$.", "stringValue": "x"},
                        {"jsonPath": "$.a[x]", "numberValue": 1},
                        {"jsonPath": "$.b[99999999]", "numberValue": 1},
                        {"jsonPath": "$.c", "numberValue": "not a number"},
                        {"jsonPath": "$.ok", "numberValue": 1},
                    ],
                    "willContinue": True,
                }
            }
        ),
        chunk({"functionCall": {}}),
    )
    assert events[-1].arguments == {"ok": 1}


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        ("$.a", ["a"]),
        ("$.a.b[0].c", ["a", "b", 0, "c"]),
        ("$['a b'][12]", ["a b", 12]),
        ('$["x.y"].z', ["x.y", "z"]),
        ("a.b", ["a", "b"]),
        ("$", []),
        ("$.", None),
        ("$.a[", None),
        ("$.a[-1]", None),
        ("$.a[²]", None),
        ("$x", None),
    ],
)
def test_json_path_parsing(path: str, segments: Optional[list[Any]]) -> None:
    assert parse_json_path(path) == segments


_PLAIN_NAME = st.text(st.characters(blacklist_characters=".[", blacklist_categories=["Cs"]), min_size=1)
_QUOTED_NAME = st.text(st.characters(blacklist_characters="'", blacklist_categories=["Cs"]))
_STEPS = st.lists(
    st.one_of(
        _PLAIN_NAME.map(lambda name: (f".{name}", name)),
        _QUOTED_NAME.map(lambda name: (f"['{name}']", name)),
        st.integers(0, 10**6).map(lambda index: (f"[{index}]", index)),
    ),
    max_size=6,
)


@given(_STEPS)
def test_a_written_path_reads_back_as_its_steps(steps: list[tuple[str, Any]]) -> None:
    assert parse_json_path("$" + "".join(text for text, _ in steps)) == [segment for _, segment in steps]


@given(st.text(alphabet=".[]0129ab]\n²é", max_size=12).map(lambda rest: rest if rest[:1] in ("[", ".") else "." + rest))
@example(".a[0].b")
@example("[0][1]")
@example(".a]b[0]")
@example(".a[0]]")
@example(".[0]")
@example(".a[]")
@example(".a[²]")
@example(".a[0].")
def test_a_path_that_quotes_no_name_reads_as_the_regular_expression_reads_it(path: str) -> None:
    """The plain reader (``.name`` and ``[digits]``, the paths Vertex sends) against the general one."""
    assert vertex_args._plain_steps(path) == vertex_args._quoted_steps(path)


@pytest.mark.parametrize(
    "names", [["a"], ["a", "b"], ["a b", "c'd"], ["", "a"], ["a", ""], ["a$"], ["é", "x"], ["a", "b", "c", "d"]]
)
@pytest.mark.parametrize("root", ["$.", ""])
def test_a_dotted_path_reads_as_its_bracketed_spelling(names: list[str], root: str) -> None:
    dotted = root + ".".join(names)
    bracketed = "$" + "".join(f"['{name}']" for name in names)
    expected = None if "" in names else names  # (an empty name is no member)
    assert parse_json_path(dotted) == expected
    if expected is not None:
        assert parse_json_path(bracketed) == expected


class _WalkingEveryPath(StreamedCall):
    """A streamed call that reads every entry by walking its path (never continuing the last string in place)."""

    __slots__ = ()

    def add(self, partial_args: list[Any]) -> str:
        texts = []
        for arg in partial_args:
            self._last_str = None
            texts.append(super().add([arg]))
        return "".join(texts)


_ENTRY_PATHS = st.sampled_from(["$.a", "$.a", "$.b", "$.a.x", "$.c[0]", "$.c[1]", "$.c[0].y", "$['a']", 5, None])
_ENTRY_VALUES = st.sampled_from(
    [{"stringValue": "s"}, {"stringValue": "é\"\n"}, {"stringValue": ""}, {"numberValue": 1}, {"boolValue": True},
     {"nullValue": None}, {"stringValue": 5}, {}]
)  # fmt: skip


@given(st.lists(st.lists(st.tuples(_ENTRY_PATHS, _ENTRY_VALUES), max_size=4), max_size=12))
def test_a_string_continued_in_place_reads_as_walking_its_path(batches: list[list[tuple[Any, dict[str, Any]]]]) -> None:
    """The next entry at the path of the string stored last continues it without walking the path: the same text,
    the same arguments, whatever comes between (other paths, other values, entries that are not read)."""
    fast, slow = StreamedCall("c", "f", None), _WalkingEveryPath("c", "f", None)
    for batch in batches:
        entries = [{"jsonPath": path, **value} for path, value in batch]
        assert fast.add(entries) == slow.add(entries)
        assert fast.in_sync == slow.in_sync
    assert fast.close() == slow.close()
    assert "".join(fast.emitted) == "".join(slow.emitted)


def test_streamed_string_fragments_are_linear() -> None:
    norm = GeminiNormalizer()
    feed(norm, chunk(fc("f", willContinue=True)))
    piece = chunk(_args(("$.body", "0123456789" * 10), string_cont=True))
    start = time.perf_counter()
    for _ in range(20000):
        norm.payload(piece)
    events = norm.payload(chunk({"functionCall": {}}))
    assert time.perf_counter() - start < 5.0
    assert len(events[-1].arguments["body"]) == 20000 * 100  # type: ignore[index]


# -- usage and done -------------------------------------------------------------------------------------------------


def test_usage_is_cumulative_last_wins_and_sent_once_before_done() -> None:
    norm = GeminiNormalizer()
    events = feed(
        norm,
        chunk({"text": "a"}, usage=usage(11)),
        chunk({"text": "b"}, usage=usage(12)),
        chunk({"text": ""}, finish="STOP", usage=usage(13, thoughtsTokenCount=3)),
    )
    assert kinds(events) == ["text_delta", "text_delta", "raw", "usage", "done"]
    assert events[3].usage == usage(13, thoughtsTokenCount=3)
    assert norm.usage == usage(13, thoughtsTokenCount=3)
    result_usage = collect(events).usage
    assert result_usage is not None and result_usage.raw == usage(13, thoughtsTokenCount=3)


def test_usage_changed_after_done_gets_another_usage_event() -> None:
    norm = GeminiNormalizer()
    events = feed(norm, chunk({"text": "a"}, finish="STOP", usage=usage(5)))
    assert kinds(events) == ["text_delta", "usage", "done"]
    assert kinds(feed(norm, {"usageMetadata": usage(5)})) == ["raw"]
    later = feed(norm, {"usageMetadata": usage(9)})
    assert kinds(later) == ["usage"]
    assert later[0].usage == usage(9)


@pytest.mark.parametrize(
    ("finish", "calls", "stop"),
    [
        ("STOP", False, "end"),
        ("STOP", True, "tool_use"),
        ("MAX_TOKENS", False, "max_tokens"),
        ("MAX_TOKENS", True, "max_tokens"),
        ("SAFETY", False, "refusal"),
        ("RECITATION", False, "refusal"),
        ("BLOCKLIST", False, "refusal"),
        ("PROHIBITED_CONTENT", False, "refusal"),
        ("SPII", False, "refusal"),
        ("IMAGE_SAFETY", False, "refusal"),
        ("IMAGE_PROHIBITED_CONTENT", False, "refusal"),
        ("IMAGE_RECITATION", False, "refusal"),
        ("LANGUAGE", False, "refusal"),
        ("MALFORMED_FUNCTION_CALL", False, "failed"),
        ("UNEXPECTED_TOOL_CALL", True, "failed"),
        ("TOO_MANY_TOOL_CALLS", False, "failed"),
        ("MISSING_THOUGHT_SIGNATURE", False, "failed"),
        ("MALFORMED_RESPONSE", False, "failed"),
        ("CONTINUATION", False, "max_tokens"),
        ("MODEL_ARMOR", False, "refusal"),
        ("OTHER", False, "other"),
        ("FINISH_REASON_UNSPECIFIED", False, "other"),
    ],
)
def test_finish_reason_maps_to_unified_stop(finish: str, calls: bool, stop: str) -> None:
    norm = GeminiNormalizer()
    part = fc("f", args={}) if calls else {"text": "x"}
    events = feed(norm, chunk(part, finish=finish))
    done = events[-1]
    assert (done.type, done.stop_reason, done.raw_stop_reason) == ("done", stop, finish)
    assert norm.done


def test_exactly_one_done_when_several_chunks_carry_finish_reason() -> None:
    norm = GeminiNormalizer()
    events = feed(
        norm,
        chunk({"text": "a"}, finish="STOP", usage=usage(5)),
        chunk({"text": "b"}, finish="STOP", usage=usage(6)),
    )
    assert kinds(events) == ["text_delta", "usage", "done", "text_delta", "usage"]
    assert events[-1].usage == usage(6)
    assert collect(events).raw_stop_reason == "STOP"


def test_prompt_feedback_block_without_candidates_is_refusal() -> None:
    norm = GeminiNormalizer()
    obj = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": usage(7)}
    events = feed(norm, obj)
    assert kinds(events) == ["usage", "done"]
    assert (events[1].stop_reason, events[1].raw_stop_reason) == ("refusal", "PROHIBITED_CONTENT")
    assert norm.done and norm.finish() == []


def test_prompt_feedback_without_block_reason_is_raw() -> None:
    assert kinds(feed(GeminiNormalizer(), {"promptFeedback": {"safetyRatings": []}})) == ["raw"]


# -- errors, truncation, robustness ---------------------------------------------------------------------------------


def test_error_chunk_is_error_event_and_ends_the_stream() -> None:
    norm = GeminiNormalizer()
    feed(norm, chunk({"text": "partial"}, usage=usage(4)))
    obj = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    events = feed(norm, obj)
    assert kinds(events) == ["error"]
    assert events[0].error is not None
    assert (events[0].error["type"], events[0].error["message"], events[0].error["code"]) == (
        "UNAVAILABLE",
        "The model is overloaded.",
        503,
    )
    assert events[0].usage == usage(4)
    assert norm.done
    assert norm.finish() == []


def test_error_chunk_without_status_uses_code() -> None:
    events = feed(GeminiNormalizer(), {"error": {"code": 429, "message": "quota"}})
    assert events[0].error is not None and events[0].error["type"] == "429"


def test_stream_without_finish_reason_is_truncated_with_best_usage() -> None:
    norm = GeminiNormalizer()
    feed(norm, chunk({"text": "a"}, usage=usage(3)))
    tail = norm.finish()
    assert kinds(tail) == ["error"]
    assert tail[0].error is not None and tail[0].error["type"] == "stream_truncated"
    assert tail[0].usage == usage(3)


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"candidates": None},
        {"candidates": "x"},
        {"candidates": [None]},
        {"candidates": [{"content": None}]},
        {"candidates": [{"content": {"parts": "x"}}]},
        {"candidates": [{"content": {"parts": [None, 3, "s"]}}]},
        {"candidates": [{"content": {"parts": [{"text": 5}, {"text": None, "thought": True}]}}]},
        {"candidates": [{"content": {"parts": [{"functionCall": None}, {"functionCall": "x"}]}}]},
        {"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": [{"jsonPath": "$.a"}]}}]}}]},
        {"candidates": [{"content": {"parts": [{"functionCall": {"name": 5, "args": 3}}]}}]},
        {"candidates": [{"finishReason": 7}], "usageMetadata": "x", "responseId": 1, "modelVersion": []},
        {"promptFeedback": "blocked"},
        {"promptFeedback": {"blockReason": 3}},
    ],
)
def test_malformed_payloads_become_raw_without_exceptions(obj: dict[str, Any]) -> None:
    norm = GeminiNormalizer()
    events = feed(norm, obj)
    assert events
    assert all(e.raw is obj for e in events)
    assert not norm.done


def test_function_call_with_non_object_args_never_raises() -> None:
    events = feed(GeminiNormalizer(), chunk(fc("f", args=[1, 2]), fc("g", args='{"a": 1}')))
    dones = [e for e in events if e.type == "tool_call_done"]
    assert (dones[0].arguments, dones[0].arguments_raw) == (None, "[1,2]")
    assert dones[0].arguments_error == "arguments are a JSON array, not an object"
    assert (dones[1].arguments, dones[1].arguments_raw, dones[1].arguments_error) == ({"a": 1}, '{"a": 1}', None)


def test_every_event_carries_its_payload() -> None:
    norm = GeminiNormalizer()
    objs = [
        chunk({"text": "t", "thought": True}, {"text": "x"}, fc("f", args={"a": 1}), {"text": ""}),
        chunk(fc("g", willContinue=True)),
        chunk(_args(("$.a", 1))),
        chunk({"text": ""}, finish="STOP", usage=usage(3)),
    ]
    for obj in objs:
        assert all(e.raw is obj for e in norm.payload(obj))


def test_response_id_and_model_version_are_kept() -> None:
    norm = GeminiNormalizer()
    feed(norm, chunk({"text": "a"}, responseId="resp-1", modelVersion="gemini-3-pro-preview"))
    assert (norm.response_id, norm.model_version) == ("resp-1", "gemini-3-pro-preview")
    assert (norm.interaction_id, norm.last_event_index, norm.last_event_id) == (None, None, None)


# -- framing and delegation -----------------------------------------------------------------------------------------


def _sse(*objs: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(o).encode() + b"\r\n\r\n" for o in objs)


def test_sse_and_json_array_framings_give_the_same_result() -> None:
    objs = [
        chunk({"text": 'Use {"a": [1]}', "thoughtSignature": "s{1}"}),
        chunk({"text": " ok"}, finish="STOP", usage=usage(4)),
    ]
    array = ("[" + "\n,\r\n".join(json.dumps(o, indent=2) for o in objs) + "\n]").encode()
    streams: tuple[tuple[bytes, FramingName], ...] = ((_sse(*objs), "sse"), (array, "json_array"))
    for data, framing in streams:
        chunks = [data[i : i + 7] for i in range(0, len(data), 7)]
        result = collect(iter_unified(chunks, "gemini", framing))
        assert (result.text, result.stop_reason, result.signatures) == ('Use {"a": [1]} ok', "end", ["s{1}"])
        assert result.usage is not None and result.usage.raw == usage(4)


def test_done_sentinel_is_swallowed() -> None:
    assert GeminiNormalizer()(SSEEvent("message", "[DONE]")) == []


@pytest.mark.parametrize("event", [None, "message", "step.delta"])
def test_interactions_payloads_are_delegated(event: Optional[str]) -> None:
    norm = GeminiNormalizer()
    text = {"index": 0, "delta": {"type": "text", "text": "hi"}}
    if event != "step.delta":
        text["event_type"] = "step.delta"
    events = feed(
        norm,
        {"event_type": "interaction.created", "interaction": {"id": "v1_abc", "model": "gemini-3-flash-preview"}},
        {"event_type": "step.start", "index": 0, "step": {"type": "model_output"}},
        event=event if event != "step.delta" else None,
    )
    events += norm.payload(text, event)
    assert [(e.type, e.text) for e in events][-1] == ("text_delta", "hi")
    assert isinstance(norm._interactions, GeminiInteractionsNormalizer)
    assert (norm.interaction_id, norm.model_version) == ("v1_abc", "gemini-3-flash-preview")
    assert not norm.done
    completed = {
        "event_type": "interaction.completed",
        "interaction": {"id": "v1_abc", "status": "completed", "usage": {"total_tokens": 3}},
    }
    assert kinds(feed(norm, completed)) == ["usage", "done"]
    assert norm.done and norm.usage == {"total_tokens": 3}
    assert norm.finish() == []


def test_delegated_stream_without_completion_is_truncated_by_the_delegate() -> None:
    norm = GeminiNormalizer()
    feed(norm, {"event_type": "step.start", "index": 0, "step": {"type": "function_call", "id": "c1", "name": "f"}})
    tail = norm.finish()
    assert kinds(tail) == ["error"]
    assert tail[-1].error is not None and "interaction.completed" in tail[-1].error["message"]
    assert tail[-1].error["incomplete_tool_calls"] == [{"id": "c1", "name": "f", "arguments_raw": ""}]
    assert norm.done


def test_interactions_error_event_name_is_delegated() -> None:
    norm = GeminiNormalizer()
    events = norm.payload({"error": {"code": "resource_exhausted", "message": "quota"}}, "error")
    assert kinds(events) == ["error"]
    assert events[0].error is not None and events[0].error["type"] == "resource_exhausted"
    assert norm.done and norm.finish() == []


def test_with_several_candidates_the_one_of_index_0_is_read_on_every_path() -> None:
    """``candidateCount`` > 1: each chunk carries some candidates, each with its ``index``; the stream is the
    candidate of index 0 (the others' chunks raw, their finish no end), whichever path reads a chunk."""

    def cand(index: int, text: str, finish: Optional[str] = None) -> dict[str, Any]:
        out: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, "index": index}
        if finish:
            out["finishReason"] = finish
        return out

    body = b"".join(
        b"data: " + json.dumps(c).encode() + b"\n\n"
        for c in [
            {"candidates": [cand(0, "Paris is ")]},
            {"candidates": [cand(1, "Lyon ")]},
            {"candidates": [cand(1, "is big.", "MAX_TOKENS")]},
            {"candidates": [cand(1, "x"), cand(0, "the ")]},
            {"candidates": [cand(0, "capital.", "STOP")], "usageMetadata": {"totalTokenCount": 14}},
        ]
    )

    def read() -> Any:
        return collect(iter_unified([body], "gemini", "sse"))

    for result in (read(), events.decoded_whole(read)):
        assert (result.text, result.stop_reason, result.raw_stop_reason) == ("Paris is the capital.", "end", "STOP")
