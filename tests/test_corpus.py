"""Every recorded stream in ../shared/corpus parses, at every chunking, to exactly its expected result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import CHUNK_SIZES, CORPUS, chunked, load_manifest
from helpers.checks import check_corpus_result
from helpers.corpus import framing_for, provider_for
from ssewire import Unified, collect, iter_unified

CAPTURES = load_manifest()
pytestmark = pytest.mark.skipif(not CAPTURES, reason="../shared/corpus is not present")


def _events(capture: dict[str, Any], size: Any) -> list[Unified]:
    data = (CORPUS / capture["file"]).read_bytes()
    return list(iter_unified(chunked(data, size), provider_for(capture), framing_for(capture)))


@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
def test_corpus_stream_gives_expected_result(capture: dict[str, Any]) -> None:
    check_corpus_result(collect(_events(capture, None)), capture)


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
