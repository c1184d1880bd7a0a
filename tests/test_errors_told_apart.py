"""A stream read as the wrong provider, a body that holds no stream, and a compressed body: each gets the same
answer from the API, batch rows, the tap and the command line."""

from __future__ import annotations

import gc
import gzip
import json
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any, Callable

import pytest

from helpers import FIXTURES, chunked
from ssewire import StreamTap, collect, iter_unified
from ssewire.batch import result_row
from ssewire.stream import StreamDecoder

RESPONSES = (FIXTURES / "openai-responses-tool-call.sse").read_bytes()
CHAT = (FIXTURES / "openai-chat-truncated.sse").read_bytes()
ANTHROPIC = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()

#: (body, the provider named, the provider auto-detection recognises)
WRONG = [
    (RESPONSES, "openai-chat", "openai"),
    (RESPONSES, "anthropic", "openai"),
    (ANTHROPIC, "openai", "anthropic"),
    (ANTHROPIC, "gemini", "anthropic"),
    (CHAT, "anthropic", "openai-chat"),
]


def _tap(body: bytes, provider: str, **options: Any) -> Any:
    tap = StreamTap(provider, **options)  # type: ignore[arg-type]
    for chunk in chunked(body, 7):
        tap.feed(chunk)
    return tap.close()


@pytest.mark.parametrize(("body", "named", "detected"), WRONG, ids=[f"{w[2]}-as-{w[1]}" for w in WRONG])
def test_a_wrong_provider_is_a_typed_error_not_a_truncation(body: bytes, named: str, detected: str) -> None:
    for result in (collect(iter_unified([body], named)), _tap(body, named)):  # type: ignore[arg-type]
        error = result.error
        assert error is not None and error["type"] == "wrong_provider", error
        assert error["detected_provider"] == detected
        assert f"provider={detected!r}" in error["message"]
    row = result_row(body, named)  # type: ignore[arg-type]
    assert (row["error_type"], row["truncated"]) == ("wrong_provider", False)
    assert f"provider={detected!r}" in row["error_message"]


@pytest.mark.parametrize(
    ("body", "provider"),
    [
        (RESPONSES, "openai"),
        (RESPONSES, "xai"),
        (RESPONSES, "auto"),
        (CHAT, "openai"),
        (CHAT, "xai"),
        (CHAT, "mistral"),
    ],
)
def test_a_provider_that_reads_the_stream_by_delegation_is_not_wrong(body: bytes, provider: str) -> None:
    cut = body[: len(body) // 2]
    for data in (body, cut):
        error = collect(iter_unified([data], provider)).error  # type: ignore[arg-type]
        assert error is None or error["type"] != "wrong_provider", error


def _chat_chunk(text: str) -> bytes:
    chunk = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": text}}]}
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"


@pytest.mark.parametrize("text", ["a" * 300_000, "\u00e9" * 150_000], ids=["ascii", "held-utf8"])
def test_a_large_first_event_still_names_the_wrong_provider(text: str) -> None:
    """Only the start of a first event over 64 KiB is kept to the end: enough to tell whose payload it is."""
    body = _chat_chunk(text) + _chat_chunk("more")
    for result in (collect(iter_unified([body], "anthropic")), _tap(body, "anthropic")):
        error = result.error
        assert error is not None and error["type"] == "wrong_provider", error
        assert error["detected_provider"] == "openai-chat"


def test_the_first_event_is_not_held_whole_to_the_end() -> None:
    """A stream's memory stays about one event: a 2 MB first event is not kept while the rest is read."""
    tracemalloc = pytest.importorskip("tracemalloc")  # (CPython's; PyPy has none)
    first = _chat_chunk("x" * 2_000_000)
    rest = [_chat_chunk("y") for _ in range(3)]
    decoder = StreamDecoder("openai-chat", "sse")
    gc.collect()
    tracemalloc.start()
    try:
        decoder.feed(first)
        for chunk in rest:
            decoder.feed(chunk)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 256 * 1024, held
    assert [e.type for e in decoder.close()] == ["error"]  # (no terminal: still told as truncated)


def test_a_cut_stream_of_the_right_provider_is_still_truncated() -> None:
    error = collect(iter_unified([ANTHROPIC[: len(ANTHROPIC) // 2]], "anthropic")).error
    assert error is not None and error["type"] == "stream_truncated"


COMPRESS: list[Callable[[bytes], bytes]] = [gzip.compress, zlib.compress]


@pytest.mark.parametrize("compress", COMPRESS, ids=["gzip", "zlib-deflate"])
@pytest.mark.parametrize("size", [1, 2, 7, None])
def test_a_compressed_body_is_read_the_same_everywhere(compress: Callable[[bytes], bytes], size: Any) -> None:
    packed = compress(RESPONSES)
    plain = collect(iter_unified([RESPONSES], "openai"))
    for provider in ("openai", "auto"):
        got = collect(iter_unified(chunked(packed, size), provider))  # type: ignore[arg-type]
        assert (got.text, got.reasoning, got.tool_calls, got.stop_reason) == (
            plain.text,
            plain.reasoning,
            plain.tool_calls,
            plain.stop_reason,
        )
        assert got.error is None
        tapped = _tap(packed, provider)
        assert (tapped.tool_calls, tapped.stop_reason, tapped.error) == (plain.tool_calls, plain.stop_reason, None)
    assert result_row(packed) == {**result_row(RESPONSES), "bytes": len(packed)}


def test_a_body_inflating_past_its_bound_is_a_typed_error() -> None:
    bomb = gzip.compress(b"\n" * (4 * 1024 * 1024))
    from ssewire import BodyTooLarge

    with pytest.raises(BodyTooLarge):
        list(iter_unified([bomb], "openai", max_inflated=1024 * 1024))  # type: ignore[call-arg]
    result = _tap(bomb, "openai", max_inflated=1024 * 1024)
    assert result.error is not None and result.error["type"] == "body_too_large"


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ssewire", *args], capture_output=True, timeout=120, check=False)


def test_the_command_line_reads_compressed_files_and_names_a_wrong_provider(tmp_path: Path) -> None:
    packed = tmp_path / "body.sse.gz"
    packed.write_bytes(gzip.compress(RESPONSES))
    plain = tmp_path / "body.sse"
    plain.write_bytes(RESPONSES)
    got, want = _cli(str(packed), "--provider", "openai"), _cli(str(plain), "--provider", "openai")
    assert got.returncode == want.returncode == 0
    assert got.stdout == want.stdout
    wrong = _cli(str(packed), "--provider", "anthropic")
    assert wrong.returncode == 1
    last = json.loads(wrong.stdout.splitlines()[-1])
    assert last["type"] == "error" and last["error"]["type"] == "wrong_provider"
    assert "looks like openai" in wrong.stderr.decode()
