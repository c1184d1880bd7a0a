"""The Vercel AI SDK's UI message stream, one test per rule of the module docstring."""

from __future__ import annotations

from typing import Any

import pytest

from helpers.events import decoded_whole, dicts, feed, types
from ssewire import collect, iter_unified
from ssewire.normalizers.vercel_ui import VercelUINormalizer, VercelUIRules
from ssewire.usage import Usage

USAGE = {
    "inputTokens": 10,
    "inputTokenDetails": {"noCacheTokens": 4, "cacheReadTokens": 6, "cacheWriteTokens": 0},
    "outputTokens": 7,
    "outputTokenDetails": {"textTokens": 5, "reasoningTokens": 2},
    "totalTokens": 17,
}


def run(*chunks: Any, finish: bool = True) -> list[Any]:
    return feed(VercelUINormalizer(), *chunks, finish=finish, named=False)


def test_text_and_reasoning_deltas_make_their_events_and_empty_ones_make_raw() -> None:
    events = run(
        {"type": "reasoning-delta", "id": "r", "delta": "think"},
        {"type": "text-delta", "id": "t", "delta": "hi"},
        {"type": "text-delta", "id": "t", "delta": ""},
        {"type": "finish"},
    )
    assert types(events) == ["reasoning_delta", "text_delta", "raw", "done"]
    assert [e.text for e in events[:2]] == ["think", "hi"]


def test_a_call_streams_then_closes_from_its_fragments() -> None:
    events = run(
        {"type": "tool-input-start", "toolCallId": "c1", "toolName": "f"},
        {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"a":'},
        {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": " 1}"},
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {"a": 2}},
        {"type": "finish", "finishReason": "tool-calls"},
    )
    # (the done waits for the step's end: the server may still run the call; the input the SDK repaired wins)
    assert types(events) == ["tool_call_start", "tool_call_delta", "tool_call_delta", "raw", "tool_call_done", "done"]
    done = events[4]
    assert (done.tool_call_id, done.tool_name, done.arguments, done.server) == ("c1", "f", {"a": 2}, False)
    assert events[-1].stop_reason == "tool_use"
    same = run(
        {"type": "tool-input-start", "toolCallId": "c1", "toolName": "f"},
        {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"a": 1}'},
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {"a": 1}},
        {"type": "finish-step"},
    )
    assert [(e.arguments, e.arguments_raw) for e in same if e.type == "tool_call_done"] == [({"a": 1}, '{"a": 1}')]


def test_a_call_the_server_ran_or_refused_is_no_client_call() -> None:
    """``streamText`` runs a tool with an ``execute`` on the server: its ``tool-output-available`` (or
    ``-error``) follows the input, and the step goes on; a call the model made wrong (``tool-input-error``) the
    server answers with the error. Neither is a client's to run (the AI SDK's ``useChat`` runs neither), and a
    stream that then stops is a clean stop."""
    for output in ("tool-output-available", "tool-output-error"):
        result = collect(
            run(
                {"type": "tool-input-start", "toolCallId": "c1", "toolName": "weather"},
                {"type": "tool-input-available", "toolCallId": "c1", "toolName": "weather", "input": {"city": "B"}},
                {"type": output, "toolCallId": "c1", "output": {"temp": 20}, "errorText": "x"},
                {"type": "finish-step"},
                {"type": "start-step"},
                {"type": "text-delta", "id": "t", "delta": "Sunny."},
                {"type": "finish", "finishReason": "stop"},
            )
        )
        assert result.client_tool_calls == [] and [c.server for c in result.tool_calls] == [True]
        assert (result.text, result.stop_reason) == ("Sunny.", "end")
    refused = collect(
        run(
            {"type": "tool-input-start", "toolCallId": "c9", "toolName": "delete_files"},
            {
                "type": "tool-input-error",
                "toolCallId": "c9",
                "toolName": "delete_files",
                "input": {"path": "/"},
                "errorText": "no such tool",
            },
            {"type": "finish", "finishReason": "tool-calls"},
        )
    )
    assert refused.client_tool_calls == []
    assert [(c.server, c.arguments_error) for c in refused.tool_calls] == [(True, "no such tool")]


def test_a_call_sent_whole_and_a_provider_executed_call() -> None:
    events = run(
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {"a": 1}},
        {"type": "tool-input-start", "toolCallId": "s1", "toolName": "web_search", "providerExecuted": True},
        {"type": "tool-input-error", "toolCallId": "s1", "toolName": "web_search", "input": "[1]", "errorText": "x"},
        {"type": "finish", "finishReason": "stop"},
    )
    result = collect(events)
    assert [(c.id, c.arguments, c.server) for c in result.tool_calls] == [("c1", {"a": 1}, False), ("s1", None, True)]
    assert result.tool_calls[1].arguments_error is not None
    assert result.stop_reason == "tool_use"  # a client call was made


def test_signatures_encrypted_reasoning_and_sources() -> None:
    events = run(
        {"type": "reasoning-delta", "id": "r", "delta": "", "providerMetadata": {"anthropic": {"signature": "sig"}}},
        {"type": "reasoning-end", "id": "r", "providerMetadata": {"openai": {"reasoningEncryptedContent": "enc"}}},
        {"type": "source-url", "sourceId": "s", "url": "https://example.com", "title": "Example"},
        {"type": "finish"},
    )
    assert events[0].signature == "sig" and events[1].encrypted_reasoning == "enc"
    assert [(c.kind, c.url, c.title) for c in events[2].citations] == [("source-url", "https://example.com", "Example")]


def test_encrypted_reasoning_on_a_delta_chunk_is_an_event_of_its_own_and_in_the_result() -> None:
    secret = {"openai": {"reasoningEncryptedContent": "enc"}}
    events = run(
        {"type": "reasoning-start", "id": "r"},
        {"type": "reasoning-delta", "id": "r", "delta": "think", "providerMetadata": secret},
        {"type": "reasoning-end", "id": "r"},
        {"type": "finish"},
    )
    # the delta's text is taken without its event where the accumulator reads runs of deltas: the secret is not on it
    assert [(e.type, e.text, e.encrypted_reasoning) for e in events[1:3]] == [
        ("reasoning_delta", "think", None),
        ("raw", "", "enc"),
    ]
    for taken in (collect(events), collect(iter(events))):
        assert taken.reasoning == "think" and taken.encrypted_reasoning == ["enc"]


def test_finish_ends_with_usage_and_its_reason() -> None:
    events = run({"type": "finish", "finishReason": "length", "messageMetadata": {"usage": USAGE}}, {"type": "finish"})
    assert types(events) == ["usage", "done", "raw"]  # a second finish is raw
    assert (events[1].stop_reason, events[1].raw_stop_reason) == ("max_tokens", "length")
    result = collect(events)
    assert result.usage is not None and result.usage.source == "vercel-ui"
    counts = (result.usage.input_tokens, result.usage.cached_input_tokens, result.usage.output_tokens)
    assert counts == (10, 6, 7) and result.usage.reasoning_tokens == 2


def test_every_finish_reason() -> None:
    for reason, stop in (
        ("stop", "end"),
        ("content-filter", "refusal"),
        ("error", "failed"),
        ("interrupted", "incomplete"),
        ("other", "other"),
        (None, "end"),
    ):
        finish = {"type": "finish"} if reason is None else {"type": "finish", "finishReason": reason}
        assert run(finish)[-1].stop_reason == stop, reason


def test_message_metadata_usage_and_done_sentinel() -> None:
    events = run({"type": "message-metadata", "messageMetadata": {"usage": USAGE}}, "[DONE]", {"type": "finish"})
    assert types(events) == ["usage", "done"]
    assert types(run({"type": "message-metadata", "messageMetadata": {"title": "x"}}, {"type": "finish"})) == [
        "raw",
        "done",
    ]


def test_errors_and_aborts_end_the_stream_with_the_open_calls() -> None:
    events = run(
        {"type": "tool-input-start", "toolCallId": "c1", "toolName": "f"},
        {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "{"},
        {"type": "error", "errorText": "Overloaded", "errorType": "overloaded_error"},
    )
    error = events[-1].error
    assert error is not None and (error["type"], error["message"]) == ("overloaded_error", "Overloaded")
    assert error["incomplete_tool_calls"] == [{"id": "c1", "name": "f", "arguments_raw": "{"}]
    aborted = run({"type": "abort", "reason": "user"})[-1].error
    assert aborted == {"type": "aborted", "message": "user"}


def test_a_stream_without_finish_is_truncated() -> None:
    events = run({"type": "start", "messageId": "m1"}, {"type": "text-delta", "id": "t", "delta": "hi"})
    assert events[-1].error is not None and events[-1].error["type"] == "stream_truncated"


def test_recognition_and_usage_shape() -> None:
    assert VercelUIRules.claims({"type": "text-delta", "id": "t", "delta": "x"})
    assert VercelUIRules.claims({"type": "start", "messageId": "m"})
    # the AI SDK's toUIMessageStream sends start bare unless it makes an id, or with messageMetadata only
    assert VercelUIRules.claims({"type": "start"}) and VercelUIRules.claims({"type": "start", "messageMetadata": {}})
    assert not VercelUIRules.claims({"type": "start", "index": 0})  # a start of some other API
    assert VercelUIRules.claims({"type": "data-weather", "data": {"city": "Oslo"}})  # a custom data part
    assert not VercelUIRules.claims({"type": "content-delta"})  # Cohere's
    assert VercelUIRules.claims_error({"type": "error", "errorText": "x"})
    assert VercelUIRules.meta_from({"type": "start", "messageId": "m"}) == ("m", None)
    bedrock = Usage.from_raw({"inputTokens": 3, "outputTokens": 4, "totalTokens": 7})
    assert bedrock.source == "bedrock-converse"  # the details tell the AI SDK's object apart
    assert Usage.from_raw(USAGE).source == "vercel-ui"


def test_auto_detection_reads_a_ui_stream() -> None:
    body = b'data: {"type":"start","messageId":"m1"}\n\ndata: {"type":"text-delta","id":"t","delta":"hi"}\n\n'
    body += b'data: {"type":"finish","finishReason":"stop"}\n\ndata: [DONE]\n\n'
    result = collect(iter_unified([body], "auto"))
    assert (result.text, result.stop_reason, result.response_id) == ("hi", "end", "m1")


def test_deltas_are_read_without_a_decode_and_read_as_decoded() -> None:
    """Text and reasoning deltas are read by the compiled reader where it is built (``raw`` decoded only when asked
    for); a delta carrying ``providerMetadata`` (a signature, encrypted reasoning), an empty one and every other
    chunk are decoded: the events are the full decode's."""
    import json

    from ssewire.events import LazyPayload
    from ssewire.normalizers._fast import typed

    chunks = [
        {"type": "start", "messageId": "m1"},
        {"type": "reasoning-start", "id": "r0"},
        {"type": "reasoning-delta", "id": "r0", "delta": "hm"},
        {"type": "reasoning-delta", "id": "r0", "delta": ".", "providerMetadata": {"anthropic": {"signature": "s"}}},
        {"type": "reasoning-end", "id": "r0"},
        {"type": "text-start", "id": "t0"},
        *({"type": "text-delta", "id": "t0", "delta": f"w{i} "} for i in range(4)),
        {"type": "text-delta", "id": "t0", "delta": ""},
        {"type": "text-end", "id": "t0"},
        {"type": "finish", "finishReason": "stop"},
    ]
    body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks).encode() + b"data: [DONE]\n\n"
    want = decoded_whole(lambda: dicts(iter_unified([body], "vercel-ui")))
    got = list(iter_unified([body], "vercel-ui"))
    if typed.take_deltas is not None:
        lazy = [type(e._raw) is LazyPayload for e in got]
        assert [i for i, is_lazy in enumerate(lazy) if is_lazy] == [2, 6, 7, 8, 9]
    assert dicts(got) == want
    result = collect(iter_unified([body], "vercel-ui"))
    assert (result.text, result.reasoning, result.signatures) == ("w0 w1 w2 w3 ", "hm.", ["s"])


@pytest.mark.parametrize(
    "first",
    [b'{"type":"start"}', b'{"type":"start","messageMetadata":{"model":"m"}}', b'{"type":"data-status","data":{}}'],
)
def test_auto_reads_the_streams_the_ai_sdk_opens_without_a_message_id(first: bytes) -> None:
    body = b"data: " + first + b'\n\ndata: {"type":"text-delta","id":"t","delta":"Hi"}\n\n'
    body += b'data: {"type":"finish","finishReason":"stop"}\n\ndata: [DONE]\n\n'
    auto = collect(iter_unified([body], "auto"))
    assert (auto.text, auto.stop_reason, auto.error) == ("Hi", "end", None)


def test_an_error_only_ui_stream_is_read_as_a_ui_stream_by_auto() -> None:
    body = b'data: {"type":"error","errorText":"Overloaded"}\n\n'
    named, auto = collect(iter_unified([body], "vercel-ui")), collect(iter_unified([body], "auto"))
    assert auto.error == named.error and named.error is not None and named.error["message"] == "Overloaded"
