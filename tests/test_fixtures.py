"""The hand-written streams in fixtures/ parse, at every chunking, to their ``.expected.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import CHUNK_SIZES, FIXTURES, chunked
from helpers.checks import check_fixture_result
from ssewire import collect, iter_unified

EXPECTED = sorted(FIXTURES.glob("*.expected.json"))


def _stream_for(expected_file: Path) -> Path:
    return expected_file.with_name(expected_file.name[: -len(".expected.json")])


def _run(expected: dict[str, Any], data: bytes, size: Any) -> list[Any]:
    return list(iter_unified(chunked(data, size), expected["provider"], expected["framing"]))


def test_fixtures_present() -> None:
    names = {p.name for p in FIXTURES.iterdir()}
    for required in (
        "openai-responses-tool-call.sse",
        "anthropic-messages-tool-use.sse",
        "anthropic-messages-overloaded.sse",
        "xai-chat-reasoning-tool-call.sse",
        "xai-responses-reasoning-function.sse",
        "gemini-stream-thought-signature.sse",
        "gemini-stream-json-array.json",
        "gemini-interactions-step-delta.sse",
        "gemini-interactions-function-call.sse",
    ):
        assert required in names
        assert required + ".expected.json" in names
    for expected_file in EXPECTED:
        assert _stream_for(expected_file).is_file()


@pytest.mark.parametrize("expected_file", EXPECTED, ids=[_stream_for(p).name for p in EXPECTED])
def test_fixture_gives_expected_result(expected_file: Path) -> None:
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    data = _stream_for(expected_file).read_bytes()
    events = _run(expected, data, None)
    check_fixture_result(collect(events), events, expected)


@pytest.mark.parametrize("expected_file", EXPECTED, ids=[_stream_for(p).name for p in EXPECTED])
def test_fixture_is_chunking_independent(expected_file: Path) -> None:
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    data = _stream_for(expected_file).read_bytes()
    whole = [e.to_dict(with_raw=True) for e in _run(expected, data, None)]
    for size in CHUNK_SIZES[:-1]:
        assert [e.to_dict(with_raw=True) for e in _run(expected, data, size)] == whole, f"chunk size {size}"
