"""The transcode benchmark's report and gate: what fails it, what its tables say."""

from __future__ import annotations

from typing import Any

from benchmarks.transcode import (
    FLOORS,
    MEMORY_CEILING,
    MEMORY_FROM,
    RESPONSES_MEMORY_CEILING,
    TARGETS,
    _largest_event,
    failures,
    format_tables,
)


def _doc(ratio: float, litellm: float = 100.0, memory: float = 2.0, largest: int = MEMORY_FROM) -> dict[str, Any]:
    row = {"bytes": 1000, "mb_s": {"iter_unified": 100.0}, "ratio": dict.fromkeys(TARGETS, ratio)}
    peak = {to: {"peak": 1, "largest_event": largest, "ratio": memory} for to in TARGETS}
    return {
        "samples": 3,
        "recordings": {"group": row},
        "generated": {"stream": row},
        "litellm": {
            "anthropic -> openai-chat": {
                "bodies": 2,
                "left_out": 0,
                "ms": {"litellm": 9.0, "ssewire": 0.1},
                "ratio": litellm,
            }
        },
        "memory": {"large": {"largest_source_event": largest, **peak}},
        "environment": "test",
    }


def test_a_run_at_the_goals_passes_the_gate() -> None:
    assert failures(_doc(0.6)) == []


def test_each_floor_fails_the_gate() -> None:
    assert any("iter_unified's speed" in line for line in failures(_doc(FLOORS["group"] - 0.01)))
    assert any("geometric mean" in line for line in failures(_doc(FLOORS["geomean"] - 0.01)))
    assert any("LiteLLM" in line for line in failures(_doc(0.6, litellm=FLOORS["litellm"] - 1)))
    assert any("memory" in line for line in failures(_doc(0.6, memory=RESPONSES_MEMORY_CEILING + 0.1)))
    doc = _doc(0.6, memory=MEMORY_CEILING + 0.1)
    doc["memory"]["large"]["openai"]["ratio"] = 2.0
    assert [line for line in failures(doc) if "memory" in line] == [
        f"memory large -> {to}: {MEMORY_CEILING + 0.1:.2f}x the largest event" for to in TARGETS if to != "openai"
    ]


def test_memory_under_64_kib_events_is_reported_not_held() -> None:
    doc = _doc(0.6, memory=MEMORY_CEILING * 5, largest=MEMORY_FROM - 1)
    assert failures(doc) == []
    assert "not held to the ceiling" in format_tables(doc)


def test_an_error_row_is_reported() -> None:
    doc = _doc(0.6)
    doc["litellm"] = {"(every route)": {"error": "litellm is not installed"}}
    assert failures(doc) == [] and "litellm is not installed" in format_tables(doc)


def test_the_largest_event_of_a_body() -> None:
    assert _largest_event(b"data: 1\n\ndata: 12345\n\n") == len(b"data: 12345")
    assert _largest_event(b'{"a":1}\n{"bb":22}\n') == len(b'{"bb":22}')
