"""Gemini Live API server messages, one WebSocket frame at a time."""

from __future__ import annotations

import json

from helpers.events import decoded_whole, dicts
from ssewire import GeminiLiveNormalizer, Unified, collect
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


def test_garbage_frames_never_raise() -> None:
    live = GeminiLiveNormalizer()
    for frame in ["not json", "[1]", '{"serverContent": 3}', '{"toolCall": {"functionCalls": [1, null]}}']:
        assert live.frame(frame)


def test_audio_and_other_raw_messages_are_read_without_a_decode_and_read_as_decoded() -> None:
    """The model's audio (the bulk of a voice session) and the other messages that are only raw are read by the
    compiled reader where it is built (``raw`` decoded only when asked for); every message that sets state (text,
    a tool call, usage, the end of a turn, a resumption update, ``goAway``) is decoded: the events and the state
    are the full decode's."""
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
    if typed.take_deltas is not None:  # the first four frames' raw events, and no other event, read lazily
        assert [type(event._raw) is LazyPayload for event in got] == [True] * 4 + [False] * (len(got) - 4)
    assert dicts(got) == want_dicts
    assert (live.resumption_handle, live.go_away, live.done, live.usage) == (
        decoded.resumption_handle,
        decoded.go_away,
        decoded.done,
        decoded.usage,
    )
