"""Hostile bodies end in a typed result on every path (the API, batch rows, the command line): deep JSON without
events, and compressed bodies that inflate without end; a stream of many tool calls is read and written in time
linear in their number."""

from __future__ import annotations

import gzip
import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from helpers.trace import lines_run
from ssewire import PROVIDERS, SSEwireError, _decoding_py, aiter_unified, collect, iter_unified, transcode
from ssewire.batch import result_row
from ssewire.encoders import TARGETS
from ssewire.limits import DEFAULT_MAX_INFLATED

DEEP = {
    "open-arrays": b"[" * 60_000,
    "open-objects": b'{"a":' * 30_000,
    "closed-arrays": b"[" * 30_000 + b"]" * 30_000,
    "closed-objects": b'{"a":' * 30_000 + b"1" + b"}" * 30_000,
    "sse-deep-data": b"data: " + b"[" * 30_000 + b"\n\n",
}
SESSIONS = ("openai-realtime", "gemini-live")  # WebSocket sessions: no terminal event ends them
TYPED = ("not_a_stream", "stream_truncated", "framing_error", "detection_error", "wrong_provider", "payload_too_deep")


@pytest.mark.parametrize("body", list(DEEP.values()), ids=list(DEEP))
@pytest.mark.parametrize("framing", ["auto", "sse", "ndjson", "json_array"])
def test_deep_json_without_events_is_a_typed_result_for_every_provider(body: bytes, framing: str) -> None:
    for provider in ("auto", *PROVIDERS):
        try:
            error = collect(iter_unified([body], provider, framing)).error  # type: ignore[arg-type]
        except SSEwireError:
            continue  # a typed exception (a framing error)
        if error is None:  # a session transcript (Realtime, Live) owes no terminal event: its lines are raw events
            assert provider in SESSIONS, (provider, framing)
            continue
        assert error["type"] in TYPED, (provider, error)
    row = result_row(body, framing=framing)  # type: ignore[arg-type]
    assert row["error_type"] in (*TYPED, "buffer_overflow") and row["error_type"] != "internal"


@pytest.mark.parametrize("name", list(DEEP))
def test_the_command_line_says_what_a_deep_body_is_without_a_traceback(tmp_path: Path, name: str) -> None:
    file = tmp_path / "body"
    file.write_bytes(DEEP[name])
    proc = subprocess.run([sys.executable, "-m", "ssewire", str(file)], capture_output=True, timeout=60, check=False)
    assert proc.returncode in (1, 2)  # an error event (1), or no stream in the input (2)
    assert b"Traceback" not in proc.stderr
    assert proc.stderr if proc.returncode == 2 else b'"type": "error"' in proc.stdout.splitlines()[-1]


def test_the_inflated_size_has_a_sane_default_bound_on_every_entry_point() -> None:
    assert 16 * 1024 * 1024 <= DEFAULT_MAX_INFLATED <= 256 * 1024 * 1024
    # (the decoder's and the tap's source, which the compiled ones are built from: a compiled class has no signature)
    for entry in (_decoding_py.StreamDecoder, _decoding_py.StreamTap, iter_unified, aiter_unified):
        assert inspect.signature(entry).parameters["max_inflated"].default == DEFAULT_MAX_INFLATED, entry
    bomb = gzip.compress(b"\n" * (8 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 64 * 1024  # a small body ...
    row = result_row(bomb, max_inflated=1024 * 1024)  # type: ignore[call-arg]
    assert row["error_type"] == "body_too_large" and row["truncated"] is True  # ... stopped at the bound


def test_raw_of_a_deep_payload_decodes_whatever_the_callers_stack_depth() -> None:
    """How deep a document decodes depends on the document, never on how deep the reader's stack is; a payload
    too deep for the full decoder is kept as its text, never an exception on reading ``raw``."""
    chunk = (
        b'data: {"id":'
        + b"[" * 900
        + b"]" * 900
        + b',"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    )

    def deep(depth: int) -> object:
        return [e.raw for e in iter_unified([chunk], "openai-chat")] if depth == 0 else deep(depth - 1)

    shallow = [e.raw for e in iter_unified([chunk], "openai-chat")]
    assert deep(300) == shallow
    from ssewire.events import LazyPayload

    too_deep = "[" * 200_000 + "]" * 200_000  # past every CPython's decoder (3.13 decodes 5,000 levels)
    assert LazyPayload(too_deep).value() == {"data": too_deep}


def _reads_linearly(stream: Callable[[int], bytes], small: int, provider: str = "openai-chat", to: str = "") -> bool:
    """Whether reading (``to``: writing as that target) ``stream(8 * small)`` runs under 10x the lines of Python of
    ``stream(small)``: linear in the items, with room (a pass over every item per item runs ~60x)."""

    def lines(count: int) -> int:
        body = stream(count)
        if to:
            return lines_run(lambda: b"".join(transcode([body], provider, to)))[0]  # type: ignore[arg-type]
        return lines_run(lambda: collect(iter_unified([body], provider)))[0]  # type: ignore[arg-type]

    return lines(8 * small) < 10 * lines(small)


def _call_chunk(choice: int, index: int, call: int) -> str:
    """A Chat Completions chunk opening tool call ``call_<call>`` (its arguments whole) at ``index`` of ``choice``."""
    tool = {"index": index, "id": f"call_{call}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    chunk = {"id": "c", "model": "m", "choices": [{"index": choice, "delta": {"tool_calls": [tool]}}]}
    return f"data: {json.dumps(chunk)}\n\n"


def _finish_chunk(choice: int) -> str:
    return (
        f'data: {{"id":"c","model":"m","choices":[{{"index":{choice},"delta":{{}},"finish_reason":"tool_calls"}}]}}\n\n'
    )


def _many_calls(count: int) -> bytes:
    """A Chat Completions stream of ``count`` tool calls, all open until the finish."""
    chunks = [_call_chunk(0, i, i) for i in range(count)]
    return "".join([*chunks, _finish_chunk(0), "data: [DONE]\n\n"]).encode()


@pytest.mark.parametrize("to", ["", *TARGETS])
def test_a_stream_of_many_tool_calls_is_read_and_written_in_time_linear_in_their_number(to: str) -> None:
    """Each open call cost a pass over every open call (the reader's view of them rebuilt per chunk, a scan for a
    moved id): 10,000 calls took 7 s to read. 8x the calls now run ~8x the lines (the old reader ran ~60x)."""
    assert len(collect(iter_unified([_many_calls(300)], "openai-chat")).tool_calls) == 300
    assert _reads_linearly(_many_calls, 300, to=to)


def _many_choices(count: int) -> bytes:
    """A Chat Completions stream of ``count`` choices, each with a tool call open until its own finish."""
    chunks = [_call_chunk(i, 0, i) for i in range(count)] + [_finish_chunk(i) for i in range(count)]
    return "".join([*chunks, "data: [DONE]\n\n"]).encode()


def test_a_stream_of_many_choices_each_with_a_call_is_read_in_time_linear_in_their_number() -> None:
    """Each choice's finish looked for its calls among every open call: O(choices x calls). The first choice is
    the one read (its one call); the others' chunks are raw events."""
    assert [call.id for call in collect(iter_unified([_many_choices(300)], "openai-chat")).tool_calls] == ["call_0"]
    assert _reads_linearly(_many_choices, 300)


def _calls_then_errors(count: int) -> bytes:
    """A Chat Completions stream of ``count`` tool calls left open, then ``count`` error payloads."""
    errors = [f'data: {{"error":{{"message":"boom {i}","type":"server_error"}}}}\n\n' for i in range(count)]
    return "".join([_call_chunk(0, i, i) for i in range(count)] + errors).encode()


def test_many_errors_with_many_calls_open_name_the_open_calls_once() -> None:
    """Every error payload named every open call: n errors x n calls, in time and memory (8,000 of each: 8 GB)."""
    events = list(iter_unified([_calls_then_errors(50)], "openai-chat"))
    errors = [event.error for event in events if event.type == "error" and event.error is not None]
    assert len(errors) == 50 and len(errors[0]["incomplete_tool_calls"]) == 50
    assert not any("incomplete_tool_calls" in error for error in errors[1:])  # (named once, by the first)
    assert len(collect(iter_unified([_calls_then_errors(50)], "openai-chat")).incomplete_tool_calls) == 50
    assert _reads_linearly(_calls_then_errors, 200)


def _programmatic_calls(count: int) -> bytes:
    """An Anthropic stream of ``count`` client tool calls made by the provider's code execution, each followed by a
    provider result block (Anthropic's programmatic tool calling): every call waits for its done."""

    def event(obj: dict[str, object]) -> str:
        return f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n"

    message = {"id": "m", "model": "c", "content": [], "usage": {"input_tokens": 1, "output_tokens": 1}}
    out = [event({"type": "message_start", "message": message})]
    for i in range(count):
        caller = {"type": "code_execution_20250825", "tool_id": f"srvtoolu_{i}"}
        use = {"type": "tool_use", "id": f"toolu_{i}", "name": "q", "input": {}, "caller": caller}
        result = {"type": "code_execution_tool_result", "tool_use_id": f"srvtoolu_{i}", "content": {}}
        for index, block in ((2 * i, use), (2 * i + 1, result)):
            out.append(event({"type": "content_block_start", "index": index, "content_block": block}))
            out.append(event({"type": "content_block_stop", "index": index}))
    out.append(event({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}}))
    return "".join([*out, event({"type": "message_stop"})]).encode()


def test_many_calls_waiting_for_their_done_are_read_in_time_linear_in_their_number() -> None:
    """Each provider result block looked for the call it names among every call waiting for its done."""
    assert len(collect(iter_unified([_programmatic_calls(100)], "anthropic")).client_tool_calls) == 100
    assert _reads_linearly(_programmatic_calls, 200, provider="anthropic")
