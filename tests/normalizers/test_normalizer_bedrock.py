"""Amazon Bedrock (ConverseStream, InvokeModelWithResponseStream for Anthropic), one test per rule of the module
docstring, over encoded event-stream bytes; and boto3's decoded event dicts (made by botocore's own parser)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from helpers import CORPUS, FIXTURES, load_manifest
from helpers.bedrock_fixtures import FIXTURE_MESSAGES, encoded
from helpers.corpus import provider_for
from helpers.events import types
from helpers.eventstream import encode_message, event
from ssewire import StreamResult, Unified, collect, iter_events, iter_unified
from ssewire.normalizers.bedrock import (
    CONVERSE_STOP,
    BedrockAnthropicNormalizer,
    BedrockConverseNormalizer,
)
from ssewire.normalizers.providers import detect_provider
from ssewire.usage import Usage

BEDROCK = [c for c in load_manifest() if c["framing"] == "aws-eventstream"]


def converse(*messages: bytes, provider: str = "bedrock-converse") -> list[Unified]:
    return list(iter_unified([b"".join(messages)], provider, "aws-eventstream"))  # type: ignore[arg-type]


def delta(index: int, value: dict[str, Any]) -> bytes:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": value})


START = event("messageStart", {"role": "assistant"})
STOP = event("messageStop", {"stopReason": "end_turn"})
METADATA = event("metadata", {"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}, "metrics": {}})


def test_text_reasoning_and_signature_deltas() -> None:
    events = converse(
        START,
        delta(0, {"reasoningContent": {"text": "hm"}}),
        delta(0, {"reasoningContent": {"signature": "sig"}}),
        delta(0, {"reasoningContent": {"redactedContent": "AAAA"}}),
        delta(1, {"text": "Hi"}),
        delta(1, {"text": ""}),
        STOP,
        METADATA,
    )
    assert types(events) == ["raw", "reasoning_delta", "raw", "raw", "text_delta", "raw", "raw", "usage", "done"]
    assert events[2].signature == "sig"
    result = collect(events)
    assert (result.text, result.reasoning, result.signatures, result.stop_reason) == ("Hi", "hm", ["sig"], "end")


def test_tool_use_blocks_by_index_and_empty_input_fragments() -> None:
    events = converse(
        START,
        event("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}}),
        delta(1, {"toolUse": {"input": ""}}),
        delta(1, {"toolUse": {"input": '{"a": '}}),
        delta(1, {"toolUse": {"input": "1}"}}),
        event("contentBlockStop", {"contentBlockIndex": 1}),
        event("messageStop", {"stopReason": "tool_use"}),
        METADATA,
    )
    assert types(events) == [
        "raw",
        "tool_call_start",
        "raw",
        "tool_call_delta",
        "tool_call_delta",
        "tool_call_done",
        "raw",
        "usage",
        "done",
    ]
    call = collect(events).tool_calls[0]
    assert (call.id, call.name, call.arguments, call.arguments_raw) == ("t1", "f", {"a": 1}, '{"a": 1}')
    assert events[-1].stop_reason == "tool_use"


def test_done_comes_with_metadata_the_last_event() -> None:
    events = converse(START, delta(0, {"text": "x"}), STOP)
    assert types(events)[-1] == "error"
    error = events[-1].error
    assert error is not None and error["type"] == "stream_truncated" and "(metadata)" in error["message"]
    assert "done" not in types(events)


@pytest.mark.parametrize(("raw", "unified"), [*sorted(CONVERSE_STOP.items()), ("something_new", "other")])
def test_stop_reasons(raw: str, unified: str) -> None:
    events = converse(START, event("messageStop", {"stopReason": raw}), METADATA)
    assert (events[-1].stop_reason, events[-1].raw_stop_reason) == (unified, raw)


def test_end_turn_after_client_calls_is_tool_use_and_a_cut_off_call_stays_incomplete() -> None:
    start = event("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t", "name": "g"}}})
    ended = converse(START, start, delta(0, {"toolUse": {"input": "{}"}}), STOP, METADATA)
    assert ended[-1].stop_reason == "tool_use" and types(ended).count("tool_call_done") == 1
    cut = converse(
        START,
        start,
        delta(0, {"toolUse": {"input": '{"q'}}),
        event("messageStop", {"stopReason": "max_tokens"}),
        METADATA,
    )
    result = collect(cut)
    assert "tool_call_done" not in types(cut) and result.stop_reason == "max_tokens"
    assert [c.arguments_raw for c in result.incomplete_tool_calls] == ['{"q']


def test_an_exception_message_is_an_error_with_its_type_and_the_open_calls() -> None:
    data = encoded("bedrock-converse-throttled.eventstream")
    events = converse(data)
    assert types(events)[-1] == "error"
    error = events[-1].error
    assert error is not None
    assert (error["type"], error["message_type"]) == ("throttlingException", "exception")
    assert error["message"].startswith("Too many requests")
    assert error["incomplete_tool_calls"] == [
        {"id": "tooluse_t1", "name": "search", "arguments_raw": '{"query": "bedr'}
    ]
    assert not any(e.error and e.error["type"] == "stream_truncated" for e in events)


def test_an_error_message_names_its_code_and_message_from_the_headers() -> None:
    failed = encode_message({":message-type": "error", ":error-code": "InternalFailure", ":error-message": "boom"})
    for provider in ("bedrock-converse", "bedrock-anthropic"):
        events = converse(START if provider == "bedrock-converse" else b"", failed, provider=provider)
        error = events[-1].error
        assert error is not None and (error["type"], error["message"], error["message_type"]) == (
            "InternalFailure",
            "boom",
            "error",
        )


def test_unknown_events_are_raw() -> None:
    events = converse(START, event("somethingNew", {"x": 1}), STOP, METADATA)
    assert types(events) == ["raw", "raw", "raw", "usage", "done"]
    assert events[1].raw == {"x": 1}


def test_usage_sums_the_cache_counts_into_the_prompt() -> None:
    result = collect(converse(encoded("bedrock-converse-max-tokens-cache.eventstream")))
    usage = result.usage
    assert usage is not None and usage.source == "bedrock-converse"
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens, usage.output_tokens) == (
        1524,
        1024,
        488,
        8,
    )
    assert usage.total_tokens == usage.raw["totalTokens"] if usage.raw else False
    nova = Usage.from_raw({"inputTokens": 5, "outputTokens": 1, "cacheReadInputTokenCount": 2})
    assert (nova.input_tokens, nova.cached_input_tokens, nova.reasoning_tokens) == (7, 2, None)


def _chunk(obj: dict[str, Any]) -> bytes:
    return event("chunk", {"bytes": base64.b64encode(json.dumps(obj).encode()).decode(), "p": "ab"})


def test_invoke_model_chunks_hold_anthropic_events_normalised_as_anthropic() -> None:
    body = encoded("bedrock-anthropic-thinking.eventstream")
    events = converse(body, provider="bedrock-anthropic")
    inner = [json.loads(base64.b64decode(json.loads(m.data)["bytes"])) for m in iter_events([body], "aws-eventstream")]
    sse = b"".join(b"event: " + o["type"].encode() + b"\ndata: " + json.dumps(o).encode() + b"\n\n" for o in inner)
    want = list(iter_unified([sse], "anthropic"))
    assert [e.to_dict(with_raw=True) for e in events] == [e.to_dict(with_raw=True) for e in want]
    normalizer = BedrockAnthropicNormalizer()
    list(iter_unified([body], normalizer, "aws-eventstream"))
    assert normalizer.invocation_metrics == {
        "inputTokenCount": 40,
        "outputTokenCount": 22,
        "invocationLatency": 900,
        "firstByteLatency": 400,
    }
    assert (normalizer.response_id, normalizer.model) == ("msg_bdrk_01", "claude-sonnet-4-5-20250929")


def test_a_chunk_that_is_not_base64_json_is_raw() -> None:
    events = converse(event("chunk", {"bytes": "%%%"}), event("chunk", {"nothing": 1}), provider="bedrock-anthropic")
    assert types(events)[:2] == ["raw", "raw"]
    assert events[-1].error is not None and events[-1].error["type"] == "stream_truncated"


def test_nova_invoke_chunks_are_converse_shaped() -> None:
    messages = [
        _chunk({"messageStart": {"role": "assistant"}}),
        _chunk({"contentBlockDelta": {"delta": {"text": "Red"}, "contentBlockIndex": 0}}),
        _chunk({"messageStop": {"stopReason": "end_turn"}}),
        _chunk(
            {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1}}, "amazon-bedrock-invocationMetrics": {"a": 1}}
        ),
    ]
    normalizer = BedrockConverseNormalizer()
    events = list(iter_unified([b"".join(messages)], normalizer, "aws-eventstream"))
    assert types(events) == ["raw", "text_delta", "raw", "usage", "done"]
    assert normalizer.invocation_metrics == {"a": 1}


_METRICS = {"inputTokenCount": 10, "outputTokenCount": 2, "invocationLatency": 1, "firstByteLatency": 1}
#: Two chunks of each InvokeModel text model's own shape ("He", then "llo" with the stop and the metrics).
_TEXT_MODELS: dict[str, tuple[dict[str, Any], dict[str, Any], str, str]] = {
    "meta-llama": (
        {"generation": "He", "prompt_token_count": 10, "generation_token_count": 1, "stop_reason": None},
        {"generation": "llo", "prompt_token_count": None, "generation_token_count": 2, "stop_reason": "stop"},
        "stop",
        "end",
    ),
    "amazon-titan": (
        {"outputText": "He", "index": 0, "totalOutputTextTokenCount": 1, "completionReason": None},
        {"outputText": "llo", "index": 0, "totalOutputTextTokenCount": 2, "completionReason": "LENGTH"},
        "LENGTH",
        "max_tokens",
    ),
    "cohere-command": (
        {"event_type": "text-generation", "text": "He", "is_finished": False},
        {"event_type": "text-generation", "text": "llo", "is_finished": True, "finish_reason": "COMPLETE"},
        "COMPLETE",
        "end",
    ),
    "mistral": (
        {"outputs": [{"text": "He", "stop_reason": None}]},
        {"outputs": [{"text": "llo", "stop_reason": "stop"}]},
        "stop",
        "end",
    ),
    "chat-shaped": (
        {"choices": [{"index": 0, "delta": {"content": "He"}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"content": "llo"}, "finish_reason": "content_filter"}]},
        "content_filter",
        "refusal",
    ),
}


@pytest.mark.parametrize("model", sorted(_TEXT_MODELS))
@pytest.mark.parametrize("provider", ["bedrock-converse", "auto"])
def test_other_text_models_invoke_chunks_are_read(model: str, provider: str) -> None:
    """InvokeModelWithResponseStream for Llama, Titan, Cohere, Mistral and the chat-shaped models: their text,
    their stop and the invocation metrics' counts (the answer was dropped and the stream called cut); a stream
    cut before its stop is cut."""
    first, last, raw_stop, stop = _TEXT_MODELS[model]
    body = _chunk(first) + _chunk({**last, "amazon-bedrock-invocationMetrics": _METRICS})
    result = collect(iter_unified([body], provider))  # type: ignore[arg-type]
    assert (result.text, result.stop_reason, result.raw_stop_reason, result.error) == ("Hello", stop, raw_stop, None)
    assert result.usage is not None and (result.usage.input_tokens, result.usage.output_tokens) == (10, 2)
    cut = collect(iter_unified([_chunk(first)], "bedrock-converse"))
    assert cut.text == "He" and cut.error is not None and cut.error["type"] == "stream_truncated"


def test_detection_from_the_event_names() -> None:
    assert detect_provider({"contentBlockIndex": 0, "delta": {"text": "a"}}, "contentBlockDelta") == "bedrock-converse"
    chunk = {"bytes": base64.b64encode(b'{"type":"message_start","message":{}}').decode()}
    assert detect_provider(chunk, "chunk") == "bedrock-anthropic"
    nova = {"bytes": base64.b64encode(b'{"messageStart":{"role":"assistant"}}').decode()}
    assert detect_provider(nova, "chunk") == "bedrock-converse"
    for name in FIXTURE_MESSAGES:
        if "throttled" in name or "error" in name:
            continue
        auto = list(iter_unified([(FIXTURES / name).read_bytes()], "auto"))
        named = converse(
            (FIXTURES / name).read_bytes(), provider="bedrock-anthropic" if "anthropic" in name else "bedrock-converse"
        )
        assert [e.to_dict(with_raw=True) for e in auto] == [e.to_dict(with_raw=True) for e in named]


# --- boto3's decoded events -----------------------------------------------------------------------------------


def boto3_events(data: bytes, operation: str) -> list[dict[str, Any]]:
    """What boto3 hands out for ``data``: botocore's own EventStream over the bedrock-runtime service model."""
    botocore_session = pytest.importorskip("botocore.session")
    from botocore.eventstream import EventStream  # type: ignore[import-untyped]
    from botocore.parsers import EventStreamJSONParser  # type: ignore[import-untyped]

    model = botocore_session.get_session().get_service_model("bedrock-runtime").operation_model(operation)
    member = "stream" if operation == "ConverseStream" else "body"

    class Body:
        def stream(self) -> Any:
            yield from (data[i : i + 64] for i in range(0, len(data), 64))

        def close(self) -> None:
            pass

    return list(EventStream(Body(), model.output_shape.members[member], EventStreamJSONParser(), operation))


def _same_result(got: StreamResult, want: StreamResult) -> None:
    assert (got.text, got.reasoning, got.stop_reason, got.raw_stop_reason, got.error) == (
        want.text,
        want.reasoning,
        want.stop_reason,
        want.raw_stop_reason,
        want.error,
    )
    assert [(c.id, c.name, c.arguments, c.arguments_raw) for c in got.tool_calls] == [
        (c.id, c.name, c.arguments, c.arguments_raw) for c in want.tool_calls
    ]
    counts = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens")
    assert [getattr(got.usage, k) for k in counts] == [getattr(want.usage, k) for k in counts]


def _streams() -> list[tuple[str, bytes, str]]:
    out = [
        (name, (FIXTURES / name).read_bytes(), "bedrock-anthropic" if "anthropic" in name else "bedrock-converse")
        for name in FIXTURE_MESSAGES
        if "throttled" not in name and "error" not in name  # botocore raises on an exception message
    ]
    out += [
        (c["file"], (CORPUS / c["file"]).read_bytes(), provider_for(c))
        for c in BEDROCK
        if c["api"] != "bedrock-invoke-nova"
    ]
    return out


@pytest.mark.parametrize(("name", "data", "provider"), _streams(), ids=[s[0] for s in _streams()])
def test_boto3_event_dicts_give_the_result_of_the_bytes(name: str, data: bytes, provider: Any) -> None:
    operation = "ConverseStream" if provider == "bedrock-converse" else "InvokeModelWithResponseStream"
    dicts = boto3_events(data, operation)
    from_dicts = collect(iter_unified(dicts, provider))
    _same_result(from_dicts, collect(iter_unified([data], provider, "aws-eventstream")))
    normalizer = BedrockConverseNormalizer() if provider == "bedrock-converse" else BedrockAnthropicNormalizer()
    one_by_one = [u for d in dicts for u in normalizer.frame(d)] + normalizer.finish()
    _same_result(collect(one_by_one), from_dicts)


def test_boto3_style_exception_dicts_are_errors() -> None:
    events = list(
        iter_unified(
            [{"messageStart": {"role": "assistant"}}, {"throttlingException": {"message": "slow"}}], "bedrock-converse"
        )
    )
    assert events[-1].error is not None and (events[-1].error["type"], events[-1].error["message"]) == (
        "throttlingException",
        "slow",
    )


def test_the_binary_fixtures_are_what_their_source_encodes() -> None:
    for name in FIXTURE_MESSAGES:
        assert (FIXTURES / name).read_bytes() == encoded(name), f"{name}: run python -m helpers.bedrock_fixtures"
