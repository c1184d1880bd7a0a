"""OpenAI Realtime server events (GA and beta names; Azure and xAI send the same), one test per rule of the module
docstring: fed frame by frame, and as a saved session read with ``framing="ndjson"``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers.events import decoded_whole, dicts, types
from ssewire import Unified, collect, iter_unified
from ssewire.normalizers.providers import detect_provider
from ssewire.normalizers.realtime import REALTIME_STOP, OpenAIRealtimeNormalizer
from ssewire.usage import Usage

USAGE = {
    "total_tokens": 9,
    "input_tokens": 6,
    "output_tokens": 3,
    "input_token_details": {"cached_tokens": 4, "text_tokens": 6, "audio_tokens": 0},
    "output_token_details": {"text_tokens": 1, "audio_tokens": 2},
}


def ev(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "event_id": f"event_{kind}", **fields}


def created(rid: str = "resp_1") -> dict[str, Any]:
    return ev("response.created", response={"id": rid, "status": "in_progress", "output": []})


def done(status: str = "completed", details: Any = None, usage: Any = USAGE, rid: str = "resp_1") -> dict[str, Any]:
    return ev("response.done", response={"id": rid, "status": status, "status_details": details, "usage": usage})


def frames(*items: dict[str, Any], normalizer: Any = None) -> list[Unified]:
    """The events of ``items`` fed one WebSocket frame at a time (alternately as text, bytes and dicts)."""
    norm = normalizer or OpenAIRealtimeNormalizer()
    out: list[Unified] = []
    for i, item in enumerate(items):
        text = json.dumps(item)
        out += norm.frame((text, text.encode(), item)[i % 3])
    return out + norm.finish()


def test_text_deltas_in_both_spellings_and_a_per_response_done() -> None:
    events = frames(
        ev("session.created", session={"model": "gpt-realtime"}),
        created(),
        ev("response.output_text.delta", delta="Hel"),
        ev("response.text.delta", delta="lo"),
        ev("response.output_text.delta", delta=""),
        done(),
    )
    assert types(events) == ["raw", "raw", "text_delta", "text_delta", "raw", "usage", "done"]
    result = collect(events)
    assert (result.text, result.stop_reason, result.raw_stop_reason, result.model) == (
        "Hello",
        "end",
        "completed",
        "gpt-realtime",
    )


def test_audio_transcripts_are_raw_unless_asked_for_as_text() -> None:
    items = (
        created(),
        ev("response.output_audio.delta", delta="UklGRg=="),
        ev("response.output_audio_transcript.delta", delta="Hi"),
        ev("response.audio_transcript.delta", delta=" there"),
        ev("conversation.item.input_audio_transcription.delta", delta="user words"),
        done(),
    )
    assert collect(frames(*items)).text == ""
    assert types(frames(*items))[:5] == ["raw"] * 5
    spoken = collect(frames(*items, normalizer=OpenAIRealtimeNormalizer(transcripts_as_text=True)))
    assert spoken.text == "Hi there"  # the user's own speech is never model output


@pytest.mark.parametrize("transcripts_as_text", [False, True])
@pytest.mark.parametrize("fed", ["frames", "ndjson"])
def test_deltas_are_read_without_a_decode_and_read_as_decoded(transcripts_as_text: bool, fed: str) -> None:
    """Audio (the bulk of a voice session), transcript and text deltas are read by the compiled reader where it is
    built (``raw`` decoded only when asked for): the events are those of the full decode, whatever the options."""
    from ssewire.events import LazyPayload
    from ssewire.normalizers._fast import typed

    audio = "UklGRiQAAABXQVZF" * 4000  # 64 KB of base64
    items = (
        created(),
        ev("response.output_audio.delta", delta=audio),
        ev("response.output_audio_transcript.delta", delta="Hi"),
        ev("response.audio.delta", delta=audio[:8]),
        ev("response.output_text.delta", delta="Hel"),
        ev("response.text.delta", delta=""),  # (an empty delta: raw, by the full decode)
        ev("response.audio_transcript.delta", delta=" there"),
        done(),
    )

    def read() -> list[Unified]:
        normalizer = OpenAIRealtimeNormalizer(transcripts_as_text=transcripts_as_text)
        if fed == "frames":
            return [event for item in items for event in normalizer.frame(json.dumps(item))] + normalizer.finish()
        body = "".join(json.dumps(item) + "\n" for item in items).encode()
        return list(iter_unified([body], normalizer, "ndjson"))

    want = decoded_whole(lambda: dicts(read()))
    got = read()
    if typed.take_deltas is not None:  # the compiled reader: no delta's payload is decoded but the empty one's
        assert [type(event._raw) is LazyPayload for event in got[1:7]] == [True, True, True, True, False, True]
    assert dicts(got) == want  # (each raw decoded now)
    assert collect(got).text == ("HiHel there" if transcripts_as_text else "Hel")


def test_function_calls_by_item_id_with_the_final_arguments() -> None:
    call = {"id": "item_1", "type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": ""}
    events = frames(
        created(),
        ev("response.output_item.added", item=call),
        ev("response.function_call_arguments.delta", item_id="item_1", call_id="call_1", delta='{"city":'),
        ev("response.function_call_arguments.delta", item_id="item_1", call_id="call_1", delta='"Oslo"}'),
        ev("response.function_call_arguments.done", item_id="item_1", call_id="call_1", arguments='{"city":"Oslo"}'),
        ev("response.output_item.done", item=dict(call, arguments='{"city":"Oslo"}', status="completed")),
        done(),
    )
    assert types(events) == [
        "raw",
        "tool_call_start",
        "tool_call_delta",
        "tool_call_delta",
        "tool_call_done",
        "raw",
        "usage",
        "done",
    ]
    result = collect(events)
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [("call_1", "get_weather", {"city": "Oslo"})]
    assert result.stop_reason == "tool_use"


def test_a_call_closed_only_by_its_output_item_and_one_without_output_item_added() -> None:
    item = {"id": "item_2", "type": "function_call", "call_id": "call_2", "name": "f", "arguments": "{}"}
    events = frames(
        created(), ev("response.output_item.added", item=item), ev("response.output_item.done", item=item), done()
    )
    assert types(events)[1:3] == ["tool_call_start", "tool_call_done"]
    bare = frames(
        created(),
        ev("response.function_call_arguments.delta", item_id="item_3", call_id="call_3", delta="{}"),
        ev("response.function_call_arguments.done", item_id="item_3", call_id="call_3", name="g", arguments="{}"),
        done(),
    )
    result = collect(bare)
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [("call_3", "g", {})]


@pytest.mark.parametrize(("status", "unified"), [*sorted(REALTIME_STOP.items()), ("unheard_of", "other")])
def test_response_status_is_the_stop_reason(status: str, unified: str) -> None:
    events = frames(created(), done(status))
    assert (events[-1].stop_reason, events[-1].raw_stop_reason) == (unified, status)


def call_streaming(number: int, name: str, arguments: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A function call item (``item_<number>`` / ``call_<number>``) and the frames that open a response, add the
    call and stream ``arguments`` into it."""
    call = {"id": f"item_{number}", "type": "function_call", "call_id": f"call_{number}", "name": name}
    return call, [
        created(),
        ev("response.output_item.added", item=call),
        ev("response.function_call_arguments.delta", item_id=call["id"], delta=arguments),
    ]


def test_a_content_filter_cut_is_a_refusal_and_leaves_open_calls_incomplete() -> None:
    _, opened = call_streaming(4, "f", '{"a')
    events = frames(*opened, done("incomplete", {"type": "incomplete", "reason": "content_filter"}))
    result = collect(events)
    assert result.stop_reason == "refusal" and "tool_call_done" not in types(events)
    assert [c.arguments_raw for c in result.incomplete_tool_calls] == ['{"a']


@pytest.mark.parametrize("ended", ["cancelled", "error"])
def test_a_call_a_response_left_open_is_never_closed_by_a_later_response(ended: str) -> None:
    """A user barges in while ``send_email``'s arguments stream: that response is cancelled (or fails with an
    error and never sends its done); the next response ends cleanly, and the half-streamed call stays
    incomplete, never a call to run."""
    _, opened = call_streaming(1, "send_email", '{"to": "boss", "body": "I quit"}')
    end = done("cancelled", {"type": "cancelled", "reason": "turn_detected"}) if ended == "cancelled" else (
        ev("error", error={"type": "server_error", "message": "boom"})
    )  # fmt: skip
    events = frames(
        *opened,
        end,
        created("resp_2"),
        ev("response.output_text.delta", delta="Cancelled."),
        done(rid="resp_2"),
    )
    assert "tool_call_done" not in types(events)
    result = collect(events)
    assert result.client_tool_calls == [] and [c.id for c in result.incomplete_tool_calls] == ["call_1"]


def test_a_call_item_done_incomplete_is_never_closed() -> None:
    call, opened = call_streaming(5, "transfer", '{"amount": 100')
    events = frames(
        *opened,
        ev("response.output_item.done", item=dict(call, status="incomplete", arguments='{"amount": 100')),
        done("incomplete", {"type": "incomplete", "reason": "max_output_tokens"}),
    )
    result = collect(events)
    assert "tool_call_done" not in types(events) and result.stop_reason == "max_tokens"
    assert [c.arguments_raw for c in result.incomplete_tool_calls] == ['{"amount": 100']


def test_mcp_approval_requests_are_the_clients_and_mcp_calls_openais() -> None:
    approval = {
        "id": "mcpr_1", "type": "mcp_approval_request", "server_label": "gh", "name": "delete_repo",
        "arguments": '{"repo": "x"}',
    }  # fmt: skip
    mcp = {"id": "mcp_1", "type": "mcp_call", "server_label": "gh", "name": "list_repos", "arguments": ""}
    events = frames(
        created(),
        ev("response.output_item.added", item=mcp),
        ev("response.mcp_call_arguments.delta", item_id="mcp_1", delta='{"org":'),
        ev("response.mcp_call_arguments.done", item_id="mcp_1", arguments='{"org": "o"}'),
        ev("response.output_item.done", item=dict(mcp, arguments='{"org": "o"}', status="completed")),
        ev("response.output_item.added", item=approval),
        ev("response.output_item.done", item=approval),
        done(),
    )
    result = collect(events)
    assert [(c.id, c.name, c.arguments, c.server) for c in result.tool_calls] == [
        ("mcp_1", "list_repos", {"org": "o"}, True),
        ("mcpr_1", "delete_repo", {"repo": "x"}, False),
    ]
    assert [c.id for c in result.client_tool_calls] == ["mcpr_1"] and result.stop_reason == "tool_use"


def test_many_responses_each_get_their_done_and_usage_is_the_last_responses() -> None:
    other = dict(USAGE, output_tokens=30, total_tokens=36)
    normalizer = OpenAIRealtimeNormalizer()
    events = frames(
        created("r1"),
        done(usage=USAGE, rid="r1"),
        created("r2"),
        ev("response.text.delta", delta="x"),
        done(usage=other, rid="r2"),
        normalizer=normalizer,
    )
    assert types(events).count("done") == 2
    result = collect(events)
    assert result.usage is not None and result.usage.output_tokens == 30
    assert normalizer.current_response_id == "r2"  # the response the session is on
    assert normalizer.response_id == "r1"  # the session is named by its first response, at any chunking


def test_usage_reads_the_realtime_token_details() -> None:
    usage = Usage.from_raw(USAGE)
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens, usage.total_tokens) == (6, 4, 3, 9)


def test_an_error_event_does_not_end_the_session() -> None:
    events = frames(
        ev("error", error={"type": "invalid_request_error", "code": "bad", "message": "no such field"}),
        created(),
        ev("response.output_text.delta", delta="ok"),
        done(),
    )
    assert types(events)[0] == "error" and types(events)[-1] == "done"
    assert events[0].error is not None and (events[0].error["type"], events[0].error["message"]) == (
        "invalid_request_error",
        "no such field",
    )


def test_a_session_cut_inside_a_response_is_truncated_and_idle_sessions_are_not() -> None:
    cut = frames(created(), ev("response.output_text.delta", delta="par"))
    assert cut[-1].error is not None and cut[-1].error["type"] == "stream_truncated"
    idle = frames(ev("session.created", session={}), created(), done(), ev("input_audio_buffer.speech_started"))
    assert types(idle)[-1] == "raw"


def test_a_saved_session_reads_through_ndjson_and_auto_detection() -> None:
    lines = [created(), ev("response.output_text.delta", delta="hi"), done()]
    body = b"".join(json.dumps(item).encode() + b"\n" for item in lines)
    saved = list(iter_unified([body], "openai-realtime", "ndjson"))
    assert [e.to_dict(with_raw=True) for e in saved] == [e.to_dict(with_raw=True) for e in frames(*lines)]
    auto = list(iter_unified([body[:5], body[5:]], "auto"))
    assert [e.to_dict(with_raw=True) for e in auto] == [e.to_dict(with_raw=True) for e in saved]


def test_detection_tells_realtime_from_the_responses_api() -> None:
    assert detect_provider(ev("session.created", session={})) == "openai-realtime"
    assert detect_provider(ev("response.output_text.delta", delta="x")) == "openai-realtime"
    assert detect_provider({"type": "response.output_text.delta", "delta": "x", "sequence_number": 3}) == "openai"
