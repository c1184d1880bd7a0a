"""Gemini Live API server messages, one WebSocket frame at a time."""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest

from helpers.events import decoded_whole, dicts
from ssewire import GeminiLiveNormalizer, Unified, collect, iter_unified
from ssewire.usage import Usage


def test_text_turn_with_usage_and_turn_complete() -> None:
    live = GeminiLiveNormalizer()
    events = live.frame('{"setupComplete": {}}')
    assert [e.type for e in events] == ["raw"]
    events += live.frame(b'{"serverContent": {"modelTurn": {"parts": [{"text": "Hel"}]}}}')
    assert not live.done  # a turn is open
    events += live.frame({"serverContent": {"modelTurn": {"parts": [{"text": "lo", "thought": False}]}}})
    events += live.frame({"serverContent": {"modelTurn": {"parts": [{"text": "hm", "thought": True}]}}})
    events += live.frame(
        {
            "serverContent": {"turnComplete": True},
            "usageMetadata": {"promptTokenCount": 5, "responseTokenCount": 2, "totalTokenCount": 7},
        }
    )
    assert [e.type for e in events] == ["raw", "text_delta", "text_delta", "reasoning_delta", "usage", "done"]
    result = collect(events)
    assert (result.text, result.reasoning, result.stop_reason) == ("Hello", "hm", "end")
    assert result.usage == Usage.from_raw({"promptTokenCount": 5, "responseTokenCount": 2, "totalTokenCount": 7})
    assert result.usage is not None and result.usage.output_tokens == 2
    assert live.finish() == []


def test_tool_call_then_cancellation() -> None:
    live = GeminiLiveNormalizer()
    frame = {"toolCall": {"functionCalls": [{"id": "f1", "name": "lookup", "args": {"q": "x"}}, {"name": "t"}]}}
    events = live.frame(json.dumps(frame))
    assert [e.type for e in events] == ["tool_call_start", "tool_call_delta", "tool_call_done"] * 2 + ["done"]
    assert events[2].arguments == {"q": "x"} and events[1].arguments_delta == '{"q":"x"}'
    assert events[-1].stop_reason == "tool_use"
    assert events[3].tool_call_id and events[3].tool_call_id != "f1"  # synthetic, unique
    assert events[5].arguments == {}
    cancel = live.frame({"toolCallCancellation": {"ids": ["f1"]}})
    assert [e.type for e in cancel] == ["raw"] and cancel[0].raw == {"toolCallCancellation": {"ids": ["f1"]}}


def test_go_away_and_resumption_handle_are_kept() -> None:
    live = GeminiLiveNormalizer()
    live.frame({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": True}})
    events = live.frame({"goAway": {"timeLeft": "10s"}})
    assert live.resumption_handle == "h-1"
    assert live.go_away == {"timeLeft": "10s"}
    assert events[0].type == "raw"


def test_interrupted_and_audio_parts_are_raw_not_dropped() -> None:
    live = GeminiLiveNormalizer()
    audio = {"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm", "data": "AAA="}}]}}}
    assert [e.type for e in live.frame(audio)] == ["raw"]
    assert [e.type for e in live.frame({"serverContent": {"interrupted": True}})] == ["raw"]


def test_session_ending_mid_turn_is_truncated() -> None:
    live = GeminiLiveNormalizer()
    live.frame({"serverContent": {"modelTurn": {"parts": [{"text": "partial"}]}}})
    tail = live.finish()
    assert [e.type for e in tail] == ["error"] and tail[0].error["type"] == "stream_truncated"  # type: ignore[index]


@pytest.mark.parametrize("fed", ["frames", "ndjson"])
def test_an_audio_only_turn_cut_is_truncated(fed: str) -> None:
    """Native-audio models send no text: a turn of audio parts and transcriptions is a turn all the same, on the
    compiled reader too (a saved session read through NDJSON, many messages a chunk)."""
    audio: dict[str, Any] = {
        "serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm", "data": "AAAA"}}]}}
    }
    said: dict[str, Any] = {"serverContent": {"outputTranscription": {"text": "hi"}}}
    done: dict[str, Any] = {"serverContent": {"turnComplete": True}}
    for messages, cut in (([audio, said, audio], True), ([said, audio], True), ([audio, done], False), ([], False)):
        if fed == "frames":
            live = GeminiLiveNormalizer()
            events = [e for m in messages for e in live.frame(m)] + live.finish()
        else:
            body = b"".join(json.dumps(m).encode() + b"\n" for m in [{"setupComplete": {}}, *messages])
            events = list(iter_unified([body], "gemini-live", "ndjson"))
        error = collect(events).error
        assert (error is not None and error["type"] == "stream_truncated") is cut, messages


@pytest.mark.parametrize(
    ("reason", "stop"),
    [
        (None, "end"),
        ("NEED_MORE_INPUT", "end"),
        ("MALFORMED_FUNCTION_CALL", "failed"),
        ("RESPONSE_REJECTED", "refusal"),
        ("PROHIBITED_INPUT_CONTENT", "refusal"),
        ("INPUT_IMAGE_CELEBRITY", "refusal"),
        ("SOMETHING_NEW", "other"),
    ],
)
def test_turn_complete_reason_is_the_stop(reason: Optional[str], stop: str) -> None:
    live = GeminiLiveNormalizer()
    live.frame({"serverContent": {"modelTurn": {"parts": [{"text": "x"}]}}})
    content: dict[str, Any] = {"turnComplete": True}
    if reason is not None:
        content["turnCompleteReason"] = reason
    (done,) = live.frame({"serverContent": content})
    assert (done.stop_reason, done.raw_stop_reason) == (stop, reason or "turnComplete")


def test_garbage_frames_never_raise() -> None:
    live = GeminiLiveNormalizer()
    for frame in ["not json", "[1]", '{"serverContent": 3}', '{"toolCall": {"functionCalls": [1, null]}}']:
        assert live.frame(frame)


def test_audio_and_other_raw_messages_are_read_without_a_decode_and_read_as_decoded() -> None:
    """The model's audio (the bulk of a voice session) and the other messages that are only raw are read by the
    compiled reader where it is built (``raw`` decoded only when asked for) while a turn is open; every message that
    sets state (the one that opens a turn, text, a tool call, usage, the end of a turn, a resumption update,
    ``goAway``) is decoded: the events and the state are the full decode's."""
    from ssewire.events import LazyPayload
    from ssewire.normalizers._fast import typed

    audio = {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": "AAAA" * 20_000}}  # 80 KB of base64
    frames = [
        {"setupComplete": {}},
        {"serverContent": {"modelTurn": {"parts": [audio]}}},
        {"serverContent": {"outputTranscription": {"text": "hi"}}},
        {"serverContent": {"modelTurn": {"parts": [{"inlineData": {"data": "QUJD"}}]}, "interrupted": True}},
        {"serverContent": {"modelTurn": {"parts": [{"text": "Hel"}]}}},
        {"serverContent": {"modelTurn": {"parts": [{"text": ""}]}}},
        {"serverContent": {"modelTurn": {"parts": [audio, {"text": "lo"}]}}},
        {"sessionResumptionUpdate": {"newHandle": "h1"}},
        {"serverContent": {"modelTurn": {"parts": [audio]}}, "usageMetadata": {"totalTokenCount": 3}},
        {"goAway": {"timeLeft": "10s"}},
        {"toolCall": {"functionCalls": [{"id": "f1", "name": "t", "args": {}}]}},
        {"serverContent": {"modelTurn": {"parts": [audio]}, "turnComplete": True}},
    ]

    def read() -> tuple[list[Unified], GeminiLiveNormalizer]:
        live = GeminiLiveNormalizer()
        made: list[Unified] = []
        for frame in frames:
            made += live.frame(json.dumps(frame))
        return made + live.finish(), live

    want, decoded = decoded_whole(read)
    want_dicts = dicts(want)
    got, live = read()
    if typed.take_deltas is not None:  # the raw events of frames 2 and 3 (in the turn frame 1 opened) read lazily
        assert [type(event._raw) is LazyPayload for event in got] == [False, False, True, True] + [False] * (
            len(got) - 4
        )
    assert dicts(got) == want_dicts
    assert (live.resumption_handle, live.go_away, live.done, live.usage) == (
        decoded.resumption_handle,
        decoded.go_away,
        decoded.done,
        decoded.usage,
    )
