"""A valid JSON integer longer than Python converts (``int_max_str_digits``) in a payload: the same answer on
every path -- the compiled delta reader, msgspec, orjson, the standard library -- and never a bare ValueError."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ssewire import StreamTap, collect, iter_unified
from ssewire._json import loads, loads_exact
from ssewire.batch import result_row

HUGE = "9" * 5000  # past the default int_max_str_digits (4300)

#: One stream per API whose text deltas the fast paths read, each delta carrying a huge integer member.
STREAMS: dict[str, list[dict[str, Any]]] = {
    "openai": [
        {"type": "response.created", "response": {"id": "r", "model": "m", "status": "in_progress", "n": 1}},
        {"type": "response.output_text.delta", "delta": "Hi", "item_id": "x", "extra": "HUGE"},
        {"type": "response.output_text.delta", "delta": " there", "item_id": "x", "extra": "HUGE"},
        {"type": "response.completed", "response": {"id": "r", "model": "m", "status": "completed"}},
    ],
    "openai-chat": [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": "Hi"}}],
        },
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "x": "HUGE",
            "choices": [{"index": 0, "delta": {"content": " there"}}],
        },
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        },
    ],
    "anthropic": [
        {"type": "message_start", "message": {"id": "m1", "model": "c", "usage": {"input_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}, "x": "HUGE"},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " there"}, "x": "HUGE"},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ],
}


def _body(provider: str, named_first: bool = True) -> bytes:
    events: list[dict[str, Any]] = STREAMS[provider]
    if not named_first:  # the stream never says its id and model
        if provider == "openai-chat":
            events = [{k: v for k, v in event.items() if k not in ("id", "model")} for event in events]
        else:  # response.created / message_start name them
            events = events[1:]
    out = []
    for event in events:
        text = json.dumps(event).replace('"HUGE"', HUGE)
        name = event.get("type") if provider != "openai-chat" else None
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    if provider == "openai-chat":
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def test_loads_decodes_a_huge_integer_as_a_float_and_arguments_say_why_they_fail() -> None:
    assert loads(f'{{"a": {HUGE}, "b": 1}}') == {"a": float(HUGE), "b": 1}
    assert loads("[12345678901234567890123]") == [12345678901234567890123]  # exact below the limit
    with pytest.raises(ValueError, match="integer string conversion"):
        loads_exact(f'{{"a": {HUGE}}}')  # tool arguments: exact or an error, never a silent float
    with pytest.raises(ValueError):
        loads('{"a": }')


@pytest.mark.parametrize("provider", list(STREAMS))
@pytest.mark.parametrize("named_first", [True, False], ids=["named", "never-named"])
def test_every_path_keeps_the_text_and_raw_decodes(provider: str, named_first: bool) -> None:
    body = _body(provider, named_first)
    for name in (provider, "auto"):
        events = list(iter_unified([body], name))  # type: ignore[arg-type]
        assert "".join(e.text for e in events if e.type == "text_delta") == "Hi there"
        for event in events:
            assert event.raw is not None or event.type == "error"  # decodes, never a bare ValueError
        result = collect(iter_unified([body], name))  # type: ignore[arg-type]
        assert result.text == "Hi there"
        tap = StreamTap(name)  # type: ignore[arg-type]
        tap.feed(body)
        assert tap.close().text == "Hi there" and tap.failure is None
    row = result_row(body, provider)  # type: ignore[arg-type]
    assert row["text_chars"] == len("Hi there") and row["error_type"] in (None, "stream_truncated")


ENVIRONMENTS = [
    {},
    {"SSEWIRE_NO_MSGSPEC": "1"},
    {"SSEWIRE_NO_FAST_JSON": "1"},
    {"SSEWIRE_NO_TYPED_DECODE": "1"},
    {"SSEWIRE_NO_EXTENSIONS": "1", "SSEWIRE_NO_FAST_JSON": "1"},
]


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=["default", "orjson", "stdlib", "untyped", "pure"])
def test_the_command_line_with_raw_prints_the_same_on_every_path(tmp_path: Path, env: dict[str, str]) -> None:
    file = tmp_path / "body.sse"
    file.write_bytes(_body("openai", named_first=False))
    proc = subprocess.run(
        [sys.executable, "-m", "ssewire", str(file), "--provider", "openai", "--with-raw"],
        capture_output=True,
        timeout=60,
        check=False,
        env={**os.environ, **env},
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()[-2000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert "".join(line.get("text", "") for line in lines if line["type"] == "text_delta") == "Hi there"
    assert lines[-1]["type"] == "done"
