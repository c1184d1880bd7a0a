"""provider="auto" and framing="auto": recognised from the stream itself, never guessed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers import CORPUS, FIXTURES, chunked, load_manifest
from helpers.corpus import framing_for, provider_for
from ssewire import DetectionError, collect, iter_unified
from ssewire.framing import AutoScanner
from ssewire.names import ProviderName
from ssewire.normalizers.auto import AutoNormalizer, detect_provider

CAPTURES = load_manifest()


@pytest.mark.skipif(not CAPTURES, reason="../shared/corpus is not present")
@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
@pytest.mark.parametrize("size", [7, None])
def test_auto_gives_the_same_events_as_the_named_provider(capture: dict[str, Any], size: Any) -> None:
    data = (CORPUS / capture["file"]).read_bytes()
    named = list(iter_unified(chunked(data, size), provider_for(capture), framing_for(capture)))
    auto = list(iter_unified(chunked(data, size), "auto"))
    assert [e.to_dict(with_raw=True) for e in auto] == [e.to_dict(with_raw=True) for e in named]


def test_auto_on_every_fixture() -> None:
    for stream in sorted(FIXTURES.glob("*.sse")) + sorted(FIXTURES.glob("*.json")):
        if stream.name.endswith(".expected.json"):
            continue
        result = collect(iter_unified([stream.read_bytes()], "auto"))
        assert result.text or result.tool_calls or result.error or result.reasoning, stream.name


@pytest.mark.parametrize(
    ("payload", "event", "provider"),
    [
        ({"type": "response.created", "response": {}}, None, "openai"),
        ({"type": "message_start", "message": {}}, "message_start", "anthropic"),
        ({"type": "ping"}, "ping", "anthropic"),
        ({"object": "chat.completion.chunk", "choices": []}, None, "openai-chat"),
        ({"choices": [{"delta": {"content": "x"}}]}, None, "openai-chat"),
        ({"candidates": [{"content": {"parts": [{"text": "x"}]}}]}, None, "gemini"),
        ({"usageMetadata": {}}, None, "gemini"),
        ({"event_type": "interaction.created", "interaction": {}}, None, "gemini"),
        ({"index": 0}, "step.start", "gemini"),
        ({"type": "error", "error": {"type": "overloaded_error"}}, "error", None),
        ({"error": {"code": 500, "message": "x"}}, None, None),
    ],
)
def test_detect_provider(payload: dict[str, Any], event: Any, provider: Any) -> None:
    assert detect_provider(payload, event) == provider


def test_unknown_payload_raises_instead_of_guessing() -> None:
    with pytest.raises(DetectionError, match="keys"):
        list(iter_unified([b'data: {"hello": "world"}\n\n'], "auto"))


def test_leading_error_is_replayed_to_the_detected_normaliser() -> None:
    body = (
        b'event: error\ndata: {"type":"error","sequence_number":0,"error":{"type":"server_error","code":"x",'
        b'"message":"boom"}}\n\n'
        b'event: response.failed\ndata: {"type":"response.failed","sequence_number":1,"response":{"id":"r",'
        b'"status":"failed","error":{"code":"x","message":"boom"}}}\n\n'
    )
    events = list(iter_unified([body], "auto"))
    errors = [e for e in events if e.type == "error"]
    assert errors and errors[0].error["message"] == "boom"  # type: ignore[index]
    assert events[-1].type == "done" and events[-1].stop_reason == "failed"


def test_stream_of_only_an_error_reports_it() -> None:
    body = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    events = list(iter_unified([body], "auto"))
    assert [e.type for e in events] == ["error"]
    assert events[0].error == {"type": "overloaded_error", "message": "Overloaded"}


def test_empty_stream_is_not_a_stream() -> None:
    events = list(iter_unified([b""], "auto"))
    assert events[-1].type == "error" and events[-1].error["type"] == "not_a_stream"  # type: ignore[index]
    normalizer = AutoNormalizer()
    assert normalizer.detected is None


@pytest.mark.parametrize(
    ("body", "framing"),
    [
        (b"[{}]", "json_array"),
        (b"  \r\n\t[{}]", "json_array"),
        (b"\xef\xbb\xbf\n[{}]", "json_array"),
        (b"data: x\n\n", "sse"),
        (b"\xef\xbb\xbfdata: x\n\n", "sse"),
        (b": comment\n\n", "sse"),
    ],
)
def test_framing_from_the_first_byte_at_any_chunking(body: bytes, framing: str) -> None:
    for size in (1, 2, None):
        scanner = AutoScanner()
        events = []
        for chunk in chunked(body, size):
            events += scanner.feed(chunk)
        events += scanner.close()
        assert scanner.framing == framing
        assert len(events) == (1 if framing == "json_array" or b"data" in body else 0)


@pytest.mark.parametrize(
    ("body", "provider"),
    [
        (
            b'event: error\ndata: {"type":"error","sequence_number":2,"code":"server_error","message":"boom"}\n\n',
            "openai",
        ),
        (b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"O"}}\n\n', "anthropic"),
        (b'data: {"error": {"code": 503, "message": "x", "status": "UNAVAILABLE"}}\r\n\r\n', "gemini"),
        (b'data: {"error": {"message": "rate limited", "code": 429}}\n\n', "openai-chat"),
    ],
)
def test_error_only_streams_read_like_their_provider(body: bytes, provider: ProviderName) -> None:
    assert [e.to_dict(with_raw=True) for e in iter_unified([body], "auto")] == [
        e.to_dict(with_raw=True) for e in iter_unified([body], provider)
    ]


def test_a_decoder_hands_an_auto_stream_to_the_settled_normaliser_once_it_is_known() -> None:
    """``settled()``: None while auto has not recognised the provider, then its delegate (which reads every later
    event, chunk by chunk, in its place: the events are those of the provider named)."""
    from ssewire import StreamDecoder

    body = (FIXTURES / "openai-chat-multi-tool-use-parallel.sse").read_bytes()
    auto = AutoNormalizer()
    assert auto.settled() is None
    decoder, named = StreamDecoder(auto, "auto"), StreamDecoder("openai-chat", "sse")
    assert named.normalizer.settled() is named.normalizer
    pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
    from_auto = [event for piece in pieces for event in decoder.feed(piece)] + decoder.close()
    from_named = [event for piece in pieces for event in named.feed(piece)] + named.close()
    assert auto.settled() is auto.delegate is not None and auto.detected == "openai-chat"
    assert [(e.type, e.text, e.tool_call_id) for e in from_auto] == [
        (e.type, e.text, e.tool_call_id) for e in from_named
    ]
    assert auto.done and auto.finished


CHAT_HI = (
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"Hi"},'
    b'"finish_reason":null}]}\n\n'
)
CHAT_END = (
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},'
    b'"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


KEEP_ALIVES = [b"event: ping\ndata: {}\n\n", b"data: {}\n\n", b"event: metadata\ndata: {}\n\n"]


@pytest.mark.parametrize("keep_alive", KEEP_ALIVES)
def test_an_empty_keep_alive_says_nothing_of_the_provider(keep_alive: bytes) -> None:
    # servers send `event: ping` + `data: {}` to keep a connection open: no provider claims an empty object, and
    # many of them are never held
    body = keep_alive * 50 + CHAT_HI + CHAT_END
    named, auto = collect(iter_unified([body], "openai-chat")), collect(iter_unified([body], "auto"))
    assert (auto.text, auto.stop_reason, auto.error) == (named.text, named.stop_reason, named.error)
    assert (named.text, named.stop_reason, named.error) == ("Hi", "end", None)
    assert detect_provider({}, "ping") is None
    cut = collect(iter_unified([keep_alive + CHAT_HI], "openai-chat"))  # a dropped connection: a retry helps
    assert cut.text == "Hi" and cut.error is not None and cut.error["type"] == "stream_truncated"


def test_boto3s_invoke_model_dicts_are_recognised() -> None:
    # boto3 yields InvokeModelWithResponseStream's events as {"chunk": {"bytes": b"..."}}: no SSE event name
    anthropic = [
        {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "c",
                                              "content": [], "usage": {"input_tokens": 3, "output_tokens": 1}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ]  # fmt: skip
    nova = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"delta": {"text": "Hi"}, "contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1}}},
    ]
    for provider, events in (("bedrock-anthropic", anthropic), ("bedrock-converse", nova)):
        dicts = [{"chunk": {"bytes": json.dumps(event).encode()}} for event in events]
        named = collect(iter_unified(dicts, provider))  # type: ignore[arg-type]
        auto = collect(iter_unified(dicts, "auto"))  # type: ignore[arg-type]
        assert (
            (auto.text, auto.stop_reason, auto.error)
            == (named.text, named.stop_reason, named.error)
            == ("Hi", "end", None)
        )


def test_a_bedrock_stream_that_starts_with_its_exception_reads_as_the_named_one() -> None:
    """A throttled Bedrock request can answer 200 with the exception as its first message (the stream unions name
    the exceptions); an error message names its code in headers: auto reads either as the Bedrock readers do."""
    from helpers.eventstream import encode_message, exception

    error_message = encode_message({":message-type": "error", ":error-code": "InternalFailure", ":error-message": "x"})
    for body in (exception("throttlingException", "Too many requests"), error_message):
        want = [e.to_dict(with_raw=True) for e in iter_unified([body], "bedrock-converse")]
        assert [e.to_dict(with_raw=True) for e in iter_unified([body], "auto")] == want
        assert want[-1]["type"] == "error" and want[-1]["error"]["type"] in ("throttlingException", "InternalFailure")


@pytest.mark.parametrize(
    "lines",
    [
        [  # Mistral's Conversations API (/v1/conversations): no provider here reads it
            {"type": "conversation.response.started", "conversation_id": "c", "created_at": "2025-01-01"},
            {"type": "message.output.delta", "content": "Hello", "id": "m", "output_index": 0},
            {"type": "conversation.response.done", "usage": {"prompt_tokens": 1}},
        ],
        [  # Cohere's v1 chat (ssewire reads v2)
            {"event_type": "stream-start", "generation_id": "g", "is_finished": False},
            {"event_type": "text-generation", "text": "Hello", "is_finished": False},
            {"event_type": "stream-end", "finish_reason": "COMPLETE", "is_finished": True},
        ],
    ],
    ids=["mistral-conversations", "cohere-v1"],
)
def test_a_shape_no_provider_reads_is_never_claimed_by_a_lookalike(lines: list[dict[str, Any]]) -> None:
    """Realtime's ``conversation.item.*`` is not any ``conversation.*``; Interactions' ``event_type`` names its own
    events: a stream of another API raises, never reads as an empty, clean answer or a truncation."""
    body = b"".join(b"data: " + json.dumps(line).encode() + b"\n\n" for line in lines)
    with pytest.raises(DetectionError):
        collect(iter_unified([body], "auto"))


@pytest.mark.parametrize("provider", ["auto", "openai-chat"])
def test_an_unwrapped_error_object_body_is_the_servers_error(provider: ProviderName) -> None:
    """vLLM's OpenAI server (and others modelled on it) answered errors with the error object itself
    (``"object": "error"``): its message, never ``not_a_stream`` asking for a stream."""
    body = b'{"object":"error","message":"The model `llama-9` does not exist.","type":"NotFoundError","code":404}'
    events = list(iter_unified([body], provider))
    assert [e.type for e in events] == ["error"]
    assert events[0].error is not None
    assert (events[0].error["type"], events[0].error["message"]) == (
        "NotFoundError",
        "The model `llama-9` does not exist.",
    )
