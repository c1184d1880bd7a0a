"""GeminiInteractionsNormalizer (Interactions API ``step.*`` / ``interaction.*`` events): one test per rule."""

from __future__ import annotations

from functools import partial
from typing import Any, Optional

import pytest

from helpers import events
from helpers.events import decoded_whole, dicts
from helpers.events import types as kinds
from ssewire import SSEEvent, collect
from ssewire.normalizers.gemini_interactions import GeminiInteractionsNormalizer

#: Payloads straight to payload() with their event_type as the SSE name; no finish() (tests call it).
feed = partial(events.feed, decoded=True, finish=False)


def ev(event_type: str, **fields: Any) -> dict[str, Any]:
    return {**fields, "event_type": event_type}


def start(index: int, **step: Any) -> dict[str, Any]:
    return ev("step.start", index=index, step=step)


def delta(index: int, **d: Any) -> dict[str, Any]:
    return ev("step.delta", index=index, delta=d)


def stop(index: int) -> dict[str, Any]:
    return ev("step.stop", index=index)


def completed(status: Optional[str] = "completed", usage: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    interaction: dict[str, Any] = {"id": "v1_x"}
    if status is not None:
        interaction["status"] = status
    if usage is not None:
        interaction["usage"] = usage
    return ev("interaction.completed", interaction=interaction)


USAGE = {"total_tokens": 30, "total_input_tokens": 10, "total_output_tokens": 5, "total_thought_tokens": 15}


@pytest.mark.parametrize(
    "obj",
    [
        ev("interaction.created", interaction={"id": "v1_abc", "status": "in_progress", "model": "gemini-3-flash"}),
        ev("interaction.status_update", interaction_id="v1_abc", status="in_progress"),
        ev("interaction.in_progress", interaction={"id": "v1_abc"}),
    ],
)
def test_interaction_lifecycle_events_are_raw_and_keep_the_id(obj: dict[str, Any]) -> None:
    norm = GeminiInteractionsNormalizer()
    events = feed(norm, obj)
    assert kinds(events) == ["raw"]
    assert norm.interaction_id == "v1_abc"
    assert not norm.done


def test_created_keeps_model_and_status() -> None:
    norm = GeminiInteractionsNormalizer()
    feed(norm, ev("interaction.created", interaction={"id": "v1_a", "status": "in_progress", "model": "m-1"}))
    assert (norm.model_version, norm.status, norm.response_id) == ("m-1", "in_progress", "v1_a")


def test_function_call_step_start_is_tool_call_start() -> None:
    events = feed(GeminiInteractionsNormalizer(), start(1, type="function_call", id="61nzpsv4", name="getWeather"))
    assert [(e.type, e.tool_call_id, e.tool_name, e.server) for e in events] == [
        ("tool_call_start", "61nzpsv4", "getWeather", False)
    ]


@pytest.mark.parametrize(
    "step_type",
    ["google_search_call", "code_execution_call", "url_context_call", "mcp_server_tool_call", "file_search_call"],
)
def test_server_call_steps_are_server_tool_calls(step_type: str) -> None:
    norm = GeminiInteractionsNormalizer()
    events = feed(
        norm,
        start(0, type=step_type, id="srv_1", arguments={"queries": ["q"]}),
        stop(0),
        completed(),
    )
    assert kinds(events)[:2] == ["tool_call_start", "tool_call_done"]
    assert all(e.server for e in events[:2])
    result = collect(events)
    assert [c.id for c in result.server_tool_calls] == ["srv_1"]
    assert result.client_tool_calls == []
    assert result.server_tool_calls[0].arguments == {"queries": ["q"]}
    assert result.stop_reason == "end"


def test_other_steps_start_and_stop_are_raw() -> None:
    events = feed(GeminiInteractionsNormalizer(), start(0, type="model_output"), stop(0))
    assert kinds(events) == ["raw", "raw"]


def test_text_delta() -> None:
    events = feed(GeminiInteractionsNormalizer(), start(1, type="model_output"), delta(1, type="text", text="OK."))
    assert (events[-1].type, events[-1].text) == ("text_delta", "OK.")


def test_empty_text_delta_is_raw() -> None:
    assert kinds(feed(GeminiInteractionsNormalizer(), delta(1, type="text", text=""))) == ["raw"]


def test_thought_summary_is_reasoning_delta() -> None:
    obj = delta(0, type="thought_summary", content={"type": "text", "text": "**Plan**\n\nstep one"})
    events = feed(GeminiInteractionsNormalizer(), obj)
    assert [(e.type, e.text) for e in events] == [("reasoning_delta", "**Plan**\n\nstep one")]


def test_thought_signature_is_raw_with_signature() -> None:
    norm = GeminiInteractionsNormalizer()
    events = feed(norm, start(0, type="thought"), delta(0, type="thought_signature", signature="CiQB=="), stop(0))
    assert [(e.type, e.signature) for e in events] == [("raw", None), ("raw", "CiQB=="), ("raw", None)]
    assert norm.last_signature == "CiQB=="
    assert collect(events).signatures == ["CiQB=="]


def test_function_call_step_signature_rides_on_start() -> None:
    norm = GeminiInteractionsNormalizer()
    events = feed(norm, start(0, type="function_call", id="c", name="f", signature="fc-sig"))
    assert events[0].signature == "fc-sig"
    unsigned = feed(GeminiInteractionsNormalizer(), start(0, type="function_call", id="c", signature=""))
    assert unsigned[0].signature is None


def test_arguments_deltas_accumulate_and_stop_parses_them() -> None:
    norm = GeminiInteractionsNormalizer()
    events = feed(
        norm,
        start(1, type="function_call", id="c1", name="getWeather", arguments={}),
        delta(1, type="arguments_delta", arguments='{"location":'),
        delta(1, type="arguments_delta", arguments='"San \\"Fran\\""}'),
        stop(1),
    )
    assert kinds(events) == ["tool_call_start", "tool_call_delta", "tool_call_delta", "tool_call_done"]
    done = events[-1]
    assert done.arguments == {"location": 'San "Fran"'}
    assert done.arguments_raw == '{"location":"San \\"Fran\\""}'
    assert {e.tool_call_id for e in events} == {"c1"}


def test_stop_without_deltas_uses_the_step_arguments_object() -> None:
    events = feed(
        GeminiInteractionsNormalizer(),
        start(0, type="function_call", id="c1", name="f", arguments={"a": 1}),
        stop(0),
    )
    assert (events[-1].arguments, events[-1].arguments_raw) == ({"a": 1}, None)


def test_stop_without_any_arguments_is_empty_object() -> None:
    events = feed(GeminiInteractionsNormalizer(), start(0, type="function_call", id="c1", name="f"), stop(0))
    assert events[-1].arguments == {}


def test_missing_call_id_gets_a_unique_synthetic_id() -> None:
    events = feed(
        GeminiInteractionsNormalizer(),
        start(0, type="function_call", name="a"),
        stop(0),
        start(1, type="function_call", name="b"),
        stop(1),
    )
    ids = [c.id for c in collect(events).tool_calls]
    assert all(ids) and len(set(ids)) == 2


@pytest.mark.parametrize(
    ("status", "with_call", "stop_reason"),
    [
        ("completed", False, "end"),
        ("completed", True, "tool_use"),
        ("requires_action", True, "tool_use"),
        ("requires_action", False, "tool_use"),
        ("incomplete", False, "incomplete"),
        ("budget_exceeded", False, "max_tokens"),
        ("requires_continuation", False, "incomplete"),
        ("failed", False, "failed"),
        ("cancelled", False, "cancelled"),
        ("something_new", False, "other"),
    ],
)
def test_completed_is_usage_then_done(status: str, with_call: bool, stop_reason: str) -> None:
    norm = GeminiInteractionsNormalizer()
    events = []
    if with_call:
        events += feed(norm, start(0, type="function_call", id="c", name="f"), stop(0))
    events += feed(norm, completed(status, USAGE))
    assert kinds(events)[-2:] == ["usage", "done"]
    assert events[-2].usage == USAGE
    assert (events[-1].stop_reason, events[-1].raw_stop_reason) == (stop_reason, status)
    assert norm.done and norm.usage == USAGE
    assert norm.finish() == []


def test_completed_without_usage_is_just_done() -> None:
    assert kinds(feed(GeminiInteractionsNormalizer(), completed())) == ["done"]


def test_only_one_done_and_changed_usage_is_resent() -> None:
    norm = GeminiInteractionsNormalizer()
    events = feed(norm, completed("completed", USAGE), completed("completed", USAGE))
    assert kinds(events) == ["usage", "done", "raw"]
    newer = {**USAGE, "total_tokens": 31}
    assert kinds(feed(norm, completed("completed", newer))) == ["usage"]


def test_open_call_is_closed_before_usage_and_done() -> None:
    events = feed(
        GeminiInteractionsNormalizer(),
        start(0, type="function_call", id="c", name="f"),
        delta(0, type="arguments_delta", arguments='{"x":1}'),
        completed("requires_action", USAGE),
    )
    assert kinds(events) == ["tool_call_start", "tool_call_delta", "tool_call_done", "usage", "done"]
    assert events[2].arguments == {"x": 1}


def test_open_call_is_incomplete_in_the_truncation_error() -> None:
    norm = GeminiInteractionsNormalizer()
    feed(norm, start(0, type="function_call", id="c", name="f"), delta(0, type="arguments_delta", arguments='{"a"'))
    tail = norm.finish()
    assert kinds(tail) == ["error"]
    assert tail[-1].error is not None and tail[-1].error["type"] == "stream_truncated"
    assert tail[-1].error["incomplete_tool_calls"] == [{"id": "c", "name": "f", "arguments_raw": '{"a"'}]


def test_error_mid_call_lists_the_open_call_and_never_closes_it() -> None:
    norm = GeminiInteractionsNormalizer()
    events = feed(
        norm,
        start(0, type="function_call", id="c", name="f"),
        delta(0, type="arguments_delta", arguments='{"a"'),
        ev("error", error={"code": "internal", "message": "boom"}),
    )
    assert "tool_call_done" not in kinds(events)
    assert events[-1].error is not None
    assert events[-1].error["incomplete_tool_calls"] == [{"id": "c", "name": "f", "arguments_raw": '{"a"'}]
    assert norm.finish() == []


def test_error_event_is_error_and_ends_the_stream() -> None:
    norm = GeminiInteractionsNormalizer()
    events = feed(norm, ev("error", error={"code": "resource_exhausted", "message": "Quota exceeded."}))
    assert kinds(events) == ["error"]
    assert events[0].error is not None
    assert (events[0].error["type"], events[0].error["message"]) == ("resource_exhausted", "Quota exceeded.")
    assert norm.done and norm.finish() == []


def test_done_event_and_sentinel_are_swallowed() -> None:
    norm = GeminiInteractionsNormalizer()
    assert norm(SSEEvent("done", "[DONE]")) == []
    assert norm.payload({}, "done") == []


def test_sse_event_name_is_used_when_event_type_is_missing() -> None:
    norm = GeminiInteractionsNormalizer()
    events = norm.payload({"index": 0, "delta": {"type": "text", "text": "hi"}}, "step.delta")
    assert [(e.type, e.text) for e in events] == [("text_delta", "hi")]


def test_pre_rename_event_names_are_accepted() -> None:
    norm = GeminiInteractionsNormalizer()
    events = feed(
        norm,
        ev("interaction.start", interaction={"id": "v1_old"}),
        ev("content.start", index=0, content={"type": "text"}),
        ev("content.delta", index=0, delta={"type": "text", "text": "old"}),
        ev("content.stop", index=0),
        ev("content.delta", index=1, delta={"type": "function_call", "id": "c9", "name": "f", "arguments": {"a": 1}}),
        ev("content.stop", index=1),
        ev("interaction.complete", interaction={"id": "v1_old", "status": "completed"}),
    )
    result = collect(events)
    assert result.text == "old"
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [("c9", "f", {"a": 1})]
    assert result.stop_reason == "tool_use"
    assert norm.interaction_id == "v1_old"


def test_resume_cursor_is_kept() -> None:
    norm = GeminiInteractionsNormalizer()
    feed(norm, ev("step.start", index=3, step={"type": "model_output"}, event_id="evt_41"), ev("done"))
    assert (norm.last_event_index, norm.last_event_id) == (3, "evt_41")


@pytest.mark.parametrize("name", ["step.delta", "content.delta"])
def test_text_deltas_are_read_without_a_decode_and_keep_the_cursor(name: str) -> None:
    """A stream's text deltas are read by the compiled reader where it is built (``raw`` decoded only when asked
    for): the events, the text and the resume cursor are the full decode's, the cursor as of the last event read
    (a delta without an ``event_id`` or with a non-integer index leaves that part of the cursor as it was)."""
    import json

    from ssewire import iter_unified
    from ssewire.events import LazyPayload
    from ssewire.normalizers import gemini
    from ssewire.normalizers._fast import typed

    items = [
        ev("interaction.created", interaction={"id": "v1_abc", "status": "in_progress", "model": "m"}),
        start(0, type="model_output"),
        *(dict(ev(name, index=0, delta={"type": "text", "text": f"w{i} "}), event_id=f"e{i}") for i in range(5)),
        ev(name, index=0, delta={"type": "text", "text": "no id"}),
        ev(name, index="x", delta={"type": "text", "text": "odd index"}),
        ev(name, index=0, delta={"type": "text", "text": ""}),
        dict(ev(name, index=4, delta={"type": "text", "text": "."}), event_id="e_end"),
        stop(0),
        completed(usage=USAGE),
    ]
    body = "".join(f"event: {item['event_type']}\ndata: {json.dumps(item)}\n\n" for item in items).encode()
    cut = body.index(b"event: step.stop", len(body) // 2)  # the stream up to its last delta

    def read(data: bytes) -> tuple[list[dict[str, Any]], Any, Any]:
        normalizer = gemini.GeminiNormalizer()
        made = list(iter_unified([data[:100], data[100:]], normalizer, "sse"))
        lazy = [type(event._raw) is LazyPayload for event in made]
        return dicts(made), lazy, normalizer

    for data in (body[:cut], body):
        want, _, decoded = decoded_whole(lambda: read(data))  # noqa: B023  # (called here, in this iteration)
        got, lazy, normalizer = read(data)
        assert got == want
        cursor = (normalizer.last_event_id, normalizer.last_event_index)
        assert cursor == (decoded.last_event_id, decoded.last_event_index)
        if data is not body:
            assert cursor == ("e_end", 4)  # as of the last delta, which the reader took
        if typed.take_deltas is not None:
            assert lazy[2:11] == [True] * 7 + [False, True]  # (the empty delta: the full decode's raw)
    assert collect(iter_unified([body], "gemini")).text == "w0 w1 w2 w3 w4 no idodd index."


@pytest.mark.parametrize(
    "obj",
    [
        {},
        ev("interaction.something_new", foo=1),
        ev("step.start", index=0, step="x"),
        ev("step.start", index="0", step={"type": 5}),
        ev("step.delta", index=0, delta=None),
        ev("step.delta", index=0, delta={"type": "arguments_delta", "arguments": "{"}),
        ev("step.delta", index=0, delta={"type": "thought_summary", "content": "x"}),
        ev("step.delta", index=0, delta={"type": "image", "data": "AAA"}),
        ev("step.stop", index=7),
        ev("step.stop", index=None),
        ev("interaction.completed", interaction="x"),
        {"event_type": 5},
    ],
)
def test_unknown_or_malformed_payloads_never_raise(obj: dict[str, Any]) -> None:
    norm = GeminiInteractionsNormalizer()
    events = norm.payload(obj, None)
    assert all(e.raw is obj for e in events)
    assert all(e.type in ("raw", "done") for e in events)


def test_every_event_carries_its_payload() -> None:
    norm = GeminiInteractionsNormalizer()
    objs = [
        ev("interaction.created", interaction={"id": "v1"}),
        start(0, type="thought"),
        delta(0, type="thought_signature", signature="s"),
        delta(0, type="thought_summary", content={"text": "r"}),
        stop(0),
        start(1, type="function_call", id="c", name="f"),
        delta(1, type="arguments_delta", arguments="{}"),
        stop(1),
        completed("requires_action", USAGE),
        ev("error", error={"code": "internal", "message": "boom"}),
    ]
    for obj in objs:
        events = norm.payload(obj, None)
        assert events and all(e.raw is obj for e in events)
