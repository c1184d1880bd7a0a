"""The source of the binary Bedrock fixtures (``fixtures/bedrock-*.eventstream``), written from AWS's documented
ConverseStream and InvokeModelWithResponseStream shapes for what no public recording shows (an exception
mid-stream, Anthropic extended thinking inside ``chunk`` bytes, cache counts). ``python -m helpers.bedrock_fixtures``
(from ``tests/``) rewrites the files; a test checks they still equal this source."""

from __future__ import annotations

import base64
import json
from typing import Any

from . import FIXTURES
from .eventstream import event, exception

__all__ = ["FIXTURE_MESSAGES", "encoded", "write"]


def _chunk(anthropic_event: dict[str, Any]) -> bytes:
    raw = json.dumps(anthropic_event, separators=(",", ":")).encode("utf-8")
    return event("chunk", {"bytes": base64.b64encode(raw).decode("ascii"), "p": "abcdefgh"})


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta, "p": "abcd"})


FIXTURE_MESSAGES: dict[str, list[bytes]] = {
    # text, then a tool call cut by a throttlingException: the call is incomplete, never done
    "bedrock-converse-throttled.eventstream": [
        event("messageStart", {"role": "assistant", "p": "abc"}),
        _delta(0, {"text": "Let me look"}),
        _delta(0, {"text": " that up."}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event(
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tooluse_t1", "name": "search"}}},
        ),
        _delta(1, {"toolUse": {"input": '{"query": "bedr'}}),
        exception("throttlingException", "Too many requests, please wait before trying again."),
    ],
    # max_tokens with prompt-cache counts: usage sums them into input_tokens
    "bedrock-converse-max-tokens-cache.eventstream": [
        event("messageStart", {"role": "assistant"}),
        _delta(0, {"reasoningContent": {"text": "Short answer"}}),
        _delta(0, {"reasoningContent": {"signature": "c2lnLTE="}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        _delta(1, {"text": "The capital of France is"}),
        event("contentBlockStop", {"contentBlockIndex": 1}),
        event("messageStop", {"stopReason": "max_tokens"}),
        event(
            "metadata",
            {
                "usage": {
                    "inputTokens": 12,
                    "outputTokens": 8,
                    "totalTokens": 1532,
                    "cacheReadInputTokens": 1024,
                    "cacheWriteInputTokens": 488,
                },
                "metrics": {"latencyMs": 310},
            },
        ),
    ],
    # Anthropic extended thinking inside InvokeModelWithResponseStream chunk bytes
    "bedrock-anthropic-thinking.eventstream": [
        _chunk(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_bdrk_01",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929",
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 40, "output_tokens": 1},
                },
            }
        ),
        _chunk({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        _chunk({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "2+2 "}}),
        _chunk({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "is 4."}}),
        _chunk({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "RXVZ"}}),
        _chunk({"type": "content_block_stop", "index": 0}),
        _chunk({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        _chunk({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Four. ✨"}}),
        _chunk({"type": "content_block_stop", "index": 1}),
        _chunk(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 22},
            }
        ),
        _chunk(
            {
                "type": "message_stop",
                "amazon-bedrock-invocationMetrics": {
                    "inputTokenCount": 40,
                    "outputTokenCount": 22,
                    "invocationLatency": 900,
                    "firstByteLatency": 400,
                },
            }
        ),
    ],
    # the model failed mid-stream: modelStreamErrorException after a text delta
    "bedrock-anthropic-model-stream-error.eventstream": [
        _chunk(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_bdrk_02",
                    "model": "claude-3-haiku",
                    "usage": {"input_tokens": 9, "output_tokens": 1},
                },
            }
        ),
        _chunk({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        _chunk({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Once"}}),
        exception("modelStreamErrorException", "The model stream failed: upstream error."),
    ],
}


def encoded(name: str) -> bytes:
    """The bytes of fixture ``name``."""
    return b"".join(FIXTURE_MESSAGES[name])


def write() -> None:
    """Rewrite every Bedrock fixture file from this source."""
    for name in FIXTURE_MESSAGES:
        (FIXTURES / name).write_bytes(encoded(name))


if __name__ == "__main__":
    write()
