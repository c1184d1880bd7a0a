"""``render(result, to)``: every fixture's and recording's result as each target's whole response body, validated by
the official SDK's model of that body where it is installed, and read back to the same text, reasoning, client
calls, usage counts and stop reason (what the body cannot carry counted in ``dropped``)."""

from __future__ import annotations

import json
from typing import Any, Callable, Optional, cast

import pytest

from helpers.streams import all_streams
from ssewire import Encoder, StreamResult, TargetName, Usage, collect, iter_unified, render
from ssewire.encoders import TARGETS
from ssewire.normalizers.anthropic import ANTHROPIC_STOP
from ssewire.normalizers.chat import CHAT_STOP
from ssewire.normalizers.common import client_stop
from ssewire.normalizers.gemini import GEMINI_STOP
from ssewire.normalizers.openai import INCOMPLETE_STOP, RESPONSES_STOP
from ssewire.normalizers.vercel_ui import VERCEL_STOP

STREAMS = [s for s in all_streams() if not s[0].startswith("generated-")]
Read = tuple[str, str, list[tuple[Any, Any, Any]], Optional[dict[str, Any]], Optional[str]]


def _chat(body: dict[str, Any]) -> Read:
    message = body["choices"][0]["message"]
    calls = [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
        for c in message.get("tool_calls", [])
    ]
    return (
        message["content"] or "",
        message.get("reasoning_content", ""),
        calls,
        body.get("usage"),
        CHAT_STOP.get(body["choices"][0]["finish_reason"], "other"),
    )


def _responses(body: dict[str, Any]) -> Read:
    text = reasoning = ""
    calls = []
    for item in body["output"]:
        if item["type"] == "message":
            text += "".join(part["text"] for part in item["content"])
        elif item["type"] == "reasoning":
            reasoning += "".join(part["text"] for part in item["summary"])
        else:
            calls.append((item["call_id"], item["name"], json.loads(item["arguments"] or "{}")))
    stop = RESPONSES_STOP.get(body["status"], "other")
    if stop == "incomplete":
        stop = INCOMPLETE_STOP.get(str((body["incomplete_details"] or {}).get("reason")), "incomplete")
    return text, reasoning, calls, body["usage"], stop


def _messages(body: dict[str, Any]) -> Read:
    blocks = body["content"]
    text = "".join(b["text"] for b in blocks if b["type"] == "text")
    reasoning = "".join(b["thinking"] for b in blocks if b["type"] == "thinking")
    calls = [(b["id"], b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"]
    return text, reasoning, calls, body["usage"], ANTHROPIC_STOP.get(body["stop_reason"], "other")


def _gemini(body: dict[str, Any]) -> Read:
    parts = body["candidates"][0]["content"]["parts"]
    text = "".join(p.get("text", "") for p in parts if not p.get("thought"))
    reasoning = "".join(p["text"] for p in parts if p.get("thought"))
    calls = [
        (p["functionCall"]["id"], p["functionCall"]["name"], p["functionCall"]["args"])
        for p in parts
        if "functionCall" in p
    ]
    return (
        text,
        reasoning,
        calls,
        body.get("usageMetadata"),
        GEMINI_STOP.get(body["candidates"][0]["finishReason"], "other"),
    )


def _ui(body: dict[str, Any]) -> Read:
    parts = body["parts"]
    text = "".join(p["text"] for p in parts if p["type"] == "text")
    reasoning = "".join(p["text"] for p in parts if p["type"] == "reasoning")
    calls = [
        (p["toolCallId"], p["type"][5:], p["input"])
        for p in parts
        if p["type"].startswith("tool-") and not p.get("providerExecuted")
    ]
    metadata = body["metadata"]
    return text, reasoning, calls, metadata.get("usage"), VERCEL_STOP.get(metadata["finishReason"], "other")


READERS: dict[str, Callable[[dict[str, Any]], Read]] = {
    "openai-chat": _chat,
    "openai": _responses,
    "anthropic": _messages,
    "gemini": _gemini,
    "vercel-ui": _ui,
}


def _sdk_model(to: str) -> Any:
    """The official SDK's model of the target's body (None where the SDK is not installed or has none)."""
    try:
        if to == "openai-chat":
            from openai.types.chat import ChatCompletion

            return ChatCompletion
        if to == "openai":
            from openai.types.responses import Response

            return Response
        if to == "anthropic":
            from anthropic.types import Message

            return Message
        if to == "gemini":
            from google.genai.types import GenerateContentResponse

            return GenerateContentResponse
    except ImportError:
        return None
    return None


def _counts(usage: Optional[Usage]) -> Optional[tuple[int, ...]]:
    if usage is None or usage.source is None:
        return None
    return tuple(getattr(usage, n) or 0 for n in ("input_tokens", "output_tokens", "cached_input_tokens"))


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("stream", STREAMS, ids=[s[0] for s in STREAMS])
def test_a_result_renders_as_each_targets_body(stream: tuple[str, bytes, Any, Any], to: TargetName) -> None:
    _, data, provider, framing = stream
    result: StreamResult = collect(iter_unified([data], provider, framing))
    fixed: dict[str, Any] = {"created": 1_700_000_000, "response_id": result.response_id or "r-1"}
    encoder = Encoder(to, **fixed)
    body = encoder.render(result)
    assert json.loads(render(result, to, **fixed)) == json.loads(json.dumps(body))
    if result.error is not None:
        text = json.dumps(body)
        assert result.error["type"] in text and "error" in body
        return
    if result.stop_reason in ("failed", "cancelled") and "error" in body:
        return
    model = _sdk_model(to)
    if model is not None:
        model.model_validate(body)
    text, reasoning, calls, usage, stop = READERS[to](body)
    assert text == result.text
    assert reasoning == result.reasoning
    assert calls == [(c.id, c.name, c.arguments) for c in result.client_tool_calls if c.arguments is not None]
    assert body.get("id", body.get("responseId")) == (result.response_id or body.get("id", body.get("responseId")))
    want = _counts(result.usage)
    got = _counts(Usage.from_raw(usage)) if usage is not None else None
    assert got == want or (want is None and not any(got or ()))
    stop = client_stop(stop or "other", bool(calls))
    assert stop == result.stop_reason or encoder.dropped["stop_reason"] == 1


def test_an_incomplete_call_is_never_rendered() -> None:
    call = {"index": 0, "id": "call_9", "type": "function", "function": {"name": "f", "arguments": '{"a"'}}
    chunk = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}
    data = b"data: " + json.dumps(chunk).encode() + b"\n\n"
    result = collect(iter_unified([data], "openai-chat"))
    assert result.incomplete_tool_calls and result.error is not None
    for to in TARGETS:
        body = json.loads(render(result, cast(TargetName, to)))
        assert "call_9" not in json.dumps(body)
        assert "stream_truncated" in json.dumps(body)


def test_a_result_keeps_each_encrypted_reasoning_and_a_body_carries_the_last_or_counts_them() -> None:
    seen = 0
    for _, data, provider, framing in STREAMS:
        secrets = [e.encrypted_reasoning for e in iter_unified([data], provider, framing) if e.encrypted_reasoning]
        result = collect(iter_unified([data], provider, framing))
        assert result.encrypted_reasoning == secrets
        assert result.to_dict()["encrypted_reasoning"] == secrets
        if not secrets or result.error is not None:
            continue
        seen += 1
        for to in TARGETS:
            encoder = Encoder(to)
            body = encoder.render(result)
            if to == "openai":
                items = [item for item in body["output"] if item["type"] == "reasoning"]
                assert [item.get("encrypted_content") for item in items] == [secrets[-1]]
                back = collect(iter_unified([_as_done_event(body)], "openai"))
                assert back.encrypted_reasoning == [secrets[-1]]
            elif to == "vercel-ui":
                parts = [part for part in body["parts"] if part["type"] == "reasoning"]
                assert parts[0]["providerMetadata"]["openai"]["reasoningEncryptedContent"] == secrets[-1]
            kept = 1 if to in ("openai", "vercel-ui") else 0
            assert encoder.dropped["encrypted_reasoning"] == len(secrets) - kept, to
    assert seen >= 3  # the shared Responses recordings with encrypted reasoning, and the xAI fixture


def _as_done_event(response: dict[str, Any]) -> bytes:
    """A Responses body as the one ``response.completed`` event a stream ends with (each output item also as its
    ``output_item.done``, where a reader takes a finished item's encrypted reasoning)."""
    events = [
        {"type": "response.output_item.done", "output_index": index, "item": item}
        for index, item in enumerate(response["output"])
    ]
    events.append({"type": "response.completed", "response": response})
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
