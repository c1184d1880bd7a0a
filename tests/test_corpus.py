"""Every recorded stream in ../shared/corpus parses, at every chunking, to exactly its expected result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import CHUNK_SIZES, CORPUS, chunked, load_manifest
from corpus_expect import framing_for, provider_for, unified_stop
from ssewire import StreamResult, Unified, collect, iter_unified

CAPTURES = load_manifest()
pytestmark = pytest.mark.skipif(not CAPTURES, reason="../shared/corpus is not present")


def _events(capture: dict[str, Any], size: Any) -> list[Unified]:
    data = (CORPUS / capture["file"]).read_bytes()
    return list(iter_unified(chunked(data, size), provider_for(capture), framing_for(capture)))


def _check(result: StreamResult, capture: dict[str, Any]) -> None:
    expected = capture["expected"]
    assert result.text == expected["text"]
    assert result.reasoning == expected["reasoning"]
    calls = result.client_tool_calls
    assert [c.name for c in calls] == [c["name"] for c in expected["tool_calls"]]
    for got, want in zip(calls, expected["tool_calls"]):
        assert got.arguments == want["arguments"]
        if want["id"] is not None:
            assert got.id == want["id"]
        else:
            assert got.id  # a synthetic id, never empty
        if "arguments_raw" in want:  # null where the provider sent parsed arguments
            assert got.arguments_raw == want["arguments_raw"]
    assert len({c.id for c in result.tool_calls}) == len(result.tool_calls), "tool call ids must be unique"
    if "server_tool_calls" in expected:
        assert [c.id for c in result.server_tool_calls] == [c["id"] for c in expected["server_tool_calls"]]
    else:
        assert result.server_tool_calls == []
    assert result.raw_stop_reason == expected["stop"]
    assert result.stop_reason == unified_stop(capture)
    assert (result.usage.raw if result.usage else None) == expected["usage"]
    if expected["error"]:
        assert result.error is not None
        inner = expected["error"].get("error", expected["error"])
        assert result.error["message"] == inner["message"]
        assert result.error["type"] == (inner.get("type") or inner.get("code"))
    else:
        assert result.error is None
    assert result.signatures == expected.get("signatures", [])


@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
def test_corpus_stream_gives_expected_result(capture: dict[str, Any]) -> None:
    _check(collect(_events(capture, None)), capture)


@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
def test_corpus_stream_is_chunking_independent(capture: dict[str, Any]) -> None:
    whole = [e.to_dict(with_raw=True) for e in _events(capture, None)]
    for size in CHUNK_SIZES:
        if size is None or size > len((CORPUS / capture["file"]).read_bytes()) * 2:
            continue
        assert [e.to_dict(with_raw=True) for e in _events(capture, size)] == whole, f"chunk size {size}"


@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
def test_corpus_stream_cut_short_reports_truncation(capture: dict[str, Any]) -> None:
    data = (CORPUS / capture["file"]).read_bytes()
    events = list(iter_unified([data[: len(data) // 2]], provider_for(capture), framing_for(capture)))
    assert events[-1].type == "error"
    assert events[-1].error is not None and events[-1].error["type"] == "stream_truncated"
    assert not any(e.type == "done" for e in events)


def test_corpus_files_exist() -> None:
    for capture in CAPTURES:
        assert Path(CORPUS / capture["file"]).is_file()
