"""The transcode benchmark's report and gate: what fails it, what its tables say."""

from __future__ import annotations

from typing import Any

from benchmarks.transcode import (
    FLOORS,
    MEMORY_CEILING,
    MEMORY_FROM,
    TARGETS,
    _largest_event,
    again,
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
    assert failures(_doc(0.8)) == []


def test_each_floor_fails_the_gate() -> None:
    assert any("iter_unified's speed" in line for line in failures(_doc(FLOORS["group"] - 0.01)))
    assert any("geometric mean" in line for line in failures(_doc(FLOORS["geomean"] - 0.01)))
    assert any("LiteLLM" in line for line in failures(_doc(0.8, litellm=FLOORS["litellm"] - 1)))
    doc = _doc(0.8, memory=MEMORY_CEILING + 0.1)
    doc["memory"]["large"]["openai"]["ratio"] = 2.0
    assert [line for line in failures(doc) if "memory" in line] == [
        f"memory large -> {to}: {MEMORY_CEILING + 0.1:.2f}x the largest event" for to in TARGETS if to != "openai"
    ]


def test_memory_under_64_kib_events_is_reported_not_held() -> None:
    doc = _doc(0.8, memory=MEMORY_CEILING * 5, largest=MEMORY_FROM - 1)
    assert failures(doc) == []
    assert "not held to the ceiling" in format_tables(doc)


def test_an_error_row_is_reported() -> None:
    doc = _doc(0.8)
    doc["litellm"] = {"(every route)": {"error": "litellm is not installed"}}
    assert failures(doc) == [] and "litellm is not installed" in format_tables(doc)


def test_the_largest_event_of_a_body() -> None:
    assert _largest_event(b"data: 1\n\ndata: 12345\n\n") == len(b"data: 12345")
    assert _largest_event(b'{"a":1}\n{"bb":22}\n') == len(b'{"bb":22}')


def test_only_what_missed_is_timed_again() -> None:
    assert again(_doc(0.8)) == set()
    low = _doc(0.8)
    low["generated"]["other"] = {**low["generated"]["stream"], "ratio": dict.fromkeys(TARGETS, 0.8)}
    low["generated"]["stream"] = {**low["generated"]["stream"], "ratio": {**dict.fromkeys(TARGETS, 0.8), "openai": 0.1}}
    assert again(low) == {("generated", "stream")}
    assert again(_doc(0.8, litellm=FLOORS["litellm"] - 1)) == {"litellm"}
    assert again(_doc(0.8, memory=MEMORY_CEILING + 0.1)) == {"memory"}
    assert again(_doc(FLOORS["geomean"] - 0.01)) is None  # the mean: every group makes it


def test_the_gate_times_again_only_the_group_that_missed(monkeypatch: Any) -> None:
    import benchmarks.transcode as bench

    timed: list[tuple[int, int]] = []  # (samples, bodies) of each speed measurement

    def speed_ratios(bodies: list[Any], samples: int, min_time: float) -> dict[str, Any]:
        timed.append((samples, len(bodies)))
        low = samples == 3 and len(timed) == 1  # the first group, the first time only
        return {"bytes": 1, "mb_s": {"iter_unified": 1.0}, "ratio": dict.fromkeys(TARGETS, 0.1 if low else 0.8)}

    monkeypatch.setattr(bench, "speed_ratios", speed_ratios)
    monkeypatch.setattr(bench, "litellm_ratios", lambda recordings, samples: {})
    monkeypatch.setattr(bench, "memory", lambda size: {})
    monkeypatch.setattr(bench, "generate", lambda name, size: type("G", (), {"data": b"data: {}\n\n"})())
    published: list[dict[str, Any]] = []
    monkeypatch.setattr(bench, "publish", lambda doc, *args, **kwargs: published.append(doc))
    assert bench.main(["--quick", "--check"]) == 0
    first = len(bench.STREAMS) + len(published[0]["recordings"])
    assert len(timed) == first + 1 and timed[-1][0] == 9  # the one group, again, with 3x the samples
    assert published[0]["measured_again"] == [str(("recordings", sorted(published[0]["recordings"])[0]))]
