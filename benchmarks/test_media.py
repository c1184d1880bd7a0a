"""The image and voice benchmark: each generated stream is its provider's complete stream, read the same with the
fast paths on and off, and mostly base64 that no unified event carries."""

from __future__ import annotations

from typing import Any

import pytest

from ssewire import collect, iter_unified
from ssewire.normalizers._fast import typed

from .media import STREAMS, build, format_table, over_ceiling

SIZE = 300_000


def _events(name: str, on: bool) -> list[dict[str, Any]]:
    rec = build(name, SIZE)
    typed.set_enabled(on)
    try:
        return [e.to_dict(with_raw=True) for e in iter_unified(rec.chunks, rec.provider, rec.framing)]
    finally:
        typed.set_enabled(True)


@pytest.mark.parametrize("name", list(STREAMS))
def test_each_stream_is_complete_and_read_the_same_by_every_path(name: str) -> None:
    rec = build(name, SIZE)
    assert rec == build(name, SIZE)  # seeded: the same bytes each time
    assert SIZE // 2 < rec.size < SIZE * 2
    result = collect(iter_unified(rec.chunks, rec.provider, rec.framing))
    assert result.error is None and result.stop_reason in ("end", "tool_use") and result.usage is not None
    assert _events(name, True) == _events(name, False)


@pytest.mark.parametrize("name", list(STREAMS))
def test_the_bulk_of_each_stream_is_data_no_event_carries(name: str) -> None:
    rec = build(name, SIZE)
    events = list(iter_unified(rec.chunks, rec.provider, rec.framing))
    carried = sum(len(e.text or "") + len(e.arguments_delta or "") for e in events)
    assert carried < rec.size / 20 and any(e.type == "raw" for e in events)


def test_the_table_and_the_gate() -> None:
    stream = {"streams": 1, "bytes": 2_000_000, "largest": 250_000, "mb_s": {"floor": 900.0, "iter_unified": 1000.0}}
    doc = {
        "streams": {
            "a": {**stream, "cost_vs_floor": {"iter_unified": 0.9, "collect()": 1.0, "StreamTap": 1.7}},
            "b": {**stream, "cost_vs_floor": {"iter_unified": 0.5, "collect()": 0.6, "StreamTap": 0.6}},
        }
    }
    assert over_ceiling(doc) == ["a StreamTap: 1.70x the floor > 1.6x"]
    assert over_ceiling(doc, ceiling=2.0) == []
    assert "| a | 2.0 | 250 | 900 | 1000 | 0.90x | 1.00x | 1.70x |" in format_table(doc).splitlines()
